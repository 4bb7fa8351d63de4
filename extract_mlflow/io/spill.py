"""The per-document field counts of a streaming evaluation, spilled to a temporary file as they
are made, and read back as the counts frame (``documents.parquet``) in blocks of documents.

Each document's counts per path become fixed-size int32 entries ``(position, path, tp, fp,
fn)`` (the path as an index into the segment's path list), buffered and appended to a
temporary file, so memory holds one buffer whatever the number of documents. A spill is plain
data once flushed (file names and path lists: picklable), and spills merge by adopting the
other's segments. The files are removed when the spill that owns them is collected (merging
or pickling hands them over).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import weakref
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import pandas as pd

_WIDTH = 5
_BUFFER_ENTRIES = 1 << 15  # entries buffered in a list (8 bytes a value: ~1.3 MB)
_READ_ENTRIES = 1 << 18  # entries read at once (int32, then int64 and masks: ~20 MB)
_BLOCK_CELLS = 2_000_000
# A block's frame holds Python objects per row (its id, its status) and is copied into Arrow:
# a few hundred bytes a row, so rows are bounded too, not only cells (a narrow counts matrix,
# such as five paths of wiki pages, would otherwise make 133,000-row blocks).
_BLOCK_ROWS = 1 << 15


@dataclass
class _Segment:
    file: str
    paths: list[str] = field(default_factory=list)


def _remove(name: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(name)


class CountsSpill:
    """Per-document field counts on disk (see the module)."""

    def __init__(
        self, folder: str | Path | None = None, segments: list[_Segment] | None = None
    ) -> None:
        """`segments`: take these files over instead of starting one (the first one is
        appended to): how a pickled spill comes back."""
        if segments is None:
            fd, name = tempfile.mkstemp(prefix="extract_mlflow-counts-", suffix=".i32", dir=folder)
            os.close(fd)
            segments = [_Segment(name)]
        self.segments = segments
        self._own = segments[0]
        self._index = {path: i for i, path in enumerate(self._own.paths)}
        self._buffer: list[int] = []
        """entries not written yet"""
        # The files are removed when the spill is collected: their finalizers watch a set
        # that only the spill holds (a mypyc-compiled spill takes no weak reference itself).
        self._alive: set[str] = set()
        self._finalizers = [weakref.finalize(self._alive, _remove, s.file) for s in segments]

    def add(self, position: int, fields: dict[str, list[int]]) -> None:
        """One document's counts per path (every path of its record, zeros included)."""
        index, buffer = self._index, self._buffer
        for path, c in fields.items():
            i = index.get(path)
            if i is None:
                i = index[path] = len(self._own.paths)
                self._own.paths.append(path)
            buffer += (position, i, c[0], c[1], c[2])
        if len(buffer) >= _BUFFER_ENTRIES * _WIDTH:
            self.flush()

    def flush(self) -> None:
        if self._buffer:
            with open(self._own.file, "ab") as f:
                array("i", self._buffer).tofile(f)
            self._buffer = []

    def merge(self, other: CountsSpill) -> None:
        """Adopt `other`'s segments: their files now live as long as this spill."""
        other.flush()
        other._disown()
        self.segments.extend(other.segments)
        self._finalizers += [weakref.finalize(self._alive, _remove, s.file) for s in other.segments]

    def _disown(self) -> None:
        """Keep the files when this spill is collected (another spill owns them now)."""
        for finalizer in self._finalizers:
            finalizer.detach()
        self._finalizers = []

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickling hands the files over: the unpickled copy removes them (as a worker
        process returns its part), this one no longer does."""
        self.flush()
        self._disown()
        return CountsSpill, (None, self.segments)

    def portable(self) -> list[tuple[list[str], bytes]]:
        """The spill's entries as plain bytes (per segment: its paths and its file's bytes),
        to rebuild it in another process or on another machine (:meth:`from_portable`): a
        Spark executor's temporary files are not the driver's."""
        self.flush()
        return [(list(s.paths), Path(s.file).read_bytes()) for s in self.segments]

    @classmethod
    def from_portable(
        cls, parts: list[tuple[list[str], bytes]], folder: str | Path | None = None
    ) -> CountsSpill:
        """A spill holding `parts` (see :meth:`portable`), in this process's temporary files."""
        spill = cls(folder)
        for paths, data in parts:
            other = cls(folder)
            with open(other._own.file, "wb") as f:
                f.write(data)
            other._own.paths.extend(paths)
            spill.merge(other)
        return spill

    # -- reading back ----------------------------------------------------------------------
    def _entries(self, columns: dict[str, int]) -> Iterator[npt.NDArray[np.int64]]:
        """Every entry as (position, column, tp, fp, fn), the path as its index in `columns`."""
        self.flush()
        for segment in self.segments:
            remap = np.array([columns[p] for p in segment.paths] or [0], dtype=np.int64)
            with open(segment.file, "rb") as f:
                while True:
                    chunk = np.fromfile(f, dtype=np.int32, count=_READ_ENTRIES * _WIDTH)
                    if not chunk.size:
                        break
                    entries = chunk.reshape(-1, _WIDTH).astype(np.int64)
                    entries[:, 1] = remap[entries[:, 1]]
                    yield entries

    def blocks(
        self, positions: npt.NDArray[np.int64], paths: Sequence[str]
    ) -> Iterator[tuple[int, npt.NDArray[np.int64]]]:
        """(first row, counts matrix) for consecutive blocks of documents in the order of
        `positions` (sorted): the matrix has 3 columns per path of `paths` (tp, fp, fn)."""
        columns = {p: i for i, p in enumerate(paths)}
        n, width = len(positions), 3 * len(paths)
        rows = max(1, min(_BLOCK_ROWS, _BLOCK_CELLS // max(width, 1)))
        for start in range(0, n, rows):
            stop = min(n, start + rows)
            block = np.zeros((stop - start, width), dtype=np.int64)
            low, high = positions[start], positions[stop - 1]
            for entries in self._entries(columns):
                keep = entries[(entries[:, 0] >= low) & (entries[:, 0] <= high)]
                if not keep.size:
                    continue
                r = np.searchsorted(positions, keep[:, 0]) - start
                c = 3 * keep[:, 1]
                for k in range(3):
                    block[r, c + k] = keep[:, 2 + k]
            yield start, block

    def long_frame(self, positions: npt.NDArray[np.int64], ids: Sequence[str]) -> pd.DataFrame:
        """One row per document and path of its record: id, field, tp, fp, fn (documents in
        the order of `positions`, each document's paths in the order it recorded them)."""
        import pandas as pd

        names = sorted({p for s in self.segments for p in s.paths})
        columns = {p: i for i, p in enumerate(names)}
        parts = list(self._entries(columns))
        columns_ = ["id", "field", "tp", "fp", "fn"]
        if not any(len(p) for p in parts):
            return pd.DataFrame([], columns=columns_)
        entries = np.concatenate(parts)
        rows = np.searchsorted(positions, entries[:, 0])
        order = np.argsort(rows, kind="stable")
        entries, rows = entries[order], rows[order]
        return pd.DataFrame(
            {
                "id": [ids[r] for r in rows.tolist()],
                "field": [names[c] for c in entries[:, 1].tolist()],
                "tp": entries[:, 2],
                "fp": entries[:, 3],
                "fn": entries[:, 4],
            },
            columns=columns_,
        )
