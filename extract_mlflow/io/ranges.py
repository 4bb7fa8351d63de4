"""JSONL files cut into newline-aligned byte ranges, each read on its own with the line codec
of :mod:`~extract_mlflow.io.lines` (what worker processes read, as Spark's tasks read their
partitions).

:class:`Cutter` reads a file once, in blocks, hashes every byte in order (the file's digest)
and cuts it after a line end once a range holds `size` bytes; it counts the lines before each
range (the line numbers of messages) and the documents (non-blank lines: the position of the
range's first document). A range that holds a line of more than half the line limit, or a
line that does not end, runs to the end of the file: there the line codec's own rules for
over-long and endless lines decide, and no range after it needs a position.

:func:`read_range` gives the lines of one range as :func:`~extract_mlflow.io.lines.
iter_raw_lines` gives them reading the file from its start (same numbers, same offsets, same
errors); :func:`index_range` files a range of the prediction file by the hash of each line's
id, as :class:`~extract_mlflow.io.stream.JoinedStream` indexes it.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from .lines import MAX_LINE_BYTES, UTF8_BOM, Oversized, iter_raw_lines, open_jsonl, read_prediction
from .loading import KEPT_LINES, _sha256
from .stream import id_hash

_BLOCK = 1 << 20
"""bytes read from a file at a time"""
LONG_LINE = MAX_LINE_BYTES // 2
"""a line longer than this ends the cutting: the rest of the file is one range"""


@dataclass(frozen=True, slots=True)
class Range:
    """The lines of `path` that start in bytes [`start`, `end`) (`end` None: to the file's
    end); `lineno` lines and `position` documents come before them."""

    path: str
    start: int
    end: int | None
    lineno: int
    position: int


class _NoHash:
    """A hasher that hashes nothing (a range's reader: the cutter hashes the file)."""

    def update(self, _: bytes) -> None:
        pass


def read_range(r: Range) -> Iterator[tuple[int, int, bytes | Oversized]]:
    """(line number, byte offset, raw line) of the non-blank lines of range `r`."""
    return iter_raw_lines(Path(r.path), _NoHash(), r.start, r.lineno, r.end)


def _documents(chunk: bytearray, first: bool) -> int | None:
    """The non-blank lines of `chunk` (whole lines), as :class:`~extract_mlflow.io.lines.
    RawLines` counts them; None when one is too long to tell (see :data:`LONG_LINE`)."""
    lines = chunk.split(b"\n")
    if first:
        lines[0] = lines[0].removeprefix(UTF8_BOM)
    if max(map(len, lines)) > LONG_LINE:
        return None
    return sum(1 for line in lines if line.strip())


class Cutter:
    """The ranges of `path`, of at least `size` bytes each (:meth:`__iter__`; an InputError
    when the file cannot be opened), and the digest of the whole file (:meth:`digest`, once
    every range is cut: it reads on to the end of the file if the cutting stopped early)."""

    def __init__(self, path: str | Path, size: int) -> None:
        self.path, self.size = Path(path), max(1, size)
        self.hasher = _sha256()
        self.hashed = 0
        self.done = False

    def __iter__(self) -> Iterator[Range]:
        path, size, start, lineno, position = str(self.path), self.size, 0, 0, 0
        pending = bytearray()
        with open_jsonl(self.path) as f:
            while True:
                block = f.read(_BLOCK)
                self.hasher.update(block)
                self.hashed += len(block)
                pending += block
                while len(pending) >= size or (pending and not block):
                    nl = pending.find(b"\n", min(size, len(pending)) - 1)
                    if nl < 0 and block:
                        break  # the line goes on in the next block
                    cut = nl + 1 if nl >= 0 else len(pending)
                    docs = _documents(pending[:cut], start == 0)
                    if docs is None:
                        yield Range(path, start, None, lineno, position)
                        return
                    yield Range(path, start, start + cut, lineno, position)
                    lineno += pending.count(b"\n", 0, cut)
                    start, position = start + cut, position + docs
                    del pending[:cut]
                if not block:
                    self.done = True
                    return
                if len(pending) > LONG_LINE:
                    break
        yield Range(path, start, None, lineno, position)

    def digest(self) -> str:
        """The SHA-256 of the file (its bytes after the ones hashed while cutting read on)."""
        if not self.done:
            with open_jsonl(self.path) as f:
                f.seek(self.hashed)
                while block := f.read(_BLOCK):
                    self.hasher.update(block)
            self.done = True
        return str(self.hasher.hexdigest())


@dataclass
class IndexPart:
    """A range of the prediction file filed by id hash (:func:`index_range`)."""

    hashes: array[int] = field(default_factory=lambda: array("Q"))
    offsets: array[int] = field(default_factory=lambda: array("q"))
    linenos: array[int] = field(default_factory=lambda: array("q"))
    lines: int = 0
    """non-blank lines read"""
    unattributed: list[str] = field(default_factory=list)
    """the first :data:`~extract_mlflow.io.loading.KEPT_LINES` lines without an id"""
    unattributed_count: int = 0
    error: InputError | None = None
    """a defect of the file itself, met in the range (the lines before it are filed)"""


def index_range(r: Range, id_key: str) -> IndexPart:
    """The lines of range `r` of a prediction file by the hash of each one's id."""
    part = IndexPart()
    try:
        for lineno, offset, raw in read_range(r):
            part.lines += 1
            doc_id, _, problem = read_prediction(raw, id_key)
            if doc_id is None:
                part.unattributed_count += 1
                if len(part.unattributed) < KEPT_LINES:
                    part.unattributed.append(f"line {lineno}: {problem}")
                continue
            part.hashes.append(id_hash(doc_id))
            part.offsets.append(offset)
            part.linenos.append(lineno)
    except InputError as exc:
        part.error = exc
    return part


FileIdentity = tuple[int, int, int, int]
"""device, inode, size and modification time (ns) of a file"""


def file_identity(path: Path) -> FileIdentity | None:
    """What tells a file changed or was replaced (None when it cannot be read)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
