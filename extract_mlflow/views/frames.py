"""Pandas frames of a report: per field, per document, per document and field, and the
per-document counts (built in :mod:`extract_mlflow.evaluation.records`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..core.counts import ratio
from ..evaluation.compact import STATUSES, DocumentColumns
from ..evaluation.records import counts_frame
from ..fields.scorer import CATEGORIES

if TYPE_CHECKING:
    import pandas as pd

    from ..report import Report


def report_frame(report: Report, kind: str = "fields") -> pd.DataFrame:
    """A pandas DataFrame: one row per field (``"fields"``), per document
    (``"documents"``), per document and field (``"document_fields"``), or the per-document
    counts (``"counts"``)."""
    import pandas as pd

    if kind == "fields":
        rows = [
            {
                "field": p,
                "type": f.type,
                **f.counts.to_dict(),
                **{c: f.errors.get(c, 0) for c in CATEGORIES},
            }
            for p, f in report.fields.items()
        ]
        return pd.DataFrame(
            rows,
            columns=[
                "field",
                "type",
                "tp",
                "fp",
                "fn",
                "precision",
                "recall",
                "f1",
                *CATEGORIES,
            ],
        )
    if kind == "documents":
        return documents_frame(report)
    if kind == "counts":
        return counts_frame(report)
    if kind == "document_fields":
        spill = getattr(report.documents, "spill", None)
        if spill is not None:  # a compact evaluation: its spilled counts
            docs = report.documents
            return spill.long_frame(docs.positions, docs.ids)  # type: ignore[attr-defined,no-any-return]
        long = [
            {"id": d.id, "field": p, "tp": c[0], "fp": c[1], "fn": c[2]}
            for d in report.documents
            for p, c in d.fields.items()
        ]
        return pd.DataFrame(long, columns=["id", "field", "tp", "fp", "fn"])
    raise ValueError(
        f"unknown frame kind {kind!r}: use fields, documents, counts or document_fields"
    )


DOCUMENT_COLUMNS = ("id", "status", "tp", "fp", "fn", "precision", "recall", "f1", "reason")
"""the columns of the "documents" frame (the rows of ``DocumentResult.to_dict`` without a
page's layout)"""

_BLOCK_ROWS = 1 << 16


def documents_frame(report: Report, start: int = 0, stop: int | None = None) -> pd.DataFrame:
    """The "documents" frame of the documents ``start:stop`` (all by default)."""
    import pandas as pd

    docs = report.documents
    stop = len(docs) if stop is None else min(stop, len(docs))
    if isinstance(docs, DocumentColumns):
        return _columns_frame(docs, start, stop)
    rows = [d.to_dict() for d in docs[start:stop]]
    return pd.DataFrame(rows, columns=list(DOCUMENT_COLUMNS))


def documents_blocks(report: Report, rows: int = _BLOCK_ROWS) -> Iterator[pd.DataFrame]:
    """The "documents" frame in blocks of `rows` consecutive documents (one empty block for a
    report without documents): what is written a block at a time."""
    n = len(report.documents)
    for start in range(0, max(n, 1), rows):
        yield documents_frame(report, start, start + rows)


def _columns_frame(docs: DocumentColumns, start: int, stop: int) -> pd.DataFrame:
    """The "documents" frame of a compact evaluation's documents ``start:stop``, from its
    columns (no document rebuilt): the frame the rows of ``DocumentResult.to_dict`` give."""
    import pandas as pd

    tp, fp, fn = (docs.counts[start:stop, i].tolist() for i in range(3))
    data = {
        "id": docs.ids[start:stop],
        "status": [STATUSES[s] for s in docs.status[start:stop].tolist()],
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": [ratio(t, t + p) for t, p in zip(tp, fp, strict=True)],
        "recall": [ratio(t, t + n) for t, n in zip(tp, fn, strict=True)],
        "f1": [ratio(2 * t, 2 * t + p + n) for t, p, n in zip(tp, fp, fn, strict=True)],
        "reason": [docs.reasons.get(k) for k in range(start, stop)],
    }
    return pd.DataFrame(data, columns=list(DOCUMENT_COLUMNS))
