"""Human views of a report: markdown (summary.md, CI job summaries) and a terminal table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.language import tr
from ..core.text import capped, capped_lines, compact, escape_pipes, fmt, md_cell, safe_lines
from ..families import by_name
from .sections import (
    FIELDS_LISTED,
    _field_row,
    canaries_line,
    fidelity_fields_by_bleu,
    fidelity_notes,
    field_head,
    fields_by_f1,
    report_notes,
    status_text,
)

if TYPE_CHECKING:
    from ..fidelity.score import FidelitySummary
    from ..fidelity.values import ValueFidelity
    from ..report import Report


def _run_lines(report: Report) -> list[str]:
    """Layout, composite, cost and latency headline lines (only those that exist)."""
    lines = []
    if report.layout_score is not None:
        lines.append(tr("md.layout_score", value=fmt(report.layout_score)))
        lines.append(tr("md.composite", value=fmt(report.composite)))
    if report.tokens_per_doc is not None:
        lines.append(tr("md.tokens", n=report.tokens_per_doc))
    p50, p95 = report.latency_ms(0.5), report.latency_ms(0.95)
    if p50 is not None and p95 is not None:
        lines.append(tr("md.latency", p50=p50, p95=p95))
    return lines


def _layout_markdown(report: Report) -> list[str]:
    docs, pages = report.layouts, report.pages
    if not docs or pages is None:
        return []
    lines = [
        "",
        tr("md.pages"),
        "",
        tr("md.pages_head"),
        "|---|---:|---|---:|---:|---:|",
    ]
    shown, more = capped(docs, total=pages.count)
    for d in shown:
        assert d.layout is not None
        missing = "; ".join(f"{t} ({why})" for t, why in d.layout.missing.items()) or "—"
        lines.append(
            f"| {md_cell(d.id)} | {len(d.layout.present)}/{d.layout.required} "
            f"| {md_cell(missing)} | {d.rows_pred or 0}/{d.rows_gold or 0} "
            f"| {fmt(d.counts.f1)} | {fmt(d.composite)} |"
        )
    lines += ["", more] if more else []
    recall = report.field_recall_lines()
    if recall:
        fields = ", ".join(f"`{r}`" for r in recall)
        lines += ["", tr("md.recall_by_field", fields=fields)]
    problems = [
        f"`{md_cell(d.id)}`: {md_cell(p)}" for d in docs if d.layout for p in d.layout.problems
    ]
    lines += [f"- {p}" for p in capped_lines(problems, total=pages.problem_count)]
    return lines


def _headline_lines(report: Report) -> list[str]:
    """The title and the headline scores of summary.md."""
    m = report.micro
    return [
        tr("md.title"),
        "",
        tr("md.documents", n=len(report.documents)),
        tr(
            "md.micro",
            precision=fmt(m.precision),
            recall=fmt(m.recall),
            f1=fmt(m.f1),
            tp=m.tp,
            fp=m.fp,
            fn=m.fn,
        ),
        tr("md.macro", value=fmt(report.macro_f1)),
        tr("md.parse_failures", n=report.unreadable_lines, rate=fmt(report.parse_failure_rate)),
        *_run_lines(report),
        tr("md.signature", signature=report.signature()),
    ]


def report_markdown(report: Report) -> str:
    """The report as markdown (``summary.md``, a CI job summary): the headline scores, the
    pages, one row per field worst first with a few mistakes, the documents with the most
    errors, the fidelity section and each metric family's, then the notes."""
    lines = [
        *_headline_lines(report),
        *_layout_markdown(report),
        "",
        tr("md.fields"),
        "",
        tr("md.fields_head"),
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    fields, more = capped(fields_by_f1(report), FIELDS_LISTED)
    for f in fields:
        c = f.counts
        errs = ", ".join(f"{k} {v}" for k, v in f.errors.items()) or "—"
        lines.append(
            f"| `{md_cell(f.path)}` | {f.type} | {c.tp} | {c.fp} | {c.fn} | {fmt(c.precision)} "
            f"| {fmt(c.recall)} | {fmt(c.f1)} | {errs} |"
        )
    lines += ["", more] if more else []
    examples = [(f, e) for f in fields for e in f.examples]  # a few per field
    if examples:
        lines += ["", tr("md.examples"), "", tr("md.examples_head")]
        lines.append("|---|---|---|---|---|")
        for f, e in examples:
            lines.append(
                f"| `{md_cell(f.path)}` | {md_cell(e['id'])} | {e['category']} "
                f"| {md_cell(compact(e['expected'], 60))} | {md_cell(compact(e['got'], 60))} |"
            )
    worst = report.worst_documents()
    if worst:
        lines += [
            "",
            tr("md.worst"),
            "",
            tr("md.worst_head"),
        ]
        lines.append("|---|---|---:|---:|---:|")
        for d in worst:
            c = d.counts
            lines.append(
                f"| {md_cell(d.id)} | {status_text(d.status)} | {c.fp} | {c.fn} | {fmt(c.f1)} |"
            )
    if report.fidelity is not None:
        lines += ["", *_fidelity_lines(report.fidelity)]
    for name, summary in report.families.items():  # each metric family's own section
        family = by_name(name)
        lines += ["", *family.markdown(summary)] if family is not None else []
    notes = report_notes(report)
    if notes:
        lines += ["", tr("md.notes"), "", *[f"- {n}" for n in notes]]
    return safe_lines(lines)


# -- views ---------------------------------------------------------------------------------
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
    return safe_lines(_fidelity_lines(summary))


def _fidelity_lines(summary: FidelitySummary) -> list[str]:
    from ..fidelity.values import BANDS, FLAGS  # here: text fidelity loads only with sources

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


def markdown_table(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows as a markdown table, the first row the header (cells written as given).

    >>> markdown_table([("a", "b"), ("1", "2")])
    ['| a | b |', '|---|---|', '| 1 | 2 |']
    """
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    return lines + ["| " + " | ".join(row) + " |" for row in rows[1:]]
