"""Report-level views: bootstrap intervals and slices of the count-based scores."""

from __future__ import annotations

import random
from typing import Any

import pytest

from extract_mlflow import evaluate
from extract_mlflow.evaluation.compact import document_table


def docs(n: int, seed: int = 1) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rnd = random.Random(seed)
    gold, pred = [], []
    for i in range(n):
        values = {f"f{k}": rnd.randint(0, 9) for k in range(6)}
        gold.append({"id": str(i), "scan": "good" if i % 3 else "poor", "dpi": 100 + i, **values})
        wrong = {
            k: (v + 1 if rnd.random() < (0.1 if i % 3 else 0.5) else v) for k, v in values.items()
        }
        pred.append({"id": str(i), **wrong})
    return gold, pred


def test_intervals_bracket_the_micro_scores_and_are_seeded() -> None:
    gold, pred = docs(60)
    r = evaluate(gold, pred)
    m = r.metrics()
    for name in ("precision", "recall", "f1"):
        assert m[f"{name}_ci_low"] <= m[name] <= m[f"{name}_ci_high"]
        assert m[f"{name}_ci_high"] - m[f"{name}_ci_low"] > 0
    assert evaluate(gold, pred).metrics()["f1_ci_low"] == m["f1_ci_low"]  # same seed, same draw


def test_interval_against_a_plain_bootstrap_loop() -> None:
    """The same resampled documents through a plain loop give the same F1 interval."""
    import numpy as np

    from extract_mlflow.evaluation.stats import resample_indices

    gold, pred = docs(40)
    r = evaluate(gold, pred)
    counts = [(d.counts.tp, d.counts.fp, d.counts.fn) for d in r.documents]
    scores = []
    for row in resample_indices(len(counts), 1000, 0):
        tp = sum(counts[i][0] for i in row)
        wrong = sum(counts[i][1] + counts[i][2] for i in row)
        scores.append(2 * tp / (2 * tp + wrong))
    low, high = np.percentile(scores, [2.5, 97.5])
    assert r.metrics()["f1_ci_low"] == pytest.approx(low)
    assert r.metrics()["f1_ci_high"] == pytest.approx(high)


def test_slices_are_micro_scores_over_each_group() -> None:
    gold, pred = docs(30)
    r = evaluate(gold, pred, slice_by=["scan"])
    m = r.metrics()
    assert "scan" not in r.fields, "a gold-only attribute is not a field"
    for label in ("good", "poor"):
        members = [d for d in r.documents if d.attributes["scan"] == label]
        tp = sum(d.counts.tp for d in members)
        wrong = sum(d.counts.fp + d.counts.fn for d in members)
        assert m[f"f1_by_scan/{label}"] == pytest.approx(2 * tp / (2 * tp + wrong))
    assert m["f1_by_scan/poor"] < m["f1_by_scan/good"]


def test_numeric_slices_are_binned_and_an_extracted_field_stays_scored() -> None:
    gold, pred = docs(30)
    config = {"fields": {"f0": {"type": "number"}}}  # the config says f0 is a field
    r = evaluate(gold, pred, config, slice_by=["dpi", "f0"])
    m = r.metrics()
    assert len([k for k in m if k.startswith("f1_by_dpi/")]) == 5  # 30 values > 20: 5 bins
    assert "f0" in r.fields, "f0 has a field rule: sliced by and still scored"
    assert any(k.startswith("f1_by_f0/") for k in m)
    unruled = evaluate(gold, pred, slice_by=["f0"])  # no rule: a gold attribute, not a field
    assert "f0" not in unruled.fields and any(k.startswith("f1_by_f0/") for k in unruled.metrics())


def test_a_slice_attribute_no_document_has_is_reported() -> None:
    gold, pred = docs(5)
    r = evaluate(gold, pred, slice_by=["nope"])
    assert "slice attribute 'nope': no gold document has it (no slices)" in r.notes
    assert not [k for k in r.metrics() if "_by_" in k]


def test_the_report_holds_its_intervals_and_slices_as_data() -> None:
    gold, pred = docs(30)
    r = evaluate(gold, pred, slice_by=["scan"])
    m = r.metrics()
    ends = {f"{n}_ci_{end}" for n in ("precision", "recall", "f1") for end in ("low", "high")}
    assert set(r.intervals) == ends
    assert r.intervals == {k: m[k] for k in ends}
    assert r.slice_metrics == {k: v for k, v in m.items() if "_by_" in k}
    # precision, recall and F1 of "good" and "poor", each with its interval's two ends
    assert len(r.slice_metrics) == 18
    r.documents = document_table(
        []
    )  # the report resamples nothing: its intervals do not follow the documents
    assert r.metrics()["f1_ci_low"] == m["f1_ci_low"]
