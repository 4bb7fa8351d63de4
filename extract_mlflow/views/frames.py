"""Pandas frames of a report: per field, per document, per document and field, and the
per-document counts (built in :mod:`extract_mlflow.evaluation.records`)."""

from __future__ import annotations

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
        if isinstance(report.documents, DocumentColumns):
            return _columns_frame(report.documents)
        rows = [d.to_dict() for d in report.documents]
        return pd.DataFrame(
            rows,
            columns=["id", "status", "tp", "fp", "fn", "precision", "recall", "f1", "reason"],
        )
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


def _columns_frame(docs: DocumentColumns) -> pd.DataFrame:
    """The "documents" frame of a compact evaluation, from its columns (no document rebuilt):
    the frame the rows of ``DocumentResult.to_dict`` give."""
    import pandas as pd

    tp, fp, fn = (docs.counts[:, i].tolist() for i in range(3))
    data = {
        "id": list(docs.ids),
        "status": [STATUSES[s] for s in docs.status.tolist()],
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": [ratio(t, t + p) for t, p in zip(tp, fp, strict=True)],
        "recall": [ratio(t, t + n) for t, n in zip(tp, fn, strict=True)],
        "f1": [ratio(2 * t, 2 * t + p + n) for t, p, n in zip(tp, fp, fn, strict=True)],
        "reason": [docs.reasons.get(k) for k in range(len(docs))],
    }
    return pd.DataFrame(data)
