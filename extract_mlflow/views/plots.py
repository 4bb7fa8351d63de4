"""Every plot (matplotlib's object API, imported inside the functions): robustness of the
structure metrics across a numeric slice attribute, scores and tokens per prompt iteration."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..io.iterations import best_index
from ..structure.score import METRICS, Slice, StructureSummary
from .sections import IterationRow
from .table import LABELS


def robustness_png(slices: Sequence[Slice], attribute: str, path: Path) -> Path:
    """Plot every metric over the slices of a numeric attribute (x: value or bin mean)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    try:
        for name in METRICS:
            points = [(s.x, s.values[name]) for s in slices if name in s.values]
            if points:
                ax.plot(*zip(*points, strict=True), marker="o", label=name)
        ax.set_xlabel(attribute)
        ax.set_ylabel("score")
        ax.set_title(f"Structure metrics by {attribute}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=120, bbox_inches="tight")
    finally:
        plt.close(fig)
    return path


TREND_KEYS = ("f1", "precision", "recall", "macro_f1", "composite")


def _figure() -> tuple[Any, Any]:
    from matplotlib.figure import Figure  # the OO API: no pyplot, no global backend state

    fig = Figure(figsize=(7, 4), dpi=100, layout="constrained")
    return fig, fig.subplots()


def plot_trend(records: Sequence[IterationRow], path: Path) -> None:
    """trend.png: headline scores per iteration; the best iteration marked."""
    fig, ax = _figure()
    names = [r.name for r in records]
    for key in TREND_KEYS:
        values = [r.metrics.get(key, math.nan) for r in records]
        if not all(math.isnan(v) for v in values):
            ax.plot(names, values, marker="o", label=LABELS[key])
    best = best_index([r.metrics for r in records])
    if best is not None:
        ax.axvline(best, color="grey", linestyle=":", label=f"best ({records[best].name})")
    ax.set(xlabel="iteration", ylabel="score", ylim=(0, 1.02), title="Scores per iteration")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    fig.savefig(path)


def plot_tokens(records: Sequence[IterationRow], path: Path) -> None:
    """tokens.png: tokens per document per iteration (a note when no usage was recorded)."""
    fig, ax = _figure()
    values = [r.metrics.get("tokens_per_doc") for r in records]
    if any(v is not None for v in values):
        ax.bar([r.name for r in records], [v or 0.0 for v in values], color="tab:purple")
        ax.set(xlabel="iteration", ylabel="tokens per document")
    else:
        ax.text(0.5, 0.5, "no token usage recorded", ha="center", va="center")
        ax.set_axis_off()
    ax.set_title("Token cost per iteration")
    fig.savefig(path)


def robustness_plot(summary: StructureSummary, path: str | Path, attribute: str) -> Path:
    """A PNG of every structure metric against a numeric slice attribute (one line per metric)."""
    if attribute not in summary.numeric_attributes:
        raise ValueError(f"'{attribute}' is not a numeric slice attribute of this summary")
    return robustness_png(summary.slices[attribute], attribute, Path(path))
