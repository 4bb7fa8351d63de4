"""io.ranges: a file cut into byte ranges and read range by range gives the lines of one
reading from the start (no line lost or repeated, the same numbers, offsets, positions and
digest) wherever the ranges are cut; every example set scored by two workers reading ranges
is the report of one process, and a defective input the same error and exit code."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.stream import write

from extract_mlflow.config import Config
from extract_mlflow.config_file import load_config
from extract_mlflow.errors import ExtractMlflowError
from extract_mlflow.evaluation.accumulator import Extras
from extract_mlflow.evaluation.evaluate import score_files
from extract_mlflow.io.lines import MAX_LINE_BYTES, iter_raw_lines
from extract_mlflow.io.loading import _sha256
from extract_mlflow.io.ranges import Cutter, read_range
from extract_mlflow.io.sources import load_sources

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

_line = st.one_of(
    st.just('{"id": "a", "x": 1}\n'),
    st.just('{"id": "b", "y": [1, 2, {"z": "é"}]}\n'),
    st.just("not json\n"),
    st.just("\n"),
    st.just("   \n"),
    st.just(" \t\r\n"),
    st.text(alphabet='ab{}" :\t', max_size=30).map(lambda t: t + "\n"),
)


def whole(path: Path) -> list[tuple[int, int, object]]:
    return list(iter_raw_lines(path, _sha256()))


def ranged(path: Path, size: int) -> tuple[list[tuple[int, int, object]], list[int], str]:
    """The lines of every range of `size` bytes in turn, each range's position, the digest."""
    cutter = Cutter(path, size)
    lines: list[tuple[int, int, object]] = []
    positions: list[int] = []
    for r in cutter:
        positions.append(r.position)
        lines.extend(read_range(r))
    return lines, positions, cutter.digest()


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=st.lists(_line, max_size=30),
    bom=st.booleans(),
    last_end=st.booleans(),
    size=st.integers(1, 120),
)
def test_ranges_cut_anywhere_read_every_line_once(
    tmp_path: Path, lines: list[str], bom: bool, last_end: bool, size: int
) -> None:
    if lines and not last_end:
        lines[-1] = lines[-1].rstrip("\n")
    path = write(tmp_path / "f.jsonl", lines, bom)
    want = whole(path)
    got, positions, digest = ranged(path, size)
    assert got == want
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()
    # each range's position: the documents (non-blank lines) before it
    starts = [r.start for r in Cutter(path, size)]
    assert positions == [sum(1 for _, offset, _ in want if offset < s) for s in starts]


def test_a_line_over_the_limit_ends_the_cutting(tmp_path: Path) -> None:
    """The rest of the file from a very long line on is one range, read as one reading reads
    it (the over-long line as its head and size)."""
    long = '{"id": "x", "note": "' + "n" * (MAX_LINE_BYTES + 5) + '"}\n'
    lines = ['{"id": "a"}\n', "\n", long, '{"id": "b"}\n', '{"id": "c"}\n']
    path = write(tmp_path / "f.jsonl", lines)
    ranges = list(Cutter(path, 4))
    assert ranges[-1].end is None and ranges[-1].position == 1 and ranges[-1].lineno == 1
    got, _, digest = ranged(path, 4)
    assert got == whole(path)
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()


def _examples() -> list[tuple[str, str, str, bool]]:
    cases = []
    for folder in sorted(p for p in EXAMPLES.iterdir() if p.is_dir()):
        configs = sorted(folder.glob("config*.toml"))
        preds = sorted(p for p in folder.rglob("*.jsonl") if p.name != "gold.jsonl")
        for config in configs:
            for pred in preds:
                if pred.parent.name == "sources":
                    continue
                rel = str(pred.relative_to(folder))
                cases.append((folder.name, rel, config.name, (folder / "sources").is_dir()))
    return cases


@pytest.mark.slow
@pytest.mark.parametrize(("example", "pred", "config", "with_sources"), _examples())
@pytest.mark.parametrize("size", [1, 700])
def test_every_example_in_workers_is_one_process(
    example: str, pred: str, config: str, with_sources: bool, size: int
) -> None:
    folder = EXAMPLES / example
    cfg = load_config(folder / config)
    extras = Extras(sources=load_sources(folder / "sources") if with_sources else None)
    gold, preds = folder / "gold.jsonl", folder / pred
    one = score_files(gold, preds, cfg, extras=extras)
    two = score_files(gold, preds, cfg, extras=extras, workers=2, range_bytes=size)
    dump = {"ensure_ascii": False, "indent": 2, "default": str}
    assert json.dumps(two.to_dict(), **dump) == json.dumps(one.to_dict(), **dump)  # type: ignore[arg-type]


_DEFECTS = {
    "duplicate gold id": (['{"id": "a"}\n', '{"id": "b"}\n', '{"id": "a"}\n'], None),
    "malformed gold line": (['{"id": "a"}\n', '{"id": \n', '{"id": "c"}\n'], None),
    "gold not an object": (['{"id": "a"}\n', "[1]\n"], None),
    "gold without id": (['{"id": "a"}\n', '{"x": 1}\n'], None),
    "duplicate prediction id": (None, ['{"id": "a"}\n', '{"id": "b"}\n', '{"id": "a"}\n']),
    "empty predictions": (None, ["\n", "  \n"]),
    "empty gold": (["\n"], None),
}


def _defect_files(tmp_path: Path, name: str) -> tuple[Path, Path]:
    gold, pred = _DEFECTS[name]
    ok = ['{"id": "a", "v": 1}\n', '{"id": "b", "v": 2}\n', '{"id": "c", "v": 3}\n']
    return (
        write(tmp_path / "gold.jsonl", gold if gold is not None else ok),
        write(tmp_path / "pred.jsonl", pred if pred is not None else ok),
    )


@pytest.mark.parametrize("name", sorted(_DEFECTS))
def test_defective_inputs_give_the_same_error(tmp_path: Path, name: str) -> None:
    gold, pred = _defect_files(tmp_path, name)
    with pytest.raises(ExtractMlflowError) as one:
        score_files(gold, pred, Config())
    for size in (1, 10, 1000):
        with pytest.raises(type(one.value)) as two:
            score_files(gold, pred, Config(), workers=2, range_bytes=size)
        assert str(two.value) == str(one.value)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["duplicate gold id", "malformed gold line", "empty predictions"])
def test_defective_inputs_give_the_same_exit_code(tmp_path: Path, name: str) -> None:
    gold, pred = _defect_files(tmp_path, name)
    command = [sys.executable, "-m", "extract_mlflow", "score", str(gold), str(pred), "--no-log"]
    runs = [
        subprocess.run([*command, *extra], capture_output=True, text=True, check=False)
        for extra in ([], ["--workers", "2"])
    ]
    assert runs[0].returncode == runs[1].returncode != 0
    assert runs[0].stderr == runs[1].stderr and runs[0].stderr.startswith("error:")
