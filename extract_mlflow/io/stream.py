"""Gold and predictions read in one pass and joined on id, without holding the documents.

:func:`load_gold` and :func:`load_predictions` build dicts of every document; this module gives
the same documents one gold document at a time, with the same checks, the same parse failures
and the same error messages, so memory does not grow with the number of documents beyond ~16
bytes per gold line and 24 per prediction line that is not in gold order.

The join, in the order that costs least:

- **lockstep**: the prediction file is read alongside the gold file while prediction line *i*
  carries the id of gold document *i* (the usual case: predictions written by iterating over
  the gold set). Nothing is indexed.
- **indexed**: at the first prediction line that breaks the order (a skipped, extra, repeated or
  unknown id, an unattributed line), the rest of the prediction file is read once and indexed by
  a 64-bit hash of each line's id (its byte offset and line number beside it, in numpy arrays);
  each later gold document's prediction is then read back by seeking to its offset, and its id is
  compared in full (so a hash collision can never join the wrong line).

Errors come in the same order as loading both files first: any defect of the gold file wins over
any defect of the prediction file (which is kept until the gold file has been read to its end).

A stream can start where another reader of the same pass stopped (:class:`Resume`: worker
processes parse the lockstep pairs, :mod:`~extract_mlflow.io.lockstep`); the rules of a pair in
lockstep are :func:`~extract_mlflow.io.lines.read_gold` and :func:`in_step`, shared by both.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np

from ..errors import InputError
from .lines import (
    Oversized,
    iter_raw_lines,
    line_at,
    read_gold,
    read_prediction,
)
from .loading import _sha256, note_unattributed

_Line = tuple[int, int, "bytes | Oversized"]


@dataclass(frozen=True, slots=True)
class Joined:
    """One gold document and what the prediction file holds for it."""

    position: int
    """index of the document in the gold file (0 for its first document)"""
    id: str
    gold: dict[str, Any]
    pred: dict[str, Any] | None
    failure: str | None = None
    """why the prediction line is unusable ("line 7: invalid JSON ..."): a parse failure"""


@dataclass
class StreamSummary:
    """What is known only once both files are read (as in GoldSet/PredictionSet)."""

    gold_source: str
    pred_source: str
    gold_digest: str | None = None
    pred_digest: str | None = None
    unknown_ids: list[str] = field(default_factory=list)
    unattributed: list[str] = field(default_factory=list)
    unattributed_count: int = 0
    mode: str = "lockstep"
    """how the files were joined: "lockstep" or "indexed" (diagnostics only)"""


@dataclass(frozen=True, slots=True)
class Resume:
    """Where a :class:`JoinedStream` picks up a pass that another reader joined in lockstep so
    far: the first `position` gold documents and as many prediction lines are read, through
    byte `gold_end` (line `gold_line`) and `pred_end` (line `pred_line`); the hashers have been
    fed every byte before those ends (each file's bytes are hashed once, in order)."""

    position: int
    gold_end: int
    gold_line: int
    gold_hasher: Any
    pred_end: int
    pred_line: int
    pred_hasher: Any


def id_hash(doc_id: str) -> int:
    """A 64-bit hash of an id (blake2b: stable across processes, unlike hash())."""
    return int.from_bytes(hashlib.blake2b(doc_id.encode("utf-8"), digest_size=8).digest(), "big")


_id_hash: Callable[[str], int] = id_hash
"""The hash the join files ids by: :func:`id_hash`, looked up in the module at each use (a
compiled module calls its own functions directly), so that a test can make ids collide."""


def in_step(line: _Line, gold_id: str, id_key: str) -> tuple[Any, str | None] | None:
    """(document, failure) when the prediction `line` belongs to `gold_id` (a line that does
    not parse counts when the id recovered from its text is `gold_id`), else None: the
    prediction file is out of gold order from this line on."""
    lineno, _, raw = line
    doc_id, doc, problem = read_prediction(raw, id_key)
    if doc_id != gold_id:
        return None
    return doc, None if doc is not None else f"line {lineno}: {problem}"


class JoinedStream:
    """Iterate the gold documents of `gold` joined with their predictions from `pred`.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "g.jsonl").write_text('{"id": "a", "x": 1}\\n{"id": "b", "x": 2}\\n')
    >>> _ = (d / "p.jsonl").write_text('{"id": "b", "x": 2}\\n{"id": "a", "x": 3}\\n')
    >>> stream = JoinedStream(d / "g.jsonl", d / "p.jsonl")
    >>> [(j.id, j.pred) for j in stream]
    [('a', {'id': 'a', 'x': 3}), ('b', {'id': 'b', 'x': 2})]
    >>> stream.summary.mode
    'indexed'
    """

    def __init__(
        self,
        gold: str | Path,
        pred: str | Path,
        id_key: str = "id",
        *,
        resume: tuple[Resume, array[int]] | None = None,
    ) -> None:
        """`resume`: continue a pass joined in lockstep up to a :class:`Resume`, given the id
        hashes (:func:`id_hash`) of the gold documents before it; the documents yielded, the
        checks and the errors are then those of one pass from the start, from that point on."""
        self.gold_path, self.pred_path, self.id_key = Path(gold), Path(pred), id_key
        self.summary = StreamSummary(str(self.gold_path), str(self.pred_path))
        self._gold_hashes = array("Q")
        self._pred_error: InputError | None = None
        self._pred_lines = 0
        self._index: _PredictionIndex | None = None
        self._resume = Resume(0, 0, 0, _sha256(), 0, 0, _sha256())
        if resume is not None:
            self._resume, hashes = resume
            assert len(hashes) == self._resume.position
            self._gold_hashes.extend(hashes)
            self._pred_lines = self._resume.position

    def __iter__(self) -> Iterator[Joined]:
        at = self._resume
        ghasher, phasher = at.gold_hasher, at.pred_hasher
        preds = self._pred_lines_iter(phasher, at.pred_end, at.pred_line)
        position = at.position - 1
        for lineno, _, raw in iter_raw_lines(self.gold_path, ghasher, at.gold_end, at.gold_line):
            position += 1
            doc, doc_id = self._gold(lineno, raw)
            self._gold_hashes.append(_id_hash(doc_id))
            if self._pred_broken():
                continue  # the prediction file is broken: only the gold file is still checked
            if self._index is None:
                line = next(preds, None)
                if line is not None:
                    found = in_step(line, doc_id, self.id_key)
                    if found is not None:
                        yield Joined(position, doc_id, doc, *found)
                        continue
                self._index = _PredictionIndex.build(self, line, preds, matched=position)
            if not self._pred_broken():  # reading the prediction file may have broken it
                yield Joined(position, doc_id, doc, *self._index.lookup(doc_id))
        if position < 0:
            raise InputError(f"{self.gold_path}: no documents (the file is empty)")
        self._check_gold_duplicates(len(self._gold_hashes))
        if self._index is None and not self._pred_broken():  # gold ran out first: the rest
            self._index = _PredictionIndex.build(self, None, preds, matched=position + 1)
        if self._pred_error is not None:
            raise self._pred_error
        if self._pred_lines == 0:
            raise InputError(f"{self.pred_path}: no predictions (the file is empty)")
        assert self._index is not None or self.summary.mode == "lockstep"
        if self._index is not None:
            self._index.finish()
        self.summary.gold_digest = ghasher.hexdigest()
        self.summary.pred_digest = phasher.hexdigest()
        # checked: the hashes and index are let go before the caller's result (the index
        # points back at this stream, a cycle the paused collector would keep)
        self._gold_hashes, self._index = array("Q"), None

    # -- gold --------------------------------------------------------------------------------

    def _gold(self, lineno: int, raw: bytes | Oversized) -> tuple[dict[str, Any], str]:
        doc_id, doc, problem = read_gold(raw, self.id_key)
        if doc_id is None or doc is None:
            self._check_gold_duplicates(len(self._gold_hashes))  # an earlier defect wins
            raise InputError(f"{self.gold_path}:{lineno}: {problem}")
        return doc, doc_id

    def _check_gold_duplicates(self, upto: int) -> None:
        """The first repeated id among the first `upto` gold documents, as load_gold says it.

        Called where the pass ends (its last document read, or a gold line it cannot read):
        the hashes are then sorted in place, since only the prediction index still reads them,
        as a set. Ids whose hashes repeat (a repeated id, or very rarely two ids of one hash)
        are looked up by reading the gold file again, in order, up to the first repeat: no
        offset is kept per document for that rare case."""
        hashes = np.frombuffer(self._gold_hashes, dtype=np.uint64)[:upto]
        hashes.sort()  # in place: a copy would be 8 bytes a document at the pass's peak
        suspects = set(_repeated(hashes).tolist())
        if not suspects:
            return
        first_seen: dict[str, int] = {}
        lines = iter_raw_lines(self.gold_path, _sha256())
        for _, (lineno, _, raw) in zip(range(upto), lines, strict=False):
            doc_id = read_gold(raw, self.id_key)[0]
            if doc_id is None:  # read once already: only a file changed since can say this
                continue
            if _id_hash(doc_id) not in suspects:
                continue
            if doc_id in first_seen:
                raise InputError(
                    f"{self.gold_path}:{lineno}: duplicate id '{doc_id}' "
                    f"(first on line {first_seen[doc_id]})"
                )
            first_seen[doc_id] = lineno

    # -- predictions -------------------------------------------------------------------------

    def _pred_broken(self) -> bool:
        """Whether a defect of the prediction file was met. A call, not an inline test of the
        attribute: the type checker would keep the attribute narrowed to None across the reads
        that set it, and a compiled module checks that narrowed type at run time."""
        return self._pred_error is not None

    def _pred_lines_iter(self, hasher: Any, offset: int, lineno: int) -> Iterator[_Line]:
        """The prediction file's lines; a defect of the file itself is kept for later."""
        try:
            for line in iter_raw_lines(self.pred_path, hasher, offset, lineno):
                self._pred_lines += 1
                yield line
        except InputError as exc:
            self._pred_error = exc


def _repeated(ordered: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The values that occur more than once in the sorted array `ordered` (each once)."""
    same = ordered[1:] == ordered[:-1]
    if not same.any():  # the usual case: no copy beyond the comparison's bytes
        return ordered[:0]
    return np.unique(ordered[1:][same])


class _PredictionIndex:
    """The prediction lines from where lockstep broke to the end, by id hash."""

    def __init__(self, stream: JoinedStream) -> None:
        self.stream = stream
        self.hashes = np.empty(0, dtype=np.uint64)
        self.offsets = np.empty(0, dtype=np.int64)
        self.linenos = np.empty(0, dtype=np.int64)
        self.used = np.empty(0, dtype=bool)
        self.file: IO[bytes] | None = None

    @classmethod
    def build(
        cls, stream: JoinedStream, first: _Line | None, rest: Iterator[_Line], *, matched: int
    ) -> _PredictionIndex:
        """Read `first` and every line after it; file each by the hash of its id. The first
        `matched` gold documents were joined in lockstep (their ids are taken)."""
        index = cls(stream)
        hashes, offsets, linenos = array("Q"), array("q"), array("q")
        lines = rest if first is None else _chain(first, rest)
        for lineno, offset, raw in lines:
            stream.summary.mode = "indexed"  # a line out of gold order (or beyond it)
            doc_id, _, problem = read_prediction(raw, stream.id_key)
            if doc_id is None:
                note_unattributed(stream.summary, f"line {lineno}: {problem}")
                continue
            hashes.append(_id_hash(doc_id))
            offsets.append(offset)
            linenos.append(lineno)
        order = np.argsort(np.frombuffer(hashes, dtype=np.uint64), kind="stable")
        index.hashes = np.frombuffer(hashes, dtype=np.uint64)[order]
        index.offsets = np.frombuffer(offsets, dtype=np.int64)[order]
        index.linenos = np.frombuffer(linenos, dtype=np.int64)[order]
        index.used = np.zeros(len(order), dtype=bool)
        index._check_duplicates(matched)
        return index

    def _read(self, offset: int) -> tuple[str | None, dict[str, Any] | None, str | None]:
        if self.file is None:
            self.file = self.stream.pred_path.open("rb")
        return read_prediction(line_at(self.file, offset), self.stream.id_key)

    def lookup(self, gold_id: str) -> tuple[dict[str, Any] | None, str | None]:
        """(document, failure) of the prediction line carrying `gold_id`; (None, None) if none."""
        h = np.uint64(_id_hash(gold_id))
        at = int(np.searchsorted(self.hashes, h))
        while at < len(self.hashes) and self.hashes[at] == h:
            doc_id, doc, problem = self._read(int(self.offsets[at]))
            if doc_id == gold_id:
                self.used[at] = True
                return doc, None if doc is not None else f"line {self.linenos[at]}: {problem}"
            at += 1
        return None, None

    def _check_duplicates(self, matched: int) -> None:
        """Two lines with one id (among the indexed lines, or an indexed line repeating a line
        joined in lockstep): the error load_predictions gives, at the earliest repeat, unless
        a defect of the file comes first (the file is read again, in order, only then)."""
        stream = self.stream
        if not len(self.hashes):  # nothing indexed (gold ran out first): nothing repeats
            return
        suspects = set(_repeated(self.hashes).tolist())  # self.hashes is sorted
        lockstep = np.frombuffer(stream._gold_hashes, dtype=np.uint64)[:matched]
        at = np.minimum(np.searchsorted(self.hashes, lockstep), len(self.hashes) - 1)
        suspects |= set(lockstep[self.hashes[at] == lockstep].tolist())
        if not suspects:
            return
        first_seen: dict[str, int] = {}
        try:
            for lineno, _, raw in iter_raw_lines(stream.pred_path, _sha256()):
                doc_id, _, _ = read_prediction(raw, stream.id_key)
                if doc_id is None or _id_hash(doc_id) not in suspects:
                    continue
                if doc_id in first_seen:
                    stream._pred_error = InputError(
                        f"{stream.pred_path}:{lineno}: duplicate prediction id '{doc_id}' "
                        f"(first on line {first_seen[doc_id]})"
                    )
                    return
                first_seen[doc_id] = lineno
        except InputError:
            return  # the file's own defect comes first; it is already kept

    def finish(self) -> None:
        """Unknown ids: indexed lines no gold document asked for (re-read by offset)."""
        stream = self.stream
        unknown = {
            doc_id
            for at in np.flatnonzero(~self.used)
            if (doc_id := self._read(int(self.offsets[at]))[0]) is not None
        }
        stream.summary.unknown_ids = sorted(unknown)
        if self.file is not None:
            self.file.close()


def _chain(first: _Line, rest: Iterator[_Line]) -> Iterator[_Line]:
    yield first
    yield from rest
