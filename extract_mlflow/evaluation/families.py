"""The engine side of the metric families (:mod:`extract_mlflow.families`): their state
during an evaluation, merged across parts, and their summaries. Pure.

A family's state is the per-document statistics it declared (for each metric a numerator and a
denominator) with the document's position, kept as typed arrays (24 bytes a document and
metric): :meth:`FamilyState.merge` concatenates, :meth:`FamilyState.summary` orders by position,
so every number is the same for any partition of the documents and any order of merging. A
metric's value is Σnum/Σden; its interval is the seeded percentile bootstrap over the documents
with statistics (one draw of resamples for all of a family's metrics, each ratio recomputed
from the resample's sums: :func:`~.stats.bootstrap_sums`), as for every other metric.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..core.paths import lookup
from ..families import FAMILIES, Family, FamilySlice, FamilySummary, FamilyValue
from .slices import grouped_rows
from .stats import bootstrap_sums, percentile_interval

if TYPE_CHECKING:
    from ..config import Config
    from ..structure.section import StructureConfig

WORST = 10
"""documents listed worst first by each family's first metric"""


def active_families(config: Config) -> tuple[Family, ...]:
    """The registered families that run under `config`."""
    return tuple(f for f in FAMILIES if f.active(config.section(f.name)))


class FamilyState:
    """The statistics of one family over the documents of one part (plain data, picklable)."""

    def __init__(self, name: str, slice_by: Sequence[str] = ()) -> None:
        self.name = name
        self.slice_by = tuple(slice_by)
        self.positions: array[int] = array("q")
        self.metrics: dict[str, tuple[array[int], array[float], array[float]]] = {}
        """metric -> (index into :attr:`positions`, num, den), in the order first met"""
        self.attributes: dict[str, list[Any]] = {a: [] for a in self.slice_by}
        self.worst: list[tuple[float, str]] = []
        """a bounded heap of (badness, id) by the first metric"""

    def update(
        self, position: int, doc_id: str, gold: Mapping[str, Any], stats: Mapping[str, Any]
    ) -> None:
        """Add one document's statistics (:meth:`Family.document`); nothing for none."""
        if not stats:
            return
        at = len(self.positions)
        self.positions.append(position)
        for metric, (num, den) in stats.items():
            mine = self.metrics.get(metric)
            if mine is None:
                mine = self.metrics[metric] = (array("q"), array("d"), array("d"))
            mine[0].append(at)
            mine[1].append(float(num))
            mine[2].append(float(den))
        for a in self.slice_by:
            self.attributes[a].append(lookup(gold, a))
        first_num, first_den = next(iter(stats.values()))
        if first_den > 0:
            self._offer(first_num / first_den, doc_id)

    def _offer(self, value: float, doc_id: str) -> None:
        family = _family(self.name)
        badness = -value if family.higher_is_better else value
        item = (badness, doc_id)
        if len(self.worst) < WORST:
            heapq.heappush(self.worst, item)
        elif item > self.worst[0]:
            heapq.heapreplace(self.worst, item)

    def merge(self, other: FamilyState) -> FamilyState:
        """Add `other`'s documents (disjoint from this part's) and return this state."""
        shift = len(self.positions)
        self.positions.extend(other.positions)
        for metric, (at, num, den) in other.metrics.items():
            mine = self.metrics.get(metric)
            if mine is None:
                mine = self.metrics[metric] = (array("q"), array("d"), array("d"))
            mine[0].extend(i + shift for i in at)
            mine[1].extend(num)
            mine[2].extend(den)
        for a in self.slice_by:
            self.attributes[a].extend(other.attributes[a])
        for badness, doc_id in other.worst:
            if len(self.worst) < WORST:
                heapq.heappush(self.worst, (badness, doc_id))
            elif (badness, doc_id) > self.worst[0]:
                heapq.heapreplace(self.worst, (badness, doc_id))
        return self

    def summary(self, rows_of: npt.NDArray[np.int64], config: StructureConfig) -> FamilySummary:
        """The family's summary; `rows_of` maps a document's position to its row in gold
        order (the sorted positions of every document of the evaluation)."""
        family = _family(self.name)
        positions = np.asarray(self.positions, dtype=np.int64)
        order = np.argsort(positions, kind="stable")
        rows = np.searchsorted(rows_of, positions[order])
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        n = len(order)
        columns: dict[str, tuple[Any, Any]] = {}
        for metric in sorted(self.metrics, key=lambda m: _metric_order(family, m)):
            at, num, den = self.metrics[metric]
            full_num, full_den = np.full(n, np.nan), np.full(n, np.nan)
            where = rank[np.asarray(at, dtype=np.int64)]
            full_num[where] = np.asarray(num, dtype=np.float64)
            full_den[where] = np.asarray(den, dtype=np.float64)
            columns[metric] = (full_num, full_den)
        values = _values(columns, None, config)
        slices = {}
        for a in self.slice_by:
            ordered = [self.attributes[a][i] for i in order.tolist()]
            slices[a] = _slices(columns, ordered, config)
        worst = [(doc_id, -b if family.higher_is_better else b) for b, doc_id in self.worst]
        worst.sort(key=lambda item: (-item[1] if not family.higher_is_better else item[1], item[0]))
        return FamilySummary(
            family.name, family.title, family.higher_is_better, values, slices, worst, rows, columns
        )


def _metric_order(family: Family, metric: str) -> tuple[bool, str, int, str]:
    """Headline metrics first (in the family's order), then the parts by name: the same
    order whichever part met a metric first."""
    base, _, part = metric.partition("/")
    known = family.metric_names
    return (bool(part), part, known.index(base) if base in known else len(known), base)


def _family(name: str) -> Family:
    found = next((f for f in FAMILIES if f.name == name), None)
    if found is None:
        raise ValueError(f"no metric family {name!r} is registered")
    return found


def _values(
    columns: Mapping[str, tuple[Any, Any]],
    keep: npt.NDArray[np.int64] | None,
    config: StructureConfig,
) -> dict[str, FamilyValue]:
    """Every metric over the documents (the rows `keep` of them, when given), with its
    interval: one bootstrap draw for all the metrics; documents without a metric add 0 to both
    of its sums."""
    if not columns:
        return {}
    names = list(columns)
    stack = np.column_stack([c[k] for name in names for c in (columns[name],) for k in (0, 1)])
    if keep is not None:
        stack = stack[keep]
    has = ~np.isnan(stack[:, 0::2])
    stack = np.nan_to_num(stack, nan=0.0)
    sums = stack.sum(axis=0)
    boot = None
    if len(stack) >= 2:
        boot = bootstrap_sums(stack, config.bootstrap_resamples, config.bootstrap_seed)
    out = {}
    for i, name in enumerate(names):
        num, den = sums[2 * i], sums[2 * i + 1]
        value = float(num / den) if den > 0 else None
        low = high = value
        if boot is not None and value is not None:
            with np.errstate(invalid="ignore", divide="ignore"):
                resampled = boot[:, 2 * i] / boot[:, 2 * i + 1]
            valid = resampled[np.isfinite(resampled)]
            if valid.size:
                low, high = percentile_interval(valid, config.confidence)
        out[name] = FamilyValue(value, low, high, int(has[:, i].sum()))
    return out


def _slices(
    columns: Mapping[str, tuple[Any, Any]], attributes: list[Any], config: StructureConfig
) -> list[FamilySlice]:
    """The slices by one attribute (documents lacking it are in none), in label order
    (numeric: by value), each with every metric over its documents."""
    groups, xs, numeric = grouped_rows(attributes, config)
    order = sorted(groups, key=lambda k: (float(np.mean(xs[k])), k) if numeric else (0.0, k))
    out = []
    for label in order:
        rows = np.asarray(groups[label], dtype=np.int64)
        out.append(FamilySlice(label, len(rows), _values(columns, rows, config)))
    return out


def family_columns(summary: FamilySummary, start: int, stop: int) -> dict[str, Any]:
    """The per-document statistics of the documents in rows [`start`, `stop`) (gold order),
    as the counts frame's ``<family>/<metric>_num`` and ``_den`` columns (NaN where a document
    lacks the metric), which the paired comparison of two runs resamples."""
    rows = np.asarray(summary.rows, dtype=np.int64)
    lo, hi = np.searchsorted(rows, [start, stop])
    at = rows[lo:hi] - start
    out: dict[str, Any] = {}
    for metric, (num, den) in summary.columns.items():
        for part, values in (("_num", num), ("_den", den)):
            full = np.full(stop - start, np.nan)
            full[at] = values[lo:hi]
            out[f"{summary.name}/{metric}{part}"] = full
    return out
