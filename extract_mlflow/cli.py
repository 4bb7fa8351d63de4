"""The `extract-mlflow` command: a thin shell over the library.

Exit codes: 0 pass, 1 a gate failed, 2 bad input / bad config / tracking unreachable (one line on
stderr, no traceback).
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ._version import __version__
from .errors import ExtractMlflowError

F = TypeVar("F", bound=Callable[..., Any])
EXIT_GATE_FAILED = 1
EXIT_BAD_INPUT = 2


def _fail(message: str) -> None:
    one_line = message.replace("\r", "\\r").replace("\n", "\\n")  # ids may hold newlines
    click.echo(f"error: {one_line}", err=True)
    sys.exit(EXIT_BAD_INPUT)


def handle_errors(func: F) -> F:
    """Turn library errors into one stderr line and exit code 2 (no traceback)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise  # usage errors: click reports them itself (exit 2)
        except ExtractMlflowError as exc:
            _fail(str(exc))
        except KeyboardInterrupt:
            _fail("interrupted")
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
    """Print a report, or write it to `out`."""
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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="extract-mlflow")
def main() -> None:
    """Evaluate LLM document extraction against a gold set and gate releases in MLflow.

    Exit codes: 0 pass, 1 a gate failed, 2 bad input, bad config or unreachable tracking server.
    """


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
    "--min-f1", type=click.FloatRange(0, 1), help="Gate: exit 1 when micro F1 is below this."
)
@click.option(
    "--field-min",
    multiple=True,
    metavar="PATH=X",
    callback=_parse_field_min,
    help="Gate: exit 1 when this field's F1 is below X (repeatable), e.g. 'line_items[].qty=0.9'.",
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
    fmt: str,
    out: Path | None,
) -> None:
    """Score predictions PRED (JSONL) against gold GOLD (JSONL), field by field."""
    from .gates_simple import check_score_gates
    from .scoring import evaluate

    report = evaluate(gold, pred, config_path, id_key=id_key)
    failures = check_score_gates(report, min_f1, field_min)
    if fmt == "json":
        data = report.to_dict()
        data["gates"] = {"passed": not failures, "failures": failures}
        text = json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n"
    elif fmt == "md":
        text = report.to_markdown()
    else:
        text = report.to_table()
    emit(text, out)
    for failure in failures:
        click.echo(f"gate failed: {failure}", err=True)
    if failures:
        sys.exit(EXIT_GATE_FAILED)


if __name__ == "__main__":  # pragma: no cover
    main()
