"""The per-document records of an evaluation: what a prediction records about its own run
(tokens used, latency), and the records as tables: the counts frame that ``compare``'s paired
bootstrap reads (and ``eval/documents.parquet`` stores), with the per-document structure values
beside them."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .families import family_columns

if TYPE_CHECKING:
    import pandas as pd

    from ..report import DocumentTable, Report
    from ..structure.score import StructureSummary


def counts_frame(report: Report) -> pd.DataFrame:
    """One row per document: id, status, tp, fp, fn, then `field_tp/<path>`,
    `field_fp/<path>`, `field_fn/<path>` for every field (the paired bootstrap of
    `compare` recomputes every count-based score from these columns), then the per-document
    structure values (prefixed ``structure/``)."""
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
        if report.structure is not None:  # per-document structure values, prefixed
            data.update(_prefixed(structure_columns(report.structure, start, stop)))
        for summary in report.families.values():
            data.update(family_columns(summary, start, stop))
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


def structure_frame(summary: StructureSummary, ids: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per document: id, then :func:`structure_columns`. `ids`: the documents' ids in
    gold order (by default those of the listed documents, when every document is listed)."""
    import pandas as pd

    if ids is None:
        if summary.count != len(summary.documents):
            raise ValueError("not every document is listed: give the ids")
        ids = [d.id for d in summary.documents]
    return pd.DataFrame({"id": list(ids), **structure_columns(summary, 0, len(ids))})


def structure_columns(summary: StructureSummary, start: int, stop: int) -> dict[str, Any]:
    """The structure values of the documents in rows [`start`, `stop`) (gold order): the
    slice attributes (``attribute/<name>``; lists and objects as JSON text), per metric its
    value, ``<metric>_num`` and ``<metric>_den`` (NaN where the document lacks it), then
    reading-order coverage and continuity (when some document has blocks)."""
    import numpy as np

    from ..structure.score import METRICS  # here: the structure scorers only for structure

    columns = summary.columns
    if columns is None:
        raise ValueError("this structure summary keeps no columns")
    n = stop - start
    out: dict[str, Any] = {
        f"attribute/{a}": [_scalar(v) for v in values[start:stop]]
        for a, values in columns.attributes.items()
    }

    def spread(rows: Any, *values: Any) -> list[Any]:
        lo, hi = np.searchsorted(rows, [start, stop])
        at = rows[lo:hi] - start
        filled = []
        for v in values:
            full = np.full(n, np.nan)
            full[at] = v[lo:hi]
            filled.append(full)
        return filled

    for name in METRICS:
        m = columns.metrics.get(name)
        num, den = spread(m.rows, m.num, m.den) if m is not None else (np.full(n, np.nan),) * 2
        with np.errstate(invalid="ignore"):
            out[name] = num / den
        out[f"{name}_num"], out[f"{name}_den"] = num, den
    if columns.reading is not None:
        cover, cont = spread(*columns.reading)
        out["reading_order_coverage"], out["cross_page_continuity"] = cover, cont
    return out


def _prefixed(columns: dict[str, Any]) -> dict[str, Any]:
    return {f"structure/{k}": v for k, v in columns.items()}


def _scalar(value: Any) -> Any:
    """A frame-friendly attribute value: scalars kept, anything else as JSON text."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


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
