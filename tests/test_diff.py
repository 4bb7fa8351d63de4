"""`diff`: two prediction files against one gold set, field by field (library, CLI, --log)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.diff import GOLD, PRED_A, PRED_B, write_jsonl

import extract_mlflow
from extract_mlflow import check_gates, compare, diff, evaluate
from extract_mlflow.cli import main
from extract_mlflow.gate_checks import check_report

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "invoices"

# Three documents, two fields. A: d1 right; d2 `a` wrong; d3 `b` wrong.
# B: d1 `b` wrong; d2 right; d3 `b` wrong.


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str, str]:
    return (
        str(write_jsonl(tmp_path / "gold.jsonl", GOLD)),
        str(write_jsonl(tmp_path / "a.jsonl", PRED_A)),
        str(write_jsonl(tmp_path / "b.jsonl", PRED_B)),
    )


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, ["diff", *args], catch_exceptions=False)


# -- the library -------------------------------------------------------------------------------
def test_hand_checked_small_set() -> None:
    d = diff(evaluate(GOLD, PRED_A), evaluate(GOLD, PRED_B))
    by_path = {f.path: f for f in d.fields}
    # a: A 2 TP + 1 wrong (1 FP, 1 FN) -> 4/6; B 3 TP -> 1
    assert by_path["a"].before == pytest.approx(2 / 3)
    assert by_path["a"].after == 1.0
    # b: A 2 TP + 1 wrong -> 4/6; B 1 TP + 2 wrong -> 2/6
    assert by_path["b"].before == pytest.approx(2 / 3)
    assert by_path["b"].after == pytest.approx(1 / 3)
    assert [f.path for f in d.regressions] == ["b"]
    assert [f.path for f in d.improvements] == ["a"]
    # micro: A 4 TP 2 FP 2 FN, B 4 TP 2 FP 2 FN -> 8/12 on both sides
    assert d.micro.before == pytest.approx(8 / 12)
    assert d.micro.delta == pytest.approx(0.0)
    # d1 fully correct in A only, d2 in B only, d3 in neither
    assert [(f.id, f.direction) for f in d.flips] == [("d1", "broke"), ("d2", "fixed")]
    (d1_b,) = d.flips[0].fields
    assert (d1_b.path, d1_b.before, d1_b.after) == ("b", (1, 0, 0), (0, 1, 1))
    (d2_a,) = d.flips[1].fields
    assert (d2_a.path, d2_a.before, d2_a.after) == ("a", (0, 1, 1), (1, 0, 0))


def test_tolerance_bounds_what_counts() -> None:
    a, b = evaluate(GOLD, PRED_A), evaluate(GOLD, PRED_B)
    assert diff(a, b, tolerance=0.4).regressions == ()
    assert diff(a, b, tolerance=0.4).improvements == ()
    assert [f.path for f in diff(a, b, tolerance=0.3).regressions] == ["b"]


def test_interval_is_the_paired_bootstrap_of_compare() -> None:
    a, b = evaluate(GOLD, PRED_A), evaluate(GOLD, PRED_B)
    d = diff(a, b, seed=3, resamples=200)
    row = compare(a, b, seed=3, resamples=200, min_documents=0).row("f1")
    assert row is not None and row.interval is not None
    assert d.micro.interval == row.interval
    assert d.comparison.paired == 3


@pytest.mark.parametrize("bad", [float("nan"), -0.1, float("inf"), "0.1", True])
def test_bad_tolerance_is_refused(bad: Any) -> None:
    a = evaluate(GOLD, PRED_A)
    with pytest.raises(extract_mlflow.InputError, match="tolerance"):
        diff(a, a, tolerance=bad)


def test_different_gold_is_refused() -> None:
    a = evaluate(GOLD, PRED_A)
    b = evaluate(GOLD[:2], PRED_B[:2])
    with pytest.raises(extract_mlflow.InputError, match="scored differently"):
        diff(a, b)


JSON_KEYS = {
    "a", "b", "tolerance", "micro_f1", "macro_f1", "fields", "regressions", "improvements",
    "flips", "documents", "bootstrap", "notes",
}  # fmt: skip
FIELD_KEYS = {"field", "key", "before", "after", "delta", "ci_low", "ci_high"}
FLIP_KEYS = {"id", "direction", "status_before", "status_after", "fields"}


def test_json_schema_is_stable() -> None:
    data = json.loads(diff(evaluate(GOLD, PRED_A), evaluate(GOLD, PRED_B)).to_json())
    assert set(data) == JSON_KEYS
    assert set(data["micro_f1"]) == FIELD_KEYS
    assert all(set(f) == FIELD_KEYS for f in data["fields"] + data["regressions"])
    assert all(set(f) == FLIP_KEYS for f in data["flips"])
    assert set(data["flips"][0]["fields"][0]) == {"field", "before", "after"}
    assert set(data["documents"]) == {"paired", "a_only", "b_only"}
    assert set(data["bootstrap"]) == {"resamples", "seed", "confidence"}


def test_check_gates_reuses_the_score_time_bars() -> None:
    report = evaluate(GOLD, PRED_A)
    assert check_gates(report) == []
    assert check_gates(report, min_f1=0.5, field_min={"a": 0.5}) == []
    failures = check_gates(report, min_f1=0.9, field_min={"b": 0.9, "nope": 0.1})
    assert failures == check_report(report, 0.9, [("b", 0.9), ("nope", 0.1)])
    assert len(failures) == 3
    assert check_gates(report, field_min=[("b", 0.9)]) == check_report(report, None, [("b", 0.9)])


# -- properties ----------------------------------------------------------------------------------
VALUES = st.sampled_from([None, 0, 1, 2, "x", "y"])
DOC = st.fixed_dictionaries({"p": VALUES, "q": VALUES, "r": st.lists(VALUES, max_size=2)})


@st.composite
def gold_and_two(draw: st.DrawFn) -> tuple[list[dict[str, Any]], ...]:
    n = draw(st.integers(2, 5))
    sets = []
    for _ in range(3):
        docs = draw(st.lists(DOC, min_size=n, max_size=n))
        sets.append([{"id": f"d{i}", **doc} for i, doc in enumerate(docs)])
    return tuple(sets)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gold_and_two())
def test_diff_properties(sets: tuple[list[dict[str, Any]], ...]) -> None:
    gold, pa, pb = sets
    a, b = evaluate(gold, pa), evaluate(gold, pb)
    same = diff(a, a, resamples=20)
    assert same.regressions == same.improvements == ()
    assert same.flips == ()
    ab, ba = diff(a, b, resamples=20), diff(b, a, resamples=20)
    assert [f.path for f in ab.regressions] == [f.path for f in ba.improvements]
    assert [f.path for f in ab.improvements] == [f.path for f in ba.regressions]
    flipped = {"fixed": "broke", "broke": "fixed"}
    assert [(f.id, flipped[f.direction]) for f in ab.flips] == [
        (f.id, f.direction) for f in ba.flips
    ]


# -- the command -----------------------------------------------------------------------------------
def test_cli_table_json_md(files: tuple[str, str, str]) -> None:
    table = invoke(*files)
    assert table.exit_code == 0, table.output
    assert re.search(r"regressed fields \(1\): b -0\.333", table.stdout)
    assert re.search(r"improved fields \(1\): a \+0\.333", table.stdout)
    assert "not → fully correct (1): d2 (a)" in table.stdout
    assert "fully correct → not (1): d1 (b)" in table.stdout
    assert "micro F1 0.667 → 0.667 (+0.000, 95% CI [" in table.stdout
    data = json.loads(invoke(*files, "--format", "json", "--seed", "1", "--resamples", "50").stdout)
    assert [f["field"] for f in data["regressions"]] == ["b"]
    assert data["bootstrap"] == {"resamples": 50, "seed": 1, "confidence": 0.95}
    md = invoke(*files, "--format", "md").stdout
    assert md.startswith("## extract_mlflow diff: A → B")
    assert "| `b` | 0.667 | 0.333 | -0.333 |" in md


def test_cli_fail_on_regression(files: tuple[str, str, str]) -> None:
    assert invoke(*files).exit_code == 0  # without the flag a regression is only shown
    result = invoke(*files, "--fail-on-regression")
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "regressed: field_f1/b 0.667 → 0.333 (-0.333, tolerance 0)"
    ]
    assert invoke(*files, "--fail-on-regression", "--tolerance", "0.5").exit_code == 0


def _one_error_line(result: Result, *words: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    for word in words:
        assert word in lines[0]
    assert "Traceback" not in result.output


@pytest.mark.parametrize("tolerance", ["nan", "-0.1", "inf"])
def test_cli_bad_tolerance(files: tuple[str, str, str], tolerance: str) -> None:
    _one_error_line(invoke(*files, "--tolerance", tolerance), "tolerance")


def test_cli_bad_bootstrap_options(files: tuple[str, str, str]) -> None:
    _one_error_line(invoke(*files, "--resamples", "0"), "resamples")
    _one_error_line(invoke(*files, "--seed", "-1"), "seed")


def test_cli_missing_file(files: tuple[str, str, str], tmp_path: Path) -> None:
    gold, a, _ = files
    _one_error_line(invoke(gold, a, str(tmp_path / "nope.jsonl")), "nope.jsonl")


def test_cli_malformed_gold_line(files: tuple[str, str, str], tmp_path: Path) -> None:
    _, a, b = files
    bad = tmp_path / "bad_gold.jsonl"
    bad.write_text('{"id": "d1", "a": 1}\n{"id": "d2", "a":\n', encoding="utf-8")
    _one_error_line(invoke(str(bad), a, b), "bad_gold.jsonl")


def _example(*names: str) -> list[str]:
    return [str(EXAMPLE / n) for n in names] + ["--config", str(EXAMPLE / "config.toml")]


def _readme_flips() -> dict[str, list[str]]:
    """The flips examples/invoices/README.md predicts for baseline → improved."""
    text = (EXAMPLE / "README.md").read_text(encoding="utf-8")
    out = {}
    for direction, label in (("fixed", "not → fully correct"), ("broke", "fully correct → not")):
        m = re.search(rf"^- {label}: ((?:inv-\d+(?:, )?)+)", text, re.MULTILINE)
        assert m is not None, f"the README does not predict '{label}'"
        out[direction] = m.group(1).split(", ")
    return out


def test_example_flips_are_those_the_readme_predicts() -> None:
    result = invoke(*_example("gold.jsonl", "pred_baseline.jsonl", "pred_improved.jsonl"),
                    "--format", "json")  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    found = {d: [f["id"] for f in data["flips"] if f["direction"] == d] for d in ("fixed", "broke")}
    assert found == _readme_flips()
    assert found == {"fixed": ["inv-003", "inv-005", "inv-007", "inv-008"],
                     "broke": ["inv-006", "inv-009"]}  # fmt: skip
    assert data["regressions"] == []


@pytest.mark.slow
def test_example_swapped_fails_naming_the_fields_in_a_subprocess() -> None:
    args = _example("gold.jsonl", "pred_improved.jsonl", "pred_baseline.jsonl")
    proc = subprocess.run(
        [sys.executable, "-m", "extract_mlflow", "diff", *args, "--fail-on-regression"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    named = re.findall(r"^regressed: field_f1/(\S+) ", proc.stderr, re.MULTILINE)
    assert "total" in named and "line_items[].qty" in named and "tags[]" in named
    assert len(named) == 18
    assert "regressed fields (18)" in proc.stdout
    assert "Traceback" not in proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning: ")]
    assert warnings == []  # the example's config is sound on its gold set, for either side


def test_diff_is_exported() -> None:
    assert "diff" in extract_mlflow.__all__ and "check_gates" in extract_mlflow.__all__
    assert extract_mlflow.diff.__module__ == "extract_mlflow.diffing"
    assert extract_mlflow.check_gates.__module__ == "extract_mlflow.gate_checks"


# -- --log ----------------------------------------------------------------------------------------
def test_log_writes_both_runs_and_the_diff(
    mlflow_server: Any, files: tuple[str, str, str], tmp_path: Path, mlflow_env: Path
) -> None:
    from mlflow.tracking import MlflowClient

    uri = mlflow_server.uri
    result = invoke(*files, "--log", "--tracking-uri", uri, "--experiment", "diff-log")
    assert result.exit_code == 0, result.output
    ids = re.findall(r"^logged ([AB]) as run (\w+) to ", result.stderr, re.MULTILINE)
    assert [side for side, _ in ids] == ["A", "B"]
    client = MlflowClient(uri)
    run_a, run_b = (client.get_run(run_id) for _, run_id in ids)
    assert run_a.data.metrics["f1"] == pytest.approx(8 / 12)
    assert run_b.data.metrics["field_f1/b"] == pytest.approx(1 / 3)
    assert run_a.info.run_name == files[1] and run_b.info.run_name == files[2]
    local = client.download_artifacts(run_b.info.run_id, "eval/diff.json", str(tmp_path))
    logged = json.loads(Path(local).read_text(encoding="utf-8"))
    assert logged == json.loads(invoke(*files, "--format", "json").stdout)
    page = client.download_artifacts(run_b.info.run_id, "eval/comparison.html", str(tmp_path))
    assert '<section id="doc-1">' in Path(page).read_text(encoding="utf-8")  # with the sides
