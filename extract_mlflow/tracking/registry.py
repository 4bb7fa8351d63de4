"""The registry side of a promotion: the target (a registered model or a prompt), its aliases and
version tags, and the lease that serialises concurrent promotions of one alias (a tag written
with a token and an expiry, re-read before the alias moves)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import random
import secrets
import socket
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ..errors import InputError, TrackingError
from .refs import LOOKUP_CODES, SCHEMES, VERSION_PATTERN, lookup_errors, mlflow_message

if TYPE_CHECKING:
    from mlflow import MlflowClient

log = logging.getLogger(__name__)


TAG_PREFIX = "extract_mlflow.promotion."


LEASE_TAG = TAG_PREFIX + "lease"
"""The registered-model (or prompt) tag that serialises concurrent promotions."""


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
    for scheme, k in SCHEMES:
        if text.startswith(scheme):
            text, kind = text[len(scheme) :], k
    if not text or any(c in text for c in "/@"):
        raise InputError(
            f"{name_or_uri!r}: expected a registered model NAME (or models:/NAME) or "
            "prompts:/NAME; give the version separately"
        )
    return Target(text, kind)


def check_version(version: str | int) -> str:
    text = str(version).strip()
    if not VERSION_PATTERN.fullmatch(text):
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
            if str(exc.error_code) in LOOKUP_CODES:  # the prompt exists: the alias does not
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


VERDICT_TAG = TAG_PREFIX + "verdict"


SUMMARY_TAG = TAG_PREFIX + "summary"


CRITERIA_TAG = TAG_PREFIX + "criteria"


BASELINE_TAG = TAG_PREFIX + "baseline"


ALIAS_TAG = TAG_PREFIX + "alias"


COMPARISON_TAG = TAG_PREFIX + "comparison"
"""The version tag naming where its verdict's comparison is kept (``runs:/<run>/<folder>``)."""
