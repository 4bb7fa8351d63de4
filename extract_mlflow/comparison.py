"""Compare a candidate run with a baseline run: deltas, bootstrap intervals, gates, flips. Pure.

Works on plain data (metric mappings, per-document count frames, signature strings); fetching
them from a tracking server is the tracking module's job.

>>> from extract_mlflow.comparison import build_comparison
>>> gates = [{"metric": "f1", "max_drop": 0.02}]
>>> same = {"baseline_signature": "sig", "candidate_signature": "sig"}
>>> result = build_comparison({"f1": 0.80}, {"f1": 0.79}, gates=gates, **same)
>>> result.passed, round(result.rows[0].delta, 3)
(True, -0.01)

A comparison is a verdict only when at least one check was evaluated: with no gate, or only
change checks and no baseline, :attr:`Comparison.passed` is False and
:attr:`Comparison.exit_code` is 2 ("no gate was evaluated"). A ``significant`` gate needs at
least ``min_documents`` paired documents (default 30): a bootstrap interval over fewer is too
wide to tell a real drop from noise, so such a gate is refused (GateError), not passed.

A document is *fully correct* when it was scored (not missing, not a parse failure) with at least
one true positive and no false positive or negative. Documents that flip between fully correct
and not are listed both ways; the most regressed documents are those whose F1 fell the most
(ties: most new errors, then id), among those whose F1 fell or whose errors (FP + FN) rose.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .core.keys import keys_from_frame, resolve_metric
from .core.signature import signature_difference
from .errors import GateError, InputError
from .evaluation.paired import Bootstrap, DocumentChange, DocumentFlips, paired_view
from .evaluation.stats import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, Interval
from .flips import Flip
from .gate_checks import Tally, evaluate_gates, tally_checks
from .gates import Gate, GateResult, GatesLike, coerce_gates, higher_is_better

if TYPE_CHECKING:
    import pandas as pd

    from .report import Report

TOP_DOCUMENTS = 10
DEFAULT_MIN_DOCUMENTS = 30  # paired documents a `significant` gate needs
EXIT_UNCHECKED = 2  # a verdict with no evaluated check: the CLI's "bad input" code
HEADLINE = (
    "f1",
    "precision",
    "recall",
    "macro_f1",
    "composite",
    "layout_score",
    "parse_failure_rate",
    "bleu_proxy",
    "groundedness",
    "hallucination_rate",
    "tokens_per_doc",
    "documents",
)
_FIELD_ORDER = ("field_f1/", "field_precision/", "field_recall/")


class IncomparableRunsError(InputError):
    """The two runs were scored differently (gold set, config or scorer version)."""


@dataclass(frozen=True)
class ScoredRun:
    """What a comparison needs of one run: its metrics, its per-document counts frame
    (``eval/documents.parquet``; optional, but without it there are no intervals or flips),
    its signature (of a logged run: recomputed from its params), and a label (run id or ref)
    for the views."""

    metrics: Mapping[str, float]
    documents: pd.DataFrame | None = None
    signature: str | None = None
    ref: str | None = None

    @classmethod
    def from_report(cls, report: Report, ref: str | None = None) -> ScoredRun:
        from .evaluation.records import counts_frame

        return cls(report.metrics(), counts_frame(report), report.signature(), ref)


@dataclass(frozen=True, slots=True)
class MetricRow:
    """One metric on both sides; the interval fields are set for bootstrapped metrics."""

    metric: str
    baseline: float | None
    candidate: float | None
    higher_is_better: bool
    interval: Interval | None = None

    @property
    def delta(self) -> float | None:
        if self.baseline is None or self.candidate is None:
            return None
        return self.candidate - self.baseline

    @property
    def worsening(self) -> float | None:
        """The delta turned so that positive is worse (for sorting worst first)."""
        d = self.delta
        return None if d is None else (-d if self.higher_is_better else d)

    def to_dict(self) -> dict[str, Any]:
        iv = self.interval
        return {
            "metric": self.metric,
            "baseline": self.baseline,
            "candidate": self.candidate,
            "delta": self.delta,
            "ci_low": iv.low if iv else None,
            "ci_high": iv.high if iv else None,
            "p_value": iv.p_value if iv else None,
            "higher_is_better": self.higher_is_better,
        }


@dataclass(frozen=True, slots=True)
class LoggedComparison:
    """Where a comparison is stored on the candidate's run: the artifact folder
    ``eval/comparisons/<baseline run id>/<UTC time>`` (``none`` for no baseline run), the
    baseline run id and the time (``20260102T030405.678901Z``), one folder per comparison."""

    path: str
    baseline_run: str
    logged_at: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "baseline_run": self.baseline_run, "logged_at": self.logged_at}


@dataclass(frozen=True)
class Comparison:
    """The outcome of comparing a candidate run with a baseline run (or with no baseline)."""

    rows: tuple[MetricRow, ...]
    gates: tuple[GateResult, ...]
    baseline_ref: str | None = None
    candidate_ref: str | None = None
    has_baseline: bool = True
    comparable: bool = True
    broke: tuple[str, ...] = ()  # fully correct in the baseline, not in the candidate
    fixed: tuple[str, ...] = ()  # the reverse
    regressed: tuple[DocumentChange, ...] = ()
    paired: int | None = None  # documents in both frames (None: no frames)
    baseline_only: tuple[str, ...] = ()
    candidate_only: tuple[str, ...] = ()
    resamples: int = DEFAULT_RESAMPLES
    seed: int | None = 0
    confidence: float = DEFAULT_CONFIDENCE
    notes: tuple[str, ...] = field(default_factory=tuple)
    flips: tuple[Flip, ...] | None = field(default=None, compare=False, repr=False)
    """`fixed` and `broke` with their changed fields, when both runs' per-document counts were
    read (the comparison page lists them); None: the ids alone"""
    logged_as: LoggedComparison | None = field(default=None, compare=False)
    """where this comparison is stored on the candidate's run (None: not logged)"""
    earlier: tuple[LoggedComparison, ...] = field(default=(), compare=False)
    """the comparisons stored on the candidate's run before this one, newest first"""

    @property
    def tally(self) -> Tally:
        """The checks decided, failed and skipped (and why): what every headline counts."""
        return tally_checks(self.gates)

    @property
    def evaluated(self) -> int:
        """How many checks were decided (passed or failed); skipped checks do not count."""
        return self.tally.checked

    @property
    def checked(self) -> bool:
        """At least one check was evaluated: the comparison is a verdict."""
        return self.evaluated > 0

    @property
    def passed(self) -> bool:
        """At least one check was evaluated and no gate failed (False with no gates)."""
        return self.checked and all(g.passed for g in self.gates)

    @property
    def exit_code(self) -> int:
        """0 when every gate passed, 1 when one failed, 2 when no check was evaluated."""
        if not self.checked:
            return EXIT_UNCHECKED
        return 0 if self.passed else 1

    def unchecked_reason(self) -> str:
        """Why no gate was evaluated (one line), for the error the CLI prints."""
        from .core.language import tr

        if not self.gates:
            return tr("cmp.no_gate_given")
        skipped = sorted({s for g in self.gates for s in g.skipped})
        return tr("cmp.all_skipped", reasons="; ".join(skipped))

    @property
    def failed_gates(self) -> list[GateResult]:
        return [g for g in self.gates if not g.passed]

    def row(self, metric: str) -> MetricRow | None:
        return next((r for r in self.rows if r.metric == metric), None)

    def to_dict(self) -> dict[str, Any]:
        """Everything as JSON-ready data (NaN becomes None)."""
        data: dict[str, Any] = _clean(
            {
                "passed": self.passed,
                "evaluated_checks": self.evaluated,
                "checks": self.tally.to_dict(),
                "baseline": self.baseline_ref,
                "candidate": self.candidate_ref,
                "has_baseline": self.has_baseline,
                "comparable": self.comparable,
                "gates": [g.to_dict() for g in self.gates],
                "failures": [r for g in self.failed_gates for r in g.reasons],
                "metrics": [r.to_dict() for r in self.rows],
                "documents": {
                    "paired": self.paired,
                    "baseline_only": list(self.baseline_only),
                    "candidate_only": list(self.candidate_only),
                    "broke": list(self.broke),
                    "fixed": list(self.fixed),
                    "most_regressed": [d.to_dict() for d in self.regressed],
                },
                "bootstrap": {
                    "resamples": self.resamples,
                    "seed": self.seed,
                    "confidence": self.confidence,
                },
                "notes": list(self.notes),
                "logged_as": self.logged_as.to_dict() if self.logged_as else None,
                "earlier": [e.to_dict() for e in self.earlier],
            }
        )
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2) + "\n"

    def to_markdown(self) -> str:
        """Markdown for a CI job summary: verdict, failing gates, metrics, flips."""
        from .views.comparison import comparison_markdown

        return comparison_markdown(self)

    def to_table(self) -> str:
        """Plain text for the terminal."""
        from .views.comparison import comparison_table

        return comparison_table(self)


def _clean(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


# -- building -------------------------------------------------------------------------------


def check_options(seed: object, resamples: object, min_documents: object) -> None:
    """An InputError naming the option when a bootstrap setting is out of range: `seed` a whole
    number ≥ 0 (or None), `resamples` ≥ 1, `min_documents` ≥ 0."""
    for name, value, low in (
        ("seed", seed, 0),
        ("resamples", resamples, 1),
        ("min_documents", min_documents, 0),
    ):
        if value is None and name == "seed":
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            option = "--" + name.replace("_", "-")
            raise InputError(f"{name} ({option}) must be a whole number ≥ {low}, not {value!r}")


def check_significance(gates: list[Gate], paired: int, min_documents: int) -> None:
    """A GateError when a ``significant`` gate would rest on fewer than `min_documents`
    paired documents (an interval over so few cannot tell a real drop from noise)."""
    weak = [g.metric for g in gates if g.significant]
    if weak and paired < min_documents:
        raise GateError(
            f"gate {weak[0]!r} is significant = true but only {paired} documents are paired, "
            f"fewer than min_documents {min_documents} (--min-documents): an interval over so "
            "few documents lets real drops through; use a plain max_drop or lower --min-documents"
        )


def check_signatures(baseline: str | None, candidate: str | None, allow: bool) -> str | None:
    """Raise :class:`IncomparableRunsError` when the runs differ, unless ``allow``; then the
    difference is returned as a note."""
    diff = signature_difference(baseline, candidate)
    if diff is not None and not allow:
        raise IncomparableRunsError(
            f"{diff}; pass allow_incomparable (--allow-incomparable) to compare anyway"
        )
    return diff


def _sort_key(name: str) -> tuple[int, int, str]:
    if name in HEADLINE:
        return (0, HEADLINE.index(name), name)
    if "/" not in name:
        return (1, 0, name)
    for i, prefix in enumerate(_FIELD_ORDER):
        if name.startswith(prefix):
            return (3, i, name)
    return (2 if not name.startswith("field_") else 4, 0, name)


def metric_rows(
    baseline: Mapping[str, float] | None,
    candidate: Mapping[str, float],
    intervals: Mapping[str, Interval],
) -> list[MetricRow]:
    """One row per metric of either run, headline metrics first, then slices, then fields."""

    def value(m: Mapping[str, float] | None, k: str) -> float | None:
        v = None if m is None else m.get(k)
        return None if v is None or not math.isfinite(float(v)) else float(v)

    names = sorted(set(candidate) | set(baseline or {}), key=_sort_key)
    return [
        MetricRow(k, value(baseline, k), value(candidate, k), higher_is_better(k), intervals.get(k))
        for k in names
    ]


def _bootstrap_notes(boot: Bootstrap) -> list[str]:
    notes = list(boot.notes)
    if boot.baseline_only or boot.candidate_only:
        notes.append(
            f"intervals and flips cover the {boot.paired} documents in both runs; left out: "
            f"{len(boot.baseline_only)} only in the baseline, {len(boot.candidate_only)} only "
            "in the candidate"
        )
    return notes


def build_comparison(
    baseline_metrics: Mapping[str, float] | None,
    candidate_metrics: Mapping[str, float],
    baseline_frame: pd.DataFrame | None = None,
    candidate_frame: pd.DataFrame | None = None,
    gates: GatesLike = None,
    *,
    seed: int | None = 0,
    resamples: int = DEFAULT_RESAMPLES,
    baseline_signature: str | None = None,
    candidate_signature: str | None = None,
    allow_incomparable: bool = False,
    confidence: float = DEFAULT_CONFIDENCE,
    top: int = TOP_DOCUMENTS,
    baseline_ref: str | None = None,
    candidate_ref: str | None = None,
    min_documents: int = DEFAULT_MIN_DOCUMENTS,
) -> Comparison:
    """Compare two runs given as plain data. ``baseline_metrics=None`` means there is no
    baseline (a first promotion): only absolute thresholds apply, other checks are skipped.

    Raises :class:`IncomparableRunsError` when the signatures differ (or one is missing)
    unless ``allow_incomparable``, :class:`~extract_mlflow.errors.ConfigError` for bad gates,
    InputError for a bad `seed`, `resamples` or `min_documents`, and GateError when a
    ``significant`` gate would rest on fewer than `min_documents` paired documents.
    """
    check_options(seed, resamples, min_documents)
    gate_list = _name_fields(coerce_gates(gates), baseline_frame, candidate_frame)
    has_baseline = baseline_metrics is not None
    diff = None
    if has_baseline:
        diff = check_signatures(baseline_signature, candidate_signature, allow_incomparable)
    notes = [f"compared although {diff}"] if diff else []
    paired = has_baseline and baseline_frame is not None and candidate_frame is not None
    boot, docs = Bootstrap({}, 0, resamples=resamples, seed=seed), DocumentFlips()
    if paired and baseline_frame is not None and candidate_frame is not None:
        boot, docs = _paired_view(
            baseline_frame, candidate_frame, resamples, seed, confidence, top, notes
        )
        check_significance(gate_list, boot.paired, min_documents)
    elif has_baseline:
        notes.append("no per-document counts for both runs: no intervals and no flips")
    return Comparison(
        rows=tuple(metric_rows(baseline_metrics, candidate_metrics, boot.intervals)),
        gates=tuple(evaluate_gates(gate_list, baseline_metrics, candidate_metrics, boot.intervals)),
        baseline_ref=baseline_ref,
        candidate_ref=candidate_ref,
        has_baseline=has_baseline,
        comparable=diff is None,
        broke=docs.broke,
        fixed=docs.fixed,
        regressed=docs.regressed,
        paired=boot.paired if paired else None,
        baseline_only=boot.baseline_only,
        candidate_only=boot.candidate_only,
        resamples=resamples,
        seed=seed,
        confidence=confidence,
        notes=tuple(notes),
    )


def _paired_view(
    baseline_frame: pd.DataFrame,
    candidate_frame: pd.DataFrame,
    resamples: int,
    seed: int | None,
    confidence: float,
    top: int,
    notes: list[str],
) -> tuple[Bootstrap, DocumentFlips]:
    """The paired bootstrap of two count frames and their document flips; the bootstrap's
    notes are appended to `notes`."""
    boot, flips = paired_view(
        baseline_frame,
        candidate_frame,
        resamples=resamples,
        seed=seed,
        confidence=confidence,
        top=top,
    )
    notes += _bootstrap_notes(boot)
    return boot, flips


def _name_fields(
    gates: list[Gate], baseline: pd.DataFrame | None, candidate: pd.DataFrame | None
) -> list[Gate]:
    """Gates that name a field path (``field_f1/line_items[].qty``) renamed to the key the
    runs logged for it (the keys follow from the runs' per-document counts)."""
    keys: dict[str, str] = {}
    for frame in (baseline, candidate):  # the candidate's keys win
        if frame is not None:
            keys.update(keys_from_frame(frame))
    out = []
    for gate in gates:
        metric = resolve_metric(gate.metric, keys)
        out.append(gate if metric == gate.metric else gate.model_copy(update={"metric": metric}))
    return out


def _as_run(value: ScoredRun | Report) -> ScoredRun:
    return value if isinstance(value, ScoredRun) else ScoredRun.from_report(value)


def compare(
    baseline: ScoredRun | Report | None,
    candidate: ScoredRun | Report,
    gates: GatesLike = None,
    *,
    seed: int | None = 0,
    resamples: int = DEFAULT_RESAMPLES,
    allow_incomparable: bool = False,
    confidence: float = DEFAULT_CONFIDENCE,
    top: int = TOP_DOCUMENTS,
    min_documents: int = DEFAULT_MIN_DOCUMENTS,
) -> Comparison:
    """Compare a candidate with a baseline (each a :class:`ScoredRun` or a
    :class:`~extract_mlflow.report.Report`; ``baseline=None`` when there is none). ``gates``:
    a list of :class:`~extract_mlflow.gates.Gate` (or mappings), a gates file path, or a mapping
    of metric → MLflow ``MetricThreshold``."""
    cand = _as_run(candidate)
    base = None if baseline is None else _as_run(baseline)
    return build_comparison(
        None if base is None else base.metrics,
        cand.metrics,
        None if base is None else base.documents,
        cand.documents,
        gates,
        seed=seed,
        resamples=resamples,
        baseline_signature=None if base is None else base.signature,
        candidate_signature=cand.signature,
        allow_incomparable=allow_incomparable,
        confidence=confidence,
        top=top,
        baseline_ref=None if base is None else base.ref,
        candidate_ref=cand.ref,
        min_documents=min_documents,
    )
