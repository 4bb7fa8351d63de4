"""The memory benchmark's parts: one `score` command per path, the kept sets reused only when
they match, and a tiny run prints a row per path and size and the ratio (no figure asserted)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_memory


def test_each_path_runs_its_own_command(tmp_path: Path) -> None:
    files = bench_memory.write_sets([3], seed=1, root=tmp_path)[3]
    out = tmp_path / "r.json"
    commands = {p: bench_memory.path_command(p, files, out) for p in bench_memory.PATHS}
    assert "--no-log" in commands["no-log"]
    assert all("--no-log" not in c for p, c in commands.items() if p != "no-log")
    assert commands["sources"][-2:] == ["--sources", str(files["sources"])]
    assert commands["pages"][-2:] == ["--config", str(files["pages_config"])]
    assert str(files["structure_gold"]) in commands["structure"]
    assert str(files["pages_pred"]) in commands["pages"]


def test_kept_sets_are_reused_only_when_they_match(tmp_path: Path) -> None:
    assert bench_memory.kept_sets([3], 1, tmp_path) is None
    files = bench_memory.write_sets([3, 5], seed=1, root=tmp_path)
    assert bench_memory.kept_sets([3], 1, tmp_path) == {3: files[3]}
    assert bench_memory.kept_sets([3], 2, tmp_path) is None
    assert bench_memory.kept_sets([3, 8], 1, tmp_path) is None
    files[5]["sources"].unlink()
    assert bench_memory.kept_sets([5], 1, tmp_path) is None


def _rows(out: str, path: str) -> list[list[str]]:
    return [line.split() for line in out.splitlines() if line.split()[:1] == [path]]


@pytest.mark.slow
def test_tiny_unlogged_run_prints_rows_and_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_memory.main(["--sizes", "20,40", "--paths", "no-log"]) == 0
    rows = _rows(capsys.readouterr().out, "no-log")
    assert [r[1] for r in rows[:2]] == ["20", "40"]
    assert all(r[5:7] == ["exit", "0"] for r in rows[:2])
    assert rows[2][1:3] == ["peak", "RSS"] and rows[2][6].endswith("x")


@pytest.mark.slow
def test_tiny_run_of_every_path_logs_each(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_memory.main(["--sizes", "20"]) == 0
    out = capsys.readouterr().out
    for path in bench_memory.PATHS:
        (row,) = _rows(out, path)
        assert row[5:7] == ["exit", "0"], row
        if path != "no-log":
            assert row[-2:] == ["run", "logged"], row
