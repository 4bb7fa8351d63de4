"""What the markdown and the table views both show, computed once: fields worst first, the
report's notes and the fidelity field rows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.text import fmt
from ..fidelity.score import FidelityStats, FidelitySummary
from ..fidelity.values import BANDS, NEW_VOCABULARY, PARAPHRASE

if TYPE_CHECKING:
    from ..report import FieldResult, Report


def fields_by_f1(report: Report) -> list[FieldResult]:
    """Fields by F1 ascending (undefined last), then by number of errors, then by path."""
    return sorted(
        report.fields.values(),
        key=lambda f: (
            f.counts.f1 is None,
            f.counts.f1 if f.counts.f1 is not None else 0.0,
            -(f.counts.fp + f.counts.fn),
            f.path,
        ),
    )


def report_notes(report: Report) -> list[str]:
    notes = [f"warning: {w}" for w in report.warnings]
    for d in report.documents:
        if d.status == "parse_failure":
            notes.append(f"parse failure in `{d.id}`: {d.reason}")
    missing = [d.id for d in report.documents if d.status == "missing"]
    if missing:
        notes.append(f"no prediction for {len(missing)} document(s): {', '.join(missing[:20])}")
    if report.unknown_ids:
        notes.append(
            f"{len(report.unknown_ids)} prediction(s) for ids not in gold (not scored): "
            + ", ".join(report.unknown_ids[:20])
        )
    for u in report.unattributed:
        notes.append(f"prediction line without a usable id (not scored): {u}")
    if report.skipped:
        notes.append("skipped (ignore = true): " + ", ".join(f"`{s}`" for s in report.skipped))
    for path, n in report.gold_type_errors.items():
        notes.append(f"{n} gold value(s) of `{path}` do not read as its type; compared as text")
    for d in report.layouts:
        if d.layout is not None and d.layout.missing:
            why = ", ".join(f"{t} ({w})" for t, w in d.layout.missing.items())
            notes.append(f"`{d.id}` layout {len(d.layout.present)}/{d.layout.required}: {why}")
    notes.extend(report.notes)
    return notes


def fidelity_fields_by_bleu(summary: FidelitySummary) -> list[tuple[str, FidelityStats]]:
    """Fields by BLEU proxy ascending (undefined last), then by hallucination rate."""
    return sorted(
        summary.fields.items(),
        key=lambda kv: (
            kv[1].bleu_proxy is None,
            kv[1].bleu_proxy or 0.0,
            -(kv[1].hallucination_rate or 0.0),
            kv[0],
        ),
    )


def _field_row(name: str, s: FidelityStats) -> list[str]:
    bands = "/".join(str(s.bands[b]) for b in BANDS)
    ground = f"{s.grounded}/{s.checked}" if s.checked else "—"
    return [
        name,
        str(s.values),
        fmt(s.bleu_proxy),
        *(fmt(p) for p in s.precisions),
        bands,
        str(s.flags[NEW_VOCABULARY]),
        str(s.flags[PARAPHRASE]),
        ground,
        fmt(s.hallucination_rate),
    ]


_FIELD_HEAD = [
    "field",
    "scored",
    "BLEU proxy",
    "p1",
    "p2",
    "p3",
    "p4",
    "E/G/S",
    "new vocab",
    "paraphrase",
    "grounded",
    "halluc. rate",
]


def fidelity_notes(summary: FidelitySummary) -> list[str]:
    notes = []
    if summary.unchecked:
        notes.append(
            f"{len(summary.unchecked)} document(s) without a source (unchecked): "
            + ", ".join(summary.unchecked[:20])
        )
    if summary.no_prediction:
        notes.append(
            f"{len(summary.no_prediction)} document(s) without a usable prediction "
            "(missing or unparseable; nothing to check): " + ", ".join(summary.no_prediction[:20])
        )
    if summary.empty_sources:
        notes.append("source(s) with no text: " + ", ".join(summary.empty_sources[:20]))
    if summary.unused_sources:
        notes.append(
            f"{len(summary.unused_sources)} source(s) for ids not in gold: "
            + ", ".join(summary.unused_sources[:20])
        )
    for doc_id, path in summary.unused_approvals:
        notes.append(f"approval for {doc_id} `{path}` matched no checked value")
    return notes
