"""compare: building a Comparison (rows, gates, flips, signatures) and its three views."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extract_mlflow import evaluate
from extract_mlflow.comparison import (
    Comparison,
    IncomparableRunsError,
    ScoredRun,
    build_comparison,
    compare,
)
from extract_mlflow.core.signature import signature_difference
from extract_mlflow.errors import ConfigError, ExtractMlflowError, InputError
from extract_mlflow.gates import Gate
from extract_mlflow.report import Report
from extract_mlflow.views.frames import report_frame

BROKEN_A = '{"id": "a", "total": 1'  # a parse failure with a recoverable id
SIG = "extract_mlflow:0.1.0|config:abc|gold:111"
GOLD: list[dict[str, Any]] = [
    {"id": "a", "total": 10, "vendor": "Acme", "items": [{"sku": "x", "qty": 1}]},
    {"id": "b", "total": 20, "vendor": "Bolt", "items": [{"sku": "y", "qty": 2}]},
    {"id": "c", "total": 30, "vendor": "Core", "items": [{"sku": "z", "qty": 3}]},
    {"id": "d", "total": 40, "vendor": "Dyne", "items": []},
]


def report(changes: dict[str, Any]) -> Report:
    """GOLD predicted exactly, except the documents in `changes` (a row, or raw text)."""
    return evaluate(GOLD, [changes.get(g["id"], g) for g in GOLD])


def frame(rows: list[tuple[str, str, int, int, int]]) -> pd.DataFrame:
    """A counts frame with one field `f` that carries all the counts."""
    df = pd.DataFrame(rows, columns=["id", "status", "tp", "fp", "fn"])
    return df.assign(**{"field_tp/f": df.tp, "field_fp/f": df.fp, "field_fn/f": df.fn})


def same_sig(**kwargs: Any) -> dict[str, Any]:
    return {"baseline_signature": SIG, "candidate_signature": SIG, **kwargs}


# -- from reports ----------------------------------------------------------------------------


def test_comparing_two_reports() -> None:
    base = report({"b": {"id": "b", "total": 21, "vendor": "Bolt", "items": []}})
    cand = report({"a": BROKEN_A, "c": {"id": "c", "total": 30, "vendor": "Core"}})
    result = compare(base, cand, gates=[{"metric": "f1", "max_drop": 0.01}], resamples=200)
    f1 = result.row("f1")
    assert f1 is not None and f1.interval is not None
    assert f1.delta == pytest.approx(cand.micro.f1 - base.micro.f1)  # type: ignore[operator]
    assert f1.interval.delta == pytest.approx(f1.delta)
    assert not result.passed and result.exit_code == 1
    assert result.broke == ("a", "c") and result.fixed == ("b",)
    assert [d.id for d in result.regressed] == ["a", "c"]
    assert result.regressed[0].candidate_status == "parse_failure"
    assert result.paired == 4


def test_a_report_against_itself_passes_and_nothing_flips() -> None:
    r = report({"b": {"id": "b", "total": 21, "vendor": "Bolt", "items": []}})
    gates = [Gate(metric="*", max_drop=0.0), Gate(metric="field_f1/*", significant=True)]
    result = compare(r, r, gates=gates, resamples=100, min_documents=1)
    assert result.passed and result.comparable
    assert (result.broke, result.fixed, result.regressed) == ((), (), ())
    for row in result.rows:
        assert row.delta == 0.0
        if row.interval is not None:
            assert (row.interval.low, row.interval.high, row.interval.p_value) == (0, 0, 1)


# -- property tests on frames ----------------------------------------------------------------

docs = st.lists(
    st.tuples(
        st.sampled_from(["scored", "scored", "missing", "parse_failure"]),
        st.integers(0, 5),
        st.integers(0, 3),
        st.integers(0, 3),
    ),
    min_size=2,
    max_size=25,
)


def to_frame(rows: list[tuple[str, int, int, int]]) -> pd.DataFrame:
    return frame([(f"doc{i}", *r) for i, r in enumerate(rows)])


def metrics_of(df: pd.DataFrame) -> dict[str, float]:
    tp, fp, fn = (int(df[c].sum()) for c in ("tp", "fp", "fn"))
    out = {"documents": float(len(df))}
    if 2 * tp + fp + fn:
        out["f1"] = out["field_f1/f"] = 2 * tp / (2 * tp + fp + fn)
    return out


@settings(max_examples=40, deadline=None)
@given(rows=docs, drop=st.floats(0, 0.2), sig=st.booleans())
def test_a_run_against_itself(
    rows: list[tuple[str, int, int, int]], drop: float, sig: bool
) -> None:
    df = to_frame(rows)
    m = metrics_of(df)
    gates = [Gate(metric="*", max_drop=drop, significant=sig)]
    result = build_comparison(m, m, df, df, gates, resamples=50, min_documents=0, **same_sig())
    assert result.passed
    assert all(r.delta == 0 for r in result.rows)
    assert all(
        r.interval is None or (r.interval.low, r.interval.high) == (0, 0) for r in result.rows
    )
    assert (result.broke, result.fixed, result.regressed) == ((), (), ())


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(a=docs, b=docs, seed=st.integers(0, 1000))
def test_swapping_sides_mirrors_deltas_and_flips(
    a: list[tuple[str, int, int, int]], b: list[tuple[str, int, int, int]], seed: int
) -> None:
    n = min(len(a), len(b))
    fa, fb = to_frame(a[:n]), to_frame(b[:n])
    ma, mb = metrics_of(fa), metrics_of(fb)
    forward = build_comparison(ma, mb, fa, fb, seed=seed, resamples=40, **same_sig())
    backward = build_comparison(mb, ma, fb, fa, seed=seed, resamples=40, **same_sig())
    for fw, bw in zip(forward.rows, backward.rows, strict=True):
        assert fw.metric == bw.metric
        if fw.delta is not None:
            assert bw.delta == pytest.approx(-fw.delta)
        if fw.interval is not None and bw.interval is not None:
            assert bw.interval.low == pytest.approx(-fw.interval.high)
    assert forward.broke == backward.fixed and forward.fixed == backward.broke


# -- documents -------------------------------------------------------------------------------


def test_flips_and_the_most_regressed_documents() -> None:
    base = frame(
        [
            ("ok-ok", "scored", 3, 0, 0),
            ("ok-bad", "scored", 3, 0, 0),
            ("bad-ok", "scored", 2, 1, 1),
            ("ok-failed", "scored", 2, 0, 0),
            ("empty", "scored", 0, 0, 0),
            ("worse-errors", "scored", 0, 1, 0),
        ]
    )
    cand = frame(
        [
            ("ok-ok", "scored", 3, 0, 0),
            ("ok-bad", "scored", 2, 1, 1),
            ("bad-ok", "scored", 3, 0, 0),
            ("ok-failed", "parse_failure", 0, 0, 2),
            ("empty", "scored", 0, 0, 0),
            ("worse-errors", "scored", 0, 3, 0),
        ]
    )
    result = build_comparison(
        metrics_of(base), metrics_of(cand), base, cand, **same_sig(), resamples=50
    )
    assert result.broke == ("ok-bad", "ok-failed")
    assert result.fixed == ("bad-ok",)
    assert [d.id for d in result.regressed] == ["ok-failed", "ok-bad", "worse-errors"]
    worst = result.regressed[0]
    assert (worst.baseline_f1, worst.candidate_f1, worst.delta_f1) == (1.0, 0.0, -1.0)
    assert (worst.baseline_errors, worst.candidate_errors) == (0, 2)
    assert result.regressed[2].delta_f1 == 0.0  # no F1 change, but more errors


def test_a_document_missing_its_status_column_is_judged_by_counts() -> None:
    base = frame([("a", "scored", 1, 0, 0), ("b", "scored", 1, 0, 0)]).drop(columns="status")
    cand = frame([("a", "scored", 1, 0, 0), ("b", "scored", 0, 0, 1)]).drop(columns="status")
    result = build_comparison({}, {}, base, cand, **same_sig(), resamples=20)
    assert result.broke == ("b",) and result.regressed[0].baseline_status is None


def test_top_limits_the_regressed_documents() -> None:
    base = frame([(f"d{i}", "scored", 2, 0, 0) for i in range(30)])
    cand = frame([(f"d{i}", "scored", 2, 0, i % 3) for i in range(30)])
    result = build_comparison({}, {}, base, cand, **same_sig(), resamples=20, top=4)
    assert [d.id for d in result.regressed] == ["d11", "d14", "d17", "d2"]


def test_unpaired_documents_are_noted() -> None:
    base = frame([("a", "scored", 1, 0, 0), ("b", "scored", 1, 0, 0), ("c", "scored", 1, 0, 0)])
    cand = frame([("a", "scored", 1, 0, 0), ("b", "scored", 1, 0, 0), ("z", "scored", 1, 0, 0)])
    result = build_comparison({}, {}, base, cand, **same_sig(), resamples=20)
    assert result.paired == 2 and result.baseline_only == ("c",) and result.candidate_only == ("z",)
    assert any("1 only in the baseline, 1 only in the candidate" in n for n in result.notes)


# -- signatures ------------------------------------------------------------------------------


def test_different_signatures_are_refused() -> None:
    other = SIG.replace("gold:111", "gold:222")
    with pytest.raises(IncomparableRunsError) as err:
        build_comparison(
            {"f1": 1.0}, {"f1": 1.0}, baseline_signature=SIG, candidate_signature=other
        )
    assert "gold 111 vs 222" in str(err.value)
    assert "--allow-incomparable" in str(err.value)
    assert isinstance(err.value, InputError) and isinstance(err.value, ExtractMlflowError)


@pytest.mark.parametrize(("base", "cand"), [(None, SIG), (SIG, None), (None, None)])
def test_a_missing_signature_is_refused(base: str | None, cand: str | None) -> None:
    with pytest.raises(IncomparableRunsError, match="signature: cannot tell how it was scored"):
        build_comparison(
            {"f1": 1.0}, {"f1": 1.0}, baseline_signature=base, candidate_signature=cand
        )


def test_allow_incomparable_compares_and_says_so() -> None:
    other = SIG.replace("config:abc", "config:def")
    result = build_comparison(
        {"f1": 0.8},
        {"f1": 0.9},
        baseline_signature=SIG,
        candidate_signature=other,
        allow_incomparable=True,
    )
    assert not result.comparable
    assert any("config abc vs def" in n for n in result.notes)
    assert "config abc vs def" in result.to_markdown()


def test_signature_difference() -> None:
    assert signature_difference(SIG, SIG) is None
    assert signature_difference("x", "y") == "the runs were scored differently (part0 x vs y)"


# -- no baseline, no frames, gate forms ------------------------------------------------------


def test_without_a_baseline_only_thresholds_apply() -> None:
    gates = [{"metric": "f1", "threshold": 0.8, "max_drop": 0.01}]
    result = build_comparison(None, {"f1": 0.9}, gates=gates, candidate_signature=SIG)
    assert result.passed and not result.has_baseline and result.paired is None
    assert result.gates[0].skipped == ["max_drop skipped: no baseline run"]
    text = result.to_markdown()
    assert "no baseline" in text and "max_drop skipped" in text
    assert not build_comparison(None, {"f1": 0.7}, gates=gates).passed


def test_without_frames_there_are_no_intervals_and_significance_falls_back() -> None:
    gates = [{"metric": "f1", "max_drop": 0.01, "significant": True}]
    result = build_comparison({"f1": 0.9}, {"f1": 0.8}, gates=gates, **same_sig())
    assert not result.passed
    assert "point delta checked" in result.gates[0].reasons[0]
    assert any("no per-document counts" in n for n in result.notes)


def test_mlflow_metric_thresholds_work_as_gates() -> None:
    validation = pytest.importorskip("mlflow.models.evaluation.validation")
    gates = {"f1": validation.MetricThreshold(threshold=0.95, greater_is_better=True)}
    result = build_comparison({"f1": 0.9}, {"f1": 0.9}, gates=gates, **same_sig())
    assert [r for g in result.failed_gates for r in g.reasons] == ["f1 0.9 < threshold 0.95"]


def test_a_gates_file_path_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "gates.toml"
    path.write_text('[[gate]]\nmetric = "f1"\nthreshold = 0.5\n', encoding="utf-8")
    assert build_comparison({"f1": 0.9}, {"f1": 0.9}, gates=path, **same_sig()).passed
    with pytest.raises(ConfigError):
        build_comparison({"f1": 0.9}, {"f1": 0.9}, gates=[{"metric": "f1"}], **same_sig())


def test_scored_runs_carry_refs() -> None:
    r = report({})
    run = ScoredRun.from_report(r, ref="runs:/abc")
    result = compare(run, ScoredRun(r.metrics(), None, r.signature(), "runs:/def"))
    assert "runs:/abc → runs:/def" in result.to_table()
    assert result.paired is None


# -- views -----------------------------------------------------------------------------------


def failing_comparison() -> Comparison:
    base = report({"b": {"id": "b", "total": 21, "vendor": "Bolt", "items": []}})
    cand = report({"a": BROKEN_A, "c": {"id": "c", "total": 31, "vendor": "Core"}})
    gates = [
        {"metric": "f1", "threshold": 0.99},
        {"metric": "field_f1/*", "max_drop": 0.05},
        {"metric": "parse_failure_rate", "max_drop": 0.0},
    ]
    return compare(
        ScoredRun.from_report(base, "runs:/base"),
        ScoredRun.from_report(cand, "runs:/cand"),
        gates=gates,
        resamples=100,
    )


def test_the_markdown_puts_the_verdict_first() -> None:
    text = failing_comparison().to_markdown()
    lines = text.splitlines()
    assert lines[0].startswith("## ❌ extract_mlflow compare: FAILED:")
    assert "### Failing gates" in text and "< threshold 0.99" in text
    assert "| `f1` |" in text and "95% CI of Δ" in text
    assert "| `items.qty` |" in text  # per-field F1 table, [] dropped as in metric keys
    assert "- fully correct → not (2): `a`, `c`" in text
    assert "| `a` | 1.000 → 0.000 | 0 → 4 | scored → parse_failure |" in text
    assert text.index("### Failing gates") < text.index("### Metrics") < text.index("### Documents")


def test_the_json_view_is_plain_data() -> None:
    result = failing_comparison()
    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert data["passed"] is False and data["baseline"] == "runs:/base"
    assert data["failures"] and all(isinstance(f, str) for f in data["failures"])
    f1 = next(m for m in data["metrics"] if m["metric"] == "f1")
    assert set(f1) >= {"baseline", "candidate", "delta", "ci_low", "ci_high", "p_value"}
    assert data["documents"]["broke"] == ["a", "c"]
    assert data["bootstrap"] == {"resamples": 100, "seed": 0, "confidence": 0.95}
    assert result.to_json().endswith("}\n")


def test_the_table_view() -> None:
    text = failing_comparison().to_table()
    assert text.startswith("FAILED:")
    assert "gate failed: f1 " in text and "fully correct → not (2): a, c" in text


def test_passing_views() -> None:
    r = report({})
    result = compare(r, r, [Gate(metric="f1", max_drop=0.0)], resamples=20)
    assert result.passed and result.exit_code == 0 and result.evaluated == 1
    assert result.to_markdown().startswith("## ✅ extract_mlflow compare: PASSED: 1 checked\n")
    assert result.to_table().startswith("PASSED: 1 checked\n")


def test_no_gates_is_no_verdict() -> None:
    r = report({})
    result = compare(r, r, resamples=20)
    assert not result.passed and result.gates == () and result.exit_code == 2
    assert result.to_markdown().startswith("## ⚠️ extract_mlflow compare: NOT GATED")
    assert result.to_table().startswith("NOT GATED: no gate was evaluated")
    assert "no gate was given" in result.unchecked_reason()
    assert result.to_dict()["evaluated_checks"] == 0


def test_nan_metrics_become_none() -> None:
    result = build_comparison({"f1": float("nan")}, {"f1": 0.5}, **same_sig())
    row = result.row("f1")
    assert row is not None and row.baseline is None and row.delta is None
    assert json.dumps(result.to_dict(), allow_nan=False)


def test_rows_are_headline_first_then_fields() -> None:
    metrics = {
        "field_f1/b": 1.0,
        "zeta": 1.0,
        "f1": 1.0,
        "documents": 2.0,
        "field_recall/b": 1.0,
        "teds_by_layout/x": 1.0,
        "precision": 1.0,
    }
    result = build_comparison(metrics, metrics, **same_sig())
    assert [r.metric for r in result.rows] == [
        "f1",
        "precision",
        "documents",
        "zeta",
        "teds_by_layout/x",
        "field_f1/b",
        "field_recall/b",
    ]


def test_counts_frames_from_reports_round_trip_through_parquet(tmp_path: Path) -> None:
    base, cand = report({}), report({"d": {"id": "d", "total": 41, "vendor": "Dyne"}})
    paths = []
    for name, r in (("b", base), ("c", cand)):
        path = tmp_path / f"{name}.parquet"
        report_frame(r, "counts").to_parquet(path, index=False)
        paths.append(path)
    b_run = ScoredRun(base.metrics(), pd.read_parquet(paths[0]), base.signature())
    c_run = ScoredRun(cand.metrics(), pd.read_parquet(paths[1]), cand.signature())
    result = compare(b_run, c_run, resamples=50)
    assert result.broke == ("d",)
    f1 = result.row("f1")
    assert f1 is not None and f1.interval is not None and f1.delta is not None
    assert np.isclose(f1.interval.delta, f1.delta)
