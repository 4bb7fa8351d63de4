"""What the commands of :mod:`extract_mlflow.cli` share: option decorators (output, tracking,
timeout, gates), option parsing, one-line errors with exit code 2, and writing results."""

from __future__ import annotations

import contextlib
import functools
import math
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import click

from .core.language import language, resolve_language, tr
from .core.messages import LANGUAGES
from .core.text import terminal_safe
from .errors import ExtractMlflowError

F = TypeVar("F", bound=Callable[..., Any])

EXIT_BAD_INPUT = 2


def say(line: str) -> None:
    """One line on stderr, its control characters escaped (ids and values come from inputs)."""
    click.echo(terminal_safe(line, one_line=True), err=True)


def _fail(message: str) -> None:
    from .tracking.client import redact

    say(f"error: {redact(message)}")  # never a credential
    sys.exit(EXIT_BAD_INPUT)


def handle_errors(func: F) -> F:
    """Turn library errors into one stderr line and exit code 2 (no traceback); before the
    command runs, refuse an `--out` that would overwrite one of its inputs."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with _terminate_as_interrupt():
                _refuse_overwriting_inputs()
                return func(*args, **kwargs)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise  # usage errors: click reports them itself (exit 2)
        except ExtractMlflowError as exc:
            _fail(str(exc))
        except KeyboardInterrupt as exc:
            _fail(tr("cli.interrupted_by", reason=exc) if str(exc) else tr("cli.interrupted"))
        except RecursionError:
            _fail(tr("cli.too_deep"))
        except MemoryError:
            _fail(tr("cli.out_of_memory"))
        except OSError as exc:
            _fail(f"{exc.filename or 'I/O'}: {exc.strerror or exc}")
        except Exception as exc:  # a bug: still one line, the traceback only on request
            if os.environ.get("EXTRACT_MLFLOW_DEBUG"):
                raise
            _fail(tr("cli.internal_error", kind=type(exc).__name__, detail=exc))

    return wrapper  # type: ignore[return-value]


OUTPUT_PARAMS = frozenset({"out", "results", "export_dir"})  # the path options written to


def command_inputs(ctx: click.Context) -> list[Path]:
    """The paths the running command reads: its path options and arguments but outputs."""
    found: list[Path] = []
    for param in ctx.command.params:
        if param.name in OUTPUT_PARAMS or not isinstance(param.type, click.Path):
            continue
        value = ctx.params.get(param.name or "")
        values = value if isinstance(value, tuple | list) else (value,)
        found += [Path(v) for v in values if isinstance(v, str | Path)]
    return found


def _refuse_overwriting_inputs() -> None:
    from .io.outputs import refuse_inputs

    ctx = click.get_current_context(silent=True)
    if ctx is not None and isinstance(out := ctx.params.get("out"), Path):
        refuse_inputs(out, command_inputs(ctx))


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


def lang_option(func: F) -> F:
    """`--lang`: the language of what a command prints for people (JSON never changes)."""
    return click.option(
        "--lang",
        type=click.Choice(LANGUAGES),
        default=None,
        expose_value=False,
        is_eager=True,
        callback=_use_language,
        help="Language of the output for people: en or ko [default: EXTRACT_MLFLOW_LANG, else "
        "the locale (LC_ALL, LC_MESSAGES, LANG): Korean when it starts with 'ko', else "
        "English]. JSON output is the same in every language.",
    )(func)


def _use_language(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """Show this command's messages in the chosen language (reset at its end)."""
    ctx.with_resource(language(resolve_language(value)))


def output_options(func: F) -> F:
    """`--format`, `--out` and `--lang`, shared by every command that prints a report."""
    return _output_options(func, ["table", "json", "md"], _FORMAT_HELP)


_FORMAT_HELP = "Report format: a terminal table, one JSON object, or markdown."
_PAGE_FORMAT_HELP = (
    "Report format: a terminal table, one JSON object, markdown, or html (one self-contained "
    "comparison page; best with --out)."
)


def page_output_options(func: F) -> F:
    """`--format` (with html: the comparison page) and `--out`: `diff` and `compare`."""
    return _output_options(func, ["table", "json", "md", "html"], _PAGE_FORMAT_HELP)


def _output_options(func: F, formats: list[str], help_text: str) -> F:
    func = lang_option(func)
    func = click.option(
        "--out",
        type=click.Path(dir_okay=False, writable=True, path_type=Path),
        help="Write the report to this file instead of standard output.",
    )(func)
    func = click.option(
        "--format",
        "fmt",
        type=click.Choice(formats),
        default="table",
        show_default=True,
        help=help_text,
    )(func)
    return func


def emit(text: str, out: Path | None) -> None:
    """Print a report, or write it to `out` whole (:func:`~.io.outputs.write_atomic`), with
    control characters escaped (JSON stays JSON: the escapes are its own)."""
    from .io.outputs import write_atomic

    text = terminal_safe(text)
    if out is None:
        click.echo(text, nl=not text.endswith("\n"))
        return
    try:
        write_atomic(out, text)
    except OSError as exc:
        raise ExtractMlflowError(tr("cli.cannot_write", path=out, reason=exc.strerror)) from None


def parse_field_min(
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


def finite_number(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """Refuse NaN, which every range check lets through (NaN compares false both ways)."""
    if value is not None and math.isnan(value):
        raise click.BadParameter(f"{value!r} is not a number", param=param)
    return value


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
            if key.strip() in out:  # which one is meant? MLflow would keep either
                raise click.BadParameter(f"{key.strip()!r} given twice", param_hint=option)
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
    if not math.isfinite(value):  # FloatRange lets nan and inf through: no bound at all
        raise click.BadParameter(f"{value}: expected a finite number of seconds above 0")
    from .tracking.client import request_timeout

    ctx.with_resource(request_timeout(value))


def quiet_mlflow() -> None:
    """MLflow and its store migrations log INFO lines to stderr; keep stderr for our answers."""
    import logging

    for name in ("mlflow", "alembic"):
        logging.getLogger(name).setLevel(logging.WARNING)


def _stacked(func: F, decorators: list[Callable[[F], F]]) -> F:
    """`func` under `decorators`, the first listed outermost (its option shown first)."""
    for decorator in reversed(decorators):
        func = decorator(func)
    return func


def gate_options(func: F) -> F:
    """Gates and the bootstrap settings of `compare` and `promote`."""
    return _stacked(
        bootstrap_options(func),
        [
            click.option(
                "--gates",
                "gates_file",
                type=click.Path(dir_okay=False, path_type=Path),
                help="Gates file: TOML [[gate]] tables (or JSON), see docs/comparing.md.",
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
        ],
    )


_RESAMPLING = [
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
]


def resampling_options(func: F) -> F:
    """`--seed` and `--resamples` of the paired bootstrap (`compare`, `promote`, `diff`)."""
    return _stacked(func, list(_RESAMPLING))


def bootstrap_options(func: F) -> F:
    """Where the runs are read and how their paired bootstrap is drawn (`compare`, `promote`)."""
    return _stacked(
        func,
        [
            click.option(
                "--tracking-uri",
                help="MLflow tracking URI (default: MLFLOW_TRACKING_URI, else MLflow's local "
                "store in the working directory).",
            ),
            *_RESAMPLING,
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
        ],
    )


def read_gates(
    gates_file: Path | None, min_: tuple[str, ...], max_: tuple[str, ...], max_drop: tuple[str, ...]
) -> list[Any]:
    """The gates file's gates, then the shortcuts' (bad gates: ConfigError, exit 2)."""
    from .gates import load_gates, parse_shortcuts

    gates = load_gates(gates_file) if gates_file is not None else []
    return [*gates, *parse_shortcuts(min=min_, max_drop=max_drop, max=max_)]


def echo_failures(comparison: Any) -> None:
    for gate in comparison.failed_gates:
        for reason in gate.reasons:
            say(tr("cli.gate_failed", reason=reason))


def refuse_unchecked(comparison: Any) -> None:
    """Exit 2 with one line when no check was evaluated: such a verdict asserts nothing."""
    if not comparison.checked:
        _fail(comparison.unchecked_reason())


def config_options(func: F) -> F:
    """`--config` and `--id-key`: how gold and prediction lines are read (`score`, `diff`)."""
    return _stacked(
        func,
        [
            click.option(
                "--config",
                "config_path",
                type=click.Path(path_type=Path),
                help="Scoring config (TOML or JSON).",
            ),
            click.option(
                "--id-key",
                help="Key that joins gold and prediction lines (default: the config's id_key, "
                "else 'id').",
            ),
        ],
    )


def scoring_options(func: F) -> F:
    """What besides the fields is scored: pages, text fidelity, slices (`score`, `diff`)."""
    return _stacked(
        func,
        [
            click.option(
                "--text-key",
                help="Prediction key holding a wiki/markdown page (default: the config's "
                "text_key, else 'output').",
            ),
            click.option(
                "--profile",
                help="Layout profile of the pages (default: the gold line's topic, else the "
                "only profile).",
            ),
            click.option(
                "--sources",
                type=click.Path(path_type=Path),
                help="Source documents for text fidelity: a folder of <id>.txt/.md/.pdf or a "
                "JSONL of {id, text}.",
            ),
            click.option(
                "--source-key", help="Gold field holding the source text (instead of --sources)."
            ),
            click.option(
                "--approvals",
                type=click.Path(path_type=Path),
                help="CSV or JSONL of (id, path) values a reviewer accepted: their fidelity "
                "flags are cleared and reported as approved.",
            ),
            click.option(
                "--slice-by",
                multiple=True,
                metavar="FIELD",
                help="Gold attribute to report structure metrics by (repeatable), e.g. layout.",
            ),
        ],
    )


def strict_option(func: F) -> F:
    """`--strict`: config warnings are errors."""
    return click.option(
        "--strict",
        is_flag=True,
        help="Config warnings are errors (exit 2, nothing logged): a [fields] path no gold field "
        "has, an unknown unit, a date format that parses no gold value (see docs/config.md). They "
        "read the config and gold only, so they are the same for every prediction file.",
    )(func)


EVALUATE_OPTIONS = (
    "id_key",
    "text_key",
    "profile",
    "sources",
    "source_key",
    "approvals",
    "slice_by",
)
"""The options of `score` and `diff` that are keyword arguments of `evaluate`."""
