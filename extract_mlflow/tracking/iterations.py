"""Prompt-optimisation loops: log iteration after iteration into one parent MLflow run.

Each iteration's metrics become one step of the parent run's metric history (the MLflow UI draws
the trend; its plain keys, ``f1`` and the rest, therefore show the *last* iteration), and each
iteration also gets a child run with its prompt and full ``eval/`` artifacts. When the loop ends
the results folder of :mod:`extract_mlflow.views.iteration_files` (``metrics.csv``, trend and
token plots, ``metrics.tex``, ``summary.md``, ``diagnostics.json``, the prompts,
``best_prompt.txt``: the best iteration by composite, else F1, and the feedback per iteration)
is written, to `results` when given, and logged as the parent's ``eval/``; the parent gets the
best iteration's run-level metrics as ``best_<key>`` (``best_f1``, ``best_composite``, …) and
its name as the tag ``extract_mlflow.best_iteration``. A baseline (a reference scored once)
gets a child run of its own and the first row of the tables.

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
from ..evaluation.iterations import BASELINE, Iteration, IterationScorer, resolve_gold
from ..io.iterations import PROMPT_FILE, best_index, selection_key
from ..views.iteration_files import write_results
from ..views.iterations import loop_markdown, loop_table
from .payload import (
    ARTIFACT_DIR,
    NOTE_TAG,
    RUN_TYPE_TAG,
    check_user_keys,
    report_params,
    report_tags,
    write_eval_artifacts,
)
from .runs import LoggedRun, RunTarget, Tracker

if TYPE_CHECKING:
    from ..config import Config
    from ..report import Report
    from ..views.iterations import LoopRow

log = logging.getLogger(__name__)

BEST_TAG = "extract_mlflow.best_iteration"
BEST_PREFIX = "best_"
"""The parent run's metrics of the best iteration: ``best_f1``, ``best_composite``, …"""
ITERATION_TAG = "extract_mlflow.iteration"


# -- what was logged --------------------------------------------------------------------------
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
    """The parent run, one record per iteration and the baseline's (after the loop ended), and
    where the results folder was written."""

    parent: LoggedRun
    records: list[IterationRecord] = field(default_factory=list)
    baseline: IterationRecord | None = None
    results: Path | None = None

    @property
    def best(self) -> IterationRecord | None:
        i = best_index([r.metrics for r in self.records])
        return self.records[i] if i is not None else None

    def rows(self) -> list[LoopRow]:
        """The rows of the loop's tables (the baseline's first)."""
        from ..views.iterations import loop_rows

        base = self.baseline
        named = [(r.name, r.metrics) for r in self.records]
        return loop_rows(named, (base.name, base.metrics) if base is not None else None)

    def _run_ids(self) -> dict[str, str]:
        records = [*([self.baseline] if self.baseline else []), *self.records]
        return {r.name: r.run.run_id for r in records}

    def to_table(self) -> str:
        """A plain-text table: one row per iteration, the best marked."""
        lines = [f"parent run {self.parent.run_id} ({self.parent.tracking_uri})", ""]
        lines += loop_table(self.rows(), self._run_ids())
        return "\n".join(lines) + "\n"

    def to_markdown(self) -> str:
        """The same table in markdown."""
        lines = [f"# Iterations (parent run `{self.parent.run_id}`)", ""]
        lines += loop_markdown(self.rows(), self._run_ids())
        return "\n".join(lines) + "\n"

    def to_dict(self) -> dict[str, Any]:
        best = self.best
        return {
            "run_id": self.parent.run_id,
            "parent": self.parent.to_dict(),
            "best_iteration": best.name if best else None,
            "iterations": [r.row() for r in self.records],
            "baseline": self.baseline.row() if self.baseline is not None else None,
            "results": str(self.results) if self.results is not None else None,
        }


# -- the logger --------------------------------------------------------------------------------
class IterationLogger:
    """Log a prompt-optimisation loop into one parent run (see the module docstring).

    The parent run is opened on ``__enter__`` (or the caller's active run is used) and ends
    FINISHED when the block ends normally, FAILED when it raises. Each :meth:`log` call is one
    step of the parent's metric history and one child run. `results` is a folder that gets the
    loop's files too (they are always logged as the parent's ``eval/``); `baseline` is a
    reference report (or :class:`Iteration`) shown as the first row and logged as a child run
    named ``baseline``, outside the metric history.
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
        results: str | Path | None = None,
        baseline: Report | Iteration | None = None,
    ) -> None:
        self._tracker = Tracker(tracking_uri)
        self._results = Path(results) if results is not None else None
        self._baseline = _as_iteration(baseline, BASELINE) if baseline is not None else None
        self._iterations: list[Iteration] = []
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
        assert self.result is not None, "IterationLogger used outside its `with` block"
        step = len(self.result.records)
        given = report if isinstance(report, Iteration) else None
        it = given or Iteration(report, prompt, name, tokens_per_doc)  # type: ignore[arg-type]
        label = it.name or f"{step + 1:02d}"
        it = Iteration(it.report, it.prompt, label, it.tokens_per_doc)
        with self._tracker.errors():
            if step == 0:
                self._describe_parent(it.report)
            child = self._log_child(it, step, label)
            self._tracker.log_batches(self.parent.run_id, it.metrics(), step=step)
        self.result.records.append(IterationRecord(step, label, it.metrics(), it.prompt, child))
        self._iterations.append(it)
        return child

    def _describe_parent(self, report: Report) -> None:
        """Params, tags and the gold dataset input of the loop (from its first iteration)."""
        params = report_params(report, self._params)
        params.pop("pred_digest", None)  # differs per iteration: lives on the child runs
        tags = report_tags(report, self._tags, note=False)
        if not self.parent.owned and RUN_TYPE_TAG in self.parent.tags:
            tags.pop(RUN_TYPE_TAG)  # never relabel a run the caller typed
        self._tracker.log_batches(self.parent.run_id, params=params, tags=tags)
        self._tracker.log_gold_input(self.parent.run_id, report)

    def _log_child(self, it: Iteration, step: int | str, label: str) -> LoggedRun:
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

    def _log_baseline(self) -> None:
        """The baseline as a child run of its own (not a step of the metric history)."""
        assert self.result is not None
        if self._baseline is None:
            return
        run = self._log_child(self._baseline, BASELINE, BASELINE)
        metrics = self._baseline.metrics()
        self.result.baseline = IterationRecord(-1, BASELINE, metrics, None, run)

    def _finish_parent(self) -> None:
        assert self.result is not None
        records = self.result.records
        tags: dict[str, str] = {}
        if records:
            out = write_results(
                self._results or self._tmp / "parent" / ARTIFACT_DIR,
                self._iterations,
                self._baseline,
            )
            self.result.results = self._results
            self._log_baseline()
            self._tracker.client.log_artifacts(self.parent.run_id, str(out), ARTIFACT_DIR)
            best = self.result.best
            assert best is not None
            tags[BEST_TAG] = best.name
            metrics = best_metrics(best.metrics)
            if self.parent.owned:
                tags[NOTE_TAG] = _parent_note(records, best)
            self._tracker.log_batches(self.parent.run_id, metrics, step=best.step)
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


def best_metrics(metrics: Mapping[str, float]) -> dict[str, float]:
    """``best_<key>``: the best iteration's run-level metrics (keys without ``/``: the scores,
    their intervals, tokens per document; not the per-field or per-slice ones), for the
    parent run, whose plain keys hold the last iteration's (the latest step).

    >>> best_metrics({"f1": 0.9, "f1_ci_low": 0.8, "field_f1/total": 1.0})
    {'best_f1': 0.9, 'best_f1_ci_low': 0.8}
    """
    return {f"{BEST_PREFIX}{k}": v for k, v in metrics.items() if "/" not in k}


def _as_iteration(report: Report | Iteration, name: str) -> Iteration:
    if isinstance(report, Iteration):
        return Iteration(report.report, report.prompt, name, report.tokens_per_doc)
    return Iteration(report, None, name, report.tokens_per_doc)


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


def log_iteration_dir(
    folder: str | Path,
    gold: str | Path | None = None,
    config: Config | str | Path | Mapping[str, Any] | None = None,
    *,
    id_key: str | None = None,
    scoring: Mapping[str, Any] | None = None,
    baseline: str | Path | None = None,
    **log_kwargs: Any,
) -> IterationsResult:
    """Score a folder of ``NN/pred.jsonl`` + ``NN/prompt.txt`` (gold: `gold`, else
    ``<folder>/gold.jsonl``; `scoring`: the keyword options of :func:`evaluate`; `baseline`: a
    hand-made prediction file scored once as the reference) and log it as one parent run with a
    child per iteration; `log_kwargs` as for :class:`IterationLogger` (``results=`` included)."""
    scorer = IterationScorer(resolve_gold(folder, gold), config, id_key=id_key, **(scoring or {}))
    iterations = scorer.score_folder(folder)  # checks the folder and prompts first
    if baseline is not None:
        log_kwargs["baseline"] = scorer.score(baseline, BASELINE)
    return log_iterations(iterations, **log_kwargs)
