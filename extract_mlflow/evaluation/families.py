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
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..core.paths import lookup
from ..families import FAMILIES, Family, FamilySlice, FamilySummary, FamilyValue, section_of
from .slices import grouped_rows, mean_value
from .stats import bootstrap_sums, percentile_interval, ratio_interval

if TYPE_CHECKING:
    from ..core.statistics import StatisticsConfig
    from ..families.base import Documents, FamilyPart
    from .inputs import Setup

WORST = 10
"""documents listed worst first by each family's first metric"""


class EngineTools:
    """The engine's statistics that a family's own state summarizes with
    (:class:`~extract_mlflow.families.base.Tools`)."""

    def ratio_interval(
        self, num: Any, den: Any, *, resamples: int, seed: int | None, confidence: float
    ) -> Any:
        return ratio_interval(num, den, resamples=resamples, seed=seed, confidence=confidence)

    def grouped_rows(
        self, values: Any, config: Any
    ) -> tuple[dict[str, list[int]], dict[str, list[float]], bool]:
        return grouped_rows(values, config)

    def mean_value(self, values: list[float] | None) -> float | None:
        return mean_value(values)


TOOLS = EngineTools()


def active_families(setup: Setup) -> tuple[Family, ...]:
    """The registered families that run on `setup`."""
    return tuple(f for f in FAMILIES if f.active(section_of(setup.config, f), setup))


def family_parts(setup: Setup) -> dict[str, FamilyPart]:
    """The state of each active family for one part of an evaluation on `setup`: its own
    (:meth:`~extract_mlflow.families.base.Family.start`), else the engine's statistics."""
    config = setup.config
    settings = config.statistics  # the slices and intervals of every metric
    out: dict[str, FamilyPart] = {}
    for f in active_families(setup):
        section = section_of(config, f)
        out[f.name] = f.start(section, setup) or FamilyState(f.name, settings, section)
    return out


class FamilyState:
    """The statistics of one family over the documents of one part (plain data, picklable)."""

    def __init__(self, name: str, settings: StatisticsConfig, section: Any) -> None:
        self.name = name
        self.settings = settings
        """the run-wide slice and bootstrap settings (``[statistics]``)"""
        self.slice_by = tuple(settings.slice_by)
        self.section = section
        """the family's config section (:meth:`update` scores under it)"""
        self.positions: array[int] = array("q")
        self.metrics: dict[str, tuple[array[int], array[float], array[float]]] = {}
        """metric -> (index into :attr:`positions`, num, den), in the order first met"""
        self.attributes: dict[str, list[Any]] = {a: [] for a in self.slice_by}
        self.worst: list[tuple[float, str]] = []
        """a bounded heap of (badness, id) by the first metric"""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FamilyState) and _state(self) == _state(other)

    def update(
        self,
        position: int,
        doc_id: str,
        gold: Mapping[str, Any],
        pred: Mapping[str, Any] | None,
        failure: str | None,
        source: str | None = None,
    ) -> None:
        """Score one document (:meth:`Family.document`; an unusable prediction as none)."""
        stats = _family(self.name).document(gold, pred if failure is None else None, self.section)
        self.add(position, doc_id, gold, stats)

    def add(
        self, position: int, doc_id: str, gold: Mapping[str, Any], stats: Mapping[str, Any]
    ) -> None:
        """Add one document's statistics; nothing for none."""
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

    def summary(
        self, documents: Documents, inputs: Any = None, tools: Any = TOOLS
    ) -> FamilySummary:
        """The family's summary over the evaluation's documents (gold order)."""
        rows_of = np.asarray(documents.positions, dtype=np.int64)
        config = self.settings
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


def _state(s: FamilyState) -> tuple[Any, ...]:
    return (s.name, s.settings, s.section, s.positions, s.metrics, s.attributes, sorted(s.worst))


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
    config: StatisticsConfig,
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
    columns: Mapping[str, tuple[Any, Any]], attributes: list[Any], config: StatisticsConfig
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
