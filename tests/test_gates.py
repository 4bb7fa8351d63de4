"""gates: models and files, shortcuts, MetricThreshold, and every check kind (pure, no server)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extract_mlflow.errors import ConfigError
from extract_mlflow.evaluation.stats import Interval
from extract_mlflow.gate_checks import evaluate_gates
from extract_mlflow.gates import (
    Gate,
    GateResult,
    coerce_gates,
    from_metric_thresholds,
    gates_from_data,
    higher_is_better,
    load_gates,
    parse_shortcuts,
)

DESIGN_GATES = """\
[[gate]]
metric = "f1"
threshold = 0.80        # absolute bar (MLflow MetricThreshold.threshold)
max_drop = 0.01         # candidate ≥ baseline − 0.01

[[gate]]
metric = "field_f1/*"
max_drop = 0.05
significant = true
"""


def one(
    gate: Gate | dict[str, Any],
    base: dict[str, float] | None,
    cand: dict[str, float],
    intervals: dict[str, Interval] | None = None,
) -> GateResult:
    g = gate if isinstance(gate, Gate) else Gate(**gate)
    results = evaluate_gates([g], base, cand, intervals)
    assert len(results) == 1
    return results[0]


def interval(low: float, high: float, delta: float | None = None) -> Interval:
    return Interval(delta if delta is not None else (low + high) / 2, low, high, 0.01, 1000)


# -- direction -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        ("f1", True),
        ("macro_f1", True),
        ("field_f1/line_items.qty", True),
        ("documents", True),
        ("teds_by_layout/two_column", True),
        ("parse_failure_rate", False),
        ("hallucination_rate", False),
        ("tokens_per_doc", False),
        ("latency_p95", False),
        ("parse_failure_rate_by_layout/two_column", False),
        ("hallucination_rate_by_topic/photocat", False),
    ],
)
def test_direction_comes_from_the_metric(metric: str, expected: bool) -> None:
    assert higher_is_better(metric) is expected


def test_the_gate_may_override_the_direction() -> None:
    g = Gate(metric="parse_failure_rate", threshold=0.5, higher_is_better=True)
    assert not one(g, None, {"parse_failure_rate": 0.1}).passed


# -- models and files ------------------------------------------------------------------------


def test_the_design_example_loads(tmp_path: Path) -> None:
    path = tmp_path / "gates.toml"
    path.write_text(DESIGN_GATES, encoding="utf-8")
    gates = load_gates(path)
    assert [g.metric for g in gates] == ["f1", "field_f1/*"]
    assert gates[0].threshold == 0.8 and gates[0].max_drop == 0.01
    assert gates[1].significant and gates[1].is_glob


def test_json_gates_load_as_object_or_list(tmp_path: Path) -> None:
    data = [{"metric": "f1", "threshold": 0.8}]
    (tmp_path / "a.json").write_text(json.dumps({"gate": data}))
    (tmp_path / "b.json").write_text(json.dumps(data))
    assert load_gates(tmp_path / "a.json") == load_gates(tmp_path / "b.json")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('[[gate]]\nmetric = "f1"\nmaxdrop = 0.1\n', "unknown gate key 'gate[0].maxdrop'"),
        ('[[gate]]\nmetric = "f1"\nthreshold = 0.8\n[[gate]]\nmetric = "f1"\n', "gate[1]"),
        ('[[gate]]\nmetric = "f1"\nmax_drop = -0.1\n', "gate key 'gate[0].max_drop'"),
        ('[[gate]]\nmetric = "f1"\nthreshold = true\n', "gate key 'gate[0].threshold'"),
        ('[[gate]]\nmetric = "f1"\nthreshold = nan\n', "gate key 'gate[0].threshold'"),
        ('[[gate]]\nmetric = "f1"\nmin_absolute_change = 0\n', "min_absolute_change"),
        ('[[gate]]\nmetric = "f1"\nmin_relative_change = 1.5\n', "min_relative_change"),
        ("[[gate]]\nthreshold = 0.8\n", "gate key 'gate[0].metric'"),
        ('[gates]\nmetric = "f1"\n', "unknown gates key 'gates'"),
        ("gate = 3\n", "list of tables"),
        ("[[gate]\n", "cannot parse gates file"),
    ],
)
def test_bad_gates_files_name_the_file_and_key(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "gates.toml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_gates(path)
    assert str(err.value).startswith(str(path))
    assert message in str(err.value)


def test_a_missing_gates_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="gates file not found"):
        load_gates(tmp_path / "nope.toml")


def test_a_list_marker_in_a_gate_metric_is_dropped() -> None:
    g = Gate(metric="field_f1/line_items[].qty", threshold=0.5)
    result = one(g, None, {"field_f1/line_items.qty": 0.7})
    assert result.metric == "field_f1/line_items.qty" and result.passed


# -- shortcuts and MetricThreshold -----------------------------------------------------------


def test_shortcuts_build_gates() -> None:
    gates = parse_shortcuts(
        min=["f1=0.8"], max_drop=["field_f1/*=0.05"], max=["tokens_per_doc=900"]
    )
    assert gates == [
        Gate(metric="f1", threshold=0.8, higher_is_better=True),
        Gate(metric="tokens_per_doc", threshold=900.0, higher_is_better=False),
        Gate(metric="field_f1/*", max_drop=0.05),
    ]


@pytest.mark.parametrize("item", ["f1", "f1=", "=0.8", "f1=abc", "f1=nan", "f1=inf"])
def test_bad_shortcuts_name_the_option(item: str) -> None:
    with pytest.raises(ConfigError, match=r"--min '.*': expected METRIC=NUMBER"):
        parse_shortcuts(min=[item])


def test_a_negative_max_drop_shortcut_names_the_key() -> None:
    with pytest.raises(ConfigError, match=r"--max-drop 'f1=-0.1': gate key 'max_drop'"):
        parse_shortcuts(max_drop=["f1=-0.1"])


def test_mlflow_metric_thresholds_are_accepted() -> None:
    validation = pytest.importorskip("mlflow.models.evaluation.validation")
    t = validation.MetricThreshold(
        threshold=0.8, min_absolute_change=0.01, min_relative_change=0.05, greater_is_better=True
    )
    (gate,) = from_metric_thresholds({"f1": t})
    assert gate == Gate(
        metric="f1",
        threshold=0.8,
        min_absolute_change=0.01,
        min_relative_change=0.05,
        higher_is_better=True,
    )


def test_duck_typed_thresholds_and_mappings_are_accepted() -> None:
    duck = SimpleNamespace(
        threshold=0.1, min_absolute_change=None, min_relative_change=None, greater_is_better=False
    )
    gates = coerce_gates({"parse_failure_rate": duck, "f1": {"max_drop": 0.02}})
    assert gates == [
        Gate(metric="parse_failure_rate", threshold=0.1, higher_is_better=False),
        Gate(metric="f1", max_drop=0.02),
    ]
    with pytest.raises(ConfigError, match=r"thresholds\['f1'\]: unknown gate key 'bogus'"):
        from_metric_thresholds({"f1": {"bogus": 1}})


def test_coerce_gates_takes_every_form(tmp_path: Path) -> None:
    path = tmp_path / "gates.toml"
    path.write_text(DESIGN_GATES, encoding="utf-8")
    assert coerce_gates(None) == []
    assert coerce_gates(path) == coerce_gates(str(path)) == load_gates(path)
    listed = coerce_gates([Gate(metric="f1", threshold=0.8), {"metric": "recall", "max_drop": 0}])
    assert [g.metric for g in listed] == ["f1", "recall"]
    assert gates_from_data({"gate": []}) == []
    assert coerce_gates({"gate": [{"metric": "f1", "threshold": 0.8}]}) == [
        Gate(metric="f1", threshold=0.8)
    ]


def test_a_passing_drop_check_says_what_happened() -> None:
    better = one({"metric": "f1", "max_drop": 0.01}, {"f1": 0.8}, {"f1": 0.85})
    assert better.checks[0].detail == "f1 improved by 0.05 (max_drop 0.01)"


# -- threshold -------------------------------------------------------------------------------


def test_threshold_higher_is_better() -> None:
    fail = one({"metric": "f1", "threshold": 0.85}, None, {"f1": 0.812})
    assert not fail.passed and fail.reasons == ["f1 0.812 < threshold 0.85"]
    assert one({"metric": "f1", "threshold": 0.85}, None, {"f1": 0.85}).passed


def test_threshold_lower_is_better() -> None:
    fail = one(
        {"metric": "parse_failure_rate", "threshold": 0.05}, None, {"parse_failure_rate": 0.1}
    )
    assert fail.reasons == ["parse_failure_rate 0.1 > threshold 0.05"]
    assert one(
        {"metric": "parse_failure_rate", "threshold": 0.05}, None, {"parse_failure_rate": 0.05}
    ).passed


# -- min_absolute_change / min_relative_change -----------------------------------------------


def test_min_absolute_change_both_directions() -> None:
    g = {"metric": "f1", "min_absolute_change": 0.05}
    assert one(g, {"f1": 0.80}, {"f1": 0.86}).passed
    fail = one(g, {"f1": 0.80}, {"f1": 0.812})
    assert fail.reasons == ["f1 0.8 → 0.812: improvement 0.012 < min_absolute_change 0.05"]
    low = {"metric": "tokens_per_doc", "min_absolute_change": 10.0}
    assert one(low, {"tokens_per_doc": 500}, {"tokens_per_doc": 480}).passed
    assert not one(low, {"tokens_per_doc": 500}, {"tokens_per_doc": 495}).passed


def test_min_relative_change_both_directions() -> None:
    g = {"metric": "f1", "min_relative_change": 0.1}
    assert one(g, {"f1": 0.5}, {"f1": 0.55}).passed
    fail = one(g, {"f1": 0.5}, {"f1": 0.54})
    assert fail.reasons == [
        "f1 0.5 → 0.54: relative improvement 8.00% < min_relative_change 10.00%"
    ]
    low = {"metric": "hallucination_rate", "min_relative_change": 0.5}
    assert one(low, {"hallucination_rate": 0.2}, {"hallucination_rate": 0.1}).passed
    assert not one(low, {"hallucination_rate": 0.2}, {"hallucination_rate": 0.11}).passed


def test_min_relative_change_uses_the_magnitude_of_a_negative_baseline() -> None:
    g = {"metric": "kendall_tau", "min_relative_change": 0.5}
    assert one(g, {"kendall_tau": -0.4}, {"kendall_tau": -0.2}).passed
    assert not one(g, {"kendall_tau": -0.4}, {"kendall_tau": -0.5}).passed


def test_min_relative_change_with_a_zero_baseline_needs_any_improvement() -> None:
    g = {"metric": "f1", "min_relative_change": 0.5}
    assert one(g, {"f1": 0.0}, {"f1": 0.001}).passed
    fail = one(g, {"f1": 0.0}, {"f1": 0.0})
    assert "baseline is 0" in fail.reasons[0]
    low = {"metric": "parse_failure_rate", "min_relative_change": 0.5}
    assert not one(low, {"parse_failure_rate": 0.0}, {"parse_failure_rate": 0.0}).passed
    assert one(low, {"parse_failure_rate": 0.0}, {"parse_failure_rate": -1e-9}).passed


# -- max_drop and significance ---------------------------------------------------------------


def test_max_drop_point_check() -> None:
    g = {"metric": "f1", "max_drop": 0.01}
    assert one(g, {"f1": 0.80}, {"f1": 0.79}).passed  # exactly the allowed drop
    fail = one(g, {"f1": 0.80}, {"f1": 0.769})
    assert fail.reasons == ["f1 dropped 0.031 > max_drop 0.01"]
    low = {"metric": "parse_failure_rate", "max_drop": 0.01}
    assert one(low, {"parse_failure_rate": 0.1}, {"parse_failure_rate": 0.11}).passed
    assert not one(low, {"parse_failure_rate": 0.1}, {"parse_failure_rate": 0.12}).passed


def test_significant_fails_only_when_the_interval_lies_beyond_max_drop() -> None:
    g = {"metric": "field_f1/total", "max_drop": 0.01, "significant": True}
    base, cand = {"field_f1/total": 0.9}, {"field_f1/total": 0.869}
    wide = {"field_f1/total": interval(-0.06, 0.002, -0.031)}
    assert one(g, base, cand, wide).passed  # the point drop alone would fail
    narrow = {"field_f1/total": interval(-0.05, -0.011, -0.031)}
    fail = one(g, base, cand, narrow)
    assert fail.reasons == [
        "field_f1/total dropped 0.031, significantly beyond max_drop 0.01 "
        "(95% CI of the delta [-0.05, -0.011])"
    ]
    touching = {"field_f1/total": interval(-0.05, -0.01, -0.031)}
    assert one(g, base, cand, touching).passed


def test_significance_is_mirrored_for_lower_is_better() -> None:
    g = {"metric": "parse_failure_rate", "max_drop": 0.01, "significant": True}
    base, cand = {"parse_failure_rate": 0.1}, {"parse_failure_rate": 0.13}
    assert not one(g, base, cand, {"parse_failure_rate": interval(0.02, 0.05)}).passed
    assert one(g, base, cand, {"parse_failure_rate": interval(-0.01, 0.05)}).passed
    # an interval wholly below -max_drop is an improvement here
    assert one(
        g, base, {"parse_failure_rate": 0.05}, {"parse_failure_rate": interval(-0.08, -0.02)}
    ).passed


def test_significant_alone_means_any_significant_drop() -> None:
    g: dict[str, Any] = {"metric": "f1", "significant": True}
    assert Gate(**g).drop_limit == 0.0
    base, cand = {"f1": 0.8}, {"f1": 0.79}
    assert one(g, base, cand, {"f1": interval(-0.02, 0.001)}).passed
    assert not one(g, base, cand, {"f1": interval(-0.02, -0.001)}).passed


def test_significance_without_an_interval_checks_the_point_delta_and_says_so() -> None:
    g = {"metric": "macro_f1", "max_drop": 0.01, "significant": True}
    fail = one(g, {"macro_f1": 0.8}, {"macro_f1": 0.7})
    assert not fail.passed and "point delta checked" in fail.reasons[0]
    nan = {"macro_f1": Interval(math.nan, math.nan, math.nan, math.nan, 0)}
    assert not one(g, {"macro_f1": 0.8}, {"macro_f1": 0.7}, nan).passed
    assert one(g, {"macro_f1": 0.8}, {"macro_f1": 0.795}).passed


def test_without_significance_the_interval_is_ignored() -> None:
    g = {"metric": "f1", "max_drop": 0.01}
    assert not one(g, {"f1": 0.8}, {"f1": 0.7}, {"f1": interval(-0.3, 0.1)}).passed


# -- missing metrics, no baseline, globs -----------------------------------------------------


def test_a_metric_missing_from_the_candidate_fails() -> None:
    fail = one({"metric": "f1", "threshold": 0.1}, {"f1": 0.9}, {"recall": 0.9})
    assert fail.reasons == ["f1 is missing from the candidate run"]
    nan = one({"metric": "f1", "threshold": 0.1}, None, {"f1": math.nan})
    assert nan.reasons == ["f1 is missing from the candidate run"]


def test_a_metric_missing_from_the_baseline_fails_change_checks_only() -> None:
    fail = one({"metric": "f1", "max_drop": 0.1}, {"recall": 0.9}, {"f1": 0.9})
    assert fail.reasons == ["f1 is missing from the baseline run"]
    both = one({"metric": "f1", "threshold": 0.95, "max_drop": 0.1}, {}, {"f1": 0.9})
    assert len(both.reasons) == 2
    assert one({"metric": "f1", "threshold": 0.5}, {"recall": 0.9}, {"f1": 0.9}).passed


def test_with_no_baseline_run_change_checks_are_skipped_not_passed() -> None:
    g = {"metric": "f1", "threshold": 0.8, "max_drop": 0.01, "min_absolute_change": 0.1}
    result = one(g, None, {"f1": 0.9})
    assert result.passed
    assert result.skipped == [
        "min_absolute_change skipped: no baseline run",
        "max_drop skipped: no baseline run",
    ]
    assert not one(g, None, {"f1": 0.7}).passed


def test_a_glob_expands_over_both_runs() -> None:
    base = {"field_f1/a": 0.9, "field_f1/b": 0.9, "field_recall/b": 0.9, "f1": 0.9}
    cand = {"field_f1/a": 0.9, "field_f1/c": 0.9, "f1": 0.9}
    results = evaluate_gates([Gate(metric="field_f1/*", max_drop=0.05)], base, cand)
    assert [r.metric for r in results] == ["field_f1/a", "field_f1/b", "field_f1/c"]
    assert [r.passed for r in results] == [True, False, False]
    assert results[1].reasons == ["field_f1/b is missing from the candidate run"]
    assert results[2].reasons == ["field_f1/c is missing from the baseline run"]


def test_a_glob_skips_a_field_the_baseline_only_hallucinated() -> None:
    """No recall in the baseline = no gold values: when the candidate stops predicting the
    field its metrics vanish, which is no regression. Named explicitly, it is still needed."""
    base = {"field_f1/a": 0.9, "field_recall/a": 0.9, "field_f1/po_number": 0.0}
    cand = {"field_f1/a": 0.95, "field_recall/a": 0.95}
    results = evaluate_gates([Gate(metric="field_f1/*", max_drop=0.01)], base, cand)
    assert [(r.metric, r.passed) for r in results] == [("field_f1/a", True)]
    named = evaluate_gates([Gate(metric="field_f1/po_number", max_drop=0.01)], base, cand)
    assert not named[0].passed


def test_a_glob_matching_nothing_fails_and_says_so() -> None:
    result = one({"metric": "teds_by_*", "threshold": 0.5}, {"f1": 1.0}, {"f1": 1.0})
    assert not result.passed
    assert result.reasons == ["no metric matches 'teds_by_*' in either run"]


def test_every_failing_check_is_listed() -> None:
    g = {
        "metric": "f1",
        "threshold": 0.9,
        "min_absolute_change": 0.01,
        "min_relative_change": 0.01,
        "max_drop": 0.01,
    }
    result = one(g, {"f1": 0.8}, {"f1": 0.7})
    assert [c.kind for c in result.checks if c.passed is False] == [
        "threshold",
        "min_absolute_change",
        "min_relative_change",
        "max_drop",
    ]
    assert result.to_dict()["passed"] is False


# -- MLflow as the oracle --------------------------------------------------------------------

values = st.one_of(
    st.sampled_from([0.0, -0.0, 0.5, 1.0, -0.25]),
    st.floats(-10, 10, allow_nan=False, allow_infinity=False),
)


@settings(max_examples=300, deadline=None)
@given(
    base=values,
    cand=values,
    threshold=st.none() | values,
    absolute=st.none() | st.floats(1e-6, 5),
    relative=st.none() | st.floats(0.0, 1.0),
    greater=st.booleans(),
)
def test_mlflow_semantics_exactly(
    base: float,
    cand: float,
    threshold: float | None,
    absolute: float | None,
    relative: float | None,
    greater: bool,
) -> None:
    validation = pytest.importorskip("mlflow.models.evaluation.validation")
    if threshold is None and absolute is None and relative is None:
        threshold = 0.5
    t = validation.MetricThreshold(threshold, absolute, relative, greater)
    try:
        validation._validate({"m": t}, {"m": cand}, {"m": base})
        mlflow_passed = True
    except validation.ModelValidationFailedException:
        mlflow_passed = False
    (gate,) = from_metric_thresholds({"m": t})
    assert one(gate, {"m": base}, {"m": cand}).passed is mlflow_passed


@settings(max_examples=100, deadline=None)
@given(base=values, cand=values, drop=st.floats(0, 5), sig=st.booleans())
def test_a_run_against_itself_passes_every_max_drop_gate(
    base: float, cand: float, drop: float, sig: bool
) -> None:
    g = Gate(metric="m", max_drop=drop, significant=sig)
    same = {"m": Interval(0.0, 0.0, 0.0, 1.0, 1000)}
    assert one(g, {"m": base}, {"m": base}, same).passed
    # and a drop within max_drop passes, in either direction
    if abs(cand - base) <= drop * 0.999 - 1e-9:
        assert one(g, {"m": base}, {"m": cand}).passed


def _scored_report() -> Any:
    from extract_mlflow import Config, evaluate

    gold = [{"id": "a", "total": 1, "items": [{"qty": 2}]}]
    pred = [{"id": "a", "total": 1, "items": [{"qty": 3}]}]
    return evaluate(gold, pred, Config())


@pytest.mark.parametrize(
    ("min_f1", "field_bars"),
    [
        (math.nan, []),
        (math.inf, []),
        (-math.inf, []),
        (None, [("items[].qty", math.nan)]),
        (None, [("total", math.inf)]),
    ],
)
def test_check_report_refuses_a_bar_that_is_not_a_finite_number(
    min_f1: float | None, field_bars: list[tuple[str, float]]
) -> None:
    """NaN compares false both ways (it would pass every report), inf fails every one."""
    from extract_mlflow.errors import InputError
    from extract_mlflow.gate_checks import check_report

    report = _scored_report()
    with pytest.raises(InputError, match="finite"):
        check_report(report, min_f1, field_bars)


def test_check_report_reads_finite_bars() -> None:
    from extract_mlflow.gate_checks import check_report

    report = _scored_report()  # total right, items[].qty wrong: micro F1 0.5
    assert check_report(report, 0.5, [("total", 1.0)]) == []
    assert check_report(report, 0.6, [("items.qty", 0.1)]) == [
        "f1 0.500 is below 0.6",
        "field_f1/items[].qty 0.000 is below 0.1",
    ]
