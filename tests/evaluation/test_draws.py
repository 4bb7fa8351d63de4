"""draws: the C loop's bootstrap draws against numpy's ``integers``, the reference."""

from __future__ import annotations

import os
import types
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extract_mlflow import _compiled, evaluation
from extract_mlflow.evaluation.draws import KernelStream, kernel, kernel_stream


@pytest.fixture(scope="module")
def module() -> types.ModuleType:
    """The C loop; skipped where it was not built, except in CI (.ci/run builds it)."""
    found = kernel()
    if found is None:
        reason = "the C bootstrap loop is not built in this install (pure Python)"
        if os.environ.get("CI") == "true" and not os.environ.get(_compiled.PURE_ENV):
            pytest.fail(f"CI installs the compiled build, but {reason}")
        pytest.skip(reason)
    return found


@pytest.fixture
def fresh_check() -> Iterator[None]:
    """kernel() decided again in the test (and again after it)."""
    kernel.cache_clear()
    yield
    kernel.cache_clear()


@settings(max_examples=150, deadline=None)
@given(
    n=st.one_of(
        st.integers(2, 50),
        st.integers(2, 2**32 - 1),
        st.sampled_from([2**31 - 1, 2**31, 2**31 + 1, 2**32 - 2, 2**32 - 1, 3 * 10**9]),
    ),
    seed=st.one_of(st.none(), st.integers(0, 2**128)),
    cuts=st.lists(st.integers(0, 700), min_size=1, max_size=5),
)
def test_draws_equal_numpy_integers_across_calls(
    module: types.ModuleType, n: int, seed: int | None, cuts: list[int]
) -> None:
    """Any n numpy draws with 32-bit halves, any seed (None: from the OS), drawn in several
    calls of any size (odd sizes leave a half of a 64-bit output for the next call): the same
    documents as numpy's consecutive ``integers`` calls on one generator."""
    rng = np.random.default_rng(seed)
    state = rng.bit_generator.state
    stream = KernelStream(
        module,
        n,
        (state["state"]["state"], state["state"]["inc"], state["has_uint32"], state["uinteger"]),
    )
    for size in cuts:
        got = np.empty(size, dtype=np.uint32)
        stream.draw(got)
        expected = rng.integers(0, n, size=size, dtype=np.int64)
        assert got.astype(np.int64).tobytes() == expected.tobytes()


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(2, 400),
    resamples=st.integers(1, 40),
    seed=st.integers(0, 2**32),
    k=st.integers(1, 4),
    dtype=st.sampled_from(
        [np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32, np.int64]
    ),
)
def test_gather_sums_equal_numpy_gathers(
    module: types.ModuleType, n: int, resamples: int, seed: int, k: int, dtype: Any
) -> None:
    """Each resample's sums of the drawn rows of counts of any integer type, against numpy's
    int64 sums of the same draws: negative values, and sums that wrap around int64 as
    numpy's do (values near the type's limits)."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed + 1)
    counts = rng.integers(info.min, info.max, size=(n, k), dtype=dtype, endpoint=True)
    idx = np.random.default_rng(seed).integers(0, n, size=(resamples, n), dtype=np.int64)
    with np.errstate(over="ignore"):
        expected = counts.astype(np.int64)[idx].sum(axis=1, dtype=np.int64)
    stream = kernel_stream(n, seed)
    assert stream is not None
    got = np.empty((resamples, k), dtype=np.int64)
    stream.gather_sums(counts, got)
    assert got.tobytes() == expected.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_weights_count_each_rows_draws(module: types.ModuleType, dtype: Any) -> None:
    """Weights of two blocks in a row: each row is the bincount of that resample's draws."""
    n, seed = 997, 11
    idx = np.random.default_rng(seed).integers(0, n, size=(7, n), dtype=np.int64)
    stream = kernel_stream(n, seed)
    assert stream is not None
    got = np.full((7, n), 5.0, dtype=dtype)  # stale values are overwritten
    stream.weights(got[:3])
    stream.weights(got[3:])
    expected = np.stack([np.bincount(row, minlength=n) for row in idx]).astype(dtype)
    assert got.tobytes() == expected.tobytes()


def test_bad_arguments_raise_value_errors(module: types.ModuleType) -> None:
    """Buffers that do not fit n, counts that are not integers or not contiguous, or an n
    outside numpy's 32-bit path, are refused before any memory is touched."""
    stream = kernel_stream(10, 0)
    assert stream is not None
    with pytest.raises(ValueError, match="do not match n"):
        stream.gather_sums(np.zeros(15, dtype=np.int64), np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError, match="integers expected"):
        stream.gather_sums(np.zeros((10, 1)), np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError, match="not C-contiguous"):  # a column of a wider matrix
        stream.gather_sums(np.zeros((10, 2), dtype=np.int64)[:, 0], np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError, match="float32 or float64"):
        stream.weights(np.zeros(15, dtype=np.float64))
    with pytest.raises(ValueError, match="float32 or float64"):  # the right size, not floats
        stream.weights(np.zeros(10, dtype=np.int64))
    with pytest.raises(ValueError, match="out: int64 expected"):
        stream.gather_sums(np.zeros(10, dtype=np.int64), np.zeros(2, dtype=np.float64))
    with pytest.raises(ValueError, match="out"):
        stream.draw(np.zeros(4, dtype=np.int64))
    with pytest.raises(ValueError, match="n must be"):
        KernelStream(module, 1, (1, 1, 0, 0)).draw(np.zeros(4, dtype=np.uint32))


def test_no_stream_outside_numpys_32_bit_path(module: types.ModuleType) -> None:
    """One document (numpy draws nothing) and 2**32 or more (numpy's 64-bit path) are left to
    numpy."""
    assert kernel_stream(1, 0) is None
    assert kernel_stream(2**32, 0) is None
    assert kernel_stream(2, 0) is not None


def test_pure_python_means_no_c_loop(
    module: types.ModuleType, fresh_check: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(_compiled.PURE_ENV, "1")
    assert kernel() is None
    assert kernel_stream(100, 0) is None


def test_a_loop_that_draws_unlike_numpy_is_not_used(
    module: types.ModuleType,
    fresh_check: None,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The first-use check: a loop whose draws are off by one document is refused, with a
    warning, and numpy draws."""

    def off_by_one(*args: Any) -> Any:
        state = module.draw(*args)
        args[-1][0] = (int(args[-1][0]) + 1) % args[-2]
        return state

    fake = types.SimpleNamespace(draw=off_by_one)
    monkeypatch.setattr(evaluation, "_resample", fake)
    assert kernel() is None
    assert "numpy draws instead" in caplog.text
    monkeypatch.undo()
    kernel.cache_clear()
    assert kernel() is module  # the real one passes the same check
