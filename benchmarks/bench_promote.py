"""Promotion race: 8 concurrent `extract-mlflow promote` processes on one alias, 20 rounds.

    python benchmarks/bench_promote.py [--racers 8] [--rounds 20] [--delay 0] [--timeout S]

Each round registers a fresh model whose versions come from evaluation runs of strictly
different quality (the invoice example's gold, predicted exactly except for k corrupted
documents, k = 0 … racers-1), in shuffled version order, and starts one `promote NAME VERSION
--max-drop f1=0` process per version at once. Even rounds start with the alias on a version
worse than every racer; odd rounds start with no holder (the racers pass `--allow-first`).

Per round it prints the exit codes (in order of quality, best first), the final holder, the best
version, whether the outcome equals a serial order (every exit 0 moved the alias from the version
it was gated against, the moves chain from the first holder to the final one), and the time.
It starts its own `mlflow server` (127.0.0.1, a free port, a temporary SQLite store and artifact
root, its own process group) and stops the whole group at the end. With `--delay D` the
promotes talk to it through the delaying proxy of `tests/support/servers.py`, which answers every
request D seconds late, and each promote's line (exit code, verdict, wall time, requests) is
printed too; `--timeout` is passed on to the promotes. It prints figures and exits 0;
`tests/integration/test_promote_race.py` and `tests/integration/test_promote_latency.py`
assert the same properties against the test server.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_tracking import mlflow_server

from extract_mlflow import evaluate
from extract_mlflow.tracking.log import log_report
from extract_mlflow.tracking.registry import VERDICT_TAG

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "invoices"
GOLD = EXAMPLE / "gold.jsonl"
CONFIG = EXAMPLE / "config.toml"
ALIAS = "champion"


@dataclass(frozen=True)
class GradedRun:
    """An evaluation run and its quality (k corrupted documents; lower k is better)."""

    run_id: str
    corrupted: int
    f1: float


def graded_predictions(corrupted: int) -> list[dict[str, Any]]:
    """The gold lines as predictions, with `total` and `invoice_number` wrong in the first
    `corrupted` documents (each corruption lowers micro F1)."""
    lines = [json.loads(t) for t in GOLD.read_text(encoding="utf-8").splitlines() if t.strip()]
    for doc in lines[:corrupted]:
        doc["total"] = float(doc.get("total") or 0) * 3 + 7
        doc["invoice_number"] = f"WRONG-{doc['id']}"
    return lines


def log_graded_runs(uri: str, levels: list[int], experiment: str) -> list[GradedRun]:
    """One FINISHED evaluation run per corruption level, all with the same signature."""
    runs = []
    for k in levels:
        report = evaluate(GOLD, graded_predictions(k), CONFIG)
        logged = log_report(report, tracking_uri=uri, experiment=experiment, run_name=f"k{k}")
        runs.append(GradedRun(logged.run_id, k, float(report.metrics()["f1"])))
    if len({r.f1 for r in runs}) != len(runs):
        raise RuntimeError(f"graded runs do not differ in f1: {[r.f1 for r in runs]}")
    return runs


@dataclass
class Outcome:
    """One promote process of a round."""

    version: str
    corrupted: int
    code: int
    result: dict[str, Any] | None
    stderr: str
    verdict: str | None = None
    pid: int = 0
    seconds: float = 0.0  # from its start to its exit
    user: str = ""  # the basic-auth user it sent (through a proxy), "" without

    def line(self, requests: int | None = None) -> str:
        sent = "" if requests is None else f"  {requests:>3} requests"
        return (
            f"  v{self.version:<3} k{self.corrupted}  exit {self.code}  "
            f"{self.verdict or '-':<10}  {self.seconds:6.1f} s{sent}"
        )


@dataclass
class RaceRound:
    """What one round did and what it ended with."""

    number: int
    model: str
    initial: str | None
    best: str
    final: str | None
    outcomes: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0

    def chain_problem(self) -> str | None:
        """Why the moves do not form one serial chain from the initial holder to the final
        one, or None when they do."""
        moves = {}
        for o in self.outcomes:
            if o.code != 0 or o.result is None:
                continue
            prev = o.result["previous_version"]
            gated = o.result.get("gated_against", prev)
            if prev != gated:
                return f"version {o.version} moved the alias from {prev}, gated against {gated}"
            if prev in moves:
                return f"two promotes moved the alias from {prev}"
            moves[prev] = o.version
        at = self.initial
        while at in moves:
            at = moves.pop(at)
        if moves:
            return f"moves not chained from {self.initial}: {moves}"
        if at != self.final:
            return f"the chain ends at {at}, the alias at {self.final}"
        return None

    def problems(self) -> list[str]:
        """Every way the round broke the promise (empty when it kept it)."""
        found = []
        if self.final != self.best:
            found.append(f"final holder {self.final}, best version {self.best}")
        for o in self.outcomes:
            if o.code not in (0, 1):
                last = (o.stderr.strip().splitlines() or [""])[-1][:200]
                found.append(f"version {o.version} exited {o.code}: {last}")
            elif o.code == 1 and o.verdict not in ("failed", "superseded"):
                found.append(f"version {o.version} lost (exit 1) but is tagged {o.verdict}")
            elif o.code == 0 and o.verdict not in ("passed", "first"):
                found.append(f"version {o.version} exited 0 but is tagged {o.verdict}")
            itself = f"{socket.gethostname()}:{o.pid}"
            if o.pid and itself in o.stderr:
                found.append(f"version {o.version} names its own lease ({itself}) on stderr")
        chain = self.chain_problem()
        if chain:
            found.append(chain)
        return found

    def line(self) -> str:
        codes = " ".join(str(o.code) for o in sorted(self.outcomes, key=lambda o: o.corrupted))
        status = "ok" if not self.problems() else "BROKEN: " + "; ".join(self.problems())
        start = f"v{self.initial}" if self.initial else "empty"
        return (
            f"round {self.number:>2}  start {start:<5}  exits (best first) {codes}  "
            f"final v{self.final}  best v{self.best}  {self.seconds:5.1f} s  {status}"
        )


def _client(uri: str) -> Any:
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=uri)


def _add_version(client: Any, model: str, run_id: str) -> str:
    source = client.get_run(run_id).info.artifact_uri + "/eval"
    return str(client.create_model_version(model, source, run_id=run_id).version)


def _promote_cmd(
    uri: str, model: str, version: str, first: bool, call_timeout: float | None = None
) -> list[str]:
    cmd = [sys.executable, "-m", "extract_mlflow", "promote", model, version]
    cmd += ["--max-drop", "f1=0", "--tracking-uri", uri, "--format", "json"]
    cmd += ["--timeout", f"{call_timeout:g}"] if call_timeout is not None else []
    return cmd + (["--allow-first"] if first else [])


def _as_user(uri: str, user: str) -> str:
    """`uri` with basic-auth user `user` (password ``x``): how a proxy tells the racers apart."""
    parts = urllib.parse.urlsplit(uri)
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{user}:x@{parts.netloc}"))


def _run(cmd: list[str], env: dict[str, str], timeout: float) -> tuple[int, int, str, str, float]:
    """Run one promote; its pid, exit code, stdout, stderr and wall time."""
    started = time.perf_counter()
    pipe = subprocess.PIPE
    with subprocess.Popen(cmd, text=True, env=env, stdout=pipe, stderr=pipe) as proc:
        out, err = proc.communicate(timeout=timeout)
    return proc.pid, proc.returncode, out, err, time.perf_counter() - started


def race_round(
    uri: str,
    racers: list[GradedRun],
    number: int,
    seed_holder: GradedRun | None,
    rng: random.Random,
    timeout: float = 600.0,
    via: str | None = None,
    call_timeout: float | None = None,
) -> RaceRound:
    """One round: a fresh model, one version per racer (shuffled), the alias on `seed_holder`'s
    version (or unset), and one promote process per version started at once. The promotes talk
    to `via` (a proxy of `uri`) when given, each as basic-auth user ``racer<k>`` (k: its
    corruption level), and pass `call_timeout` as ``--timeout``."""
    client = _client(uri)
    model = f"race-{uuid.uuid4().hex[:10]}"
    client.create_registered_model(model)
    initial = None
    if seed_holder is not None:
        initial = _add_version(client, model, seed_holder.run_id)
        client.set_registered_model_alias(model, ALIAS, initial)
    shuffled = rng.sample(racers, len(racers))
    version_of = {r.run_id: _add_version(client, model, r.run_id) for r in shuffled}
    best = version_of[min(racers, key=lambda r: r.corrupted).run_id]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    started = time.perf_counter()
    users = {r.run_id: f"racer{r.corrupted}" if via else "" for r in shuffled}
    with ThreadPoolExecutor(len(shuffled)) as pool:
        runs = {
            r.run_id: pool.submit(
                _run,
                _promote_cmd(
                    _as_user(via, users[r.run_id]) if via else uri,
                    model, version_of[r.run_id], seed_holder is None, call_timeout,
                ),
                env,
                timeout,
            )
            for r in shuffled
        }  # fmt: skip
    outcomes = []
    for r in shuffled:
        pid, code, out, err, wall = runs[r.run_id].result()
        try:
            result = json.loads(out) if out.strip() else None
        except json.JSONDecodeError:
            result = None
        outcome = Outcome(version_of[r.run_id], r.corrupted, code, result, err)
        outcome.pid, outcome.seconds, outcome.user = pid, wall, users[r.run_id]
        outcomes.append(outcome)
    seconds = time.perf_counter() - started
    for o in outcomes:
        o.verdict = client.get_model_version(model, o.version).tags.get(VERDICT_TAG)
    final = dict(client.get_registered_model(model).aliases).get(ALIAS)
    return RaceRound(number, model, initial, best, final, outcomes, seconds)


def run_race(
    uri: str,
    racers: int,
    rounds: int,
    seed: int = 0,
    proxy: Any = None,
    call_timeout: float | None = None,
) -> list[RaceRound]:
    """Log the graded runs once, then `rounds` rounds (even: seeded holder; odd: empty); through
    `proxy` (a delaying proxy of `uri`) when given, printing each promote's line."""
    graded = log_graded_runs(uri, list(range(racers + 1)), f"promote-race-{uuid.uuid4().hex[:6]}")
    runners, worst = graded[:racers], graded[racers]
    rng = random.Random(seed)
    via = None if proxy is None else "http://{}:{}".format(*proxy.server_address[:2])
    done = []
    for n in range(rounds):
        seed_holder = worst if n % 2 == 0 else None
        if proxy is not None:
            proxy.calls.clear()  # count this round's requests only
        done.append(race_round(uri, runners, n, seed_holder, rng, 3600.0, via, call_timeout))
        print(done[-1].line(), flush=True)
        for o in sorted(done[-1].outcomes, key=lambda o: o.corrupted) if proxy else ():
            print(o.line(sum(c.user == o.user for c in proxy.calls)), flush=True)
    return done


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--racers", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--delay", type=float, default=None, help="answer every request this many seconds late"
    )
    ap.add_argument("--timeout", type=float, default=None, help="the promotes' --timeout")
    args = ap.parse_args(argv)
    import mlflow  # noqa: F401  (configures its loggers on import: quiet them afterwards)

    for name in ("mlflow", "alembic"):
        logging.getLogger(name).setLevel(logging.WARNING)
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-promote-"))
        uri = stack.enter_context(mlflow_server(Path(tmp)))
        proxy = None
        if args.delay is not None:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
            from support.servers import delaying_proxy

            proxy = stack.enter_context(delaying_proxy(uri, args.delay))
            print(f"proxy         every request {args.delay:g} s late")
        t0 = time.perf_counter()
        done = run_race(uri, args.racers, args.rounds, args.seed, proxy, args.timeout)
        total = time.perf_counter() - t0
    broken = [r for r in done if r.problems()]
    codes = [o.code for r in done for o in r.outcomes]
    verdicts = Counter(str(o.verdict) for r in done for o in r.outcomes)
    print(
        f"{len(done)} rounds of {args.racers} concurrent promotes in {total:.0f} s "
        f"(mean {sum(r.seconds for r in done) / max(len(done), 1):.1f} s a round): "
        f"{len(done) - len(broken)} ok, {len(broken)} broken; exit codes "
        f"0×{codes.count(0)} 1×{codes.count(1)} 2×{codes.count(2)} other×"
        f"{len(codes) - codes.count(0) - codes.count(1) - codes.count(2)}"
    )
    print("verdict tags: " + ", ".join(f"{k} {n}" for k, n in sorted(verdicts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
