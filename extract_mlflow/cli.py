"""The `extract-mlflow` command: a thin shell over the library.

Exit codes: 0 pass, 1 a gate failed, 2 bad input / bad config / tracking unreachable (one line on
stderr, no traceback).
"""

from __future__ import annotations

import dataclasses
import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ._version import __version__
from .cli_options import (
    config_options,
    echo_failures,
    emit,
    finite_number,
    gate_options,
    handle_errors,
    output_options,
    page_output_options,
    parse_field_min,
    quiet_mlflow,
    read_gates,
    refuse_unchecked,
    say,
    scoring_options,
    strict_option,
    timeout_option,
    tracking_options,
)
from .cli_scoring import Bars, Evaluating, Logging, bar_options, gathered, scored_report
from .core.language import tr

if TYPE_CHECKING:
    from .report import Report

EXIT_GATE_FAILED = 1


class _Group(click.Group):
    """The command group: `diff`, `hints` and `score-iterations` live in their own modules,
    imported when one of them is run or listed (so `score` never loads their code)."""

    ELSEWHERE = ("diff", "hints", "score-iterations")

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.ELSEWHERE})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.ELSEWHERE and cmd_name not in self.commands:
            from .cli_diff import diff_command
            from .cli_loop import hints, score_iterations

            for command in (diff_command, hints, score_iterations):
                self.add_command(command)
        return super().get_command(ctx, cmd_name)


def _show_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """`--version`: the version, and which modules run compiled (a compiled release wheel)."""
    if not value or ctx.resilient_parsing:
        return
    from ._version import compiled_modules

    compiled = compiled_modules()
    click.echo(f"extract-mlflow, version {__version__}")
    click.echo(f"compiled with mypyc: {len(compiled)} modules" if compiled else "pure Python")
    ctx.exit()


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_show_version,
    help="Show the version and whether the scoring modules run compiled, then exit.",
)
def main() -> None:
    """Evaluate LLM document extraction against a gold set and gate releases in MLflow.

    Exit codes: 0 pass, 1 a gate failed, 2 bad input, bad config or unreachable tracking server.
    """


def _render_report(report: Report, fmt: str, extra: dict[str, Any]) -> str:
    if fmt == "json":
        data = report.to_dict()
        data.update(extra)
        return json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n"
    from .views import markdown, table

    return markdown.report_markdown(report) if fmt == "md" else table.report_table(report)


def _engine_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """`--engine` and `--spark-master`: where `score` runs."""
    func = click.option(
        "--spark-master",
        metavar="URL",
        help="Spark master of --engine spark (default: local[*]), e.g. local[2].",
    )(func)
    func = click.option(
        "--workers",
        type=int,
        default=1,
        show_default=True,
        metavar="N",
        help="Score in N processes and merge (0: one per core); the same report as 1.",
    )(func)
    return click.option(
        "--engine",
        type=click.Choice(["local", "spark"]),
        default="local",
        show_default=True,
        help="Score in this process, or on Spark (GOLD and PRED: paths Spark can read, "
        "e.g. s3a://...; needs pip install 'extract-mlflow[spark]' and Java).",
    )(func)


@main.command()
@click.argument("gold", type=click.Path())
@click.argument("pred", type=click.Path())
@config_options
@click.option(
    "--min-f1",
    type=click.FloatRange(0, 1),
    callback=finite_number,
    help="Gate: exit 1 when micro F1 is below this.",
)
@click.option(
    "--field-min",
    multiple=True,
    metavar="PATH=X",
    callback=parse_field_min,
    help="Gate: exit 1 when this field's F1 is below X (repeatable), e.g. 'line_items[].qty=0.9'.",
)
@bar_options
@scoring_options
@click.option(
    "--canary",
    "canaries",
    multiple=True,
    metavar="TEXT",
    help="A prompt-injection canary planted in the sources, 'INSTRUCTION => PAYLOAD' or one "
    "text that is both (repeatable; needs --sources or --source-key): a prediction containing "
    "the payload obeyed it (injection_obeyed_rate).",
)
@click.option("--no-log", is_flag=True, help="Score only; do not log a run to MLflow.")
@strict_option
@tracking_options
@click.option(
    "--prompt",
    "prompts",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Prompt file used for this run, stored under eval/prompts/ (repeatable).",
)
@click.option(
    "--prompt-uri",
    "prompt_uris",
    multiple=True,
    metavar="prompts:/NAME/VERSION",
    help="A registered MLflow prompt used for this run, linked to it (repeatable).",
)
@click.option(
    "--register",
    metavar="MODEL_NAME",
    help="Register the run as a new version of this registered model (source: its eval/).",
)
@_engine_options
@output_options
@handle_errors
@gathered("how", Evaluating)
@gathered("bars", Bars)
@gathered("logging", Logging)
def score(
    gold: str,
    pred: str,
    how: Evaluating,
    bars: Bars,
    no_log: bool,
    logging: Logging,
    fmt: str,
    out: Path | None,
) -> None:
    """Score predictions PRED (JSONL) against gold GOLD (JSONL), field by field, and log the
    evaluation to MLflow as one run (unless --no-log). With --engine spark the scoring runs
    on Spark (same report)."""
    if not no_log:  # fail fast, before scoring: a bad URI, a forged tag, an unreachable server
        from .tracking.client import check_reachable, resolve_tracking_uri
        from .tracking.payload import check_user_keys

        check_user_keys(logging.params, logging.tags)
        check_reachable(resolve_tracking_uri(logging.tracking_uri))
    report = scored_report(gold, pred, how)
    failures = bars.failures(report)
    extra: dict[str, Any] = {"gates": {"passed": not failures, "failures": failures}}
    if not no_log:
        extra |= _logged_run(report, logging)
    emit(_render_report(report, fmt, extra), out)
    for failure in failures:
        say(tr("cli.gate_failed", reason=failure))
    if failures:
        sys.exit(EXIT_GATE_FAILED)


def _logged_run(report: Report, logging: Logging) -> dict[str, Any]:
    """Log `report` as one MLflow run; what the output says about it (run id, model
    version)."""
    from .tracking.client import display_uri
    from .tracking.log import log_report

    quiet_mlflow()
    logged = log_report(report, **dataclasses.asdict(logging))
    extra: dict[str, Any] = {"run_id": logged.run_id}
    if logged.model_version is not None:
        extra["model_version"] = logged.model_version
    unfinished = logged.unfinished_warning()
    if unfinished is not None:
        say(f"warning: {unfinished}")
    say(tr("cli.logged_run", run_id=logged.run_id, uri=display_uri(logged.tracking_uri)))
    return extra


def _render(result: Any, fmt: str) -> str:
    if fmt == "json":
        return str(result.to_json())
    if fmt == "html":
        from .views.page import comparison_page

        return comparison_page(getattr(result, "comparison", result))
    return str(result.to_markdown() if fmt == "md" else result.to_table())


@main.command("compare")
@click.argument("baseline")
@click.argument("candidate")
@gate_options
@timeout_option
@page_output_options
@handle_errors
def compare_command(
    baseline: str,
    candidate: str,
    gates_file: Path | None,
    min_: tuple[str, ...],
    max_: tuple[str, ...],
    max_drop: tuple[str, ...],
    tracking_uri: str | None,
    seed: int,
    resamples: int,
    min_documents: int,
    allow_incomparable: bool,
    allow_unfinished: bool,
    fmt: str,
    out: Path | None,
) -> None:
    """Compare run CANDIDATE with run BASELINE on the tracking server and apply the gates.

    Each of BASELINE and CANDIDATE is a run id, runs:/ID, models:/NAME/VERSION,
    models:/NAME@ALIAS, prompts:/NAME/VERSION or prompts:/NAME@ALIAS (the evaluation run linked
    to that prompt version). Prints per metric both values, the delta and, for count-based
    metrics, a paired-bootstrap interval and p-value; flipped and most regressed documents.
    The page (--format html) and the JSON are kept on CANDIDATE's run under
    eval/comparisons/<baseline run id>/<UTC time>/; the tag extract_mlflow.comparison: the latest.
    Exit 0 when every gate passed, 1 when one failed, 2 for a bad reference, a run that is not
    FINISHED (unless --allow-unfinished), runs scored differently (unless --allow-incomparable),
    no gate evaluated (the report is still printed), a significant gate on fewer than
    --min-documents paired documents, or an unreachable server.
    """
    from .tracking.refs import compare_refs

    gates = read_gates(gates_file, min_, max_, max_drop)
    quiet_mlflow()
    comparison = compare_refs(
        baseline,
        candidate,
        tracking_uri=tracking_uri,
        gates=gates,
        seed=seed,
        resamples=resamples,
        allow_incomparable=allow_incomparable,
        allow_unfinished=allow_unfinished,
        min_documents=min_documents,
    )
    emit(_render(comparison, fmt), out)
    refuse_unchecked(comparison)
    echo_failures(comparison)
    sys.exit(comparison.exit_code)


@main.command()
@click.argument("name")
@click.argument("version")
@click.option(
    "--alias",
    default="champion",
    show_default=True,
    help="The alias to move to VERSION when it passes.",
)
@click.option(
    "--allow-first",
    is_flag=True,
    help="When no version holds the alias and no gate can be evaluated without a baseline "
    "(only --max-drop and other change gates), take the alias anyway; the verdict and the "
    "version's tags say it was a first promotion with no baseline.",
)
@gate_options
@timeout_option
@output_options
@handle_errors
def promote(
    name: str,
    version: str,
    alias: str,
    allow_first: bool,
    gates_file: Path | None,
    min_: tuple[str, ...],
    max_: tuple[str, ...],
    max_drop: tuple[str, ...],
    tracking_uri: str | None,
    seed: int,
    resamples: int,
    min_documents: int,
    allow_incomparable: bool,
    allow_unfinished: bool,
    fmt: str,
    out: Path | None,
) -> None:
    """Move --alias to VERSION of registered model NAME (or of prompt prompts:/NAME) only when
    it passes the gates against the version holding the alias now (with no holder, only the
    absolute thresholds apply). VERSION is tagged with the verdict, a summary and the gate
    criteria either way; its run keeps the comparison under eval/comparisons/<baseline run
    id>/<UTC time>/ (the version tag extract_mlflow.promotion.comparison names it).
    Concurrent promotes of one alias are serialised by a lease on NAME and
    re-gated against the actual holder before the alias moves; --timeout bounds each tracking
    call, and a promote waits for the promotes ahead of it as long as they finish (exit 2 once
    none has for 6 × --timeout). Exit 0 promoted, 1 a gate failed
    or the promotion was superseded by a concurrent one (alias not moved by it), 2 bad input
    (including a run that is not FINISHED and no gate evaluated) or an unreachable server.
    """
    from .tracking.promote import promote as promote_version

    gates = read_gates(gates_file, min_, max_, max_drop)
    quiet_mlflow()
    result = promote_version(
        name,
        version,
        alias=alias,
        gates=gates,
        tracking_uri=tracking_uri,
        seed=seed,
        resamples=resamples,
        allow_incomparable=allow_incomparable,
        allow_unfinished=allow_unfinished,
        allow_first=allow_first,
        min_documents=min_documents,
    )
    emit(_render(result, fmt), out)
    say(result.headline())
    echo_failures(result.comparison)
    sys.exit(result.exit_code)


@main.command()
@click.option(
    "--tracking-uri",
    help="MLflow tracking URI (default: MLFLOW_TRACKING_URI, else the local store here).",
)
@click.option(
    "--experiment", default="extract-mlflow-demo", show_default=True, help="Experiment name."
)
@click.option(
    "--model-name",
    default="invoice-extractor",
    show_default=True,
    help="Registered model that gets one version per demo run.",
)
@click.option(
    "--example-dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Example folder (default: the bundled examples/invoices).",
)
@click.option(
    "--export",
    "export_dir",
    type=click.Path(path_type=Path),
    help="Copy the example (gold, predictions, config, README, sources) into this folder to "
    "start from, and log nothing.",
)
@timeout_option
@output_options
@handle_errors
def demo(
    tracking_uri: str | None,
    experiment: str,
    model_name: str,
    example_dir: Path | None,
    export_dir: Path | None,
    fmt: str,
    out: Path | None,
) -> None:
    """Log a baseline and an improved run of the bundled invoice example (with prompts),
    register both as model versions, and print a scoreboard and the command to open the UI.
    With --export DIR, copy the example's files into DIR instead."""
    if export_dir is not None:
        from .io.examples import export_example

        copied = export_example(export_dir, example_dir)
        emit(_export_note(export_dir, copied, fmt), out)
        return
    from .tracking.client import check_reachable, resolve_tracking_uri
    from .tracking.demo import run_demo, scoreboard

    check_reachable(resolve_tracking_uri(tracking_uri))
    quiet_mlflow()
    result = run_demo(
        tracking_uri=tracking_uri,
        experiment=experiment,
        model_name=model_name,
        example_dir=example_dir,
    )
    if fmt == "json":
        emit(json.dumps(result.to_dict(), ensure_ascii=False, indent=2, default=str) + "\n", out)
    elif fmt == "md":
        emit(f"```\n{scoreboard(result).rstrip()}\n```\n", out)
    else:
        emit(scoreboard(result), out)


def _export_note(dest: Path, copied: list[Path], fmt: str) -> str:
    """What --export copied, and the command that scores the copy."""
    if fmt == "json":
        return json.dumps({"exported": [str(p) for p in copied]}, indent=2) + "\n"
    d = shlex.quote(str(dest))
    lines = [tr("cli.exported", n=len(copied), dest=dest), tr("cli.next")]
    lines.append(
        f"  extract-mlflow score {d}/gold.jsonl {d}/pred_improved.jsonl "
        f"--config {d}/config.toml --sources {d}/sources"
    )
    text = "\n".join(lines) + "\n"
    return f"```\n{text}```\n" if fmt == "md" else text


if __name__ == "__main__":  # pragma: no cover
    main()
