"""Document structure: per-document scoring of tables, reading order, regions and section
boundaries, and the summary of a run (headline values, slices) as data. Pure.

Families run per document when the gold line has their field (key names in
:class:`StructureConfig`); a prediction without the field (or without a line) is scored as
empty, and a prediction field that cannot be read is scored as empty with a note.

Every metric is a ratio of per-document sums (sacrebleu-style sufficient statistics), and the
headline value is Σ numerators / Σ denominators over the documents whose denominator is not 0:

==================  ================================  ===================================
metric              numerator                         denominator
==================  ================================  ===================================
teds, teds_s        Σ table-slot scores               table slots (max(#gold, #pred))
teds_normalized     Σ table-slot scores (normalised)  table slots
teds_s_normalized   Σ table-slot scores (normalised)  table slots
header_association  gold columns associated           gold columns
reading_order       ROAcc                             1 (a document with blocks)
kendall_tau         tau                               1 (≥ 2 common blocks)
continuity          page-break links kept             gold page-break links (blocks with pages)
anls                Σ region scores                   gold regions
anls_official       Σ region scores (DocVQA script)   gold regions
boundary_precision  TP                                TP + FP
boundary_recall     TP                                TP + FN
boundary_f1         2·TP                              2·TP + FP + FN
==================  ================================  ===================================

With ``[structure] teds = "normalized"`` the tables score the normalised variant under its own
keys (``teds_normalized``, ``teds_s_normalized``) and ``teds``/``teds_s`` are not computed, so
the two definitions never share a key. Likewise ``[structure] anls = "official"`` scores regions
by the DocVQA evaluation script's rule under ``anls_official`` instead of ``anls``.

So ``teds`` is the mean over tables, ``anls`` the mean over gold regions, ``reading_order`` and
``kendall_tau`` means over documents, ``continuity`` pooled over the page breaks of every
document, and the boundary scores micro-averaged.

The summary over a run — headline values with their bootstrap intervals, and the slices by gold
attributes — is computed by :mod:`extract_mlflow.evaluation.structure`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ..core.counts import Counts
from ..core.curves import Curves, MetricValue
from ..core.keys import slice_key
from ..core.paths import lookup
from ..core.statistics import StatisticsConfig
from ..errors import InputError
from .anls import parse_gold_regions, parse_pred_regions, score_regions
from .boundaries import parse_positions, score_boundaries
from .reading_order import parse_blocks, score_reading_order
from .section import METRICS as METRICS  # listed here too, with the scorers
from .section import StructureConfig
from .table_text import parse_tables
from .teds import TableScore, score_tables

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from .anls import RegionScores
    from .reading_order import ReadingOrderResult

log = logging.getLogger(__name__)

HIGHER_IS_BETTER: dict[str, bool] = dict.fromkeys(METRICS, True)


# -- one document ---------------------------------------------------------------------------


@dataclass
class DocumentStructure:
    """The structure scores of one gold document (None: the gold line lacks that field)."""

    id: str
    attributes: dict[str, Any] = field(default_factory=dict)
    tables: list[TableScore] | None = None
    reading: ReadingOrderResult | None = None
    regions: RegionScores | None = None
    boundaries: Counts | None = None
    notes: list[str] = field(default_factory=list)

    def stats(self) -> dict[str, tuple[float, float]]:
        """(numerator, denominator) of every metric this document has (denominator > 0)."""
        pairs = {**_table_stats(self.tables), **_reading_stats(self.reading)}
        if self.regions is not None:
            pairs[self.regions.key] = (self.regions.total, float(len(self.regions.scores)))
        if self.boundaries is not None:
            tp, fp, fn = self.boundaries.tp, self.boundaries.fp, self.boundaries.fn
            pairs["boundary_precision"] = (tp, tp + fp)
            pairs["boundary_recall"] = (tp, tp + fn)
            pairs["boundary_f1"] = (2 * tp, 2 * tp + fp + fn)
        return {k: (float(n), float(d)) for k, (n, d) in pairs.items() if d > 0}

    def values(self) -> dict[str, float]:
        """This document's value of every metric it has."""
        return {k: n / d for k, (n, d) in self.stats().items()}

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "attributes": self.attributes,
            **self.values(),
            "tables": None if self.tables is None else [t.to_dict() for t in self.tables],
            "reading_order_details": None if self.reading is None else self.reading.to_dict(),
            "regions": None if self.regions is None else dict(self.regions.scores),
            "boundaries": None if self.boundaries is None else self.boundaries.to_dict(),
            "notes": list(self.notes),
        }


def _table_stats(tables: list[TableScore] | None) -> dict[str, tuple[float, float]]:
    if tables is None:
        return {}
    slots = float(len(tables))
    suffix = "_normalized" if any(t.normalized for t in tables) else ""
    return {
        f"teds{suffix}": (sum(t.teds for t in tables), slots),
        f"teds_s{suffix}": (sum(t.teds_s for t in tables), slots),
        "header_association": (
            float(sum(t.header_matched for t in tables)),
            float(sum(t.header_columns for t in tables)),
        ),
    }


def _reading_stats(reading: ReadingOrderResult | None) -> dict[str, tuple[float, float]]:
    if reading is None:
        return {}
    pairs = {"reading_order": reading.roacc, "kendall_tau": reading.kendall_tau}
    out = {k: (v, 1.0) for k, v in pairs.items() if v is not None}
    out["continuity"] = (float(reading.links_kept), float(reading.cross_page_links))
    return out


def _pred_field(pred: Mapping[str, Any] | None, key: str) -> Any:
    return None if pred is None else pred.get(key)


def _read(doc_id: str, key: str, parse: Any, gold: Any, pred: Any, notes: list[str]) -> Any:
    """(gold, pred) parsed; unreadable gold → InputError, unreadable prediction → empty."""
    try:
        g = parse(gold)
    except (TypeError, ValueError) as exc:
        raise InputError(f"gold document {doc_id!r}: field '{key}': {exc}") from None
    if pred is None:
        return g, parse([])
    try:
        return g, parse(pred)
    except (TypeError, ValueError) as exc:
        notes.append(f"prediction field '{key}' unreadable ({exc}); scored as empty")
        return g, parse([])


def _budget_notes(doc_id: str, scores: list[TableScore], budget: float) -> list[str]:
    return [
        f"document {doc_id!r}, gold table {t.gold} vs predicted table {t.pred}: exact TEDS "
        f"out of budget (over {budget:g} s, or too large: {t.gold_nodes} × {t.pred_nodes} "
        "nodes); reported an approximate score (lower bound: rows paired by position)"
        for t in scores
        if t.approximate
    ]


def _tables(doc: DocumentStructure, gold: Any, pred: Any, config: StructureConfig) -> None:
    key = config.tables_key
    g, p = _read(doc.id, key, parse_tables, gold, pred, doc.notes)
    doc.tables = score_tables(
        g, p, budget_s=config.teds_time_budget_s, normalized=config.teds == "normalized"
    )
    doc.notes.extend(_budget_notes(doc.id, doc.tables, config.teds_time_budget_s))


def _reading(doc: DocumentStructure, gold: Any, pred: Any, config: StructureConfig) -> None:
    def parse(value: Any) -> Any:
        return parse_blocks(value, config.block_id_key, config.page_key)

    g, p = _read(doc.id, config.blocks_key, parse, gold, pred, doc.notes)
    doc.reading = score_reading_order(g, p)


def _regions(doc: DocumentStructure, gold: Any, pred: Any, config: StructureConfig) -> None:
    keys = (config.region_id_key, config.region_text_key)
    key = config.regions_key
    g, _ = _read(doc.id, key, lambda v: parse_gold_regions(v, *keys), gold, None, doc.notes)
    _, p = _read(doc.id, key, lambda v: parse_pred_regions(v, *keys), [], pred, doc.notes)
    doc.regions = score_regions(g, p, config.anls_threshold, config.anls)


def _boundaries(doc: DocumentStructure, gold: Any, pred: Any, config: StructureConfig) -> None:
    g, p = _read(doc.id, config.boundaries_key, parse_positions, gold, pred, doc.notes)
    doc.boundaries = score_boundaries(g, p, config.boundary_window)


def score_document(
    doc_id: str,
    gold: Mapping[str, Any],
    pred: Mapping[str, Any] | None,
    config: StructureConfig,
    slice_by: tuple[str, ...] = (),
) -> DocumentStructure:
    """Every structure family whose field the gold line has, for one document (with the
    values of its slice attributes `slice_by`)."""
    doc = DocumentStructure(doc_id, {a: lookup(gold, a) for a in slice_by})
    families = (
        (config.tables_key, _tables),
        (config.blocks_key, _reading),
        (config.regions_key, _regions),
        (config.boundaries_key, _boundaries),
    )
    for key, run in families:
        if gold.get(key) is not None:
            run(doc, gold[key], _pred_field(pred, key), config)
    for note in doc.notes:
        log.warning("%s", document_note(doc_id, note))
    return doc


def document_note(doc_id: str, note: str) -> str:
    """A note naming its document."""
    return note if note.startswith("document ") else f"document {doc_id!r}: {note}"


# -- a run's values -------------------------------------------------------------------------


# -- slices ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Slice:
    """The documents with one value (or numeric bin) of an attribute, and their metrics:
    each metric's value with its interval over these documents alone (``<metric>``,
    ``<metric>_ci_low``, ``<metric>_ci_high``)."""

    label: str
    documents: int
    values: dict[str, float]
    x: float | None = None  # the value, or the bin's mean value, for a numeric attribute


# -- the summary ----------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class MetricColumn:
    """One metric over the documents that have it: their rows (gold order) with the
    numerator and denominator of each."""

    rows: npt.NDArray[np.int64]
    num: npt.NDArray[np.float64]
    den: npt.NDArray[np.float64]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MetricColumn) and _arrays_equal(
            (self.rows, self.num, self.den), (other.rows, other.num, other.den)
        )


def _arrays_equal(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    import numpy as np

    return len(a) == len(b) and all(
        np.array_equal(x, y, equal_nan=x.dtype.kind == "f") for x, y in zip(a, b, strict=True)
    )


@dataclass(frozen=True, eq=False)
class StructureColumns:
    """Every document's structure values as columns, rows in gold order: per metric a
    :class:`MetricColumn`, reading-order (rows, coverage, continuity) of the documents with
    blocks (NaN where undefined), and each slice attribute's value per row (None: lacking)."""

    count: int
    metrics: dict[str, MetricColumn]
    reading: tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.float64]] | None
    attributes: dict[str, list[Any]]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StructureColumns):
            return False
        same_reading = (self.reading is None) == (other.reading is None) and (
            self.reading is None or _arrays_equal(self.reading, other.reading or ())
        )
        return (self.count, self.metrics, self.attributes) == (
            other.count,
            other.metrics,
            other.attributes,
        ) and same_reading


@dataclass
class StructureSummary:
    """The structure scores of a run: headline with intervals, slices, every document's values
    as columns, and the details of the first documents (:attr:`documents`)."""

    name: ClassVar[str] = "structure"
    documents: list[DocumentStructure]
    """the first documents in gold order with their details (all of a small set)"""
    headline: dict[str, MetricValue]
    slices: dict[str, list[Slice]]
    config: StructureConfig
    statistics: StatisticsConfig
    """the slice and interval settings it was summarized under"""
    notes: list[str] = field(default_factory=list)
    columns: StructureColumns | None = None

    @property
    def count(self) -> int:
        """How many documents were scored (listed or not)."""
        return self.columns.count if self.columns is not None else len(self.documents)

    def field_paths(self) -> list[str]:
        return []

    def metrics(self, keys: Mapping[str, str] | None = None) -> dict[str, float]:
        """Flat metrics for MLflow: ``<metric>``, ``<metric>_ci_low``, ``<metric>_ci_high`` and
        per slice ``<metric>_by_<attribute>/<value>`` with its interval
        (``<metric>_ci_low_by_<attribute>/<value>``, …); families not computed are left out."""
        out: dict[str, float] = {}
        for name, m in self.headline.items():
            out[name] = m.value
            out[f"{name}_ci_low"] = m.ci_low
            out[f"{name}_ci_high"] = m.ci_high
        for attribute, slices in self.slices.items():
            for s in slices:
                for name, value in s.values.items():
                    out[slice_key(name, attribute, s.label)] = value
        return out

    @property
    def numeric_attributes(self) -> list[str]:
        """The slice attributes whose values are numbers (those a robustness curve suits)."""
        return [a for a, slices in self.slices.items() if slices and slices[0].x is not None]

    def curves(self) -> dict[str, Curves]:
        """Each numeric slice attribute's slices with the metrics they have (in the order of
        :data:`METRICS`): the metric-against-attribute curves of a logged run."""
        out = {}
        for attribute in self.numeric_attributes:
            slices = self.slices[attribute]
            names = [n for n in METRICS if any(n in s.values for s in slices)]
            title = f"Structure metrics by {attribute}"
            out[attribute] = Curves(title, names, list(slices), self.statistics.confidence)
        return out

    def frame_columns(self, start: int, stop: int) -> dict[str, Any]:
        """The structure values of the documents in rows [`start`, `stop`) (gold order), each
        prefixed ``structure/``: the slice attributes (``attribute/<name>``; lists and objects
        as JSON text), per metric its value, ``<metric>_num`` and ``<metric>_den`` (NaN where
        the document lacks it), then reading-order coverage and continuity (when some
        document has blocks)."""
        import numpy as np

        columns = self.columns
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
        return {f"{self.name}/{k}": v for k, v in out.items()}

    def to_dict(self) -> dict[str, Any]:
        return {
            "documents": self.count,
            "metrics": {name: m.to_dict() for name, m in self.headline.items()},
            "higher_is_better": {name: HIGHER_IS_BETTER[name] for name in self.headline},
            "slices": {
                a: [{"value": s.label, "documents": s.documents, **s.values} for s in slices]
                for a, slices in self.slices.items()
            },
            "notes": list(self.notes),
            "per_document": [d.to_dict() for d in self.documents],
            **(
                {"per_document_not_listed": self.count - len(self.documents)}
                if self.count > len(self.documents)
                else {}
            ),
            "config": self.config.model_dump(mode="json") | self.statistics.model_dump(mode="json"),
        }


def _scalar(value: Any) -> Any:
    """A frame-friendly attribute value: scalars kept, anything else as JSON text."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
