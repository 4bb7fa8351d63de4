"""Logging a report: one scored evaluation = one MLflow run.

A run written by :func:`log_report` holds every metric of the report (batched within MLflow's
per-call limits), the params and signature tag of the evaluation, the tag MLflow's own
evaluations carry (``mlflow.runType = genai_evaluate``, so the UI lists it under evaluation
runs), the gold set as a dataset input, the ``eval/`` artifacts, and the per-document results as
an MLflow table. User tags in the ``mlflow.``/``extract_mlflow.`` namespaces and user params
named like ours are refused, so nobody can forge how a run was scored.

>>> logged = log_report(report, experiment="invoices", prompts=["prompt.txt"])  # doctest: +SKIP
>>> logged.run_id  # doctest: +SKIP
'3f0c…'
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .payload import SIGNATURE_TAG, check_user_keys, validate_prompt_uris, write_eval_artifacts
from .runs import LoggedRun, Tracker

if TYPE_CHECKING:
    from ..report import Report


# -- the one-call API ------------------------------------------------------------------------
def log_report(
    report: Report,
    *,
    tracking_uri: str | None = None,
    experiment: str | None = None,
    run_name: str | None = None,
    prompts: Sequence[str | Path] = (),
    prompt_uris: Sequence[str] = (),
    params: Mapping[str, Any] | None = None,
    tags: Mapping[str, Any] | None = None,
    register: str | None = None,
    run_id: str | None = None,
    parent_run_id: str | None = None,
    reuse_caller_run: bool = True,
    timeout: float | None = None,
    tool_tags: Mapping[str, str] | None = None,
) -> LoggedRun:
    """Log one evaluation as one MLflow run and return where it went.

    Logs into `run_id`, else into the run the caller already started (``mlflow.start_run`` or
    ``mlflow run``; left running), else into a new run of `experiment` that ends FINISHED, or
    FAILED on any error. `prompts` are files stored under ``eval/prompts/``; `prompt_uris`
    (``prompts:/NAME/VERSION``) are registered prompts linked to the run, each checked to exist
    before the run is created; `register` names a registered model that gets a new version
    whose source is the run's ``eval/`` artifacts, once the run is complete and FINISHED.
    `timeout` bounds each tracking call (default :data:`DEFAULT_TIMEOUT` seconds).
    `tool_tags` are tags this package sets itself (they may use the ``extract_mlflow.``
    namespace that user `tags` may not).
    Raises TrackingError (one line) when the store is unreachable or refuses, InputError for
    a user tag or param that would replace one of ours.
    """
    uris = validate_prompt_uris(prompt_uris)
    user_tags = {str(k): str(v) for k, v in (tags or {}).items()}
    check_user_keys(params, user_tags)
    with tempfile.TemporaryDirectory(prefix="extract-mlflow-") as tmp:
        eval_dir = write_eval_artifacts(report, Path(tmp), prompts)
        with Tracker(tracking_uri, timeout=timeout) as tracker, tracker.errors():
            tracker.resolve_prompts(uris)
            target = tracker.open_run(
                experiment=experiment,
                run_name=run_name,
                tags={**user_tags, **(tool_tags or {}), SIGNATURE_TAG: report.signature()},
                run_id=run_id,
                parent_run_id=parent_run_id,
                reuse_caller_run=reuse_caller_run,
            )
            with tracker.run_scope(target):
                tracker.log_evaluation(
                    target, report, eval_dir, params=params, tags=user_tags, prompt_uris=uris
                )
            version = tracker.register_logged(target, register, report) if register else None
            return tracker.logged(target, register, version)
