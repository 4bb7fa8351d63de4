"""Cross-page continuity: the share of gold page-break links (last block of a page → first
block of the next) that the predicted order keeps, pooled over documents, logged with its
interval, sliced and gateable; only where gold blocks carry pages."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from extract_mlflow import evaluate
from extract_mlflow.gate_checks import evaluate_gates
from extract_mlflow.gates import parse_shortcuts
from extract_mlflow.structure.reading_order import Block, score_reading_order


def _paged(*pages: str) -> list[dict[str, Any]]:
    """Blocks from pages written as strings of one-letter ids: ("ab", "cd", "e")."""
    return [{"id": b, "page": n} for n, page in enumerate(pages, 1) for b in page]


GOLD: list[dict[str, Any]] = [
    {"id": "d1", "layout": "paged", "blocks": _paged("ab", "cd", "e")},  # links b→c, d→e
    {"id": "d2", "layout": "paged", "blocks": _paged("x", "y")},  # link x→y
    {"id": "d3", "layout": "flat", "blocks": ["p", "q"]},  # no pages: no link
]
PRED: list[dict[str, Any]] = [
    {"id": "d1", "blocks": list("abced")},  # b→c kept, d→e not: 1/2
    {"id": "d2", "blocks": ["y", "x"]},  # x is last: 0/1
    {"id": "d3", "blocks": ["q", "p"]},
]


def test_hand_computed_document_and_run_values() -> None:
    report = evaluate(GOLD, PRED, slice_by=["layout"])
    assert report.family("structure") is not None
    per_doc = {d.id: d.reading for d in report.family("structure").documents}
    assert per_doc["d1"] is not None and per_doc["d1"].continuity == 0.5
    assert per_doc["d2"] is not None and per_doc["d2"].continuity == 0.0
    assert per_doc["d3"] is not None and per_doc["d3"].continuity is None
    m = report.metrics()
    # pooled: (1 + 0) / (2 + 1), not the mean of 1/2 and 0
    assert m["continuity"] == pytest.approx(1 / 3)
    assert m["continuity_ci_low"] <= m["continuity"] <= m["continuity_ci_high"]
    assert report.family("structure").headline["continuity"].documents == 2
    assert m["continuity_by_layout/paged"] == pytest.approx(1 / 3)
    assert "continuity_by_layout/flat" not in m


def test_no_pages_no_metric() -> None:
    gold: list[dict[str, Any]] = [
        {"id": "a", "blocks": ["p", "q"]},
        {"id": "b", "blocks": _paged("pq")},
    ]
    m = evaluate(gold, [{"id": "a", "blocks": ["p", "q"]}]).metrics()
    assert "reading_order" in m
    assert not any(k.startswith("continuity") for k in m)


def test_continuity_is_gateable() -> None:
    metrics = evaluate(GOLD, PRED).metrics()
    low = [r.passed for r in evaluate_gates(parse_shortcuts(min=["continuity=0.5"]), None, metrics)]
    ok = [r.passed for r in evaluate_gates(parse_shortcuts(min=["continuity=0.3"]), None, metrics)]
    assert (low, ok) == ([False], [True])


def _kept_by_hand(gold: list[Block], pred: list[str]) -> tuple[int, int]:
    first: dict[str, int] = {}
    for i, b in enumerate(pred):
        first.setdefault(b, i)
    links = [(a.id, b.id) for a, b in pairwise(gold) if a.page != b.page]
    kept = [
        (a, b)
        for a, b in links
        if a in first and first[a] + 1 < len(pred) and pred[first[a] + 1] == b
    ]
    return len(kept), len(links)


@st.composite
def _documents(draw: st.DrawFn) -> tuple[list[Block], list[str]]:
    n = draw(st.integers(1, 12))
    pages = sorted(draw(st.lists(st.integers(1, 4), min_size=n, max_size=n)))
    gold = [Block(f"b{i}", str(p)) for i, p in enumerate(pages)]
    ids = [b.id for b in gold] + ["z1", "z2"]
    pred = draw(st.lists(st.sampled_from(ids), max_size=14))
    return gold, pred


@given(_documents())
def test_continuity_property(doc: tuple[list[Block], list[str]]) -> None:
    """Against the definition computed by hand; in [0, 1]; the gold order keeps every link and
    the reversed gold order none."""
    gold, pred = doc
    result = score_reading_order(gold, [Block(b) for b in pred])
    assert (result.links_kept, result.cross_page_links) == _kept_by_hand(gold, pred)
    if result.continuity is not None:
        assert 0.0 <= result.continuity <= 1.0
        ids = [b.id for b in gold]
        assert score_reading_order(gold, [Block(b) for b in ids]).continuity == 1.0
        assert score_reading_order(gold, [Block(b) for b in reversed(ids)]).continuity == 0.0
    else:
        assert len({b.page for b in gold}) == 1
