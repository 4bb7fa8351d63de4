"""The compare-runs benchmark's parts: the second prediction set predicts the same gold, kept
runs are reused only when they match, and a tiny run logs two runs, compares them and prints
its rows with one JSON digest (no figure asserted)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_compare_runs
import synth


def test_the_second_predictions_predict_every_gold_document_otherwise(tmp_path: Path) -> None:
    files = synth.write_sets([40], 3, tmp_path, kinds=("base",))[40]
    second = bench_compare_runs.second_predictions(files["gold"], tmp_path / "b.jsonl", 3)
    gold, first, other = (
        [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        for path in (files["gold"], files["pred"], second)
    )
    assert [d["id"] for d in other] == [d["id"] for d in gold]
    assert other != first
    again = bench_compare_runs.second_predictions(files["gold"], tmp_path / "c.jsonl", 3)
    assert again.read_bytes() == second.read_bytes()


def test_kept_runs_are_reused_only_when_they_match(tmp_path: Path) -> None:
    assert bench_compare_runs.kept_runs(10, 0, tmp_path) is None
    state = {"docs": 10, "seed": 0, "runs": ["a" * 32, "b" * 32]}
    (tmp_path / bench_compare_runs.STATE).write_text(json.dumps(state))
    assert bench_compare_runs.kept_runs(10, 0, tmp_path) is None  # no logged store beside it
    (tmp_path / "mlflow.db.logged").write_bytes(b"")
    assert bench_compare_runs.kept_runs(10, 0, tmp_path) == state["runs"]
    assert bench_compare_runs.kept_runs(11, 0, tmp_path) is None
    assert bench_compare_runs.kept_runs(10, 1, tmp_path) is None


def test_the_digest_leaves_out_where_the_comparison_was_stored(tmp_path: Path) -> None:
    paths = [tmp_path / "a.json", tmp_path / "b.json"]
    for path, when in zip(
        paths, ("20260101T000000.000000Z", "20260101T000001.000000Z"), strict=True
    ):
        path.write_text(json.dumps({"passed": True, "logged_as": {"logged_at": when}}))
    assert len({bench_compare_runs.json_digest(p) for p in paths}) == 1


@pytest.mark.slow
def test_a_tiny_run_compares_two_logged_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keep = tmp_path / "kept"
    args = ["--docs", "30", "--repeat", "2", "--resamples", "50", "--keep", str(keep)]
    assert bench_compare_runs.main(args) == 0
    out = capsys.readouterr().out
    assert "generate+log" in out and "compare / import mlflow" in out
    (digests,) = [line for line in out.splitlines() if "JSON sha256" in line]
    assert "," not in digests.split("):")[1]  # both compares wrote the same JSON
    assert bench_compare_runs.main(args) == 0
    assert "reuse" in capsys.readouterr().out
