"""Evaluation runs on a tracking server named by refs, fetched for ``compare``.

A *ref* names one evaluation run:

- a run id (32 hex digits) or ``runs:/<id>`` (a trailing ``/path`` is ignored: the evaluation is
  always read from the run's ``eval/``);
- ``models:/<name>/<version>`` or ``models:/<name>@<alias>``: the run that produced the model
  version (``score --register``);
- ``prompts:/<name>/<version>`` or ``prompts:/<name>@<alias>``: the evaluation run linked to that
  prompt version (``score --prompt-uri``). MLflow 3 links a prompt to a run with the run tag
  ``mlflow.linkedPrompts`` (a JSON list of ``{"name", "version"}``), so the runs are found by a
  tag search over every experiment. When several runs link the version, the newest evaluation
  run (one with an ``extract_mlflow.signature`` tag and the signature's params, that did not
  fail) is used, and the resolution says so.

:func:`compare_refs` fetches both runs (metrics, params, signature tag,
``eval/documents.parquet``) and hands them to the pure :func:`~extract_mlflow.comparison.compare`.
Two runs are comparable when the signatures recomputed from their params agree: MLflow never
lets a param change once logged, while a tag can be set by anyone at any time. A run whose tag
disagrees with its params (or that lacks the tag or the params) is refused like a mismatch.

Only finished evaluations are compared: a run that is RUNNING (still logging, or orphaned by a
crash), SCHEDULED, FAILED or KILLED is refused, naming the run and its status, unless
``allow_unfinished`` (``--allow-unfinished``).

A ref that does not resolve is an :class:`~extract_mlflow.errors.InputError` naming the ref.

>>> parse_ref("models:/invoice-extractor@champion")
ParsedRef(ref='models:/invoice-extractor@champion', kind='model', name='invoice-extractor', \
version=None, alias='champion', run_id=None, path=None)
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..comparison import (
    DEFAULT_MIN_DOCUMENTS,
    Comparison,
    IncomparableRunsError,
    ScoredRun,
    check_options,
    compare,
)
from ..core.signature import missing_params
from ..errors import InputError
from ..evaluation.stats import DEFAULT_RESAMPLES
from ..gates import Gate, GatesLike, coerce_gates
from ..io.documents import read_counts
from .client import one_line
from .comparisons import comparison_folder, log_comparison, page_flips
from .payload import ARTIFACT_DIR, SIGNATURE_TAG, logged_signature
from .runs import Tracker

if TYPE_CHECKING:
    import pandas as pd
    from mlflow import MlflowClient
    from mlflow.entities import Run

log = logging.getLogger(__name__)


RefKind = Literal["run", "model", "prompt"]


DOCUMENTS_ARTIFACT = f"{ARTIFACT_DIR}/documents.parquet"


LINKED_PROMPTS_TAG = "mlflow.linkedPrompts"
"""The run tag MLflow 3 writes when a prompt version is linked to a run."""


_RUN_ID = re.compile(r"[0-9a-f]{32}")


VERSION_PATTERN = re.compile(r"[1-9][0-9]*")


SCHEMES: tuple[tuple[str, Literal["model", "prompt"]], ...] = (
    ("models:/", "model"),
    ("prompts:/", "prompt"),
)


LOOKUP_CODES = frozenset({"RESOURCE_DOES_NOT_EXIST", "INVALID_PARAMETER_VALUE", "NOT_FOUND"})


_UNUSABLE_STATUS = frozenset({"FAILED", "KILLED"})


_UNFINISHED_WHY = {
    "RUNNING": "still logging, or orphaned by a crash",
    "SCHEDULED": "not started yet",
    "FAILED": "ended FAILED",
    "KILLED": "ended KILLED",
}


_EXPERIMENT_CHUNK = 100


_FORMS = (
    "a run id, runs:/<id>, models:/<name>/<version>, models:/<name>@<alias>, "
    "prompts:/<name>/<version> or prompts:/<name>@<alias>"
)


# -- parsing refs (pure) ------------------------------------------------------------------------
@dataclass(frozen=True)
class ParsedRef:
    """A ref taken apart, before any lookup."""

    ref: str
    kind: RefKind
    name: str | None = None
    version: str | None = None
    alias: str | None = None
    run_id: str | None = None
    path: str | None = None


def _bad_ref(ref: str, why: str = "") -> InputError:
    return InputError(f"bad reference {ref!r}: {why or 'expected ' + _FORMS}")


def _registry_ref(ref: str, kind: RefKind, rest: str) -> ParsedRef:
    """``<name>/<version>`` or ``<name>@<alias>`` of a models:/ or prompts:/ URI."""
    if "@" in rest:
        name, _, alias = rest.rpartition("@")
        if name and alias and "/" not in name and "/" not in alias:
            return ParsedRef(ref, kind, name=name, alias=alias)
        raise _bad_ref(ref, f"expected {kind}s:/NAME@ALIAS")
    name, _, version = rest.rpartition("/")
    if not name or "/" in name or not VERSION_PATTERN.fullmatch(version):
        raise _bad_ref(ref, f"expected {kind}s:/NAME/VERSION (a version number) or NAME@ALIAS")
    return ParsedRef(ref, kind, name=name, version=version)


def parse_ref(ref: str) -> ParsedRef:
    """Take a ref apart (no lookup); an InputError naming the ref when it has no known form."""
    text = ref.strip()
    if _RUN_ID.fullmatch(text):
        return ParsedRef(ref, "run", run_id=text)
    if text.startswith("runs:/"):
        run_id, _, path = text[len("runs:/") :].strip("/").partition("/")
        if not _RUN_ID.fullmatch(run_id):
            raise _bad_ref(ref, "expected runs:/<id> with a run id of 32 hex digits")
        return ParsedRef(ref, "run", run_id=run_id, path=path or None)
    for scheme, kind in SCHEMES:
        if text.startswith(scheme):
            return _registry_ref(ref, kind, text[len(scheme) :])
    raise _bad_ref(ref)


# -- MLflow errors ------------------------------------------------------------------------------
def mlflow_message(exc: BaseException) -> str:
    """MLflow's message in one line, without its leading error code."""
    text = one_line(exc)
    code = str(getattr(exc, "error_code", "") or "")
    return text.removeprefix(f"{code}: ") if code else text


@contextlib.contextmanager
def lookup_errors(what: str) -> Iterator[None]:
    """MLflow's "not found" and "invalid value" answers as an InputError naming `what` (exit 2);
    everything else (network, server errors) is left to the tracker's one-line TrackingError."""
    from mlflow.exceptions import MlflowException

    try:
        yield
    except MlflowException as exc:
        if str(exc.error_code) not in LOOKUP_CODES:
            raise
        raise InputError(f"{what}: {mlflow_message(exc)}") from None


# -- resolving refs -------------------------------------------------------------------------------
@dataclass(frozen=True)
class ResolvedRef:
    """The run a ref names, and how it got there (for people)."""

    run_id: str
    kind: RefKind
    description: str
    name: str | None = None
    version: str | None = None
    ref: str | None = None

    @property
    def label(self) -> str:
        """How the run is shown in a comparison: the ref, and the run it resolved to."""
        if self.kind == "run" or not self.ref:
            return self.run_id
        return f"{self.ref} (run {self.run_id})"


def _model_ref(client: MlflowClient, parsed: ParsedRef) -> ResolvedRef:
    name = str(parsed.name)
    with lookup_errors(f"bad reference {parsed.ref!r}"):
        if parsed.alias is not None:
            mv = client.get_model_version_by_alias(name, parsed.alias)
        else:
            mv = client.get_model_version(name, str(parsed.version))
    if not mv.run_id:
        raise InputError(
            f"bad reference {parsed.ref!r}: model version {mv.version} was not registered from a "
            "run (register evaluations with `extract-mlflow score --register NAME`)"
        )
    via = f" → version {mv.version}" if parsed.alias is not None else ""
    text = f"{parsed.ref}{via} → run {mv.run_id}"
    return ResolvedRef(str(mv.run_id), "model", text, name, str(mv.version), parsed.ref)


def prompt_version(client: MlflowClient, name: str, version: str | None, alias: str | None) -> str:
    """The version number of prompt `name` at `version` or `alias` (checked to exist)."""
    what = f"prompts:/{name}@{alias}" if alias is not None else f"prompts:/{name}/{version}"
    with lookup_errors(f"bad reference {what!r}"):
        if alias is not None:
            pv = client.get_prompt_version_by_alias(name, alias)
        else:
            pv = client.get_prompt_version(name, str(version))
    if pv is None:
        raise InputError(f"bad reference {what!r}: prompt version not found")
    return str(pv.version)


def _experiment_ids(client: MlflowClient) -> list[str]:
    ids: list[str] = []
    token = None
    while True:
        page = client.search_experiments(max_results=1000, page_token=token)
        ids += [str(e.experiment_id) for e in page]
        token = page.token
        if not token:
            return ids


def _search_runs(client: MlflowClient, filter_string: str) -> list[Run]:
    """Every active run of every experiment matching `filter_string`, newest first."""
    ids = _experiment_ids(client)
    runs: list[Run] = []
    for start in range(0, len(ids), _EXPERIMENT_CHUNK):
        chunk, token = ids[start : start + _EXPERIMENT_CHUNK], None
        while True:
            page = client.search_runs(
                chunk, filter_string, max_results=1000, page_token=token,
                order_by=["attributes.start_time DESC"],
            )  # fmt: skip
            runs += list(page)
            token = page.token
            if not token:
                break
    return sorted(runs, key=lambda r: (r.info.start_time or 0, r.info.run_id), reverse=True)


def _links(run: Run, name: str, version: str) -> bool:
    try:
        entries = json.loads(run.data.tags.get(LINKED_PROMPTS_TAG, "[]"))
    except json.JSONDecodeError:
        return False
    return isinstance(entries, list) and any(
        isinstance(e, dict) and e.get("name") == name and str(e.get("version")) == version
        for e in entries
    )


def linked_runs(client: MlflowClient, name: str, version: str) -> list[Run]:
    """The runs linked to prompt version `name`/`version`, newest first."""
    entry = json.dumps({"name": name, "version": version})[1:-1].replace("'", "\\'")
    found = _search_runs(client, f"tags.`{LINKED_PROMPTS_TAG}` LIKE '%{entry}%'")
    return [r for r in found if _links(r, name, version)]  # LIKE is a prefilter only


def is_evaluation(run: Run) -> bool:
    """A run this package logged (it has the signature tag and params) that did not fail."""
    logged = SIGNATURE_TAG in run.data.tags and not missing_params(run.data.params)
    return logged and run.info.status not in _UNUSABLE_STATUS


def prompt_evaluation_run(client: MlflowClient, name: str, version: str) -> tuple[str, str]:
    """(run id, how it was chosen) of the evaluation run linked to a prompt version."""
    uri = f"prompts:/{name}/{version}"
    runs = linked_runs(client, name, version)
    evaluations = [r for r in runs if is_evaluation(r)]
    if not evaluations:
        why = f"{len(runs)} linked run(s), none an extract_mlflow evaluation" if runs else "none"
        raise InputError(
            f"no evaluation run is linked to {uri} ({why}); log one with "
            f"`extract-mlflow score GOLD PRED --prompt-uri {uri}`"
        )
    run_id = str(evaluations[0].info.run_id)
    if len(evaluations) == 1:
        return run_id, f"run {run_id}"
    return run_id, f"run {run_id} (the newest of {len(evaluations)} evaluation runs linked to it)"


def _prompt_ref(client: MlflowClient, parsed: ParsedRef) -> ResolvedRef:
    name = str(parsed.name)
    version = prompt_version(client, name, parsed.version, parsed.alias)
    run_id, how = prompt_evaluation_run(client, name, version)
    via = f" → version {version}" if parsed.alias is not None else ""
    return ResolvedRef(run_id, "prompt", f"{parsed.ref}{via} → {how}", name, version, parsed.ref)


def resolve_ref(client: MlflowClient, ref: str) -> ResolvedRef:
    """The run `ref` names (see the module docstring for the forms). An InputError naming the
    ref when its form is unknown or the name, version, alias or linked run does not exist."""
    parsed = parse_ref(ref)
    if parsed.kind == "model":
        return _model_ref(client, parsed)
    if parsed.kind == "prompt":
        return _prompt_ref(client, parsed)
    run_id = str(parsed.run_id)
    text = ref if ref == run_id else f"{ref} → run {run_id}"
    if parsed.path:
        text += f" (path {parsed.path!r} ignored: the evaluation is read from {ARTIFACT_DIR}/)"
    return ResolvedRef(run_id, "run", text, ref=ref)


# -- fetching a scored run ------------------------------------------------------------------------
@dataclass(frozen=True)
class FetchedRun:
    """A run ready to compare, with what was learnt while fetching it. `distrust` says why the
    run's signature cannot be trusted (None when its params and its tag agree)."""

    scored: ScoredRun
    resolved: ResolvedRef
    notes: tuple[str, ...] = ()
    distrust: str | None = None


def _documents(client: MlflowClient, resolved: ResolvedRef) -> pd.DataFrame | None:
    """The run's per-document counts frame, or None when the run has none."""
    run_id = resolved.run_id
    listed = {a.path for a in client.list_artifacts(run_id, ARTIFACT_DIR)}
    if DOCUMENTS_ARTIFACT not in listed:
        return None
    with tempfile.TemporaryDirectory(prefix="extract-mlflow-compare-") as tmp:
        local = client.download_artifacts(run_id, DOCUMENTS_ARTIFACT, tmp)
        try:
            return read_counts(Path(local))
        except Exception as exc:  # pyarrow raises several types for a broken file
            raise InputError(
                f"{resolved.label}: {DOCUMENTS_ARTIFACT} cannot be read: {one_line(exc)}"
            ) from None


def unfinished(label: str, run_id: str, status: str) -> str:
    """One line: the run `run_id` (shown as `label`) is not FINISHED, and why that matters."""
    who = label if run_id in label else f"{label} (run {run_id})"
    why = _UNFINISHED_WHY.get(status, "not FINISHED")
    return f"{who}: the run is {status} ({why}), its evaluation may be incomplete"


def fetch_run(
    client: MlflowClient, ref: str | ResolvedRef, *, allow_unfinished: bool = False
) -> FetchedRun:
    """Resolve `ref` and read its metrics, its signature (from its params, checked against its
    tag: :func:`~.payload.logged_signature`) and per-document counts. A run that is not FINISHED
    (RUNNING, SCHEDULED, FAILED, KILLED) is an InputError naming it and its status, unless
    `allow_unfinished` (then a note says so)."""
    resolved = ref if isinstance(ref, ResolvedRef) else resolve_ref(client, ref)
    with lookup_errors(f"bad reference {resolved.ref or resolved.run_id!r}"):
        run = client.get_run(resolved.run_id)
    status = str(run.info.status)
    plain = (resolved.run_id, f"{resolved.ref} → run {resolved.run_id}")
    notes = [] if resolved.description in plain else [resolved.description]
    if status != "FINISHED":
        text = unfinished(resolved.label, resolved.run_id, status)
        if not allow_unfinished:
            raise InputError(f"{text}; pass --allow-unfinished to use it anyway")
        notes.append(f"{text}; used anyway (--allow-unfinished)")
    frame = _documents(client, resolved)
    if frame is None:
        notes.append(f"{resolved.label} has no {DOCUMENTS_ARTIFACT}: no intervals, no flips")
    label = resolved.label if resolved.kind != "run" else f"run {resolved.run_id}"
    signature, distrust = logged_signature(run.data.params, run.data.tags, label)
    scored = ScoredRun(dict(run.data.metrics), frame, signature, resolved.label)
    return FetchedRun(scored, resolved, tuple(notes), distrust)


def fetch_scored_run(client: MlflowClient, ref: str | ResolvedRef) -> ScoredRun:
    """Resolve `ref` and fetch what a comparison needs of it: metrics (latest values), the
    signature its params record (None when they cannot tell), and ``eval/documents.parquet``
    (None when absent). A tag that disagrees with the params is logged as a warning."""
    fetched = fetch_run(client, ref)
    for note in fetched.notes:
        log.info("%s", note)
    if fetched.distrust:
        log.warning("%s", fetched.distrust)
    return fetched.scored


# -- comparing refs -------------------------------------------------------------------------------
def with_notes(comparison: Comparison, notes: Sequence[str]) -> Comparison:
    """The comparison with `notes` put before its own."""
    return dataclasses.replace(comparison, notes=(*notes, *comparison.notes))


def compare_refs(
    baseline_ref: str | None,
    candidate_ref: str,
    *,
    tracking_uri: str | None = None,
    gates: GatesLike = None,
    seed: int | None = 0,
    resamples: int = DEFAULT_RESAMPLES,
    allow_incomparable: bool = False,
    allow_unfinished: bool = False,
    min_documents: int = DEFAULT_MIN_DOCUMENTS,
) -> Comparison:
    """Compare two runs on a tracking server, each given as a ref (``baseline_ref=None``: no
    baseline, only absolute thresholds apply). Gates and options are checked before any network
    call. The result is a verdict only when a check was evaluated (``exit_code`` 2 otherwise).
    The comparison is kept on the candidate's run, in a folder of its own
    (:func:`~extract_mlflow.tracking.comparisons.log_comparison`).

    Raises InputError (a ref that does not resolve, a run not FINISHED unless
    `allow_unfinished`, a bad option), IncomparableRunsError (signatures differ, unless
    `allow_incomparable`), ConfigError (bad gates), GateError (a ``significant`` gate on fewer
    than `min_documents` paired documents), TrackingError (server unreachable).
    """
    gate_list = coerce_gates(gates)
    check_options(seed, resamples, min_documents)
    for ref in (baseline_ref, candidate_ref):
        if ref is not None:
            parse_ref(ref)  # a malformed ref fails before any network call
    finished = {"allow_unfinished": allow_unfinished}
    with Tracker(tracking_uri) as tracker:  # one store opened for reading and for storing
        with tracker.errors():
            client = tracker.client
            base = None if baseline_ref is None else fetch_run(client, baseline_ref, **finished)
            cand = fetch_run(client, candidate_ref, **finished)
        options = compare_options(seed, resamples, allow_incomparable, min_documents)
        result = judge(base, cand, gate_list, options)
        result = with_notes(result, [*(base.notes if base else ()), *cand.notes])
        flips = page_flips(result, base.scored.documents if base else None, cand.scored.documents)
        here = comparison_folder(base.resolved.run_id if base else None)
        return log_comparison(result, cand.resolved.run_id, here, flips, tracker=tracker)


def compare_options(
    seed: int | None, resamples: int, allow_incomparable: bool, min_documents: int
) -> dict[str, Any]:
    """The keyword arguments of :func:`~extract_mlflow.comparison.compare`."""
    return {
        "seed": seed,
        "resamples": resamples,
        "allow_incomparable": allow_incomparable,
        "min_documents": min_documents,
    }


def judge(
    base: FetchedRun | None, cand: FetchedRun, gates: Sequence[Gate], options: Mapping[str, Any]
) -> Comparison:
    """Compare two fetched runs by the signatures their params record. A run whose signature
    cannot be trusted (:func:`~.payload.logged_signature`), or a signature mismatch, is refused
    in one line naming both runs, unless ``allow_incomparable`` (then the notes say so)."""
    who = f"{base.resolved.label} vs {cand.resolved.label}" if base else cand.resolved.label
    distrust = [r.distrust for r in (base, cand) if base is not None and r and r.distrust]
    if distrust and not options.get("allow_incomparable"):
        raise IncomparableRunsError(
            f"{who}: {'; '.join(distrust)}; pass allow_incomparable (--allow-incomparable) to "
            "compare anyway"
        )
    try:
        result = compare(None if base is None else base.scored, cand.scored, gates, **options)
    except IncomparableRunsError as exc:
        raise IncomparableRunsError(f"{who}: {exc}") from None
    if not distrust:
        return result
    notes = [f"compared although {d} (--allow-incomparable)" for d in distrust]
    return dataclasses.replace(result, comparable=False, notes=(*notes, *result.notes))
