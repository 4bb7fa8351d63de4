"""Config rules that do nothing on this gold set: likely typos, reported as warnings.

- a ``[fields."<path>"]`` rule whose path matches no gold field (``totl`` for ``total``): the
  rule never applies, so the field is scored with the defaults;
- a ``unit`` that does not read as a unit (``kgg``): bare numbers of the field cannot be
  converted;
- a configured date format that parses none of the gold values read as dates: it never
  applies (only checked when the config sets ``date_formats``).

Pure: the scorer calls :func:`config_warnings` (one walk over the gold leaves, only when the
config has field rules or date formats); ``score --strict`` turns the warnings into an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..config import Config
from ..core.paths import covers, document_leaves
from ..fields.normalize import DATE_HINT
from ..fields.units import known_unit


def config_warnings(config: Config, gold_docs: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Warnings about `config` on this gold set (empty when every rule applies somewhere)."""
    check_dates = "date_formats" in config.model_fields_set
    if not config.fields and not check_dates:
        return []
    paths, dates = _gold_leaves(config, gold_docs, check_dates)
    out = []
    for path, rule in config.fields.items():
        if not covers(path, paths):
            out.append(f'config: [fields."{path}"] matches no gold field')
        if rule.unit is not None and not known_unit(rule.unit):
            out.append(f'config: [fields."{path}"] unit {rule.unit!r} is not a known unit')
    for fmt in config.date_formats if check_dates else ():
        if not any(_parses(v, fmt) for v in dates):
            out.append(f"config: date format {fmt!r} parses no gold value")
    return out


def _gold_leaves(
    config: Config, gold_docs: Mapping[str, Mapping[str, Any]], dates: bool
) -> tuple[set[str], set[str]]:
    """The gold leaf paths, and the gold strings the scorer reads with the date formats (when
    `dates`): every value of a field typed ``date``, and values that look like a date in fields
    without a configured type."""
    dated = {p for p, r in config.fields.items() if r.type == "date"}
    typed = {p for p, r in config.fields.items() if r.type is not None}
    paths: set[str] = set()
    values: set[str] = set()
    for doc in gold_docs.values():
        for path, value, _ in document_leaves(doc, {config.id_key}):
            paths.add(path)
            if (
                dates
                and isinstance(value, str)
                and (path in dated or (path not in typed and DATE_HINT.match(value)))
            ):
                values.add(value.strip())
    return paths, values


def _parses(value: str, fmt: str) -> bool:
    try:
        datetime.strptime(value, fmt)
    except ValueError:
        return False
    return True
