"""A verdict counts what was checked: the headline of `compare` and `promote` (table, markdown,
JSON) and the summary tag on the version say how many checks were decided, failed and skipped,
never "all N gated metrics passed" when most of them could not run. Counted by hand here, then
read back from a real `mlflow server` through the CLI and MlflowClient."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.mlflow_server import MlflowServer
from support.registry import client_for, score

from extract_mlflow.cli import main
from extract_mlflow.comparison import compare
from extract_mlflow.core.language import language
from extract_mlflow.gate_checks import Tally, tally_checks
from extract_mlflow.gates import Gate
from extract_mlflow.tracking.log import log_report
from extract_mlflow.tracking.registry import SUMMARY_TAG, VERDICT_TAG
from extract_mlflow.views.comparison import checks_text, verdict

# 8 gated metrics: thresholds on f1 and precision (2 checks that need no baseline), max_drop on
# the other 7 (skipped without a baseline)
GATES_TOML = """
[[gate]]
metric = "f1"
threshold = 0.8
max_drop = 0.01

[[gate]]
metric = "precision"
threshold = 0.5

[[gate]]
metric = "recall"
max_drop = 0.01

[[gate]]
metric = "macro_f1"
max_drop = 0.01

[[gate]]
metric = "parse_failure_rate"
max_drop = 0.01

[[gate]]
metric = "documents"
max_drop = 0

[[gate]]
metric = "field_f1/total"
max_drop = 0.05

[[gate]]
metric = "field_f1/vendor.name"
max_drop = 0.05
"""
FIRST = "2 checked, 7 skipped: no baseline run"


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def gates_file(folder: Path) -> Path:
    path = folder / "gates.toml"
    path.write_text(GATES_TOML, encoding="utf-8")
    return path


# -- pure: the one count --------------------------------------------------------------------------
def test_the_tally_counts_checks_not_gates() -> None:
    cand = score("pred_improved.jsonl")
    gates = [
        Gate(metric="f1", threshold=0.8, max_drop=0.01),  # 2 checks
        Gate(metric="recall", threshold=0.99),  # fails: recall 0.989 < 0.99
        Gate(metric="field_f1/*", max_drop=0.05),  # one check per field
        Gate(metric="nothing", threshold=0.1),  # missing from the candidate: fails
    ]
    fields = sum(k.startswith("field_f1/") for k in cand.metrics())
    alone = compare(None, cand, gates)
    assert alone.tally == Tally(checked=3, failed=2, skipped=1 + fields,
                                reasons=("no baseline run",))  # fmt: skip
    against = compare(score("pred_baseline.jsonl"), cand, gates)
    assert against.tally == Tally(checked=4 + fields, failed=2, skipped=0)
    assert tally_checks(()) == Tally(0, 0, 0)


def test_every_headline_counts_from_the_tally() -> None:
    gates = [Gate(metric="f1", threshold=0.8, max_drop=0.01), Gate(metric="recall", max_drop=0)]
    result = compare(None, score("pred_improved.jsonl"), gates)
    assert verdict(result) == "PASSED: 1 checked, 2 skipped: no baseline run"
    assert result.to_table().startswith("PASSED: 1 checked, 2 skipped: no baseline run\n")
    assert result.to_markdown().startswith(
        "## ✅ extract_mlflow compare: PASSED: 1 checked, 2 skipped: no baseline run\n"
    )
    assert result.to_dict()["checks"] == {
        "checked": 1, "failed": 0, "skipped": 2, "skipped_because": ["no baseline run"],
    }  # fmt: skip
    with language("ko"):
        assert checks_text(result.tally) == "검사 1개, 건너뜀 2개: no baseline run"
    failed = compare(score("pred_improved.jsonl"), score("pred_baseline.jsonl"), gates)
    assert verdict(failed) == "FAILED: 3 checked, 2 failed"
    assert verdict(compare(None, score("pred_improved.jsonl"), gates[1:])) == (
        "NOT GATED: 0 checked, 1 skipped: no baseline run"
    )


# -- against a real server ------------------------------------------------------------------------
@pytest.mark.server
def test_promote_onto_an_empty_alias_counts_what_it_checked(
    mlflow_server: MlflowServer, tmp_path: Path
) -> None:
    uri, name = mlflow_server.uri, f"counts-{uuid.uuid4().hex[:8]}"
    for pred in ("pred_improved.jsonl", "pred_baseline.jsonl"):
        log_report(score(pred), tracking_uri=uri, experiment=name, register=name)
    gates = str(gates_file(tmp_path))
    code, out, err = cli("promote", name, "1", "--alias", "production", "--gates", gates,
                         "--tracking-uri", uri)  # fmt: skip
    assert code == 0, err
    first_line = out.splitlines()[2]
    assert first_line == f"PASSED: {FIRST}"
    assert "8 gated" not in out + err and "all 8" not in out + err
    assert sum(line.startswith("  skipped: ") for line in out.splitlines()) == 7
    tags = client_for(uri).get_model_version(name, "1").tags
    assert tags[VERDICT_TAG] == "passed"
    assert tags[SUMMARY_TAG] == (
        f"f1 0.991; no version held @production: absolute thresholds only; {FIRST}"
    )
    # the same gates against the holder now: every check runs, none is skipped; by hand, the
    # baseline predictions drop f1, recall, macro_f1, field_f1/total and field_f1/vendor.name
    # and raise parse_failure_rate (6 failed), keep documents, clear both thresholds
    code, out, err = cli("promote", name, "2", "--alias", "production", "--gates", gates,
                         "--tracking-uri", uri, "--format", "json")  # fmt: skip
    assert code == 1, err
    data = json.loads(out)
    assert data["comparison"]["checks"] == {
        "checked": 9, "failed": 6, "skipped": 0, "skipped_because": [],
    }  # fmt: skip
    summary = client_for(uri).get_model_version(name, "2").tags[SUMMARY_TAG]
    assert summary.startswith("f1 0.865 vs 0.991 (-0.126); 9 checked, 6 failed; gate failed: ")


@pytest.mark.server
def test_compare_counts_checks_in_table_markdown_and_json(
    mlflow_server: MlflowServer, tmp_path: Path
) -> None:
    uri, experiment = mlflow_server.uri, f"counts-{uuid.uuid4().hex[:8]}"
    base, cand = (
        log_report(score(p), tracking_uri=uri, experiment=experiment).run_id
        for p in ("pred_baseline.jsonl", "pred_improved.jsonl")
    )
    gates = str(gates_file(tmp_path))
    common = ("compare", base, cand, "--tracking-uri", uri, "--gates", gates)
    code, out, err = cli(*common)
    assert code == 0, err
    assert out.startswith("PASSED: 9 checked\n")
    code, out, err = cli(*common, "--format", "md")
    assert out.startswith("## ✅ extract_mlflow compare: PASSED: 9 checked\n")
    code, out, err = cli(*common, "--format", "json")
    data = json.loads(out)
    assert data["checks"] == {"checked": 9, "failed": 0, "skipped": 0, "skipped_because": []}
    assert data["evaluated_checks"] == 9
