"""structure: per-document orchestration, aggregation, slices, bootstrap intervals, views."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from scipy import stats as scipy_stats
from support import teds_reference as ref

from extract_mlflow.config import StructureConfig
from extract_mlflow.core.keys import slice_key
from extract_mlflow.core.statistics import MOVED_FROM_STRUCTURE, StatisticsConfig
from extract_mlflow.core.text import safe_lines
from extract_mlflow.errors import InputError
from extract_mlflow.evaluation.stats import ratio_interval
from extract_mlflow.evaluation.structure import score_structure, structure_frame
from extract_mlflow.families.structure import STRUCTURE
from extract_mlflow.structure.score import HIGHER_IS_BETTER, METRICS
from extract_mlflow.views.plots import robustness_plot

GOLD: list[dict[str, Any]] = [
    {
        "id": "a",
        "meta": {"layout": "two column"},
        "scan": 0.9,
        "tables": "| a | b |\n|---|---|\n| 1 | 2 |",
        "blocks": [{"id": 1, "page": 1}, {"id": 2, "page": 1}, {"id": 3, "page": 2}],
        "regions": [{"id": "q", "text": ["New York", "NYC"]}],
        "boundaries": [10, 20],
    },
    {
        "id": "b",
        "meta": {"layout": "single"},
        "scan": 0.5,
        "tables": ["<table><tr><td>x</td></tr></table>"],
        "blocks": ["a", "b", "c"],
        "regions": {"q": "abcd"},
        "boundaries": [5],
    },
    {"id": "c", "meta": {"layout": "single"}, "scan": 0.7, "blocks": ["a", "b"]},
]
PRED: list[dict[str, Any]] = [
    {
        "id": "a",
        "tables": "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>3</td></tr></table>",
        "blocks": [1, 3, 2],
        "regions": [{"id": "q", "text": "new  york"}],
        "boundaries": [11, 20, 30],
    },
    {"id": "b", "tables": 5, "blocks": ["a", "c", "b"], "regions": {"q": "abxy"}},
]


def config(**kwargs: Any) -> tuple[StructureConfig, StatisticsConfig]:
    """The ``[structure]`` section and the run-wide ``[statistics]`` (200 resamples) of
    `kwargs`, as :func:`score_structure` takes them."""
    stats = {k: kwargs.pop(k) for k in MOVED_FROM_STRUCTURE if k in kwargs}
    return StructureConfig(**kwargs), StatisticsConfig(**{"bootstrap_resamples": 200, **stats})


# -- values by hand -------------------------------------------------------------------------


def test_every_metric_by_hand() -> None:
    summary = score_structure(GOLD, PRED, *config(boundary_window=1))
    m = summary.metrics()
    # tables: a scores 1 − 3/8 (the Markdown gold is thead/th + tbody, 8 elements below the
    # table; the prediction has no sections: delete 2, rename "2"→"3" at 1/1); b's prediction
    # is unreadable (0)
    assert m["teds"] == pytest.approx((1 - 3 / 8 + 0) / 2)
    assert m["teds_s"] == pytest.approx((1 - 2 / 8 + 0) / 2)
    assert "teds_normalized" not in m and "teds_s_normalized" not in m
    assert m["header_association"] == pytest.approx(2 / 3)  # a: 2 of 2 columns, b: 0 of 1
    # ROAcc: a 1 − 2/3, b 1 − 2/3, c 0 (no prediction line)
    assert m["reading_order"] == pytest.approx((1 / 3 + 1 / 3 + 0) / 3)
    assert m["kendall_tau"] == pytest.approx(1 / 3)
    assert m["anls"] == pytest.approx((1.0 + 0.0) / 2)  # "abxy" is NL 0.5 from "abcd"
    # boundaries, window 1: a matches 10–11 and 20; b matches nothing
    assert m["boundary_precision"] == pytest.approx(2 / 3)
    assert m["boundary_recall"] == pytest.approx(2 / 3)
    assert m["boundary_f1"] == pytest.approx(4 / 6)
    assert any("'b'" in n and "'tables' unreadable" in n for n in summary.notes)


@pytest.mark.parametrize(
    ("definition", "rule"), [("official", "normalized"), ("normalized", "official")]
)
def test_a_gold_set_against_itself_scores_one(definition: str, rule: str) -> None:
    summary = score_structure(GOLD, GOLD, *config(teds=definition, anls=rule))
    other = {"official": "_normalized", "normalized": ""}[definition]
    other_anls = {"official": "anls", "normalized": "anls_official"}[rule]
    for name in METRICS:
        if name in (f"teds{other}", f"teds_s{other}", other_anls):
            assert name not in summary.headline
            continue
        assert summary.headline[name].value == pytest.approx(1.0), name
        assert summary.headline[name].degenerate


def test_families_run_only_where_the_gold_line_has_the_field() -> None:
    gold: list[dict[str, Any]] = [{"id": "a", "blocks": ["x", "y"]}, {"id": "b", "other": 1}]
    summary = score_structure(gold, {"a": {"blocks": ["x", "y"]}}, *config())
    assert set(summary.headline) == {"reading_order", "kendall_tau"}
    assert summary.documents[1].stats() == {}
    assert score_structure([{"id": "a"}], [], *config()).metrics() == {}


def test_key_names_are_configurable() -> None:
    gold = [{"doc": "a", "cells": "|h|\n|-|\n|v|", "order": [{"bid": 1, "pg": 1}]}]
    pred = [{"doc": "a", "cells": "|h|\n|-|\n|v|", "order": [{"bid": 1, "pg": 1}]}]
    cfg = config(tables_key="cells", blocks_key="order", block_id_key="bid", page_key="pg")
    summary = score_structure(gold, pred, *cfg, id_key="doc")
    assert summary.metrics()["teds"] == 1.0 and summary.metrics()["reading_order"] == 1.0


def test_unreadable_gold_is_an_input_error_naming_document_and_field() -> None:
    with pytest.raises(InputError, match=r"'a'.*'boundaries'"):
        score_structure([{"id": "a", "boundaries": "10,20"}], [], *config())
    with pytest.raises(InputError, match="id key"):
        score_structure([{"no_id": 1}], [], *config())


def test_the_time_budget_falls_back_with_a_message_naming_the_table() -> None:
    gold, pred = ref.random_pair(random.Random(4), 8, 5)
    cfg = config(teds_time_budget_s=1e-9)
    summary = score_structure([{"id": "d1", "tables": gold}], [{"id": "d1", "tables": pred}], *cfg)
    (slot,) = summary.documents[0].tables or []
    assert slot.approximate
    (note,) = summary.notes
    assert note.startswith("document 'd1', gold table 0 vs predicted table 0: exact TEDS")
    assert "approximate score (lower bound" in note


# -- metrics and keys -----------------------------------------------------------------------


def test_metric_keys_are_the_design_keys_with_intervals_and_slices() -> None:
    summary = score_structure(GOLD, PRED, *config(slice_by=("meta.layout",)))
    keys = set(summary.metrics())
    headline = {k for k in keys if "_by_" not in k}
    # only with teds = "normalized" / anls = "official"
    normalized = {"teds_normalized", "teds_s_normalized", "anls_official"}
    expected = {
        f"{m}{s}" for m in METRICS if m not in normalized for s in ("", "_ci_low", "_ci_high")
    }
    assert headline == expected
    assert "teds_by_meta.layout/two column" in keys
    assert "boundary_f1_by_meta.layout/single" in keys
    assert "boundary_precision_by_meta.layout/single" not in keys  # no predicted boundary
    assert all(HIGHER_IS_BETTER[m] for m in METRICS)


def test_slices_recompute_every_metric() -> None:
    summary = score_structure(GOLD, PRED, *config(slice_by=("meta.layout", "scan")))
    single = {s.label: s for s in summary.slices["meta.layout"]}["single"]
    assert single.documents == 2
    assert single.values["reading_order"] == pytest.approx(1 / 6)
    assert [s.label for s in summary.slices["scan"]] == ["0.5", "0.7", "0.9"]
    assert summary.numeric_attributes == ["scan"]


def test_slice_keys_are_sanitised_for_mlflow() -> None:
    assert slice_key("teds", "layout", "two column") == "teds_by_layout/two column"
    odd = slice_key("anls", "scan quality", "a[b]/c:d")  # escaped, and a hash keeps it apart
    assert odd.startswith("anls_by_scan_quality/a_b__c_d-") and len(odd) == 40
    assert slice_key("anls", "scan quality", "x[]") != slice_key("anls", "scan quality", "x")


def test_many_numeric_values_are_binned() -> None:
    gold = [{"id": str(i), "dpi": 100 + i, "blocks": ["a", "b"]} for i in range(40)]
    pred = [{"id": str(i), "blocks": ["a", "b"] if i % 2 else ["b", "a"]} for i in range(40)]
    summary = score_structure(gold, pred, *config(slice_by=("dpi",), numeric_bins=4))
    slices = summary.slices["dpi"]
    assert [s.label for s in slices] == ["100-109.75", "109.75-119.5", "119.5-129.25", "129.25-139"]
    assert sum(s.documents for s in slices) == 40
    assert [s.x for s in slices] == sorted(s.x for s in slices)  # type: ignore[type-var]


def test_documents_without_the_attribute_are_in_no_slice() -> None:
    summary = score_structure(
        [*GOLD, {"id": "z", "blocks": ["a"]}], PRED, *config(slice_by=("scan",))
    )
    assert sum(s.documents for s in summary.slices["scan"]) == 3


def test_document_order_changes_nothing() -> None:
    cfg = config(slice_by=("meta.layout",))
    first = score_structure(GOLD, PRED, *cfg).metrics()
    rng = random.Random(0)
    for _ in range(3):
        gold, pred = GOLD[:], PRED[:]
        rng.shuffle(gold)
        rng.shuffle(pred)
        again = score_structure(gold, pred, *cfg).metrics()
        assert again.keys() == first.keys()
        for key, value in first.items():
            if "_ci_" not in key:  # resamples follow document order
                assert again[key] == pytest.approx(value), key


# -- bootstrap ------------------------------------------------------------------------------


def test_the_interval_agrees_with_scipy_percentile_bootstrap() -> None:
    rng = np.random.default_rng(3)
    values = rng.beta(4, 2, size=40)
    ours = ratio_interval(values, np.ones(40), resamples=4000, seed=1)
    theirs = scipy_stats.bootstrap(
        (values,), np.mean, method="percentile", n_resamples=4000, random_state=2
    ).confidence_interval
    width = theirs.high - theirs.low
    assert ours.value == pytest.approx(values.mean())
    assert abs(ours.ci_low - theirs.low) < 0.1 * width
    assert abs(ours.ci_high - theirs.high) < 0.1 * width


def test_a_ratio_interval_agrees_with_a_paired_scipy_bootstrap() -> None:
    rng = np.random.default_rng(5)
    den = rng.integers(1, 8, size=50).astype(float)
    num = rng.binomial(den.astype(int), 0.7).astype(float)

    def ratio(n: np.ndarray, d: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.asarray(n.sum(axis=axis) / d.sum(axis=axis))

    ours = ratio_interval(num, den, resamples=4000, seed=1)
    theirs = scipy_stats.bootstrap(
        (num, den), ratio, paired=True, method="percentile", n_resamples=4000, random_state=2
    ).confidence_interval
    width = theirs.high - theirs.low
    assert ours.value == pytest.approx(num.sum() / den.sum())
    assert abs(ours.ci_low - theirs.low) < 0.1 * width
    assert abs(ours.ci_high - theirs.high) < 0.1 * width


def test_the_interval_is_seeded() -> None:
    values = np.linspace(0, 1, 30)
    a = ratio_interval(values, np.ones(30), resamples=500, seed=7)
    b = ratio_interval(values, np.ones(30), resamples=500, seed=7)
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high) and not a.degenerate


def test_degenerate_data_falls_back_to_the_point_value() -> None:
    one = ratio_interval([0.4], [1.0])
    assert (one.value, one.ci_low, one.ci_high, one.degenerate) == (0.4, 0.4, 0.4, True)
    same = ratio_interval([1.0, 2.0, 3.0], [2.0, 4.0, 6.0])
    assert (same.ci_low, same.ci_high, same.degenerate) == (0.5, 0.5, True)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=2, max_size=20))
def test_the_interval_holds_the_point_for_a_mean(values: list[float]) -> None:
    result = ratio_interval(values, [1.0] * len(values), resamples=200, seed=0)
    assert result.ci_low <= result.value + 1e-12 and result.value - 1e-12 <= result.ci_high
    assert min(values) - 1e-12 <= result.ci_low and result.ci_high <= max(values) + 1e-12


# -- views ----------------------------------------------------------------------------------


def test_to_dict_is_json_and_markdown_has_the_section() -> None:
    summary = score_structure(GOLD, PRED, *config(slice_by=("meta.layout",)))
    data = json.loads(json.dumps(summary.to_dict()))
    assert data["documents"] == 3 and data["metrics"]["teds"]["documents"] == 2
    assert data["per_document"][0]["tables"][0]["teds"] == pytest.approx(5 / 8)
    text = safe_lines(STRUCTURE.markdown(summary))
    assert text.startswith("## Document structure")
    assert "| teds | 0.312 |" in text and "### By meta.layout (95% CI)" in text
    assert "| single | 2 |" in text
    assert (
        safe_lines(STRUCTURE.markdown(score_structure([{"id": "a"}], [], *config()))).count(
            "No structure"
        )
        == 1
    )


def test_the_documents_frame_carries_sufficient_statistics() -> None:
    frame = structure_frame(score_structure(GOLD, PRED, *config(slice_by=("scan",))))
    assert list(frame["id"]) == ["a", "b", "c"]
    assert {"attribute/scan", "teds", "teds_num", "teds_den", "boundary_f1_den"} <= set(
        frame.columns
    )
    assert frame["anls_den"].tolist()[:2] == [1.0, 1.0]
    assert np.isnan(frame["teds"].iloc[2])


def test_the_robustness_plot_is_written_for_numeric_attributes(tmp_path: Path) -> None:
    summary = score_structure(GOLD, PRED, *config(slice_by=("scan", "meta.layout")))
    out = robustness_plot(summary, tmp_path / "eval" / "robustness.png", "scan")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="not a numeric"):
        robustness_plot(summary, tmp_path / "x.png", "meta.layout")


# -- the normalised TEDS variant ------------------------------------------------------------


def test_the_normalised_variant_has_its_own_keys_and_todays_values() -> None:
    summary = score_structure(GOLD, PRED, *config(teds="normalized", slice_by=("meta.layout",)))
    m = summary.metrics()
    # a: one cell renamed "2"→"3" over the 7 nodes of table → tr → td (thead/th unwrapped)
    assert m["teds_normalized"] == pytest.approx((1 - 1 / 7 + 0) / 2)
    assert m["teds_s_normalized"] == pytest.approx(0.5)
    assert not {"teds", "teds_s", "teds_ci_low", "teds_by_meta.layout/single"} & set(m)
    assert {"teds_normalized_ci_low", "teds_normalized_ci_high"} <= set(m)
    assert "teds_normalized_by_meta.layout/two column" in m
    assert m["header_association"] == pytest.approx(2 / 3)
    assert HIGHER_IS_BETTER["teds_normalized"] and HIGHER_IS_BETTER["teds_s_normalized"]


def test_the_signature_names_the_teds_definition_when_structure_is_scored() -> None:
    from extract_mlflow import evaluate

    gold = [{"id": "a", "x": 1, "tables": "<table><tr><td>1</td></tr></table>"}]
    pred = [{"id": "a", "x": 1, "tables": "<table><tr><td>2</td></tr></table>"}]
    official = evaluate(gold, pred)
    normalized = evaluate(gold, pred, {"structure": {"teds": "normalized"}})
    assert official.signature().endswith("|teds:official")
    assert normalized.signature().endswith("|teds:normalized")
    assert "teds" in official.metrics() and "teds" not in normalized.metrics()
    assert normalized.metrics()["teds_normalized"] == pytest.approx(1 - 1 / 3)
    plain = evaluate([{"id": "a", "x": 1}], [{"id": "a", "x": 1}])
    assert "teds" not in plain.signature()


def test_the_teds_definition_is_validated() -> None:
    assert StructureConfig().teds == "official"
    assert StructureConfig(teds="normalized").teds == "normalized"
    for bad in ("normalised", "Official", 1):
        with pytest.raises(ValidationError):
            StructureConfig.model_validate({"teds": bad})


# -- config ---------------------------------------------------------------------------------


def test_the_config_section_forbids_unknown_keys_and_wrong_types() -> None:
    assert StructureConfig().teds_time_budget_s == 10.0
    assert StructureConfig.model_validate({"boundary_window": 2}).boundary_window == 2.0
    for bad in (
        {"tabels_key": "t"},
        {"boundary_window": -1},
        {"anls_threshold": 0},
        {"tables_key": ""},
        {"slice_by": ["scan"]},  # run-wide: [statistics]
    ):
        with pytest.raises(ValidationError):
            StructureConfig.model_validate(bad)
    for wrong in ({"bootstrap_resamples": True}, {"confidence": 1.0}, {"numeric_bins": 1}):
        with pytest.raises(ValidationError):
            StatisticsConfig.model_validate(wrong)


block_lists = st.lists(st.sampled_from("abcdef"), unique=True, max_size=6)
region_maps = st.dictionaries(st.sampled_from("qrs"), st.text("ab ", max_size=4), max_size=3)
positions = st.lists(st.integers(0, 20), max_size=5)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(block_lists, block_lists, region_maps, region_maps, positions, positions),
        min_size=1,
        max_size=5,
    )
)
def test_scores_stay_in_range_and_gold_scores_one_against_itself(
    docs: list[tuple[Any, ...]],
) -> None:
    gold = [
        {"id": str(i), "blocks": g, "regions": r, "boundaries": b}
        for i, (g, _, r, _, b, _) in enumerate(docs)
    ]
    pred = [
        {"id": str(i), "blocks": p, "regions": r, "boundaries": b}
        for i, (_, p, _, r, _, b) in enumerate(docs)
    ]
    cfg = config(boundary_window=1, bootstrap_resamples=50)
    for name, value in score_structure(gold, pred, *cfg).metrics().items():
        low = -1.0 if name.startswith("kendall_tau") else 0.0
        assert low - 1e-12 <= value <= 1.0 + 1e-12, name
    for name, m in score_structure(gold, gold, *cfg).headline.items():
        assert m.value == pytest.approx(1.0), name
