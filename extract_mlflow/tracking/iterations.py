"""Prompt-optimisation loops: log iteration after iteration into one parent MLflow run.

Each iteration's metrics become one step of the parent run's metric history (the MLflow UI draws
the trend), and each iteration also gets a child run with its prompt and full ``eval/``
artifacts. When the loop ends the parent gets ``eval/metrics.csv`` (a row per iteration),
``eval/trend.png``, ``eval/tokens.png``, ``eval/metrics.tex`` (booktabs) and
``eval/best_prompt.txt`` (the best iteration by composite, else F1).

>>> with IterationLogger(experiment="invoice-prompts") as loop:  # doctest: +SKIP
...     for prompt in prompts:
...         loop.log(evaluate(gold, run_model(prompt)), prompt=prompt)
>>> loop.result.best.name  # doctest: +SKIP
'03'

A folder of ``NN/pred.jsonl`` + ``NN/prompt.txt`` is scored and logged by
:func:`log_iteration_dir` (the ``score-iterations`` command).
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ..core.text import fmt
from ..errors import InputError
from ..io.iterations import PROMPT_FILE, best_index, default_gold, find_iterations, selection_key
from ..views.markdown import markdown_table
from ..views.plots import plot_tokens, plot_trend
from ..views.table import aligned, metrics_csv, metrics_latex
from .payload import (
    ARTIFACT_DIR,
    NOTE_TAG,
    RUN_TYPE_TAG,
    check_user_keys,
    gold_dataset_input,
    report_params,
    report_tags,
    write_eval_artifacts,
)
from .runs import LoggedRun, RunTarget, Tracker

if TYPE_CHECKING:
    from ..config import Config
    from ..report import Report

log = logging.getLogger(__name__)

BEST_TAG = "extract_mlflow.best_iteration"
ITERATION_TAG = "extract_mlflow.iteration"


# -- what one iteration is ---------------------------------------------------------------------
@dataclass
class Iteration:
    """One pass of the loop: its report, the prompt that produced it, its token cost."""

    report: Report
    prompt: str | None = None
    name: str | None = None
    tokens_per_doc: float | None = None

    def metrics(self) -> dict[str, float]:
        """The report's metrics, plus ``tokens_per_doc`` when given and not already there."""
        out = self.report.metrics()
        if self.tokens_per_doc is not None and "tokens_per_doc" not in out:
            out["tokens_per_doc"] = float(self.tokens_per_doc)
        return out


@dataclass(frozen=True)
class IterationRecord:
    """What was logged for one iteration."""

    step: int
    name: str
    metrics: Mapping[str, float]
    prompt: str | None
    run: LoggedRun

    def row(self) -> dict[str, Any]:
        return {
            "iteration": self.name,
            "step": self.step,
            "run_id": self.run.run_id,
            **self.metrics,
        }


@dataclass
class IterationsResult:
    """The parent run and one record per iteration (after the loop ended)."""

    parent: LoggedRun
    records: list[IterationRecord] = field(default_factory=list)

    @property
    def best(self) -> IterationRecord | None:
        i = best_index([r.metrics for r in self.records])
        return self.records[i] if i is not None else None

    def _rows(self) -> list[tuple[str, ...]]:
        best = self.best
        cols = ["f1", "precision", "recall"]
        if any("composite" in r.metrics for r in self.records):
            cols.insert(0, "composite")
        rows = [("iteration", *cols, "run id", "")]
        for r in self.records:
            cells = [fmt(r.metrics.get(c)) for c in cols]
            mark = "best" if best is not None and r.step == best.step else ""
            rows.append((r.name, *cells, r.run.run_id, mark))
        return rows

    def to_table(self) -> str:
        """A plain-text table: one row per iteration, the best marked."""
        rows = self._rows()
        lines = [f"parent run {self.parent.run_id} ({self.parent.tracking_uri})", ""]
        lines += aligned(rows, left=len(rows[0]), rule=False)
        return "\n".join(lines) + "\n"

    def to_markdown(self) -> str:
        """The same table in markdown."""
        rows = self._rows()
        lines = [f"# Iterations (parent run `{self.parent.run_id}`)", "", *markdown_table(rows)]
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        best = self.best
        return {
            "run_id": self.parent.run_id,
            "parent": self.parent.to_dict(),
            "best_iteration": best.name if best else None,
            "iterations": [r.row() for r in self.records],
        }


def write_parent_artifacts(records: Sequence[IterationRecord], folder: Path) -> Path:
    """Write metrics.csv, trend.png, tokens.png, metrics.tex and best_prompt.txt into
    `folder`/eval and return that directory."""
    out = folder / ARTIFACT_DIR
    out.mkdir(parents=True, exist_ok=True)
    (out / "metrics.csv").write_text(metrics_csv(records), encoding="utf-8")
    (out / "metrics.tex").write_text(metrics_latex(records), encoding="utf-8")
    plot_trend(records, out / "trend.png")
    plot_tokens(records, out / "tokens.png")
    best = best_index([r.metrics for r in records])
    prompt = records[best].prompt if best is not None else None
    (out / "best_prompt.txt").write_text(prompt if prompt is not None else "", encoding="utf-8")
    return out


# -- the logger --------------------------------------------------------------------------------
class IterationLogger:
    """Log a prompt-optimisation loop into one parent run (see the module docstring).

    The parent run is opened on ``__enter__`` (or the caller's active run is used) and ends
    FINISHED when the block ends normally, FAILED when it raises. Each :meth:`log` call is one
    step of the parent's metric history and one child run.
    """

    def __init__(
        self,
        *,
        tracking_uri: str | None = None,
        experiment: str | None = None,
        run_name: str | None = None,
        params: Mapping[str, Any] | None = None,
        tags: Mapping[str, Any] | None = None,
        run_id: str | None = None,
    ) -> None:
        self._tracker = Tracker(tracking_uri)
        self._experiment = experiment
        self._run_name = run_name
        self._params = dict(params or {})
        self._tags = {str(k): str(v) for k, v in (tags or {}).items()}
        self._run_id = run_id
        self._stack = contextlib.ExitStack()
        self._parent: RunTarget | None = None
        self._tmp = Path()
        self.result: IterationsResult | None = None

    def __enter__(self) -> IterationLogger:
        tracker = self._stack.enter_context(self._tracker)
        self._tmp = Path(self._stack.enter_context(tempfile.TemporaryDirectory()))
        try:
            check_user_keys(self._params, self._tags)
            with tracker.errors():
                self._parent = tracker.open_run(
                    experiment=self._experiment,
                    run_name=self._run_name,
                    tags=self._tags,
                    run_id=self._run_id,
                )
        except BaseException:
            self._stack.close()
            raise
        self.result = IterationsResult(tracker.logged(self._parent))
        return self

    @property
    def parent(self) -> RunTarget:
        if self._parent is None:
            raise RuntimeError("IterationLogger used outside its `with` block")
        return self._parent

    def log(
        self,
        report: Report | Iteration,
        *,
        prompt: str | None = None,
        name: str | None = None,
        tokens_per_doc: float | None = None,
    ) -> LoggedRun:
        """Log one iteration: a child run with its prompt, and one step of the parent's metric
        history. Returns the child run."""
        it = (
            report
            if isinstance(report, Iteration)
            else Iteration(report, prompt, name, tokens_per_doc)
        )
        assert self.result is not None, "IterationLogger used outside its `with` block"
        step = len(self.result.records)
        label = it.name or f"{step + 1:02d}"
        with self._tracker.errors():
            if step == 0:
                self._describe_parent(it.report)
            child = self._log_child(it, step, label)
            self._tracker.log_batches(self.parent.run_id, it.metrics(), step=step)
        self.result.records.append(IterationRecord(step, label, it.metrics(), it.prompt, child))
        return child

    def _describe_parent(self, report: Report) -> None:
        """Params, tags and the gold dataset input of the loop (from its first iteration)."""
        params = report_params(report, self._params)
        params.pop("pred_digest", None)  # differs per iteration: lives on the child runs
        tags = report_tags(report, self._tags, note=False)
        if not self.parent.owned and RUN_TYPE_TAG in self.parent.tags:
            tags.pop(RUN_TYPE_TAG)  # never relabel a run the caller typed
        self._tracker.log_batches(self.parent.run_id, params=params, tags=tags)
        self._tracker.client.log_inputs(self.parent.run_id, [gold_dataset_input(report)])

    def _log_child(self, it: Iteration, step: int, label: str) -> LoggedRun:
        folder = self._tmp / f"iteration-{step}"
        prompts: list[Path] = []
        if it.prompt is not None:
            folder.mkdir(parents=True, exist_ok=True)
            prompts.append(folder / PROMPT_FILE)
            prompts[0].write_text(it.prompt, encoding="utf-8")
        eval_dir = write_eval_artifacts(it.report, folder / "artifacts", prompts)
        tracker = self._tracker
        target = tracker.open_run(
            run_name=f"{self._run_name or 'iteration'} {label}",
            tags={ITERATION_TAG: label, **self._tags},
            parent_run_id=self.parent.run_id,
            reuse_caller_run=False,
        )
        with tracker.run_scope(target):
            tracker.log_evaluation(
                target, it.report, eval_dir, params=self._params, tags=self._tags
            )
            extra = it.metrics().keys() - it.report.metrics().keys()
            if extra:
                tracker.log_batches(target.run_id, {k: it.metrics()[k] for k in extra})
        return tracker.logged(target)

    def _finish_parent(self) -> None:
        assert self.result is not None
        records = self.result.records
        tags: dict[str, str] = {}
        if records:
            out = write_parent_artifacts(records, self._tmp / "parent")
            self._tracker.client.log_artifacts(self.parent.run_id, str(out), ARTIFACT_DIR)
            best = self.result.best
            assert best is not None
            tags[BEST_TAG] = best.name
            if self.parent.owned:
                tags[NOTE_TAG] = _parent_note(records, best)
        self._tracker.log_batches(self.parent.run_id, tags=tags)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            with self._tracker.run_scope(self.parent):
                if exc is not None:
                    raise exc
                self._finish_parent()
        finally:
            self._stack.close()


def _parent_note(records: Sequence[IterationRecord], best: IterationRecord) -> str:
    key = selection_key([r.metrics for r in records])
    score = best.metrics.get(key)
    shown = fmt(score)
    return (
        f"extract_mlflow prompt iterations: {len(records)} iterations; best {best.name} "
        f"({key} {shown}). Child runs hold each iteration's prompt and diagnostics."
    )


def log_iterations(iterations: Iterable[Iteration], **kwargs: Any) -> IterationsResult:
    """Log every iteration (a list, or a generator that runs the loop lazily) into one parent
    run; keyword arguments as for :class:`IterationLogger`."""
    with IterationLogger(**kwargs) as loop:
        for it in iterations:
            loop.log(it)
    assert loop.result is not None
    return loop.result


def score_iterations(
    folder: str | Path,
    gold: str | Path,
    config: Config | str | Path | Mapping[str, Any] | None = None,
    *,
    id_key: str | None = None,
) -> list[Iteration]:
    """Score every iteration folder against `gold` (read once)."""
    from ..evaluation.evaluate import evaluate, resolve_config
    from ..io.loading import load_gold

    cfg = resolve_config(config, id_key)
    gold_set = load_gold(gold, cfg.id_key)
    out = []
    for item in find_iterations(folder):
        report = evaluate(gold_set, item.pred, cfg)
        prompt = item.prompt.read_text(encoding="utf-8") if item.prompt else None
        tokens = report.tokens_per_doc
        out.append(Iteration(report, prompt, item.name, tokens))
    return out


def log_iteration_dir(
    folder: str | Path,
    gold: str | Path | None = None,
    config: Config | str | Path | Mapping[str, Any] | None = None,
    *,
    id_key: str | None = None,
    **log_kwargs: Any,
) -> IterationsResult:
    """Score a folder of ``NN/pred.jsonl`` + ``NN/prompt.txt`` (gold: `gold`, else
    ``<folder>/gold.jsonl``) and log it as one parent run with a child per iteration."""
    gold_path = Path(gold) if gold is not None else default_gold(folder)
    if gold_path is None:
        raise InputError(f"{folder}: no gold given and no {Path(folder) / 'gold.jsonl'}")
    iterations = score_iterations(folder, gold_path, config, id_key=id_key)
    return log_iterations(iterations, **log_kwargs)
