"""How text fidelity reads in the views: its section of the markdown report and its lines of
the terminal table (:class:`~.family.Fidelity` hands them to every view), and the field rows,
notes and canary line both share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.language import tr
from ..core.text import (
    FIELDS_LISTED,
    aligned,
    capped,
    capped_lines,
    compact,
    escape_pipes,
    fmt,
    safe_lines,
)
from .score import FidelityStats, FidelitySummary
from .values import BANDS, FLAGS, NEW_VOCABULARY, PARAPHRASE, ValueFidelity

_LIST_LIMIT = 6


def _cell(value: Any, limit: int = 50) -> str:
    """A value in one markdown table cell (JSON's null for None)."""
    return escape_pipes(compact(value, limit, none=None))


def _grams(grams: Sequence[str]) -> str:
    shown = escape_pipes(", ".join(f"`{g}`" for g in grams[:_LIST_LIMIT]))
    more = len(grams) - _LIST_LIMIT
    return (shown + (f" (+{more})" if more > 0 else "")) or "—"


def _grounded(v: ValueFidelity) -> str:
    return "—" if v.grounded is None else tr("md.yes" if v.grounded else "md.no")


def fidelity_markdown(summary: FidelitySummary) -> str:
    """The fidelity section of summary.md (starts with a level-2 heading)."""
    return safe_lines(markdown_lines(summary))


def markdown_lines(summary: FidelitySummary) -> list[str]:
    """The fidelity section of the markdown report."""

    o = summary.overall
    p = " / ".join(fmt(x) for x in o.precisions)
    head = field_head()
    lines = [
        tr("md.fidelity"),
        "",
        tr("md.fid_values", values=o.values, empty=o.empty, checked=o.checked),
        tr("md.fid_bleu", bleu=fmt(o.bleu_proxy), precisions=p),
        tr("md.fid_bands", bands=", ".join(f"{b} {o.bands[b]}" for b in BANDS)),
        tr("md.fid_flags", flags=", ".join(f"{f} {o.flags[f]}" for f in FLAGS)),
        tr(
            "md.fid_grounded",
            grounded=fmt(o.groundedness),
            n=o.grounded,
            checked=o.checked,
            rate=fmt(o.hallucination_rate),
        ),
        tr("md.fid_approved", n=o.approved),
        tr("md.signature", signature=summary.signature()),
        "",
        "| " + " | ".join(head) + " |",
        "|---|" + "---:|" * (len(head) - 1),
        "| " + " | ".join(_field_row(tr("md.fid_all"), o)) + " |",
    ]
    fields, more = capped(fidelity_fields_by_bleu(summary), FIELDS_LISTED)
    for name, stats in fields:
        lines.append("| " + " | ".join(_field_row(f"`{name}`", stats)) + " |")
    lines += ["", more] if more else []
    lines += _worst_markdown(summary) + _approved_markdown(summary)
    lines += _injection_markdown(summary) + _canaries_markdown(summary)
    lines += _notes_markdown(summary)
    return lines


def _worst_markdown(summary: FidelitySummary) -> list[str]:
    worst = summary.worst()
    if not worst:
        return []
    lines = [
        "",
        tr("md.fid_worst"),
        "",
        tr("md.fid_worst_head"),
        "|---|---|---|---:|---|---|---|---|---|---|",
    ]
    for v in worst:
        span = "—" if v.span is None else f"{_cell(v.span.text)} ({v.span.score:.2f})"
        lines.append(
            f"| {_cell(v.doc_id)} | `{v.path}` | {_cell(v.value)} | {fmt(v.bleu_proxy)} "
            f"| {v.band or '—'} | {', '.join(v.flags) or '—'} | {_grounded(v)} | {span} "
            f"| {_grams(v.extra_ngrams)} | {_grams(v.missing_ngrams)} |"
        )
    return lines


def _approved_markdown(summary: FidelitySummary) -> list[str]:
    approved = summary.approved
    if not approved:
        return []
    lines = [
        "",
        tr("md.fid_approved_title"),
        "",
        tr("md.fid_approved_head"),
        "|---|---|---|---:|---|---|---|",
    ]
    shown, more = capped(approved)
    for v in shown:
        lines.append(
            f"| {_cell(v.doc_id)} | `{v.path}` | {_cell(v.value)} | {fmt(v.bleu_proxy)} "
            f"| {', '.join(v.cleared_flags) or '—'} | {_grounded(v)} | {_cell(v.note or '—')} |"
        )
    return lines + (["", more] if more else [])


def _injection_markdown(summary: FidelitySummary) -> list[str]:
    if not summary.injection:
        return []
    lines = [
        "",
        tr("md.injection"),
        "",
        tr("md.injection_head"),
        "|---|---:|---|---|",
    ]
    found = [(d, f) for d, findings in summary.injection.items() for f in findings]
    shown, more = capped(found)
    for doc_id, f in shown:
        lines.append(f"| {_cell(doc_id)} | {f.line} | {f.pattern} | {_cell(f.snippet, 80)} |")
    return lines + (["", more] if more else [])


def _canaries_markdown(summary: FidelitySummary) -> list[str]:
    line = canaries_line(summary)
    return ["", line] if line else []


def _notes_markdown(summary: FidelitySummary) -> list[str]:
    notes = fidelity_notes(summary)
    return ["", tr("md.fid_notes"), "", *[f"- {n}" for n in notes]] if notes else []


def fidelity_table(summary: FidelitySummary) -> str:
    """A plain-text table for the terminal: overall, then one row per field."""
    return safe_lines(table_lines(summary))


def table_lines(summary: FidelitySummary) -> list[str]:
    """The fidelity lines of the terminal table."""
    o = summary.overall
    head = tr(
        "table.fidelity",
        bleu=fmt(o.bleu_proxy),
        grounded=fmt(o.groundedness),
        rate=fmt(o.hallucination_rate),
        approved=o.approved,
    )
    fields, more = capped(fidelity_fields_by_bleu(summary), FIELDS_LISTED)
    rows = [field_head(), _field_row(tr("fid.all"), o)]
    rows += [_field_row(name, stats) for name, stats in fields]
    out = [head, "", *aligned(rows), *([more] if more else [])]
    injections = []
    for doc_id, findings in summary.injection.items():
        lines = ", ".join(
            tr("table.injection_line", line=f.line, pattern=f.pattern) for f in findings
        )
        injections.append(tr("table.injection", doc_id=doc_id, findings=lines))
    out += capped_lines(injections)
    line = canaries_line(summary)
    if line:
        out.append(line)
    out += fidelity_notes(summary)
    return out


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
