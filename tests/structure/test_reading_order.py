"""reading_order: ROAcc by hand, Kendall tau against scipy, coverage, pages, continuity."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau

from extract_mlflow.structure.reading_order import (
    Block,
    coverage,
    cross_page_links,
    kendall_tau,
    page_roacc,
    parse_blocks,
    roacc,
    score_reading_order,
)


def test_roacc_by_hand() -> None:
    assert roacc(["a", "b", "c"], ["a", "b", "c"]) == 1.0
    assert roacc(["a", "b", "c", "d"], ["a", "c", "b", "d"]) == 0.5  # two substitutions
    assert roacc(["a", "b", "c", "d"], ["a", "b", "c"]) == 0.75  # one deletion
    assert roacc(["a", "b"], ["a", "b", "x", "y"]) == 0.5  # two insertions over 4
    assert roacc(["a"], []) == 0.0 and roacc([], ["a"]) == 0.0
    assert roacc([], []) is None


def test_kendall_tau_by_hand_and_undefined_cases() -> None:
    assert kendall_tau(["a", "b", "c"], ["c", "b", "a"]) == pytest.approx(-1.0)
    assert kendall_tau(["a", "b", "c"], ["x", "a", "y", "b", "c"]) == pytest.approx(1.0)
    assert kendall_tau(["a", "b"], ["a"]) is None
    assert kendall_tau([], []) is None


ids = st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=10)


@settings(max_examples=150, deadline=None)
@given(ids, ids)
def test_kendall_tau_equals_scipy_over_the_common_blocks(gold: list[str], pred: list[str]) -> None:
    common = [b for b in gold if b in pred]
    tau = kendall_tau(gold, pred)
    if len(common) < 2:
        assert tau is None
        return
    expected = kendalltau([gold.index(b) for b in common], [pred.index(b) for b in common])
    assert tau is not None
    assert tau == pytest.approx(float(expected.statistic), abs=1e-12)
    assert -1.0 <= tau <= 1.0


def test_repeated_ids_take_their_first_position() -> None:
    assert kendall_tau(["a", "b", "a"], ["b", "a", "a"]) == pytest.approx(-1.0)


def test_coverage() -> None:
    assert coverage(["a", "b", "c", "d"], ["b", "x", "a"]) == 0.5
    assert coverage(["a", "a"], ["a"]) == 1.0
    assert coverage([], ["a"]) is None


PAGED = [Block("a", "1"), Block("b", "1"), Block("c", "2"), Block("d", "2"), Block("e", "3")]


def test_cross_page_continuity() -> None:
    # gold links crossing a page: b→c and d→e
    assert cross_page_links(PAGED, ["a", "b", "c", "d", "e"]) == (2, 2)
    assert cross_page_links(PAGED, ["a", "b", "d", "c", "e"]) == (0, 2)
    assert cross_page_links(PAGED, ["c", "d", "e", "a", "b"]) == (1, 2)
    assert cross_page_links([Block("a"), Block("b")], ["a", "b"]) == (0, 0)


def test_pages_use_the_predictions_own_page_else_the_gold_one() -> None:
    pred = [Block("b"), Block("a"), Block("c", "3"), Block("d"), Block("e")]
    pages = page_roacc(PAGED, pred)
    assert pages == {"1": 0.0, "2": 0.5, "3": 0.5}


def test_a_whole_document() -> None:
    pred = [Block("a"), Block("b"), Block("d"), Block("c"), Block("e")]
    result = score_reading_order(PAGED, pred)
    assert result.roacc == pytest.approx(1 - 2 / 5)
    assert result.kendall_tau == pytest.approx(0.8)
    assert result.coverage == 1.0
    assert result.continuity == 0.0 and result.cross_page_links == 2
    assert result.pages == {"1": 1.0, "2": 0.0, "3": 1.0}
    assert result.page_roacc == pytest.approx(2 / 3)
    assert result.to_dict()["cross_page_continuity"] == 0.0
    none = score_reading_order([Block("a")], [])
    assert none.roacc == 0.0 and none.kendall_tau is None and none.continuity is None
    assert none.page_roacc is None


def test_parse_blocks() -> None:
    blocks = parse_blocks([1, "b", {"id": 3, "page": 2}])
    assert blocks == [Block("1"), Block("b"), Block("3", "2")]
    assert parse_blocks([{"bid": "x", "p": 9}], "bid", "p") == [Block("x", "9")]
    for bad in ("a,b", [True], [None], [{"page": 1}], [[1]]):
        with pytest.raises(TypeError):
            parse_blocks(bad)


@settings(max_examples=100, deadline=None)
@given(ids, ids)
def test_scores_stay_in_range(gold: list[str], pred: list[str]) -> None:
    value = roacc(gold, pred)
    assert value is None or 0.0 <= value <= 1.0
    assert roacc(gold, gold) in (None, 1.0)
    cov = coverage(gold, pred)
    assert cov is None or (0.0 <= cov <= 1.0 and not math.isnan(cov))
