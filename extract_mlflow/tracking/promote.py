"""Promoting a registered model or prompt version onto an alias, gated against its holder.

:func:`promote` compares a registered model or prompt version (its evaluation run, found as a
ref of :mod:`extract_mlflow.tracking.refs`) with the current holder of an alias, tags the
version with the verdict, a summary and the gate criteria either way, and moves the alias only
on a pass.

Concurrent promotions
---------------------
Several ``promote`` calls on one alias at once must end as if they had run one after another:
each one that moves the alias moves it *from the version it was gated against*. MLflow has no
compare-and-set on an alias, so the moves are serialised by a **lease** on the registered model
(or prompt), taken by Lamport's bakery algorithm over tags: every promote has its own **ticket**,
the tag ``extract_mlflow.promotion.lease.<token>`` holding a number (none while it is being
chosen), the owner and a wall-clock expiry. Each ticket is written by its owner only, so no two
promotes ever write one tag. A promote

1. gates its candidate against the current holder (outside the lease: a candidate that fails
   there is tagged ``failed`` and stops, as if it had run before whatever moves the alias next);
2. takes the lease: it writes its ticket with no number ("choosing"), reads the queue (all
   tickets, one read), and writes its number, one above every unexpired ticket's. It then looks
   at the queue until no unexpired ticket is ahead of its own (one still choosing, or a lower
   number, ties broken by token), pausing at most 1 s (jittered) between looks. It waits as
   long as the queue ahead moves, and gives up when no promote ahead has left it (done, or
   expired) for ``wait`` seconds: exit 2, naming the first promote ahead (never itself: its
   own ticket is not in the queue it waits for);
3. inside the lease: re-reads the holder; if it changed, fetches the new holder and re-gates
   against it; makes sure its ticket has ``margin`` seconds left (renewing it when less is
   left); moves the alias; reads the alias back; releases the lease (deletes its ticket);
   then tags the version.

A promote whose candidate no longer passes against the actual holder, or that finds the alias
moved by someone outside the protocol, is **superseded**: exit 1, tagged
``verdict=superseded``, never ``passed``.

Why it is sound (Lamport's bakery): say A is inside. A B that wrote "choosing" after A's
number landed read A's number, took a higher one and waits for A. A B that wrote "choosing"
earlier was either still choosing when A last looked (then A would not have entered) or already
numbered, higher than A (else A would wait for it), so B waits for A. No timing enters the
argument but the expiry, which frees the lease of a crashed promote. A ticket is valid for
``ttl``; its owner renews it while it waits, and inside before the alias move when it runs
short, and gives up a ticket whose renewal landed after its old validity ended (someone may have
passed it meanwhile): it queues again, behind. The alias moves only while the ticket has
``margin`` (the longest one call may take) left on the owner's monotonic clock, counted from
before its last write and less the hosts' clock skew (assumed below 5 s). Readers see the alias
move only inside a lease, after the re-gate, so the outcome equals the serial order in which
the leases were held.

The bounds follow the server and ``--timeout``, so a slow server costs time, not correctness:
``margin`` is the per-call bound (:func:`~extract_mlflow.tracking.client.call_bound`, about
``--timeout``); ``ttl`` is the margin, plus the skew, plus eight of the slowest round trips this
promote has seen (at least 5 s); ``wait`` is six per-call bounds (3 minutes at the default
30 s). "Every exit within ``--timeout`` per call": a promote only ever waits on a tracking call
(each within ``--timeout``, its retries included) or between two looks at the queue (at most
1 s, after a call), so it ends within its number of calls × (``--timeout`` + 1 s) plus its
local work; the number of calls is finite because the queue is first come, first served and a
promote gives up after six ``--timeout`` without progress ahead, or after its lease lapsed 3
times.

Every network call goes through :class:`~extract_mlflow.tracking.runs.Tracker`: an unreachable
server fails in one probe, MLflow errors become one line. mlflow is imported inside functions.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from ..comparison import (
    DEFAULT_MIN_DOCUMENTS,
    Comparison,
    check_options,
)
from ..core.text import fmt, truncate
from ..errors import GateError, InputError, TrackingError
from ..evaluation.stats import DEFAULT_RESAMPLES
from ..gates import Gate, GatesLike, coerce_gates
from .comparisons import comparison_folder, log_comparison, page_flips
from .refs import (
    FetchedRun,
    compare_options,
    fetch_run,
    judge,
    with_notes,
)
from .registry import (
    ALIAS_TAG,
    BASELINE_TAG,
    COMPARISON_TAG,
    CRITERIA_TAG,
    LAPSES,
    SUMMARY_TAG,
    VERDICT_TAG,
    Lease,
    LeasePolicy,
    Registry,
    Target,
    check_alias,
    check_version,
    parse_target,
)
from .runs import Tracker

if TYPE_CHECKING:
    from ..flips import Flip

log = logging.getLogger(__name__)

SUMMARY_LIMIT = 500
CRITERIA_LIMIT = 5000
DEFAULT_ALIAS = "champion"


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
        from ..core.language import tr

        prev, alias, uri = self.previous_version, self.alias, self.uri
        if self.outcome == "kept":
            return tr("promote.kept", uri=uri, alias=alias)
        if self.outcome == "first":
            return tr("promote.first", uri=uri, alias=alias)
        if self.outcome == "promoted":
            was = tr("promote.version", version=prev) if prev else tr("promote.unset")
            return tr("promote.promoted", uri=uri, alias=alias, was=was)
        stays = tr("promote.stays", version=prev) if prev else tr("promote.stays_unset")
        if self.outcome == "superseded":
            against = self.gated_against
            was = tr("promote.version", version=against) if against else tr("promote.unset")
            return tr("promote.superseded", uri=uri, alias=alias, was=was, stays=stays)
        return tr("promote.failed", uri=uri, alias=alias, stays=stays)

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
    """One line (≤ 500 characters) for the registry UI, in English; `no_baseline` says why
    there was no baseline run, when there was none. It counts the checks that were decided
    and those skipped, never the gates.

    e.g. ``f1 0.991 vs 0.865 (+0.126); 3 checked``
    """
    from ..core.language import language
    from ..views.comparison import checks_text

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
    with language("en"):
        counted = checks_text(comparison.tally)
    parts.append(counted if comparison.checked else f"no gate was evaluated ({counted})")
    reasons = "; ".join(r for g in comparison.failed_gates for r in g.reasons)
    if reasons:
        parts.append(f"gate failed: {reasons}")
    text = "; ".join(parts)
    return truncate(text, SUMMARY_LIMIT)


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
    flips: dict[str | None, tuple[Flip, ...] | None] = field(default_factory=dict)
    baseline_runs: dict[str | None, str] = field(default_factory=dict)
    tracker: Tracker | None = None

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
            self.baseline_runs[holder] = base.resolved.run_id
        else:
            notes.append(f"no version of {uri} holds the alias: absolute thresholds only")
        result = with_notes(judge(base, cand, self.gates, self.options), notes)
        base_frame = base.scored.documents if base is not None else None
        self.flips[holder] = page_flips(result, base_frame, cand.scored.documents)
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
        """Keep the comparison on the candidate's run and tag the version (unless `write` is
        False: then nothing is written); describe the outcome."""
        tags = promotion_tags(comparison, self.gates, self.alias, previous, verdict)
        target = self.registry.target

        def promotion(shown: Comparison, written: Mapping[str, str]) -> Promotion:
            return Promotion(
                shown, _EXIT_CODES[outcome] == 0, target.name, self.version, self.alias,
                target.kind, previous, written, outcome, gated_against,
            )  # fmt: skip

        if not write:
            return promotion(comparison, {})
        comparison, tags = self._keep(comparison, gated_against, tags, promotion)
        self.registry.tag(self.version, tags)
        return promotion(comparison, tags)

    def _keep(
        self,
        comparison: Comparison,
        holder: str | None,
        tags: dict[str, str],
        promotion: Callable[[Comparison, Mapping[str, str]], Promotion],
    ) -> tuple[Comparison, dict[str, str]]:
        """Store the comparison (page and the promotion as JSON) in a folder of its own on the
        candidate's run; the tags then point to it (``extract_mlflow.promotion.comparison``;
        ``none`` when the store refused it, so no earlier verdict's folder is named)."""
        if self.candidate is None:
            return comparison, {**tags, COMPARISON_TAG: "none"}
        run_id = self.candidate.resolved.run_id
        here = comparison_folder(self.baseline_runs.get(holder))
        pointed = {**tags, COMPARISON_TAG: f"runs:/{run_id}/{here.path}"}
        kept = log_comparison(
            comparison, run_id, here, self.flips.get(holder), tracker=self.tracker,
            record=lambda shown: promotion(shown, pointed).to_json(),
        )  # fmt: skip
        return kept, (pointed if kept.logged_as is not None else {**tags, COMPARISON_TAG: "none"})

    def run(self, policy: LeasePolicy) -> Promotion:
        registry, alias = self.registry, self.alias
        gated_against = registry.holder(alias)
        comparison = self.judge(gated_against)
        self.require_checked(comparison, gated_against)
        if not comparison.passed and not self.is_first(comparison, gated_against):
            return self.result(comparison, "failed", gated_against, gated_against)
        if gated_against == self.version:
            return self.result(comparison, "kept", gated_against, gated_against)
        for _ in range(LAPSES):
            with registry.leased(policy) as lease:
                done = self._inside(lease, policy, gated_against)
            if done is not None:
                return done()  # tagged after the release: others need not wait for it
        raise TrackingError(
            f"{registry.target.uri}: the promotion lease lapsed {LAPSES} times before the alias "
            "could be moved (a call outlasted it); is the server overloaded?"
        )

    def _inside(
        self, lease: Lease, policy: LeasePolicy, first_holder: str | None
    ) -> Callable[[], Promotion] | None:
        """Inside the lease: re-read the holder, re-gate when it changed, move, read back; the
        result to write once the lease is released. None when the lease lapsed before the move
        (the caller takes it again)."""
        registry, alias = self.registry, self.alias
        holder = registry.holder(alias)
        if holder == self.version:  # another promote of this very version moved it
            return partial(self.result, self.judge(first_holder), "superseded", holder,
                           first_holder, write=False)  # fmt: skip
        comparison = self.judge(holder)
        first = self.is_first(comparison, holder)
        if not (comparison.passed or first):
            return partial(self.result, comparison, "superseded", holder, holder, "superseded")
        if not registry.keep(lease, policy):
            return None
        registry.set_alias(alias, self.version)
        now = registry.holder(alias)
        if now != self.version:  # moved by something outside the lease protocol
            return partial(self.result, comparison, "superseded", now, holder, "superseded")
        if first:
            return partial(self.result, comparison, "first", holder, holder, "first")
        return partial(self.result, comparison, "promoted", holder, holder)


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
    documents) or TrackingError (server unreachable; lease not obtained within its wait);
    nothing is tagged then. `lease`: the lease's timing (default: following ``--timeout`` and
    the server's round trip, :class:`~extract_mlflow.tracking.registry.LeasePolicy`).
    """
    target, number = parse_target(name_or_prompt_uri), check_version(version)
    gate_list = coerce_gates(gates)
    if not gate_list:
        raise InputError("promote needs at least one gate (--gates, --min, --max or --max-drop)")
    check_options(seed, resamples, min_documents)
    check_alias(alias)
    options = compare_options(seed, resamples, allow_incomparable, min_documents)
    policy = lease or LeasePolicy()
    with Tracker(tracking_uri) as tracker, tracker.errors():
        registry = Registry(tracker.client, target)
        promoter = _Promoter(
            registry, number, alias, gate_list, options, allow_unfinished, allow_first,
            tracker=tracker,
        )  # fmt: skip
        return promoter.run(policy)
