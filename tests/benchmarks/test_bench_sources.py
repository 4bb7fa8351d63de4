"""The sources benchmark: both modes read the same texts, and a tiny run prints a row per mode
and size (no figure asserted)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_sources
import synth


def test_both_modes_read_every_text(tmp_path: Path) -> None:
    path = synth.write_sets([30], 1, tmp_path, kinds=("base", "sources"))[30]["sources"]
    whole, indexed = (bench_sources.child(mode, path) for mode in bench_sources.MODES)
    assert whole["chars"] == indexed["chars"] > 0


@pytest.mark.slow
def test_tiny_run_prints_a_row_per_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench_sources.main(["--sizes", "20,40", "--keep", str(tmp_path)]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    assert [(r[0], r[1]) for r in rows] == [
        (m, n) for n in ("20", "40") for m in ("whole", "indexed")
    ]
