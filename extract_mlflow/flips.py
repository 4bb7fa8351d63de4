"""The documents two runs disagree on: fully correct on one side only, with the fields whose
(TP, FP, FN) changed. Plain data, shared by `diff` (two prediction files) and `compare`
(two logged runs, whose comparison page lists them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["BROKE", "FIXED", "Direction", "FieldChange", "Flip"]

Direction = Literal["fixed", "broke"]
Triple = tuple[int, int, int]

FIXED: Direction = "fixed"  # not fully correct in A, fully correct in B
BROKE: Direction = "broke"  # fully correct in A, not in B


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One field of one document whose (TP, FP, FN) differ between A and B."""

    path: str
    before: Triple
    after: Triple

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.path, "before": list(self.before), "after": list(self.after)}


@dataclass(frozen=True, slots=True)
class Flip:
    """A document fully correct on one side only (``fixed``: in B; ``broke``: in A)."""

    id: str
    direction: Direction
    fields: tuple[FieldChange, ...]
    status_before: str | None = None
    status_after: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "direction": self.direction,
            "status_before": self.status_before,
            "status_after": self.status_after,
            "fields": [c.to_dict() for c in self.fields],
        }
