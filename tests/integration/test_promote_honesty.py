"""Verdicts that cannot be fooled, against the session's real `mlflow server`: runs that are not
FINISHED, promotions onto an empty alias that check nothing, `significant` gates on ten
documents, and the promotion lease (held, expired, released, mutually exclusive, on models and
prompts). Everything is read back through MlflowClient."""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from support.mlflow_server import MlflowServer
from support.registry import (
    DROP,
    GATES_TOML,
    World,
    aliases,
    cli,
    client_for,
    error_lines,
    fresh_model,
    link_prompt,
    log_world,
    register_prompt,
    score,
    version_tags,
)
from support.servers import delaying_proxy, uri_of

from extract_mlflow.errors import GateError, InputError, TrackingError
from extract_mlflow.tracking.log import log_report
from extract_mlflow.tracking.promote import promote
from extract_mlflow.tracking.refs import compare_refs
from extract_mlflow.tracking.registry import (
    BASELINE_TAG,
    LEASE_TAG,
    SUMMARY_TAG,
    VERDICT_TAG,
    LeasePolicy,
    Registry,
    Target,
    Ticket,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_promote

STATUSES = ("RUNNING", "SCHEDULED", "FAILED", "KILLED")


@pytest.fixture(scope="module")
def world(mlflow_server: MlflowServer, tmp_path_factory: pytest.TempPathFactory) -> World:
    return log_world(mlflow_server.uri, tmp_path_factory.mktemp("honesty"))


@pytest.fixture(scope="module")
def unfinished(world: World) -> dict[str, str]:
    """A complete evaluation (the improved predictions) per status that is not FINISHED: as a
    crash or a run still logging would leave it."""
    report, client = score("pred_improved.jsonl"), client_for(world.uri)
    runs = {}
    for status in STATUSES:
        run_id = log_report(report, tracking_uri=world.uri, experiment="unfinished").run_id
        client.update_run(run_id, status=status)
        assert client.get_run(run_id).info.status == status
        runs[status] = run_id
    return runs


# -- 1. unfinished runs ----------------------------------------------------------------------------
@pytest.mark.server
@pytest.mark.parametrize("status", STATUSES)
@pytest.mark.parametrize("role", ["candidate", "baseline"])
def test_compare_refuses_a_run_that_is_not_finished(
    world: World, unfinished: dict[str, str], status: str, role: str
) -> None:
    run_id = unfinished[status]
    base, cand = (world.baseline, run_id) if role == "candidate" else (run_id, world.improved)
    args = ["compare", base, cand, "--min", "f1=0.5", "--tracking-uri", world.uri]
    code, out, err = cli(*args)
    assert code == 2 and out == ""
    (line,) = error_lines(err)
    assert line.startswith("error: ") and run_id in line and f"is {status}" in line
    assert "--allow-unfinished" in line
    with pytest.raises(InputError, match=f"{run_id}: the run is {status}"):
        compare_refs(base, cand, tracking_uri=world.uri, gates=[{"metric": "f1", "threshold": 0}])
    code, out, err = cli(*args, "--allow-unfinished", "--format", "json")
    assert code == 0, err
    assert any(f"is {status}" in n and "used anyway" in n for n in json.loads(out)["notes"])


@pytest.mark.server
def test_promote_refuses_an_unfinished_candidate_or_holder(
    world: World, unfinished: dict[str, str]
) -> None:
    running = unfinished["RUNNING"]
    gates = ["--max-drop", "f1=0.01", "--tracking-uri", world.uri]
    name = fresh_model(world, world.baseline, running)  # 2: better, but still RUNNING
    client_for(world.uri).set_registered_model_alias(name, "champion", "1")
    code, out, err = cli("promote", name, "2", *gates)
    assert code == 2 and out == ""
    (line,) = error_lines(err)
    assert f"models:/{name}/2 (run {running}): the run is RUNNING" in line
    assert aliases(world, name) == {"champion": "1"} and version_tags(world, name, "2") == {}
    held = fresh_model(world, running, world.improved)  # the holder is the unfinished one
    client_for(world.uri).set_registered_model_alias(held, "champion", "1")
    code, out, err = cli("promote", held, "2", *gates)
    assert code == 2 and f"models:/{held}/1 (run {running}): the run is RUNNING" in err
    assert aliases(world, held) == {"champion": "1"} and version_tags(world, held, "2") == {}
    code, out, err = cli("promote", name, "2", *gates, "--allow-unfinished")
    assert code == 0, err
    assert aliases(world, name) == {"champion": "2"}
    assert version_tags(world, name, "2")[VERDICT_TAG] == "passed"


# -- 2. gates that check nothing ----------------------------------------------------------------
@pytest.mark.server
def test_compare_without_gates_prints_the_report_and_exits_2(world: World) -> None:
    code, out, err = cli("compare", world.baseline, world.improved, "--tracking-uri", world.uri)
    assert code == 2
    assert out.startswith("NOT GATED: no gate was evaluated")
    (line,) = error_lines(err)
    assert line == (
        "error: no gate was evaluated: no gate was given (--gates, --min, --max or --max-drop)"
    )


@pytest.mark.server
def test_promote_onto_an_empty_alias_evaluates_a_gate_or_says_first(world: World) -> None:
    name = fresh_model(world, world.improved)
    args = ["promote", name, "1", "--max-drop", "f1=0.01", "--tracking-uri", world.uri]
    code, out, err = cli(*args)
    assert code == 2 and out == ""
    (line,) = error_lines(err)
    assert "no gate was evaluated: every check was skipped (max_drop skipped" in line
    assert "--allow-first" in line
    assert aliases(world, name) == {} and version_tags(world, name, "1") == {}
    with pytest.raises(GateError, match="no gate was evaluated"):
        promote(name, 1, gates=DROP, tracking_uri=world.uri)
    code, out, err = cli(*args, "--allow-first", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert (data["outcome"], data["promoted"], data["previous_version"]) == ("first", True, None)
    assert data["comparison"]["evaluated_checks"] == 0
    assert "as its first holder (was unset): no baseline, no gate was evaluated" in err
    assert aliases(world, name) == {"champion": "1"}
    tags = version_tags(world, name, "1")
    assert (tags[VERDICT_TAG], tags[BASELINE_TAG]) == ("first", "none")
    assert tags[SUMMARY_TAG].startswith("first promotion onto @champion with no baseline")
    assert "no gate was evaluated" in tags[SUMMARY_TAG]


@pytest.mark.server
def test_an_absolute_gate_needs_no_allow_first(world: World) -> None:
    name = fresh_model(world, world.improved)
    gates = [*DROP, {"metric": "f1", "threshold": 0.9}]
    result = promote(name, 1, gates=gates, tracking_uri=world.uri)
    assert result.outcome == "promoted" and result.comparison.evaluated == 1
    assert version_tags(world, name, "1")[VERDICT_TAG] == "passed"


@pytest.mark.server
def test_a_significant_gate_on_ten_documents_is_refused(world: World, tmp_path: Path) -> None:
    gates = tmp_path / "gates.toml"
    gates.write_text(GATES_TOML, encoding="utf-8")
    args = ["--gates", str(gates), "--tracking-uri", world.uri]
    code, out, err = cli("compare", world.baseline, world.improved, *args)
    assert code == 2 and out == ""
    (line,) = error_lines(err)
    assert "is significant = true but only 10 documents are paired" in line
    assert "--min-documents" in line
    name = fresh_model(world, world.baseline, world.improved)
    client_for(world.uri).set_registered_model_alias(name, "champion", "1")
    code, out, err = cli("promote", name, "2", *args)
    assert code == 2 and "only 10 documents are paired" in err
    assert aliases(world, name) == {"champion": "1"} and version_tags(world, name, "2") == {}
    code, out, err = cli("compare", world.baseline, world.improved, *args, "--min-documents", "10")
    assert code == 0, err


# -- 4. the lease ---------------------------------------------------------------------------------
def _set_ticket(world: World, name: str, number: int | None, expires: float) -> Ticket:
    """Another promote's ticket in the queue of `name`."""
    ticket = Ticket(f"other{uuid.uuid4().hex[:8]}", number, expires, "other-host:1")
    client_for(world.uri).set_registered_model_tag(name, ticket.key, ticket.to_text())
    return ticket


def tickets(world: World, name: str) -> list[str]:
    """The lease tags left on registered model `name`."""
    tags = client_for(world.uri).get_registered_model(name).tags
    return [k for k in tags if k.startswith(LEASE_TAG)]


@pytest.mark.server
@pytest.mark.parametrize("number", [1, None], ids=["holding", "choosing"])
def test_a_held_lease_is_waited_for_then_refused(world: World, number: int | None) -> None:
    """A ticket ahead that never leaves the queue (holding the lease, or still choosing its
    number) is waited for, then refused naming its owner; an expired one (a crashed promote's)
    is passed over and removed."""
    name = fresh_model(world, world.baseline, world.improved)
    client_for(world.uri).set_registered_model_alias(name, "champion", "1")
    held = _set_ticket(world, name, number, time.time() + 600)
    policy = LeasePolicy(call_bound=5, wait=1.5)
    with pytest.raises(TrackingError, match="could not take the promotion lease") as info:
        promote(name, 2, gates=DROP, tracking_uri=world.uri, lease=policy)
    place = "choosing its number" if number is None else "number 1"
    expected = f"no promote ahead left the queue for 1.5 s; 1 ahead, first other-host:1 ({place}, "
    assert expected in str(info.value) and held.key in str(info.value)
    assert f":{os.getpid()}" not in str(info.value)
    assert aliases(world, name) == {"champion": "1"} and version_tags(world, name, "2") == {}
    assert tickets(world, name) == [held.key]  # its own ticket was taken back
    client_for(world.uri).delete_registered_model_tag(name, held.key)
    crashed = _set_ticket(world, name, 1, time.time() - 1)  # expired: a crashed promote's
    result = promote(name, 2, gates=DROP, tracking_uri=world.uri, lease=policy)
    assert result.outcome == "promoted" and aliases(world, name) == {"champion": "2"}
    assert crashed.key.startswith(LEASE_TAG) and tickets(world, name) == []  # all released


@pytest.mark.server
def test_a_ticket_is_renewed_in_time_and_never_used_once_it_lapsed(world: World) -> None:
    """`keep` renews a ticket that runs short while it is still valid (the lease stays ours),
    and refuses one whose validity ended before the renewal landed (someone may have passed
    it); the lapsed ticket is then released like any other."""
    name = fresh_model(world, world.baseline)
    registry = Registry(client_for(world.uri), Target(name, "model"))
    policy = LeasePolicy(call_bound=3, skew=0)
    lease = registry.acquire(policy)
    assert policy.margin < lease.remaining() <= lease.ttl == 3 + 0 + 5  # MIN_HOLD: fast server
    time.sleep(max(0.0, lease.remaining() - 2.5))  # short: less than the margin left
    assert lease.remaining() < policy.margin
    assert registry.keep(lease, policy) and lease.remaining() >= policy.margin  # renewed
    time.sleep(max(0.0, lease.remaining() + 0.2))  # expired, as every other promote sees it
    assert not registry.keep(lease, policy)
    assert tickets(world, name) == [f"{LEASE_TAG}.{lease.token}"]  # the late renewal landed
    registry.release(lease)
    assert tickets(world, name) == []


@pytest.mark.server
def test_a_holder_that_moved_is_regated(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """The alias moves between the first gating and the lease (another promote won meanwhile):
    the candidate is re-gated against the new holder, and is superseded when it does not beat
    it: exit 1, tagged superseded, the alias left where the winner put it."""
    name = fresh_model(world, world.baseline, world.baseline, world.improved)
    client = client_for(world.uri)
    client.set_registered_model_alias(name, "champion", "1")
    acquire = Registry.acquire

    def another_promote_wins_first(self: Registry, policy: LeasePolicy) -> Any:
        client.set_registered_model_alias(name, "champion", "3")
        return acquire(self, policy)

    monkeypatch.setattr(Registry, "acquire", another_promote_wins_first)
    result = promote(name, 2, gates=DROP, tracking_uri=world.uri)
    assert (result.outcome, result.exit_code, result.previous_version) == ("superseded", 1, "3")
    assert result.gated_against == "3" and not result.comparison.passed
    assert result.headline().startswith(f"superseded: models:/{name}/2 was gated against")
    assert aliases(world, name) == {"champion": "3"}
    tags = version_tags(world, name, "2")
    assert tags[VERDICT_TAG] == "superseded" and tags[BASELINE_TAG] == "3"
    assert tags[SUMMARY_TAG].startswith("superseded: @champion moved to version 3")


@pytest.mark.slow
@pytest.mark.server
@pytest.mark.parametrize("delay", [0.0, 0.3])
def test_the_lease_admits_one_holder_at_a_time(world: World, delay: float) -> None:
    """Threads, each with its own client, take the lease of one model over and over, straight
    or through a proxy that answers every request `delay` s late (so that their doorways
    overlap); the spans they held it never overlap, and no ticket is left."""
    name = fresh_model(world, world.baseline)
    # bounds far above what a busy machine takes: the test is mutual exclusion, not latency
    policy = LeasePolicy(call_bound=60, wait=600)
    spans: list[tuple[float, float]] = []
    errors: list[BaseException] = []

    def worker(uri: str) -> None:
        registry = Registry(client_for(uri), Target(name, "model"))
        try:
            for _ in range(3):
                with registry.leased(policy):
                    start = time.monotonic()
                    time.sleep(random.uniform(0.05, 0.2))
                    spans.append((start, time.monotonic()))
        except BaseException as exc:
            errors.append(exc)

    with delaying_proxy(world.uri, delay) as proxy:
        threads = [threading.Thread(target=worker, args=(uri_of(proxy),)) for _ in range(5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=1800)
    assert not errors and len(spans) == 15
    spans.sort()
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))
    assert tickets(world, name) == []


@pytest.mark.slow
@pytest.mark.server
def test_concurrent_prompt_promotes_end_on_the_best_version(world: World) -> None:
    """Prompts take the same lease (a prompt tag): 4 processes promote prompt versions linked
    to evaluations of different quality, twice; the best version ends up holding the alias."""
    experiment = f"prompt-race-{uuid.uuid4().hex[:6]}"
    graded = bench_promote.log_graded_runs(world.uri, [0, 1, 2, 3], experiment)
    client = client_for(world.uri)
    for round_no in range(2):
        name = f"race-prompt-{uuid.uuid4().hex[:8]}"
        order = random.Random(round_no).sample(graded, len(graded))
        version_of = {}
        for run in order:
            version = register_prompt(world.uri, name, f"Extract (k={run.corrupted}).")
            link_prompt(world.uri, run.run_id, f"prompts:/{name}/{version}")
            version_of[run.corrupted] = version
        cmd = [sys.executable, "-m", "extract_mlflow", "promote", f"prompts:/{name}"]
        opts = ["--max-drop", "f1=0", "--allow-first", "--tracking-uri", world.uri]
        pipes: dict[str, Any] = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
        procs = {
            k: subprocess.Popen([*cmd, v, *opts], text=True, **pipes) for k, v in version_of.items()
        }
        errs = {k: p.communicate(timeout=300)[1] for k, p in procs.items()}
        codes = {k: p.returncode for k, p in procs.items()}
        assert set(codes.values()) <= {0, 1}, errs
        assert str(client.get_prompt_version_by_alias(name, "champion").version) == version_of[0]
        for k, v in version_of.items():
            verdict = client.get_prompt_version(name, v).tags.get(VERDICT_TAG)
            assert verdict in (("passed", "first") if codes[k] == 0 else ("failed", "superseded"))
        assert not [k for k in client.get_prompt(name).tags or {} if k.startswith(LEASE_TAG)]
