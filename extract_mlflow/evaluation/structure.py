"""The structure scores of a run: every gold document scored, then the headline metrics with
their intervals (:func:`~extract_mlflow.evaluation.stats.ratio_interval` over the documents that
have the metric, resampled with ``numpy.random.default_rng(seed)``) and the slices, each slice's
metrics with the interval of its own documents (the same aggregation, same seed and resamples).
Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ..config import StructureConfig
from ..errors import InputError
from ..structure.score import (
    METRICS,
    DocumentStructure,
    MetricValue,
    Slice,
    StructureSummary,
    document_note,
    score_document,
)
from .slices import grouped, mean_value
from .stats import ratio_interval


def aggregate(
    documents: Iterable[DocumentStructure], config: StructureConfig
) -> dict[str, MetricValue]:
    """Every headline metric over the documents that have it, with its interval."""
    columns: dict[str, tuple[list[float], list[float]]] = {}
    for doc in documents:
        for name, (n, d) in doc.stats().items():
            columns.setdefault(name, ([], []))
            columns[name][0].append(n)
            columns[name][1].append(d)
    return {
        name: ratio_interval(
            *columns[name],
            resamples=config.bootstrap_resamples,
            seed=config.bootstrap_seed,
            confidence=config.confidence,
        )
        for name in METRICS
        if name in columns
    }


def slice_documents(
    documents: list[DocumentStructure], attribute: str, config: StructureConfig
) -> list[Slice]:
    """The slices of the documents by one attribute (documents lacking it are in none), in
    label order (numeric: by value): each metric's value and its interval
    (``<metric>_ci_low``/``_ci_high``) from :func:`aggregate` over the slice's documents."""
    groups, xs, numeric = grouped(documents, attribute, config)
    order = sorted(groups, key=lambda k: (float(np.mean(xs[k])), k) if numeric else (0.0, k))
    out = []
    for label in order:
        values: dict[str, float] = {}
        for name, m in aggregate(groups[label], config).items():
            values |= {name: m.value, f"{name}_ci_low": m.ci_low, f"{name}_ci_high": m.ci_high}
        out.append(Slice(label, len(groups[label]), values, mean_value(xs.get(label))))
    return out


def _keyed(docs: Mapping[str, Any] | Iterable[Mapping[str, Any]], id_key: str) -> dict[str, Any]:
    if isinstance(docs, Mapping):
        return {str(k): v for k, v in docs.items()}
    out: dict[str, Any] = {}
    for doc in docs:
        if doc.get(id_key) is None:
            raise InputError(f"a document lacks its id key '{id_key}'")
        out[str(doc[id_key])] = doc
    return out


def score_structure(
    gold_docs: Mapping[str, Mapping[str, Any]] | Iterable[Mapping[str, Any]],
    pred_docs: Mapping[str, Mapping[str, Any] | None] | Iterable[Mapping[str, Any]],
    config: StructureConfig | None = None,
    *,
    id_key: str = "id",
) -> StructureSummary:
    """Score every gold document's structure fields against its prediction.

    Documents are mappings ``id → line`` or lists of lines carrying ``id_key``; a gold
    document without a prediction is scored against an empty one.
    """
    cfg = config or StructureConfig()
    gold, pred = _keyed(gold_docs, id_key), _keyed(pred_docs, id_key)
    return summarize([score_document(i, g, pred.get(i), cfg) for i, g in gold.items()], cfg)


def summarize(documents: list[DocumentStructure], config: StructureConfig) -> StructureSummary:
    """The summary of the scored documents (in gold order): headline values with their
    intervals, the slices and the documents' notes."""
    slices = {a: slice_documents(documents, a, config) for a in config.slice_by}
    notes = [document_note(d.id, n) for d in documents for n in d.notes]
    return StructureSummary(documents, aggregate(documents, config), slices, config, notes)
