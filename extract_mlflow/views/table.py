"""Plain-text tables for the terminal (the report, its fidelity and structure sections) and the
per-iteration tables of ``score-iterations`` (``metrics.csv``, a LaTeX booktabs table)."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..core.text import fmt, terminal_safe, tex_escape
from ..fidelity.score import FidelitySummary
from ..io.iterations import best_index
from .sections import (
    _FIELD_HEAD,
    IterationRow,
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


HEADLINE = (
    "f1",
    "precision",
    "recall",
    "macro_f1",
    "parse_failure_rate",
    "composite",
    "layout_score",
    "bleu_proxy",
    "groundedness",
    "tokens_per_doc",
    "documents",
)
"""The columns of metrics.csv that come first (when present), and those of metrics.tex."""


LABELS = {
    "f1": "F1",
    "precision": "Precision",
    "recall": "Recall",
    "macro_f1": "Macro F1",
    "parse_failure_rate": "Parse fail.",
    "composite": "Composite",
    "layout_score": "Layout",
    "bleu_proxy": "BLEU proxy",
    "groundedness": "Grounded",
    "tokens_per_doc": "Tokens/doc",
    "documents": "Docs",
}


def metric_columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Headline metrics present (fixed order), then every other key in sorted order."""
    keys = {k for r in rows for k in r}
    lead = [k for k in HEADLINE if k in keys]
    return lead + sorted(keys - set(lead) - {"iteration", "step", "run_id"})


def metrics_csv(records: Sequence[IterationRow]) -> str:
    """metrics.csv: one row per iteration (iteration, step, run_id, then every metric)."""
    rows = [r.row() for r in records]
    columns = ["iteration", "step", "run_id", *metric_columns([r.metrics for r in records])]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({c: row.get(c, "") for c in columns})
    return buf.getvalue()


def _tex_number(key: str, value: float | None) -> str:
    if value is None:
        return "--"
    if key in ("documents",):
        return str(int(value))
    if key == "tokens_per_doc":
        return f"{value:,.0f}".replace(",", "{,}")
    return f"{value:.3f}"


def metrics_latex(records: Sequence[IterationRow]) -> str:
    """metrics.tex: a booktabs table of the headline metrics, the best iteration in bold."""
    cols = [k for k in HEADLINE if any(k in r.metrics for r in records)]
    best = best_index([r.metrics for r in records])
    lines = [
        r"\begin{table}[ht]",
        r"\centering",
        r"\caption{Extraction scores per prompt iteration (best in bold).}",
        r"\label{tab:extract-mlflow-iterations}",
        r"\begin{tabular}{l" + "r" * len(cols) + "}",
        r"\toprule",
        " & ".join(["Iteration", *(LABELS[k] for k in cols)]) + r" \\",
        r"\midrule",
    ]
    for i, rec in enumerate(records):
        cells = [tex_escape(rec.name), *(_tex_number(k, rec.metrics.get(k)) for k in cols)]
        if i == best:
            cells = [r"\textbf{" + c + "}" for c in cells]
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


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
