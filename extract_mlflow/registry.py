"""Compare and promote evaluation runs on a tracking server: the networked side of ``compare``.

A *ref* names one evaluation run (DESIGN.md, "Compare refs"):

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

Every network call goes through :class:`~extract_mlflow.tracking.Tracker`: an unreachable server
fails in one probe, MLflow errors become one line. A ref that does not resolve is an
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
import re
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .comparison import Comparison, IncomparableRunsError, ScoredRun, compare
from .errors import InputError
from .gates import Gate, GatesLike, coerce_gates
from .render import fmt
from .stats import DEFAULT_RESAMPLES
from .tracking import ARTIFACT_DIR, SIGNATURE_TAG, Tracker, one_line

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


def fetch_run(client: MlflowClient, ref: str | ResolvedRef) -> FetchedRun:
    """Resolve `ref` and read its metrics, signature tag and per-document counts."""
    resolved = ref if isinstance(ref, ResolvedRef) else resolve_ref(client, ref)
    with lookup_errors(f"bad reference {resolved.ref or resolved.run_id!r}"):
        run = client.get_run(resolved.run_id)
    if run.info.status in _UNUSABLE_STATUS:
        raise InputError(
            f"{resolved.label}: the run ended {run.info.status}, its evaluation may be incomplete"
        )
    frame = _documents(client, resolved)
    plain = (resolved.run_id, f"{resolved.ref} → run {resolved.run_id}")
    notes = [] if resolved.description in plain else [resolved.description]
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
def _check_resamples(resamples: int) -> None:
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise InputError(f"resamples must be a whole number ≥ 1, not {resamples!r}")


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
) -> Comparison:
    """Compare two runs on a tracking server, each given as a ref (``baseline_ref=None``: no
    baseline, only absolute thresholds apply). Gates are checked before any network call.

    Raises InputError (a ref that does not resolve), IncomparableRunsError (signatures differ,
    unless `allow_incomparable`), ConfigError (bad gates), TrackingError (server unreachable).
    """
    gate_list = coerce_gates(gates)
    _check_resamples(resamples)
    for ref in (baseline_ref, candidate_ref):
        if ref is not None:
            parse_ref(ref)  # a malformed ref fails before any network call
    with Tracker(tracking_uri) as tracker, tracker.errors():
        base = None if baseline_ref is None else fetch_run(tracker.client, baseline_ref)
        cand = fetch_run(tracker.client, candidate_ref)
    options = {"seed": seed, "resamples": resamples, "allow_incomparable": allow_incomparable}
    result = judge(base, cand, gate_list, options)
    return with_notes(result, [*(base.notes if base else ()), *cand.notes])


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


@dataclass(frozen=True)
class Promotion:
    """The outcome of :func:`promote`: the comparison it rests on, whether the alias moved,
    the version that held the alias before, and the tags written on the candidate version."""

    comparison: Comparison
    promoted: bool
    name: str
    version: str
    alias: str
    kind: Literal["model", "prompt"] = "model"
    previous_version: str | None = None
    tags: Mapping[str, str] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        """0 promoted, 1 a gate failed (the alias was not moved)."""
        return 0 if self.promoted else 1

    @property
    def uri(self) -> str:
        return Target(self.name, self.kind).ref(self.version)

    def headline(self) -> str:
        """One line: what happened to the alias."""
        prev = self.previous_version
        if self.promoted and prev == self.version:
            return f"{self.uri} passed and keeps @{self.alias}"
        if self.promoted:
            was = f"version {prev}" if prev else "unset"
            return f"promoted {self.uri} to @{self.alias} (was {was})"
        stays = f"stays on version {prev}" if prev else "stays unset"
        return f"not promoted: {self.uri} failed its gates; @{self.alias} {stays}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "promoted": self.promoted,
            "name": self.name,
            "version": self.version,
            "kind": self.kind,
            "alias": self.alias,
            "previous_version": self.previous_version,
            "tags": dict(self.tags),
            "comparison": self.comparison.to_dict(),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2) + "\n"

    def to_markdown(self) -> str:
        mark = "✅" if self.promoted else "❌"
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
    else:
        parts.append(f"{_metrics(total)} passed")
    text = "; ".join(parts)
    return text if len(text) <= SUMMARY_LIMIT else text[: SUMMARY_LIMIT - 1] + "…"


def _metrics(n: int) -> str:
    return f"{n} gated metric{'' if n == 1 else 's'}"


def criteria(gates: Sequence[Gate]) -> str:
    """The gates as compact JSON (what the version was judged by)."""
    data = [g.model_dump(exclude_defaults=True) for g in gates]
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= CRITERIA_LIMIT else text[: CRITERIA_LIMIT - 1] + "…"


def promotion_tags(
    comparison: Comparison, gates: Sequence[Gate], alias: str, previous: str | None
) -> dict[str, str]:
    """The tags written on the candidate version, pass or fail."""
    no_baseline = f"no version held @{alias}" if previous is None else f"already @{alias}"
    return {
        VERDICT_TAG: "passed" if comparison.passed else "failed",
        SUMMARY_TAG: summary(comparison, no_baseline),
        CRITERIA_TAG: criteria(gates),
        BASELINE_TAG: previous or "none",
        ALIAS_TAG: alias,
    }


class Registry:
    """Version lookups, tags and aliases of one registered model or prompt."""

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
        name = self.target.name
        for key, value in tags.items():
            if self.target.kind == "prompt":
                self.client.set_prompt_version_tag(name, version, key, value)
            else:
                self.client.set_model_version_tag(name, version, key, value)

    def move_alias(self, alias: str, version: str, expected: str | None) -> None:
        """Point `alias` at `version`, refusing when it moved since it was read."""
        now = self.holder(alias)
        if now != expected:
            raise InputError(
                f"@{alias} of {self.target.uri} moved to version {now} during the promotion "
                f"(it was {expected or 'unset'}); run promote again"
            )
        if self.target.kind == "prompt":
            self.client.set_prompt_alias(self.target.name, alias, int(version))
        else:
            self.client.set_registered_model_alias(self.target.name, alias, version)


def judge_versions(
    registry: Registry,
    version: str,
    previous: str | None,
    gates: Sequence[Gate],
    options: Mapping[str, Any],
) -> Comparison:
    """Fetch the runs of the candidate `version` and of the `previous` alias holder, and
    compare them (only absolute thresholds when there is no other holder)."""
    client, target = registry.client, registry.target
    cand = fetch_run(client, target.ref(version))
    base = None
    notes = list(cand.notes)
    if previous == version:
        notes.append(f"version {version} already holds the alias: absolute thresholds only")
    elif previous is not None:
        base = fetch_run(client, target.ref(previous))
        notes = [*base.notes, *notes]
    else:
        notes.append(f"no version of {target.uri} holds the alias: absolute thresholds only")
    return with_notes(judge(base, cand, gates, options), notes)


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
) -> Promotion:
    """Promote a registered model version (``NAME``) or prompt version (``prompts:/NAME``) to
    `alias` when it passes `gates` against the version that holds the alias now (with no
    holder, only absolute thresholds apply). The candidate version is tagged either way
    (``extract_mlflow.promotion.verdict``, ``.summary``, ``.criteria``, ``.baseline``,
    ``.alias``); the alias moves only on a pass.

    `gates`: as for :func:`~extract_mlflow.comparison.compare` (a gates file, a list of gates, or
    MLflow ``MetricThreshold`` objects by metric); at least one gate is required. Raises
    InputError (unknown name, version or run; signatures differ unless `allow_incomparable`),
    ConfigError (bad gates) or TrackingError (server unreachable); nothing is tagged then.
    """
    target, number = parse_target(name_or_prompt_uri), _check_version(version)
    gate_list = coerce_gates(gates)
    if not gate_list:
        raise InputError("promote needs at least one gate (--gates, --min, --max or --max-drop)")
    _check_resamples(resamples)
    check_alias(alias)
    options = {"seed": seed, "resamples": resamples, "allow_incomparable": allow_incomparable}
    with Tracker(tracking_uri) as tracker, tracker.errors():
        registry = Registry(tracker.client, target)
        previous = registry.holder(alias)
        result = judge_versions(registry, number, previous, gate_list, options)
        tags = promotion_tags(result, gate_list, alias, previous)
        registry.tag(number, tags)
        if result.passed and previous != number:
            registry.move_alias(alias, number, previous)
    return Promotion(result, result.passed, target.name, number, alias, target.kind, previous, tags)
