"""stats: the paired bootstrap over documents, against scipy and a plain loop."""

from __future__ import annotations

import math
import tracemalloc
from typing import Any
from unittest.mock import patch

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from extract_mlflow import evaluate
from extract_mlflow.errors import InputError
from extract_mlflow.evaluation import stats as stats_module
from extract_mlflow.evaluation.paired import paired_bootstrap
from extract_mlflow.evaluation.stats import Interval, resample_indices, resampled_sums, summarize
from extract_mlflow.views.frames import report_frame


def counts_frame(
    rng: np.random.Generator, n: int, fields: tuple[str, ...] = ("a", "b[].c"), bias: float = 0.0
) -> pd.DataFrame:
    """A random per-document counts frame shaped like ``report_frame(report, "counts")``."""
    data: dict[str, Any] = {"id": [f"d{i:04d}" for i in range(n)], "status": ["scored"] * n}
    tp = np.zeros(n, dtype=np.int64)
    fp = np.zeros(n, dtype=np.int64)
    fn = np.zeros(n, dtype=np.int64)
    for f in fields:
        ftp = rng.binomial(4, min(0.95, 0.7 + bias), n)
        ffp = rng.binomial(2, 0.2, n)
        ffn = rng.binomial(2, 0.2, n)
        data[f"field_tp/{f}"], data[f"field_fp/{f}"], data[f"field_fn/{f}"] = ftp, ffp, ffn
        tp, fp, fn = tp + ftp, fp + ffp, fn + ffn
    data.update(tp=tp, fp=fp, fn=fn)
    return pd.DataFrame(data)


def plain_f1(frame: pd.DataFrame, rows: np.ndarray) -> float:
    tp = fp = fn = 0
    for r in rows:
        tp += int(frame["tp"].iloc[r])
        fp += int(frame["fp"].iloc[r])
        fn += int(frame["fn"].iloc[r])
    den = 2 * tp + fp + fn
    return 2 * tp / den if den else math.nan


# -- against independent computations -------------------------------------------------------


@pytest.mark.slow
def test_the_f1_interval_matches_a_plain_loop() -> None:
    rng = np.random.default_rng(1)
    base, cand = counts_frame(rng, 60), counts_frame(rng, 60, bias=0.1)
    resamples, seed = 200, 7
    got = paired_bootstrap(base, cand, resamples=resamples, seed=seed).intervals["f1"]
    idx = resample_indices(60, resamples, seed)
    deltas = np.array([plain_f1(cand, row) - plain_f1(base, row) for row in idx])
    low, high = np.percentile(deltas, [2.5, 97.5])
    assert got.low == pytest.approx(low, abs=1e-12)
    assert got.high == pytest.approx(high, abs=1e-12)
    assert got.delta == pytest.approx(plain_f1(cand, np.arange(60)) - plain_f1(base, np.arange(60)))
    below, above = (deltas <= 0).sum(), (deltas >= 0).sum()
    assert got.p_value == pytest.approx(min(1.0, 2 * (min(below, above) + 1) / (resamples + 1)))


def unit_precision_frames(n: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every document has tp + fp = 1, so micro precision is the mean of tp: decomposable."""
    rng = np.random.default_rng(seed)
    b_tp = rng.binomial(1, 0.7, n)
    c_tp = np.where(rng.random(n) < 0.8, b_tp, rng.binomial(1, 0.85, n))  # paired, correlated
    ids = [f"d{i}" for i in range(n)]

    def frame(tp: np.ndarray, failed: np.ndarray) -> pd.DataFrame:
        status = np.where(failed, "parse_failure", "scored")
        return pd.DataFrame({"id": ids, "status": status, "tp": tp, "fp": 1 - tp, "fn": 0})

    b_fail, c_fail = rng.random(n) < 0.1, rng.random(n) < 0.05
    return frame(b_tp, b_fail), frame(c_tp, c_fail)


@pytest.mark.parametrize(("metric", "column"), [("precision", "tp"), ("parse_failure_rate", "pf")])
def test_a_decomposable_metric_matches_scipy_paired_bootstrap(metric: str, column: str) -> None:
    base, cand = unit_precision_frames(400, seed=3)
    x, y = base["tp"].to_numpy(float), cand["tp"].to_numpy(float)
    if column == "pf":
        x = (base["status"] == "parse_failure").to_numpy(float)
        y = (cand["status"] == "parse_failure").to_numpy(float)

    def mean_delta(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.asarray(np.mean(b, axis=axis) - np.mean(a, axis=axis))

    reference = scipy_stats.bootstrap(
        (x, y),
        mean_delta,
        paired=True,
        method="percentile",
        n_resamples=5000,
        confidence_level=0.95,
        rng=np.random.default_rng(11),
    )
    ours = paired_bootstrap(base, cand, resamples=5000, seed=12).intervals[metric]
    se = reference.standard_error
    assert ours.delta == pytest.approx(float(np.mean(y) - np.mean(x)))
    # the two Monte-Carlo estimates of each bound differ by ~0.05 SE (sd); allow 0.25 SE
    assert abs(ours.low - reference.confidence_interval.low) < 0.25 * se
    assert abs(ours.high - reference.confidence_interval.high) < 0.25 * se


def test_the_p_value_agrees_with_a_normal_approximation() -> None:
    base, cand = unit_precision_frames(400, seed=5)
    iv = paired_bootstrap(base, cand, resamples=4000, seed=1).intervals["precision"]
    d = cand["tp"].to_numpy(float) - base["tp"].to_numpy(float)
    se = d.std(ddof=1) / math.sqrt(len(d))
    normal_p = 2 * scipy_stats.norm.sf(abs(d.mean()) / se)
    assert iv.p_value == pytest.approx(normal_p, abs=0.03)
    assert (iv.p_value < 0.05) == (iv.low > 0 or iv.high < 0)


@pytest.mark.parametrize(
    ("high", "scale"),
    [(5, 1.0), (3_000_000, 1.0), (5, 0.37)],  # float32-exact; too large for float32; fractional
)
def test_resampled_sums_are_exact(high: int, scale: float) -> None:
    rng = np.random.default_rng(9)
    counts = rng.integers(0, high, size=(40, 6)).astype(np.float64) * scale
    idx = resample_indices(40, 30, seed=1)
    expected = np.array([counts[row].sum(axis=0) for row in idx])
    np.testing.assert_allclose(resampled_sums(counts, idx), expected, rtol=1e-15, atol=0)


# -- reproducibility and invariants ----------------------------------------------------------


def test_a_seed_reproduces_the_intervals() -> None:
    rng = np.random.default_rng(2)
    base, cand = counts_frame(rng, 50), counts_frame(rng, 50)
    first = paired_bootstrap(base, cand, resamples=300, seed=42)
    again = paired_bootstrap(base, cand, resamples=300, seed=42)
    other = paired_bootstrap(base, cand, resamples=300, seed=43)
    assert first.intervals == again.intervals
    assert first.intervals["f1"].low != other.intervals["f1"].low


frames = st.integers(2, 40).flatmap(
    lambda n: st.tuples(st.just(n), st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
)


@settings(max_examples=40, deadline=None)
@given(spec=frames)
def test_a_run_against_itself_has_a_zero_interval(spec: tuple[int, int, int]) -> None:
    n, data_seed, seed = spec
    frame = counts_frame(np.random.default_rng(data_seed), n)
    result = paired_bootstrap(frame, frame, resamples=50, seed=seed)
    assert result.paired == n and result.intervals
    for iv in result.intervals.values():
        assert (iv.delta, iv.low, iv.high, iv.p_value) == (0.0, 0.0, 0.0, 1.0)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(spec=frames)
def test_swapping_the_runs_mirrors_the_deltas(spec: tuple[int, int, int]) -> None:
    n, data_seed, seed = spec
    rng = np.random.default_rng(data_seed)
    base, cand = counts_frame(rng, n), counts_frame(rng, n)
    forward = paired_bootstrap(base, cand, resamples=60, seed=seed).intervals
    backward = paired_bootstrap(cand, base, resamples=60, seed=seed).intervals
    assert forward.keys() == backward.keys()
    for name, iv in forward.items():
        back = backward[name]
        assert back.delta == pytest.approx(-iv.delta, abs=1e-12)
        assert back.low == pytest.approx(-iv.high, abs=1e-12)
        assert back.high == pytest.approx(-iv.low, abs=1e-12)
        assert back.p_value == pytest.approx(iv.p_value)


@settings(max_examples=25, deadline=None)
@given(spec=frames, order=st.randoms(use_true_random=False))
def test_row_order_changes_nothing(spec: tuple[int, int, int], order: Any) -> None:
    n, data_seed, seed = spec
    rng = np.random.default_rng(data_seed)
    base, cand = counts_frame(rng, n), counts_frame(rng, n)
    rows = list(range(n))
    order.shuffle(rows)
    shuffled = cand.iloc[rows].reset_index(drop=True)
    assert (
        paired_bootstrap(base, cand, resamples=40, seed=seed).intervals
        == paired_bootstrap(base, shuffled, resamples=40, seed=seed).intervals
    )


# -- agreement with the report ---------------------------------------------------------------


def test_point_deltas_equal_the_logged_metric_deltas() -> None:
    gold = [
        {"id": "1", "total": 10, "vendor": {"name": "Acme"}, "items": [{"sku": "a", "qty": 1}]},
        {"id": "2", "total": 20, "vendor": {"name": "Bolt"}, "items": [{"sku": "b", "qty": 2}]},
        {"id": "3", "total": 30, "vendor": {"name": "Core"}, "items": []},
    ]
    pred_a = [
        {"id": "1", "total": 10, "vendor": {"name": "Acme"}, "items": [{"sku": "a", "qty": 1}]},
        {"id": "2", "total": 21, "vendor": {"name": "Bolt"}, "items": [{"sku": "b", "qty": 3}]},
        {"id": "3", "total": 30},
    ]
    pred_b: list[Any] = [
        {"id": "1", "total": 11, "vendor": {"name": "Acme"}, "items": [{"sku": "x", "qty": 1}]},
        '{"id": "2", "total": 2',  # a parse failure
        {"id": "3", "total": 30, "vendor": {"name": "Core"}, "extra": 1},
    ]
    ra, rb = evaluate(gold, pred_a), evaluate(gold, pred_b)
    result = paired_bootstrap(report_frame(ra, "counts"), report_frame(rb, "counts"), resamples=100)
    ma, mb = ra.metrics(), rb.metrics()
    # every count-based score (a run's own bootstrap interval bounds are not compared)
    shared = {k for k in set(ma) & set(mb) if "_ci_" not in k} - {"documents"}
    assert shared <= set(result.intervals)
    for name in shared:
        assert result.intervals[name].delta == pytest.approx(mb[name] - ma[name], abs=1e-12), name


# -- alignment and degenerate cases ----------------------------------------------------------


def test_documents_in_one_run_only_are_left_out_and_reported() -> None:
    rng = np.random.default_rng(4)
    base, cand = counts_frame(rng, 10), counts_frame(rng, 10)
    cand.loc[0, "id"] = "new"
    result = paired_bootstrap(base, cand.iloc[:-1], resamples=20)
    assert result.paired == 8
    assert result.baseline_only == ("d0000", "d0009") and result.candidate_only == ("new",)


def test_fewer_than_two_paired_documents_give_no_intervals() -> None:
    rng = np.random.default_rng(4)
    frame = counts_frame(rng, 1)
    result = paired_bootstrap(frame, frame)
    assert result.intervals == {} and result.paired == 1
    assert "at least 2" in result.notes[0]
    other = frame.assign(id="other")
    assert paired_bootstrap(frame, other).paired == 0


def test_undefined_scores_are_left_out() -> None:
    base = pd.DataFrame(
        {
            "id": ["a", "b", "c", "d"],
            "tp": [2, 1, 0, 3],
            "fp": [0, 1, 0, 0],
            "fn": [1, 0, 0, 0],
            "field_tp/x": [2, 1, 0, 3],
            "field_fp/x": [0, 1, 0, 0],
            "field_fn/x": [1, 0, 0, 0],
            "field_tp/rare": [0, 0, 0, 0],
            "field_fp/rare": [0, 0, 0, 0],
            "field_fn/rare": [0, 0, 0, 0],
        }
    )
    cand = base.copy()
    cand.loc[2, ["field_fn/rare", "fn"]] = [1, 1]  # only document c has the rare field
    result = paired_bootstrap(base, cand, resamples=500, seed=0)
    assert "field_f1/rare" not in result.intervals  # 0/0 in the baseline on the full set
    # a resample of document c alone (p = 4^-4) has recall 0/0 in the baseline: left out
    assert 490 <= result.intervals["recall"].resamples < 500
    assert result.intervals["field_f1/x"].resamples == result.intervals["recall"].resamples


def test_resamples_where_a_score_is_undefined_are_dropped() -> None:
    base = pd.DataFrame(
        {"id": [f"d{i}" for i in range(5)], "tp": [1, 0, 0, 0, 0], "fp": 0, "fn": 0}
    )
    cand = base.assign(tp=[0, 0, 0, 0, 0], fn=[1, 0, 0, 0, 0])
    iv = paired_bootstrap(base, cand, resamples=1000, seed=0).intervals["f1"]
    # only resamples that draw document d0 define F1: about 1 - (4/5)^5 = 67 %
    assert 600 < iv.resamples < 740
    assert (iv.delta, iv.low, iv.high) == (-1.0, -1.0, -1.0)
    assert iv.p_value == pytest.approx(2 / (iv.resamples + 1))


def test_a_field_in_one_run_only_has_no_interval_and_stays_out_of_its_macro_f1() -> None:
    rng = np.random.default_rng(6)
    base = counts_frame(rng, 30, fields=("a",))
    cand = counts_frame(rng, 30, fields=("a", "new"))
    result = paired_bootstrap(base, cand, resamples=50)
    assert "field_f1/new" not in result.intervals
    assert "field_f1/a" in result.intervals and "macro_f1" in result.intervals


def test_layout_scores_give_composite_intervals() -> None:
    rng = np.random.default_rng(8)
    base = counts_frame(rng, 40).assign(layout_score=rng.random(40))
    cand = counts_frame(rng, 40).assign(layout_score=np.where(rng.random(40) < 0.1, np.nan, 0.9))
    result = paired_bootstrap(base, cand, resamples=100)
    b_f1 = 2 * base.tp.sum() / (2 * base.tp.sum() + base.fp.sum() + base.fn.sum())
    c_f1 = 2 * cand.tp.sum() / (2 * cand.tp.sum() + cand.fp.sum() + cand.fn.sum())
    expected = c_f1 * 0.9 - b_f1 * base.layout_score.mean()
    assert result.intervals["composite"].delta == pytest.approx(expected)
    assert result.intervals["layout_score"].delta == pytest.approx(0.9 - base.layout_score.mean())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"drop": "tp"}, "lacks column 'tp'"),
        ({"dup": True}, "repeats document id 'd0000'"),
        ({"neg": True}, "column 'fp' holds a negative"),
        ({"half_field": True}, "no field_fn/a"),
    ],
)
def test_bad_frames_are_input_errors(change: dict[str, Any], message: str) -> None:
    frame = counts_frame(np.random.default_rng(0), 5)
    bad = frame.copy()
    if "drop" in change:
        bad = bad.drop(columns=change["drop"])
    if "dup" in change:
        bad.loc[1, "id"] = "d0000"
    if "neg" in change:
        bad.loc[1, "fp"] = -1
    if "half_field" in change:
        bad = bad.drop(columns="field_fn/a")
    with pytest.raises(InputError, match=message):
        paired_bootstrap(frame, bad)


def test_summarize_without_defined_deltas_is_none() -> None:
    assert summarize(math.nan, np.array([0.1]), 0.95) is None
    assert summarize(0.1, np.array([math.nan]), 0.95) is None
    iv = summarize(0.1, np.array([0.1, 0.2, math.nan]), 0.9)
    assert isinstance(iv, Interval) and iv.resamples == 2 and iv.confidence == 0.9


def test_structure_ratios_are_resampled_as_sums_of_numerators_and_denominators() -> None:
    """Per-document (num, den) columns: the delta is Σnum/Σden of the candidate minus the
    baseline's, and the interval comes from the same resampled documents."""
    import pandas as pd

    rng = np.random.default_rng(3)
    n = 40
    base = pd.DataFrame({"id": [str(i) for i in range(n)], "tp": 5, "fp": 1, "fn": 1})
    cand = base.copy()
    for frame, shift in ((base, 0.0), (cand, 0.1)):
        den = rng.integers(1, 4, n).astype(float)
        frame["structure/teds_num"] = np.clip(rng.uniform(0.5, 0.9, n) + shift, 0, 1) * den
        frame["structure/teds_den"] = den
        frame["field_tp/a"], frame["field_fp/a"], frame["field_fn/a"] = 5, 1, 1
    result = paired_bootstrap(base, cand, resamples=500, seed=1)
    teds = result.intervals["teds"]
    expected = (
        cand["structure/teds_num"].sum() / cand["structure/teds_den"].sum()
        - base["structure/teds_num"].sum() / base["structure/teds_den"].sum()
    )
    assert teds.delta == pytest.approx(expected)
    assert teds.low <= teds.delta <= teds.high and teds.low > 0
    assert result.intervals["field_f1/a"].delta == 0.0  # field columns are unaffected


# -- drawing a block at a time -----------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 300),
    resamples=st.integers(1, 120),
    seed=st.integers(0, 2**32),
    columns=st.integers(1, 4),
    fractional=st.booleans(),
    cells=st.sampled_from([7, 50, 1000, 4_000_000]),
)
def test_block_draws_equal_the_whole_index_matrix(
    n: int, resamples: int, seed: int, columns: int, fractional: bool, cells: int
) -> None:
    """bootstrap_sums never holds the index matrix, yet gives the same sums, bit for bit, as
    drawing the whole matrix at once, for any block size (cells per block)."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 9, size=(n, columns)).astype(np.float64)
    if fractional:
        counts *= 0.37
    with patch.object(stats_module, "_CHUNK_CELLS", cells):  # the reference's blocks too
        expected = resampled_sums(counts, resample_indices(n, resamples, seed))
        got = stats_module.bootstrap_sums(counts, resamples, seed)
    assert got.tobytes() == expected.tobytes()


def whole_matrix_sums(counts: Any, resamples: int, seed: int) -> Any:
    """The reference: the float64 product of the weights of the whole index matrix (how often
    each document is drawn in each resample) with the counts."""
    n = len(counts)
    idx = resample_indices(n, resamples, seed)
    weights = np.stack([np.bincount(row, minlength=n) for row in idx]).astype(np.float64)
    return weights @ counts.astype(np.float64)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 200),
    resamples=st.integers(1, 90),
    seed=st.integers(0, 2**32),
    columns=st.integers(1, 90),
    product_rows=st.sampled_from([1, 3, 32, 10**6]),
    slice_cells=st.sampled_from([1, 7, 1000, 1 << 20]),
    top=st.sampled_from([1, 9, 255, 70_000, 2**26, 2**33]),
    dtype=st.sampled_from([np.float64, np.uint8, np.int16, np.uint32, np.int64, np.uint64]),
    zero_share=st.sampled_from([0.0, 0.3, 1.0]),
)
def test_whole_counts_of_any_type_give_the_float64_sums(
    n: int,
    resamples: int,
    seed: int,
    columns: int,
    product_rows: int,
    slice_cells: int,
    top: int,
    dtype: Any,
    zero_share: float,
) -> None:
    """Whole counts (compare's wide matrix of byte counts, a compact evaluation's narrow
    integer columns, large counts whose sums pass float32 or float64's exact integers) are
    multiplied by several resamples' weights at once, a slice of documents at a time, their
    all-zero columns left out: the same sums, bit for bit, as the float64 product of the
    weights of the whole index matrix."""
    rng = np.random.default_rng(seed)
    if dtype != np.float64:
        top = min(top, int(np.iinfo(dtype).max))
    counts = rng.integers(0, top, size=(n, columns), endpoint=True).astype(dtype)
    counts[:, rng.random(columns) < zero_share] = 0
    expected = whole_matrix_sums(counts, resamples, seed)
    with (
        patch.object(stats_module, "_PRODUCT_ROWS", product_rows),
        patch.object(stats_module, "_SLICE_CELLS", slice_cells),
    ):
        got = stats_module.bootstrap_sums(counts, resamples, seed)
    if top * n < 2**53:  # exact sums: the grouping of the additions cannot matter
        assert got.tobytes() == expected.tobytes()
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-12)


@settings(max_examples=20, deadline=None)
@given(
    n=st.integers(2, 60),
    resamples=st.integers(1, 40),
    seed=st.integers(0, 2**32),
    byte_max=st.sampled_from([1, 2, 3]),
    product_rows=st.sampled_from([1, 3, 128]),
)
def test_weights_a_byte_cannot_hold_give_the_same_bits(
    n: int, resamples: int, seed: int, byte_max: int, product_rows: int
) -> None:
    """A document drawn more often in a resample than a byte weight holds (here a smaller
    limit, reached on small sets) turns that block's weights to floats: the same bits."""
    counts = np.random.default_rng(seed).integers(0, 9, size=(n, 12)).astype(np.uint8)
    expected = whole_matrix_sums(counts, resamples, seed)
    with (
        patch.object(stats_module, "_BYTE_MAX", byte_max),
        patch.object(stats_module, "_PRODUCT_ROWS", product_rows),
    ):
        got = stats_module.bootstrap_sums(counts, resamples, seed)
    assert got.tobytes() == expected.tobytes()


@pytest.mark.slow
def test_block_draws_keep_memory_flat() -> None:
    """100,000 documents × 1,000 resamples: the index matrix alone would be 800 MB; the block
    draws stay under 64 MB (numpy's allocations are traced: two blocks of weights, a draw, a
    slice of the counts as floats), and a wide matrix of byte counts (200 columns: 80 MB as
    float32) is never copied whole to floats."""
    ints = np.random.default_rng(0).integers(0, 5, size=(100_000, 3))
    wide = np.random.default_rng(1).integers(0, 5, size=(100_000, 200), dtype=np.uint8)
    for counts in (ints * 0.5, ints, wide):
        tracemalloc.start()
        try:
            stats_module.bootstrap_sums(counts, 1000, 0)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 64 * 2**20, (counts.dtype, peak)


def test_percentile_interval_by_hand() -> None:
    """Hand-computed: 1..5 at 50%: ends at positions 1 and 3 (25th and 75th percentile)."""
    assert stats_module.percentile_interval(np.array([5.0, 1, 4, 2, 3]), 0.5) == (2.0, 4.0)
    assert stats_module.percentile_interval(np.array([0.0, 10.0]), 0.5) == (2.5, 7.5)
    assert stats_module.percentile_interval(np.array([7.0]), 0.95) == (7.0, 7.0)
