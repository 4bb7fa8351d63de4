"""The lockstep join in two halves, for parsing in other processes: one reader of raw line
pairs (gold line *i*, prediction line *i*) in batches, and the join of one batch wherever it
is parsed.

:class:`RawPairs` only reads blocks, hashes them and finds where lines end: it never parses
nor even cuts a line out, so it keeps up with several processes that do (a batch that is not
plain lines, say one holding a blank line, ends its work: the stream takes over there).
:func:`join_in_step` parses a batch, one document at a time, with the rules of
:class:`~extract_mlflow.io.stream.JoinedStream` (:func:`~extract_mlflow.io.lines.read_gold`,
:func:`~extract_mlflow.io.stream.in_step`) and gives its documents, or None when any pair of
the batch is not a clean lockstep pair (a gold line with a defect, a prediction line of
another id). Such a batch, and everything after it, is the stream's: a
:class:`~extract_mlflow.io.stream.JoinedStream` resumed at the batch's start
(:attr:`RawBatch.start`) reads it again and joins, checks and reports exactly as one pass
from the start would (it indexes the prediction file, or raises the gold file's error after
its earlier checks). Speculating costs at most the batches in flight behind it (scored by
the workers, then dropped).
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Generator, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import IO, Any

from ..errors import InputError
from .lines import MAX_LINE_BYTES, UTF8_BOM, UTF16_BOMS, Oversized, open_jsonl, read_gold
from .loading import _sha256
from .stream import Joined, Resume, in_step

RawPair = tuple[int, "bytes | Oversized", int, "bytes | Oversized"]
"""(gold line number, gold line, prediction line number, prediction line)"""

_BLOCK = 1 << 20
"""bytes read from a file at a time"""
_BLANK_HEAD = frozenset(b" \t\r\n\x0b\x0c")
"""bytes a line may start with when it is blank (what ``bytes.strip`` removes)"""


@dataclass(frozen=True, slots=True)
class RawRun:
    """Consecutive lines of both files as read, none blank (what a worker gets: no hashers)."""

    position: int
    """the index of the first gold line's document"""
    gold_line: int
    """the line number before the first gold line"""
    gold: bytes
    gold_starts: array[int]
    """where each gold line starts in `gold`"""
    pred_line: int
    pred: bytes
    pred_starts: array[int]

    def __reduce__(self) -> tuple[type[RawRun], tuple[Any, ...]]:
        """Pickled as the arguments that make it (a worker's task): pickle's default, making
        the object and then setting its fields, fails on a compiled frozen dataclass."""
        return RawRun, tuple(getattr(self, f.name) for f in fields(self))

    def pairs(self) -> list[RawPair]:
        """(gold line number, gold line, prediction line number, prediction line) of each pair:
        the lines of a run are consecutive in both files."""
        g, p = _lines(self.gold, self.gold_starts), _lines(self.pred, self.pred_starts)
        gl, pl = self.gold_line + 1, self.pred_line + 1
        return [(gl + k, g[k], pl + k, p[k]) for k in range(len(g))]


def _lines(data: bytes, starts: array[int]) -> list[bytes]:
    ends = [*starts[1:], len(data)]
    return [data[a:b] for a, b in zip(starts, ends, strict=True)]


@dataclass(frozen=True, slots=True)
class RawBatch:
    """A run of lines and where it starts in both files."""

    start: Resume
    run: RawRun


@dataclass(frozen=True, slots=True)
class RawSpan:
    """A :class:`RawRun` by where its lines lie in both files (what a worker gets): the worker
    reads the bytes itself (:meth:`read`), so they are not pickled and piped to it. The
    reader checks the files did not change while the workers read them
    (:func:`file_identity`)."""

    position: int
    gold_line: int
    gold_path: str
    gold_at: int
    """the byte offset of the first gold line"""
    gold_size: int
    gold_starts: array[int]
    pred_line: int
    pred_path: str
    pred_at: int
    pred_size: int
    pred_starts: array[int]

    def __reduce__(self) -> tuple[type[RawSpan], tuple[Any, ...]]:
        """Pickled as the arguments that make it (as :class:`RawRun`)."""
        return RawSpan, tuple(getattr(self, f.name) for f in fields(self))

    @classmethod
    def of(cls, batch: RawBatch, gold: Path, pred: Path) -> RawSpan:
        run, start = batch.run, batch.start
        return cls(
            run.position,
            run.gold_line,
            str(gold),
            start.gold_end,
            len(run.gold),
            run.gold_starts,
            run.pred_line,
            str(pred),
            start.pred_end,
            len(run.pred),
            run.pred_starts,
        )

    def read(self) -> RawRun:
        """The run, its bytes read from both files; an InputError if they are no longer there
        (a file cut short since it was cut into runs)."""
        gold = _read_at(self.gold_path, self.gold_at, self.gold_size)
        pred = _read_at(self.pred_path, self.pred_at, self.pred_size)
        return RawRun(
            self.position,
            self.gold_line,
            gold,
            self.gold_starts,
            self.pred_line,
            pred,
            self.pred_starts,
        )


def _read_at(path: str, at: int, size: int) -> bytes:
    parts: list[bytes] = []
    got = 0
    try:
        with open(path, "rb") as f:
            while got < size and (part := os.pread(f.fileno(), size - got, at + got)):
                parts.append(part)
                got += len(part)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    if got < size:
        raise InputError(f"{path}: changed while it was being scored (it is shorter now)")
    return parts[0] if len(parts) == 1 else b"".join(parts)


FileIdentity = tuple[int, int, int, int]
"""device, inode, size and modification time (ns) of a file"""


def file_identity(path: Path) -> FileIdentity | None:
    """What tells a file changed or was replaced (None when it cannot be read)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


class _Cuts:
    """A file read in blocks and cut into runs of whole lines, every byte hashed once, in
    order, as it is cut. A run holds only lines that cannot be blank: a line that starts with
    a byte ``bytes.strip`` removes or runs over :data:`MAX_LINE_BYTES`, a UTF-16 file or one
    that cannot be read stops the cutting (the stream reads on from there and says what it
    finds). Where the runs cut so far end: `end` (byte offset), `lineno` (line number)."""

    def __init__(self, path: Path, hasher: Any) -> None:
        self.path, self.hasher = path, hasher
        self.end = self.lineno = 0
        self.f: IO[bytes] | None = None
        self.buf = b""

    def close(self) -> None:
        if self.f is not None:
            self.f.close()

    def open(self) -> bool:
        """Open the file and step over a UTF-8 byte order mark; False when it cannot be cut."""
        try:
            self.f = open_jsonl(self.path)
        except InputError:
            return False
        while len(self.buf) < len(UTF8_BOM) and (more := self.f.read(_BLOCK)):
            self.buf += more  # enough bytes to tell a byte order mark
        if self.buf.startswith(UTF16_BOMS):
            return False
        if self.buf.startswith(UTF8_BOM):
            self.hasher.update(UTF8_BOM)
            self.buf, self.end = self.buf[len(UTF8_BOM) :], len(UTF8_BOM)
        return True

    def cut(self, n: int) -> tuple[bytes, array[int]] | None:
        """The next `n` lines (fewer at the file's end) and where each starts in them; None
        when they cannot be cut (see the class)."""
        assert self.f is not None, "open() first"
        read, buf, pos, starts = self.f.read, self.buf, 0, array("Q")
        while len(starts) < n:
            if pos == len(buf):
                more = read(_BLOCK)
                if not more:
                    break  # the file's end
                buf += more
            if buf[pos] in _BLANK_HEAD:
                return None
            nl = buf.find(b"\n", pos)
            while nl < 0:  # the line goes on past the bytes read (or is the file's last)
                if len(buf) - pos > MAX_LINE_BYTES:
                    return None
                searched = len(buf)
                more = read(_BLOCK)
                if not more:
                    nl = len(buf)  # the file's last line, without a line end
                    break
                buf += more
                nl = buf.find(b"\n", searched)
            if nl - pos > MAX_LINE_BYTES:
                return None
            starts.append(pos)
            pos = min(nl + 1, len(buf))
        run, self.buf = buf[:pos], buf[pos:]
        self.hasher.update(run)
        self.end += len(run)
        self.lineno += len(starts)
        return run, starts


class RawPairs:
    """Batches of `size` raw (gold line, prediction line) pairs from the start of both files.

    Reading ends at the gold file's end, the prediction file's end or where either file
    cannot be cut into plain lines (:class:`_Cuts`: a blank line, a line over the limit, a
    UTF-16 or unreadable file; the lines of an unfinished batch are not given); `rest` then
    says where to resume: after the last batch when the gold file ended, else at the start of
    the unfinished batch. This process only reads, hashes and finds line ends, block by
    block; the lines are cut apart in the process that parses them (:meth:`RawBatch.pairs`).
    """

    def __init__(self, gold: str | Path, pred: str | Path, size: int) -> None:
        self.gold, self.pred, self.size = Path(gold), Path(pred), max(1, size)
        self.rest: Resume | None = None

    def __iter__(self) -> Generator[RawBatch, None, None]:
        g, p = _Cuts(self.gold, _sha256()), _Cuts(self.pred, _sha256())

        def here(position: int) -> Resume:
            return Resume(
                position, g.end, g.lineno, g.hasher.copy(), p.end, p.lineno, p.hasher.copy()
            )

        position = 0
        try:
            if not (g.open() and p.open()):
                self.rest = here(position)
                return
            while True:
                start = here(position)
                golds = g.cut(self.size)
                if golds is None:
                    self.rest = start
                    return
                n = len(golds[1])
                if n == 0:  # the gold file's end
                    self.rest = start
                    return
                preds = p.cut(n)
                if preds is None or len(preds[1]) < n:
                    self.rest = start
                    return
                run = RawRun(position, start.gold_line, *golds, start.pred_line, *preds)
                yield RawBatch(start, run)
                position += n
                if n < self.size:  # the gold file ended in this batch
                    self.rest = here(position)
                    return
        finally:
            g.close()
            p.close()


def join_in_step(pairs: list[RawPair], position: int, id_key: str) -> Iterator[Joined | None]:
    """The documents of a batch whose first pair is gold document `position`, joined one at a
    time as :class:`~extract_mlflow.io.stream.JoinedStream` joins pairs in lockstep; at the
    first pair that is not one, a None and nothing more (the stream must take over at the
    batch's start, and whatever was made of the documents before is dropped). One document
    at a time: each is scored and let go while its bytes are still in the cache."""
    for k, (_, gold_raw, pred_line, pred_raw) in enumerate(pairs):
        doc_id, doc, _ = read_gold(gold_raw, id_key)
        if doc_id is None or doc is None:
            yield None
            return
        found = in_step((pred_line, 0, pred_raw), doc_id, id_key)
        if found is None:
            yield None
            return
        yield Joined(position + k, doc_id, doc, *found)
