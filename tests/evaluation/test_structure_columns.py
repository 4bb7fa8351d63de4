"""Structure scores kept as columns: the first documents keep their details (the JSON's
``per_document``, bounded, with how many are not listed), every document keeps its values;
headline, slices, notes and the documents frame equal those of a pass that lists every
document, and parts merged in any order equal one pass."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import synth

from extract_mlflow import evaluate
from extract_mlflow.config import StructureConfig
from extract_mlflow.core.statistics import StatisticsConfig
from extract_mlflow.evaluation.families import TOOLS
from extract_mlflow.evaluation.structure import structure_frame
from extract_mlflow.structure import records as structure_module
from extract_mlflow.structure.records import StructureRecords
from extract_mlflow.structure.score import StructureSummary, score_document
from extract_mlflow.views.frames import report_frame


def documents(n: int, seed: int = 0) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """`n` invoices with tables, blocks and regions (a prediction per gold document, some
    worse than others), and a slice attribute with three values."""
    rng = random.Random(seed)
    gold, pred, _ = synth.make_dataset(n, seed)
    out_gold, out_pred = [], []
    for g, p in zip(gold, pred, strict=True):
        gs, ps = synth.structure_documents(g, p, rng)
        gs["scan"] = rng.choice(["clean", "noisy", "faded"])
        out_gold.append(gs)
        out_pred.append(ps)
    return out_gold, out_pred


CONFIG = StructureConfig()
STATISTICS = StatisticsConfig(slice_by=("scan", "total"), bootstrap_resamples=200)


def scored(gold: list[dict[str, Any]], pred: list[dict[str, Any]]) -> list[Any]:
    return [
        score_document(g["id"], g, p, CONFIG, STATISTICS.slice_by)
        for g, p in zip(gold, pred, strict=True)
    ]


def summary_of(
    docs: list[Any], listed: int, parts: list[list[int]] | None = None
) -> StructureSummary:
    parts = parts or [list(range(len(docs)))]
    records = []
    for part in parts:
        r = StructureRecords(STATISTICS.slice_by, listed=listed)
        for position in part:
            r.add(position, docs[position])
        records.append(r)
    first = records[0]
    for other in records[1:]:
        first.merge(other)
    return first.summary(CONFIG, STATISTICS, TOOLS)


def without_listing(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in ("per_document", "per_document_not_listed")}


@pytest.fixture(scope="module")
def docs() -> list[Any]:
    return scored(*documents(120))


def test_a_bounded_listing_changes_nothing_but_the_listing(docs: list[Any]) -> None:
    full, bounded = summary_of(docs, listed=1000), summary_of(docs, listed=7)
    a, b = full.to_dict(), bounded.to_dict()
    assert without_listing(a) == without_listing(b)
    assert b["per_document"] == a["per_document"][:7]
    assert b["per_document_not_listed"] == len(docs) - 7
    assert "per_document_not_listed" not in a
    assert bounded.count == full.count == len(docs)
    ids = [d.id for d in docs]
    pd.testing.assert_frame_equal(structure_frame(bounded, ids), structure_frame(full))


def test_the_columns_equal_a_plain_computation(docs: list[Any]) -> None:
    """Headline values are Σnum/Σden over the documents that have the metric, written plainly
    from each document's own statistics."""
    summary = summary_of(docs, listed=3)
    for name, value in summary.headline.items():
        pairs = [d.stats()[name] for d in docs if name in d.stats()]
        assert value.documents == len(pairs)
        assert value.value == pytest.approx(sum(n for n, _ in pairs) / sum(d for _, d in pairs))
    for s in summary.slices["scan"]:
        members = [d for d in docs if d.attributes["scan"] == s.label]
        assert s.documents == len(members)
        pairs = [d.stats()["teds"] for d in members if "teds" in d.stats()]
        assert s.values["teds"] == pytest.approx(
            sum(n for n, _ in pairs) / sum(d for _, d in pairs)
        )


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), cuts=st.integers(1, 4), listed=st.integers(1, 30))
def test_parts_merged_in_any_order_equal_one_pass(
    docs: list[Any], seed: int, cuts: int, listed: int
) -> None:
    rng = random.Random(seed)
    positions = list(range(len(docs)))
    rng.shuffle(positions)
    bounds = sorted(rng.sample(range(1, len(docs)), cuts))
    parts = [positions[a:b] for a, b in zip([0, *bounds], [*bounds, len(docs)], strict=True)]
    one = summary_of(docs, listed)
    merged = summary_of(docs, listed, parts)
    assert json.dumps(merged.to_dict(), default=str) == json.dumps(one.to_dict(), default=str)
    ids = [d.id for d in docs]
    pd.testing.assert_frame_equal(structure_frame(merged, ids), structure_frame(one, ids))


def test_an_evaluation_lists_the_first_documents_and_keeps_every_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the whole evaluation (streamed and loaded): the JSON lists the first documents,
    says how many it leaves out, and the documents frame carries every document's values."""
    gold, pred = documents(40, seed=3)
    g, p = (
        synth.write_jsonl(gold, tmp_path / "g.jsonl"),
        synth.write_jsonl(pred, tmp_path / "p.jsonl"),
    )
    full = evaluate(g, p)
    monkeypatch.setattr(structure_module, "DOCUMENTS_LISTED", 5)
    for stream in (True, False):
        bounded = evaluate(g, p, stream=stream)
        a, b = full.to_dict(), bounded.to_dict()
        assert without_listing(a["structure"]) == without_listing(b["structure"])
        assert b["structure"]["per_document"] == a["structure"]["per_document"][:5]
        assert b["structure"]["per_document_not_listed"] == 35
        frame = report_frame(bounded, "counts")
        pd.testing.assert_frame_equal(frame, report_frame(full, "counts"))
        assert np.isfinite(frame["structure/teds"]).sum() == 40
