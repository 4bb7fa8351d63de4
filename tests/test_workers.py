"""`--workers N`: batches scored in worker processes and merged give the report of one
process, field by field (JSON text, metrics, intervals, counts frame, documents)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from test_compact import assert_compact_same

import extract_mlflow.evaluation.evaluate as evaluate_module
from extract_mlflow.errors import ConfigError
from extract_mlflow.evaluation.evaluate import evaluate
from extract_mlflow.report import Report

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(ROOT / "benchmarks"))

from synth import make_dataset, write_dataset  # noqa: E402


def assert_workers_same(got: Report, want: Report) -> None:
    assert_compact_same(got, want)
    assert got.intervals == want.intervals


@pytest.mark.parametrize(
    ("example", "pred", "with_sources"),
    [("invoices", "pred_baseline.jsonl", True), ("papers", "pred_complete.jsonl", False)],
)
def test_examples_in_workers_equal_one_process(
    example: str, pred: str, with_sources: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = EXAMPLES / example
    kwargs = {"sources": folder / "sources"} if with_sources else {}
    args = (folder / "gold.jsonl", folder / pred, folder / "config.toml")
    want = evaluate(*args, **kwargs)  # type: ignore[arg-type]
    monkeypatch.setattr(evaluate_module, "_BATCH", 2)  # several parts, several processes
    got = evaluate(*args, workers=2, **kwargs)  # type: ignore[arg-type]
    assert len(want.documents) > 4
    if with_sources:
        assert want.fidelity is not None and got.fidelity == want.fidelity
    assert_workers_same(got, want)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """~3,000 synthetic documents, predictions in another order (the joined stream seeks)."""
    gold_rows, pred_rows, _ = make_dataset(3000, 13)
    random.Random(13).shuffle(pred_rows)
    paths: tuple[Path, Path] = write_dataset(gold_rows, pred_rows, tmp_path_factory.mktemp("w"))
    return paths


@pytest.mark.slow
def test_synthetic_in_workers_equal_one_process(synthetic: tuple[Path, Path]) -> None:
    gold, pred = synthetic
    want = evaluate(gold, pred)
    assert len(want.documents) == 3000 and want.intervals
    assert_workers_same(evaluate(gold, pred, workers=2), want)
    assert_workers_same(evaluate(gold, pred, workers=0), want)


def _score(*args: object) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "extract_mlflow", "score", *map(str, args), "--no-log"]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.slow
def test_cli_json_is_byte_identical(synthetic: tuple[Path, Path]) -> None:
    gold, pred = synthetic
    one = _score(gold, pred, "--format", "json")
    two = _score(gold, pred, "--format", "json", "--workers", "2")
    assert one.returncode == two.returncode == 0, two.stderr
    assert json.loads(one.stdout)["documents"] == 3000
    assert two.stdout == one.stdout


def test_bad_workers_value(synthetic: tuple[Path, Path]) -> None:
    gold, pred = synthetic
    bad = _score(gold, pred, "--workers", "-1")
    assert bad.returncode == 2
    assert bad.stdout == ""
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "workers" in lines[0]
    with pytest.raises(ConfigError, match="workers"):
        evaluate(gold, pred, workers=-2)


def test_a_defect_of_the_files_is_the_same_error(tmp_path: Path) -> None:
    """A duplicate gold id found mid-stream stops the pass with one process's error."""
    gold_rows, pred_rows, _ = make_dataset(40, 5)
    gold_rows.append(dict(gold_rows[3]))
    gold, pred = write_dataset(gold_rows, pred_rows, tmp_path)
    with pytest.raises(Exception) as one:
        evaluate(gold, pred)
    with pytest.raises(type(one.value)) as two:
        evaluate(gold, pred, workers=2)
    assert str(two.value) == str(one.value)


def test_workers_are_for_the_local_engine(synthetic: tuple[Path, Path]) -> None:
    gold, pred = synthetic
    bad = _score(gold, pred, "--engine", "spark", "--workers", "2")
    assert bad.returncode == 2
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --workers is for --engine local")
