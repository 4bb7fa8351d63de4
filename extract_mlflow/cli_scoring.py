"""The typed option groups of `score` and `diff` (:func:`gathered`), and the one evaluation
behind both: the engine, config warnings, page progress; `score`'s bars and logging."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from .cli_options import EVALUATE_OPTIONS, say
from .core.language import tr
from .errors import ConfigError

F = TypeVar("F", bound=Callable[..., Any])

if TYPE_CHECKING:
    from .gates import Gate
    from .report import Report


def gathered(name: str, cls: type[Any]) -> Callable[[F], F]:
    """Hand the command the options named as the fields of dataclass `cls` as one `cls`
    (keyword `name`): a command takes typed option groups, not each option. Put it right above
    the command's function, below its option decorators."""
    names = tuple(f.name for f in dataclasses.fields(cls))

    def decorate(func: F) -> F:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            kwargs[name] = cls(**{n: kwargs.pop(n) for n in names if n in kwargs})
            return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


def bar_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--min METRIC=X`` and ``--max METRIC=X``: score-time bars on any logged metric."""
    for name, word, example in (("max", "above", "cer=0.02"), ("min", "below", "recall=0.9")):
        command = click.option(
            f"--{name}",
            f"{name}_bars",
            multiple=True,
            metavar="METRIC=X",
            help=f"Gate: exit 1 when this metric (or glob) is {word} X (repeatable), "
            f"e.g. '{example}'.",
        )(command)
    return command


def metric_bars(min_bars: Sequence[str], max_bars: Sequence[str]) -> list[Gate]:
    """The gates of ``--min``/``--max`` (the gate modules, ~8 ms, load only for a bar)."""
    if not min_bars and not max_bars:
        return []
    from .gates import parse_shortcuts

    return parse_shortcuts(min=min_bars, max=max_bars)


@dataclass(frozen=True)
class Evaluating:
    """How `score` and `diff` evaluate: the config and how lines are read (``config_options``),
    what besides the fields is scored (``scoring_options``), ``--strict`` and, for `score`, the
    canaries and where it runs."""

    config_path: Path | None
    id_key: str | None
    text_key: str | None
    profile: str | None
    sources: Path | None
    source_key: str | None
    approvals: Path | None
    slice_by: tuple[str, ...]
    strict: bool
    canaries: tuple[str, ...] = ()
    workers: int = 1
    engine: str = "local"
    spark_master: str | None = None

    def evaluate_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of :func:`~extract_mlflow.evaluation.evaluate.evaluate`
        (those of the Spark engine's `evaluate`, but `source_key` and `workers`)."""
        names = (*EVALUATE_OPTIONS, "canaries", "workers")
        return {name: getattr(self, name) for name in names}


def scored_report(
    gold: str | Path,
    pred: str | Path,
    how: Evaluating,
    *,
    shown: Collection[str] = (),
    stream: bool | None = None,
) -> Report:
    """One evaluation as `how` says (on Spark with ``engine="spark"``), its config warnings
    (an error under --strict; those in `shown` are not repeated: they depend on the gold set
    and the config only, so a second prediction file has the same ones) and one progress line
    per page. `stream`: passed to `evaluate` when given."""
    options = how.evaluate_kwargs() | ({} if stream is None else {"stream": stream})
    if how.engine == "spark":
        from .spark import evaluate as spark_evaluate

        if options.pop("source_key", None) is not None:
            raise ConfigError("--source-key is not supported by --engine spark; use --sources")
        if options.pop("workers", 1) != 1:
            raise ConfigError("--workers is for --engine local (Spark has its own executors)")
        report = spark_evaluate(gold, pred, how.config_path, master=how.spark_master, **options)
    else:
        from .evaluation.evaluate import evaluate

        _say_capped(how.workers)
        report = evaluate(gold, pred, how.config_path, **options)
    if how.strict and report.warnings:
        raise ConfigError(tr("cli.strict", warnings="; ".join(report.warnings)))
    for warning in report.warnings:
        if warning not in shown:
            say(f"warning: {warning}")
    for doc in report.layouts:  # one progress line per listed page
        say(doc.progress_line())
    if report.pages is not None and report.pages.not_listed:
        say(tr("list.more", n=report.pages.not_listed))
    return report


def _say_capped(workers: object) -> None:
    """One stderr line when --workers asks for more processes than there are cores to run
    them (the evaluation starts one per core at most)."""
    from .core.runtime import usable_cores

    cores = usable_cores()
    if isinstance(workers, int) and not isinstance(workers, bool) and workers > cores:
        say(f"warning: {tr('cli.workers_capped', workers=workers, cores=cores)}")


@dataclass(frozen=True)
class Bars:
    """`score`'s bars: ``--min-f1``, ``--field-min``, ``--min`` and ``--max``, the last two
    parsed when the bars are made (a bad one is a ConfigError, exit 2, before any scoring)."""

    min_f1: float | None
    field_min: list[tuple[str, float]]
    min_bars: tuple[str, ...]
    max_bars: tuple[str, ...]
    gates: list[Gate] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "gates", metric_bars(self.min_bars, self.max_bars))

    def failures(self, report: Report) -> list[str]:
        """Every bar the report misses, one sentence each."""
        if self.min_f1 is None and not self.field_min and not self.gates:
            return []
        from .gate_checks import check_report

        return check_report(report, self.min_f1, self.field_min, self.gates)


@dataclass(frozen=True)
class Logging:
    """Where and how `score` logs its run: the keyword arguments of `log_report`."""

    tracking_uri: str | None
    experiment: str | None
    run_name: str | None
    params: dict[str, str]
    tags: dict[str, str]
    prompts: tuple[Path, ...]
    prompt_uris: tuple[str, ...]
    register: str | None
