"""What field scoring produces: the error categories, one scored mistake
(:class:`ErrorRecord`), a document's counts per path and its mistakes (:class:`DocCounts`), and
what a scorer learns about the fields while it scores (:class:`FieldState`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

# Error categories (stable names, used in reports and artifacts).
WRONG_VALUE = "wrong_value"
TYPE_ERR = "type_error"
MISSING = "missing"
HALLUCINATED = "hallucinated"
PARSE_FAILURE = "parse_failure"
CATEGORIES = (WRONG_VALUE, TYPE_ERR, MISSING, HALLUCINATED, PARSE_FAILURE)


@dataclass(slots=True)
class ErrorRecord:
    """One scored mistake: a wrong/type error is one FP plus one FN, the others one each."""

    path: str
    category: str
    expected: Any = None
    got: Any = None


@dataclass(slots=True)
class DocCounts:
    """What scoring one document produced: per-path [tp, fp, fn] and the mistakes."""

    counts: dict[str, list[int]] = field(default_factory=dict)
    errors: list[ErrorRecord] = field(default_factory=list)

    def _c(self, path: str) -> list[int]:
        c = self.counts.get(path)
        if c is None:
            c = self.counts[path] = [0, 0, 0]
        return c

    def tp(self, path: str) -> None:
        c = self.counts.get(path)  # _c inline: most leaves are matches
        if c is None:
            self.counts[path] = [1, 0, 0]
        else:
            c[0] += 1

    def fp(self, path: str, category: str, got: Any) -> None:
        self._c(path)[1] += 1
        self.errors.append(ErrorRecord(path, category, None, got))

    def fn(self, path: str, category: str, expected: Any) -> None:
        self._c(path)[2] += 1
        self.errors.append(ErrorRecord(path, category, expected, None))

    def wrong(self, path: str, category: str, expected: Any, got: Any) -> None:
        c = self._c(path)
        c[1] += 1
        c[2] += 1
        self.errors.append(ErrorRecord(path, category, expected, got))

    def similarity(self) -> float:
        """Share of the scored leaf slots that matched (a wrong value is one slot)."""
        matched = sum(c[0] for c in self.counts.values())
        slots = matched + len(self.errors)
        return matched / slots if slots else 0.0

    def merge(self, other: DocCounts) -> None:
        for path, (tp, fp, fn) in other.counts.items():
            c = self._c(path)
            c[0] += tp
            c[1] += fp
            c[2] += fn
        self.errors.extend(other.errors)


@dataclass
class FieldState:
    """What a scorer learns about the fields while it scores (mergeable: union and sum).

    ``types_seen`` holds (path, type) for every gold value read as a type, ``skipped`` the
    ignored paths met, ``gold_type_errors`` the gold values that do not read as their field's
    type. Of the paths without a configured type, ``measured`` holds those with a gold value
    that is a measurement ("1.2 kg"), ``plain`` those with one that is not (every gold value
    is noted, matched to the letter or not)."""

    types_seen: set[tuple[str, str]] = field(default_factory=set)
    skipped: set[str] = field(default_factory=set)
    gold_type_errors: Counter[str] = field(default_factory=Counter)
    measured: set[str] = field(default_factory=set)
    plain: set[str] = field(default_factory=set)

    def merge(self, other: FieldState) -> None:
        self.types_seen |= other.types_seen
        self.skipped |= other.skipped
        self.gold_type_errors.update(other.gold_type_errors)
        self.measured |= other.measured
        self.plain |= other.plain

    def quantities(self) -> list[str]:
        """The paths every gold value of which is a measurement: inferred ``quantity``."""
        return sorted(self.measured - self.plain)

    def mixed(self) -> frozenset[str]:
        """The paths whose gold values are partly measurements: not inferred ``quantity``."""
        return frozenset(self.measured & self.plain)
