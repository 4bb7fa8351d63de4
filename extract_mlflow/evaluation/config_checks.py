"""Config rules that do nothing on this gold set: likely typos, reported as warnings.

- a ``[fields."<path>"]`` rule whose path matches no gold field (``totl`` for ``total``): the
  rule never applies, so the field is scored with the defaults;
- a ``unit`` that does not read as a unit (``kgg``): bare numbers of the field cannot be
  converted;
- a configured date format that parses none of the gold values read as dates (only checked
  when the config sets ``date_formats``), unless it can be there for the predictions: gold has
  dates and every one of them is read (by another format, or as ISO 8601), so the entry reads
  the model's way of writing dates. It is reported when no gold value is a date (no field
  would ever read a date with it) or when gold values that look like dates are read by no
  format (the entry was probably meant for them).

Every check reads the config and the gold set only, never the predictions: the warnings (and
``score --strict``) are the same whatever the candidate. Pure: the evaluation gathers a
:class:`ConfigUse` per document (one walk over the gold leaves, only when the config has field
rules or date formats) and merges them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..config import Config
from ..core.paths import covers, document_leaves
from ..fields.normalize import DATE_HINT, reads_as_date
from ..fields.units import known_unit


def config_warnings(config: Config, gold_docs: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Warnings about `config` on this gold set (empty when every rule applies somewhere)."""
    use = ConfigUse.of(config)
    if use is None:
        return []
    for doc in gold_docs.values():
        use.update(doc)
    return use.warnings(config)


@dataclass
class ConfigUse:
    """What the config checks need from the gold set, gathered document by document and
    mergeable (unions): the gold leaf paths, and the gold strings the scorer reads with the
    date formats (when `dates`): every value of a field typed ``date``, and values that look
    like a date in fields without a configured type."""

    id_key: str
    dates: bool
    dated: frozenset[str]
    typed: frozenset[str]
    paths: set[str] = field(default_factory=set)
    date_values: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, config: Config) -> ConfigUse | None:
        """The gatherer for `config`; None when it has nothing to check (no field rules, no
        date formats)."""
        dates = "date_formats" in config.model_fields_set
        if not config.fields and not dates:
            return None
        dated = frozenset(p for p, r in config.fields.items() if r.type == "date")
        typed = frozenset(p for p, r in config.fields.items() if r.type is not None)
        return cls(config.id_key, dates, dated, typed)

    def update(self, gold: Mapping[str, Any]) -> None:
        """Gather one gold document: its paths and date values."""
        paths = self.paths
        for path, value, _ in document_leaves(gold, {self.id_key}):
            paths.add(path)
            self._date_value(path, value)

    def _date_value(self, path: str, value: Any) -> None:
        if (
            self.dates
            and isinstance(value, str)
            and (path in self.dated or (path not in self.typed and DATE_HINT.match(value)))
        ):
            self.date_values.add(value.strip())

    def merge(self, other: ConfigUse) -> None:
        self.paths |= other.paths
        self.date_values |= other.date_values

    def warnings(self, config: Config) -> list[str]:
        """The warnings, in config order."""
        out = []
        for path, rule in config.fields.items():
            if not covers(path, self.paths):
                out.append(f'config: [fields."{path}"] matches no gold field')
            if rule.unit is not None and not known_unit(rule.unit):
                out.append(f'config: [fields."{path}"] unit {rule.unit!r} is not a known unit')
        if self.dates:
            out += self._date_warnings(config.date_formats)
        return out

    def _date_warnings(self, formats: tuple[str, ...]) -> list[str]:
        """The date formats that parse no gold value and cannot be there for the predictions
        (see the module)."""
        values = sorted(self.date_values)
        unread = [v for v in values if not reads_as_date(v, formats)]
        if values and not unread:
            return []  # every gold date is read: an unused format reads the model's dates
        if unread:
            why = (
                f"and {len(unread)} gold value(s) that look like dates are read by no format "
                f"(e.g. {unread[0]!r})"
            )
        else:
            why = "and no gold value is a date (no field reads dates with it)"
        return [
            f"config: date format {fmt!r} parses none of the gold values, {why}"
            for fmt in formats
            if not any(_parses(v, fmt) for v in values)
        ]


def _parses(value: str, fmt: str) -> bool:
    try:
        datetime.strptime(value, fmt)
    except ValueError:
        return False
    return True
