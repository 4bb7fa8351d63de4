"""Config rules that do nothing on this gold set: likely typos, reported as warnings.

- a ``[fields."<path>"]`` rule whose path matches no gold field (``totl`` for ``total``): the
  rule never applies, so the field is scored with the defaults;
- a ``unit`` that does not read as a unit (``kgg``): bare numbers of the field cannot be
  converted;
- a configured date format that parses none of the gold or predicted values read as dates: it
  never applies (only checked when the config sets ``date_formats``). Predictions count: a
  format is often there to read the model's way of writing dates, which gold never uses.

Pure: the evaluation gathers a :class:`ConfigUse` per document (one walk over the gold leaves,
only when the config has field rules or date formats) and merges them; ``score --strict``
turns the warnings into an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..config import Config
from ..core.paths import covers, document_leaves
from ..fields.normalize import DATE_HINT
from ..fields.units import known_unit


def config_warnings(
    config: Config,
    gold_docs: Mapping[str, Mapping[str, Any]],
    pred_docs: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[str]:
    """Warnings about `config` on this gold set and the predictions of its documents (empty
    when every rule applies somewhere)."""
    use = ConfigUse.of(config)
    if use is None:
        return []
    for doc_id, doc in gold_docs.items():
        use.update(doc, pred_docs.get(doc_id) if pred_docs is not None else None)
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

    def update(self, gold: Mapping[str, Any], pred: Mapping[str, Any] | None = None) -> None:
        """Gather one gold document (its paths and date values) and its prediction (its date
        values only: a path only a prediction has is no reason to keep a rule)."""
        paths = self.paths
        for path, value, _ in document_leaves(gold, {self.id_key}):
            paths.add(path)
            self._date_value(path, value)
        if pred is not None and self.dates:
            for path, value, _ in document_leaves(pred, {self.id_key}):
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
        for fmt in config.date_formats if self.dates else ():
            if not any(_parses(v, fmt) for v in self.date_values):
                out.append(f"config: date format {fmt!r} parses no gold or predicted value")
        return out


def _parses(value: str, fmt: str) -> bool:
    try:
        datetime.strptime(value, fmt)
    except ValueError:
        return False
    return True
