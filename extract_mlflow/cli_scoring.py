"""The one evaluation behind `score` and `diff`: the engine, config warnings, page progress."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .cli_options import say
from .core.language import tr
from .errors import ConfigError

if TYPE_CHECKING:
    from .gates import Gate
    from .report import Report


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


def scored_report(
    gold: str | Path,
    pred: str | Path,
    config_path: Path | None,
    strict: bool,
    options: dict[str, Any],
    *,
    shown: Collection[str] = (),
    engine: str = "local",
    spark_master: str | None = None,
) -> Report:
    """One evaluation (`options`: the keyword arguments of `evaluate`; on Spark with
    `engine="spark"`), its config warnings (an error under --strict; those in `shown` are not
    repeated: they depend on the gold set and the config only, so a second prediction file
    has the same ones) and one progress line per page."""
    if engine == "spark":
        from .spark import evaluate as spark_evaluate

        if options.pop("source_key", None) is not None:
            raise ConfigError("--source-key is not supported by --engine spark; use --sources")
        if options.pop("workers", 1) != 1:
            raise ConfigError("--workers is for --engine local (Spark has its own executors)")
        report = spark_evaluate(gold, pred, config_path, master=spark_master, **options)
    else:
        from .evaluation.evaluate import evaluate

        _say_capped(options.get("workers", 1))
        report = evaluate(gold, pred, config_path, **options)
    if strict and report.warnings:
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


def report_failures(
    report: Report, min_f1: float | None, field_min: list[tuple[str, float]], bars: list[Gate]
) -> list[str]:
    """Every score-time bar the report misses (``--min-f1``, ``--field-min``, ``--min``,
    ``--max``), one sentence each."""
    if min_f1 is None and not field_min and not bars:
        return []
    from .gate_checks import check_report

    return check_report(report, min_f1, field_min, bars)
