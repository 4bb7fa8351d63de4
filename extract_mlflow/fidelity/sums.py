"""What text fidelity keeps of every checked value: the BLEU proxies in a compact sequence
(:class:`BleuSequence`) and the few values the outputs list (:class:`Smallest`). Pure.

A float sum depends on the order of its terms, and the corpus BLEU proxy (per field and
overall) is the mean of the values' proxies summed one after another in gold order, as one
pass over the documents adds them. So the proxies are kept, not summed, until the result: each
as the code of its distinct (field, proxy) pair (a value's proxy is a ratio of its small n-gram
counts, so a set has few distinct ones), 2 bytes a value, 4 once a part has more than 65,535
distinct pairs; per document its position and how many proxies it has. :meth:`BleuSequence.sums`
replays them in gold order, whatever the partition the parts came from.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable
from itertools import pairwise
from operator import itemgetter
from typing import Generic, TypeVar

import numpy as np
import numpy.typing as npt

K = TypeVar("K")
T = TypeVar("T")

_KEY = itemgetter(0)
_CODES = ("H", "I", "Q")
_LIMIT = {t: (1 << (8 * array(t).itemsize)) - 1 for t in _CODES}
_REPLAY = 1 << 20
"""proxies replayed per step of :meth:`BleuSequence.sums` (bounds its temporary arrays)"""


class BleuSequence:
    """The BLEU proxies of the n-gram scored values of (a part of) an evaluation, in the order
    they were checked (see the module).

    >>> s = BleuSequence()
    >>> s.add(1, [("b", 0.5), ("a", 1.0)]); s.add(0, [("a", 0.25)])
    >>> s.sums()
    (1.75, {'b': 0.5, 'a': 1.25})
    """

    def __init__(self) -> None:
        self.pairs: dict[tuple[str, float], int] = {}
        """(field path, BLEU proxy) -> its code"""
        self.codes = array(_CODES[0])
        """the proxies' codes, document after document, in the order added"""
        self.positions = array("q")
        """per document with a proxy (in the order added): its position in gold"""
        self.counts = array("I")
        """per document with a proxy: how many it has"""

    def add(self, position: int, values: Iterable[tuple[str, float]]) -> None:
        """The (field path, BLEU proxy) of one document's values, in the order checked."""
        codes, n = self.codes, 0
        for pair in values:
            code = self.pairs.setdefault(pair, len(self.pairs))
            if code > _LIMIT[codes.typecode]:
                codes = self._widen(code)
            codes.append(code)
            n += 1
        if n:
            self.positions.append(position)
            self.counts.append(n)

    def _widen(self, top: int) -> array[int]:
        typecode = next(t for t in _CODES if top <= _LIMIT[t])
        self.codes = array(typecode, self.codes)
        return self.codes

    def merge(self, other: BleuSequence) -> None:
        """Add `other`'s documents (positions disjoint from these) after these."""
        if not other.codes:
            return
        remap = np.fromiter(
            (self.pairs.setdefault(p, len(self.pairs)) for p in other.pairs), np.uint64
        )
        if len(self.pairs) - 1 > _LIMIT[self.codes.typecode]:
            self._widen(len(self.pairs) - 1)
        theirs = remap[np.asarray(other.codes, dtype=np.uint64)]
        self.codes.frombytes(theirs.astype(np.dtype(self.codes.typecode)).tobytes())
        self.positions.extend(other.positions)
        self.counts.extend(other.counts)

    def __len__(self) -> int:
        return len(self.codes)

    def _in_gold_order(self) -> npt.NDArray[np.uint64]:
        """The codes, the documents sorted by position (each one's proxies in checked order)."""
        codes = np.asarray(self.codes, dtype=np.uint64)
        positions = np.asarray(self.positions, dtype=np.int64)
        if len(positions) < 2 or bool(np.all(positions[1:] > positions[:-1])):
            return codes
        counts = np.asarray(self.counts, dtype=np.int64)
        starts = np.cumsum(counts) - counts
        order = np.argsort(positions, kind="stable")
        n = counts[order]
        first = np.repeat(starts[order] - (np.cumsum(n) - n), n)
        return codes[first + np.arange(len(codes))]

    def sums(self) -> tuple[float, dict[str, float]]:
        """(the sum of every proxy, the sum per field path), each summed one proxy after
        another in gold order; the fields in the order of their first proxy here."""
        pairs = list(self.pairs)
        paths = list(dict.fromkeys(p for p, _ in pairs))
        field_of = {p: i for i, p in enumerate(paths)}
        code_field = np.array([field_of[p] for p, _ in pairs], dtype=np.int64)
        code_bleu = np.array([b for _, b in pairs], dtype=np.float64)
        codes = self._in_gold_order()
        total, per = 0.0, [0.0] * len(paths)
        for at in range(0, len(codes), _REPLAY):
            chunk = codes[at : at + _REPLAY]
            total = _carry(total, code_bleu[chunk])
            fields = code_field[chunk]
            order = np.argsort(fields, kind="stable")
            fields, values = fields[order], code_bleu[chunk][order]
            bounds = [0, *(np.flatnonzero(np.diff(fields)) + 1).tolist(), len(fields)]
            for lo, hi in pairwise(bounds):
                f = int(fields[lo])
                per[f] = _carry(per[f], values[lo:hi])
        return total, dict(zip(paths, per, strict=True))


def _carry(start: float, values: npt.NDArray[np.float64]) -> float:
    """``start`` plus each of `values` in turn (np.cumsum adds one term after another, as a
    Python loop does; np.sum would add them pairwise)."""
    values = values.copy()
    values[0] += start
    return float(np.cumsum(values)[-1])


class Smallest(Generic[K, T]):
    """The `k` items with the smallest keys offered so far, in key order (keys unique and
    totally ordered). Mergeable: the k smallest of a union are the k smallest of the parts'.

    >>> s = Smallest(2)
    >>> for key in (5, 1, 4, 2):
    ...     s.offer(key, str(key))
    >>> s.items
    [(1, '1'), (2, '2')]
    """

    def __init__(self, k: int) -> None:
        self.k = k
        self.items: list[tuple[K, T]] = []

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Smallest) and (self.k, self.items) == (other.k, other.items)

    def offer(self, key: K, item: T) -> None:
        items = self.items
        if len(items) >= self.k:
            if not items or not key < items[-1][0]:  # type: ignore[operator]
                return
            items.pop()
        bisect.insort(items, (key, item), key=_KEY)

    def merge(self, other: Smallest[K, T]) -> None:
        for key, item in other.items:
            self.offer(key, item)

    def values(self) -> list[T]:
        return [item for _, item in self.items]
