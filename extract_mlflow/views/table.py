"""Plain-text tables for the terminal: the report, its fidelity and structure sections, and
the aligned rows every other terminal table is drawn with."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.text import fmt, terminal_safe
from ..fidelity.score import FidelitySummary
from .sections import (
    _FIELD_HEAD,
    _field_row,
    fidelity_fields_by_bleu,
    fidelity_notes,
    fields_by_f1,
    report_notes,
)

if TYPE_CHECKING:
    from ..report import Report


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
    for f in fields_by_f1(report):
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
    out = [head, "", *aligned(rows, left=2)]
    if report.fidelity is not None:
        out += ["", fidelity_table(report.fidelity).rstrip()]
    if report.structure is not None:
        out += ["", _structure_table(report.structure)]
    notes = report_notes(report)
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


def fidelity_table(summary: FidelitySummary) -> str:
    """A plain-text table for the terminal: overall, then one row per field."""
    o = summary.overall
    head = (
        f"text fidelity  BLEU proxy {fmt(o.bleu_proxy)}  groundedness {fmt(o.groundedness)}"
        f"  hallucination rate {fmt(o.hallucination_rate)}  approved {o.approved}"
    )
    rows = [_FIELD_HEAD, _field_row("(all)", o)]
    rows += [_field_row(name, stats) for name, stats in fidelity_fields_by_bleu(summary)]
    out = [head, "", *aligned(rows)]
    for doc_id, findings in summary.injection.items():
        out.append(
            f"prompt-like text in {doc_id}: "
            + ", ".join(f"line {f.line} {f.pattern}" for f in findings)
        )
    out += fidelity_notes(summary)
    return "\n".join(out) + "\n"


def aligned(rows: Sequence[Sequence[str]], *, left: int = 1, rule: bool = True) -> list[str]:
    """Rows as aligned plain-text lines: the first `left` columns padded on the right, the
    others on the left (numbers), two spaces between columns, trailing blanks cut; with `rule`,
    a line of dashes under the first row (the header).

    >>> aligned([("name", "n"), ("a", "10")])
    ['name   n', '----  --', 'a     10']
    """
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for n, r in enumerate(rows):
        cells = [
            c.ljust(w) if i < left else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=False))
        ]
        out.append("  ".join(cells).rstrip())
        if rule and n == 0:
            out.append("  ".join("-" * w for w in widths))
    return out
