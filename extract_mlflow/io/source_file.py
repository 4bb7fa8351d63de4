"""A JSONL sources file read by offset (:class:`SourceFile`), and which sources a pass used
(:class:`SourceUse`).

A sources file can be far larger than what one document needs. :class:`SourceFile` reads it
once at open, every line parsed and checked by the line codec
(:func:`~extract_mlflow.io.lines.read_source`: the first defect in file order is the error),
and keeps per line only a 64-bit hash of its id and its byte offset, in numpy arrays. A text is
read when it is asked for: the hash is found by binary search, the line read
at its offset and parsed, and its id compared in full (two ids of one hash are told apart by
reading each). The entries are numbered in the order of their ids (by code point, as
``sorted`` orders strings; their UTF-8 bytes compare in that order too), so that the texts a
pass used can be given in that order, one at a time, for the digest of a run's signature.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable, ItemsView, Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError
from .lines import Oversized, RawLines, line_at, read_source

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["SourceFile", "SourceUse"]


def _blake2b(doc_id: str) -> int:
    """A 64-bit hash of an id (blake2b: the same in every process, unlike hash())."""
    return int.from_bytes(hashlib.blake2b(_id_bytes(doc_id), digest_size=8).digest(), "big")


_id_hash: Callable[[str], int] = _blake2b
"""The hash entries are filed by, looked up in the module at each use (a test makes ids
collide)."""


def _id_bytes(doc_id: str) -> bytes:
    # UTF-8; a lone surrogate (JSON can spell one) as its three bytes, still in code point order
    return doc_id.encode("utf-8", "surrogatepass")


class SourceFile(Mapping[str, str]):
    """The texts of a JSONL file of ``{"id": ..., "text": ...}`` objects by id, read from the
    file when asked for: a read-only mapping, iterated in file order.

    Opening it reads the file once and raises the :class:`InputError` loading it whole raises,
    at the first defect in file order: a line that is not UTF-8 or not a JSON object, an id
    that is neither a string nor an integer, a text that is not a string, an id given twice.
    Blank lines are skipped.
    """

    def __init__(self, path: str | Path, id_key: str = "id", text_key: str = "text") -> None:
        self._file: IO[bytes] | None = None
        self.path, self.id_key, self.text_key = Path(path), id_key, text_key
        offsets, hashes, by_id = _scan(self.path, id_key, text_key)
        self._offsets = offsets[by_id]
        """entry -> the byte offset of its line (the entries in id order)"""
        hashes = hashes[by_id]
        self._entries = np.argsort(hashes, kind="stable")
        """the entries in the order of their hashes"""
        self._hashes = hashes[self._entries]

    def __len__(self) -> int:
        return len(self._offsets)

    def __getitem__(self, doc_id: str) -> str:
        found = self.find(doc_id) if isinstance(doc_id, str) else None
        if found is None:
            raise KeyError(doc_id)
        return found[1]

    def __iter__(self) -> Iterator[str]:
        return (doc_id for doc_id, _ in self._pairs())

    def items(self) -> ItemsView[str, str]:
        return _Items(self)

    def _pairs(self) -> Iterator[tuple[str, str]]:
        """(id, text) of every line in file order: the file read through once."""
        for _, _, raw in RawLines(self.path):
            yield self._parse(raw)

    def find(self, doc_id: str) -> tuple[int, str] | None:
        """(entry, text) of `doc_id`, or None when the file has no line for it."""
        h = np.uint64(_id_hash(doc_id))
        at = int(np.searchsorted(self._hashes, h))
        while at < len(self._hashes) and self._hashes[at] == h:
            entry = int(self._entries[at])
            found, text = self._read(int(self._offsets[entry]))
            if found == doc_id:
                return entry, text
            at += 1
        return None

    def by_id(self, flagged: npt.NDArray[np.bool_]) -> Iterator[tuple[str, str]]:
        """(id, text) of the entries `flagged`, in id order, one at a time."""
        for entry in np.flatnonzero(flagged):
            yield self._read(int(self._offsets[entry]))

    def ids_in_file_order(self, flagged: npt.NDArray[np.bool_]) -> Iterator[str]:
        """The ids of the entries `flagged`, in file order."""
        for offset in np.sort(self._offsets[flagged]):
            yield self._read(int(offset))[0]

    def _read(self, offset: int) -> tuple[str, str]:
        if self._file is None:
            self._file = self.path.open("rb")
        return self._parse(line_at(self._file, offset))

    def _parse(self, raw: bytes | Oversized) -> tuple[str, str]:
        doc_id, text = read_source(raw, self.id_key, self.text_key)
        if doc_id is None:
            raise InputError(f"{self.path}: the file changed since it was read")
        return doc_id, text

    def close(self) -> None:
        """Close the file the texts are read from (the next read opens it again)."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def __del__(self) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_file": None}  # a copy opens the file itself

    def __repr__(self) -> str:
        return f"SourceFile({str(self.path)!r}, {len(self)} sources)"


class _Items(ItemsView[str, str]):
    """The items of a :class:`SourceFile`, iterated by reading the file through once (not by
    looking each id up)."""

    _mapping: SourceFile

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return self._mapping._pairs()


# -- reading and checking the file --------------------------------------------------------------


class _Ids:
    """Ids one after another in one buffer (what sorting them needs, and no more)."""

    def __init__(self) -> None:
        self.data, self.ends, self.lines = bytearray(), array("q", [0]), array("q")

    def add(self, doc_id: str, line: int) -> None:
        self.data += _id_bytes(doc_id)
        self.ends.append(len(self.data))
        self.lines.append(line)

    def arrow(self) -> pa.Array:
        import pyarrow as pa

        buffers = [None, pa.py_buffer(self.ends), pa.py_buffer(self.data)]
        return pa.Array.from_buffers(pa.large_binary(), len(self.lines), buffers)

    def text(self, i: int) -> str:
        return self.data[self.ends[i] : self.ends[i + 1]].decode("utf-8", "surrogatepass")


def _scan(path: Path, id_key: str, text_key: str) -> tuple[npt.NDArray[Any], ...]:
    """The lines' offsets and id hashes (in file order) and the lines in id order; the
    InputError of the file's first defect."""
    offsets, hashes, ids = array("q"), array("Q"), _Ids()
    for n, offset, raw in RawLines(path):
        doc_id, why = read_source(raw, id_key, text_key)
        if doc_id is None:
            _id_order(path, ids)  # a repeated id on an earlier line comes first
            raise InputError(f"{path}, line {n}: {why}")
        offsets.append(offset)
        hashes.append(_id_hash(doc_id))
        ids.add(doc_id, n)
    by_id = _id_order(path, ids)
    return np.frombuffer(offsets, np.int64), np.frombuffer(hashes, np.uint64), by_id


def _id_order(path: Path, ids: _Ids) -> npt.NDArray[np.int64]:
    """The lines in the order of their ids; the InputError of the first line (in file order)
    whose id an earlier line has."""
    if not ids.lines:
        return np.empty(0, np.int64)
    import pyarrow.compute as pc

    keys = ids.arrow()
    order = pc.sort_indices(keys)  # a stable sort: the lines of one id stay in file order
    ordered = keys.take(order)
    same = pc.equal(ordered[1:], ordered[:-1]).to_numpy(zero_copy_only=False)
    by_id: npt.NDArray[np.int64] = order.to_numpy().astype(np.int64)
    if same.any():
        second = int(by_id[1:][same].min())
        where = f"{path}, line {ids.lines[second]}"
        raise InputError(f"{where}: a second source for id {ids.text(second)!r}")
    return by_id


# -- which sources a pass used -------------------------------------------------------------------


class SourceUse:
    """Which sources a pass gave to a gold document: what the digest of a run's signature
    (the texts used, by id) and its list of sources no gold document used are computed from.

    For a :class:`SourceFile`, a flag per source; for sources held in memory (a folder read,
    a mapping), the set of ids used (their texts are held anyway)."""

    def __init__(self, sources: Mapping[str, str]) -> None:
        self.sources = sources
        self._flags = np.zeros(len(sources), bool) if isinstance(sources, SourceFile) else None
        self._ids: set[str] = set()

    def get(self, doc_id: str) -> str | None:
        """The source text of `doc_id` (None: it has none), noted as used."""
        if self._flags is not None:
            assert isinstance(self.sources, SourceFile)
            found = self.sources.find(doc_id)
            if found is None:
                return None
            self._flags[found[0]] = True
            return found[1]
        text = self.sources.get(doc_id)
        if text is not None:
            self._ids.add(doc_id)
        return text

    def add(self, ids: Iterable[str]) -> SourceUse:
        """Note the sources of `ids` as used (ids without one are ignored)."""
        for doc_id in ids:
            self.get(doc_id)
        return self

    def noted(self) -> tuple[npt.NDArray[np.bool_] | None, set[str]]:
        """What was noted as used (flags or ids: no texts), for :meth:`note` elsewhere (a
        worker process's use of the sources, sent back to the pass)."""
        return self._flags, self._ids

    def note(self, noted: tuple[npt.NDArray[np.bool_] | None, set[str]]) -> None:
        """Note as used what another use of the same sources :meth:`noted`."""
        flags, ids = noted
        if self._flags is not None and flags is not None:
            self._flags |= flags
        self._ids |= ids

    def used(self) -> Iterator[tuple[str, str]]:
        """(id, text) of the sources used, by id."""
        if self._flags is not None:
            assert isinstance(self.sources, SourceFile)
            return self.sources.by_id(self._flags)
        return iter(sorted((i, self.sources[i]) for i in self._ids))

    def unused(self) -> Iterator[str]:
        """The ids of the sources not used, in the sources' order."""
        if self._flags is not None:
            assert isinstance(self.sources, SourceFile)
            return self.sources.ids_in_file_order(~self._flags)
        return (i for i in self.sources if i not in self._ids)
