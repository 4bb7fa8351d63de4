"""The commands of the prompt-optimisation loop, added to `extract-mlflow` by :mod:`.cli`:
`score-iterations` (score every iteration of a folder, write its results folder and log it)
and `hints` (example values per field, to paste into a prompt)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .cli_options import (
    EVALUATE_OPTIONS,
    command_inputs,
    config_options,
    emit,
    handle_errors,
    lang_option,
    output_options,
    quiet_mlflow,
    say,
    scoring_options,
    tracking_options,
)
from .core.language import tr
from .core.text import safe_lines
from .errors import InputError
from .io.outputs import check_results_folder

if TYPE_CHECKING:
    from .evaluation.iterations import Iteration


@click.command("score-iterations")
@click.argument("folder", type=click.Path(path_type=Path))
@click.option(
    "--gold",
    type=click.Path(path_type=Path),
    help="Gold JSONL (default: FOLDER/gold.jsonl).",
)
@config_options
@scoring_options
@click.option(
    "--results",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for the loop's files: metrics.csv, trend and token plots, metrics.tex, "
    "summary.md, diagnostics.json, prompts, best_prompt.txt, feedback [default: "
    "FOLDER/results].",
)
@click.option(
    "--baseline",
    type=click.Path(path_type=Path),
    help="A hand-made prediction JSONL scored once as the reference row of the tables, the "
    "CSV and the plot.",
)
@click.option(
    "--no-log", is_flag=True, help="Score and write the results folder only; log nothing."
)
@tracking_options
@output_options
@handle_errors
def score_iterations(folder: Path, gold: Path | None, **options: Any) -> None:
    """Score a prompt-optimisation loop: FOLDER holds one sub-folder per iteration with its
    pred.jsonl and prompt.txt (natural order: 2 before 10).

    Writes the results folder and logs one parent run (a metric step per iteration, the results
    as eval/) with a child run per iteration (unless --no-log: the files are the same). Prints
    a progress line per document and an AGG line per iteration on stderr."""
    from .evaluation.iterations import BASELINE, IterationScorer, resolve_gold

    no_log, fmt, out = options.pop("no_log"), options.pop("fmt"), options.pop("out")
    results = options.pop("results") or folder / "results"
    check_results_folder(results, command_inputs(click.get_current_context()))
    if not no_log:  # fail fast, before scoring: a bad URI, a forged tag, an unreachable server
        _check_tracking(options)
    scoring = {k: options.pop(k) for k in EVALUATE_OPTIONS if k != "id_key"}
    scorer = IterationScorer(
        resolve_gold(folder, gold),
        options.pop("config_path"),
        id_key=options.pop("id_key"),
        **scoring,
    )
    iterations = scorer.score_folder(folder)  # checks the folder and the prompts first
    baseline_path = options.pop("baseline")
    baseline = scorer.score(baseline_path, BASELINE) if baseline_path is not None else None
    if baseline is not None:
        _progress(baseline, [], baseline)
    scored = _with_progress(iterations, baseline)
    if no_log:
        text = _unlogged(list(scored), baseline, results, fmt)
    else:
        text = _logged(scored, baseline, results, fmt, options)
    emit(text, out)


def _check_tracking(options: dict[str, Any]) -> None:
    from .tracking.client import check_reachable, resolve_tracking_uri
    from .tracking.payload import check_user_keys

    uri = resolve_tracking_uri(options["tracking_uri"])
    check_user_keys(options["params"], options["tags"])
    check_reachable(uri)


def _with_progress(
    iterations: Iterable[Iteration], baseline: Iteration | None
) -> Iterator[Iteration]:
    """`iterations`, printing each one's progress lines as it is scored."""
    done: list[Iteration] = []
    warned: set[str] = set()
    for it in iterations:
        done.append(it)
        for warning in it.report.warnings:
            if warning not in warned:
                warned.add(warning)
                say(f"warning: {warning}")
        _progress(it, done, baseline)
        yield it


def _progress(it: Iteration, done: list[Iteration], baseline: Iteration | None) -> None:
    """One line per document, then the aggregate line (with the running best unless `it` is
    the baseline)."""
    from .views.iteration_files import results_rows
    from .views.iterations import agg_line

    for doc in it.report.documents:
        say(f"[{it.name}] {doc.progress_line()}")
    is_baseline = it is baseline
    rows = results_rows([] if is_baseline else done, baseline)
    say(f"[{it.name}] {agg_line(rows, running=not is_baseline)}")


def _unlogged(
    iterations: list[Iteration], baseline: Iteration | None, results: Path, fmt: str
) -> str:
    from .views.iteration_files import results_rows, write_results
    from .views.iterations import best_row, loop_markdown, loop_table

    write_results(results, iterations, baseline)
    say(tr("cli.results_written", path=results))
    rows = results_rows(iterations, baseline)
    if fmt == "json":
        best = best_row(rows)
        data = {
            "run_id": None,
            "best_iteration": rows[best].name if best is not None else None,
            "iterations": [_row(it, n) for n, it in enumerate(iterations)],
            "baseline": _row(baseline, -1) if baseline is not None else None,
            "results": str(results),
        }
        return json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n"
    if fmt == "md":
        return safe_lines(["# Iterations", "", *loop_markdown(rows)])
    return safe_lines(loop_table(rows))


def _row(it: Iteration, step: int) -> dict[str, Any]:
    return {"iteration": it.name, "step": step, **it.metrics()}


def _logged(
    iterations: Iterable[Iteration],
    baseline: Iteration | None,
    results: Path,
    fmt: str,
    options: dict[str, Any],
) -> str:
    from .tracking.client import display_uri
    from .tracking.iterations import log_iterations

    quiet_mlflow()
    result = log_iterations(iterations, results=results, baseline=baseline, **options)
    warning = result.parent.unfinished_warning()
    if warning is not None:
        say(f"warning: {warning}")
    say(tr("cli.results_written", path=results))
    uri = display_uri(result.parent.tracking_uri)
    say(tr("cli.logged_run", run_id=result.parent.run_id, uri=uri))
    if fmt == "json":
        return json.dumps(result.to_dict(), ensure_ascii=False, indent=2, default=str) + "\n"
    return result.to_markdown() if fmt == "md" else result.to_table()


@click.command("hints")
@click.argument("gold", type=click.Path(path_type=Path))
@click.option(
    "--for",
    "doc_id",
    required=True,
    metavar="ID",
    help="The gold document the prompt is for: its own values are never shown.",
)
@click.option(
    "--per-field",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Distinct example values per field.",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path),
    help="Scoring config: its id_key, and its ignored fields are left out.",
)
@click.option("--id-key", help="Key of the gold lines' ids (default: the config's, else 'id').")
@lang_option
@handle_errors
def hints(
    gold: Path, doc_id: str, per_field: int, config_path: Path | None, id_key: str | None
) -> None:
    """Print example values per field drawn from the documents of gold JSONL GOLD other than
    --for ID (never from ID itself, nor a value equal to one of ID's own for that field, as
    the scorer compares them under --config), as text ready to paste into the prompt for
    document ID; stderr says how many values were withheld. An ID that GOLD does not hold is
    an error (exit 2)."""
    from .config_file import load_config
    from .io.loading import load_gold
    from .views.feedback import field_hints, hints_text

    config = load_config(config_path)
    key = id_key or config.id_key
    gold_set = load_gold(gold, key)
    if doc_id not in gold_set.docs:
        raise InputError(tr("cli.no_document", gold=gold, key=key, doc_id=doc_id))
    ignored = [path for path, rule in config.fields.items() if rule.ignore]
    found = field_hints(
        gold_set.docs, doc_id, id_key=key, per_field=per_field, ignore=ignored, config=config
    )
    emit(hints_text(found), None)
    counts = ", ".join(f"{path} {n}" for path, n in found.withheld.items()) or "-"
    n = sum(found.withheld.values())
    say(tr("hints.withheld", n=n, doc_id=doc_id, fields=counts))
