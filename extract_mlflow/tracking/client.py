"""MLflow tracking: one scored evaluation = one MLflow run.

This is the only module that imports mlflow, and always inside functions: ``import mlflow`` costs
seconds and ``extract-mlflow --help`` must stay fast.

A run written by :func:`log_report` holds every metric of the report (batched within MLflow's
per-call limits), the params and signature tag of the evaluation, the tag MLflow's own
evaluations carry (``mlflow.runType = genai_evaluate``, so the UI lists it under evaluation
runs), the gold set as a dataset input, the ``eval/`` artifacts, and the per-document results as
an MLflow table. User tags in the ``mlflow.``/``extract_mlflow.`` namespaces and user params
named like ours are refused, so nobody can forge how a run was scored.

Failure is explicit: a malformed URI is refused before anything is contacted
(:func:`check_tracking_uri`), an unreachable HTTP server is detected by one short ``/health``
probe before any MLflow call (:func:`check_reachable`), every call is bounded by a timeout, its
retries included (:func:`request_timeout`, default 30 s), and a run this module started ends
FAILED (KILLED on an interrupt) when anything goes wrong after it was created; when even that is
impossible the message says the run is left unfinished, and the next run in that experiment
reports it. Every such failure is a :class:`~extract_mlflow.errors.TrackingError` with one line.

Credentials in the URI (``http://user:password@host``) are handed to MLflow as its basic-auth
environment variables for the duration and stripped from the URI; :func:`redact` keeps them,
and ``MLFLOW_TRACKING_PASSWORD``/``_TOKEN``, out of every message, param, tag and artifact.

>>> logged = log_report(report, experiment="invoices", prompts=["prompt.txt"])  # doctest: +SKIP
>>> logged.run_id  # doctest: +SKIP
'3f0c…'
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import time
import urllib.error
import urllib.request
from base64 import b64encode
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from ..core.text import truncate
from ..errors import ExtractMlflowError, InputError, TrackingError

if TYPE_CHECKING:
    from mlflow import MlflowClient
    from mlflow.entities import Run

    from ..report import Report

log = logging.getLogger(__name__)

RUN_TYPE_TAG = "mlflow.runType"
RUN_TYPE_EVALUATION = "genai_evaluate"
"""The run type MLflow's own evaluations carry: the UI lists these runs as evaluation runs."""
SIGNATURE_TAG = "extract_mlflow.signature"
PARENT_RUN_TAG = "mlflow.parentRunId"
NOTE_TAG = "mlflow.note.content"
ARTIFACT_DIR = "eval"
TABLE_FILE = "eval/documents_table.json"
"""The per-document results as an MLflow table (``log_table``): the UI lines them up by run."""
GOLD_CONTEXT = "gold"
TEXT_ARTIFACTS = (".md", ".json", ".toml", ".txt", ".csv", ".tex")

# MLflow's per-call limits (mlflow.utils.validation; the tests pin them to the installed MLflow).
MAX_METRICS_PER_CALL = 1000
MAX_PARAMS_TAGS_PER_CALL = 100
MAX_ENTITIES_PER_CALL = 1000
MAX_REQUEST_BYTES = 900_000  # MLflow refuses batch requests over 1 MB; keep a margin
MAX_PARAM_LENGTH = 6000
MAX_TAG_LENGTH = 8000
MAX_KEY_LENGTH = 250
MAX_DATASET_DIGEST = 36

RESERVED_TAG_PREFIXES = ("mlflow.", "extract_mlflow.")
"""Tag namespaces this tool and MLflow write (signature, run type, note, parent run): a user tag
there could forge how a run was scored, so it is refused."""
RESERVED_PARAMS = ("config_digest", "id_key", "scorer_version", "gold_digest", "pred_digest")
"""The params every evaluation run carries: a user param of the same name is refused."""

PROBE_TIMEOUT = 5.0
DEFAULT_TIMEOUT = 30.0
"""Seconds one tracking call may take in all (its retries included) unless told otherwise."""
NO_RETRY_TIMEOUT = 5.0
UNFINISHED_LIMIT = 20
"""At most this many RUNNING runs are looked up (a cheap search) when a run is created."""
UNFINISHED_SHOWN = 3
PROMPT_NOT_FOUND = ("RESOURCE_DOES_NOT_EXIST", "INVALID_PARAMETER_VALUE", "NOT_FOUND")
"""While marking a run FAILED after an error: one quick attempt of at most this long."""
CREDENTIAL_ENV = ("MLFLOW_TRACKING_PASSWORD", "MLFLOW_TRACKING_TOKEN")
"""Environment variables whose values are secrets: never printed, never logged."""
MIN_SECRET_LENGTH = 4
"""Shorter secret values are not searched for in free text (they would mangle every message);
userinfo in URLs is always redacted."""

_timeout: ContextVar[float | None] = ContextVar("extract_mlflow_timeout", default=None)
_secrets: set[str] = set()
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#@\s]+@")


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


# -- credentials: used as MLflow uses them, never shown -----------------------------------------
def redact(text: str) -> str:
    """`text` with every credential replaced by ``***``: the userinfo of URLs
    (``http://user:pass@host``), the passwords of tracking URIs seen in this process, and the
    values of ``MLFLOW_TRACKING_PASSWORD`` and ``MLFLOW_TRACKING_TOKEN``. The one redaction
    used by every message, param, tag and artifact this package writes.

    >>> redact("cannot reach http://alice:s3cret@127.0.0.1:5000/api")
    'cannot reach http://***@127.0.0.1:5000/api'
    """
    text = _USERINFO.sub(r"\1***@", text)
    for secret in sorted(_known_secrets(), key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def display_uri(uri: str) -> str:
    """`uri` as it may be shown: without userinfo, every known secret redacted.

    >>> display_uri("https://u:pw-123456@mlflow.example.com")
    'https://mlflow.example.com'
    """
    return redact(split_credentials(uri)[0])


def _known_secrets() -> set[str]:
    values = set(_secrets)
    values.update(os.environ.get(name) or "" for name in CREDENTIAL_ENV)
    found = {v for v in values if len(v) >= MIN_SECRET_LENGTH}
    return found | {quote(v, safe="") for v in found}


def split_credentials(uri: str) -> tuple[str, str | None, str | None]:
    """An HTTP(S) URI without its userinfo, and the user name and password it held (MLflow
    sends them as basic auth from ``MLFLOW_TRACKING_USERNAME``/``_PASSWORD``). The password is
    remembered as a secret, so :func:`redact` hides it wherever it turns up.

    >>> split_credentials("http://bob:pw%40x@127.0.0.1:5000")
    ('http://127.0.0.1:5000', 'bob', 'pw@x')
    """
    parts = urlsplit(uri)
    if parts.scheme not in ("http", "https") or "@" not in parts.netloc:
        return uri, None, None
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user, sep, password = userinfo.partition(":")
    secret = unquote(password) if sep else None
    if secret:
        _secrets.add(secret)
    return urlunsplit(parts._replace(netloc=hostport)), unquote(user), secret


def _auth_header(user: str | None, password: str | None) -> dict[str, str]:
    """The header MLflow's client would send: basic auth from the URI or the environment,
    else a bearer token from ``MLFLOW_TRACKING_TOKEN``."""
    user = user if user is not None else os.environ.get("MLFLOW_TRACKING_USERNAME")
    if user is not None and password is None:
        password = os.environ.get("MLFLOW_TRACKING_PASSWORD")
    if user is not None and password is not None:
        token = b64encode(f"{user}:{password}".encode()).decode("ascii")
        return {"Authorization": f"Basic {token}"}
    bearer = os.environ.get("MLFLOW_TRACKING_TOKEN")
    return {"Authorization": f"Bearer {bearer}"} if bearer else {}


# -- timeouts ----------------------------------------------------------------------------------
@contextlib.contextmanager
def request_timeout(seconds: float | None) -> Iterator[None]:
    """Bound every tracking call made inside the block (by any :class:`Tracker` that was not
    given its own timeout) to `seconds` in all; None keeps the default."""
    if seconds is not None and not seconds > 0:
        raise InputError(f"--timeout {seconds}: expected a number of seconds above 0")
    token = _timeout.set(seconds)
    try:
        yield
    finally:
        _timeout.reset(token)


def current_timeout() -> float:
    """The bound set by :func:`request_timeout`, else :data:`DEFAULT_TIMEOUT`."""
    chosen = _timeout.get()
    return DEFAULT_TIMEOUT if chosen is None else chosen


def http_env(timeout: float) -> dict[str, str]:
    """MLflow's HTTP settings that keep one call (all its attempts and back-off included) within
    about `timeout` seconds: two retries with a short back-off when there is time for them.

    >>> env = http_env(30.0)
    >>> env["MLFLOW_HTTP_REQUEST_TIMEOUT"], env["MLFLOW_HTTP_REQUEST_MAX_RETRIES"]
    ('9', '2')
    """
    retries, backoff = (2, 1) if timeout >= 15 else (0, 0)
    waits = sum(backoff * 2**n for n in range(1, retries))  # urllib3: no wait before the 1st
    per_try = max(1, int((timeout - waits) / (retries + 1)))
    return {
        "MLFLOW_HTTP_REQUEST_MAX_RETRIES": str(retries),
        "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": str(backoff),
        "MLFLOW_HTTP_REQUEST_BACKOFF_JITTER": "0",
        "MLFLOW_HTTP_REQUEST_TIMEOUT": str(per_try),
    }


FAST_HTTP_ENV = http_env(DEFAULT_TIMEOUT)
"""MLflow's HTTP settings while we log (unless the user set them): a few retries, not minutes."""


# -- tracking URI and reachability -------------------------------------------------------------
def resolve_tracking_uri(uri: str | None = None) -> str:
    """`uri`, else ``MLFLOW_TRACKING_URI``, else MLflow's default (a local store in the working
    directory). Only the last case imports mlflow. A URI MLflow cannot use is an InputError
    (see :func:`check_tracking_uri`)."""
    if uri is not None:
        return check_tracking_uri(str(uri))
    env = os.environ.get("MLFLOW_TRACKING_URI")
    if env:
        return check_tracking_uri(env)
    import mlflow

    return str(mlflow.get_tracking_uri())


def check_tracking_uri(uri: str) -> str:
    """`uri` when MLflow has a tracking store for it, else an InputError "unsupported tracking
    URI" in one line; nothing is contacted. Paths, ``file:``, ``http(s)://host``, database URIs
    (``sqlite:///``, ``postgresql://``…), ``databricks`` and plugin schemes are accepted.
    """

    def bad(why: str) -> InputError:
        return InputError(f"unsupported tracking URI {redact(uri)!r}: {why}")

    if not uri.strip():
        raise bad("it is blank")
    try:
        parts = urlsplit(uri)
        _ = parts.port  # a malformed port or IPv6 host raises here
    except ValueError as exc:
        raise bad(str(exc)) from None
    scheme = parts.scheme.lower()
    if scheme in ("http", "https"):
        if not parts.hostname:
            raise bad("no host name")
        return uri
    if scheme in ("", "file") or len(scheme) == 1:  # paths (a drive letter on Windows)
        return uri
    from mlflow.exceptions import MlflowException
    from mlflow.tracking._tracking_service.utils import _tracking_store_registry

    try:
        _tracking_store_registry.get_store_builder(uri)  # type: ignore[no-untyped-call]
    except MlflowException:
        raise bad(f"MLflow has no tracking store for scheme '{parts.scheme}'") from None
    return uri


def is_http(uri: str) -> bool:
    return urlsplit(uri).scheme in ("http", "https")


def check_reachable(uri: str, timeout: float | None = None) -> None:
    """Fail fast, with one line naming the URI, when an HTTP tracking server does not answer.

    Probes ``<uri>/health`` once with `timeout` seconds (default: 5, or less under a shorter
    :func:`request_timeout`), with the credentials MLflow would send
    (the URI's userinfo, else the environment's); any HTTP answer below 500 counts as
    reachable (a proxy or auth layer may answer 401/404). Other URIs (local stores,
    ``databricks``) are not probed.
    """
    if not is_http(uri):
        return
    if timeout is None:
        timeout = min(PROBE_TIMEOUT, current_timeout())
    base, user, password = split_credentials(uri)
    shown = redact(base)
    request = urllib.request.Request(
        base.rstrip("/") + "/health", headers=_auth_header(user, password)
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            status = int(resp.status)
    except urllib.error.HTTPError as exc:
        status = exc.code
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = redact(str(getattr(exc, "reason", exc)))
        raise TrackingError(f"MLflow tracking server {shown} is unreachable: {reason}") from None
    if status >= 500:
        raise TrackingError(
            f"MLflow tracking server {shown} is not healthy: HTTP {status} on /health"
        )


@contextlib.contextmanager
def env_defaults(values: Mapping[str, str], *, override: bool = False) -> Iterator[None]:
    """Set environment variables for the duration (only unset ones unless `override`)."""
    saved = {k: os.environ.get(k) for k in values}
    for k, v in values.items():
        if override or saved[k] is None:
            os.environ[k] = v
    try:
        yield
    finally:
        for k, old in saved.items():
            if old is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = old


@contextlib.contextmanager
def using_tracking_uri(uri: str) -> Iterator[None]:
    """Make `uri` MLflow's process-wide tracking URI for the duration, then restore the caller's
    setting (MLflow's prompt linking and ``mlflow.models.evaluate`` read the global URI)."""
    import mlflow
    from mlflow.tracking._tracking_service import utils as tracking_utils

    old_module = tracking_utils._tracking_uri
    old_env = os.environ.get("MLFLOW_TRACKING_URI")
    if mlflow.get_tracking_uri() == uri:
        yield
        return
    mlflow.set_tracking_uri(uri)
    try:
        yield
    finally:
        mlflow.set_tracking_uri(old_module)  # type: ignore[arg-type]  # None unsets
        if old_env is not None:
            os.environ["MLFLOW_TRACKING_URI"] = old_env


_ERRNO = re.compile(r"\[Errno -?\d+\] [^'\")\]]+")


def one_line(exc: BaseException, limit: int = 300) -> str:
    """An exception as one short line. MLflow's HTTP errors span many lines and repeat the
    URL; a lost connection is summarised as such.

    >>> one_line(OSError("Max retries exceeded ... [Errno 111] Connection refused'))"))
    'server unreachable ([Errno 111] Connection refused)'
    """
    text = redact(" ".join(str(exc).split()) or type(exc).__name__)
    if "Read timed out" in text or "timeout exception" in text:
        return "the server did not answer in time"
    if "Max retries exceeded" in text or "Failed to establish a new connection" in text:
        errno = _ERRNO.search(text)
        return f"server unreachable ({errno.group(0)})" if errno else "server unreachable"
    if "error code 401 " in text or "401 Unauthorized" in text:
        return (
            "the server refused the credentials (HTTP 401: give them in the URI as "
            "http://USER:PASSWORD@HOST or in MLFLOW_TRACKING_USERNAME/_PASSWORD)"
        )
    if "error code 403 " in text:
        return "the server denied permission for this operation (HTTP 403)"
    return truncate(text, limit)


@contextlib.contextmanager
def tracking_errors(uri: str) -> Iterator[None]:
    """Turn MLflow, HTTP and file-system errors into one-line TrackingErrors naming `uri`."""
    try:
        yield
    except ExtractMlflowError:
        raise
    except Exception as exc:
        if not _is_tracking_failure(exc):
            raise
        raise TrackingError(f"MLflow tracking at {redact(uri)}: {one_line(exc)}") from exc


def _is_tracking_failure(exc: Exception) -> bool:
    from mlflow.exceptions import MlflowException
    from requests import RequestException

    return isinstance(exc, MlflowException | RequestException | OSError)


# -- pure helpers: params, tags, batches -------------------------------------------------------
def parse_key_values(items: Iterable[str], option: str = "--param") -> dict[str, str]:
    """``KEY=VALUE`` strings as a dict; an InputError naming `option` when one is malformed."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError(f"{option} {item!r}: expected KEY=VALUE")
        out[key] = value
    return out


def check_user_keys(
    params: Mapping[str, Any] | None = None, tags: Mapping[str, Any] | None = None
) -> None:
    """An InputError naming the option when a user param or tag key is one MLflow would refuse
    (checked before any run is opened, so a typo never leaves a FAILED run behind)."""
    from mlflow.exceptions import MlflowException
    from mlflow.utils.validation import _validate_param_name, _validate_tag_name

    checks = (("--param", params, _validate_param_name), ("--tag", tags, _validate_tag_name))
    for option, keys, check in checks:
        for key in keys or {}:
            reserved = _reserved_key(option, str(key))
            if reserved:
                raise InputError(f"{option} {key!r}: {reserved}")
            if len(str(key)) > MAX_KEY_LENGTH:
                raise InputError(f"{option} {key!r}: keys are at most {MAX_KEY_LENGTH} characters")
            try:
                check(str(key))  # type: ignore[no-untyped-call]
            except MlflowException as exc:
                raise InputError(f"{option} {key!r}: {one_line(exc)}") from None


def _reserved_key(option: str, key: str) -> str | None:
    """Why a user param or tag `key` may not be given (it would forge one of ours), or None."""
    if option == "--tag" and key.strip().lower().startswith(RESERVED_TAG_PREFIXES):
        return (
            "tags starting with 'mlflow.' or 'extract_mlflow.' are set by extract-mlflow and "
            "MLflow, not by users"
        )
    if option == "--param" and key.strip() in RESERVED_PARAMS:
        return f"'{key.strip()}' is a param every evaluation run sets itself"
    return None


def fit(value: str, limit: int) -> str:
    """`value` cut to MLflow's length `limit` (with a marker), logging when it had to be cut."""
    if len(value) <= limit:
        return value
    log.warning("value of %d characters cut to MLflow's limit of %d", len(value), limit)
    return truncate(value, limit)


def report_params(report: Report, extra: Mapping[str, Any] | None = None) -> dict[str, str]:
    """The params of an evaluation run (config digest, id key, scorer version, input digests)
    plus the user's (ours win on a clash), all within MLflow's limits."""
    params = {str(k): str(v) for k, v in (extra or {}).items()}
    params.update(config_digest=report.config.digest(), id_key=report.config.id_key)
    params["scorer_version"] = report.scorer_version
    if report.gold_digest:
        params["gold_digest"] = report.gold_digest
    if report.pred_digest:
        params["pred_digest"] = report.pred_digest
    return {k: fit(redact(v), MAX_PARAM_LENGTH) for k, v in params.items()}


def headline(report: Report) -> str:
    """One line for people: F1, precision, recall and the number of documents."""
    from ..core.text import fmt

    m = report.micro
    return (
        f"F1 {fmt(m.f1)} (precision {fmt(m.precision)}, recall {fmt(m.recall)}) "
        f"on {len(report.documents)} documents"
    )


def report_tags(
    report: Report, extra: Mapping[str, Any] | None = None, *, note: bool = True
) -> dict[str, str]:
    """The user's tags, then the signature tag, the evaluation run type and a short run
    description (ours win: a user tag never replaces them)."""
    tags = {str(k): str(v) for k, v in (extra or {}).items()}
    tags.update({SIGNATURE_TAG: report.signature(), RUN_TYPE_TAG: RUN_TYPE_EVALUATION})
    if note:
        tags[NOTE_TAG] = f"extract_mlflow evaluation: {headline(report)}.\n\n`{report.signature()}`"
    return {k: fit(redact(v), MAX_TAG_LENGTH) for k, v in tags.items()}


@dataclass
class Batch:
    """One ``log_batch`` call's worth of metrics, params and tags, within MLflow's limits."""

    metrics: list[Any] = field(default_factory=list)
    params: list[Any] = field(default_factory=list)
    tags: list[Any] = field(default_factory=list)
    size: int = 0

    def __len__(self) -> int:
        return len(self.metrics) + len(self.params) + len(self.tags)

    def accepts(self, kind: str, nbytes: int) -> bool:
        if len(self) >= MAX_ENTITIES_PER_CALL or self.size + nbytes > MAX_REQUEST_BYTES:
            return False
        if kind == "metrics":
            return len(self.metrics) < MAX_METRICS_PER_CALL
        return len(getattr(self, kind)) < MAX_PARAMS_TAGS_PER_CALL


def _entity_bytes(entity: Any) -> int:
    return len(str(entity.key)) + len(str(entity.value)) + 64


def plan_batches(
    metrics: Sequence[Any] = (), params: Sequence[Any] = (), tags: Sequence[Any] = ()
) -> list[Batch]:
    """Pack entities (anything with ``key`` and ``value``) into as few batches as MLflow's
    per-call limits allow: 1000 entities, 1000 metrics, 100 params, 100 tags, < 1 MB.

    >>> from types import SimpleNamespace as E
    >>> [len(b) for b in plan_batches([E(key=f"m{i}", value=1.0) for i in range(1500)])]
    [1000, 500]
    """
    batches = [Batch()]
    for kind, items in (("params", params), ("tags", tags), ("metrics", metrics)):
        for entity in items:
            nbytes = _entity_bytes(entity)
            target = next((b for b in batches if b.accepts(kind, nbytes)), None)
            if target is None:
                target = Batch()
                batches.append(target)
            getattr(target, kind).append(entity)
            target.size += nbytes
    return [b for b in batches if len(b)]


# -- artifacts (written to a temporary folder before the run opens) ----------------------------
def prompt_file_names(prompts: Sequence[str | Path]) -> list[tuple[Path, str]]:
    """(source, artifact name) for each prompt file; clashing names get ``-2``, ``-3``…"""
    out: list[tuple[Path, str]] = []
    used: set[str] = set()
    for p in prompts:
        path = Path(p)
        name, n = path.name, 1
        while name in used:
            n += 1
            name = f"{path.stem}-{n}{path.suffix}"
        used.add(name)
        out.append((path, name))
    return out


def write_eval_artifacts(report: Report, folder: Path, prompts: Sequence[str | Path] = ()) -> Path:
    """Write ``summary.md``, ``diagnostics.json``, ``documents.parquet``, ``config.toml`` and
    ``prompts/`` into `folder`/eval and return that directory. A missing prompt file is an
    InputError (raised before any run exists)."""
    out = folder / ARTIFACT_DIR
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.md").write_text(report.to_markdown(), encoding="utf-8")
    diagnostics = json.dumps(report.to_dict(), ensure_ascii=False, indent=2, default=str)
    (out / "diagnostics.json").write_text(diagnostics + "\n", encoding="utf-8")
    report.to_frame("counts").to_parquet(out / "documents.parquet", index=False)
    (out / "config.toml").write_text(report.config.to_toml(), encoding="utf-8")
    copy_prompts(prompts, out / "prompts")
    if report.structure is not None:  # a metric-vs-attribute curve per numeric slice attribute
        for n, attribute in enumerate(report.structure.numeric_attributes):
            name = "robustness.png" if n == 0 else f"robustness_{safe_name(attribute)}.png"
            report.structure.robustness_plot(out / name, attribute)
    redact_files(out)
    return out


def redact_files(folder: Path) -> None:
    """Apply :func:`redact` to the text artifacts under `folder` (only rewritten when a
    credential actually occurs in them)."""
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.suffix.lower() not in TEXT_ARTIFACTS:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        clean = redact(text)
        if clean != text:
            path.write_text(clean, encoding="utf-8")


def safe_name(text: str) -> str:
    """A file-name-safe version of `text`."""
    return re.sub(r"[^\w.-]+", "_", text).strip("_") or "attribute"


def copy_prompts(prompts: Sequence[str | Path], dest: Path) -> None:
    for src, name in prompt_file_names(prompts):
        if not src.is_file():
            raise InputError(f"{src}: prompt file not found")
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest / name)


def gold_dataset_input(report: Report) -> Any:
    """The gold set as an MLflow dataset input (name, digest, source, field schema, size)."""
    from mlflow.entities import Dataset, DatasetInput, InputTag
    from mlflow.utils.mlflow_tags import MLFLOW_DATASET_CONTEXT

    source = report.gold_source
    is_file = source not in ("", "<rows>")
    digest = report.gold_digest or hashlib.sha256(source.encode()).hexdigest()
    schema = [{"type": "string", "name": path, "required": False} for path in report.fields]
    profile = {"num_rows": len(report.documents), "num_fields": len(report.fields)}
    dataset = Dataset(
        name=Path(source).name if is_file else "gold",
        digest=digest[:MAX_DATASET_DIGEST],
        source_type="local" if is_file else "code",
        source=json.dumps({"uri": str(Path(source).resolve())} if is_file else {"tags": {}}),
        schema=json.dumps({"mlflow_colspec": schema}),
        profile=json.dumps(profile),
    )
    return DatasetInput(dataset=dataset, tags=[InputTag(MLFLOW_DATASET_CONTEXT, GOLD_CONTEXT)])


def validate_prompt_uris(uris: Iterable[str]) -> list[str]:
    """``prompts:/NAME/VERSION`` (or ``prompts:/NAME@ALIAS``) URIs; an InputError otherwise."""
    out = []
    for uri in uris:
        rest = uri[len("prompts:/") :] if uri.startswith("prompts:/") else ""
        if not rest.strip("/") or ("/" not in rest.strip("/") and "@" not in rest):
            raise InputError(f"--prompt-uri {uri!r}: expected prompts:/NAME/VERSION")
        out.append(uri)
    return out


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
        explicit = self._timeout is not None or _timeout.get() is not None
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
            from mlflow import MlflowClient

            with tracking_errors(self.uri):  # e.g. MLflow refuses a file store (a bare path)
                self._client = MlflowClient(tracking_uri=self.uri)
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
            self.client.log_inputs(target.run_id, [gold_dataset_input(report)])
        self.client.log_artifacts(target.run_id, str(eval_dir), ARTIFACT_DIR)
        self.client.log_table(target.run_id, report.to_frame("documents"), TABLE_FILE)
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
            if not _is_tracking_failure(exc):
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
