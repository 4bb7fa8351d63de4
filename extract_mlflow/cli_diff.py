"""`extract-mlflow diff`: two prediction files scored against the same gold, compared field by
field without a tracking server (``--log`` logs both runs and the comparison)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .cli_options import (
    config_options,
    emit,
    handle_errors,
    page_output_options,
    quiet_mlflow,
    resampling_options,
    say,
    scoring_options,
    strict_option,
    timeout_option,
)
from .cli_scoring import Evaluating, gathered, scored_report
from .core.language import tr

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .diffing import Diff, FieldDelta, Sides

EXIT_REGRESSED = 1
FAIL_HELP = "Exit 1 when any field's F1 drops by more than --tolerance (the fields are listed)."
TOLERANCE_HELP = "How far a field's F1 may fall (or must rise) to count as regressed (improved)."
LOG_HELP = (
    "Also log both evaluations as MLflow runs and the comparison (eval/diff.json and the "
    "comparison page) on PRED_B's run."
)


@click.command("diff")
@click.argument("gold", type=click.Path(path_type=Path))
@click.argument("pred_a", type=click.Path(path_type=Path))
@click.argument("pred_b", type=click.Path(path_type=Path))
@config_options
@scoring_options
@strict_option
@click.option("--fail-on-regression", is_flag=True, help=FAIL_HELP)
@click.option("--tolerance", type=float, default=0.0, show_default=True, help=TOLERANCE_HELP)
@resampling_options
@click.option("--log", "log_runs", is_flag=True, help=LOG_HELP)
@click.option(
    "--tracking-uri",
    help="MLflow tracking URI for --log (default: MLFLOW_TRACKING_URI, else MLflow's local "
    "store in the working directory).",
)
@click.option("--experiment", help="MLflow experiment for --log (created if missing).")
@timeout_option
@page_output_options
@handle_errors
@gathered("how", Evaluating)
def diff_command(
    gold: Path,
    pred_a: Path,
    pred_b: Path,
    how: Evaluating,
    fail_on_regression: bool,
    tolerance: float,
    seed: int,
    resamples: int,
    log_runs: bool,
    tracking_uri: str | None,
    experiment: str | None,
    fmt: str,
    out: Path | None,
) -> None:
    """Score PRED_A and PRED_B (JSONL) against the same gold GOLD (JSONL) and show what changed
    from A to B: each field's F1 before → after with the delta, the regressed and improved
    fields, the documents that flipped between fully correct and not (with the fields that
    changed), and the paired-bootstrap interval of micro F1. No tracking server is needed.
    Exit 0, or 1 with --fail-on-regression when a field's F1 fell by more than --tolerance;
    2 for bad input or config.
    """
    from .comparison import check_options
    from .diffing import check_tolerance, diff

    check_tolerance(tolerance)
    check_options(seed, resamples, 0)
    if log_runs:  # fail fast, before scoring: a bad URI or an unreachable server
        from .tracking.client import check_reachable, resolve_tracking_uri

        check_reachable(resolve_tracking_uri(tracking_uri))
    # stream=False: the comparison page shows each side's mistakes
    report_a = scored_report(gold, pred_a, how, stream=False)
    report_b = scored_report(gold, pred_b, how, shown=report_a.warnings, stream=False)
    result = diff(
        report_a, report_b, tolerance, seed=seed, resamples=resamples,
        labels=(str(pred_a), str(pred_b)),
    )  # fmt: skip
    sides = _sides(gold, pred_a, pred_b, result) if fmt == "html" or log_runs else None
    if log_runs:
        _log(result, tracking_uri, experiment, sides)
    emit(render_diff(result, fmt, sides), out)
    if fail_on_regression and result.regressions:
        for f in result.regressions:
            say(_regressed_line(f, result.tolerance))
        sys.exit(EXIT_REGRESSED)


def _regressed_line(f: FieldDelta, tolerance: float) -> str:
    from .core.text import fmt

    delta = "n/a" if f.delta is None else f"{f.delta:+.3f}"
    return tr(
        "cli.regressed",
        path=f.path,
        before=fmt(f.before),
        after=fmt(f.after),
        delta=delta,
        tolerance=tolerance,
    )


def render_diff(result: Diff, fmt: str, sides: Mapping[str, Sides] | None = None) -> str:
    """The diff in one of the output formats."""
    if fmt == "json":
        return result.to_json()
    if fmt == "html":
        from .views.page import diff_page

        return diff_page(result, sides)
    from .views.diffing import diff_markdown, diff_table

    return diff_markdown(result) if fmt == "md" else diff_table(result)


def _sides(gold: Path, pred_a: Path, pred_b: Path, result: Diff) -> dict[str, Sides]:
    """The gold and both predictions of the flipped documents the comparison page shows side
    by side."""
    from .diffing import flip_sides
    from .io.loading import load_gold, load_predictions
    from .views.page import SIDE_BY_SIDE

    if not result.flips or result.report_a is None:
        return {}
    id_key = result.report_a.config.id_key
    docs = [load_predictions(p, id_key).docs for p in (pred_a, pred_b)]
    return flip_sides(result, load_gold(gold, id_key).docs, docs[0], docs[1], SIDE_BY_SIDE)


def _log(
    result: Diff,
    tracking_uri: str | None,
    experiment: str | None,
    sides: Mapping[str, Sides] | None,
) -> None:
    """Log both evaluations and the comparison (with its page); one stderr line per run."""
    from .tracking.client import display_uri
    from .tracking.comparisons import PAGE_ARTIFACT, log_diff

    quiet_mlflow()
    page = {PAGE_ARTIFACT: render_diff(result, "html", sides)}
    for label, logged in zip(
        ("A", "B"), log_diff(result, tracking_uri, experiment, page), strict=True
    ):
        uri = display_uri(logged.tracking_uri)
        say(tr("cli.logged_side", label=label, run_id=logged.run_id, uri=uri))
