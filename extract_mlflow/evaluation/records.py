"""The per-document records of an evaluation: what a prediction records about its own run
(tokens used, latency), and the records as tables: the counts frame that ``compare``'s paired
bootstrap reads (and ``eval/documents.parquet`` stores), with each metric family's per-document
columns beside them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from ..report import DocumentTable, Report


def counts_frame(report: Report) -> pd.DataFrame:
    """One row per document: id, status, tp, fp, fn, then `field_tp/<path>`,
    `field_fp/<path>`, `field_fn/<path>` for every field (the paired bootstrap of
    `compare` recomputes every count-based score from these columns), then each metric
    family's per-document columns (prefixed ``<family>/``)."""
    import pandas as pd

    blocks = list(counts_blocks(report))
    return pd.concat(blocks, ignore_index=True) if len(blocks) > 1 else blocks[0]


def counts_blocks(report: Report) -> Iterator[pd.DataFrame]:
    """The counts frame (:func:`counts_frame`) in blocks of consecutive documents, read from
    the documents' per-document field counts (a compact evaluation's are spilled)."""
    import numpy as np
    import pandas as pd

    docs = report.documents
    paths = list(report.fields)
    pages = report.pages if report.pages is not None and report.pages.count else None
    empty = True
    positions, counts = docs.positions, docs.count_matrix()
    for start, block in docs.field_blocks(paths):
        stop = start + len(block)
        data: dict[str, Any] = {
            "id": list(docs.ids[start:stop]),
            "status": docs.statuses(start, stop),
            "tp": counts[start:stop, 0].astype(np.int64),
            "fp": counts[start:stop, 1].astype(np.int64),
            "fn": counts[start:stop, 2].astype(np.int64),
        }
        if pages is not None:
            data["layout_score"] = pages.scores_at(positions[start:stop])
        for i, p in enumerate(paths):
            data[f"field_tp/{p}"] = block[:, 3 * i]
            data[f"field_fp/{p}"] = block[:, 3 * i + 1]
            data[f"field_fn/{p}"] = block[:, 3 * i + 2]
        for summary in report.families.values():  # each family's, prefixed with its name
            data.update(summary.frame_columns(start, stop))
        empty = False
        yield pd.DataFrame(data)
    if empty:
        yield pd.DataFrame(
            columns=[
                "id",
                "status",
                "tp",
                "fp",
                "fn",
                *(["layout_score"] if pages is not None else []),
            ]
        )


def latency_ms(pred: Mapping[str, Any] | None) -> float | None:
    """Milliseconds one prediction's `latency_ms` records (a number >= 0), else None."""
    value = pred.get("latency_ms") if pred is not None else None
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def usage_tokens(pred: Mapping[str, Any] | None) -> float | None:
    """Tokens one prediction's `usage` records: input + output tokens, else `tokens`."""
    usage = pred.get("usage") if pred is not None else None
    if not isinstance(usage, Mapping):
        return None
    parts = [usage.get("input_tokens"), usage.get("output_tokens")]
    numbers = [float(v) for v in parts if isinstance(v, int | float) and not isinstance(v, bool)]
    if numbers:
        return sum(numbers)
    total = usage.get("tokens")
    if isinstance(total, int | float) and not isinstance(total, bool):
        return float(total)
    return None


def tokens_per_doc(documents: DocumentTable) -> float | None:
    """Σ tokens over the documents (gold order) / documents; None when no prediction records
    usage (a document without a prediction counts as 0 tokens)."""
    total, seen = 0.0, False
    for value in documents.token_values():
        total, seen = total + value, True
    return total / len(documents) if seen and len(documents) else None
