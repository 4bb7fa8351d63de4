"""boundaries: precision/recall/F1 with and without a window; the greedy matching is maximum."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from extract_mlflow.structure.boundaries import match_count, parse_positions, score_boundaries


def test_without_a_window_boundaries_must_coincide() -> None:
    counts = score_boundaries([10, 20, 30], [10, 21, 30, 40])
    assert (counts.tp, counts.fp, counts.fn) == (2, 2, 1)
    assert counts.precision == 0.5 and counts.recall == pytest.approx(2 / 3)
    assert counts.f1 == pytest.approx(4 / 7)


def test_with_a_window() -> None:
    counts = score_boundaries([10, 20, 30], [12, 21, 27, 40], window=2)
    assert (counts.tp, counts.fp, counts.fn) == (2, 2, 1)  # 27 is 3 away from 30
    assert score_boundaries([10, 20, 30], [12, 21, 27, 40], window=3).f1 == pytest.approx(6 / 7)


def test_each_boundary_matches_at_most_once() -> None:
    counts = score_boundaries([10], [9, 10, 11], window=1)
    assert (counts.tp, counts.fp, counts.fn) == (1, 2, 0)
    counts = score_boundaries([9, 10, 11], [10], window=1)
    assert (counts.tp, counts.fp, counts.fn) == (1, 0, 2)
    assert match_count([5, 5], [5, 5, 5]) == 2  # repeated positions are a multiset


def test_the_greedy_pass_finds_the_crossing_assignment() -> None:
    # 11 could take 10 first and leave 12 unmatched; the maximum pairs 9–10 and 11–12
    assert match_count([10, 12], [9, 11], window=1) == 2
    assert match_count([0, 3], [2, 4], window=2) == 2


def test_empty_sides_and_a_negative_window() -> None:
    assert score_boundaries([], []).f1 is None
    counts = score_boundaries([], [1.0])
    assert counts.precision == 0.0 and counts.recall is None and counts.f1 == 0.0
    assert score_boundaries([1.0], []).precision is None
    with pytest.raises(ValueError):
        match_count([1], [1], window=-1)


def test_parse_positions() -> None:
    assert parse_positions([1, 2.5]) == [1.0, 2.5]
    for bad in ("1,2", [True], ["3"], [None]):
        with pytest.raises(TypeError):
            parse_positions(bad)


def maximum_matching(gold: list[int], pred: list[int], window: int) -> int:
    """The largest matching by assignment: reward 1 for each pair within the window."""
    if not gold or not pred:
        return 0
    reward = (np.abs(np.subtract.outer(gold, pred)) <= window).astype(float)
    rows, cols = linear_sum_assignment(-reward)
    return int(reward[rows, cols].sum())


positions = st.lists(st.integers(0, 30), max_size=8)


@settings(max_examples=300, deadline=None)
@given(positions, positions, st.integers(0, 4))
def test_greedy_matching_is_maximum(gold: list[int], pred: list[int], window: int) -> None:
    assert match_count(gold, pred, window) == maximum_matching(gold, pred, window)
