"""The MLflow side of an evaluation run: :class:`Tracker` (experiment, run scope, batched
logging, model and prompt links, unfinished runs) and :class:`LoggedRun` (what was logged)."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import ExtractMlflowError, InputError, TrackingError
from ..views.frames import documents_table
from .client import (
    NO_RETRY_TIMEOUT,
    PROBE_TIMEOUT,
    check_reachable,
    current_timeout,
    display_uri,
    env_defaults,
    http_env,
    is_tracking_failure,
    one_line,
    requested_timeout,
    resolve_tracking_uri,
    split_credentials,
    tracking_errors,
    using_tracking_uri,
)
from .payload import (
    ARTIFACT_DIR,
    PARENT_RUN_TAG,
    RUN_TYPE_EVALUATION,
    RUN_TYPE_TAG,
    SIGNATURE_TAG,
    TABLE_FILE,
    gold_dataset_input,
    headline,
    plan_batches,
    report_params,
    report_tags,
)
from .store import opening, sqlite_path

if TYPE_CHECKING:
    from mlflow import MlflowClient
    from mlflow.entities import Run

    from ..report import Report

log = logging.getLogger(__name__)


UNFINISHED_LIMIT = 20
"""At most this many RUNNING runs are looked up (a cheap search) when a run is created."""


UNFINISHED_SHOWN = 3


PROMPT_NOT_FOUND = ("RESOURCE_DOES_NOT_EXIST", "INVALID_PARAMETER_VALUE", "NOT_FOUND")
"""While marking a run FAILED after an error: one quick attempt of at most this long."""

_DUPLICATE = re.compile(r"(?i)unique|duplicate")
"""A unique-constraint violation as SQLite, PostgreSQL, MySQL and SQL Server word it."""


# -- results -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class LoggedRun:
    """Where an evaluation was logged (the CLI prints it; the JSON output gains `run_id`)."""

    run_id: str
    experiment_id: str
    tracking_uri: str
    artifact_uri: str
    model_name: str | None = None
    model_version: str | None = None
    unfinished_runs: tuple[str, ...] = ()
    """Runs of the same experiment this tool left RUNNING before this one (crashed or still
    logging), found when the run was created."""

    @property
    def url(self) -> str | None:
        """The run's page in the MLflow UI, for an HTTP tracking server (no credentials)."""
        if urlsplit(self.tracking_uri).scheme not in ("http", "https"):
            return None
        base = display_uri(self.tracking_uri).rstrip("/")
        return f"{base}/#/experiments/{self.experiment_id}/runs/{self.run_id}"

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["tracking_uri"] = display_uri(self.tracking_uri)
        out["url"] = self.url
        out["unfinished_runs"] = list(self.unfinished_runs) or None
        return {k: v for k, v in out.items() if v is not None}

    def unfinished_warning(self) -> str | None:
        """One line about the runs this tool left RUNNING in the experiment, or None."""
        runs = self.unfinished_runs
        if not runs:
            return None
        shown = ", ".join(runs[:UNFINISHED_SHOWN]) + (", …" if len(runs) > UNFINISHED_SHOWN else "")
        return (
            f"{len(runs)}{'+' if len(runs) >= UNFINISHED_LIMIT else ''} earlier "
            f"extract-mlflow run(s) in experiment {self.experiment_id} are still RUNNING "
            f"(crashed mid-logging, or still logging): {shown}"
        )


@dataclass(frozen=True)
class RunTarget:
    """A run we log into; `owned` when we created it (then we also end it)."""

    run_id: str
    experiment_id: str
    artifact_uri: str
    owned: bool
    tags: Mapping[str, str] = field(default_factory=dict)
    unfinished_runs: tuple[str, ...] = ()


# -- the tracker: one open connection to a tracking store --------------------------------------
class Tracker:
    """A session with one tracking store: fast-failing HTTP settings, the URI made current, one
    ``MlflowClient``. Use as a context manager; :func:`log_report` is the one-call form.

    >>> with Tracker("http://127.0.0.1:5000") as t:  # doctest: +SKIP
    ...     target = t.open_run(experiment="invoices", run_name="baseline")
    """

    def __init__(
        self,
        tracking_uri: str | None = None,
        *,
        probe_timeout: float = PROBE_TIMEOUT,
        timeout: float | None = None,
    ):
        self._requested = tracking_uri
        self.probe_timeout = probe_timeout
        self._timeout = timeout
        self.uri = ""
        self._stack = contextlib.ExitStack()
        self._client: MlflowClient | None = None
        self._caller_uri: str | None = None

    @property
    def timeout(self) -> float:
        """Seconds one tracking call may take in all: the Tracker's own, else the one set by
        :func:`request_timeout`, else :data:`DEFAULT_TIMEOUT`."""
        return self._timeout if self._timeout is not None else current_timeout()

    def __enter__(self) -> Tracker:
        explicit = self._timeout is not None or requested_timeout.get() is not None
        requested = resolve_tracking_uri(self._requested)
        self.uri, user, password = split_credentials(requested)
        check_reachable(requested, min(self.probe_timeout, self.timeout))
        try:
            if user is not None:  # MLflow sends basic auth from these
                creds = {"MLFLOW_TRACKING_USERNAME": user}
                creds["MLFLOW_TRACKING_PASSWORD"] = password or ""
                self._stack.enter_context(env_defaults(creds, override=True))
            self._stack.enter_context(env_defaults(http_env(self.timeout), override=explicit))
            self._caller_uri = _current_global_uri()
            self._stack.enter_context(using_tracking_uri(self.uri))
            import mlflow
            from mlflow import MlflowClient

            with tracking_errors(self.uri):  # e.g. MLflow refuses a file store (a bare path)
                with opening(self.uri, self.timeout):  # MLflow creates or migrates a SQLite store
                    self._client = MlflowClient(tracking_uri=self.uri)
                registry = mlflow.get_registry_uri()
                if sqlite_path(registry) not in (None, sqlite_path(self.uri)):
                    with opening(registry, self.timeout):  # another SQLite file: open it too
                        self._client._get_registry_client()  # type: ignore[no-untyped-call]
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    @property
    def client(self) -> MlflowClient:
        if self._client is None:
            raise RuntimeError("Tracker used outside its `with` block")
        return self._client

    def errors(self) -> contextlib.AbstractContextManager[None]:
        return tracking_errors(self.uri)

    # -- runs -------------------------------------------------------------------------------
    def caller_run_id(self) -> str | None:
        """The run the caller already started (``mlflow.start_run``, or ``MLFLOW_RUN_ID`` as set
        by ``mlflow run``), when it lives in this tracker's store."""
        import mlflow

        if self._caller_uri not in (None, self.uri):
            return None
        active = mlflow.active_run()
        if active is not None:
            return str(active.info.run_id)
        return os.environ.get("MLFLOW_RUN_ID") or None

    def experiment_id(self, name: str | None) -> str:
        """The id of experiment `name` (created when missing); with no name, MLflow's current
        experiment (``mlflow.set_experiment``, ``MLFLOW_EXPERIMENT_NAME``/``_ID``), else Default."""
        if name is None:
            return _default_experiment_id()
        exp = self.client.get_experiment_by_name(name)
        if exp is None:
            return self._create_experiment(name)
        if exp.lifecycle_stage == "deleted":
            raise TrackingError(
                f"experiment {name!r} at {self.uri} is deleted; restore or rename it"
            )
        return str(exp.experiment_id)

    def _create_experiment(self, name: str) -> str:
        from mlflow.exceptions import MlflowException

        try:
            return str(self.client.create_experiment(name))
        except MlflowException as exc:  # created concurrently by another process
            exp = self.client.get_experiment_by_name(name)
            if exp is None:
                raise TrackingError(f"cannot create experiment {name!r}: {one_line(exc)}") from exc
            return str(exp.experiment_id)

    def open_run(
        self,
        *,
        experiment: str | None = None,
        run_name: str | None = None,
        tags: Mapping[str, str] | None = None,
        run_id: str | None = None,
        parent_run_id: str | None = None,
        reuse_caller_run: bool = True,
    ) -> RunTarget:
        """Use run `run_id` (or the caller's active run), else create one (owned by us)."""
        existing = run_id or (self.caller_run_id() if reuse_caller_run else None)
        if existing:
            return self._existing_run(existing, experiment, run_name)
        from mlflow.tracking.context.registry import resolve_tags

        all_tags = {RUN_TYPE_TAG: RUN_TYPE_EVALUATION, **(tags or {})}
        if parent_run_id:
            all_tags[PARENT_RUN_TAG] = parent_run_id
        if parent_run_id and experiment is None:
            eid = str(self.client.get_run(parent_run_id).info.experiment_id)
        else:
            eid = self.experiment_id(experiment)
        unfinished = () if parent_run_id else self.unfinished_runs(eid)
        run = self.client.create_run(eid, run_name=run_name, tags=resolve_tags(all_tags))
        return _target(run, owned=True, unfinished=unfinished)

    def unfinished_runs(self, experiment_id: str) -> tuple[str, ...]:
        """Runs of the experiment that this tool started (they carry the signature tag) and that
        are still RUNNING: crashed mid-logging, or logging right now. One small search; a store
        that refuses the filter gives () (a store that does not answer raises, as any call)."""
        from mlflow.exceptions import MlflowException

        query = f"attributes.status = 'RUNNING' and tags.`{SIGNATURE_TAG}` LIKE 'extract_mlflow:%'"
        try:
            runs = self.client.search_runs(
                [experiment_id], query, max_results=UNFINISHED_LIMIT, order_by=["start_time DESC"]
            )
        except MlflowException as exc:
            if exc.error_code not in ("INVALID_PARAMETER_VALUE", "BAD_REQUEST"):
                raise
            log.debug("could not look for unfinished runs: %s", one_line(exc))
            return ()
        return tuple(str(r.info.run_id) for r in runs)

    def resolve_prompts(self, uris: Iterable[str]) -> None:
        """Check that every ``prompts:/`` URI names a prompt version that exists in this store
        (before any run is created); an InputError naming the first that does not."""
        from mlflow.exceptions import MlflowException

        for uri in uris:
            try:
                name, version = self.client.parse_prompt_uri(uri)
                found = self.client.get_prompt_version(name, version)
            except MlflowException as exc:
                if exc.error_code not in PROMPT_NOT_FOUND:
                    raise
                found = None
            if found is None:
                raise InputError(f"--prompt-uri {uri}: no such prompt version at {self.uri}")

    def _existing_run(self, run_id: str, experiment: str | None, run_name: str | None) -> RunTarget:
        run = self.client.get_run(run_id)
        if experiment or run_name:
            log.info("logging into existing run %s: experiment/run name arguments ignored", run_id)
        return _target(run, owned=False)

    @contextlib.contextmanager
    def run_scope(self, target: RunTarget) -> Iterator[None]:
        """End an owned run FINISHED on success; FAILED on any error, which is re-raised as a
        one-line TrackingError naming the run; KILLED on Ctrl-C (or SIGTERM in the CLI), the
        KeyboardInterrupt then naming the run. When the run cannot be ended (the server froze)
        the message says it is left unfinished."""
        try:
            with self.errors():
                yield
        except KeyboardInterrupt as exc:
            if not target.owned:
                raise
            marked = self._terminate(target, "KILLED")
            state = "marked KILLED" if marked else "left unfinished (RUNNING)"
            raise KeyboardInterrupt(f"MLflow run {target.run_id} {state}") from exc
        except Exception as exc:
            if not target.owned:
                raise
            marked = self._terminate(target, "FAILED")
            state = (
                "run marked FAILED"
                if marked
                else "the run is left unfinished (RUNNING: it could not be marked FAILED)"
            )
            raise TrackingError(
                f"logging to MLflow run {target.run_id} at {self.uri} failed, {state}: "
                f"{_strip_prefix(one_line(exc), self.uri)}"
            ) from exc
        else:
            if target.owned:
                with self.errors():
                    self.client.set_terminated(target.run_id, "FINISHED")

    def _terminate(self, target: RunTarget, status: str) -> bool:
        """End an owned run with `status` in one quick attempt; False when the store is gone
        (the caller reports the original error, in one line)."""
        if not target.owned:
            return False
        quick = http_env(min(NO_RETRY_TIMEOUT, self.timeout))
        try:
            with env_defaults(quick, override=True):
                self.client.set_terminated(target.run_id, status)
        except Exception as exc:
            log.debug("could not mark run %s %s: %s", target.run_id, status, one_line(exc))
            return False
        return True

    # -- logging ----------------------------------------------------------------------------
    def log_batches(
        self,
        run_id: str,
        metrics: Mapping[str, float] | None = None,
        params: Mapping[str, str] | None = None,
        tags: Mapping[str, str] | None = None,
        *,
        step: int = 0,
    ) -> int:
        """Send metrics, params and tags in as few ``log_batch`` calls as the limits allow;
        returns the number of calls."""
        from mlflow.entities import Metric, Param, RunTag

        now = int(time.time() * 1000)
        batches = plan_batches(
            [Metric(k, float(v), now, step) for k, v in (metrics or {}).items()],
            [Param(k, v) for k, v in (params or {}).items()],
            [RunTag(k, v) for k, v in (tags or {}).items()],
        )
        for b in batches:
            self.client.log_batch(
                run_id, metrics=b.metrics, params=b.params, tags=b.tags, synchronous=True
            )
        return len(batches)

    def log_gold_input(self, run_id: str, report: Report) -> None:
        """Log the gold set as the run's dataset input. MLflow's SQL stores insert a dataset new
        to the experiment after looking for it, so runs that log the same new gold set at the
        same moment (the first runs of a CI matrix) race for the row, and the losers fail on the
        unique constraint. ``log_inputs`` is idempotent (an existing dataset, and the run's
        existing input, are reused), so the loser tries once more and finds the winner's row."""
        from mlflow.exceptions import MlflowException

        dataset = [gold_dataset_input(report)]
        try:
            self.client.log_inputs(run_id, dataset)
        except MlflowException as exc:
            if not _DUPLICATE.search(str(exc)):
                raise
            self.client.log_inputs(run_id, dataset)

    def log_evaluation(
        self,
        target: RunTarget,
        report: Report,
        eval_dir: Path,
        *,
        params: Mapping[str, Any] | None = None,
        tags: Mapping[str, Any] | None = None,
        prompt_uris: Sequence[str] = (),
        step: int = 0,
        dataset_input: bool = True,
    ) -> None:
        """Everything of one evaluation into `target`: metrics, params, tags, the gold dataset
        input (unless `dataset_input` is False), the ``eval/`` artifacts, the per-document table
        and the linked prompts."""
        run_tags = report_tags(report, tags, note=target.owned)
        if not target.owned and RUN_TYPE_TAG in target.tags:
            run_tags.pop(RUN_TYPE_TAG)  # never relabel a run the caller typed
        self.log_batches(
            target.run_id, report.metrics(), report_params(report, params), run_tags, step=step
        )
        if dataset_input:
            self.log_gold_input(target.run_id, report)
        self.client.log_artifacts(target.run_id, str(eval_dir), ARTIFACT_DIR)
        self.client.log_table(target.run_id, documents_table(report), TABLE_FILE)
        for uri in prompt_uris:
            self.client.link_prompt_version_to_run(target.run_id, uri)

    def register(self, target: RunTarget, name: str, report: Report | None = None) -> str:
        """Register the run's ``eval/`` artifacts as a new version of model `name` (created when
        missing), so aliases can point at this evaluation; returns the version."""
        from mlflow.exceptions import MlflowException

        try:
            self.client.create_registered_model(name)
        except MlflowException as exc:
            if "RESOURCE_ALREADY_EXISTS" not in str(exc.error_code):
                raise
        tags = {SIGNATURE_TAG: report.signature()} if report is not None else {}
        mv = self.client.create_model_version(
            name,
            source=f"{target.artifact_uri.rstrip('/')}/{ARTIFACT_DIR}",
            run_id=target.run_id,
            tags=tags,
            description=headline(report) if report is not None else None,
            await_creation_for=0,
        )
        return str(mv.version)

    def register_logged(self, target: RunTarget, name: str, report: Report) -> str:
        """:meth:`register` a run whose logging is complete (FINISHED when we own it); a
        failure says the run itself is logged."""
        try:
            return self.register(target, name, report)
        except ExtractMlflowError:
            raise
        except Exception as exc:
            if not is_tracking_failure(exc):
                raise
            raise TrackingError(
                f"run {target.run_id} is logged, but registering it as a version of model "
                f"{name!r} at {self.uri} failed: {_strip_prefix(one_line(exc), self.uri)}"
            ) from exc

    def logged(
        self, target: RunTarget, model: str | None = None, version: str | None = None
    ) -> LoggedRun:
        return LoggedRun(
            target.run_id,
            target.experiment_id,
            self.uri,
            target.artifact_uri,
            model,
            version,
            target.unfinished_runs,
        )


def _target(run: Run, *, owned: bool, unfinished: tuple[str, ...] = ()) -> RunTarget:
    info = run.info
    return RunTarget(
        str(info.run_id),
        str(info.experiment_id),
        str(info.artifact_uri),
        owned,
        dict(run.data.tags),
        unfinished,
    )


def _current_global_uri() -> str | None:
    import mlflow

    return str(mlflow.get_tracking_uri())


def _default_experiment_id() -> str:
    from mlflow.tracking import fluent

    try:
        eid = fluent._get_experiment_id()
    except Exception:  # a context provider failed: fall back to MLflow's Default experiment
        eid = None
    return str(eid or "0")


def _strip_prefix(message: str, uri: str) -> str:
    prefix = f"MLflow tracking at {uri}: "
    return message[len(prefix) :] if message.startswith(prefix) else message
