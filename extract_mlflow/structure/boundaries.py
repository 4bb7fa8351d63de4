"""Section-boundary precision, recall and F1 with a tolerance window. Pure.

A ``boundaries`` field is a list of positions (numbers: character offsets, paragraph or line
indices). A predicted boundary p matches a gold boundary g when |p − g| ≤ window; each boundary
matches at most once, and the number of matches is the largest possible. TP = matches,
FP = predicted − matches, FN = gold − matches; P, R and F1 follow from the counts (0/0 → None).

The matching is greedy over both lists sorted, which is optimal here. All gold windows
[g − w, g + w] have the same width, so their left and right ends come in the same order. Take
the smallest gold g₁ and smallest prediction p₁. If p₁ < g₁ − w, p₁ lies left of every window
and matches nothing: drop it. If p₁ > g₁ + w, g₁'s window lies left of every prediction: drop
g₁. Otherwise p₁ is in g₁'s window, and some maximum matching pairs them: given any maximum
matching M, if g₁–p_a and g_b–p₁ are in M, then g_b − w ≤ p₁ ≤ p_a ≤ g₁ + w ≤ g_b + w, so
g_b–p_a is a valid pair and swapping keeps the size (if only one of g₁, p₁ is matched, re-pair
it with the other; if neither, add the pair, contradicting maximality). Induction on the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Real
from typing import Any

from ..core.counts import Counts


def parse_positions(value: Any) -> list[float]:
    """Boundary positions from a list of numbers; anything else → TypeError."""
    if not isinstance(value, (list, tuple)):
        raise TypeError("boundaries must be a list of numbers (positions)")
    out = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, Real):
            raise TypeError(f"a boundary must be a number, not {item!r}")
        out.append(float(item))
    return out


def match_count(gold: Sequence[float], pred: Sequence[float], window: float = 0.0) -> int:
    """The largest number of (gold, predicted) pairs within ``window`` of each other, each
    boundary used at most once.

    >>> match_count([10, 20], [11, 12, 30], window=2)
    1
    """
    if window < 0:
        raise ValueError("the boundary window must be ≥ 0")
    g, p = sorted(gold), sorted(pred)
    i = j = matched = 0
    while i < len(g) and j < len(p):
        if p[j] < g[i] - window:
            j += 1
        elif p[j] > g[i] + window:
            i += 1
        else:
            matched += 1
            i += 1
            j += 1
    return matched


def score_boundaries(gold: Sequence[float], pred: Sequence[float], window: float = 0.0) -> Counts:
    """TP/FP/FN of the predicted boundaries (``.precision``, ``.recall``, ``.f1``).

    >>> score_boundaries([10, 20], [10, 21]).f1, score_boundaries([10, 20], [10, 21], 1).f1
    (0.5, 1.0)
    """
    matched = match_count(gold, pred, window)
    return Counts(matched, len(pred) - matched, len(gold) - matched)
