"""What the markdown and the table views both show, computed once: fields worst first, the
report's notes and the fidelity field rows; and how long a listing may grow.

Every listing for people is bounded (:func:`capped`): the terminal table, summary.md, the diff
and the comparison page show the first entries of a listing and say how many more there are,
so a report stays readable, and small, whatever the inputs hold; the counts are always whole.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.language import tr
from ..core.messages import MESSAGES
from ..core.text import LISTED, capped, capped_lines, fmt

if TYPE_CHECKING:
    from ..fidelity.score import FidelityStats, FidelitySummary
    from ..report import DocumentResult, FieldResult, Report


FIELDS_LISTED = 200
"""fields shown in a field table, worst first (with their mismatch examples)"""


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


def status_text(status: str | None) -> str:
    """A document status (``scored``, ``missing``, ``parse_failure``) in the current language."""
    key = f"status.{status}"
    return tr(key) if key in MESSAGES else str(status)


def report_notes(report: Report) -> list[str]:
    """The notes of a report, each kind of note per document or per line bounded
    (:func:`capped_lines`)."""
    notes = [tr("note.warning", message=w) for w in report.warnings]
    failures, more = capped([d for d in report.documents if d.status == "parse_failure"])
    notes += [tr("note.parse_failure", doc_id=d.id, reason=d.reason) for d in failures]
    notes += [more] if more else []
    missing = [d.id for d in report.documents if d.status == "missing"]
    if missing:
        notes.append(tr("note.missing", n=len(missing), ids=", ".join(missing[:20])))
    if report.unknown_ids:
        ids = ", ".join(report.unknown_ids[:20])
        notes.append(tr("note.unknown", n=len(report.unknown_ids), ids=ids))
    unattributed = [tr("note.unattributed", line=u) for u in report.unattributed[:LISTED]]
    if report.unattributed_total > LISTED:
        unattributed.append(tr("list.more", n=report.unattributed_total - LISTED))
    notes += unattributed
    if report.skipped:
        notes.append(tr("note.skipped", paths=", ".join(f"`{s}`" for s in report.skipped)))
    if report.inferred_types:
        inferred = ", ".join(f"`{p}` {t}" for p, t in report.inferred_types.items())
        notes.append(tr("note.inferred", fields=inferred))
    for path, n in report.gold_type_errors.items():
        notes.append(tr("note.gold_type", n=n, path=path))
    pages = report.pages
    notes += capped_lines(
        [_layout_note(d) for d in report.layouts if d.layout and d.layout.missing],
        total=pages.with_missing if pages is not None else None,
    )
    notes += capped_lines(report.notes)
    return notes


def _layout_note(d: DocumentResult) -> str:
    assert d.layout is not None
    why = ", ".join(f"{t} ({w})" for t, w in d.layout.missing.items())
    return tr(
        "note.layout",
        doc_id=d.id,
        present=len(d.layout.present),
        required=d.layout.required,
        why=why,
    )


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
    from ..fidelity.values import BANDS, NEW_VOCABULARY, PARAPHRASE  # here: only with sources

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


def field_head() -> list[str]:
    """The head of the fidelity table (terminal and markdown)."""
    return [
        tr("table.head_field"),
        tr("fid.head_scored"),
        tr("fid.head_bleu"),
        "p1",
        "p2",
        "p3",
        "p4",
        tr("fid.head_bands"),
        tr("fid.head_new_vocab"),
        tr("fid.head_paraphrase"),
        tr("fid.head_grounded"),
        tr("fid.head_rate"),
    ]


def fidelity_notes(summary: FidelitySummary) -> list[str]:
    notes = []
    if summary.unchecked:
        ids = ", ".join(summary.unchecked[:20])
        notes.append(tr("note.unchecked", n=len(summary.unchecked), ids=ids))
    if summary.no_prediction:
        ids = ", ".join(summary.no_prediction[:20])
        notes.append(tr("note.no_prediction", n=len(summary.no_prediction), ids=ids))
    if summary.empty_sources:
        notes.append(tr("note.empty_sources", ids=", ".join(summary.empty_sources[:20])))
    if summary.unused_sources:
        ids = ", ".join(summary.unused_sources[:20])
        notes.append(tr("note.unused_sources", n=len(summary.unused_sources), ids=ids))
    unused = summary.unused_approvals
    notes += capped_lines([tr("note.unused_approval", doc_id=d, path=p) for d, p in unused])
    return notes


def canaries_line(summary: FidelitySummary) -> str | None:
    """How many documents obey a prompt-injection canary their source carries, and which
    (None without canaries)."""
    tally = summary.canaries
    if tally is None:
        return None
    which = "; ".join(f"{d} ← {', '.join(c)}" for d, c in list(tally.obeyed.items())[:20])
    return tr(
        "canaries",
        obeyed=len(tally.obeyed),
        documents=len(tally.documents),
        rate=fmt(tally.rate),
        which=f": {which}" if which else "",
    )
