"""Slices: the documents split by the value of a gold attribute (``slice_by``, a dotted path such
as ``meta.layout``), every score recomputed per value. Pure.

Labels need every value of the attribute, so they are computed over all the documents at once:
a numeric attribute with more than ``max_slices`` distinct values is cut into ``numeric_bins``
equal-count bins labelled ``low-high``; documents lacking the attribute are in no slice.
Every slice's scores carry the bootstrap interval of the slice's documents taken alone (the
field metrics' here, each metric family's with its summary (:mod:`extract_mlflow.families`)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..core.counts import Counts
from ..core.keys import slice_key
from ..core.statistics import StatisticsConfig
from .stats import count_intervals

if TYPE_CHECKING:
    from ..report import DocumentTable


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _label(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if _is_number(value):
        return f"{value:g}"
    return value if isinstance(value, str) else str(value)


def _bins(values: list[float], bins: int) -> tuple[list[str], list[int]]:
    edges = np.unique(np.quantile(values, np.linspace(0, 1, bins + 1)))
    index = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, max(len(edges) - 2, 0))
    labels = [f"{edges[i]:g}-{edges[min(i + 1, len(edges) - 1)]:g}" for i in range(len(edges))]
    return labels, [int(i) for i in index]


def slice_labels(raw: Sequence[Any], config: StatisticsConfig) -> tuple[list[str], bool]:
    """The slice label of each attribute value, and whether the attribute is numeric (then
    binned into ``numeric_bins`` quantile bins when it has more than ``max_slices`` values)."""
    numeric = bool(raw) and all(_is_number(v) for v in raw)
    if numeric and len(set(raw)) > config.max_slices:
        labels, index = _bins([float(v) for v in raw], config.numeric_bins)
        return [labels[i] for i in index], numeric
    return [_label(v) for v in raw], numeric


def grouped_rows(
    values: Sequence[Any], config: StatisticsConfig
) -> tuple[dict[str, list[int]], dict[str, list[float]], bool]:
    """The rows whose value is not None, grouped by slice label (first-seen order); the
    values of each group when the attribute is numeric; whether it is."""
    present = [i for i, v in enumerate(values) if v is not None]
    raw = [values[i] for i in present]
    labels, numeric = slice_labels(raw, config)
    groups: dict[str, list[int]] = {}
    xs: dict[str, list[float]] = {}
    for row, label, value in zip(present, labels, raw, strict=True):
        groups.setdefault(label, []).append(row)
        if numeric:
            xs.setdefault(label, []).append(float(value))
    return groups, xs, numeric


def mean_value(values: list[float] | None) -> float | None:
    return float(np.mean(values)) if values else None


@dataclass(frozen=True, slots=True)
class CountSlice:
    """The documents with one value (or numeric bin) of an attribute: their micro precision,
    recall and F1 with the bootstrap interval of each (``<metric>_ci_low``/``_ci_high``)."""

    label: str
    documents: int
    values: dict[str, float]
    x: float | None = None  # the value, or the bin's mean value, for a numeric attribute


def count_slices(
    documents: DocumentTable, attribute: str, config: StatisticsConfig
) -> list[CountSlice]:
    """The field-metric slices of one attribute, in label order (numeric: by value). Each
    slice's interval is :func:`~extract_mlflow.evaluation.stats.count_intervals` over its own
    documents (same seed and resamples as the run's)."""
    values_of = [d.attributes.get(attribute) for d in documents]
    groups, xs, numeric = grouped_rows(values_of, config)
    counts = documents.count_matrix()
    out = []
    for label, rows in groups.items():
        members = counts[rows].astype(np.float64)  # (members × 3) tp, fp, fn
        values = {
            name: float(num.sum() / den.sum())
            for name, (num, den) in _ratios(members).items()
            if den.sum() > 0
        }
        micro = Counts(*(int(v) for v in members.sum(axis=0)))
        values.update(count_intervals(members, micro, config))
        out.append(CountSlice(label, len(rows), values, mean_value(xs.get(label))))
    if numeric:
        out.sort(key=lambda s: (s.x if s.x is not None else 0.0, s.label))
    return out


def count_slice_metrics(documents: DocumentTable, config: StatisticsConfig) -> dict[str, float]:
    """`<metric>_by_<attribute>/<value>` for micro precision, recall and F1 over the
    documents of each value of every --slice-by attribute, and their intervals
    (`f1_ci_low_by_<attribute>/<value>`, …)."""
    out: dict[str, float] = {}
    for attribute in config.slice_by:
        for s in count_slices(documents, attribute, config):
            for name, value in s.values.items():
                out[slice_key(name, attribute, s.label)] = value
    return out


def _ratios(c: npt.NDArray[np.float64]) -> dict[str, tuple[Any, Any]]:
    """(numerator, denominator) per document of precision, recall and F1, from their
    (documents × 3) tp, fp, fn."""
    tp, fp, fn = (c[:, 0], c[:, 1], c[:, 2]) if len(c) else (c, c, c)
    return {
        "precision": (tp, tp + fp),
        "recall": (tp, tp + fn),
        "f1": (2 * tp, 2 * tp + fp + fn),
    }
