"""Field path -> MLflow metric key: injective over one evaluation's paths, always valid for
MLflow (checked with MLflow's own validator), readable for ordinary paths, recorded in the
report, and a gate may name the field by its path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from mlflow.utils.validation import MAX_ENTITY_KEY_LENGTH, _validate_metric_name
from support.mlflow_server import MlflowServer

from extract_mlflow import evaluate
from extract_mlflow.cli import main
from extract_mlflow.comparison import compare
from extract_mlflow.core.keys import (
    FIELD_METRICS,
    field_keys,
    metric_key,
    resolve_metric,
    slice_key,
)
from extract_mlflow.core.keys import metric_key as metric_key_at_its_old_home

NASTY = ["p/q", "p_q", "x[]", "x", "k:1", "k_1", ".", "..", "a/../b", "~", "", " pad ", "é.ü"]
LONG = ["L" * 300 + "a", "L" * 300 + "b", "L" * 240]


def assert_valid(key: str) -> None:
    """MLflow's own check (characters, path rules) and its length limit; no ':' (Windows)."""
    _validate_metric_name(key)  # type: ignore[no-untyped-call]
    assert len(key) <= MAX_ENTITY_KEY_LENGTH and ":" not in key, key


def all_keys(keys: dict[str, str]) -> list[str]:
    return [f"{m}/{s}" for s in keys.values() for m in FIELD_METRICS]


def test_ordinary_paths_keep_todays_readable_keys() -> None:
    keys = field_keys(["line_items[].qty", "vendor.name", "tags[]", "two words", "a-b_c.d"])
    assert keys == {
        "line_items[].qty": "line_items.qty",
        "vendor.name": "vendor.name",
        "tags[]": "tags",
        "two words": "two words",
        "a-b_c.d": "a-b_c.d",
    }
    assert metric_key("field_f1", "line_items[].qty") == "field_f1/line_items.qty"
    assert metric_key_at_its_old_home is metric_key


def test_nasty_paths_get_distinct_valid_keys() -> None:
    keys = field_keys(NASTY + LONG)
    assert len(set(keys.values())) == len(keys)
    for key in all_keys(keys):
        assert_valid(key)
    assert keys["p_q"] == "p_q" and keys["p/q"].startswith("p_q-")
    assert keys["k_1"] == "k_1" and keys["k:1"].startswith("k_1-")
    assert keys["x"] == "x" and keys["x[]"].startswith("x-")
    assert "~" not in keys["~"] and all(len(keys[p]) <= 233 for p in LONG)


def test_a_gold_path_keeps_the_readable_key_before_a_predicted_one() -> None:
    keys = field_keys(["x", "x[]"], gold={"x[]"})  # x only predicted (hallucinated)
    assert keys["x[]"] == "x" and keys["x"].startswith("x-")
    keys = field_keys(["x", "x[]"])  # no gold said: the verbatim path keeps it
    assert keys["x"] == "x" and keys["x[]"].startswith("x-")


def test_the_old_keys_were_rejected_or_ambiguous() -> None:
    """What the mapping fixes: these paths made keys MLflow refused or shared one key."""
    for path in (".", "..", "L" * 300):
        assert_valid(metric_key("field_f1", path))


PATH_CHARS = st.sampled_from([*"ab_.-/:[] ~\x1b\t\\é1", "[]", ".."])


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(PATH_CHARS, max_size=40).map("".join), unique=True, max_size=12),
    st.data(),
)
def test_distinct_paths_get_distinct_valid_keys(paths: list[str], data: Any) -> None:
    gold = set(data.draw(st.lists(st.sampled_from(paths), unique=True))) if paths else set()
    keys = field_keys(paths, gold)
    assert list(keys) == paths
    assert len(set(keys.values())) == len(paths)
    for key in all_keys(keys):
        assert_valid(key)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.text(alphabet="abc_", min_size=1, max_size=30))
def test_any_text_makes_a_valid_key(path: str, prefix: str) -> None:
    assert_valid(metric_key(prefix, path))
    assert_valid(slice_key("teds", prefix, path))


GOLD = [
    {"id": "a", "p/q": 1, "p_q": 2, "k:1": "u", "k_1": "v", ".": 3, "..": 4, "L" * 300: 5},
    {"id": "b", "p/q": 1, "p_q": 2, "k:1": "u", "k_1": "v", ".": 3, "..": 4, "L" * 300: 5},
]


def nasty_report(change: dict[str, Any] | None = None) -> Any:
    pred = [{**doc, **(change or {})} for doc in GOLD]
    return evaluate(GOLD, pred)


def test_report_logs_distinct_keys_and_records_the_mapping() -> None:
    report = nasty_report({"p/q": 9})
    keys = report.field_keys()
    assert set(keys) == set(report.fields)
    data = report.to_dict()
    assert data["field_keys"] == keys
    metrics = report.metrics()
    assert metrics[f"field_f1/{keys['p/q']}"] == 0.0  # the broken field, under its own key
    assert metrics["field_f1/p_q"] == 1.0
    for key in metrics:
        assert_valid(key)


def test_a_gate_names_a_field_by_its_path() -> None:
    base, cand = nasty_report(), nasty_report({"p/q": 9})
    for name in ("field_f1/p/q", f"field_f1/{base.field_keys()['p/q']}"):
        result = compare(base, cand, [{"metric": name, "max_drop": 0.0}])
        assert result.exit_code == 1, name
        assert result.gates[0].metric == f"field_f1/{base.field_keys()['p/q']}"
    assert compare(base, cand, [{"metric": "field_f1/p_q", "max_drop": 0.0}]).exit_code == 0
    assert compare(base, cand, [{"metric": "field_f1/*", "max_drop": 0.0}]).exit_code == 1


def test_a_gate_names_a_list_field_by_its_path() -> None:
    gold: list[dict[str, Any]] = [{"id": "a", "x": [1, 2], "y": {"x": 1}}, {"id": "b", "x": 3}]
    base = evaluate(gold, gold)
    cand = evaluate(gold, [{"id": "a", "x": [1, 5], "y": {"x": 1}}, {"id": "b", "x": 3}])
    assert set(base.field_keys()) == {"x", "x[]", "y.x"}
    assert len(set(base.field_keys().values())) == 3
    assert compare(base, cand, [{"metric": "field_f1/x[]", "max_drop": 0.0}]).exit_code == 1
    assert compare(base, cand, [{"metric": "field_f1/x", "max_drop": 0.0}]).exit_code == 0


def test_resolve_metric_leaves_other_names_alone() -> None:
    keys = {"p/q": "p_q-0123456789"}
    assert resolve_metric("f1", keys) == "f1"
    assert resolve_metric("field_f1/*", keys) == "field_f1/*"
    assert resolve_metric("field_f1/line_items[].qty", {}) == "field_f1/line_items.qty"
    assert resolve_metric("field_recall/p/q", keys) == "field_recall/p_q-0123456789"


@pytest.mark.server
def test_nasty_paths_log_and_read_back(
    mlflow_env: Path, mlflow_server: MlflowServer, tmp_path: Path
) -> None:
    from mlflow.tracking import MlflowClient

    from extract_mlflow.tracking.log import log_report

    report = nasty_report({"k:1": "w"})
    logged = log_report(report, tracking_uri=mlflow_server.uri, experiment="nasty-keys")
    client = MlflowClient(mlflow_server.uri)
    run = client.get_run(logged.run_id)
    assert run.info.status == "FINISHED"
    assert run.data.metrics == report.metrics()
    keys = report.field_keys()
    assert run.data.metrics[f"field_f1/{keys['k:1']}"] == 0.0
    assert run.data.metrics["field_f1/k_1"] == 1.0
    path = client.download_artifacts(logged.run_id, "eval/diagnostics.json", str(tmp_path))
    assert json.loads(Path(path).read_text(encoding="utf-8"))["field_keys"] == keys
    # a gate names the field by its path; the keys come back from the runs' documents
    base = log_report(nasty_report(), tracking_uri=mlflow_server.uri, experiment="nasty-keys")
    for name, code in (("k:1", 1), ("k_1", 0)):
        result = CliRunner().invoke(
            main,
            ["compare", base.run_id, logged.run_id, "--tracking-uri", mlflow_server.uri,
             "--max-drop", f"field_f1/{name}=0"],
        )  # fmt: skip
        assert result.exit_code == code, (name, result.output)
        assert ("dropped" in result.stderr) == bool(code)  # read, not missing
