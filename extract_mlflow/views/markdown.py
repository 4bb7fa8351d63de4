"""Human views of a report: markdown (summary.md, CI job summaries) and a terminal table."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.text import compact, fmt, md_cell, terminal_safe

if TYPE_CHECKING:
    from ..report import FieldResult, Report


def fields_worst_first(report: Report) -> list[FieldResult]:
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


def _run_lines(report: Report) -> list[str]:
    """Layout, composite, cost and latency headline lines (only those that exist)."""
    lines = []
    if report.layout_score is not None:
        lines.append(f"- layout score (mean): {fmt(report.layout_score)}")
        lines.append(f"- composite (F1 × layout): {fmt(report.composite)}")
    if report.tokens_per_doc is not None:
        lines.append(f"- tokens per document: {report.tokens_per_doc:.0f}")
    p50, p95 = report.latency_ms(0.5), report.latency_ms(0.95)
    if p50 is not None and p95 is not None:
        lines.append(f"- latency p50 / p95: {p50:.0f} / {p95:.0f} ms")
    return lines


def _layout_markdown(report: Report) -> list[str]:
    docs = report.layouts
    if not docs:
        return []
    lines = [
        "",
        "## Pages",
        "",
        "| document | layout | missing sections | rows (pred/gold) | F1 | composite |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for d in docs:
        assert d.layout is not None
        missing = "; ".join(f"{t} ({why})" for t, why in d.layout.missing.items()) or "—"
        lines.append(
            f"| {md_cell(d.id)} | {len(d.layout.present)}/{d.layout.required} "
            f"| {md_cell(missing)} | {d.rows_pred or 0}/{d.rows_gold or 0} "
            f"| {fmt(d.counts.f1)} | {fmt(d.composite)} |"
        )
    recall = report.field_recall_lines()
    if recall:
        lines += ["", "Recall by field, worst first: " + ", ".join(f"`{r}`" for r in recall)]
    problems = [(d.id, p) for d in docs if d.layout for p in d.layout.problems]
    lines += [f"- `{md_cell(i)}`: {md_cell(p)}" for i, p in problems]
    return lines


def report_markdown(report: Report) -> str:
    m = report.micro
    lines = [
        "# Extraction evaluation",
        "",
        f"- documents: {len(report.documents)}",
        f"- micro precision / recall / F1: {fmt(m.precision)} / {fmt(m.recall)} / {fmt(m.f1)}"
        f" (TP {m.tp}, FP {m.fp}, FN {m.fn})",
        f"- macro F1: {fmt(report.macro_f1)}",
        f"- parse failures: {report.unreadable_lines} ({fmt(report.parse_failure_rate)})",
        *_run_lines(report),
        f"- signature: `{report.signature()}`",
        *_layout_markdown(report),
        "",
        "## Fields (worst first)",
        "",
        "| field | type | TP | FP | FN | precision | recall | F1 | errors |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for f in fields_worst_first(report):
        c = f.counts
        errs = ", ".join(f"{k} {v}" for k, v in f.errors.items()) or "—"
        lines.append(
            f"| `{md_cell(f.path)}` | {f.type} | {c.tp} | {c.fp} | {c.fn} | {fmt(c.precision)} "
            f"| {fmt(c.recall)} | {fmt(c.f1)} | {errs} |"
        )
    examples = [(f, e) for f in fields_worst_first(report) for e in f.examples]
    if examples:
        lines += ["", "## Mismatch examples", "", "| field | document | error | expected | got |"]
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
            "## Documents with the most errors",
            "",
            "| document | status | FP | FN | F1 |",
        ]
        lines.append("|---|---|---:|---:|---:|")
        for d in worst:
            c = d.counts
            lines.append(f"| {md_cell(d.id)} | {d.status} | {c.fp} | {c.fn} | {fmt(c.f1)} |")
    for family in (report.fidelity, report.structure):
        if family is not None:
            lines += ["", family.to_markdown().rstrip()]
    notes = _notes(report)
    if notes:
        lines += ["", "## Notes", "", *[f"- {n}" for n in notes]]
    return terminal_safe("\n".join(lines) + "\n")


def _notes(report: Report) -> list[str]:
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


def report_table(report: Report) -> str:
    """A plain-text table for the terminal."""
    m = report.micro
    head = (
        f"documents {len(report.documents)}  precision {fmt(m.precision)}  recall {fmt(m.recall)}"
        f"  F1 {fmt(m.f1)}  macro F1 {fmt(report.macro_f1)}"
        f"  parse failures {report.unreadable_lines}"
    )
    if report.layout_score is not None:
        head += f"  layout {fmt(report.layout_score)}  composite {fmt(report.composite)}"
    if report.tokens_per_doc is not None:
        head += f"  tokens/doc {report.tokens_per_doc:.0f}"
    rows = [("field", "type", "TP", "FP", "FN", "P", "R", "F1")]
    for f in fields_worst_first(report):
        c = f.counts
        rows.append(
            (
                f.path,
                f.type,
                str(c.tp),
                str(c.fp),
                str(c.fn),
                fmt(c.precision),
                fmt(c.recall),
                fmt(c.f1),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = [head, ""]
    for n, r in enumerate(rows):
        cells = [r[0].ljust(widths[0]), r[1].ljust(widths[1])]
        cells += [r[i].rjust(widths[i]) for i in range(2, len(r))]
        out.append("  ".join(cells).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    if report.fidelity is not None:
        out += ["", report.fidelity.to_table().rstrip()]
    if report.structure is not None:
        out += ["", _structure_table(report.structure)]
    notes = _notes(report)
    if notes:
        out += ["", *notes]
    return terminal_safe("\n".join(out) + "\n")


def _structure_table(summary: Any) -> str:
    """Structure metrics with their 95% intervals, one per line."""
    metrics = summary.metrics()
    lines = ["structure metrics (95% bootstrap interval)"]
    for name in sorted(k for k in metrics if "_ci_" not in k and "_by_" not in k):
        low, high = metrics.get(f"{name}_ci_low"), metrics.get(f"{name}_ci_high")
        interval = f"  [{fmt(low)}, {fmt(high)}]" if low is not None else ""
        lines.append(f"  {name:<20} {fmt(metrics[name])}{interval}")
    return "\n".join(lines)
