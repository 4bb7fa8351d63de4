"""The registry side of a promotion: the target (a registered model or a prompt), its aliases and
version tags, and the lease that serialises concurrent promotions of one alias (a queue of
tickets, one tag per promote, each with a number and an expiry; see
:mod:`extract_mlflow.tracking.promote`)."""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import random
import secrets
import socket
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ..errors import InputError, TrackingError
from .client import call_bound
from .refs import LOOKUP_CODES, SCHEMES, VERSION_PATTERN, lookup_errors, mlflow_message

if TYPE_CHECKING:
    from mlflow import MlflowClient

log = logging.getLogger(__name__)


TAG_PREFIX = "extract_mlflow.promotion."


LEASE_TAG = TAG_PREFIX + "lease"
"""The prefix of the registered-model (or prompt) tags that serialise concurrent promotions: a
promote taking or holding the lease has its ticket in the tag ``<LEASE_TAG>.<token>``."""


_TRANSIENT_CODES = frozenset(
    {"RESOURCE_ALREADY_EXISTS", "ABORTED", "INTERNAL_ERROR", "TEMPORARILY_UNAVAILABLE"}
)
"""What MLflow answers when a write lost to a concurrent one (a busy database): a lost attempt."""


HOLD_TRIPS = 8
"""Round trips of the server a ticket stays valid for beyond its margin: its own write, the looks
at the queue, the holder read before the move, and slack."""
MIN_HOLD = 5.0
"""Seconds a ticket stays valid for beyond its margin, however fast the server."""
WAIT_CALLS = 6
"""A promote stops waiting for the lease when no promote ahead of it has left the queue for this
many call bounds (``--timeout``)."""
LAPSES = 3
"""A promote gives up when its lease lapsed this many times before it could move the alias."""


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
    """Timing of the promotion lease (see :mod:`extract_mlflow.tracking.promote`), in seconds.

    `call_bound`: the longest one tracking call may take, its retries included (None: what the
    HTTP settings in force allow, :func:`~extract_mlflow.tracking.client.call_bound`, about
    ``--timeout``). `skew`: how far the hosts' clocks may disagree. The alias moves only while
    every host still sees the ticket unexpired for `margin` = `call_bound` more seconds; a
    ticket is written valid for `call_bound` + `skew` plus :data:`HOLD_TRIPS` round trips of
    the server as measured by this promote (at least :data:`MIN_HOLD`).
    `backoff`: first and largest pause between two looks at the queue (doubling, jittered).
    `wait`: how long a promote waits while no promote ahead of it leaves the queue (done, or
    expired) before giving up (None: :data:`WAIT_CALLS` × `call_bound`).
    """

    call_bound: float | None = None
    skew: float = 5.0
    wait: float | None = None
    backoff: tuple[float, float] = (0.05, 1.0)

    def __post_init__(self) -> None:
        first, most = self.backoff
        bound_ok = self.call_bound is None or self.call_bound > 0
        wait_ok = self.wait is None or self.wait >= 0
        if not (bound_ok and wait_ok and self.skew >= 0 and 0 < first <= most):
            raise InputError(
                "lease policy: need call_bound > 0, wait ≥ 0, skew ≥ 0 and "
                f"0 < backoff[0] ≤ backoff[1], not {self!r}"
            )

    @property
    def bound(self) -> float:
        """`call_bound`, else the bound of the HTTP settings in force."""
        return self.call_bound if self.call_bound is not None else call_bound()

    @property
    def patience(self) -> float:
        """`wait`, else :data:`WAIT_CALLS` call bounds."""
        return self.wait if self.wait is not None else WAIT_CALLS * self.bound

    @property
    def margin(self) -> float:
        """The validity (as every host sees it) a ticket must have left when the move starts."""
        return self.bound

    def ttl(self, round_trip: float) -> float:
        """How long a new ticket is valid, given the slowest round trip seen so far."""
        return self.margin + self.skew + max(MIN_HOLD, HOLD_TRIPS * round_trip)

    def renew_below(self, lease: Lease) -> float:
        """Renew a waiting ticket once less than this is left: half its hold beyond the margin."""
        return self.margin + (lease.ttl - self.skew - self.margin) / 2

    def pause(self, attempt: int) -> float:
        """The wait before look `attempt + 1`: doubling from backoff[0] up to backoff[1], times
        a random factor in [0.5, 1] so that waiting promotes spread out."""
        first, most = self.backoff
        return min(most, first * 2.0 ** min(attempt, 30)) * random.uniform(0.5, 1.0)


@dataclass(frozen=True)
class Ticket:
    """A promote's place in the queue for the lease, as its tag holds it; `number` is None while
    the promote is still choosing it."""

    token: str
    number: int | None
    expires: float  # wall clock, seconds since the epoch
    owner: str = "?"

    @property
    def key(self) -> str:
        return f"{LEASE_TAG}.{self.token}"

    def to_text(self) -> str:
        return json.dumps({"number": self.number, "expires": self.expires, "owner": self.owner})

    @classmethod
    def from_tag(cls, key: str, text: str | None) -> Ticket | None:
        """The ticket in a tag; None for other tags and unreadable values (a broken ticket
        cannot be honoured, so it is treated as absent)."""
        token = key.removeprefix(f"{LEASE_TAG}.")
        if token == key or not token or not text:
            return None
        try:
            data = json.loads(text)
            number = None if data["number"] is None else int(data["number"])
            return cls(token, number, float(data["expires"]), str(data.get("owner", "?")))
        except (ValueError, TypeError, KeyError):
            return None

    def ahead_of(self, number: int | None, token: str) -> bool:
        """Whether this ticket goes before ticket (`number`, `token`): it is still choosing its
        number, or its number (then its token) is lower."""
        if self.number is None or number is None:
            return True
        return (self.number, self.token) < (number, token)

    def describe(self) -> str:
        until = time.strftime("%H:%M:%S UTC", time.gmtime(self.expires))
        place = "choosing its number" if self.number is None else f"number {self.number}"
        return f"{self.owner} ({place}, valid until {until})"


@dataclass
class Lease:
    """This promote's own ticket: its token and number, how long it is valid, and when
    (monotonic clock) the write that set its current expiry began."""

    token: str
    ttl: float
    skew: float
    number: int | None = None
    started: float | None = None
    expired: tuple[str, ...] = ()  # tickets seen expired on entering: deleted on release

    def valid_until(self) -> float:
        """Until when (monotonic clock) every host, its clock within `skew`, sees the ticket
        unexpired; -inf before the first write."""
        return -math.inf if self.started is None else self.started + self.ttl - self.skew

    def remaining(self) -> float:
        """Seconds until :meth:`valid_until`."""
        return self.valid_until() - time.monotonic()


def _owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


# -- the registry ---------------------------------------------------------------------------------
class Registry:
    """Version lookups, tags, aliases and the promotion lease of one registered model or
    prompt."""

    def __init__(self, client: MlflowClient, target: Target):
        self.client = client
        self.target = target
        self.round_trip = 0.0  # the slowest call of this registry so far, in seconds

    @contextlib.contextmanager
    def _timed(self) -> Iterator[None]:
        """Count the block's duration in :attr:`round_trip`."""
        start = time.monotonic()
        try:
            yield
        finally:
            self.round_trip = max(self.round_trip, time.monotonic() - start)

    def holder(self, alias: str) -> str | None:
        """The version that holds `alias`, None when none does."""
        from mlflow.exceptions import MlflowException

        name = self.target.name
        if self.target.kind == "model":
            with self._timed(), lookup_errors(f"registered model {name!r}"):
                aliases = self.client.get_registered_model(name).aliases
            held = dict(aliases or {}).get(alias)
            return None if held is None else str(held)
        try:
            with self._timed():
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
        with self._timed():
            if self.target.kind == "prompt":
                self.client.set_prompt_alias(self.target.name, alias, int(version))
            else:
                self.client.set_registered_model_alias(self.target.name, alias, version)

    # -- the lease: ticket tags on the registered model (or on the prompt) ----------------------
    def tickets(self) -> dict[str, Ticket]:
        """Every ticket in the queue (expired ones included), by token, in one read."""
        name = self.target.name
        with self._timed(), lookup_errors(self.target.uri):
            if self.target.kind == "prompt":
                prompt = self.client.get_prompt(name)
                tags = {} if prompt is None else dict(prompt.tags or {})
            else:
                tags = dict(self.client.get_registered_model(name).tags or {})
        found = (Ticket.from_tag(key, value) for key, value in tags.items())
        return {t.token: t for t in found if t is not None}

    def _set_tag(self, key: str, value: str) -> None:
        if self.target.kind == "prompt":
            self.client.set_prompt_tag(self.target.name, key, value)
        else:
            self.client.set_registered_model_tag(self.target.name, key, value)

    def _delete_ticket(self, token: str) -> None:
        """Delete a ticket tag; best effort (a ticket left behind expires by itself)."""
        from mlflow.exceptions import MlflowException

        key = f"{LEASE_TAG}.{token}"
        with self._timed(), contextlib.suppress(MlflowException):
            if self.target.kind == "prompt":
                self.client.delete_prompt_tag(self.target.name, key)
            else:
                self.client.delete_registered_model_tag(self.target.name, key)

    def _write(self, lease: Lease, number: int | None) -> bool:
        """Write our ticket with `number` and a fresh expiry. False when the server refused the
        write as busy, or when the write ended after the ticket's previous validity (another
        promote may have seen it expired and passed it: it must not be used again)."""
        from mlflow.exceptions import MlflowException

        was_valid_until = lease.valid_until()
        start = time.monotonic()
        ticket = Ticket(lease.token, number, time.time() + lease.ttl, _owner())
        try:
            with self._timed():
                self._set_tag(ticket.key, ticket.to_text())
        except MlflowException as exc:
            if str(exc.error_code) not in _TRANSIENT_CODES:
                raise
            log.info("ticket write on %s refused: %s", self.target.uri, mlflow_message(exc))
            return False
        if lease.started is not None and time.monotonic() > was_valid_until:
            log.info("ticket on %s lapsed before its renewal landed", self.target.uri)
            return False
        lease.started, lease.number = start, number
        return True

    def _take_number(self, lease: Lease) -> bool:
        """Lamport's doorway: mark the ticket as choosing, read the queue, and take the number
        one above every unexpired ticket's. False when a write failed or the ticket lapsed."""
        if not self._write(lease, None):
            return False
        now = time.time()
        taken = [
            t.number
            for t in self.tickets().values()
            if t.token != lease.token and t.number is not None and t.expires > now
        ]
        return self._write(lease, max(taken, default=0) + 1)

    def acquire(self, policy: LeasePolicy) -> Lease:
        """Take the lease (see :mod:`extract_mlflow.tracking.promote`). A promote waits as long
        as the queue ahead of it moves: a TrackingError naming the first promote ahead when
        none of them has left the queue (done, or expired) for `policy.patience` seconds. A
        promote is never ahead of itself: its own ticket is left out of the queue it waits for."""
        attempt, lease = 0, None
        ahead: list[Ticket] = []
        moved = time.monotonic()  # when a ticket ahead last left the queue
        try:
            while True:
                if lease is None:
                    lease = Lease(secrets.token_hex(16), policy.ttl(self.round_trip), policy.skew)
                    if not self._take_number(lease):
                        self._delete_ticket(lease.token)
                        lease = None
                if lease is not None:
                    queue = self.tickets()
                    queue.pop(lease.token, None)
                    now = time.time()
                    live = [t for t in queue.values() if t.expires > now]
                    before = {t.token for t in ahead}
                    ahead = [t for t in live if t.ahead_of(lease.number, lease.token)]
                    if not ahead:
                        lease.expired = tuple(t.token for t in queue.values() if t.expires <= now)
                        return lease
                    if before - {t.token for t in ahead}:
                        moved = time.monotonic()
                    short = lease.remaining() < policy.renew_below(lease)
                    if short and not self._write(lease, lease.number):
                        self._delete_ticket(lease.token)  # lapsed: queue again, behind
                        lease = None
                if time.monotonic() - moved > policy.patience:
                    raise TrackingError(self._waited_too_long(policy, ahead))
                time.sleep(policy.pause(attempt))
                attempt += 1
        except BaseException:
            if lease is not None:
                with contextlib.suppress(Exception):
                    self._delete_ticket(lease.token)
            raise

    def _waited_too_long(self, policy: LeasePolicy, ahead: list[Ticket]) -> str:
        head = (
            f"could not take the promotion lease on {self.target.uri}: no promote ahead left "
            f"the queue for {policy.patience:g} s"
        )
        if not ahead:
            return f"{head}, and the server kept refusing this promote's ticket ({LEASE_TAG}.*)"
        first = min(ahead, key=lambda t: (t.number is None, t.number or 0, t.token))
        return (
            f"{head}; {len(ahead)} ahead, first {first.describe()}: another promote is "
            f"running, or one crashed and its ticket expires by itself (tag {first.key})"
        )

    def keep(self, lease: Lease, policy: LeasePolicy) -> bool:
        """Make sure the lease stays ours for `policy.margin` more seconds (the longest call and
        the clocks' skew), renewing the ticket when less is left; False when it lapsed (another
        promote may have passed it: take the lease again)."""
        if lease.remaining() >= policy.margin:
            return True
        return self._write(lease, lease.number) and lease.remaining() >= policy.margin

    def release(self, lease: Lease) -> None:
        """Delete our ticket, then the tickets that were expired when we entered (crashed
        promotes'; an owner still alive has given its up already)."""
        for token in (lease.token, *lease.expired):
            self._delete_ticket(token)

    @contextlib.contextmanager
    def leased(self, policy: LeasePolicy) -> Iterator[Lease]:
        """Hold the lease for the block; released in ``finally`` (best effort)."""
        lease = self.acquire(policy)
        try:
            yield lease
        finally:
            with contextlib.suppress(Exception):  # an expired ticket frees the lease anyway
                self.release(lease)


VERDICT_TAG = TAG_PREFIX + "verdict"


SUMMARY_TAG = TAG_PREFIX + "summary"


CRITERIA_TAG = TAG_PREFIX + "criteria"


BASELINE_TAG = TAG_PREFIX + "baseline"


ALIAS_TAG = TAG_PREFIX + "alias"


COMPARISON_TAG = TAG_PREFIX + "comparison"
"""The version tag naming where its verdict's comparison is kept (``runs:/<run>/<folder>``)."""
