"""Counts of true positives, false positives and false negatives, and the scores they give:
precision, recall and F1, undefined (None, never 0 or 1) when their denominator is 0."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


def ratio(num: int, den: int) -> float | None:
    """num/den, or None when den is 0."""
    return num / den if den else None


@dataclass(frozen=True, slots=True)
class Counts:
    """True positives, false positives and false negatives, and the scores they give."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float | None:
        return ratio(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float | None:
        return ratio(self.tp, self.tp + self.fn)

    @property
    def f1(self) -> float | None:
        return ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn)

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
        }

    @staticmethod
    def total(items: Iterable[Counts]) -> Counts:
        tp = fp = fn = 0
        for c in items:
            tp += c.tp
            fp += c.fp
            fn += c.fn
        return Counts(tp, fp, fn)
