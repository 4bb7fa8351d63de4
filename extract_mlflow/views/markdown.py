"""Human views of a report: markdown (summary.md, CI job summaries) and a terminal table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..core.language import tr
from ..core.text import FIELDS_LISTED, capped, capped_lines, compact, fmt, md_cell, safe_lines
from ..families import by_name
from .sections import fields_by_f1, report_notes, status_text

if TYPE_CHECKING:
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
    for name, summary in report.families.items():  # each metric family's own section
        family = by_name(name)
        lines += ["", *family.markdown(summary)] if family is not None else []
    notes = report_notes(report)
    if notes:
        lines += ["", tr("md.notes"), "", *[f"- {n}" for n in notes]]
    return safe_lines(lines)


def markdown_table(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows as a markdown table, the first row the header (cells written as given).

    >>> markdown_table([("a", "b"), ("1", "2")])
    ['| a | b |', '|---|---|', '| 1 | 2 |']
    """
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    return lines + ["| " + " | ".join(row) + " |" for row in rows[1:]]
