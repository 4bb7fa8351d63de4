"""The records of a compact evaluation: what a streaming pass keeps per document.

A retaining :class:`~extract_mlflow.evaluation.accumulator.Evaluation` keeps every
:class:`~extract_mlflow.report.DocumentResult` (its counts per path and its mistakes: ~4 KB a
document). A compact one (given a :class:`RecordSink`) keeps, per document, a few numbers in
chunked columns (:mod:`~extract_mlflow.evaluation.chunks`: status code, tp/fp/fn and the id's
length in the narrowest type, the id's bytes; no position while documents come in gold order;
tokens and latency where a prediction records them: ~5 bytes plus the id), plus
the parse-failure reasons and the --slice-by attributes only where they exist or are
configured (the pages' results are columns of their own:
:class:`~extract_mlflow.evaluation.pages.PageRecords`). Each record's counts per path go to the
sink as they are made (a spill file the counts frame, ``documents.parquet``, is later read
from); its mistakes are folded into the field tallies and example reservoirs in batches, then
dropped.

Every report holds its documents as these columns: a retaining evaluation's records become
them when the report is made (:func:`document_table`, each record's counts per field and
mistakes kept beside them). So the report of a compact evaluation is the retaining one's,
number for number and in its JSON, with the same
:class:`~extract_mlflow.evaluation.columns.DocumentColumns` (a sequence that rebuilds each
document from the columns, with a page's layout only where it is kept:
:data:`~extract_mlflow.evaluation.pages.PAGES_LISTED`); only its items refuse to give their
``fields`` and ``errors`` (:class:`~extract_mlflow.errors.NotKeptError`). The per-document
field counts are read from the sink (``report_frame(report, "counts")``,
``report_frame(report, "document_fields")``); the per-document mistakes are not kept (what needs
them, the diff of two runs, scores with a retaining evaluation).

The state is plain data: picklable, and two parts merge by concatenating their columns.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from ..report import DocumentResult
from .chunks import Chunked, Runs
from .columns import STATUSES, DocumentColumns, IdColumn, Sparse

if TYPE_CHECKING:
    from ..fields.scorer import ErrorRecord
    from ..pages import PageSummary

__all__ = [
    "STATUSES",
    "CompactRecords",
    "DocumentColumns",
    "IdColumn",
    "RecordSink",
    "document_table",
]


class RecordSink(Protocol):
    """Where a compact evaluation hands each document's counts per path (in the order the
    documents are scored; `position` tells their gold order)."""

    def add(self, position: int, fields: dict[str, list[int]]) -> None: ...

    def merge(self, other: Any) -> None: ...


_BLOB_BYTES = 1 << 18
"""bytes of ids per chunk"""


@dataclass
class CompactRecords:
    """Per-document numbers in chunked columns, in the order they were added (see the module):
    a status byte, tp/fp/fn and the id's length in the narrowest type that holds them, and the
    id's bytes; no position while the documents come in gold order."""

    slices: bool = False
    """keep each document's --slice-by attributes"""
    runs: Runs = field(default_factory=Runs)
    status: Chunked = field(default_factory=Chunked)
    counts: Chunked = field(default_factory=lambda: Chunked(width=3))
    token_at: array[int] = field(default_factory=lambda: array("q"))
    """positions of the documents whose prediction records tokens (few or all), and theirs"""
    tokens: array[float] = field(default_factory=lambda: array("d"))
    latency_at: array[int] = field(default_factory=lambda: array("q"))
    latency: array[float] = field(default_factory=lambda: array("d"))
    id_lengths: Chunked = field(default_factory=Chunked)
    id_blobs: list[bytes | bytearray] = field(default_factory=list)
    """the ids' UTF-8 bytes, in chunks (the last one, a bytearray, is being filled)"""
    reasons: dict[int, str] = field(default_factory=dict)
    attributes: dict[int, dict[str, Any]] = field(default_factory=dict)

    def add(self, record: DocumentResult) -> None:
        position = record.position
        self.runs.add(position)
        self.status.append((STATUSES.index(record.status),))
        c = record.counts
        self.counts.append((c.tp, c.fp, c.fn))
        if record.tokens is not None:
            self.token_at.append(position)
            self.tokens.append(record.tokens)
        if record.latency_ms is not None:
            self.latency_at.append(position)
            self.latency.append(record.latency_ms)
        encoded = record.id.encode("utf-8")
        tail = self.id_blobs[-1] if self.id_blobs else None
        if not isinstance(tail, bytearray) or len(tail) >= _BLOB_BYTES:
            tail = bytearray()
            self.id_blobs.append(tail)
        tail += encoded
        self.id_lengths.append((len(encoded),))
        if record.reason is not None:
            self.reasons[position] = record.reason
        if self.slices:
            self.attributes[position] = record.attributes

    def overlap(self, other: CompactRecords) -> list[int]:
        return self.runs.overlap(other.runs)

    def merge(self, other: CompactRecords) -> None:
        self.runs.extend(other.runs)
        for name in ("status", "counts", "id_lengths"):
            getattr(self, name).extend(getattr(other, name))
        for name in ("token_at", "tokens", "latency_at", "latency"):
            getattr(self, name).extend(getattr(other, name))
        self.id_blobs.extend(bytes(b) for b in other.id_blobs)
        self.reasons.update(other.reasons)
        self.attributes.update(other.attributes)

    def _frozen_ids(self) -> list[bytes | bytearray]:
        """The ids' buffers, shared, not copied: only the last one is ever appended to, so it
        becomes bytes (a later id starts a new buffer)."""
        if self.id_blobs and isinstance(self.id_blobs[-1], bytearray):
            self.id_blobs[-1] = bytes(self.id_blobs[-1])
        return list(self.id_blobs)

    def columns(
        self,
        spill: Any,
        pages: PageSummary | None = None,
        kept: tuple[list[dict[str, list[int]]], list[list[ErrorRecord]]] | None = None,
    ) -> DocumentColumns:
        """The documents in gold order (by position), with the results of their `pages` (and
        each one's `kept` field counts and mistakes, in that order). Added in that order (one
        streaming pass), the columns are the records' own arrays (each column's chunks joined
        once, the ids' buffers as they are), not copies."""
        status, counts = self.status.joined(), self.counts.joined()
        lengths, blobs = self.id_lengths.joined(), self._frozen_ids()
        positions = self.runs.positions()
        if not isinstance(positions, range) and not self.runs.in_order():
            order = np.argsort(positions, kind="stable")
            positions, status, counts = positions[order], status[order], counts[order]
            ends = np.cumsum(lengths, dtype=np.int64)
            starts = ends - lengths
            whole = b"".join(blobs)
            blobs = [b"".join([whole[starts[k] : ends[k]] for k in order.tolist()])]
            lengths = lengths[order]
        ends_type = np.uint32 if sum(map(len, blobs)) <= 0xFFFF_FFFF else np.uint64
        ends = np.cumsum(lengths, dtype=ends_type)

        def rows(at: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
            if isinstance(positions, range):
                return at - positions.start
            return np.searchsorted(positions, at)

        def sparse(at: array[int], values: array[float]) -> Sparse:
            found = rows(np.array(at, dtype=np.int64))
            order = np.argsort(found, kind="stable")
            return found[order], np.array(values, dtype=np.float64)[order]

        def row(position: int) -> int:
            return int(rows(np.array([position], dtype=np.int64))[0])

        return DocumentColumns(
            IdColumn(blobs, ends),
            status,
            counts,
            positions,
            sparse(self.token_at, self.tokens),
            sparse(self.latency_at, self.latency),
            {row(p): r for p, r in self.reasons.items()},
            pages,
            [self.attributes[int(p)] for p in positions] if self.slices else None,
            spill,
            kept,
        )


def document_table(
    records: Sequence[DocumentResult], pages: PageSummary | None = None
) -> DocumentColumns:
    """The records of a retaining evaluation (in gold order) as the report's document table:
    the columns a compact evaluation keeps, with every record's counts per field and its
    mistakes kept beside them."""
    compact = CompactRecords(slices=True)
    for record in records:
        compact.add(record)
    kept = ([r.fields for r in records], [r.errors for r in records])
    return compact.columns(None, pages, kept)
