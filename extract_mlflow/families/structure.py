"""Document structure as a metric family: TEDS of tables, reading order, ANLS of regions and
section boundaries (:mod:`extract_mlflow.structure`, which defines every metric).

Configured in ``[structure]`` (:class:`~extract_mlflow.structure.section.StructureConfig`, a
field of the config since before the seam). A document whose gold line has one of the section's
keys is scored for structure; once one has, every document of the evaluation has a structure
record (the others' is empty: their slice attributes). Beyond plain ratios it keeps its own
state (:class:`StructurePart`): each metric's value and interval over the documents that have
it, the intervals of every slice, the details and notes of the first documents. Its section of
the JSON report is the top-level ``structure`` key, its signature params ``teds_definition``
and ``anls_definition``, as before the seam.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..core.language import tr
from ..core.statistics import StatisticsConfig
from ..core.text import capped, capped_lines, escape_pipes, fmt
from ..structure.section import METRICS, StructureConfig
from .base import Documents, Statistics, Tools

if TYPE_CHECKING:
    from ..core.curves import MetricValue
    from ..structure.records import StructureRecords
    from ..structure.score import Slice, StructureSummary


class StructurePart:
    """The structure family's state over one part of an evaluation: the records of the
    documents with a structure key (from the first on: the scorers are imported then)."""

    def __init__(self, section: StructureConfig, statistics: StatisticsConfig) -> None:
        self.section = section
        self.statistics = statistics
        self.keys = section.input_keys()
        self.records: StructureRecords | None = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StructurePart):
            return False
        mine = (self.section, self.statistics, self.records)
        return mine == (other.section, other.statistics, other.records)

    def _records(self) -> StructureRecords:
        if self.records is None:
            from ..structure.records import StructureRecords  # the scorers: for structure only

            self.records = StructureRecords(self.statistics.slice_by)
        return self.records

    def update(
        self,
        position: int,
        doc_id: str,
        gold: Mapping[str, Any],
        pred: Mapping[str, Any] | None,
        failure: str | None,
        source: str | None,
    ) -> None:
        if any(key in gold for key in self.keys):
            from ..structure.score import score_document

            slice_by = self.statistics.slice_by
            self._records().add(
                position, score_document(doc_id, gold, pred, self.section, slice_by)
            )

    def merge(self, other: StructurePart) -> StructurePart:
        if other.records is not None:
            self._records().merge(other.records)
        return self

    def summary(self, documents: Documents, inputs: Any, tools: Tools) -> StructureSummary | None:
        """None when no document had a structure key; else every document's record: those
        without a key get their empty record (slice attributes only) as the scorer gives it (a
        part that met no structure key kept none, and the records merge in any order)."""
        if self.records is None:
            return None
        from ..structure.score import DocumentStructure as Empty

        records = self.records
        have = set(records.positions)
        attributes, slice_by = documents.attributes, self.statistics.slice_by
        for k, position in enumerate(documents.positions.tolist()):
            if position not in have:
                values = attributes[k] if attributes is not None else {}
                records.add(position, Empty(documents.ids[k], {a: values.get(a) for a in slice_by}))
        return records.summary(self.section, self.statistics, tools)


class Structure:
    """The family's declarations (:class:`~extract_mlflow.families.base.Family`)."""

    name: str = "structure"
    title: str = "Document structure"
    section: type[BaseModel] = StructureConfig
    higher_is_better: bool = True
    metric_names: tuple[str, ...] = METRICS
    reversed_names: tuple[str, ...] = ()
    report_key: str | None = "structure"

    def active(self, section: StructureConfig, setup: Any) -> bool:
        return True  # whether it reports is decided by the gold lines' keys

    def definition(self, section: StructureConfig) -> str:
        return ""  # its definitions are its own params (:meth:`params`)

    def keys(self, section: StructureConfig) -> tuple[str, ...]:
        return section.input_keys()

    def params(self, section: StructureConfig, ran: bool) -> dict[str, str]:
        """The TEDS definition (and the ANLS rule when it is the DocVQA script's) when
        structure metrics are computed."""
        teds = section.teds if ran else ""
        anls = "official" if ran and section.anls == "official" else ""
        return {"teds_definition": teds, "anls_definition": anls}

    def start(self, section: StructureConfig, setup: Any) -> StructurePart:
        return StructurePart(section, setup.config.statistics)

    def document(
        self, gold: Mapping[str, Any], pred: Mapping[str, Any] | None, section: StructureConfig
    ) -> Statistics:
        """The statistics of one document (what :class:`StructurePart` keeps per document)."""
        if not any(key in gold for key in section.input_keys()):
            return {}
        from ..structure.score import score_document

        return score_document(str(gold.get("id", "")), gold, pred, section).stats()

    def markdown(self, summary: StructureSummary) -> list[str]:
        """The "Document structure" section: the headline table, the slices with their
        intervals, the notes."""
        lines = [tr("md.structure"), "", *_headline_table(summary.headline)]
        for attribute, slices in summary.slices.items():
            lines += ["", tr("md.by", attribute=attribute), "", *_slice_table(attribute, slices)]
        if summary.notes:
            notes = capped_lines(summary.notes)
            lines += ["", tr("md.structure_notes"), "", *(f"- {n}" for n in notes)]
        return lines

    def table(self, summary: StructureSummary) -> list[str]:
        """Structure metrics with their 95% intervals, one per line."""
        metrics = summary.metrics()
        lines = [tr("table.structure")]
        for name in sorted(k for k in metrics if "_ci_" not in k and "_by_" not in k):
            low, high = metrics.get(f"{name}_ci_low"), metrics.get(f"{name}_ci_high")
            interval = f"  [{fmt(low)}, {fmt(high)}]" if low is not None else ""
            lines.append(f"  {name:<20} {fmt(metrics[name])}{interval}")
        return lines


def _headline_table(headline: Mapping[str, MetricValue]) -> list[str]:
    if not headline:
        return [tr("md.no_structure")]
    lines = [tr("md.structure_head"), "|---|---:|---|---:|"]
    for name, m in headline.items():
        ci = f"{fmt(m.ci_low)}–{fmt(m.ci_high)}" + (tr("md.degenerate") if m.degenerate else "")
        lines.append(f"| {name} | {fmt(m.value)} | {ci} | {m.documents} |")
    return lines


def _slice_table(attribute: str, slices: Sequence[Slice]) -> list[str]:
    names = [n for n in METRICS if any(n in s.values for s in slices)]
    cell = escape_pipes(attribute)
    lines = [f"| {cell} | {tr('md.documents_col')} | " + " | ".join(names) + " |"]
    lines.append("|---|---:|" + "---:|" * len(names))
    shown, more = capped(slices)
    for s in shown:
        values = " | ".join(_with_interval(s.values, n) for n in names)
        label = escape_pipes(s.label)
        lines.append(f"| {label} | {s.documents} | {values} |")
    return lines + (["", more] if more else [])


def _with_interval(values: Mapping[str, float], name: str) -> str:
    """``0.625 (0.500–0.750)``: a slice's value with its bootstrap interval; ``n/a`` without."""
    if name not in values:
        return fmt(None)
    low, high = values[f"{name}_ci_low"], values[f"{name}_ci_high"]
    return f"{fmt(values[name])} ({fmt(low)}–{fmt(high)})"


STRUCTURE = Structure()
