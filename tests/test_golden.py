"""Golden outputs: `score` on fixed inputs gives these bytes (JSON, markdown, table, stderr, exit
code). Recorded once before the redesign (``UPDATE_GOLDEN=1 pytest tests/test_golden.py``, only in
a commit of its own that says why); every later change must leave them identical."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from extract_mlflow.cli import main

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = Path(__file__).resolve().parent / "golden"
sys.path.insert(0, str(ROOT / "benchmarks"))
E = "examples"
CASES: dict[str, list[str]] = {
    "invoices_baseline": [
        f"{E}/invoices/gold.jsonl",
        f"{E}/invoices/pred_baseline.jsonl",
        "--config",
        f"{E}/invoices/config.toml",
        "--sources",
        f"{E}/invoices/sources",
    ],
    "invoices_improved": [
        f"{E}/invoices/gold.jsonl",
        f"{E}/invoices/pred_improved.jsonl",
        "--config",
        f"{E}/invoices/config.toml",
        "--sources",
        f"{E}/invoices/sources",
    ],
    "invoices_gated": [
        f"{E}/invoices/gold.jsonl",
        f"{E}/invoices/pred_baseline.jsonl",
        "--config",
        f"{E}/invoices/config.toml",
        "--min-f1",
        "0.9",
        "--field-min",
        "line_items[].qty=0.99",
    ],
    "papers_complete": [
        f"{E}/papers/gold.jsonl",
        f"{E}/papers/pred_complete.jsonl",
        "--config",
        f"{E}/papers/config.toml",
    ],
    "papers_csv_only": [
        f"{E}/papers/gold.jsonl",
        f"{E}/papers/pred_csv_only.jsonl",
        "--config",
        f"{E}/papers/config.toml",
    ],
    "structure": [
        "tests/golden/inputs/structure_gold.jsonl",
        "tests/golden/inputs/structure_pred.jsonl",
        "--slice-by",
        "meta.layout",
        "--slice-by",
        "scan",
    ],
    "synthetic": ["{tmp}/gold.jsonl", "{tmp}/pred.jsonl"],
}
FORMATS = ("json", "md", "table")


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """300 seeded synthetic invoices with noisy predictions (benchmarks/synth.py)."""
    import synth

    folder = tmp_path_factory.mktemp("golden-synth")
    gold, pred, _ = synth.make_dataset(300, seed=7)
    synth.write_jsonl(gold, folder / "gold.jsonl")
    synth.write_jsonl(pred, folder / "pred.jsonl")
    return folder


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_score_output_is_unchanged(
    case: str, fmt: str, synthetic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    args = [a.replace("{tmp}", str(synthetic)) for a in CASES[case]]
    result = CliRunner().invoke(main, ["score", *args, "--no-log", "--format", fmt])
    got = {
        "exit_code": result.exit_code,
        "stdout": result.stdout,
        "stderr": result.stderr,
    }
    if case == "synthetic":  # the inputs' temporary folder is not part of the result
        got = json.loads(json.dumps(got).replace(str(synthetic), "{tmp}"))
    path = GOLDEN / f"{case}.{fmt}.json"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(got, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    expected = json.loads(path.read_text(encoding="utf-8"))
    assert got["exit_code"] == expected["exit_code"]
    assert got["stderr"] == expected["stderr"]
    assert got["stdout"] == expected["stdout"]  # byte for byte


def test_compiled_modules_are_the_ones_imported() -> None:
    """`compiled_modules()` names exactly the modules imported from a compiled extension; CI
    runs this file against the compiled wheel too (``EXTRACT_MLFLOW_EXPECT_COMPILED=1``), where
    the hot modules must be compiled, or the golden outputs above would say nothing of them."""
    import importlib

    import extract_mlflow

    compiled = extract_mlflow.compiled_modules()
    for name in ("extract_mlflow.fields.scorer", "extract_mlflow.io.lines", "extract_mlflow.cli"):
        module = importlib.import_module(name)
        assert (name in compiled) == (not str(module.__file__).endswith(".py")), name
    if os.environ.get("EXTRACT_MLFLOW_EXPECT_COMPILED") == "1":
        assert "extract_mlflow.fields.scorer" in compiled
