"""Chunked columns and runs of positions (the compact evaluation's storage) against plain
Python lists: the same rows and positions whatever the chunking, widening and merging."""

from __future__ import annotations

import pickle
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from extract_mlflow.evaluation import chunks
from extract_mlflow.evaluation.chunks import Chunked, Runs

_ROWS = st.lists(st.tuples(*[st.integers(0, 2**40)] * 2) | st.tuples(*[st.integers(0, 300)] * 2))


@given(parts=st.lists(_ROWS, max_size=4), join_at=st.integers(0, 4))
def test_chunked_rows_are_the_rows_added(parts: list[list[tuple[int, int]]], join_at: int) -> None:
    """Rows added, merged from other columns and joined midway read back as added, each chunk
    in the narrowest type that holds its values."""
    with patch.object(chunks, "CHUNK_ROWS", 3):
        column, want = Chunked(width=2), []
        for i, rows in enumerate(parts):
            if i == join_at:
                column.joined()
            other = Chunked(width=2)
            for row in rows:
                other.append(row)
            column.extend(other)
            other.append((1, 1))  # the merged rows were copied
            want += rows
        got = column.joined()
    assert got.tolist() == [list(r) for r in want] and len(column) == len(want)
    top = max((max(r) for r in want), default=0)
    assert got.dtype.itemsize == next(s for s in (1, 2, 4, 8) if top < 2 ** (8 * s))
    assert pickle.loads(pickle.dumps(column)).joined().tolist() == got.tolist()


def test_chunked_refuses_negative_values() -> None:
    column = Chunked()
    with pytest.raises(ValueError, match="≥ 0"):
        column.append((-1,))
    assert len(column) == 0


@given(st.lists(st.integers(0, 60), unique=True), st.integers(0, 60))
def test_runs_hold_the_positions_added(positions: list[int], cut: int) -> None:
    """Runs give back the positions in the order added, know whether that is sorted, refuse a
    position twice and find the overlap of two parts."""
    a, b = Runs(), Runs()
    for p in positions[:cut]:
        a.add(p)
    for p in positions[cut:]:
        b.add(p)
    assert list(a.positions()) == positions[:cut]
    assert a.in_order() == (positions[:cut] == sorted(positions[:cut]))
    assert a.overlap(b) == []
    both = Runs()
    both.extend(a)
    both.extend(b)
    assert list(both.positions()) == positions and len(both) == len(positions)
    assert both.overlap(a) == sorted(positions[:cut])
    for p in positions[:1]:
        with pytest.raises(ValueError, match="already scored"):
            both.add(p)


def test_positions_in_gold_order_cost_nothing() -> None:
    runs = Runs()
    for p in range(100_000):
        runs.add(p)
    assert runs.positions() == range(100_000) and len(runs.bounds) == 2
    assert isinstance(Runs().positions(), np.ndarray)
