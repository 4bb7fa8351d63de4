"""Finding an extracted value in its source document (text fidelity).

Text: a value is grounded when its tokens occur verbatim (contiguous, in order) in the source,
which is "exactly after normalisation": NFKC, whitespace and (optionally) case do not matter
because tokens ignore them; or when its fuzzy partial match against the source reaches the
threshold. The fuzzy match is :func:`rapidfuzz.fuzz.partial_ratio_alignment` (the best-matching
substring of the value's length, scored by normalised Indel similarity), run on a few candidate
windows that the token index proposes rather than on the whole document:

1. the value's ``VOTERS`` rarest tokens that are not very common in the source (at most
   ``COMMON`` occurrences) vote, for every place they occur in any case, for the diagonal
   "value starts at source token p − i";
2. the ``CANDIDATES`` best-voted diagonals give token windows (the value's length plus half of
   it on each side); partial_ratio_alignment runs on the text of each window;
3. the best window's alignment is snapped to the tokens it covers (an edge token when at least
   half of it is covered), and each end may move by up to ``REACH`` tokens, or as many as the
   value has (at most ``MAX_REACH``), where that raises the token Dice score with the value
   (the alignment is only as long as the value in characters, so it can cut a word off a
   longer phrase, or keep only the end of a phrase the value compressed: "The board meets
   quarterly" aligns first with "meets quarterly" of "The board of directors meets
   quarterly", and the refinement takes in the whole phrase): that is the *span*, reported with
   its character offsets in the normalised source text and the alignment (partial ratio)
   score, 0..1, that grounding compares with the threshold.

This keeps a value check independent of the document's length. A value none of whose tokens
occurs in the source (in any case) has no span and is not grounded (its partial ratio could only
come from pieces of words). By default the alignment ignores case (``ignore_case``): a value
written in capitals is found, grounded and shown next to the source's spelling, while its
n-gram precisions (which keep case unless configured otherwise) still show the change. The
span's n-grams that the value leaves out are its *missing* n-grams.

Numbers and quantities: every number of the source is read once per document (with the unit
written after it, if pint knows it); a predicted number is grounded when some source number is
equal within the field's tolerance (the source value plays the gold side of
:meth:`~extract_mlflow.fields.normalize.Comparator.close`), a quantity when some source quantity
converts to the predicted unit within tolerance (a source number without a known unit is read
in the predicted unit, as a bare predicted number is read in the gold unit).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
from rapidfuzz import fuzz

from ..fields.normalize import Comparator
from ..fields.numeric import parse_number
from ..fields.units import normalise_unit, unit_map
from .tokens import SourceIndex, normalize

COMMON = 64
"""A token occurring more often than this in the source does not vote for windows (unless no
token of the value is rarer): it would propose windows everywhere."""
CANDIDATES = 3
"""How many candidate windows the fuzzy alignment examines."""
VOTERS = 8
"""How many of a value's tokens (the rarest in the source) vote for candidate windows."""
REACH = 2
"""How many tokens each end of an aligned span may move by to cover the value better, at least;
a longer value may move them by its own length in tokens, up to ``MAX_REACH``."""
MAX_REACH = 16
"""The most tokens an end of a span may move by (the refinement is quadratic in the reach)."""

# A number as documents print it: not glued to a word, a date or a code on its left ("A4",
# "2026-03-14" give no 4 and no 3/14), optional sign and currency, grouping by , . or '
# (never by a space, so "1 340.00" in a table row is two numbers); then an optional unit.
_SOURCE_NUMBER = re.compile(
    r"(?<![\w.,'\-−–/])(?P<num>[-−–]?(?:[$€£¥₹]\s?)?(?:\d[\d,.']*\d|\d)(?:[eE][-+−]?\d+)?)"
    r"(?:\s?(?P<unit>°\s?[CFK]\b|%|[^\W\d_]+(?:[-−^]?\d+)?(?:/[^\W\d_]+(?:[-−^]?\d+)?)?))?"
)


@dataclass(frozen=True, slots=True)
class Span:
    """Where a value best matches its source: the text of whole tokens, its character offsets
    [start, end) in the normalised source text, and the alignment score (1.0 = verbatim)."""

    text: str
    start: int
    end: int
    score: float
    tokens: tuple[str, ...] = field(default=(), repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "start": self.start, "end": self.end, "score": self.score}


def _span(index: SourceIndex, first: int, last: int, score: float) -> Span:
    start, end = index.char_span(first, last)
    return Span(index.text[start:end], start, end, score, tuple(index.tokens[first : last + 1]))


def verbatim_span(index: SourceIndex, at: int, length: int) -> Span:
    """The span of a value found verbatim at token `at` (score 1.0)."""
    return _span(index, at, at + length - 1, 1.0)


def _fold(text: str) -> str:
    """Lower case with the same length (offsets into the folded text stay valid)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def align(
    index: SourceIndex, tokens: Sequence[str], text: str, ignore_case: bool = True
) -> Span | None:
    """The best-matching span in the source of a value (its `tokens`, and its normalised
    `text`), or None when no token of the value occurs there (in any case)."""
    if not tokens:
        return None
    at = index.find(index.ids_of(tokens))
    if at is not None:
        return verbatim_span(index, at, len(tokens))
    return align_fuzzy(index, tokens, text, ignore_case)


def align_fuzzy(
    index: SourceIndex, tokens: Sequence[str], text: str, ignore_case: bool = True
) -> Span | None:
    """:func:`align` for a value known not to occur verbatim."""
    fold = _fold if ignore_case else str
    needle = fold(text)
    best: tuple[float, int, int] | None = None
    slack = max(2, len(tokens) // 2)
    n_tokens = len(index.tokens)
    for diagonal in _diagonals(index, index.anchor_ids_of(tokens)):
        lo = max(0, diagonal - slack)
        hi = min(n_tokens, diagonal + len(tokens) + slack) - 1
        if hi < lo:
            continue
        c0, c1 = index.char_span(lo, hi)
        r = fuzz.partial_ratio_alignment(needle, fold(index.text[c0:c1]))
        if r is not None and r.score > 0 and (best is None or r.score > best[0]):
            best = (r.score, c0 + r.dest_start, c0 + r.dest_end)
    if best is None or best[2] <= best[1]:
        return None
    first, last = _snap(index, best[1], best[2])
    ids = index.anchor_ids_of(tokens) if ignore_case else index.ids_of(tokens)
    span = _refine(index, ids, ignore_case, first, last)
    return replace(span, score=best[0] / 100.0)


def _snap(index: SourceIndex, start: int, end: int) -> tuple[int, int]:
    """The tokens the alignment [start, end) covers, an edge token only when at least half of
    it is covered."""
    first, last = index.tokens_in(start, end)
    s0, e0 = index.char_span(first, first)
    if last > first and (min(end, e0) - start) * 2 < e0 - s0:
        first += 1
    s1, e1 = index.char_span(last, last)
    if last > first and (end - max(start, s1)) * 2 < e1 - s1:
        last -= 1
    return first, last


def _refine(index: SourceIndex, ids: Sequence[int], folded: bool, first: int, last: int) -> Span:
    """Move each end of the span by up to ``REACH`` tokens (or the value's length, at most
    ``MAX_REACH``) to maximise the token Dice score
    2·|span ∩ value| / (|span| + |value|) (multisets of token ids, case-folded or not; the
    smallest move wins ties): the partial alignment is as long as the value in characters, so
    it can cut a word off the matching phrase or take in a neighbour."""
    src = index.anchor_list if folded else index.id_list
    want: dict[int, int] = {}
    for t in ids:
        want[t] = want.get(t, 0) + 1
    reach = min(max(REACH, len(ids)), MAX_REACH)
    best = (-1.0, 0, first, last)
    for a in range(max(0, first - reach), min(first + reach, last) + 1):
        have: dict[int, int] = {}
        common = 0
        for b in range(a, min(len(src), last + reach + 1)):
            t = src[b]
            c = have.get(t, 0)
            common += c < want.get(t, 0)
            have[t] = c + 1
            if b >= last - reach:
                dice = 2 * common / (b - a + 1 + len(ids))
                moved = abs(a - first) + abs(b - last)
                if dice > best[0] or (dice == best[0] and moved < best[1]):
                    best = (dice, moved, a, b)
    return _span(index, best[2], best[3], 0.0)


def _diagonals(index: SourceIndex, anchors: Sequence[int]) -> list[int]:
    """Candidate start positions (in source tokens) of the value, best voted first (ties: the
    earliest). The ``VOTERS`` rarest tokens vote; a diagonal with one vote is a candidate only
    when no diagonal has more."""
    known = sorted((index.frequency(t), i, t) for i, t in enumerate(anchors) if t >= 0)
    if not known:
        return []
    voters = [k for k in known if k[0] <= COMMON][:VOTERS] or known[:1]
    votes: dict[int, int] = {}
    for _, i, t in voters:
        for p in index.positions(t)[:COMMON].tolist():
            votes[p - i] = votes.get(p - i, 0) + 1
    several = [d for d, n in votes.items() if n > 1]
    return sorted(several or votes, key=lambda d: (-votes[d], d))[:CANDIDATES]


def missing_ngrams(span: Span | None, value_tokens: Sequence[str], orders: int = 4) -> list[str]:
    """The n-grams (n = 1..orders) of the span that the value does not contain, each once,
    shortest first, in span order."""
    if span is None or span.tokens == tuple(value_tokens):
        return []
    out: dict[str, None] = {}
    for n in range(1, orders + 1):
        have = set(zip(*(value_tokens[i:] for i in range(n)), strict=False))
        for gram in zip(*(span.tokens[i:] for i in range(n)), strict=False):
            if gram not in have:
                out[" ".join(gram)] = None
    return list(out)


# -- numbers and quantities ------------------------------------------------------------------
@lru_cache(maxsize=4096)
def _known_unit(unit: str) -> bool:
    """Whether pint reads `unit` (pint syntax) as a unit (compared with itself spelt in
    parentheses, which makes pint parse it)."""
    return unit_map(unit, f"({unit})") is not None


class SourceNumbers:
    """Every number of one source document with its unit ('' when none is known), read once."""

    def __init__(self, text: str) -> None:
        text = normalize(text)  # "h⁻¹" reads as "h−1": a unit with an exponent
        by_unit: dict[str, list[float]] = {}
        for m in _SOURCE_NUMBER.finditer(text):
            value = parse_number(m.group("num"))
            if value is None:
                continue
            raw_unit = m.group("unit") or ""
            unit = normalise_unit(raw_unit) if raw_unit else ""
            if unit and not _known_unit(unit):
                unit = ""
            by_unit.setdefault(unit, []).append(value)
        self.by_unit = {u: np.unique(np.array(v, dtype=float)) for u, v in by_unit.items()}

    @cached_property
    def magnitudes(self) -> np.ndarray:
        """All numbers regardless of unit, sorted."""
        if not self.by_unit:
            return np.empty(0)
        return np.unique(np.concatenate(list(self.by_unit.values())))

    def has_number(self, value: float, comparator: Comparator) -> bool:
        """Whether some number of the source equals `value` within the field's tolerance."""
        return _any_close(self.magnitudes, value, comparator)

    def has_quantity(self, value: float, unit: str, comparator: Comparator) -> bool:
        """Whether some quantity of the source converts to `value` `unit` within tolerance."""
        for src_unit, values in self.by_unit.items():
            if not src_unit or not unit:
                lin: tuple[float, float] | None = (1.0, 0.0)
            else:
                lin = unit_map(src_unit, unit)
            if lin is not None and _any_close(lin[0] * values + lin[1], value, comparator):
                return True
        return False


def _any_close(sources: np.ndarray, value: float, comparator: Comparator) -> bool:
    """Whether some source value g satisfies comparator.close(g, value): a vectorised
    pre-filter on a bound that contains every such g, then the comparator decides."""
    if not len(sources):
        return False
    rule = comparator.rule
    tol, rel = rule.tol or 0.0, rule.rel_tol or 0.0
    bound = math.inf if rel >= 1 else max(tol, rel * abs(value) / (1 - rel))
    bound = bound * (1 + 1e-6) + 1e-9 * abs(value) + 1e-300
    near = sources[np.abs(sources - value) <= bound]
    return any(comparator.close(float(g), value) for g in near.tolist())
