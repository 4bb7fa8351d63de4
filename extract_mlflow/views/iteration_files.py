"""The results folder of a prompt-optimisation loop, written the same way with or without a
tracking server (``score-iterations --results``, ``IterationLogger(results=...)``):

- ``metrics.csv``, ``metrics.tex``, ``trend.png``/``.pdf``, ``tokens.png``/``.pdf`` (only when
  usage was recorded);
- ``summary.md`` and ``diagnostics.json``: the loop, then the best and the last iteration;
- ``prompts/iter_<n>.txt``, ``best_prompt.txt`` and ``feedback/iter_<n>.md`` (n counts the
  iterations from 1, whatever their names).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.text import md_cell, safe_lines
from ..io.outputs import claim_results_folder, write_atomic
from .feedback import feedback_text
from .iterations import LoopRow, best_row, loop_markdown, loop_rows, metrics_csv, metrics_latex
from .markdown import report_markdown
from .plots import plot_tokens, plot_trend

if TYPE_CHECKING:
    from ..evaluation.iterations import Iteration

NO_TOKENS = (
    "No token usage was recorded (no `usage` in the predictions): tokens.png and tokens.pdf "
    "are left out."
)


def iteration_name(it: Iteration, n: int) -> str:
    """An iteration's name, else its number (two digits, from 1)."""
    return it.name if it.name is not None else f"{n:02d}"


def results_rows(iterations: Sequence[Iteration], baseline: Iteration | None) -> list[LoopRow]:
    """The loop's rows: the baseline's first (when given), then one per iteration."""
    named = [(iteration_name(it, n), it.metrics()) for n, it in enumerate(iterations, 1)]
    base = (iteration_name(baseline, 0), baseline.metrics()) if baseline is not None else None
    return loop_rows(named, base)


def best_position(iterations: Sequence[Iteration]) -> int | None:
    """The index of the best iteration (composite, else F1; ties → earliest)."""
    best = best_row(results_rows(iterations, None))
    return best


def _overview_lines(it: Iteration) -> list[str]:
    """Recall by field, worst first, and the missing sections counted over the documents (a
    page report's own "Pages" table has the rows extracted vs gold per document)."""
    report = it.report
    lines = []
    if not report.layouts:  # a page report shows it under "Pages"
        recall = ", ".join(f"`{md_cell(r)}`" for r in report.field_recall_lines())
        lines.append(f"- recall by field, worst first: {recall or 'n/a'}")
    missing = report.missing_sections
    if missing:
        lines.append(
            "- missing sections: "
            + ", ".join(f"{md_cell(t)} ({n} document(s))" for t, n in missing.items())
        )
    return lines


def _demoted(markdown: str, levels: int) -> list[str]:
    """`markdown`'s lines with every heading `levels` deeper."""
    return [
        ("#" * levels + line) if line.startswith("#") else line for line in markdown.splitlines()
    ]


def _iteration_section(title: str, it: Iteration, n: int) -> list[str]:
    overview = _overview_lines(it)
    head = ["", f"## {title}: {md_cell(iteration_name(it, n))}", ""]
    return [*head, *overview, *([""] if overview else []), *_demoted(report_markdown(it.report), 2)]


def summary_markdown(
    iterations: Sequence[Iteration], baseline: Iteration | None, *, tokens: bool
) -> str:
    """summary.md: the loop's table, which iteration is best, then the diagnostics of the best
    and of the last iteration (one section when they are the same)."""
    rows = results_rows(iterations, baseline)
    best = best_position(iterations)
    lines = ["# Prompt iterations", ""]
    if best is not None:
        key = "composite" if "composite" in iterations[best].metrics() else "F1"
        lines.append(
            f"{len(iterations)} iteration(s); the best by {key} is "
            f"**{md_cell(iteration_name(iterations[best], best + 1))}** (ties go to the earliest)."
        )
    if baseline is not None:
        lines.append(
            f"The `{md_cell(iteration_name(baseline, 0))}` row is a reference, scored once."
        )
    lines += ["", *loop_markdown(rows), ""]
    lines.append("Token cost per iteration: tokens.png." if tokens else NO_TOKENS)
    if best is not None:
        last = len(iterations) - 1
        title = "Best and last iteration" if best == last else "Best iteration"
        lines += _iteration_section(title, iterations[best], best + 1)
        if best != last:
            lines += _iteration_section("Last iteration", iterations[last], last + 1)
    return safe_lines(lines)


def diagnostics_json(iterations: Sequence[Iteration]) -> str:
    """diagnostics.json: the full diagnostics of the best and of the last iteration."""
    best = best_position(iterations)

    def entry(i: int | None) -> dict[str, Any] | None:
        if i is None:
            return None
        return {"iteration": iteration_name(iterations[i], i + 1), **iterations[i].report.to_dict()}

    data = {
        "iterations": [iteration_name(it, n) for n, it in enumerate(iterations, 1)],
        "best": entry(best),
        "last": entry(len(iterations) - 1 if iterations else None),
    }
    return json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n"


def _clear(folder: Path, pattern: str) -> None:
    for old in folder.glob(pattern) if folder.is_dir() else ():
        old.unlink()


def write_results(
    folder: str | Path, iterations: Sequence[Iteration], baseline: Iteration | None = None
) -> Path:
    """Write the loop's results into `folder` and return it: a new or empty folder, or one
    written so before (it holds :data:`~extract_mlflow.io.outputs.RESULTS_MARKER`; any other
    is an InputError, raised before anything is written). Every file is written whole; files
    of an earlier run that this one does not produce are removed."""
    out = claim_results_folder(folder)
    rows = results_rows(iterations, baseline)
    tokens = any(r.values.get("tokens_per_doc") is not None for r in rows if not r.baseline)
    write_atomic(out / "metrics.csv", metrics_csv(rows))
    write_atomic(out / "metrics.tex", metrics_latex(rows))
    write_atomic(out / "summary.md", summary_markdown(iterations, baseline, tokens=tokens))
    write_atomic(out / "diagnostics.json", diagnostics_json(iterations))
    plot_trend(rows, [out / "trend.png", out / "trend.pdf"])
    for suffix in (".png", ".pdf"):
        (out / f"tokens{suffix}").unlink(missing_ok=True)
    if tokens:
        plot_tokens(rows, [out / "tokens.png", out / "tokens.pdf"])
    _write_texts(out, iterations)
    return out


def _write_texts(out: Path, iterations: Sequence[Iteration]) -> None:
    """prompts/iter_<n>.txt, best_prompt.txt and feedback/iter_<n>.md."""
    _clear(out / "prompts", "iter_*.txt")
    _clear(out / "feedback", "iter_*.md")
    (out / "best_prompt.txt").unlink(missing_ok=True)
    for n, it in enumerate(iterations, 1):
        if it.prompt is not None:
            (out / "prompts").mkdir(exist_ok=True)
            write_atomic(out / "prompts" / f"iter_{n}.txt", it.prompt)
        (out / "feedback").mkdir(exist_ok=True)
        write_atomic(out / "feedback" / f"iter_{n}.md", feedback_text(it.report))
    best = best_position(iterations)
    if best is not None and iterations[best].prompt is not None:
        prompt = iterations[best].prompt
        assert prompt is not None
        write_atomic(out / "best_prompt.txt", prompt)
