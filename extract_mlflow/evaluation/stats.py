"""Resampling documents with replacement, and percentile intervals. Pure.

One set of resamples is drawn with ``numpy.random.default_rng(seed)`` (:func:`resample_indices`)
and reused for every metric. Summing is one matrix product: W (resamples × documents) counts how
often each document is drawn, and W @ counts gives every resample's summed counts at once
(:func:`resampled_sums`, exact: float32 only when every sum is an integer below 2**24).
:func:`bootstrap_sums` draws the same resamples one at a time and multiplies their weights a
block at a time, so memory does not grow with documents × resamples, to the same bits.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..core.curves import MetricValue

if TYPE_CHECKING:
    from ..core.counts import Counts
    from ..core.statistics import StatisticsConfig

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95
_PRODUCT_ROWS = 64  # resamples whose weights multiply the counts at once
_SLICE_CELLS = 1 << 20  # counts copied to float at a time
_WEIGHT_CELLS = 1 << 23  # weights in a block (8 MB of bytes; two are held)
_BYTE_MAX = 255  # the largest weight a byte holds
_CHUNK_CELLS = 1_000_000  # a block of draws of resampled_sums: this many cells


@dataclass(frozen=True, slots=True)
class Interval:
    """The bootstrap view of one metric's delta (candidate − baseline)."""

    delta: float
    low: float
    high: float
    p_value: float
    resamples: int
    confidence: float = DEFAULT_CONFIDENCE

    def to_dict(self) -> dict[str, float | int]:
        return {
            "delta": self.delta,
            "ci_low": self.low,
            "ci_high": self.high,
            "p_value": self.p_value,
            "resamples": self.resamples,
            "confidence": self.confidence,
        }


# -- frames → count matrices ----------------------------------------------------------------


# -- summed counts → scores -----------------------------------------------------------------


# -- resampling -----------------------------------------------------------------------------


def resample_indices(n_docs: int, resamples: int, seed: int | None) -> IntArray:
    """The (resamples × n_docs) document indices of every resample, drawn once."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, n_docs, size=(resamples, n_docs), dtype=np.int64)


def _exactness(counts: npt.NDArray[Any], n_docs: int) -> tuple[type[np.floating[Any]], bool]:
    """(dtype, order-free) of the resampled sums: float32 when every sum is an integer below
    2**24 (exact, and the matrix product twice as fast), else float64; order-free when every
    sum is an integer float64 holds exactly, so the order of the additions inside a matrix
    product cannot change a bit."""
    if counts.size == 0:
        return np.float64, True
    whole = counts.dtype.kind in "ui" or bool(np.all(counts == np.floor(counts)))
    top = max(abs(float(counts.max())), abs(float(counts.min()))) * n_docs  # no copy of counts
    return (np.float32 if whole and top < 2**24 else np.float64), whole and top < 2**53


def resampled_sums(counts: FloatArray, indices: IntArray) -> FloatArray:
    """Summed counts per resample: W @ counts, W[r, d] = times document d is in resample r."""
    resamples, n = indices.shape
    dtype, _ = _exactness(counts, n)
    matrix = counts.astype(dtype)
    out = np.empty((resamples, counts.shape[1]), dtype=np.float64)
    step = _block_rows(n)
    for start in range(0, resamples, step):
        block = indices[start : start + step]
        out[start : start + block.shape[0]] = _block_sums(matrix, block)
    return out


def bootstrap_sums(counts: npt.NDArray[Any], resamples: int, seed: int | None) -> FloatArray:
    """``resampled_sums(counts, resample_indices(len(counts), resamples, seed))``, bit for bit,
    without the (resamples × documents) index matrix: the same draws come from the one
    generator a resample at a time (numpy's stream does not depend on how a draw is cut into
    calls), and each resample's weights (how often each document is drawn) are multiplied by
    the counts a block of resamples at a time.

    Whole-number counts whose sums are exact (below 2**53; float32 below 2**24, twice as fast)
    are multiplied a slice of documents at a time, so no float copy of a wide matrix is held
    (compare's: three columns per field and run) and the slicing changes no bit; columns that
    are zero for every document are left out (their sums are 0). These products run on one
    BLAS thread: OpenBLAS's threads wait for one another by spinning, so on a machine whose
    cores are busy more threads made them several times slower. Other counts are multiplied
    in float64 by :func:`resampled_sums`' own blocks of draws, to its bits."""
    n, width = counts.shape
    out = np.zeros((resamples, width), dtype=np.float64)
    dtype, order_free = _exactness(counts, n)
    if n == 0:
        return out
    if not order_free:
        matrix = counts.astype(np.float64)
        rng, step = np.random.default_rng(seed), _block_rows(n)
        for start in range(0, resamples, step):
            block = rng.integers(0, n, size=(min(step, resamples - start), n), dtype=np.int64)
            out[start : start + len(block)] = _block_sums(matrix, block)
        return out
    from threadpoolctl import threadpool_limits

    used = np.flatnonzero(counts.any(axis=0))
    rows = max(1, min(_PRODUCT_ROWS, _WEIGHT_CELLS // n))  # resamples multiplied at once
    docs = max(1, _SLICE_CELLS // max(len(used), 1))  # documents copied to floats at once
    with threadpool_limits(limits=1, user_api="blas"):
        for start, weights in _weight_blocks(n, resamples, rows, dtype, seed):
            sums = out[start : start + len(weights)]
            for lo in range(0, n, docs):
                part = counts[lo : lo + docs, used].astype(dtype)
                sums[:, used] += weights[:, lo : lo + docs].astype(dtype) @ part
    return out


def _weight_blocks(
    n: int, resamples: int, rows: int, dtype: type[np.floating[Any]], seed: int | None
) -> Iterator[tuple[int, npt.NDArray[Any]]]:
    """(first resample, weights of `rows` resamples): how often each document is drawn in each
    resample, block after block, in bytes (a quarter of float32's memory) unless a document
    is drawn more than 255 times in one of the block's resamples. The next block is drawn and
    counted in a thread while the caller multiplies this one (numpy draws and counts without
    holding the GIL); the draws still come one after another from the one generator."""
    rng = np.random.default_rng(seed)
    draw_type = np.uint32 if n <= 2**32 else np.int64  # numpy draws the same numbers in either

    def count(start: int) -> npt.NDArray[Any]:
        weights: npt.NDArray[Any] = np.empty((min(rows, resamples - start), n), dtype=np.uint8)
        for k in range(len(weights)):  # a resample at a time: its bincount fits in cache
            counted = np.bincount(rng.integers(0, n, size=n, dtype=draw_type), minlength=n)
            if weights.dtype == np.uint8 and counted.max() > _BYTE_MAX:
                weights = weights.astype(dtype)
            weights[k] = counted
        return weights

    with ThreadPoolExecutor(1, thread_name_prefix="bootstrap-weights") as counter:
        ahead = counter.submit(count, 0)
        for start in range(0, resamples, rows):
            weights = ahead.result()
            if start + rows < resamples:
                ahead = counter.submit(count, start + rows)
            yield start, weights


def _block_rows(n_docs: int) -> int:
    return max(1, _CHUNK_CELLS // max(n_docs, 1))


def _block_sums(matrix: npt.NDArray[Any], block: IntArray) -> FloatArray:
    """One block of resamples: the weights of every document (a bincount), times the counts."""
    weights = np.empty(block.shape, dtype=matrix.dtype)
    for k, row in enumerate(block):
        weights[k] = np.bincount(row, minlength=block.shape[1])
    result: FloatArray = (weights @ matrix).astype(np.float64)
    return result


def percentile_interval(values: FloatArray, confidence: float) -> tuple[float, float]:
    """The central `confidence` interval of `values` (finite, at least one): ``numpy.percentile``
    at (1 − confidence)/2 and 1 − that, default linear method."""
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def summarize(point: float, deltas: FloatArray, confidence: float) -> Interval | None:
    """Interval and p-value from the resampled deltas of one metric (NaNs left out)."""
    valid = deltas[np.isfinite(deltas)]
    if not math.isfinite(point) or valid.size == 0:
        return None
    low, high = percentile_interval(valid, confidence)
    below = int((valid <= 0).sum())
    above = int((valid >= 0).sum())
    p = min(1.0, 2 * (min(below, above) + 1) / (valid.size + 1))
    return Interval(point, float(low), float(high), p, int(valid.size), confidence)


# -- intervals of a run's scores ------------------------------------------------------------


def count_intervals(
    counts: npt.NDArray[Any], micro: Counts, config: StatisticsConfig
) -> dict[str, float]:
    """`<metric>_ci_low` / `<metric>_ci_high`: the seeded percentile bootstrap interval over
    documents of micro precision, recall and F1, each recomputed from the resample's summed
    counts (one draw for all three; settings in ``[structure]``: bootstrap_resamples,
    bootstrap_seed, confidence). `counts`: (documents × 3) tp, fp, fn (the document table's
    :meth:`~extract_mlflow.report.DocumentTable.count_matrix`: integers, summed as integers,
    never copied). Fewer than 2 documents: the point value at both ends."""
    points = {"precision": micro.precision, "recall": micro.recall, "f1": micro.f1}
    out: dict[str, float] = {}
    if len(counts) < 2:
        for name, value in points.items():
            if value is not None:
                out[f"{name}_ci_low"] = out[f"{name}_ci_high"] = value
        return out
    tp, fp, fn = bootstrap_sums(counts, config.bootstrap_resamples, config.bootstrap_seed).T
    with np.errstate(invalid="ignore", divide="ignore"):
        resampled = {
            "precision": tp / (tp + fp),
            "recall": tp / (tp + fn),
            "f1": 2 * tp / (2 * tp + fp + fn),
        }
    for name, values in resampled.items():
        valid = values[np.isfinite(values)]  # a resample with 0/0 has no score
        if points[name] is not None and valid.size:
            low, high = percentile_interval(valid, config.confidence)
            out[f"{name}_ci_low"], out[f"{name}_ci_high"] = low, high
    return out


def ratio_interval(
    num: npt.ArrayLike,
    den: npt.ArrayLike,
    *,
    resamples: int = 1000,
    seed: int | None = 0,
    confidence: float = 0.95,
) -> MetricValue:
    """Σnum/Σden and its percentile bootstrap interval over documents (the ratio recomputed
    from each resample's sums). Every denominator must be > 0. With fewer than 2 documents, or
    when every document has the same value, the interval is the point value at both ends and
    flagged ``degenerate``."""
    n_arr, d_arr = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    point = float(n_arr.sum() / d_arr.sum())
    values = n_arr / d_arr
    if len(values) < 2 or np.ptp(values) <= 1e-12 * max(1.0, abs(point)):
        return MetricValue(point, point, point, len(values), degenerate=True)
    sums = bootstrap_sums(np.column_stack([n_arr, d_arr]), resamples, seed)
    boot = sums[:, 0] / sums[:, 1]
    low, high = percentile_interval(boot, confidence)
    return MetricValue(point, low, high, len(values), resamples=resamples)
