"""The registered metric families (see :mod:`.base`): one line each in :data:`FAMILIES`.

Everything that handles families (the config's sections, the evaluation, the report, gates,
the paired comparison, the views) reads this tuple and nothing else names a family.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..fidelity.family import FIDELITY
from .base import Family, FamilySlice, FamilySummary, FamilyValue, Statistics, Summary
from .structure import STRUCTURE
from .text_accuracy import TEXT_ACCURACY

if TYPE_CHECKING:
    from ..config import Config

FAMILIES: tuple[Family, ...] = (FIDELITY, STRUCTURE, TEXT_ACCURACY)

__all__ = [
    "FAMILIES",
    "Family",
    "FamilySlice",
    "FamilySummary",
    "FamilyValue",
    "Statistics",
    "Summary",
    "by_name",
    "lower_is_better",
    "section_of",
]


def by_name(name: str) -> Family | None:
    """The registered family called `name`, else None."""
    return next((f for f in FAMILIES if f.name == name), None)


def section_of(config: Config, family: Family) -> Any:
    """The config section of `family` in `config`: as the config sets it, else the family's
    defaults."""
    found = config.section(family.name)
    return found if found is not None else family.section()


def lower_is_better(base: str) -> bool:
    """Whether the metric of base name `base` (``cer`` of ``cer/title``) belongs to a
    registered family whose metrics are lower-is-better."""
    head = base.partition("/")[0].removesuffix("_ci_low").removesuffix("_ci_high")
    return any(
        head in f.metric_names and f.higher_is_better == (head in f.reversed_names)
        for f in FAMILIES
    )
