"""--slice-by: every slice's metrics, field and structure, carry their own bootstrap interval
(the interval the slice's documents get when scored alone, equal to a plain bootstrap written
out here), shown in the markdown and drawn as error bars (field metrics) or bands (structure
metrics, robustness.png)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from extract_mlflow import evaluate
from extract_mlflow.core.text import fmt, safe_lines
from extract_mlflow.evaluation.slices import count_slices
from extract_mlflow.families.structure import STRUCTURE as STRUCTURE_FAMILY
from extract_mlflow.tracking.payload import write_eval_artifacts
from extract_mlflow.views.plots import field_robustness_plot, robustness_figure


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
    slices = count_slices(report.documents, "scan", report.config.statistics)
    assert [s.x for s in slices] == sorted(s.x for s in slices if s.x is not None)
    png = field_robustness_plot(slices, "scan", tmp_path / "f.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = write_eval_artifacts(report, tmp_path / "run")
    for name in ("field_robustness_kind.png", "field_robustness_scan.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name


# -- structure metrics per slice -------------------------------------------------------------
STRUCTURE = {"statistics": {"bootstrap_resamples": 400, "bootstrap_seed": 11}}


def _structure_rows(n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(6)
    gold, pred = [], []
    for i in range(n):
        blocks = list("abcdef")
        shuffled = blocks[:]
        for _ in range(rng.randrange(3)):
            j, k = rng.randrange(6), rng.randrange(6)
            shuffled[j], shuffled[k] = shuffled[k], shuffled[j]
        answers = {f"q{r}": rng.choice(["Total due", "ACME GmbH", "12.50"]) for r in range(3)}
        guesses = {
            q: a if rng.random() < 0.6 else a[: rng.randrange(len(a))] for q, a in answers.items()
        }
        gold.append(
            {"id": f"d{i}", "layout": "ab"[i % 2], "dpi": (100, 200, 300)[i % 3], "blocks": blocks,
             "regions": answers, "boundaries": [5, 10 + i % 4]}
        )  # fmt: skip
        pred.append({"id": f"d{i}", "blocks": shuffled, "regions": guesses, "boundaries": [5, 11]})
    return gold, pred


def plain_interval(pairs: list[tuple[float, float]], resamples: int, seed: int) -> list[float]:
    """The percentile bootstrap of Σnum / Σden, written out: resample the documents with
    numpy's generator, recompute the ratio, take the 2.5th and 97.5th percentiles."""
    num = np.array([n for n, _ in pairs])
    den = np.array([d for _, d in pairs])
    draws = np.random.default_rng(seed).integers(0, len(num), size=(resamples, len(num)))
    ratios = num[draws].sum(axis=1) / den[draws].sum(axis=1)
    return [float(v) for v in np.percentile(ratios, [2.5, 97.5])]


def slice_label(doc: Any, attribute: str) -> str:
    """The slice label of a document's attribute (integers here: as written)."""
    return f"{doc.attributes[attribute]}"


def test_structure_slices_carry_the_interval_a_plain_bootstrap_gives() -> None:
    gold, pred = _structure_rows(36)
    report = evaluate(gold, pred, STRUCTURE, slice_by=["layout", "dpi"])
    assert report.family("structure") is not None
    metrics = report.metrics()
    checked = 0
    for attribute in ("layout", "dpi"):
        for s in report.family("structure").slices[attribute]:
            docs = [
                d
                for d in report.family("structure").documents
                if slice_label(d, attribute) == s.label
            ]
            for name in ("reading_order", "kendall_tau", "anls", "boundary_recall"):
                pairs = [d.stats()[name] for d in docs if name in d.stats()]
                low, high = plain_interval(pairs, 400, 11)
                key = f"{name}_ci_low_by_{attribute}/{s.label}"
                assert metrics[key] == pytest.approx(low, abs=1e-12), key
                assert metrics[key.replace("_ci_low", "_ci_high")] == pytest.approx(high, abs=1e-12)
                assert low <= metrics[f"{name}_by_{attribute}/{s.label}"] <= high
                checked += low < high
    assert checked >= 10  # real intervals, not points


def test_a_structure_slice_scores_as_its_documents_alone() -> None:
    gold, pred = _structure_rows(30)
    metrics = evaluate(gold, pred, STRUCTURE, slice_by=["layout"]).metrics()
    alone = evaluate(
        [g for g in gold if g["layout"] == "a"],
        [p for g, p in zip(gold, pred, strict=True) if g["layout"] == "a"],
        STRUCTURE,
        slice_by=["layout"],
    ).metrics()
    for name in ("reading_order", "anls", "boundary_f1"):
        for suffix in ("", "_ci_low", "_ci_high"):
            assert metrics[f"{name}{suffix}_by_layout/a"] == alone[f"{name}{suffix}"]


def test_the_markdown_shows_each_slice_value_with_its_interval() -> None:
    gold, pred = _structure_rows(30)
    report = evaluate(gold, pred, STRUCTURE, slice_by=["layout"])
    assert report.family("structure") is not None
    text = safe_lines(STRUCTURE_FAMILY.markdown(report.family("structure")))
    m = report.metrics()
    cell = (
        f"{fmt(m['anls_by_layout/b'])} "
        f"({fmt(m['anls_ci_low_by_layout/b'])}–{fmt(m['anls_ci_high_by_layout/b'])})"
    )
    (row,) = [line for line in text.splitlines() if line.startswith("| b |")]
    assert cell in row.split(" | ")
    data = report.to_dict()["structure"]["slices"]["layout"]
    assert {"anls_ci_low", "anls_ci_high"} <= set(data[0])


def test_the_robustness_plot_draws_each_interval_as_a_band() -> None:
    from matplotlib.collections import PolyCollection
    from matplotlib.colors import to_rgb

    gold, pred = _structure_rows(36)
    report = evaluate(gold, pred, STRUCTURE, slice_by=["dpi"])
    assert report.family("structure") is not None
    slices = report.family("structure").slices["dpi"]
    ax = robustness_figure(slices, "dpi").axes[0]
    bands = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(ax.lines) == len(bands) >= 4
    for line in ax.lines:
        name = line.get_label()
        colour = to_rgb(line.get_color())
        (band,) = [b for b in bands if tuple(np.asarray(b.get_facecolor())[0, :3]) == colour]
        vertices = np.concatenate([np.asarray(p.vertices) for p in band.get_paths()])
        corners = {(float(x), float(y)) for x, y in vertices.round(12)}
        for s in slices:
            if name in s.values:
                for end in ("low", "high"):
                    corner = (s.x, round(s.values[f"{name}_ci_{end}"], 12))
                    assert corner in corners, (name, s.label, end)
