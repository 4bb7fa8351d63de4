"""Every plot (matplotlib's object API, imported inside the functions): robustness of a metric
family's metrics across a numeric slice attribute (with interval bands), scores and tokens per
prompt iteration."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.curves import Curves
from ..evaluation.slices import CountSlice
from ..io.outputs import write_atomic
from .iterations import LABELS, SCORES, LoopRow, best_row, defined_columns


def robustness_figure(
    slices: Sequence[Any],
    attribute: str,
    confidence: float = 0.95,
    names: Sequence[str] | None = None,
    title: str | None = None,
) -> Any:
    """A matplotlib Figure of every metric (`names`; by default each the slices have) over the
    slices of a numeric attribute (x: value or bin mean): a line per metric, and its bootstrap
    interval as a band of the line's colour."""
    if names is None:
        found = (n for s in slices for n in s.values if "_ci_" not in n)
        names = list(dict.fromkeys(found))
    fig, ax = _figure()
    for name in names:
        shown = [s for s in slices if name in s.values and s.x is not None]
        if not shown:
            continue
        xs = [s.x for s in shown]
        (line,) = ax.plot(xs, [s.values[name] for s in shown], marker="o", label=name)
        low = [s.values[f"{name}_ci_low"] for s in shown]
        high = [s.values[f"{name}_ci_high"] for s in shown]
        ax.fill_between(xs, low, high, color=line.get_color(), alpha=0.15, linewidth=0)
    ax.set(xlabel=attribute, ylabel="score", title=title or f"Metrics by {attribute}")
    ax.grid(alpha=0.3)
    ax.legend(
        loc="center left",
        bbox_to_anchor=(1.01, 0.5),
        fontsize="small",
        title=f"bands: {confidence:.0%} CI",
        title_fontsize="small",
    )
    return fig


def _figure() -> tuple[Any, Any]:
    from matplotlib.figure import Figure  # the OO API: no pyplot, no global backend state

    fig = Figure(figsize=(7, 4), dpi=100, layout="constrained")
    return fig, fig.subplots()


def _save(fig: Any, paths: Sequence[Path]) -> None:
    """Save `fig` to every path (PNG, PDF… by suffix), each written whole, without a creation
    date, so a file only changes when the plot does."""
    for path in paths:
        meta = {"CreationDate": None} if path.suffix == ".pdf" else {}
        buffer = io.BytesIO()
        fig.savefig(buffer, format=path.suffix.lstrip("."), metadata=meta)
        write_atomic(path, buffer.getvalue())


def plot_trend(rows: Sequence[LoopRow], paths: Sequence[Path]) -> None:
    """trend.png/.pdf: every headline score per iteration, the best iteration starred, the
    baseline's scores as dashed horizontal lines."""
    fig, ax = _figure()
    its = [r for r in rows if not r.baseline]
    names = [r.name for r in its]
    base = next((r for r in rows if r.baseline), None)
    for key in defined_columns(rows, SCORES):
        values = [r.values.get(key) for r in its]
        line = ax.plot(names, [math.nan if v is None else v for v in values], marker="o")
        line[0].set_label(LABELS[key])
        if base is not None and base.values.get(key) is not None:
            ax.axhline(base.values[key], color=line[0].get_color(), linestyle="--", alpha=0.6)
    best = best_row(rows)
    if best is not None:
        key = "composite" if rows[best].values.get("composite") is not None else "f1"
        x = its.index(rows[best])
        ax.plot(
            [x],
            [rows[best].values.get(key)],
            marker="*",
            markersize=16,
            color="black",
            linestyle="none",
            label=f"best ({rows[best].name})",
        )
    if base is not None:
        ax.plot([], [], color="grey", linestyle="--", label=f"{base.name} (dashed)")
    ax.set(xlabel="iteration", ylabel="score", ylim=(0, 1.02), title="Scores per iteration")
    ax.grid(alpha=0.3)
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize="small")
    _save(fig, paths)


def plot_tokens(rows: Sequence[LoopRow], paths: Sequence[Path]) -> None:
    """tokens.png/.pdf: tokens per document per iteration (the baseline's as a dashed line).
    A ValueError when no iteration recorded usage: there is nothing to draw."""
    its = [r for r in rows if not r.baseline]
    values = [r.values.get("tokens_per_doc") for r in its]
    if all(v is None for v in values):
        raise ValueError("no token usage recorded: nothing to plot")
    fig, ax = _figure()
    ax.bar([r.name for r in its], [v or 0.0 for v in values], color="tab:purple")
    base = next((r for r in rows if r.baseline), None)
    if base is not None and base.values.get("tokens_per_doc") is not None:
        ax.axhline(base.values["tokens_per_doc"], color="grey", linestyle="--", label=base.name)
        ax.legend(fontsize="small")
    ax.set(xlabel="iteration", ylabel="tokens per document", title="Token cost per iteration")
    _save(fig, paths)


def robustness_plot(summary: Any, path: str | Path, attribute: str) -> Path:
    """A PNG of a metric family's metrics against a numeric slice attribute (one line per
    metric, its interval as a band): the summary's curves (its ``curves()``)."""
    curves: Curves | None = summary.curves().get(attribute)
    if curves is None:
        raise ValueError(f"'{attribute}' is not a numeric slice attribute of this summary")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    figure = robustness_figure(
        curves.slices, attribute, curves.confidence, curves.names, curves.title
    )
    _save(figure, [out])
    return out


def field_robustness_plot(slices: Sequence[CountSlice], attribute: str, path: Path) -> Path:
    """A PNG of micro precision, recall and F1 per slice of `attribute` with their bootstrap
    intervals as error bars (x: the value or bin mean of a numeric attribute, else the labels
    in order)."""
    fig, ax = _figure()
    numeric = all(s.x is not None for s in slices)
    for name in ("precision", "recall", "f1"):
        shown = [s for s in slices if name in s.values]
        if not shown:
            continue
        xs = [s.x if numeric and s.x is not None else s.label for s in shown]
        ys = [s.values[name] for s in shown]
        low = [y - s.values.get(f"{name}_ci_low", y) for y, s in zip(ys, shown, strict=True)]
        high = [s.values.get(f"{name}_ci_high", y) - y for y, s in zip(ys, shown, strict=True)]
        ax.errorbar(xs, ys, yerr=[low, high], marker="o", capsize=3, label=name)
    ax.set(xlabel=attribute, ylabel="score", title=f"Field metrics by {attribute}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    path.parent.mkdir(parents=True, exist_ok=True)
    _save(fig, [path])
    return path
