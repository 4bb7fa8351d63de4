"""Pandas frames of a report: per field, per document, per document and field, and the
per-document counts (built in :mod:`extract_mlflow.evaluation.records`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..core.counts import ratio
from ..evaluation.records import counts_frame
from ..fields.scorer import CATEGORIES

if TYPE_CHECKING:
    import numpy.typing as npt
    import pandas as pd

    from ..report import DocumentTable, Report


DOCUMENT_COLUMNS = ["id", "status", "tp", "fp", "fn", "precision", "recall", "f1", "reason"]


TABLE_ROWS = 10_000
"""Documents in the MLflow table of a run (``log_table``): every document of a set up to this
size; beyond it, the half with the lowest F1 and a seeded sample of the rest (:func:`table_rows`).
The table is what MLflow's UI shows in the browser; ``documents.parquet`` keeps every document."""


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
        return _documents_frame(report.documents)
    if kind == "counts":
        return counts_frame(report)
    if kind == "document_fields":
        return report.documents.field_frame()
    raise ValueError(
        f"unknown frame kind {kind!r}: use fields, documents, counts or document_fields"
    )


def _documents_frame(docs: DocumentTable) -> pd.DataFrame:
    """The "documents" frame, from the columns (no document rebuilt): the frame the rows of
    ``DocumentResult.to_dict`` give."""
    import pandas as pd

    counts = docs.count_matrix()
    tp, fp, fn = (counts[:, i].tolist() for i in range(3))
    data = {
        "id": list(docs.ids),
        "status": docs.statuses(),
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": [ratio(t, t + p) for t, p in zip(tp, fp, strict=True)],
        "recall": [ratio(t, t + n) for t, n in zip(tp, fn, strict=True)],
        "f1": [ratio(2 * t, 2 * t + p + n) for t, p, n in zip(tp, fp, fn, strict=True)],
        "reason": [docs.reason_at(k) for k in range(len(docs))],
    }
    return pd.DataFrame(data)


def table_rows(counts: npt.ArrayLike, limit: int | None = None) -> npt.NDArray[np.int64]:
    """The rows (document indices, sorted) of a documents table bounded to `limit` rows, for
    documents with (documents × 3) tp, fp, fn `counts`: all of them when they fit; else the
    ``limit // 2`` with the lowest F1 (ties: the earlier document; a document with neither gold
    nor predicted values has no F1 and comes last) and a sample of the others drawn with a fixed
    seed (0), so the same report always gives the same table."""
    m = np.asarray(counts, dtype=np.float64).reshape(-1, 3)
    n, limit = len(m), TABLE_ROWS if limit is None else limit
    if n <= limit:
        return np.arange(n, dtype=np.int64)
    den = 2 * m[:, 0] + m[:, 1] + m[:, 2]
    f1 = np.divide(2 * m[:, 0], den, out=np.full(n, np.inf), where=den > 0)
    worst = np.argsort(f1, kind="stable")[: limit // 2]
    rest = np.setdiff1d(np.arange(n, dtype=np.int64), worst, assume_unique=True)
    sample = np.random.default_rng(0).choice(rest, size=limit - len(worst), replace=False)
    return np.sort(np.concatenate([worst, sample])).astype(np.int64)


def documents_table(report: Report, limit: int | None = None) -> pd.DataFrame:
    """The "documents" frame of `report` bounded to `limit` rows (:func:`table_rows`), without
    building the whole frame first when it would not fit."""
    import pandas as pd

    docs, limit = report.documents, TABLE_ROWS if limit is None else limit
    if len(docs) <= limit:
        return report_frame(report, "documents")
    rows = [docs[int(k)].to_dict() for k in table_rows(docs.count_matrix(), limit)]
    return pd.DataFrame(rows, columns=DOCUMENT_COLUMNS)
