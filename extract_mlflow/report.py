"""The report of one evaluation: counts per field and per document, and the scores derived from
them (flat metrics for MLflow, a dict for JSON). Plain data: its renderings (markdown, a terminal
table, pandas frames) are functions of :mod:`extract_mlflow.views`.

Scores are always derived from summed counts (never averaged per document), and 0/0 is ``None``
("n/a"), never 0 and never 1. The report resamples nothing: the intervals and the per-slice
scores are computed by the evaluation (:mod:`extract_mlflow.evaluation.stats`,
:mod:`extract_mlflow.evaluation.slices`) and held here as data.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ._version import __version__
from .config import Config
from .core.counts import Counts, ratio
from .core.keys import field_key, field_keys
from .core.signature import signature_of
from .families import FAMILIES, Summary, by_name, section_of
from .fields.scorer import CATEGORIES, ErrorRecord

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import pandas as pd

    from .pages import LayoutResult, PageSummary

EXAMPLES_PER_FIELD = 5
_STATUSES = ("scored", "missing", "parse_failure")


@dataclass
class FieldResult:
    """One field (leaf path) over all documents."""

    path: str
    type: str
    counts: Counts
    errors: dict[str, int]
    examples: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            **self.counts.to_dict(),
            "errors": dict(self.errors),
            "examples": self.examples,
        }


@dataclass
class DocumentResult:
    """One gold document: its status, counts per field, and its mistakes."""

    id: str
    status: str  # "scored", "missing" (no prediction) or "parse_failure"
    counts: Counts
    fields: dict[str, list[int]]
    errors: list[ErrorRecord]
    reason: str | None = None
    layout: LayoutResult | None = None
    """how the page meets its layout profile (pages and profiled documents only)"""
    rows_gold: int | None = None
    rows_pred: int | None = None
    tokens: float | None = None
    latency_ms: float | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    """gold attributes named by --slice-by (for the per-slice metrics)"""
    position: int = -1
    """the document's place in the gold set (gold-line order, from 0; -1 when not scored from a
    gold set): the order every aggregate follows. Not part of :meth:`to_dict`."""

    @property
    def composite(self) -> float | None:
        """F1 × layout score: no layout, no score."""
        f1 = self.counts.f1
        if self.layout is None:
            return None
        return (f1 or 0.0) * self.layout.score

    def progress_line(self) -> str:
        """One line for the terminal: "doc: matched 95/266 gold cells, rows 19/38, ..."."""
        from .core.language import tr

        c = self.counts
        parts = [tr("progress.matched", doc_id=self.id, tp=c.tp, gold=c.tp + c.fn)]
        if self.rows_gold is not None or self.rows_pred is not None:
            parts.append(tr("progress.rows", pred=self.rows_pred or 0, gold=self.rows_gold or 0))
        if self.tokens is not None:
            parts.append(tr("progress.tokens", tokens=self.tokens))
        if self.layout is not None:
            layout = self.layout
            parts.append(
                tr("progress.layout", present=len(layout.present), required=layout.required)
            )
        if self.status != "scored":
            parts.append(tr(f"status.{self.status}") if self.status in _STATUSES else self.status)
        return ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "id": self.id,
            "status": self.status,
            **self.counts.to_dict(),
            "reason": self.reason,
        }
        if self.layout is not None:
            out["layout"] = self.layout.to_dict()
            out["composite"] = self.composite
        for key in ("rows_gold", "rows_pred", "tokens", "latency_ms"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


class DocumentTable(Protocol):
    """The documents of every evaluation, whatever its source, in gold order as columns
    (:class:`~extract_mlflow.evaluation.columns.DocumentColumns`): a sequence whose items are
    rebuilt on access, and what the report and its views read without rebuilding them."""

    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[DocumentResult]: ...
    def __getitem__(self, i: int) -> DocumentResult: ...
    @property
    def ids(self) -> Sequence[str]: ...
    @property
    def positions(self) -> npt.NDArray[np.int64]: ...
    def count_matrix(self) -> npt.NDArray[Any]:
        """(documents × 3) tp, fp, fn."""

    def statuses(self, start: int = 0, stop: int | None = None) -> list[str]: ...
    def reason_at(self, k: int) -> str | None: ...
    def token_values(self) -> list[float]: ...
    def latencies(self) -> list[float]: ...
    def ids_with(self, status: str) -> list[str]: ...
    def count_with(self, status: str) -> int: ...
    def with_layout(self) -> list[DocumentResult]: ...
    def worst(self, n: int) -> list[DocumentResult]: ...
    def field_blocks(self, paths: Sequence[str]) -> Iterator[tuple[int, npt.NDArray[np.int64]]]:
        """Per-document counts per field (3 columns per path), in blocks of documents."""

    def field_frame(self) -> pd.DataFrame:
        """One row per document and field: id, field, tp, fp, fn."""


@dataclass
class Report:
    """Everything one evaluation found. Build it with :func:`extract_mlflow.evaluate`."""

    documents: DocumentTable
    """in gold order, as columns (the same table from every source)"""
    fields: dict[str, FieldResult]
    config: Config
    skipped: list[str] = field(default_factory=list)
    unknown_ids: list[str] = field(default_factory=list)
    unattributed: list[str] = field(default_factory=list)
    """prediction lines without a usable id ("line 7: ..."): the first
    :data:`~extract_mlflow.io.loading.KEPT_LINES` of them"""
    unattributed_count: int = 0
    """how many such lines there were (when more than listed)"""
    gold_type_errors: dict[str, int] = field(default_factory=dict)
    gold_source: str = "<rows>"
    pred_source: str = "<rows>"
    gold_digest: str | None = None
    pred_digest: str | None = None
    scorer_version: str = __version__
    sources_digest: str | None = None
    """sha256 of the source texts used for text fidelity (None without sources)"""
    approvals_digest: str | None = None
    """sha256 of the reviewer approvals applied (None without approvals)"""
    canaries_digest: str | None = None
    """sha256 of the prompt-injection canaries looked for (None without canaries)"""
    profile: str | None = None
    """the layout profile given for every page (None: each gold line's topic)"""
    tokens_per_doc: float | None = None
    """Σ(input + output tokens) / documents from the predictions' `usage`; None if unrecorded"""
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """config rules that do nothing on this gold set (a path no gold field has, an unknown
    unit, a date format that parses no gold value and cannot be there for the predictions):
    likely typos; they depend on the config and the gold set only"""
    intervals: dict[str, float] = field(default_factory=dict)
    """`<metric>_ci_low` / `<metric>_ci_high` of micro precision, recall and F1: the seeded
    bootstrap over documents, filled by the evaluation"""
    slice_metrics: dict[str, float] = field(default_factory=dict)
    """`<metric>_by_<attribute>/<value>`: micro precision, recall and F1 of the documents of each
    --slice-by value, filled by the evaluation"""
    pages: PageSummary | None = None
    """the pages' results as columns (only when some document is a page or has a profile)"""
    families: dict[str, Summary] = field(default_factory=dict)
    """what the metric families that ran found (:mod:`extract_mlflow.families`), by name, in
    the order of their registry"""
    inferred_types: dict[str, str] = field(default_factory=dict)
    """field path -> the type inferred from *all* of its gold values (no ``type`` in the
    config): ``quantity`` where every gold value is a number with a unit ("1.2 kg")"""

    # -- pages -------------------------------------------------------------------------
    @property
    def layouts(self) -> list[DocumentResult]:
        """The listed documents that have a layout (pages scored against a profile): the
        first ones in gold order (every one of a smaller set; :attr:`pages` counts them all)."""
        if self.pages is None:
            return []
        return self.documents.with_layout()

    @property
    def layout_score(self) -> float | None:
        """Mean layout score over the documents with a profile; None without any."""
        return self.pages.layout_score if self.pages is not None else None

    @property
    def composite(self) -> float | None:
        """Micro F1 × mean layout score (the optimised score of page runs)."""
        layout = self.layout_score
        if layout is None:
            return None
        return (self.micro.f1 or 0.0) * layout

    @property
    def missing_sections(self) -> dict[str, int]:
        """Required section -> number of pages that lack it (most often missing first)."""
        return self.pages.missing_sections if self.pages is not None else {}

    def latency_ms(self, q: float) -> float | None:
        """The q-quantile (0..1) of the predictions' `latency_ms` (linear interpolation)."""
        values = sorted(self.documents.latencies())
        if not values:
            return None
        pos = q * (len(values) - 1)
        lo = int(pos)
        hi = min(lo + 1, len(values) - 1)
        return values[lo] + (values[hi] - values[lo]) * (pos - lo)

    def field_recall_lines(self) -> list[str]:
        """Per-field recall worst first, as matched/gold ("rows[].cat_conc 3/10")."""
        rows = [
            (f.counts.recall, p, f.counts.tp, f.counts.tp + f.counts.fn)
            for p, f in self.fields.items()
            if f.counts.tp + f.counts.fn
        ]
        rows.sort(key=lambda r: (r[0] if r[0] is not None else 0.0, r[1]))
        return [f"{p} {tp}/{gold}" for _, p, tp, gold in rows]

    # -- headline scores ---------------------------------------------------------------
    @property
    def micro(self) -> Counts:
        """Counts pooled over every field and document."""
        return Counts.total(f.counts for f in self.fields.values())

    @property
    def macro_f1(self) -> float | None:
        """Mean of the field F1 scores that are defined."""
        scores = [f.counts.f1 for f in self.fields.values() if f.counts.f1 is not None]
        return sum(scores) / len(scores) if scores else None

    @property
    def parse_failures(self) -> list[str]:
        """The gold documents whose prediction line could not be read."""
        return self.documents.ids_with("parse_failure")

    @property
    def unreadable_lines(self) -> int:
        """Prediction lines that could not be used: parse failures of gold documents plus
        the unattributed lines (no id could be recovered from them)."""
        return len(self.parse_failures) + self.unattributed_total

    @property
    def unattributed_total(self) -> int:
        """Prediction lines without a usable id, listed or not."""
        return max(self.unattributed_count, len(self.unattributed))

    @property
    def parse_failure_rate(self) -> float | None:
        """Unreadable prediction lines / documents they could belong to, in [0, 1].

        Numerator: the gold documents whose prediction is unreadable, plus every unattributed
        line. Denominator: the gold documents, plus the unattributed lines that cannot be the
        lost prediction of a gold document (those beyond the documents with no prediction at
        all). So a prediction file of garbage gives 1.0, and an extra garbage line in a
        complete file still counts. Example: 10 gold documents, 9 predicted, 1 broken line
        without an id -> 1/10; 10 predicted and 1 such line -> 1/11.
        """
        missing = self.documents.count_with("missing")
        extra = max(0, self.unattributed_total - missing)
        return ratio(self.unreadable_lines, len(self.documents) + extra)

    @property
    def errors(self) -> dict[str, int]:
        """Mistakes by category over all fields (every category listed, zeros included)."""
        out = dict.fromkeys(CATEGORIES, 0)
        for f in self.fields.values():
            for cat, n in f.errors.items():
                out[cat] += n
        return out

    def worst_documents(self, n: int = 10) -> list[DocumentResult]:
        """The documents with the most errors (FP + FN), ties by id."""
        return self.documents.worst(n)

    def signature_params(self) -> dict[str, str]:
        """The params that record how this evaluation was scored (``""``: an input it did not
        have), from which :meth:`signature` is made; every evaluation run logs them.

        Always the scorer version, the config digest (which covers the text key, the slices and
        every field rule) and the gold digest; then the layout profile, the digests of the
        source texts, of the approvals and of the canaries, then each metric family's own
        params (:meth:`~extract_mlflow.families.base.Family.params`) and the definitions of
        the families that ran.
        """
        own = {}
        for f in FAMILIES:
            own.update(f.params(section_of(self.config, f), f.name in self.families))
        return {
            "scorer_version": self.scorer_version,
            "config_digest": self.config.digest(),
            "gold_digest": self.gold_digest or "",
            "layout_profile": self.profile or "",
            "sources_digest": self.sources_digest or "",
            "approvals_digest": self.approvals_digest or "",
            "canaries_digest": self.canaries_digest or "",
            **own,
            "family_definitions": self.family_definitions(),
        }

    def family_definitions(self) -> str:
        """``name:definition`` of each metric family that ran and has a definition,
        comma-separated (``""``)."""
        parts = []
        for name in self.families:
            family = by_name(name)
            definition = family.definition(section_of(self.config, family)) if family else ""
            if definition:
                parts.append(f"{name}={definition}")
        return ",".join(parts)

    def signature(self) -> str:
        """What makes two evaluations comparable: every input that changes a number (the parts
        of :meth:`signature_params` that it had), so runs scored without an optional input keep
        the signature they always had.

        >>> from extract_mlflow import evaluate
        >>> evaluate([{"id": 1, "a": 1}], [{"id": 1, "a": 1}]).signature()  # doctest: +ELLIPSIS
        'extract_mlflow:...|config:...|gold:...'
        """
        return signature_of(self.signature_params())

    def metrics(self) -> dict[str, float]:
        """The flat metric dict logged to MLflow (the keys of :mod:`extract_mlflow.core.keys`); n/a
        scores are left out."""
        micro = self.micro
        out: dict[str, float | None] = {
            "precision": micro.precision,
            "recall": micro.recall,
            "f1": micro.f1,
            "macro_f1": self.macro_f1,
            "parse_failure_rate": self.parse_failure_rate,
            "documents": float(len(self.documents)),
            "tokens_per_doc": self.tokens_per_doc,
            "layout_score": self.layout_score,
            "composite": self.composite,
            "latency_p50_ms": self.latency_ms(0.5),
            "latency_p95_ms": self.latency_ms(0.95),
        }
        keys = self.field_keys()
        for path, f in self.fields.items():
            out[field_key("field_f1", path, keys)] = f.counts.f1
            out[field_key("field_precision", path, keys)] = f.counts.precision
            out[field_key("field_recall", path, keys)] = f.counts.recall
        merged = {k: float(v) for k, v in out.items() if v is not None}
        merged.update(self.intervals)
        merged.update(self.slice_metrics)
        for summary in self.families.values():
            merged.update(summary.metrics(keys))
        return merged

    def field_keys(self) -> dict[str, str]:
        """Field path -> the suffix of its metric keys (``field_f1/<suffix>``, …): distinct
        for distinct paths and valid for MLflow; gold paths keep a readable suffix first."""
        paths = [*self.fields, *(p for s in self.families.values() for p in s.field_paths())]
        gold = {p for p, f in self.fields.items() if f.counts.tp + f.counts.fn}
        return field_keys(paths, gold)

    # -- data --------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Everything as plain JSON-ready data (the `--format json` output)."""
        return {
            "documents": len(self.documents),
            "micro": self.micro.to_dict(),
            "macro_f1": self.macro_f1,
            "fields": {p: f.to_dict() for p, f in self.fields.items()},
            "errors": self.errors,
            "parse_failures": self.parse_failures,
            "parse_failure_rate": self.parse_failure_rate,
            "tokens_per_doc": self.tokens_per_doc,
            "latency_ms": {"p50": self.latency_ms(0.5), "p95": self.latency_ms(0.95)},
            "layout": self._layout_dict(),
            "field_recall": self.field_recall_lines(),
            "notes": self.notes,
            "warnings": self.warnings,
            **self._top_level_families(),
            **self._families_dict(),
            "unknown_ids": self.unknown_ids,
            "unattributed_lines": self.unattributed,
            **self._unlisted(),
            "skipped": self.skipped,
            **({"inferred_types": self.inferred_types} if self.inferred_types else {}),
            "gold_type_errors": self.gold_type_errors,
            "worst_documents": [d.to_dict() for d in self.worst_documents()],
            "metrics": self.metrics(),
            "field_keys": self.field_keys(),
            "signature": self.signature(),
            "gold": {"source": self.gold_source, "sha256": self.gold_digest},
            "predictions": {"source": self.pred_source, "sha256": self.pred_digest},
            "config_digest": self.config.digest(),
            "scorer_version": self.scorer_version,
        }

    def family(self, name: str) -> Any:
        """What the metric family `name` found (its summary), or None when it did not run."""
        return self.families.get(name)

    def _top_level_families(self) -> dict[str, Any]:
        """The sections of the families with a top-level key of their own (``null`` when the
        family did not run)."""
        out = {}
        for f in FAMILIES:
            if f.report_key is not None:
                summary = self.families.get(f.name)
                out[f.report_key] = summary.to_dict() if summary is not None else None
        return out

    def _families_dict(self) -> dict[str, Any]:
        """``families``: each other metric family's summary (only when some family ran)."""
        keyed = {f.name for f in FAMILIES if f.report_key is not None}
        found = {name: s.to_dict() for name, s in self.families.items() if name not in keyed}
        return {"families": found} if found else {}

    def _unlisted(self) -> dict[str, int]:
        """``unattributed_lines_not_listed``: how many such lines the list leaves out (only
        when it leaves some out)."""
        n = self.unattributed_total - len(self.unattributed)
        return {"unattributed_lines_not_listed": n} if n else {}

    def _layout_dict(self) -> dict[str, Any] | None:
        """The pages' scores and the listed pages (``documents_not_listed``: how many more
        there are, only when there are more)."""
        docs = self.layouts
        if not docs or self.pages is None:
            return None
        more = self.pages.not_listed
        return {
            "layout_score": self.layout_score,
            "composite": self.composite,
            "documents": {
                d.id: {
                    **(d.layout.to_dict() if d.layout else {}),
                    "composite": d.composite,
                    "rows_gold": d.rows_gold,
                    "rows_pred": d.rows_pred,
                }
                for d in docs
            },
            **({"documents_not_listed": more} if more else {}),
        }
