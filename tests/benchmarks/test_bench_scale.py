"""The scale benchmark's parts: the streamed sets equal synth.make_dataset, the floor visits
every leaf and joins every id, and a tiny run prints a row per process (no timings asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_scale
import synth


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_streamed_sets_equal_make_dataset(tmp_path: Path) -> None:
    files = bench_scale.write_sets([7, 3, 7], seed=5, directory=tmp_path)
    assert sorted(files) == [3, 7]
    for n, (gold, pred) in files.items():
        g_rows, p_rows, _ = synth.make_dataset(n, 5)
        assert _rows(gold) == g_rows
        assert _rows(pred) == p_rows


def _count_leaves(value: object) -> int:
    if isinstance(value, dict):
        return sum(_count_leaves(v) for v in value.values())
    if isinstance(value, list):
        return sum(_count_leaves(v) for v in value)
    return 1


def test_floor_counts_every_leaf_and_join(tmp_path: Path) -> None:
    g_rows, p_rows, _ = synth.make_dataset(20, 1)
    p_rows = p_rows[::-1][:-3]  # another order, and three gold ids without a prediction
    gold, pred = synth.write_dataset(g_rows, p_rows, tmp_path)
    got = bench_scale.floor(gold, pred)
    assert got["documents"] == 20
    assert got["joined"] == 17
    assert got["leaves"] == sum(map(_count_leaves, g_rows)) + sum(map(_count_leaves, p_rows))


def test_run_measured_reports_exit_code_and_peak_rss(tmp_path: Path) -> None:
    # Linux counts the parent's resident size at the start into a child's ru_maxrss, so the
    # measuring process must be small, as the benchmark's is: a fresh interpreter, not pytest.
    script = f"""
import json, sys
sys.path.insert(0, {str(Path(bench_scale.__file__).parent)!r})
import bench_scale
from pathlib import Path
work = Path({str(tmp_path)!r})
big = bench_scale.run_measured(
    [sys.executable, "-c", "x = bytearray(200 * 2**20); x[::4096] = b'1' * len(x[::4096])"],
    work,
)
small = bench_scale.run_measured([sys.executable, "-c", "import sys; sys.exit(3)"], work)
print(json.dumps([big.returncode, big.peak_rss_mb, small.returncode, small.peak_rss_mb]))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    big_rc, big_mb, small_rc, small_mb = json.loads(out.stdout)
    assert (big_rc, small_rc) == (0, 3)
    assert big_mb >= 200 > small_mb


@pytest.mark.slow
def test_run_measured_caps_the_address_space(tmp_path: Path) -> None:
    grab = [sys.executable, "-c", "x = bytearray(1024 * 2**20)"]
    capped = bench_scale.run_measured(grab, tmp_path, limit_bytes=512 * 2**20)
    assert capped.returncode == 1 and "MemoryError" in capped.stderr
    assert bench_scale.run_measured(grab, tmp_path).returncode == 0


def test_tiny_run_prints_both_rows(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_scale.main(["--sizes", "40"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.lstrip().startswith("40 ")]
    assert [r[1] for r in rows] == ["floor", "score"]
    assert all(r[-2:] == ["exit", "0"] for r in rows)
    tally = synth.make_dataset(40, 0)[2]
    assert f"TP={tally.tp} FP={tally.fp} FN={tally.fn}" in out


def test_kept_sets_are_reused_only_when_they_match(tmp_path: Path) -> None:
    """--keep DIR: a later run with the same seed reuses the sets (the generator runs once);
    another seed, a size it did not write, or a missing file makes it write them again."""
    assert bench_scale.kept_sets([3], 5, tmp_path) is None  # nothing kept yet
    files = bench_scale.write_sets([3, 7], seed=5, directory=tmp_path)
    (tmp_path / "sets.json").write_text(json.dumps({"seed": 5, "sizes": [3, 7]}))
    assert bench_scale.kept_sets([3], 5, tmp_path) == {3: files[3]}
    assert bench_scale.kept_sets([3, 7], 6, tmp_path) is None
    assert bench_scale.kept_sets([3, 10], 5, tmp_path) is None
    files[7][1].unlink()
    assert bench_scale.kept_sets([7], 5, tmp_path) is None


@pytest.mark.slow
def test_speedup_runs_both_and_compares_the_reports(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_scale.main(["--sizes", "30", "--speedup", "2"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.lstrip().startswith("30 ")]
    assert [r[1] for r in rows] == ["floor", "score", "w=1", "w=2"]
    assert all(r[-2:] == ["exit", "0"] for r in rows)
    assert rows[-1][-3] == "faster" and rows[-1][-4].endswith("x")
    assert "--workers 2 report the same bytes as --workers 1: yes" in out
    with pytest.raises(SystemExit):
        bench_scale.main(["--sizes", "30", "--speedup", "2", "--workers", "2"])
