"""The views of a prompt-optimisation loop: one row per iteration (running best columns, a
baseline as reference), ``metrics.csv``, a LaTeX document with a booktabs table and a pgfplots
trend, the terminal and markdown tables, and the aggregate progress line.

>>> rows = loop_rows([("01", {"f1": 0.5}), ("02", {"f1": 0.4})])
>>> [(r.name, r.values["f1"], r.values["f1_best"]) for r in rows]
[('01', 0.5, 0.5), ('02', 0.4, 0.5)]
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..core.language import tr
from ..core.text import aligned, fmt, md_cell, tex_escape
from ..io.iterations import best_index, running_best
from .markdown import markdown_table

COLUMNS = (
    "iteration",
    "f1",
    "f1_best",
    "precision",
    "recall",
    "groundedness",
    "hallucination",
    "layout_score",
    "composite",
    "composite_best",
    "tokens_per_doc",
)
"""The columns of metrics.csv, in order."""

METRIC_KEYS = {"hallucination": "hallucination_rate"}
"""Columns whose metric key differs from the column name."""

SCORES = ("f1", "precision", "recall", "groundedness", "hallucination", "layout_score", "composite")
"""The score columns (between 0 and 1): the trend plot's lines and the LaTeX table's."""

LABELS = {
    "f1": "F1",
    "f1_best": "best F1",
    "precision": "Precision",
    "recall": "Recall",
    "groundedness": "Grounded",
    "hallucination": "Halluc.",
    "layout_score": "Layout",
    "composite": "Composite",
    "composite_best": "best composite",
    "tokens_per_doc": "Tokens/doc",
}


@dataclass(frozen=True)
class LoopRow:
    """One row of the loop's table: an iteration, or the baseline (a reference, outside the
    running best)."""

    name: str
    values: Mapping[str, float | None]
    baseline: bool = False

    def csv_row(self) -> dict[str, str]:
        cells = {"iteration": csv_text(self.name)}
        for c in COLUMNS[1:]:
            value = self.values.get(c)
            cells[c] = "" if value is None else repr(round(value, 10))
        return cells


def _values(metrics: Mapping[str, float]) -> dict[str, float | None]:
    keys = [c for c in COLUMNS if c != "iteration"]
    return {c: metrics.get(METRIC_KEYS.get(c, c)) for c in keys}


def loop_rows(
    iterations: Sequence[tuple[str, Mapping[str, float]]],
    baseline: tuple[str, Mapping[str, float]] | None = None,
) -> list[LoopRow]:
    """The baseline's row (when given) then one row per (name, metrics) iteration, with
    ``f1_best`` and ``composite_best`` as running maxima over the iterations."""
    values = [_values(m) for _, m in iterations]
    for key in ("f1", "composite"):
        for v, best in zip(values, running_best([v[key] for v in values]), strict=True):
            v[f"{key}_best"] = best
    rows = [LoopRow(name, v) for (name, _), v in zip(iterations, values, strict=True)]
    if baseline is not None:
        base = _values(baseline[1])
        base["f1_best"] = base["composite_best"] = None
        rows.insert(0, LoopRow(baseline[0], base, baseline=True))
    return rows


def best_row(rows: Sequence[LoopRow]) -> int | None:
    """The index in `rows` of the best iteration (composite, else F1; ties → earliest)."""
    iterations = [i for i, r in enumerate(rows) if not r.baseline]
    metrics = [{k: v for k, v in rows[i].values.items() if v is not None} for i in iterations]
    best = best_index(metrics)
    return iterations[best] if best is not None else None


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""what makes a spreadsheet read a cell as a formula"""


def csv_text(text: str) -> str:
    """A text cell that a spreadsheet shows as text: one starting like a formula (``=``,
    ``+``, ``-``, ``@``, a tab or a carriage return) gets a leading ``'`` (OWASP's advice
    against CSV injection); numbers are written as numbers, never through this.

    >>> csv_text("=HYPERLINK(1)"), csv_text("iter_2")
    ("'=HYPERLINK(1)", 'iter_2')
    """
    return "'" + text if text.startswith(_FORMULA_START) else text


def metrics_csv(rows: Sequence[LoopRow]) -> str:
    """metrics.csv: one row per iteration (the baseline first); an empty cell where a metric
    is undefined."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(row.csv_row())
    return buf.getvalue()


def defined_columns(rows: Sequence[LoopRow], columns: Sequence[str]) -> list[str]:
    """The `columns` that have a value in at least one row."""
    return [c for c in columns if any(r.values.get(c) is not None for r in rows)]


def _tex_cell(key: str, value: float | None) -> str:
    if value is None:
        return "--"
    if key == "tokens_per_doc":
        return f"{value:,.0f}".replace(",", "{,}")
    return f"{value:.3f}"


def _tex_table(rows: Sequence[LoopRow], best: int | None) -> list[str]:
    cols = defined_columns(rows, [*SCORES, "tokens_per_doc"])
    reference = " The baseline (in italics) is a reference." if rows and rows[0].baseline else ""
    lines = [
        r"\begin{table}[ht]",
        r"\centering",
        r"\small",
        r"\caption{Extraction scores per prompt iteration (best in bold)." + reference + "}",
        r"\label{tab:extract-mlflow-iterations}",
        r"\begin{tabular}{l" + "r" * len(cols) + "}",
        r"\toprule",
        " & ".join(["Iteration", *(LABELS[k] for k in cols)]) + r" \\",
        r"\midrule",
    ]
    for i, row in enumerate(rows):
        name = r"\emph{" + tex_escape(row.name) + "}" if row.baseline else tex_escape(row.name)
        cells = [name, *(_tex_cell(k, row.values.get(k)) for k in cols)]
        if i == best:
            cells = [r"\textbf{" + c + "}" for c in cells]
        lines.append(" & ".join(cells) + r" \\")
        if row.baseline:
            lines.append(r"\midrule")
    return [*lines, r"\bottomrule", r"\end{tabular}", r"\end{table}"]


def _coordinates(points: Sequence[tuple[int, float | None]]) -> str:
    return " ".join(f"({x},{y:.4f})" for x, y in points if y is not None)


def _tex_figure(rows: Sequence[LoopRow], best: int | None) -> list[str]:
    its = [(n, r) for n, r in enumerate((r for r in rows if not r.baseline), 1)]
    ticks = ",".join(str(n) for n, _ in its)
    labels = ",".join("{" + tex_escape(r.name) + "}" for _, r in its)
    lines = [
        r"\begin{figure}[ht]",
        r"\centering",
        r"\begin{tikzpicture}",
        r"\begin{axis}[width=0.7\linewidth, height=6cm, ymin=0, ymax=1.05, "
        f"xtick={{{ticks}}}, xticklabels={{{labels}}}, "
        r"xlabel={Iteration}, ylabel={Score}, legend pos=outer north east, "
        r"legend style={font=\small}]",
    ]
    base = next((r for r in rows if r.baseline), None)
    for key in defined_columns(rows, SCORES):
        points = [(n, r.values.get(key)) for n, r in its]
        if any(y is not None for _, y in points):
            lines += [rf"\addplot+[mark=*] coordinates {{{_coordinates(points)}}};"]
            lines += [rf"\addlegendentry{{{LABELS[key]}}}"]
    if base is not None and base.values.get("f1") is not None:
        y = base.values["f1"]
        lines += [
            rf"\addplot[gray, dashed] coordinates {{(1,{y:.4f}) ({len(its)},{y:.4f})}};",
            rf"\addlegendentry{{{tex_escape(base.name)} F1}}",
        ]
    if best is not None:
        x = [r for _, r in its].index(rows[best]) + 1
        key = "composite" if rows[best].values.get("composite") is not None else "f1"
        y = rows[best].values.get(key) or 0.0
        lines += [
            r"\addplot[only marks, mark=star, mark size=5pt, black] "
            rf"coordinates {{({x},{y:.4f})}};",
            rf"\addlegendentry{{best ({tex_escape(rows[best].name)})}}",
        ]
    caption = r"\caption{Scores per prompt iteration; the star marks the best.}"
    return [*lines, r"\end{axis}", r"\end{tikzpicture}", caption, r"\end{figure}"]


def metrics_latex(rows: Sequence[LoopRow]) -> str:
    """metrics.tex: a LaTeX document (compiles as it is with pdflatex) holding a booktabs table
    of the iterations, the best in bold, and a pgfplots figure of the scores per iteration; the
    table and the figure can be copied into a paper that loads booktabs and pgfplots."""
    best = best_row(rows)
    lines = [
        "% Written by extract-mlflow score-iterations. Compile with: pdflatex metrics.tex",
        r"\documentclass{article}",
        r"\usepackage[T1]{fontenc}",
        r"\usepackage{booktabs}",
        r"\usepackage{pgfplots}",
        r"\pgfplotsset{compat=1.16}",
        r"\begin{document}",
        "",
        *_tex_table(rows, best),
        "",
        *_tex_figure(rows, best),
        "",
        r"\end{document}",
    ]
    return "\n".join(lines) + "\n"


_TABLE_COLUMNS = ("f1", "f1_best", "precision", "recall", "composite", "tokens_per_doc")
_TABLE_LABELS = {
    "f1_best": "loop.best_f1",
    "precision": "loop.precision",
    "recall": "loop.recall",
    "composite": "loop.composite",
    "tokens_per_doc": "loop.tokens",
}
"""The terminal and markdown tables' column labels in the message catalogue (metrics.tex keeps
:data:`LABELS`, in English)."""


def _cell(key: str, value: float | None) -> str:
    if key == "tokens_per_doc" and value is not None:
        return f"{value:.0f}"
    return fmt(value)


def _table_rows(rows: Sequence[LoopRow], run_ids: Mapping[str, str]) -> list[tuple[str, ...]]:
    best = best_row(rows)
    cols = defined_columns(rows, _TABLE_COLUMNS)
    labels = [tr(_TABLE_LABELS[c]) if c in _TABLE_LABELS else LABELS[c] for c in cols]
    head = (tr("loop.iteration"), *labels, *((tr("loop.run_id"),) if run_ids else ()), "")
    out = [head]
    for i, r in enumerate(rows):
        mark = tr("loop.best") if i == best else tr("loop.reference") if r.baseline else ""
        run = (run_ids.get(r.name, ""),) if run_ids else ()
        out.append((r.name, *(_cell(c, r.values.get(c)) for c in cols), *run, mark))
    return out


def loop_table(rows: Sequence[LoopRow], run_ids: Mapping[str, str] | None = None) -> list[str]:
    """The loop as aligned plain-text lines (with each row's run id when logged)."""
    table = _table_rows(rows, run_ids or {})
    return aligned(table, left=1, rule=False)


def loop_markdown(rows: Sequence[LoopRow], run_ids: Mapping[str, str] | None = None) -> list[str]:
    """The loop as a markdown table, the best iteration in bold."""
    table = _table_rows(rows, run_ids or {})
    cells = [table[0], *((md_cell(t[0]), *t[1:]) for t in table[1:])]
    best = tr("loop.best")
    marked = [t if t[-1] != best else tuple(f"**{c}**" if c else c for c in t) for t in cells]
    return markdown_table(marked)


def agg_line(rows: Sequence[LoopRow], *, running: bool = True) -> str:
    """The aggregate progress line of the last row, with the running best so far (unless
    `running` is false: a baseline has none).

    >>> print(agg_line(loop_rows([("01", {"f1": 0.5, "precision": 0.4, "recall": 0.7})])))
    ... # doctest: +NORMALIZE_WHITESPACE
    AGG F1=0.5000 P=0.4000 R=0.7000 layout=n/a composite=n/a tok/doc=n/a
    | best F1=0.5000 composite=n/a
    """
    v = rows[-1].values
    tokens = v.get("tokens_per_doc")
    line = (
        f"AGG F1={fmt(v['f1'], 4)} P={fmt(v['precision'], 4)} R={fmt(v['recall'], 4)} "
        f"layout={fmt(v['layout_score'], 3)} composite={fmt(v['composite'], 4)} "
        f"tok/doc={'n/a' if tokens is None else f'{tokens:.0f}'}"
    )
    if not running:
        return line
    return f"{line} | best F1={fmt(v['f1_best'], 4)} composite={fmt(v['composite_best'], 4)}"
