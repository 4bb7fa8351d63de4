"""Compare and promote evaluation runs on a tracking server: the networked side of ``compare``.

A *ref* names one evaluation run:

- a run id (32 hex digits) or ``runs:/<id>`` (a trailing ``/path`` is ignored: the evaluation is
  always read from the run's ``eval/``);
- ``models:/<name>/<version>`` or ``models:/<name>@<alias>``: the run that produced the model
  version (``score --register``);
- ``prompts:/<name>/<version>`` or ``prompts:/<name>@<alias>``: the evaluation run linked to that
  prompt version (``score --prompt-uri``). MLflow 3 links a prompt to a run with the run tag
  ``mlflow.linkedPrompts`` (a JSON list of ``{"name", "version"}``), so the runs are found by a
  tag search over every experiment. When several runs link the version, the newest evaluation
  run (one with an ``extract_mlflow.signature`` tag that did not fail) is used, and the
  resolution says so.

:func:`compare_refs` fetches both runs (metrics, signature tag, ``eval/documents.parquet``) and
hands them to the pure :func:`~extract_mlflow.comparison.compare`. :func:`promote` compares a
registered model or prompt version with the current holder of an alias, tags the version with
the verdict, a summary and the gate criteria either way, and moves the alias only on a pass.

Only finished evaluations are compared: a run that is RUNNING (still logging, or orphaned by a
crash), SCHEDULED, FAILED or KILLED is refused, naming the run and its status, unless
``allow_unfinished`` (``--allow-unfinished``).

Concurrent promotions
---------------------
Several ``promote`` calls on one alias at once must end as if they had run one after another:
each one that moves the alias moves it *from the version it was gated against*. MLflow has no
compare-and-set on an alias, so the moves are serialised by a **lease** on the registered model
(or prompt): the tag ``extract_mlflow.promotion.lease`` holding a random token, the owner and a
wall-clock expiry. A promote

1. gates its candidate against the current holder (outside the lease: a candidate that fails
   there is tagged ``failed`` and stops, as if it had run before whatever moves the alias next);
2. takes the lease: it reads the tag and, when no unexpired lease is there, writes its own token,
   waits ``settle`` seconds, and reads the tag back; it owns the lease only if its token is still
   there. Otherwise (or when another lease is unexpired, or the server refused the write because
   another promote wrote the tag at the same moment: two first writes of a tag collide on its
   unique key) it waits with bounded, jittered backoff and tries again, up to ``timeout``
   seconds (then exit 2, naming the holder of the lease);
3. inside the lease: re-reads the holder; if it changed, fetches the new holder and re-gates
   against it; checks that the lease still has ``margin`` seconds to run; moves the alias; reads
   the alias back; tags the version; and releases the lease (``finally``).

A promote whose candidate no longer passes against the actual holder, or that finds the alias
moved by someone outside the protocol, is **superseded**: exit 1, tagged
``verdict=superseded``, never ``passed``.

Why a read-back after a wait (Fischer's mutual exclusion): a plain write-then-read-back is not
enough, since B may read "free", A may write and confirm, and B's write may land afterwards, so
both would confirm. Every taker therefore measures the time from the start of its "free" read
to the end of its write and gives up the attempt when it exceeds ``write_bound`` (D); and it
reads back only after ``settle`` (Δ > D). If A enters, its confirming read happened Δ after its
write landed. Any B that read "free" did so before A's write landed (afterwards it would have
seen A's unexpired lease), so B's write landed within D of that read, before A's confirming read,
and A would have seen B's token instead of its own: contradiction. So while a lease is
unexpired at most one promote is inside. Its owner may clear a leftover token (from a taker that
overran D and so never entered) when it releases. The expiry only frees the lease of a crashed
promote; a promote checks its own remaining time (on its monotonic clock, counted from before
its write) before it moves the alias, and the hosts' clocks are assumed to agree within a few
seconds. Readers see the alias move only inside a lease, after the re-gate, so the outcome
equals the serial order in which the leases were held.

Every network call goes through :class:`~extract_mlflow.tracking.runs.Tracker`: an unreachable
server fails in one probe, MLflow errors become one line. A ref that does not resolve is an
:class:`~extract_mlflow.errors.InputError` naming the ref. mlflow is imported inside functions.

>>> parse_ref("models:/invoice-extractor@champion")
ParsedRef(ref='models:/invoice-extractor@champion', kind='model', name='invoice-extractor', \
version=None, alias='champion', run_id=None, path=None)
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import random
import re
import secrets
import socket
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
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
from ..core.text import fmt, truncate
from ..errors import GateError, InputError, TrackingError
from ..evaluation.stats import DEFAULT_RESAMPLES
from ..gates import Gate, GatesLike, coerce_gates
from .client import one_line
from .payload import ARTIFACT_DIR, SIGNATURE_TAG
from .runs import Tracker

if TYPE_CHECKING:
    from mlflow import MlflowClient
    from mlflow.entities import Run

log = logging.getLogger(__name__)

RefKind = Literal["run", "model", "prompt"]
DOCUMENTS_ARTIFACT = f"{ARTIFACT_DIR}/documents.parquet"
LINKED_PROMPTS_TAG = "mlflow.linkedPrompts"
"""The run tag MLflow 3 writes when a prompt version is linked to a run."""
TAG_PREFIX = "extract_mlflow.promotion."
VERDICT_TAG = TAG_PREFIX + "verdict"
SUMMARY_TAG = TAG_PREFIX + "summary"
CRITERIA_TAG = TAG_PREFIX + "criteria"
BASELINE_TAG = TAG_PREFIX + "baseline"
ALIAS_TAG = TAG_PREFIX + "alias"
LEASE_TAG = TAG_PREFIX + "lease"
"""The registered-model (or prompt) tag that serialises concurrent promotions."""
SUMMARY_LIMIT = 500
CRITERIA_LIMIT = 5000
DEFAULT_ALIAS = "champion"
_RUN_ID = re.compile(r"[0-9a-f]{32}")
_VERSION = re.compile(r"[1-9][0-9]*")
_SCHEMES: tuple[tuple[str, Literal["model", "prompt"]], ...] = (
    ("models:/", "model"),
    ("prompts:/", "prompt"),
)
_LOOKUP_CODES = frozenset({"RESOURCE_DOES_NOT_EXIST", "INVALID_PARAMETER_VALUE", "NOT_FOUND"})
_UNUSABLE_STATUS = frozenset({"FAILED", "KILLED"})
_UNFINISHED_WHY = {
    "RUNNING": "still logging, or orphaned by a crash",
    "SCHEDULED": "not started yet",
    "FAILED": "ended FAILED",
    "KILLED": "ended KILLED",
}
_CONTENDED_CODES = frozenset(
    {
        "BAD_REQUEST",
        "RESOURCE_ALREADY_EXISTS",
        "ABORTED",
        "INTERNAL_ERROR",
        "TEMPORARILY_UNAVAILABLE",
    }
)
"""What MLflow answers when two writes of one new tag collide (SQL unique-key violation)."""
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
    if not name or "/" in name or not _VERSION.fullmatch(version):
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
    for scheme, kind in _SCHEMES:
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
        if str(exc.error_code) not in _LOOKUP_CODES:
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
    """A run this package logged (it has the signature tag) that did not fail."""
    return SIGNATURE_TAG in run.data.tags and run.info.status not in _UNUSABLE_STATUS


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
    """A run ready to compare, with what was learnt while fetching it."""

    scored: ScoredRun
    resolved: ResolvedRef
    notes: tuple[str, ...] = ()


def _documents(client: MlflowClient, resolved: ResolvedRef) -> Any:
    """The run's per-document counts frame, or None when the run has none."""
    import pandas as pd

    run_id = resolved.run_id
    listed = {a.path for a in client.list_artifacts(run_id, ARTIFACT_DIR)}
    if DOCUMENTS_ARTIFACT not in listed:
        return None
    with tempfile.TemporaryDirectory(prefix="extract-mlflow-compare-") as tmp:
        local = client.download_artifacts(run_id, DOCUMENTS_ARTIFACT, tmp)
        try:
            return pd.read_parquet(Path(local))
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
    """Resolve `ref` and read its metrics, signature tag and per-document counts. A run that is
    not FINISHED (RUNNING, SCHEDULED, FAILED, KILLED) is an InputError naming it and its status,
    unless `allow_unfinished` (then a note says so)."""
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
    scored = ScoredRun(
        dict(run.data.metrics), frame, run.data.tags.get(SIGNATURE_TAG), resolved.label
    )
    return FetchedRun(scored, resolved, tuple(notes))


def fetch_scored_run(client: MlflowClient, ref: str | ResolvedRef) -> ScoredRun:
    """Resolve `ref` and fetch what a comparison needs of it: metrics (latest values), the
    ``extract_mlflow.signature`` tag, and ``eval/documents.parquet`` (None when absent)."""
    fetched = fetch_run(client, ref)
    for note in fetched.notes:
        log.info("%s", note)
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
    with Tracker(tracking_uri) as tracker, tracker.errors():
        client = tracker.client
        base = None if baseline_ref is None else fetch_run(client, baseline_ref, **finished)
        cand = fetch_run(client, candidate_ref, **finished)
    options = _options(seed, resamples, allow_incomparable, min_documents)
    result = judge(base, cand, gate_list, options)
    return with_notes(result, [*(base.notes if base else ()), *cand.notes])


def _options(
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
    """Compare two fetched runs; a signature mismatch names both runs."""
    try:
        return compare(None if base is None else base.scored, cand.scored, gates, **options)
    except IncomparableRunsError as exc:
        who = f"{base.resolved.label} vs {cand.resolved.label}" if base else cand.resolved.label
        raise IncomparableRunsError(f"{who}: {exc}") from None


# -- promotion ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Target:
    """A registered model or prompt, and whether it is a prompt."""

    name: str
    kind: Literal["model", "prompt"]

    @property
    def uri(self) -> str:
        return f"{'prompts' if self.kind == 'prompt' else 'models'}:/{self.name}"

    def ref(self, version: str) -> str:
        return f"{self.uri}/{version}"


def parse_target(name_or_uri: str) -> Target:
    """``NAME`` or ``models:/NAME`` (a registered model), ``prompts:/NAME`` (a prompt)."""
    text = name_or_uri.strip()
    kind: Literal["model", "prompt"] = "model"
    for scheme, k in _SCHEMES:
        if text.startswith(scheme):
            text, kind = text[len(scheme) :], k
    if not text or any(c in text for c in "/@"):
        raise InputError(
            f"{name_or_uri!r}: expected a registered model NAME (or models:/NAME) or "
            "prompts:/NAME; give the version separately"
        )
    return Target(text, kind)


def _check_version(version: str | int) -> str:
    text = str(version).strip()
    if not _VERSION.fullmatch(text):
        raise InputError(f"version {version!r}: expected a version number such as 3")
    return text


def check_alias(alias: str) -> None:
    """An InputError when MLflow would refuse `alias` (checked before anything is compared)."""
    from mlflow.exceptions import MlflowException
    from mlflow.utils.validation import (
        _validate_model_alias_name,
        _validate_model_alias_name_reserved,
    )

    try:
        _validate_model_alias_name(alias)  # type: ignore[no-untyped-call]
        _validate_model_alias_name_reserved(alias)  # type: ignore[no-untyped-call]
    except MlflowException as exc:
        raise InputError(f"--alias {alias!r}: {mlflow_message(exc)}") from None


Outcome = Literal["promoted", "kept", "first", "failed", "superseded"]
_EXIT_CODES: dict[str, int] = {
    "promoted": 0,
    "kept": 0,
    "first": 0,
    "failed": 1,
    "superseded": 1,
}


@dataclass(frozen=True)
class Promotion:
    """The outcome of :func:`promote`: the comparison it rests on (against the version it was
    last gated against), what happened, the version that held the alias before, and the tags
    written on the candidate version.

    `outcome`: ``promoted`` (the alias moved from `previous_version`), ``kept`` (the version
    already held the alias and passed), ``first`` (moved onto an empty alias with no gate
    evaluated, ``allow_first``), ``failed`` (a gate failed), ``superseded`` (the alias moved
    during the promotion to a version the candidate does not beat)."""

    comparison: Comparison
    promoted: bool
    name: str
    version: str
    alias: str
    kind: Literal["model", "prompt"] = "model"
    previous_version: str | None = None
    tags: Mapping[str, str] = field(default_factory=dict)
    outcome: Outcome = "promoted"
    gated_against: str | None = None

    @property
    def exit_code(self) -> int:
        """0 promoted (or kept), 1 a gate failed or the promotion was superseded."""
        return _EXIT_CODES[self.outcome]

    @property
    def uri(self) -> str:
        return Target(self.name, self.kind).ref(self.version)

    def headline(self) -> str:
        """One line: what happened to the alias."""
        prev, alias = self.previous_version, self.alias
        if self.outcome == "kept":
            return f"{self.uri} passed and keeps @{alias}"
        if self.outcome == "first":
            return (
                f"promoted {self.uri} to @{alias} as its first holder (was unset): no baseline, "
                "no gate was evaluated (--allow-first)"
            )
        if self.outcome == "promoted":
            was = f"version {prev}" if prev else "unset"
            return f"promoted {self.uri} to @{alias} (was {was})"
        stays = f"stays on version {prev}" if prev else "stays unset"
        if self.outcome == "superseded":
            was = f"version {self.gated_against}" if self.gated_against else "unset"
            return (
                f"superseded: {self.uri} was gated against @{alias} = {was}, but another "
                f"promotion moved @{alias} meanwhile and {self.uri} does not pass against it; "
                f"@{alias} {stays}"
            )
        return f"not promoted: {self.uri} failed its gates; @{alias} {stays}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "promoted": self.promoted,
            "outcome": self.outcome,
            "name": self.name,
            "version": self.version,
            "kind": self.kind,
            "alias": self.alias,
            "previous_version": self.previous_version,
            "gated_against": self.gated_against,
            "tags": dict(self.tags),
            "comparison": self.comparison.to_dict(),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2) + "\n"

    def to_markdown(self) -> str:
        mark = "✅" if self.exit_code == 0 else "❌"
        return f"## {mark} {self.headline()}\n\n{self.comparison.to_markdown()}"

    def to_table(self) -> str:
        return f"{self.headline()}\n\n{self.comparison.to_table()}"


def _headline_metric(comparison: Comparison) -> str | None:
    if comparison.row("f1") is not None:
        return "f1"
    return next((g.metric for g in comparison.gates), None)


def summary(comparison: Comparison, no_baseline: str = "no baseline") -> str:
    """One line (≤ 500 characters) for the registry UI; `no_baseline` says why there was no
    baseline run, when there was none.

    e.g. ``f1 0.991 vs 0.865 (+0.126); 3 gated metrics passed``
    """
    parts = []
    metric = _headline_metric(comparison)
    row = comparison.row(metric) if metric else None
    if row is not None:
        if comparison.has_baseline and row.delta is not None:
            parts.append(f"{metric} {fmt(row.candidate)} vs {fmt(row.baseline)} ({row.delta:+.3f})")
        else:
            parts.append(f"{metric} {fmt(row.candidate)}")
    if not comparison.has_baseline:
        parts.append(f"{no_baseline}: absolute thresholds only")
    elif not comparison.comparable:
        parts.append("compared although the runs were scored differently")
    total, failed = len(comparison.gates), comparison.failed_gates
    if failed:
        reasons = "; ".join(r for g in failed for r in g.reasons)
        parts.append(f"{len(failed)} of {_metrics(total)} failed: {reasons}")
    elif not comparison.checked:
        parts.append("no gate was evaluated")
    else:
        parts.append(f"{_metrics(total)} passed")
    text = "; ".join(parts)
    return truncate(text, SUMMARY_LIMIT)


def _metrics(n: int) -> str:
    return f"{n} gated metric{'' if n == 1 else 's'}"


def criteria(gates: Sequence[Gate]) -> str:
    """The gates as compact JSON (what the version was judged by)."""
    data = [g.model_dump(exclude_defaults=True) for g in gates]
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return truncate(text, CRITERIA_LIMIT)


def promotion_tags(
    comparison: Comparison,
    gates: Sequence[Gate],
    alias: str,
    previous: str | None,
    verdict: str | None = None,
) -> dict[str, str]:
    """The tags written on the candidate version, whatever the outcome. `verdict` defaults to
    ``passed``/``failed`` from the comparison; :func:`promote` also writes ``first`` (an empty
    alias taken with no gate evaluated) and ``superseded`` (lost a concurrent promotion)."""
    no_baseline = f"no version held @{alias}" if previous is None else f"already @{alias}"
    verdict = verdict or ("passed" if comparison.passed else "failed")
    text = summary(comparison, no_baseline)
    if verdict == "first":
        text = f"first promotion onto @{alias} with no baseline (--allow-first); {text}"
    elif verdict == "superseded":
        moved = f"moved to version {previous}" if previous else "was unset"
        text = f"superseded: @{alias} {moved} during the promotion; {text}"
    return {
        VERDICT_TAG: verdict,
        SUMMARY_TAG: truncate(text, SUMMARY_LIMIT),
        CRITERIA_TAG: criteria(gates),
        BASELINE_TAG: previous or "none",
        ALIAS_TAG: alias,
    }


# -- the lease ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LeasePolicy:
    """Timing of the promotion lease (see the module docstring), in seconds.

    `ttl`: how long a lease is valid (written as a wall-clock expiry); `write_bound`: the longest
    time from reading "free" to the end of the own write that still allows entering (D);
    `settle`: the wait before reading the token back (must exceed `write_bound`); `timeout`: how
    long to wait for a lease held by others before giving up (exit 2); `margin`: the validity a
    lease must have left before the alias is moved; `backoff`: first and largest wait between
    attempts (doubling, with jitter).
    """

    ttl: float = 30.0
    write_bound: float = 1.0
    settle: float = 1.2
    timeout: float = 180.0
    margin: float = 10.0
    backoff: tuple[float, float] = (0.05, 1.0)

    def __post_init__(self) -> None:
        if not self.settle > self.write_bound > 0 or not self.ttl > self.margin >= 0:
            raise InputError(
                f"lease policy: need settle > write_bound > 0 and ttl > margin ≥ 0, not {self!r}"
            )

    def pause(self, attempt: int) -> float:
        """The wait before attempt `attempt + 1`: doubling from backoff[0] up to backoff[1],
        times a random factor in [0.5, 1] so that waiting promotes spread out."""
        first, most = self.backoff
        return min(most, first * 2.0 ** min(attempt, 30)) * random.uniform(0.5, 1.0)


@dataclass(frozen=True)
class LeaseState:
    """What the lease tag holds."""

    token: str
    expires: float  # wall clock, seconds since the epoch
    owner: str = "?"

    def to_text(self) -> str:
        return json.dumps({"token": self.token, "expires": self.expires, "owner": self.owner})

    @classmethod
    def from_text(cls, text: str | None) -> LeaseState | None:
        """The lease in a tag value; None when the tag is absent or unreadable (a broken lease
        cannot be honoured, so it is treated as free)."""
        if not text:
            return None
        try:
            data = json.loads(text)
            return cls(str(data["token"]), float(data["expires"]), str(data.get("owner", "?")))
        except (ValueError, TypeError, KeyError):
            return None

    def describe(self) -> str:
        until = time.strftime("%H:%M:%S UTC", time.gmtime(self.expires))
        return f"held by {self.owner} until {until}"


@dataclass(frozen=True)
class Lease:
    """A lease this process owns: its token and when (monotonic clock) the attempt began."""

    token: str
    started: float
    ttl: float

    def remaining(self) -> float:
        """Seconds of validity left, counted from before the token was written."""
        return self.started + self.ttl - time.monotonic()


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


# -- the registry ---------------------------------------------------------------------------------
class Registry:
    """Version lookups, tags, aliases and the promotion lease of one registered model or
    prompt."""

    def __init__(self, client: MlflowClient, target: Target):
        self.client = client
        self.target = target

    def holder(self, alias: str) -> str | None:
        """The version that holds `alias`, None when none does."""
        from mlflow.exceptions import MlflowException

        name = self.target.name
        if self.target.kind == "model":
            with lookup_errors(f"registered model {name!r}"):
                aliases = self.client.get_registered_model(name).aliases
            held = dict(aliases or {}).get(alias)
            return None if held is None else str(held)
        try:
            return str(self.client.get_prompt_version_by_alias(name, alias).version)
        except MlflowException as exc:
            if str(exc.error_code) in _LOOKUP_CODES:  # the prompt exists: the alias does not
                return None
            raise

    def tag(self, version: str, tags: Mapping[str, str]) -> None:
        """Write `tags` on `version`; the verdict last, so that a reader never sees a verdict
        without the summary and criteria it rests on."""
        name = self.target.name
        ordered = sorted(tags.items(), key=lambda kv: kv[0] == VERDICT_TAG)
        for key, value in ordered:
            if self.target.kind == "prompt":
                self.client.set_prompt_version_tag(name, version, key, value)
            else:
                self.client.set_model_version_tag(name, version, key, value)

    def set_alias(self, alias: str, version: str) -> None:
        if self.target.kind == "prompt":
            self.client.set_prompt_alias(self.target.name, alias, int(version))
        else:
            self.client.set_registered_model_alias(self.target.name, alias, version)

    # -- the lease tag (on the registered model, or on the prompt) ------------------------------
    def read_lease(self) -> LeaseState | None:
        name = self.target.name
        with lookup_errors(f"{self.target.uri}"):
            if self.target.kind == "prompt":
                prompt = self.client.get_prompt(name)
                tags = {} if prompt is None else dict(prompt.tags or {})
            else:
                tags = dict(self.client.get_registered_model(name).tags or {})
        return LeaseState.from_text(tags.get(LEASE_TAG))

    def write_lease(self, state: LeaseState) -> None:
        if self.target.kind == "prompt":
            self.client.set_prompt_tag(self.target.name, LEASE_TAG, state.to_text())
        else:
            self.client.set_registered_model_tag(self.target.name, LEASE_TAG, state.to_text())

    def try_write_lease(self, state: LeaseState) -> bool:
        """Write the lease tag; False when the server refused the write because another
        promote wrote the same tag at the same moment (two first writes of a tag race on the
        server's unique key, and one is rejected). Other errors propagate."""
        from mlflow.exceptions import MlflowException

        try:
            self.write_lease(state)
        except MlflowException as exc:
            if str(exc.error_code) not in _CONTENDED_CODES:
                raise
            log.info("lease write on %s refused: %s", self.target.uri, mlflow_message(exc))
            return False
        return True

    def clear_lease(self) -> None:
        if self.target.kind == "prompt":
            self.client.delete_prompt_tag(self.target.name, LEASE_TAG)
        else:
            self.client.delete_registered_model_tag(self.target.name, LEASE_TAG)

    def acquire(self, policy: LeasePolicy) -> Lease:
        """Take the lease (see the module docstring); a TrackingError after `policy.timeout`
        seconds of others holding it."""
        deadline = time.monotonic() + policy.timeout
        attempt = 0
        while True:
            started = time.monotonic()
            state = self.read_lease()
            if state is None or state.expires <= time.time():
                token = secrets.token_hex(16)
                mine = LeaseState(token, time.time() + policy.ttl, _owner())
                # refused: a concurrent write won the tag, so someone else is taking the lease
                wrote = self.try_write_lease(mine)
                in_time = time.monotonic() - started <= policy.write_bound
                if wrote and in_time:
                    time.sleep(policy.settle)
                    state = self.read_lease()
                    if state is not None and state.token == token:
                        return Lease(token, started, policy.ttl)
                elif wrote:  # too slow to be sure no one entered meanwhile: do not enter
                    log.info("lease write on %s took too long; trying again", self.target.uri)
            if time.monotonic() > deadline:
                held = state.describe() if state is not None else "contended"
                raise TrackingError(
                    f"could not take the promotion lease on {self.target.uri} within "
                    f"{policy.timeout:g} s ({held}; another promote is running, or one crashed "
                    f"and its lease expires by itself; the tag is {LEASE_TAG})"
                )
            time.sleep(policy.pause(attempt))
            attempt += 1

    def release(self, lease: Lease) -> None:
        """Clear the lease tag when it holds our token, or another token while our lease is
        still valid (a taker that overran the write bound and never entered)."""
        state = self.read_lease()
        if state is not None and (state.token == lease.token or lease.remaining() > 0):
            self.clear_lease()

    @contextlib.contextmanager
    def leased(self, policy: LeasePolicy) -> Iterator[Lease]:
        """Hold the lease for the block; released in ``finally`` (best effort)."""
        lease = self.acquire(policy)
        try:
            yield lease
        finally:
            with contextlib.suppress(Exception):  # an expired lease frees itself anyway
                self.release(lease)


# -- promotion ------------------------------------------------------------------------------------
@dataclass
class _Promoter:
    """One promotion: the candidate fetched once, comparisons cached by holder version."""

    registry: Registry
    version: str
    alias: str
    gates: Sequence[Gate]
    options: Mapping[str, Any]
    allow_unfinished: bool
    allow_first: bool
    candidate: FetchedRun | None = None
    judged: dict[str | None, Comparison] = field(default_factory=dict)

    def _fetch(self, version: str) -> FetchedRun:
        ref = self.registry.target.ref(version)
        return fetch_run(self.registry.client, ref, allow_unfinished=self.allow_unfinished)

    def judge(self, holder: str | None) -> Comparison:
        """The candidate gated against `holder` (None: no holder, absolute thresholds only)."""
        if holder in self.judged:
            return self.judged[holder]
        if self.candidate is None:
            self.candidate = self._fetch(self.version)
        cand, uri = self.candidate, self.registry.target.uri
        base, notes = None, list(cand.notes)
        if holder == self.version:
            notes.append(f"version {holder} already holds the alias: absolute thresholds only")
        elif holder is not None:
            base = self._fetch(holder)
            notes = [*base.notes, *notes]
        else:
            notes.append(f"no version of {uri} holds the alias: absolute thresholds only")
        result = with_notes(judge(base, cand, self.gates, self.options), notes)
        self.judged[holder] = result
        return result

    def is_first(self, comparison: Comparison, holder: str | None) -> bool:
        """A first promotion: an empty alias, nothing evaluated, and --allow-first given."""
        return holder is None and not comparison.checked and self.allow_first

    def require_checked(self, comparison: Comparison, holder: str | None) -> None:
        """A GateError when the verdict would rest on no evaluated check."""
        if comparison.checked or self.is_first(comparison, holder):
            return
        hint = ""
        if holder is None:
            hint = f"; @{self.alias} is unset: pass --allow-first to take it with no baseline"
        raise GateError(
            f"{self.registry.target.ref(self.version)}: {comparison.unchecked_reason()}{hint}"
        )

    def result(
        self,
        comparison: Comparison,
        outcome: Outcome,
        previous: str | None,
        gated_against: str | None,
        verdict: str | None = None,
        write: bool = True,
    ) -> Promotion:
        """Tag the version (unless `write` is False) and describe the outcome."""
        tags = promotion_tags(comparison, self.gates, self.alias, previous, verdict)
        if write:
            self.registry.tag(self.version, tags)
        target = self.registry.target
        return Promotion(
            comparison, _EXIT_CODES[outcome] == 0, target.name, self.version, self.alias,
            target.kind, previous, tags if write else {}, outcome, gated_against,
        )  # fmt: skip

    def run(self, policy: LeasePolicy) -> Promotion:
        registry, alias = self.registry, self.alias
        gated_against = registry.holder(alias)
        comparison = self.judge(gated_against)
        self.require_checked(comparison, gated_against)
        if not comparison.passed and not self.is_first(comparison, gated_against):
            return self.result(comparison, "failed", gated_against, gated_against)
        if gated_against == self.version:
            return self.result(comparison, "kept", gated_against, gated_against)
        deadline = time.monotonic() + policy.timeout
        while True:
            with registry.leased(policy) as lease:
                done = self._inside(lease, policy, gated_against)
            if done is not None:
                return done
            if time.monotonic() > deadline:  # the lease kept running out: give up
                raise TrackingError(
                    f"{registry.target.uri}: the promotion lease ran out {policy.ttl:g} s "
                    "before the alias could be moved, again and again; is the server overloaded?"
                )

    def _inside(
        self, lease: Lease, policy: LeasePolicy, first_holder: str | None
    ) -> Promotion | None:
        """Inside the lease: re-read the holder, re-gate when it changed, move, read back.
        None when the lease ran short before the move (the caller takes it again)."""
        registry, alias = self.registry, self.alias
        holder = registry.holder(alias)
        if holder == self.version:  # another promote of this very version moved it
            return self.result(self.judge(first_holder), "superseded", holder, first_holder,
                               write=False)  # fmt: skip
        comparison = self.judge(holder)
        first = self.is_first(comparison, holder)
        if not (comparison.passed or first):
            return self.result(comparison, "superseded", holder, holder, "superseded")
        if lease.remaining() < policy.margin:
            return None
        registry.set_alias(alias, self.version)
        now = registry.holder(alias)
        if now != self.version:  # moved by something outside the lease protocol
            return self.result(comparison, "superseded", now, holder, "superseded")
        if first:
            return self.result(comparison, "first", holder, holder, "first")
        return self.result(comparison, "promoted", holder, holder)


def promote(
    name_or_prompt_uri: str,
    version: str | int,
    *,
    alias: str = DEFAULT_ALIAS,
    gates: GatesLike = None,
    tracking_uri: str | None = None,
    seed: int | None = 0,
    resamples: int = DEFAULT_RESAMPLES,
    allow_incomparable: bool = False,
    allow_unfinished: bool = False,
    allow_first: bool = False,
    min_documents: int = DEFAULT_MIN_DOCUMENTS,
    lease: LeasePolicy | None = None,
) -> Promotion:
    """Promote a registered model version (``NAME``) or prompt version (``prompts:/NAME``) to
    `alias` when it passes `gates` against the version that holds the alias (with no holder,
    only absolute thresholds apply). The candidate version is tagged with the outcome
    (``extract_mlflow.promotion.verdict`` = passed, failed, superseded or first; ``.summary``,
    ``.criteria``, ``.baseline``, ``.alias``); the alias moves only on a pass, under the
    promotion lease (module docstring), after re-gating against the actual holder.

    `gates`: as for :func:`~extract_mlflow.comparison.compare` (a gates file, a list of gates, or
    MLflow ``MetricThreshold`` objects by metric); at least one gate is required, and at least
    one check must be evaluated, except onto an empty alias with `allow_first`. Raises
    InputError (unknown name, version or run; a run not FINISHED unless `allow_unfinished`;
    signatures differ unless `allow_incomparable`; bad options), ConfigError (bad gates),
    GateError (no check evaluated; a ``significant`` gate on fewer than `min_documents`
    documents) or TrackingError (server unreachable; lease not obtained within its timeout);
    nothing is tagged then.
    """
    target, number = parse_target(name_or_prompt_uri), _check_version(version)
    gate_list = coerce_gates(gates)
    if not gate_list:
        raise InputError("promote needs at least one gate (--gates, --min, --max or --max-drop)")
    check_options(seed, resamples, min_documents)
    check_alias(alias)
    options = _options(seed, resamples, allow_incomparable, min_documents)
    policy = lease or LeasePolicy()
    with Tracker(tracking_uri) as tracker, tracker.errors():
        registry = Registry(tracker.client, target)
        promoter = _Promoter(
            registry, number, alias, gate_list, options, allow_unfinished, allow_first
        )
        return promoter.run(policy)
