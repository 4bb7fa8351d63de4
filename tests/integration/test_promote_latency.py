"""Promotion under latency: concurrent `extract-mlflow promote` processes race for one alias
through a proxy (tests/support/servers.py) that answers every request of the session's real
`mlflow server` 0 s late (4 racers) or 1 s late (2 racers). Each round starts with the alias on
a version worse than every racer, so every racer passes its first gate and they all queue for
the lease.

In every round the best version ends up holding the alias, the exit-0 promotes (tagged
``passed``) moved it in one chain from the first holder to the best version, the others are
tagged ``superseded`` or ``failed``, no promote exits 2 or names its own lease, no ticket is
left, and every promote keeps its ``--timeout`` bound (README "Concurrent promotions"): each
of its requests took at most ``--timeout``, and its wall time is at most its number of requests
× (``--timeout`` + 1 s) plus its local work (start-up, scoring, bootstrap), allowed a minute.
The hostile run (every request 3 s late) is a benchmark: ``benchmarks/bench_promote.py --delay 3
--racers 2`` prints its figures. Without
a server: how tickets are read from tags and ordered, and how the lease policy follows its
bounds."""

from __future__ import annotations

import os
import random
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from support.mlflow_server import MlflowServer
from support.servers import Call, delaying_proxy, uri_of

from extract_mlflow.errors import InputError
from extract_mlflow.tracking.registry import LEASE_TAG, LeasePolicy, Ticket

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_promote

CALL_TIMEOUT = 30.0
"""The racers' ``--timeout``."""
LOCAL_WORK = 60.0
"""Seconds a promote may spend outside its requests and its pauses: interpreter start, imports,
scoring and the bootstrap, on a loaded machine."""
PAUSE = 1.0
"""The longest pause between two looks at the lease queue."""


@pytest.fixture(scope="module")
def graded(mlflow_server: MlflowServer) -> list[bench_promote.GradedRun]:
    """Five evaluation runs of strictly decreasing F1 (0 … 4 corrupted documents)."""
    experiment = f"promote-latency-{uuid.uuid4().hex[:6]}"
    runs: list[bench_promote.GradedRun] = bench_promote.log_graded_runs(
        mlflow_server.uri, [0, 1, 2, 3, 4], experiment
    )
    return runs


def within_bound(seconds: float, calls: list[Call], timeout: float) -> bool:
    """The documented bound of one promote: every request within `timeout`, the whole within
    requests × (`timeout` + the longest pause) plus its local work."""
    each = all(c.done - c.arrived <= timeout for c in calls)
    return each and seconds <= len(calls) * (timeout + PAUSE) + LOCAL_WORK


@pytest.mark.server
@pytest.mark.parametrize(
    ("delay", "racers"),
    [(0.0, 4), (1.0, 2)],  # 3 racers and more, or later: benchmarks/bench_promote.py
)
def test_promotes_behind_a_slow_server_end_on_the_best_version(
    mlflow_server: MlflowServer, graded: list[bench_promote.GradedRun], delay: float, racers: int
) -> None:
    runners, worst = graded[:racers], graded[-1]
    with delaying_proxy(mlflow_server.uri, delay) as proxy:
        done = bench_promote.race_round(
            mlflow_server.uri, runners, 0, worst, random.Random(racers), timeout=1800,
            via=uri_of(proxy), call_timeout=CALL_TIMEOUT,
        )  # fmt: skip
    print(done.line())
    calls = {o.user: [c for c in proxy.calls if c.user == o.user] for o in done.outcomes}
    for o in sorted(done.outcomes, key=lambda o: o.corrupted):
        print(o.line(len(calls[o.user])))
    assert not done.problems(), done.line()  # best holder, one chain, tags match exits, no 2
    assert done.final == done.best and done.final != done.initial
    verdicts = {o.version: o.verdict for o in done.outcomes}
    assert verdicts[done.best] == "passed"
    assert set(verdicts.values()) <= {"passed", "superseded", "failed"}
    for o in done.outcomes:
        assert calls[o.user], f"racer {o.user} sent nothing through the proxy"
        assert all(c.done - c.arrived >= delay for c in calls[o.user])  # the proxy delayed it
        assert f"{socket.gethostname()}:{o.pid}" not in o.stderr  # never its own lease
        assert within_bound(o.seconds, calls[o.user], CALL_TIMEOUT), o.line(len(calls[o.user]))
    tags = bench_promote._client(mlflow_server.uri).get_registered_model(done.model).tags
    assert not [k for k in tags if k.startswith(LEASE_TAG)]


@pytest.mark.server
def test_a_promote_behind_a_stuck_lease_exits_within_its_timeout_bound(
    mlflow_server: MlflowServer, graded: list[bench_promote.GradedRun]
) -> None:
    """Another promote's ticket that never leaves the queue: `promote --timeout 3` waits six
    times its timeout without progress, then exits 2 naming that promote (never itself), within
    its bound, and takes its own ticket back."""
    client = bench_promote._client(mlflow_server.uri)
    model = f"stuck-{uuid.uuid4().hex[:8]}"
    client.create_registered_model(model)
    holder = bench_promote._add_version(client, model, graded[-1].run_id)
    candidate = bench_promote._add_version(client, model, graded[0].run_id)
    client.set_registered_model_alias(model, "champion", holder)
    stuck = Ticket("stuck0123", 1, time.time() + 600, "other-host:1")
    client.set_registered_model_tag(model, stuck.key, stuck.to_text())
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    with delaying_proxy(mlflow_server.uri, 0.0) as proxy:
        uri = f"http://solo:x@{uri_of(proxy).removeprefix('http://')}"
        cmd = bench_promote._promote_cmd(uri, model, candidate, False, call_timeout=3)
        started = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        seconds = time.perf_counter() - started
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"error: could not take the promotion lease on models:/{model}: ")
    assert "no promote ahead left the queue for 18 s; 1 ahead, first other-host:1 (number 1" in line
    assert f"{socket.gethostname()}:" not in line  # the only owner named is the stuck one
    assert within_bound(seconds, [c for c in proxy.calls if c.user == "solo"], 3.0), seconds
    tags = client.get_registered_model(model).tags
    assert [k for k in tags if k.startswith(LEASE_TAG)] == [stuck.key]
    assert dict(client.get_registered_model(model).aliases) == {"champion": holder}


# -- pure: tickets and the policy -------------------------------------------------------------
def test_tickets_are_read_from_their_own_tags_only() -> None:
    ticket = Ticket("ab12", 3, 1e9, "h:1")
    assert Ticket.from_tag(ticket.key, ticket.to_text()) == ticket
    assert Ticket.from_tag(f"{LEASE_TAG}.cd", '{"number": null, "expires": 5}') == Ticket(
        "cd", None, 5.0, "?"
    )
    for key, text in [
        (LEASE_TAG, ticket.to_text()),  # the old single lease tag is no ticket
        (f"{LEASE_TAG}.", ticket.to_text()),
        ("extract_mlflow.promotion.verdict", "passed"),
        (ticket.key, "not json"),
        (ticket.key, '{"number": 1}'),
        (ticket.key, '{"number": "x", "expires": 1}'),
        (ticket.key, ""),
    ]:
        assert Ticket.from_tag(key, text) is None, (key, text)


def test_a_ticket_is_ahead_when_choosing_or_lower() -> None:
    choosing, one, two = Ticket("b", None, 0), Ticket("b", 1, 0), Ticket("b", 2, 0)
    assert choosing.ahead_of(1, "a") and one.ahead_of(2, "a") and not two.ahead_of(1, "a")
    assert Ticket("a", 2, 0).ahead_of(2, "b") and not Ticket("c", 2, 0).ahead_of(2, "b")
    everyone = [Ticket(t, n, 0) for t, n in [("a", 1), ("b", 1), ("c", 2), ("d", 3)]]
    first = [
        t for t in everyone if not any(o.ahead_of(t.number, t.token) for o in everyone if o != t)
    ]
    assert first == [everyone[0]]  # exactly one ticket has nobody ahead


def test_the_lease_policy_follows_the_call_bound_and_the_round_trip() -> None:
    policy = LeasePolicy(call_bound=30)
    assert (policy.margin, policy.patience) == (30, 180)
    assert policy.ttl(0.01) == 30 + 5 + 5 and policy.ttl(3.0) == 30 + 5 + 24
    assert LeasePolicy(call_bound=30, wait=7).patience == 7
    assert all(0.025 <= policy.pause(n) <= 1.0 for n in range(40))
    for bad in [{"call_bound": 0}, {"wait": -1}, {"skew": -1}, {"backoff": (0, 1)}]:
        with pytest.raises(InputError, match="lease policy"):
            LeasePolicy(**bad)  # type: ignore[arg-type]
