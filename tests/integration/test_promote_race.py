"""Concurrent `extract-mlflow promote` on one alias behaves like some serial order: 4 processes
promote versions of different quality at once, 2 rounds (one onto a holder, one onto an empty
alias), against the session's real `mlflow server`. Every round the best version ends up
holding the alias, no promote exits 2, no loser is tagged ``passed``, and every exit 0 moved
the alias from the version it was gated against (the moves chain from the first holder to the
last). The long race (8 processes, 20 rounds, where promotes that passed at first lose inside
the lease) is ``benchmarks/bench_promote.py``, which prints its rounds against a server of its
own."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from support.mlflow_server import MlflowServer

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_promote

RACERS = 4
ROUNDS = 2


@pytest.mark.slow
@pytest.mark.server
def test_concurrent_promotes_equal_a_serial_order(mlflow_server: MlflowServer) -> None:
    uri = mlflow_server.uri
    graded = bench_promote.log_graded_runs(uri, list(range(RACERS + 1)), "promote-race-test")
    racers, worst = graded[:RACERS], graded[RACERS]
    rng = random.Random(1)
    broken, verdicts = [], []
    for n in range(ROUNDS):
        seed_holder = worst if n % 2 == 0 else None  # odd rounds: no holder, --allow-first
        done = bench_promote.race_round(uri, racers, n, seed_holder, rng)
        assert len(done.outcomes) == RACERS
        verdicts += [o.verdict for o in done.outcomes]
        if done.problems():
            broken.append(done.line())
    assert not broken, "\n".join(broken)
    # an even round moves the alias off its holder, an odd one takes the empty alias first
    assert "first" in verdicts and "passed" in verdicts
