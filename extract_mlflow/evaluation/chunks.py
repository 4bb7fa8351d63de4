"""The growing columns of a compact evaluation, kept small and unfragmented. Pure.

A column that grows one document at a time in one contiguous array is reallocated as it grows:
each move leaves the old block free inside the heap, where the allocator keeps it (the process
keeps holes the size of the columns). :class:`Chunked` keeps rows in fixed-size chunks that
never move, each chunk in the narrowest unsigned type that holds its values (a document's
tp/fp/fn usually fit in a byte), and joins them into one array only when the report asks
(:meth:`Chunked.joined`, which then keeps that one array as its single chunk).
:class:`Runs` keeps the positions added as runs of consecutive positions: nothing per document
when the documents come in gold order, as a streaming pass gives them.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from itertools import pairwise
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

__all__ = ["CHUNK_ROWS", "Chunked", "Runs"]

CHUNK_ROWS = 1 << 14
"""rows per chunk"""

_TYPES = ("B", "H", "I", "Q")
_LIMIT = {t: (1 << (8 * array(t).itemsize)) - 1 for t in _TYPES}
_DTYPE = {t: np.dtype(f"u{array(t).itemsize}") for t in _TYPES}

Chunk: TypeAlias = "array[int] | npt.NDArray[np.unsignedinteger[Any]]"


class Chunked:
    """Rows of `width` non-negative integers, in chunks (see the module).

    >>> c = Chunked(width=2)
    >>> c.append((1, 2)); c.append((3, 300))
    >>> c.joined().tolist(), c.joined().dtype.name
    ([[1, 2], [3, 300]], 'uint16')
    """

    def __init__(self, width: int = 1) -> None:
        self.width = width
        self.typecode = _TYPES[0]
        """the narrowest type holding every value so far: new chunks start in it"""
        self.chunks: list[Chunk] = []
        """full or joined chunks, then the one being filled (an ``array``)"""
        self.rows = 0

    def __len__(self) -> int:
        return self.rows

    def append(self, values: Sequence[int]) -> None:
        """Add one row (`width` values, each ≥ 0)."""
        if min(values) < 0:
            raise ValueError(f"a column holds values ≥ 0, not {min(values)}")
        tail = self.chunks[-1] if self.chunks else None
        if not isinstance(tail, array) or len(tail) >= CHUNK_ROWS * self.width:
            tail = array(self.typecode)
            self.chunks.append(tail)
        top = max(values)
        if top > _LIMIT[tail.typecode]:
            tail = self._widen(tail, top)
        tail.extend(values)
        self.rows += 1

    def _widen(self, tail: array[int], top: int) -> array[int]:
        typecode = next((t for t in _TYPES if top <= _LIMIT[t]), None)
        if typecode is None:
            raise OverflowError(f"{top} does not fit in 64 bits")
        self.typecode = max(self.typecode, typecode, key=_TYPES.index)
        self.chunks[-1] = wider = array(typecode, tail)
        return wider

    def extend(self, other: Chunked) -> None:
        """Add `other`'s rows after these (copied: `other` may go on growing)."""
        self.chunks.extend(np.array(c, dtype=_dtype(c)) for c in other.chunks if len(c))
        self.typecode = max(self.typecode, other.typecode, key=_TYPES.index)
        self.rows += other.rows

    def joined(self) -> npt.NDArray[np.unsignedinteger[Any]]:
        """Every row in one array (rows × width, or a flat array when `width` is 1), kept as
        the only chunk: a later join costs nothing, a later row starts a new chunk."""
        whole: npt.NDArray[np.unsignedinteger[Any]]
        if len(self.chunks) == 1 and isinstance(self.chunks[0], np.ndarray):
            whole = self.chunks[0]
        elif self.chunks:
            whole = np.concatenate([np.asarray(c, dtype=_dtype(c)) for c in self.chunks])
        else:
            whole = np.zeros(0, dtype=_DTYPE[self.typecode])
        whole.flags.writeable = False
        self.chunks = [whole]
        return whole.reshape(-1, self.width) if self.width > 1 else whole


def _dtype(chunk: Chunk) -> np.dtype[Any]:
    return _DTYPE[chunk.typecode] if isinstance(chunk, array) else chunk.dtype


class Runs:
    """Positions, in the order added, as runs ``[start, stop)`` of consecutive positions;
    adding a position already there is a ValueError.

    >>> r = Runs()
    >>> for p in (0, 1, 2, 7, 8): r.add(p)
    >>> list(r.pairs()), r.in_order()
    ([(0, 3), (7, 9)], True)
    """

    def __init__(self) -> None:
        self.bounds = array("q")
        """start, stop, start, stop, ..."""
        self.top = -1
        """the largest position added"""

    def __len__(self) -> int:
        b = self.bounds
        return sum(b[i + 1] - b[i] for i in range(0, len(b), 2))

    def pairs(self) -> Iterator[tuple[int, int]]:
        b = self.bounds
        return ((b[i], b[i + 1]) for i in range(0, len(b), 2))

    def add(self, position: int) -> None:
        b = self.bounds
        if position <= self.top and any(s <= position < e for s, e in self.pairs()):
            raise ValueError(f"document position {position} was already scored")
        if b and position == b[-1]:
            b[-1] = position + 1
        else:
            b.extend((position, position + 1))
        self.top = max(self.top, position)

    def extend(self, other: Runs) -> None:
        """Add `other`'s runs after these (the caller checked they do not overlap)."""
        b = self.bounds
        for start, stop in other.pairs():
            if b and start == b[-1]:
                b[-1] = stop
            else:
                b.extend((start, stop))
        self.top = max(self.top, other.top)

    def overlap(self, other: Runs) -> list[int]:
        """The positions in both."""
        mine, theirs = sorted(self.pairs()), sorted(other.pairs())
        out: list[int] = []
        i = j = 0
        while i < len(mine) and j < len(theirs):
            (a, b), (c, d) = mine[i], theirs[j]
            out.extend(range(max(a, c), min(b, d)))
            if b < d:
                i += 1
            else:
                j += 1
        return out

    def in_order(self) -> bool:
        """Every position added after the smaller ones."""
        pairs = list(self.pairs())
        return all(s >= e for (_, e), (s, _) in pairwise(pairs))

    def positions(self) -> npt.NDArray[np.int64] | range:
        """Every position in the order added: a range when they are one run."""
        if len(self.bounds) == 2:
            return range(self.bounds[0], self.bounds[1])
        return _aranges(self.pairs())


def _aranges(pairs: Iterable[tuple[int, int]]) -> npt.NDArray[np.int64]:
    parts = [np.arange(s, e, dtype=np.int64) for s, e in pairs]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
