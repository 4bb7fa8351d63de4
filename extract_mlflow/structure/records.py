"""The structure scores of a run as columns (:class:`StructureRecords`), the state of the
structure family during an evaluation (:class:`StructurePart`), and the summary: the headline
metrics with their intervals (the engine's ``ratio_interval`` over the documents that have the
metric, resampled with ``numpy.random.default_rng(seed)``) and the slices, each slice's metrics
with the interval of its own documents (the same aggregation, same seed and resamples). The
engine's statistics come in as `tools` (:class:`extract_mlflow.families.base.Tools`: this
package sits below the engine). Pure.
"""

from __future__ import annotations

import heapq
import math
from array import array
from collections.abc import Iterable, Mapping
from operator import itemgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from ..core.curves import MetricValue
from ..core.statistics import StatisticsConfig
from .score import (
    METRICS,
    DocumentStructure,
    MetricColumn,
    Slice,
    StructureColumns,
    StructureSummary,
    document_note,
)
from .section import StructureConfig

DOCUMENTS_LISTED = 10_000
"""Documents whose structure details (tables, reading order, regions, boundaries) a summary
keeps and its JSON lists: the first ones in gold order. Every document's values are in the
columns, and in ``documents.parquet``."""


def _array(kind: str, values: Iterable[Any] = ()) -> array[Any]:
    return array(kind, values)


def _copy(values: array[Any]) -> array[Any]:
    return array(values.typecode, values)


class StructureRecords:
    """The structure scores of (a part of) an evaluation, as columns: per metric the
    positions of the documents that have it with their numerator and denominator, reading-order
    coverage and continuity, the slice attributes, the notes, and the full
    :class:`DocumentStructure` of the `listed` documents with the smallest positions. Memory is a
    few bytes per document and value, whatever the set's size; parts merge in any order
    (:meth:`merge`) and give the same :meth:`summary` as one pass."""

    def __init__(self, slice_by: Iterable[str] = (), listed: int | None = None) -> None:
        self.slice_by = tuple(slice_by)
        self.listed = DOCUMENTS_LISTED if listed is None else listed
        self.positions = _array("q")
        self.metrics: dict[str, tuple[array[int], array[float], array[float]]] = {}
        self.reading = (_array("q"), _array("d"), _array("d"))
        self.attributes: dict[str, list[Any]] = {a: [] for a in self.slice_by}
        self.notes: list[tuple[int, str]] = []
        self.kept: list[tuple[int, DocumentStructure]] = []
        """a heap of (−position, document): the `listed` smallest positions"""
        self._same: dict[tuple[type, Any], Any] = {}
        self._lent = False
        """the arrays back a summary's columns (numpy views, no copies): they are copied before
        they grow again (an array that lends its buffer cannot grow)"""

    def _state(self) -> tuple[Any, ...]:
        return (
            self.slice_by,
            self.listed,
            self.positions,
            self.metrics,
            self.reading,
            self.attributes,
            self.notes,
            sorted(self.kept, key=lambda item: item[0]),
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StructureRecords) and self._state() == other._state()

    def _own(self) -> None:
        """Arrays of its own again, when a summary holds views of them."""
        if self._lent:
            self.metrics = {
                n: (_copy(r), _copy(a), _copy(b)) for n, (r, a, b) in self.metrics.items()
            }
            self.reading = (_copy(self.reading[0]), _copy(self.reading[1]), _copy(self.reading[2]))
            self._lent = False

    def add(self, position: int, doc: DocumentStructure) -> None:
        """One scored document (`position`: its gold line)."""
        self._own()
        self.positions.append(position)
        for name, (num, den) in doc.stats().items():
            rows, nums, dens = self.metrics.setdefault(
                name, (_array("q"), _array("d"), _array("d"))
            )
            rows.append(position)
            nums.append(num)
            dens.append(den)
        if doc.reading is not None:
            cover, cont = doc.reading.coverage, doc.reading.continuity
            self.reading[0].append(position)
            self.reading[1].append(math.nan if cover is None else cover)
            self.reading[2].append(math.nan if cont is None else cont)
        for a in self.slice_by:
            self.attributes[a].append(self._shared(doc.attributes.get(a)))
        self.notes.extend((position, document_note(doc.id, n)) for n in doc.notes)
        heapq.heappush(self.kept, (-position, doc))
        if len(self.kept) > self.listed:
            heapq.heappop(self.kept)

    def _shared(self, value: Any) -> Any:
        """`value`, or an equal value of the same type met before (one object for the many
        documents that share an attribute value)."""
        try:
            return self._same.setdefault((type(value), value), value)
        except TypeError:  # a list or an object: kept as it is
            return value

    def merge(self, other: StructureRecords) -> StructureRecords:
        """This part and `other` (disjoint positions) as one."""
        self._own()
        self.positions.extend(other.positions)
        for name, (rows, nums, dens) in other.metrics.items():
            mine = self.metrics.setdefault(name, (_array("q"), _array("d"), _array("d")))
            mine[0].extend(rows)
            mine[1].extend(nums)
            mine[2].extend(dens)
        for mine_col, theirs in zip(self.reading, other.reading, strict=True):
            mine_col.extend(theirs)
        for a in self.slice_by:
            self.attributes[a].extend(other.attributes.get(a, ()))
        self.notes.extend(other.notes)
        for item in other.kept:
            heapq.heappush(self.kept, item)
            if len(self.kept) > self.listed:
                heapq.heappop(self.kept)
        return self

    def summary(
        self, config: StructureConfig, statistics: StatisticsConfig, tools: Any
    ) -> StructureSummary:
        """The documents in gold order: headline values with their intervals, the slices, the
        notes and the listed documents (sliced and resampled as `statistics` says)."""
        positions = np.asarray(self.positions, dtype=np.int64)
        in_order = _increasing(positions)  # one pass, or parts merged in order: nothing to sort
        order = None if in_order else np.argsort(positions, kind="stable")
        ordered = positions if order is None else positions[order]
        # positions 0..n-1 (every document of the evaluation has a record): a position is its row
        dense = in_order and (len(ordered) == 0 or ordered[-1] == len(ordered) - 1)

        def by_row(entries: array[int], *values: array[float]) -> list[npt.NDArray[Any]]:
            """The entries' rows (in gold order) and their values, sorted by row (in gold
            order already: the records' own arrays, not copies)."""
            at = np.asarray(entries, dtype=np.int64)
            rows = at if dense else np.searchsorted(ordered, at)
            if _increasing(rows):
                return [rows, *(np.asarray(v, dtype=np.float64) for v in values)]
            sort = np.argsort(rows, kind="stable")
            return [rows[sort], *(np.asarray(v, dtype=np.float64)[sort] for v in values)]

        metrics = {
            name: MetricColumn(*by_row(*self.metrics[name]))
            for name in METRICS
            if name in self.metrics
        }
        reading = None
        if self.reading[0]:
            rows, cover, cont = by_row(*self.reading)
            reading = (rows, cover, cont)
        self._lent = True  # the columns may be views of the arrays
        if order is None:
            attributes = {a: list(values) for a, values in self.attributes.items()}
        else:
            rank = order.tolist()
            attributes = {a: [values[i] for i in rank] for a, values in self.attributes.items()}
        columns = StructureColumns(len(ordered), metrics, reading, attributes)
        slices = {a: _slices(columns, a, statistics, tools) for a in statistics.slice_by}
        notes = [n for _, n in sorted(self.notes, key=itemgetter(0))]
        listed = [d for _, d in sorted(self.kept, key=lambda item: -item[0])]
        headline = _aggregate(columns.metrics, None, statistics, tools)
        return StructureSummary(listed, headline, slices, config, statistics, notes, columns)


def _increasing(values: npt.NDArray[np.int64]) -> bool:
    return bool(np.all(values[1:] > values[:-1]))


def _aggregate(
    metrics: Mapping[str, MetricColumn],
    rows: npt.NDArray[np.int64] | None,
    config: StatisticsConfig,
    tools: Any,
) -> dict[str, MetricValue]:
    """Every headline metric over the documents that have it (of `rows`, sorted, when given),
    with its interval."""
    out = {}
    for name, m in metrics.items():
        keep = slice(None) if rows is None else np.isin(m.rows, rows, assume_unique=True)
        num, den = m.num[keep], m.den[keep]
        if len(num):
            out[name] = tools.ratio_interval(
                num,
                den,
                resamples=config.bootstrap_resamples,
                seed=config.bootstrap_seed,
                confidence=config.confidence,
            )
    return out


def _slices(
    columns: StructureColumns, attribute: str, config: StatisticsConfig, tools: Any
) -> list[Slice]:
    """The slices of the documents by one attribute (documents lacking it are in none), in
    label order (numeric: by value): each metric's value and its interval
    (``<metric>_ci_low``/``_ci_high``) over the slice's documents."""
    groups, xs, numeric = tools.grouped_rows(columns.attributes.get(attribute, []), config)
    order = sorted(groups, key=lambda k: (float(np.mean(xs[k])), k) if numeric else (0.0, k))
    out = []
    for label in order:
        found: dict[str, float] = {}
        rows = np.asarray(groups[label], dtype=np.int64)
        for name, m in _aggregate(columns.metrics, rows, config, tools).items():
            found |= {name: m.value, f"{name}_ci_low": m.ci_low, f"{name}_ci_high": m.ci_high}
        out.append(Slice(label, len(rows), found, tools.mean_value(xs.get(label))))
    return out
