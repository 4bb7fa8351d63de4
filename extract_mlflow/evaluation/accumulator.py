"""An evaluation as mergeable statistics: update per gold document, merge any partition, then
turn the statistics into a :class:`~extract_mlflow.report.Report`.

::

    Setup (decided by the config, before the pass) Inputs (facts about the files)
        │                                               │
    DocumentInput ──update──► record + side state       │
        (any part, any order)      │                    │
                          merge (any order) ──► result ─┴─► Report

Why "merged == one pass" holds exactly, for any partition and any order:

1. :meth:`Evaluation.update` does the expensive per-document work (field alignment, page
   parsing, text fidelity, structure scores) and keeps a *record* carrying the document's
   *position* (the index of its gold line, assigned before any partition).
2. Besides the records, the state is exact: integer sums, sets, minima and bounded "k smallest"
   lists with unique keys (:mod:`extract_mlflow.evaluation.field_counts`). No float is summed
   during the pass.
3. :meth:`Evaluation.merge` checks both sides share one :class:`Setup` and disjoint positions,
   concatenates records and combines the side state (sum, union, min, k smallest): commutative
   and associative.
4. :meth:`Evaluation.result` sorts the records by position and runs the one-pass aggregation
   over them: every float sum, quantile and bootstrap resample sees the same numbers in the same
   order (a resample is a multiset of positions), so every number is bit-identical.

The state is plain data (picklable): parts can be computed in worker processes and merged by the
caller. The scorer and its caches are rebuilt from the :class:`Setup` where needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from ..core.counts import Counts
from ..core.paths import document_leaves, lookup
from ..fields.normalize import Comparators
from ..fields.scorer import PARSE_FAILURE, DocCounts, FieldScorer
from ..report import DocumentResult, Report
from .compact import CompactRecords, RecordSink, document_table
from .config_checks import ConfigUse
from .families import TOOLS, family_parts
from .field_counts import FieldCounts, Smallest, TypeSamples
from .inputs import Extras, Inputs, Setup, content_digest
from .records import latency_ms, tokens_per_doc, usage_tokens
from .slices import count_slice_metrics
from .stats import count_intervals

if TYPE_CHECKING:
    from ..config import Config
    from ..families.base import FamilyPart
    from ..pages import Prepared
    from .pages import PageRecords

__all__ = [
    "DocumentInput",
    "Evaluation",
    "Extras",
    "Inputs",
    "Setup",
    "Smallest",
    "TypeSamples",
    "content_digest",
]


class DocumentInput(NamedTuple):
    """One gold document and what belongs to it."""

    position: int
    """the index of its gold line: the order every result replays"""
    id: str
    gold: dict[str, Any]
    pred: dict[str, Any] | None
    failure: str | None = None
    """why its prediction line is unreadable (a parse failure), else None"""
    source: str | None = None
    """its source text (text fidelity), if any"""


@dataclass
class _Tools:
    """The working objects of a part (caches, compiled rules) and the config values read for
    every document: rebuilt from the setup, never merged."""

    scorer: FieldScorer
    pages: bool
    """a document may be a page or have a layout profile (else no page check at all)"""
    text_key: str
    slice_by: tuple[str, ...]

    # Methods, not cached properties: compiled by mypyc, a cached property misbehaves.
    def prepare(
        self,
        gold: dict[str, Any],
        pred: dict[str, Any] | None,
        config: Config,
        profile: str | None,
        notes: list[str],
    ) -> Prepared:
        """:func:`~extract_mlflow.pages.prepare_document`, imported by the first page."""
        from ..pages import prepare_document

        return prepare_document(gold, pred, config, profile, notes)


_POSITION = attrgetter("position")
_FOLD_EVERY = 2048
_STATE: tuple[str, ...] = ("documents", "positions", "sink", "compact", "notes", "fields")
_STATE += (
    "config_use",
    "pages",
    "families",
)  # what an Evaluation pickles besides its setup


class Evaluation:
    """An evaluation as mergeable statistics (see the module): :meth:`update` per gold
    document, :meth:`merge` the parts, :meth:`result` → Report, identical to one pass.

    >>> from extract_mlflow.config import Config
    >>> from extract_mlflow.io.loading import gold_from_rows, predictions_from_rows
    >>> gs = gold_from_rows([{"id": "a", "n": 1}, {"id": "b", "n": 2}], "id")
    >>> ps = predictions_from_rows([{"id": "a", "n": 1}, {"id": "b", "n": 3}], "id")
    >>> setup = Setup.of(Config())
    >>> parts = [Evaluation(setup), Evaluation(setup)]
    >>> for i, (doc_id, gold) in enumerate(gs.docs.items()):
    ...     _ = parts[i].update(DocumentInput(i, doc_id, gold, ps.docs.get(doc_id)))
    >>> parts[1].merge(parts[0]).result(Inputs.of(gs, ps)).micro
    Counts(tp=1, fp=1, fn=1)
    """

    def __init__(self, setup: Setup, sink: RecordSink | None = None) -> None:
        """`sink`: make the evaluation compact (:mod:`~extract_mlflow.evaluation.compact`):
        each record's counts per path go to `sink` and the record itself is not kept."""
        self.setup = setup
        cfg = setup.config
        self.documents: list[DocumentResult] = []
        self.positions: set[int] = set()
        self.sink = sink
        self.compact = (
            CompactRecords(slices=bool(cfg.statistics.slice_by)) if sink is not None else None
        )
        self.notes: list[tuple[int, str]] = []
        self.fields = FieldCounts()
        self.config_use = ConfigUse.of(cfg)
        self.pages: PageRecords | None = None
        """the pages' results (from the first page or profiled document on)"""
        self.families: dict[str, FamilyPart] = family_parts(setup)
        """the state of each active metric family (:mod:`extract_mlflow.families`)"""
        self._tools: _Tools | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its setup and its state, attribute by attribute (compiled by mypyc, it
        has no __dict__). Its tools, caches and closures, are rebuilt on the next update."""
        return Evaluation, (self.setup,), {name: getattr(self, name) for name in _STATE}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)

    def _build_tools(self) -> _Tools:
        setup, cfg = self.setup, self.setup.config
        scorer = FieldScorer(cfg, setup.family_keys, state=self.fields.state, mixed=setup.mixed)
        pages = bool(cfg.layout.profiles) or setup.profile is not None
        slice_by = tuple(cfg.statistics.slice_by)
        self._tools = _Tools(scorer, pages, cfg.text_key, slice_by)
        return self._tools

    # -- the pass ------------------------------------------------------------------------
    def update(self, doc: DocumentInput) -> DocumentResult:
        """Score one gold document into this part; its record (the field family's)."""
        position, doc_id, gold, pred, _, source = doc
        if self.compact is None and position in self.positions:
            raise ValueError(f"document position {position} was already scored")
        tools = self._tools or self._build_tools()
        record = self._record(doc, tools)
        if self.config_use is not None:
            self.config_use.update(gold)
        for part in self.families.values():
            part.update(position, doc_id, gold, pred, doc.failure, source)
        if (
            record.layout is not None
            or record.rows_gold is not None
            or record.rows_pred is not None
        ):
            self._pages().add(record)
        if self.compact is not None and self.sink is not None:
            self.compact.add(record)
            self.sink.add(position, record.fields)
            if len(self.fields.pending) >= _FOLD_EVERY:
                self.fields.fold()  # the mistakes of the records are dropped with them
        else:
            self.positions.add(position)
            self.documents.append(record)
        return record

    def _pages(self) -> PageRecords:
        if self.pages is None:
            from .pages import PageRecords  # with the page parser: for pages only

            self.pages = PageRecords()
        return self.pages

    def _record(self, doc: DocumentInput, tools: _Tools) -> DocumentResult:
        """The field counts of one document (a page is scored on its rows), with its layout,
        tokens, latency and slice attributes."""
        position, doc_id, gold_doc, pred_doc, failure, _ = doc
        prep: Prepared | None = None  # most documents are plain JSON: no page, no profile
        if tools.pages or (pred_doc is not None and tools.text_key in pred_doc):
            notes: list[str] = []
            prep = tools.prepare(gold_doc, pred_doc, self.setup.config, self.setup.profile, notes)
            self.notes.extend((position, n) for n in notes)
        gold, pred = (prep.gold, prep.pred) if prep is not None else (gold_doc, pred_doc)
        if failure is not None:
            acc = DocCounts()
            tools.scorer.expand_gold(gold, PARSE_FAILURE, acc)
            status = "parse_failure"
        else:
            acc = tools.scorer.score(gold, pred)
            status = "scored" if pred_doc is not None else "missing"
        record = _document(doc, status, acc)
        if prep is not None:
            record.layout, record.rows_gold, record.rows_pred = (
                prep.layout,
                prep.rows_gold,
                prep.rows_pred,
            )
        if tools.slice_by:
            record.attributes = {a: lookup(gold_doc, a) for a in tools.slice_by}
        if pred_doc is not None and ("usage" in pred_doc or "latency_ms" in pred_doc):
            record.tokens, record.latency_ms = usage_tokens(pred_doc), latency_ms(pred_doc)
        fields = self.fields
        fields.add(record)
        if prep is not None and prep.gold is not gold_doc:  # its other gold keys: attributes
            id_key = self.setup.config.id_key
            paths = {leaf.path for leaf in document_leaves(gold_doc, {id_key})}
            fields.samples.offer(doc_id, gold_doc, paths)
        else:  # every gold leaf is counted TP or FN: "has a gold value" is tp + fn > 0
            fields.offer_counted(doc_id, gold_doc, acc.counts)
        return record

    # -- merging -------------------------------------------------------------------------
    def merge(self, other: Evaluation) -> Evaluation:
        """Add `other`'s documents and statistics to this part and return it (`other` is left
        as it is). Both must share one setup and have scored disjoint documents."""
        if other.setup is not self.setup and other.setup != self.setup:
            raise ValueError("cannot merge evaluations with a different setup")
        if (self.compact is None) != (other.compact is None):
            raise ValueError("cannot merge a compact evaluation with a retaining one")
        if self.compact is not None and other.compact is not None:
            both = set(self.compact.overlap(other.compact))
        else:
            both = self.positions & other.positions
        if both:
            raise ValueError(f"cannot merge: document position(s) {sorted(both)[:5]} in both")
        if self.compact is not None and other.compact is not None and self.sink is not None:
            self.compact.merge(other.compact)
            self.sink.merge(other.sink)
        self.documents.extend(other.documents)
        self.positions |= other.positions
        self.notes.extend(other.notes)
        self.fields.merge(other.fields)
        if self.config_use is not None and other.config_use is not None:
            self.config_use.merge(other.config_use)
        if other.pages is not None:
            self._pages().merge(other.pages)
        for name, state in other.families.items():
            self.families[name].merge(state)
        return self

    def rescored_setup(self) -> Setup | None:
        """The setup to score these documents again on, or None when this pass stands: a
        pass that met paths whose gold values are partly measurements, not known to its setup,
        read those measurements as quantities, and every gold value of a path decides its type
        (:class:`~extract_mlflow.fields.normalize.Comparators`). Scored again on the returned
        setup, the same documents give the same mixed paths: one more pass at most."""
        mixed = self.fields.state.mixed()
        if mixed <= self.setup.mixed:
            return None
        return replace(self.setup, mixed=self.setup.mixed | mixed)

    # -- the report ----------------------------------------------------------------------
    def result(self, inputs: Inputs) -> Report:
        """The report: every aggregate computed over the records in gold order."""
        setup, cfg = self.setup, self.setup.config
        pages = self.pages.summary() if self.pages is not None else None
        if self.compact is not None:
            documents = self.compact.columns(self.sink, pages)
        else:  # the records as the same table, their field counts and mistakes beside it
            documents = document_table(sorted(self.documents, key=_POSITION), pages)
        state = self.fields.state
        report = Report(
            documents=documents,
            fields=self.fields.fields(Comparators(cfg, setup.mixed), cfg.id_key),
            inferred_types=dict.fromkeys(state.quantities(), "quantity"),
            config=cfg,
            skipped=sorted(state.skipped | {p for p, r in cfg.fields.items() if r.ignore}),
            unknown_ids=list(inputs.unknown_ids),
            unattributed=list(inputs.unattributed),
            unattributed_count=inputs.unattributed_count,
            gold_type_errors=dict(sorted(state.gold_type_errors.items())),
            gold_source=inputs.gold_source,
            pred_source=inputs.pred_source,
            gold_digest=inputs.gold_digest,
            pred_digest=inputs.pred_digest,
            sources_digest=inputs.sources_digest,
            approvals_digest=inputs.approvals_digest,
            canaries_digest=inputs.canaries_digest,
            profile=setup.profile,
            tokens_per_doc=tokens_per_doc(documents),
            notes=self._notes(documents),
            warnings=self.config_use.warnings(cfg) if self.config_use is not None else [],
            pages=pages,
        )
        report.intervals = count_intervals(documents.count_matrix(), report.micro, cfg.statistics)
        report.slice_metrics = count_slice_metrics(documents, cfg.statistics)
        for name, part in self.families.items():
            summary = part.summary(documents, inputs, TOOLS)
            if summary is not None:
                report.families[name] = summary
        return report

    def _notes(self, documents: Sequence[DocumentResult]) -> list[str]:
        """The documents' notes in gold order, then the slice attributes no document has and
        the fields not inferred a quantity for want of one gold value."""
        notes = [n for _, n in sorted(self.notes, key=itemgetter(0))]
        for attribute in self.setup.config.statistics.slice_by:
            if all(d.attributes.get(attribute) is None for d in documents):
                notes.append(f"slice attribute '{attribute}': no gold document has it (no slices)")
        for path in sorted(self.fields.state.mixed()):
            notes.append(
                f"`{path}`: not inferred a quantity, as some of its gold values are numbers with "
                "a unit and some are not (a type in the config decides)"
            )
        return notes


def _document(doc: DocumentInput, status: str, acc: DocCounts) -> DocumentResult:
    columns = tuple(zip(*acc.counts.values(), strict=True))  # (tps, fps, fns), in C
    tp, fp, fn = map(sum, columns) if columns else (0, 0, 0)
    return DocumentResult(
        doc.id,
        status,
        Counts(tp, fp, fn),
        acc.counts,
        acc.errors,
        doc.failure,
        position=doc.position,
    )
