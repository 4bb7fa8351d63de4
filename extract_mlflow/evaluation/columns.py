"""The documents of an evaluation as its report reads them, whatever the source:
:class:`DocumentColumns` (the report's :class:`~extract_mlflow.report.DocumentTable`), a
sequence that rebuilds each :class:`~extract_mlflow.report.DocumentResult` from the columns
:class:`~extract_mlflow.evaluation.compact.CompactRecords` kept, and :class:`IdColumn`, the ids
packed in UTF-8 buffers. A retaining evaluation's documents keep their counts per field and
their mistakes beside the columns; a compact one's give their counts per field from its spill
only, and their ``fields`` and ``errors`` refuse to be read
(:class:`~extract_mlflow.errors.NotKeptError`).

Plain Python, beside the compiled records: mypyc cannot compile a subclass of dict or list.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, overload

import numpy as np
import numpy.typing as npt

from ..core.counts import Counts
from ..errors import NotKeptError
from ..fields.scorer import ErrorRecord
from ..report import DocumentResult

if TYPE_CHECKING:
    import pandas as pd

    from ..pages import PageSummary

__all__ = ["STATUSES", "DocumentColumns", "IdColumn", "Sparse"]


STATUSES = ("scored", "missing", "parse_failure")
"""a document's status, by its code in :class:`DocumentColumns`"""


class _FieldsNotKept(dict[str, list[int]]):
    """`DocumentResult.fields` of a compact evaluation: every read refuses clearly (the
    per-document field counts are in the counts frame, ``report_frame(report, "counts")``)."""

    def _refuse(self, *_: Any, **__: Any) -> Any:
        raise NotKeptError(
            "per-document field counts are not kept by a streaming evaluation: read them from "
            "report_frame(report, 'counts') (documents.parquet)"
        )

    __getitem__ = __iter__ = __len__ = __contains__ = _refuse
    get = items = keys = values = _refuse


class _ErrorsNotKept(list[ErrorRecord]):
    """`DocumentResult.errors` of a compact evaluation: every read refuses clearly."""

    def _refuse(self, *_: Any, **__: Any) -> Any:
        raise NotKeptError(
            "per-document mistakes are not kept by a streaming evaluation: score the files "
            "with evaluate(..., stream=False) to keep them"
        )

    __getitem__ = __iter__ = __len__ = __bool__ = __contains__ = _refuse


FIELDS_NOT_KEPT: dict[str, list[int]] = _FieldsNotKept()
ERRORS_NOT_KEPT: list[ErrorRecord] = _ErrorsNotKept()


Sparse = tuple["npt.NDArray[np.int64]", "npt.NDArray[np.float64]"]


def _at(sparse: Sparse, k: int) -> float | None:
    rows, values = sparse
    i = int(np.searchsorted(rows, k))
    return float(values[i]) if i < len(rows) and rows[i] == k else None


class IdColumn(Sequence[str]):
    """Document ids packed in UTF-8 buffers, one after the other (an id is decoded on access;
    no id spans two buffers): `ends[k]` is where id `k` ends, counted over all the buffers."""

    def __init__(
        self, blobs: Sequence[bytes | bytearray], ends: npt.NDArray[np.integer[Any]]
    ) -> None:
        self.blobs, self.ends = list(blobs), ends
        self.starts = [0]
        """where each buffer starts"""
        for blob in self.blobs[:-1]:
            self.starts.append(self.starts[-1] + len(blob))

    def __len__(self) -> int:
        return len(self.ends)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        n = len(self)
        if not -n <= i < n:
            raise IndexError("id index out of range")
        k = i % n
        start = int(self.ends[k - 1]) if k else 0
        b = bisect_right(self.starts, start) - 1
        offset = self.starts[b]
        return str(self.blobs[b][start - offset : int(self.ends[k]) - offset], "utf-8")


class DocumentColumns(Sequence[DocumentResult]):
    """The documents of an evaluation, in gold order, as columns (about ten bytes per document
    besides its id): item ``i`` is rebuilt on access as a :class:`DocumentResult`. The
    per-document field counts live in :attr:`spill` (a compact evaluation's) or in
    :attr:`kept_fields` (a retaining one's, with :attr:`kept_errors`); where they are not kept,
    ``fields`` and ``errors`` refuse to be read (:class:`NotKeptError`)."""

    def __init__(
        self,
        ids: Sequence[str],
        status: npt.NDArray[np.unsignedinteger[Any]],
        counts: npt.NDArray[np.unsignedinteger[Any]],
        positions: npt.NDArray[np.int64] | range,
        tokens: Sparse,
        latency: Sparse,
        reasons: dict[int, str],
        pages: PageSummary | None,
        attributes: list[dict[str, Any]] | None,
        spill: Any = None,
        kept: tuple[list[dict[str, list[int]]], list[list[ErrorRecord]]] | None = None,
    ) -> None:
        self.ids, self.status, self.counts, self._positions = ids, status, counts, positions
        self.tokens, self.latency = tokens, latency
        """(rows, values): the documents whose prediction records them, and the values"""
        self.reasons, self.pages, self.attributes = reasons, pages, attributes
        """the pages' results (rows and layout score of every page, the layout of a few)"""
        self.spill = spill
        """the per-document field counts of a compact evaluation (spilled), or None"""
        self.kept_fields: list[dict[str, list[int]]] | None = None
        self.kept_errors: list[list[ErrorRecord]] | None = None
        if kept is not None:
            self.kept_fields, self.kept_errors = kept
        """each document's counts per field and its mistakes (a retaining evaluation's), or
        None"""

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def positions(self) -> npt.NDArray[np.int64]:
        """The documents' positions (their gold lines), sorted."""
        p = self._positions
        return np.arange(p.start, p.stop, dtype=np.int64) if isinstance(p, range) else p

    @overload
    def __getitem__(self, i: int) -> DocumentResult: ...
    @overload
    def __getitem__(self, i: slice) -> list[DocumentResult]: ...
    def __getitem__(self, i: int | slice) -> DocumentResult | list[DocumentResult]:
        if isinstance(i, slice):
            return [self._item(k) for k in range(*i.indices(len(self)))]
        n = len(self)
        if not -n <= i < n:
            raise IndexError("document index out of range")
        return self._item(i % n)

    def __iter__(self) -> Iterator[DocumentResult]:
        return (self._item(k) for k in range(len(self)))

    def __eq__(self, other: object) -> bool:
        """The same documents in the same order (what each one keeps included)."""
        return isinstance(other, Sequence) and list(self) == list(other)

    def _item(self, k: int) -> DocumentResult:
        tp, fp, fn = self.counts[k].tolist()
        tokens, latency = _at(self.tokens, k), _at(self.latency, k)
        pages, position = self.pages, int(self._positions[k])
        layout, rows_gold, rows_pred = (None, None, None) if pages is None else pages.of(position)
        fields, errors = self.kept_fields, self.kept_errors
        return DocumentResult(
            self.ids[k],
            STATUSES[self.status[k]],
            Counts(tp, fp, fn),
            fields[k] if fields is not None else FIELDS_NOT_KEPT,
            errors[k] if errors is not None else ERRORS_NOT_KEPT,
            self.reasons.get(k),
            layout,
            rows_gold,
            rows_pred,
            tokens,
            latency,
            self.attributes[k] if self.attributes is not None else {},
            position,
        )

    # -- what the report reads, without rebuilding every document --------------------------
    def count_matrix(self) -> npt.NDArray[np.unsignedinteger[Any]]:
        """(documents × 3) tp, fp, fn in gold order, as kept (unsigned integers, read-only)."""
        return self.counts

    def statuses(self, start: int = 0, stop: int | None = None) -> list[str]:
        """The status of the documents in rows [`start`, `stop`)."""
        return [STATUSES[s] for s in self.status[start:stop].tolist()]

    def reason_at(self, k: int) -> str | None:
        return self.reasons.get(k)

    def field_blocks(self, paths: Sequence[str]) -> Iterator[tuple[int, npt.NDArray[np.int64]]]:
        """(first row, counts) for consecutive blocks of documents: 3 columns per path of
        `paths` (tp, fp, fn), from the spill or the kept field counts."""
        if self.spill is not None:
            yield from self.spill.blocks(self.positions, paths)
            return
        kept = self._kept_fields()
        column = {p: 3 * i for i, p in enumerate(paths)}
        block = np.zeros((len(self), 3 * len(paths)), dtype=np.int64)
        for row, fields in enumerate(kept):
            for p, c in fields.items():
                block[row, column[p] : column[p] + 3] = c
        yield 0, block

    def field_frame(self) -> pd.DataFrame:
        """One row per document and path of its record: id, field, tp, fp, fn."""
        if self.spill is not None:
            return self.spill.long_frame(self.positions, self.ids)  # type: ignore[no-any-return]
        import pandas as pd

        long = [
            (self.ids[row], p, c[0], c[1], c[2])
            for row, fields in enumerate(self._kept_fields())
            for p, c in fields.items()
        ]
        return pd.DataFrame(long, columns=["id", "field", "tp", "fp", "fn"])

    def _kept_fields(self) -> list[dict[str, list[int]]]:
        if self.kept_fields is None:
            raise NotKeptError("this report keeps no per-document field counts")
        return self.kept_fields

    def ids_with(self, status: str) -> list[str]:
        return [self.ids[int(k)] for k in np.flatnonzero(self.status == STATUSES.index(status))]

    def count_with(self, status: str) -> int:
        return int(np.count_nonzero(self.status == STATUSES.index(status)))

    def latencies(self) -> list[float]:
        return [float(v) for v in self.latency[1]]

    def token_values(self) -> list[float]:
        """The recorded tokens in gold order."""
        return [float(v) for v in self.tokens[1]]

    def with_layout(self) -> list[DocumentResult]:
        """The listed documents with a layout (:attr:`PageSummary.listed`), in gold order."""
        if self.pages is None:
            return []
        listed = np.asarray(self.pages.listed, dtype=np.int64)
        p = self._positions
        rows = listed - p.start if isinstance(p, range) else np.searchsorted(p, listed)
        return [self._item(k) for k in rows.tolist()]

    def worst(self, n: int) -> list[DocumentResult]:
        """The `n` documents with the most errors (FP + FN, > 0), ties by id. The error counts
        take one type wider than the counts (2 bytes a document for byte counts)."""
        if n <= 0 or not len(self):
            return []
        wider = np.dtype(f"u{min(8, 2 * self.counts.dtype.itemsize)}")
        errors = np.add(self.counts[:, 1], self.counts[:, 2], dtype=wider)
        floor = 1
        if np.count_nonzero(errors) > n:  # the n-th largest error count bounds the candidates
            floor = int(np.partition(errors, len(errors) - n)[len(errors) - n])
        candidates = np.flatnonzero(errors >= floor).tolist()
        ids = self.ids
        ranked = heapq.nsmallest(n, candidates, key=lambda k: (-int(errors[k]), ids[k]))
        return [self._item(k) for k in ranked]
