"""--slice-by on field metrics: every slice's micro precision, recall and F1 carry their own
bootstrap interval (the interval the slice's documents get when scored alone), and a
robustness plot of the field metrics by slice is written beside the run's artifacts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from extract_mlflow import evaluate
from extract_mlflow.evaluation.slices import count_slices
from extract_mlflow.tracking.payload import write_eval_artifacts
from extract_mlflow.views.plots import field_robustness_plot


def _rows(n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    gold = [
        {"id": f"d{i}", "kind": "scan" if i % 3 else "born", "a": i, "b": "x"} for i in range(n)
    ]
    pred = [{"id": f"d{i}", "a": i if i % 4 else -1, "b": "x" if i % 5 else "y"} for i in range(n)]
    return gold, pred


def test_each_slice_has_the_interval_of_its_documents_scored_alone() -> None:
    gold, pred = _rows(24)
    metrics = evaluate(gold, pred, slice_by=["kind"]).metrics()
    for kind in ("scan", "born"):
        ids = {g["id"] for g in gold if g["kind"] == kind}
        alone = evaluate(
            [g for g in gold if g["id"] in ids],
            [p for p in pred if p["id"] in ids],
            slice_by=["kind"],  # an attribute, not a field, as in the whole run
        ).metrics()
        for name in ("precision", "recall", "f1"):
            for suffix in ("", "_ci_low", "_ci_high"):
                key = f"{name}{suffix}_by_kind/{kind}"
                assert metrics[key] == pytest.approx(alone[f"{name}{suffix}"], abs=1e-12), key
            low, high = (metrics[f"{name}_ci_{e}_by_kind/{kind}"] for e in ("low", "high"))
            assert low <= metrics[f"{name}_by_kind/{kind}"] <= high
    assert metrics["f1_ci_low_by_kind/scan"] < metrics["f1_ci_high_by_kind/scan"]


def test_no_slice_by_no_slice_intervals() -> None:
    gold, pred = _rows(6)
    assert not any("_by_" in k for k in evaluate(gold, pred).metrics())


def test_the_field_robustness_plot(tmp_path: Path) -> None:
    gold, pred = _rows(24)
    for row in gold:
        row["scan"] = round(0.1 * (int(row["id"][1:]) % 4), 1)
    report = evaluate(gold, pred, slice_by=["kind", "scan"])
    slices = count_slices(report.documents, "scan", report.config.structure)
    assert [s.x for s in slices] == sorted(s.x for s in slices if s.x is not None)
    png = field_robustness_plot(slices, "scan", tmp_path / "f.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = write_eval_artifacts(report, tmp_path / "run")
    for name in ("field_robustness_kind.png", "field_robustness_scan.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
