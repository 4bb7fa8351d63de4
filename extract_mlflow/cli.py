"""The `extract-mlflow` command: a thin shell over the library.

Exit codes: 0 pass, 1 a gate failed, 2 bad input / bad config / tracking unreachable (one line on
stderr, no traceback).
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import click

from ._version import __version__
from .core.text import terminal_safe
from .errors import ConfigError, ExtractMlflowError

F = TypeVar("F", bound=Callable[..., Any])
EXIT_GATE_FAILED = 1
EXIT_BAD_INPUT = 2


def say(line: str) -> None:
    """One line on stderr, its control characters escaped (ids and values come from inputs)."""
    click.echo(terminal_safe(line, one_line=True), err=True)


def _fail(message: str) -> None:
    from .tracking.client import redact

    say(f"error: {redact(message)}")  # never a credential
    sys.exit(EXIT_BAD_INPUT)


def handle_errors(func: F) -> F:
    """Turn library errors into one stderr line and exit code 2 (no traceback)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with _terminate_as_interrupt():
                return func(*args, **kwargs)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise  # usage errors: click reports them itself (exit 2)
        except ExtractMlflowError as exc:
            _fail(str(exc))
        except KeyboardInterrupt as exc:
            _fail(f"interrupted: {exc}" if str(exc) else "interrupted")
        except RecursionError:
            _fail("input nested too deeply to score")
        except MemoryError:
            _fail("out of memory")
        except OSError as exc:
            _fail(f"{exc.filename or 'I/O'}: {exc.strerror or exc}")
        except Exception as exc:  # a bug: still one line, the traceback only on request
            if os.environ.get("EXTRACT_MLFLOW_DEBUG"):
                raise
            _fail(
                f"internal error: {type(exc).__name__}: {exc} "
                "(set EXTRACT_MLFLOW_DEBUG=1 for the traceback)"
            )

    return wrapper  # type: ignore[return-value]


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM (a cancelled CI job, `kill`) raises KeyboardInterrupt, like Ctrl-C: a run being
    logged is then ended KILLED and named, not left RUNNING."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def output_options(func: F) -> F:
    """`--format` and `--out`, shared by every command that prints a report."""
    func = click.option(
        "--out",
        type=click.Path(dir_okay=False, writable=True, path_type=Path),
        help="Write the report to this file instead of standard output.",
    )(func)
    func = click.option(
        "--format",
        "fmt",
        type=click.Choice(["table", "json", "md"]),
        default="table",
        show_default=True,
        help="Report format: a terminal table, one JSON object, or markdown.",
    )(func)
    return func


def emit(text: str, out: Path | None) -> None:
    """Print a report, or write it to `out`, with control characters escaped (JSON stays
    JSON: the escapes are its own)."""
    text = terminal_safe(text)
    if out is None:
        click.echo(text, nl=not text.endswith("\n"))
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ExtractMlflowError(f"{out}: cannot write report: {exc.strerror}") from None


def _parse_field_min(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> list[tuple[str, float]]:
    """`--field-min PATH=X` values as (path, X) pairs; a usage error when malformed."""
    out = []
    for v in values:
        path, sep, bar = v.rpartition("=")
        try:
            threshold = float(bar)
        except ValueError:
            threshold = -1.0
        if not sep or not path or not 0.0 <= threshold <= 1.0:
            raise click.BadParameter(
                f"{v!r}: expected PATH=X with X between 0 and 1", param_hint="--field-min"
            )
        out.append((path, threshold))
    return out


def _finite(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """Refuse NaN, which every range check lets through (NaN compares false both ways)."""
    if value is not None and math.isnan(value):
        raise click.BadParameter(f"{value!r} is not a number", param=param)
    return value


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="extract-mlflow")
def main() -> None:
    """Evaluate LLM document extraction against a gold set and gate releases in MLflow.

    Exit codes: 0 pass, 1 a gate failed, 2 bad input, bad config or unreachable tracking server.
    """


def _key_values(
    option: str,
) -> Callable[[click.Context, click.Parameter, tuple[str, ...]], dict[str, str]]:
    def parse(
        ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
    ) -> dict[str, str]:
        out: dict[str, str] = {}
        for v in values:
            key, sep, value = v.partition("=")
            if not sep or not key.strip():
                raise click.BadParameter(f"{v!r}: expected KEY=VALUE", param_hint=option)
            out[key.strip()] = value
        return out

    return parse


def tracking_options(func: F) -> F:
    """Where a run goes: shared by every command that logs to MLflow."""
    for decorator in reversed(
        [
            click.option(
                "--tracking-uri",
                help="MLflow tracking URI (default: MLFLOW_TRACKING_URI, else MLflow's local "
                "store in the working directory).",
            ),
            click.option("--experiment", help="MLflow experiment name (created if missing)."),
            click.option("--run-name", help="Name of the MLflow run."),
            click.option(
                "--param",
                "params",
                multiple=True,
                metavar="KEY=VALUE",
                callback=_key_values("--param"),
                help="Extra run parameter (repeatable), e.g. model=gpt-x.",
            ),
            click.option(
                "--tag",
                "tags",
                multiple=True,
                metavar="KEY=VALUE",
                callback=_key_values("--tag"),
                help="Extra run tag (repeatable), e.g. team=docs. Keys starting with 'mlflow.' "
                "or 'extract_mlflow.' are refused.",
            ),
        ]
    ):
        func = decorator(func)
    return timeout_option(func)


def timeout_option(func: F) -> F:
    """`--timeout`: shared by every command that talks to a tracking server."""
    from .tracking.client import DEFAULT_TIMEOUT

    return click.option(
        "--timeout",
        type=click.FloatRange(min=0, min_open=True),
        default=None,
        metavar="SECONDS",
        expose_value=False,
        callback=_use_timeout,
        help="Give up on a tracking server call (its retries included) after about this many "
        f"seconds [default: {DEFAULT_TIMEOUT:g}, or MLflow's MLFLOW_HTTP_REQUEST_* settings].",
    )(func)


def _use_timeout(ctx: click.Context, param: click.Parameter, value: float | None) -> None:
    """Make `--timeout` the bound of every tracking call of this command (reset at its end)."""
    if value is None:
        return
    from .tracking.client import request_timeout

    ctx.with_resource(request_timeout(value))


def quiet_mlflow() -> None:
    """MLflow and its store migrations log INFO lines to stderr; keep stderr for our answers."""
    import logging

    for name in ("mlflow", "alembic"):
        logging.getLogger(name).setLevel(logging.WARNING)


def _render_report(report: Any, fmt: str, extra: dict[str, Any]) -> str:
    if fmt == "json":
        data = report.to_dict()
        data.update(extra)
        return json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n"
    if fmt == "md":
        return str(report.to_markdown())
    return str(report.to_table())


@main.command()
@click.argument("gold", type=click.Path(path_type=Path))
@click.argument("pred", type=click.Path(path_type=Path))
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    help="Scoring config (TOML or JSON).",
)
@click.option(
    "--id-key",
    help="Key that joins gold and prediction lines (default: the config's id_key, else 'id').",
)
@click.option(
    "--min-f1",
    type=click.FloatRange(0, 1),
    callback=_finite,
    help="Gate: exit 1 when micro F1 is below this.",
)
@click.option(
    "--field-min",
    multiple=True,
    metavar="PATH=X",
    callback=_parse_field_min,
    help="Gate: exit 1 when this field's F1 is below X (repeatable), e.g. 'line_items[].qty=0.9'.",
)
@click.option(
    "--text-key",
    help="Prediction key holding a wiki/markdown page (default: the config's text_key, "
    "else 'output').",
)
@click.option(
    "--profile",
    help="Layout profile of the pages (default: the gold line's topic, else the only profile).",
)
@click.option(
    "--sources",
    type=click.Path(path_type=Path),
    help="Source documents for text fidelity: a folder of <id>.txt/.md/.pdf or a JSONL of "
    "{id, text}.",
)
@click.option("--source-key", help="Gold field holding the source text (instead of --sources).")
@click.option(
    "--approvals",
    type=click.Path(path_type=Path),
    help="CSV or JSONL of (id, path) values a reviewer accepted: their fidelity flags are "
    "cleared and reported as approved.",
)
@click.option(
    "--slice-by",
    multiple=True,
    metavar="FIELD",
    help="Gold attribute to report structure metrics by (repeatable), e.g. layout.",
)
@click.option("--no-log", is_flag=True, help="Score only; do not log a run to MLflow.")
@click.option(
    "--strict",
    is_flag=True,
    help="Config warnings are errors (exit 2, nothing logged): a [fields] path no gold field "
    "has, an unknown unit, a date format that parses no gold value.",
)
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
@output_options
@handle_errors
def score(
    gold: Path,
    pred: Path,
    config_path: Path | None,
    id_key: str | None,
    min_f1: float | None,
    field_min: list[tuple[str, float]],
    text_key: str | None,
    profile: str | None,
    sources: Path | None,
    source_key: str | None,
    approvals: Path | None,
    slice_by: tuple[str, ...],
    no_log: bool,
    strict: bool,
    tracking_uri: str | None,
    experiment: str | None,
    run_name: str | None,
    params: dict[str, str],
    tags: dict[str, str],
    prompts: tuple[Path, ...],
    prompt_uris: tuple[str, ...],
    register: str | None,
    fmt: str,
    out: Path | None,
) -> None:
    """Score predictions PRED (JSONL) against gold GOLD (JSONL), field by field, and log the
    evaluation to MLflow as one run (unless --no-log)."""
    from .evaluation.evaluate import evaluate
    from .gate_checks import check_report

    if not no_log:  # fail fast, before scoring: a bad URI, a forged tag, an unreachable server
        from .tracking.client import check_reachable, resolve_tracking_uri
        from .tracking.payload import check_user_keys

        uri = resolve_tracking_uri(tracking_uri)
        check_user_keys(params, tags)
        check_reachable(uri)
    report = evaluate(
        gold,
        pred,
        config_path,
        id_key=id_key,
        text_key=text_key,
        profile=profile,
        sources=sources,
        source_key=source_key,
        approvals=approvals,
        slice_by=slice_by,
    )
    if strict and report.warnings:
        raise ConfigError(f"--strict: {'; '.join(report.warnings)}")
    for warning in report.warnings:
        say(f"warning: {warning}")
    for doc in report.layouts:  # pages are few and large: one progress line each
        say(doc.progress_line())
    failures = check_report(report, min_f1, field_min)
    extra: dict[str, Any] = {"gates": {"passed": not failures, "failures": failures}}
    if not no_log:
        from .tracking.client import display_uri
        from .tracking.log import log_report

        quiet_mlflow()
        logged = log_report(
            report,
            tracking_uri=tracking_uri,
            experiment=experiment,
            run_name=run_name,
            prompts=prompts,
            prompt_uris=prompt_uris,
            params=params,
            tags=tags,
            register=register,
        )
        extra["run_id"] = logged.run_id
        if logged.model_version is not None:
            extra["model_version"] = logged.model_version
        unfinished = logged.unfinished_warning()
        if unfinished is not None:
            say(f"warning: {unfinished}")
        say(f"logged run {logged.run_id} to {display_uri(logged.tracking_uri)}")
    emit(_render_report(report, fmt, extra), out)
    for failure in failures:
        say(f"gate failed: {failure}")
    if failures:
        sys.exit(EXIT_GATE_FAILED)


@main.command("score-iterations")
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--gold",
    type=click.Path(path_type=Path),
    help="Gold JSONL (default: FOLDER/gold.jsonl).",
)
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="Scoring config.")
@click.option("--id-key", help="Key that joins gold and prediction lines.")
@tracking_options
@output_options
@handle_errors
def score_iterations(
    folder: Path,
    gold: Path | None,
    config_path: Path | None,
    id_key: str | None,
    tracking_uri: str | None,
    experiment: str | None,
    run_name: str | None,
    params: dict[str, str],
    tags: dict[str, str],
    fmt: str,
    out: Path | None,
) -> None:
    """Score a prompt-optimisation loop: FOLDER holds NN/pred.jsonl (+ NN/prompt.txt) per
    iteration. Logs one parent run (a metric step per iteration, trend plots, the best prompt)
    with a child run per iteration."""
    from .tracking.client import check_reachable, resolve_tracking_uri
    from .tracking.iterations import log_iteration_dir

    check_reachable(resolve_tracking_uri(tracking_uri))
    quiet_mlflow()
    result = log_iteration_dir(
        folder,
        gold,
        config_path,
        id_key=id_key,
        tracking_uri=tracking_uri,
        experiment=experiment,
        run_name=run_name,
        params=params,
        tags=tags,
    )
    warning = result.parent.unfinished_warning()
    if warning is not None:
        say(f"warning: {warning}")
    data = result.to_dict()
    if fmt == "json":
        text = json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n"
    else:
        text = result.to_markdown() if fmt == "md" else result.to_table()
    emit(text, out)


def gate_options(func: F) -> F:
    """Gates and the bootstrap settings of `compare` and `promote`."""
    for decorator in reversed(
        [
            click.option(
                "--gates",
                "gates_file",
                type=click.Path(dir_okay=False, path_type=Path),
                help="Gates file: TOML [[gate]] tables (or JSON), see README 'Gate a release'.",
            ),
            click.option(
                "--min",
                "min_",
                multiple=True,
                metavar="METRIC=X",
                help="Gate: the candidate's METRIC must be at least X (repeatable), e.g. f1=0.8.",
            ),
            click.option(
                "--max",
                "max_",
                multiple=True,
                metavar="METRIC=X",
                help="Gate: the candidate's METRIC must be at most X (repeatable), "
                "e.g. parse_failure_rate=0.05.",
            ),
            click.option(
                "--max-drop",
                multiple=True,
                metavar="METRIC=X",
                help="Gate: METRIC may not get worse than the baseline by more than X "
                "(repeatable; globs work), e.g. f1=0.01 or 'field_f1/*=0.05'.",
            ),
            click.option(
                "--tracking-uri",
                help="MLflow tracking URI (default: MLFLOW_TRACKING_URI, else MLflow's local "
                "store in the working directory).",
            ),
            click.option(
                "--seed",
                type=int,
                default=0,
                show_default=True,
                help="Seed of the paired bootstrap over documents (a whole number ≥ 0).",
            ),
            click.option(
                "--resamples",
                type=int,
                default=1000,
                show_default=True,
                help="Bootstrap resamples for the intervals and p-values (≥ 1).",
            ),
            click.option(
                "--min-documents",
                type=int,
                default=30,
                show_default=True,
                help="Paired documents a `significant` gate needs; with fewer, such a gate is "
                "refused (exit 2) rather than passed on a too-wide interval.",
            ),
            click.option(
                "--allow-incomparable",
                is_flag=True,
                help="Compare runs whose extract_mlflow.signature differs (other gold set, "
                "config or scorer version) instead of refusing with exit 2.",
            ),
            click.option(
                "--allow-unfinished",
                is_flag=True,
                help="Use runs that are not FINISHED (RUNNING, SCHEDULED, FAILED, KILLED) "
                "instead of refusing with exit 2.",
            ),
        ]
    ):
        func = decorator(func)
    return func


def _gates(
    gates_file: Path | None, min_: tuple[str, ...], max_: tuple[str, ...], max_drop: tuple[str, ...]
) -> list[Any]:
    """The gates file's gates, then the shortcuts' (bad gates: ConfigError, exit 2)."""
    from .gates import load_gates, parse_shortcuts

    gates = load_gates(gates_file) if gates_file is not None else []
    return [*gates, *parse_shortcuts(min=min_, max_drop=max_drop, max=max_)]


def _render(result: Any, fmt: str) -> str:
    if fmt == "json":
        return str(result.to_json())
    return str(result.to_markdown() if fmt == "md" else result.to_table())


def _echo_failures(comparison: Any) -> None:
    for gate in comparison.failed_gates:
        for reason in gate.reasons:
            say(f"gate failed: {reason}")


def _refuse_unchecked(comparison: Any) -> None:
    """Exit 2 with one line when no check was evaluated: such a verdict asserts nothing."""
    if not comparison.checked:
        _fail(comparison.unchecked_reason())


@main.command("compare")
@click.argument("baseline")
@click.argument("candidate")
@gate_options
@timeout_option
@output_options
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
    Exit 0 when every gate passed, 1 when one failed, 2 for a bad reference, a run that is not
    FINISHED (unless --allow-unfinished), runs scored differently (unless --allow-incomparable),
    no gate evaluated (the report is still printed), a significant gate on fewer than
    --min-documents paired documents, or an unreachable server.
    """
    from .tracking.refs import compare_refs

    gates = _gates(gates_file, min_, max_, max_drop)
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
    _refuse_unchecked(comparison)
    _echo_failures(comparison)
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
    criteria either way. Concurrent promotes of one alias are serialised by a lease on NAME and
    re-gated against the actual holder before the alias moves. Exit 0 promoted, 1 a gate failed
    or the promotion was superseded by a concurrent one (alias not moved by it), 2 bad input
    (including a run that is not FINISHED and no gate evaluated) or an unreachable server.
    """
    from .tracking.promote import promote as promote_version

    gates = _gates(gates_file, min_, max_, max_drop)
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
    _echo_failures(result.comparison)
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
@timeout_option
@output_options
@handle_errors
def demo(
    tracking_uri: str | None,
    experiment: str,
    model_name: str,
    example_dir: Path | None,
    fmt: str,
    out: Path | None,
) -> None:
    """Log a baseline and an improved run of the bundled invoice example (with prompts),
    register both as model versions, and print a scoreboard and the command to open the UI."""
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


if __name__ == "__main__":  # pragma: no cover
    main()
