"""The tracking client: URIs, credentials, timeouts, reachability, and MLflow errors as one line.

The tracking package is the only one that imports mlflow, and always inside functions:
``import mlflow`` costs seconds and ``extract-mlflow --help`` must stay fast.

Failure is explicit: a malformed URI is refused before anything is contacted
(:func:`check_tracking_uri`), an unreachable HTTP server is detected by one short ``/health``
probe before any MLflow call (:func:`check_reachable`), every call is bounded by a timeout, its
retries included (:func:`request_timeout`, default 30 s), and a run this package started ends
FAILED (KILLED on an interrupt) when anything goes wrong after it was created; when even that is
impossible the message says the run is left unfinished, and the next run in that experiment
reports it. Every such failure is a :class:`~extract_mlflow.errors.TrackingError` with one line.

Credentials in the URI (``http://user:password@host``) are handed to MLflow as its basic-auth
environment variables for the duration and stripped from the URI; :func:`redact` keeps them,
and ``MLFLOW_TRACKING_PASSWORD``/``_TOKEN``, out of every message, param, tag and artifact.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from base64 import b64encode
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from ..core.text import truncate
from ..errors import ExtractMlflowError, InputError, TrackingError

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)


PROBE_TIMEOUT = 5.0
DEFAULT_TIMEOUT = 30.0
"""Seconds one tracking call may take in all (its retries included) unless told otherwise."""
NO_RETRY_TIMEOUT = 5.0
CREDENTIAL_ENV = ("MLFLOW_TRACKING_PASSWORD", "MLFLOW_TRACKING_TOKEN")
"""Environment variables whose values are secrets: never printed, never logged."""
MIN_SECRET_LENGTH = 4
"""Shorter secret values are not searched for in free text (they would mangle every message);
userinfo in URLs is always redacted."""

requested_timeout: ContextVar[float | None] = ContextVar("extract_mlflow_timeout", default=None)
_secrets: set[str] = set()
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#@\s]+@")


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
    token = requested_timeout.set(seconds)
    try:
        yield
    finally:
        requested_timeout.reset(token)


def current_timeout() -> float:
    """The bound set by :func:`request_timeout`, else :data:`DEFAULT_TIMEOUT`."""
    chosen = requested_timeout.get()
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


def call_bound() -> float:
    """The longest one MLflow HTTP call may take under the ``MLFLOW_HTTP_REQUEST_*`` settings in
    force (those :func:`http_env` set for ``--timeout``, or the user's own, else MLflow's
    defaults): every attempt's timeout plus urllib3's back-off between them (none before the
    first retry, then factor × 2ⁿ plus up to the jitter, each wait at most 120 s).

    >>> with env_defaults(http_env(30.0), override=True):
    ...     call_bound()
    29.0
    """
    from mlflow.environment_variables import (
        MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR,
        MLFLOW_HTTP_REQUEST_BACKOFF_JITTER,
        MLFLOW_HTTP_REQUEST_MAX_RETRIES,
        MLFLOW_HTTP_REQUEST_TIMEOUT,
    )

    retries, factor, jitter, per_try = (
        float(var.get())  # type: ignore[no-untyped-call]
        for var in (
            MLFLOW_HTTP_REQUEST_MAX_RETRIES,
            MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR,
            MLFLOW_HTTP_REQUEST_BACKOFF_JITTER,
            MLFLOW_HTTP_REQUEST_TIMEOUT,
        )
    )
    waits = sum(min(120.0, factor * 2**n + jitter) for n in range(1, int(retries)))
    return float((retries + 1) * per_try + waits)


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
    import urllib.error  # here: only the probe needs urllib.request (it loads http.client, ssl)
    import urllib.request

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
        if not is_tracking_failure(exc):
            raise
        raise TrackingError(f"MLflow tracking at {redact(uri)}: {one_line(exc)}") from exc


def is_tracking_failure(exc: Exception) -> bool:
    from mlflow.exceptions import MlflowException
    from requests import RequestException

    return isinstance(exc, MlflowException | RequestException | OSError)
