"""Resampling documents with replacement, and percentile intervals. Pure.

One set of resamples is drawn with ``numpy.random.default_rng(seed)`` (:func:`resample_indices`)
and reused for every metric. Summing is one matrix product: W (resamples × documents) counts how
often each document is drawn, and W @ counts gives every resample's summed counts at once
(:func:`resampled_sums`, exact: float32 only when every sum is an integer below 2**24).
:func:`bootstrap_sums` draws the same resamples a block of rows at a time, so memory does not
grow with documents × resamples; where the C loop is built (:mod:`.draws`), it draws them and
sums each drawn document's counts (or counts its weights) in one pass, to the same bits.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..core.curves import MetricValue
from .draws import kernel_stream

if TYPE_CHECKING:
    from ..core.counts import Counts
    from ..core.statistics import StatisticsConfig

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95
_CHUNK_CELLS = 1_000_000  # a block of draws: this many cells (~28 MB at peak with its weights)
_PRODUCT_ROWS = 32  # resamples whose float32 weights multiply a wide count matrix at once
_BYTE_ROWS = 64  # resamples whose byte weights do (two blocks held: 12.8 MB at 100,000 docs)
_BYTE_MAX = 255  # the most a byte weight holds
_DRAW_CELLS = 1 << 18  # a block of draws for a wide count matrix (2 MB)
_GATHER_THREADS = 2  # threads gathering blocks of draws at once
_PACK_ROWS = 1 << 16  # documents packed at a time (their int64 temporaries: 0.5 MB each)
_GATHER_COLUMNS = 8  # integer counts of up to this many columns are gathered, not multiplied


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
    without the (resamples × documents) index matrix: the draws are taken from the same
    generator one block of rows at a time (numpy's stream does not depend on how a draw is cut
    into calls), so memory stays at a few tens of MB however many documents there are.

    Whole-number counts are summed exactly, so how the additions are grouped cannot change a
    bit: a few columns (a compact evaluation's tp/fp/fn) are gathered from each resample's
    drawn documents and added as integers (:func:`_gathered_sums`); a wide matrix (compare's:
    three columns per field and side) is multiplied by the weights of many resamples at once,
    a slice of documents at a time (:func:`_multiplied_sums`). Fractional counts are multiplied
    in float64 by one block of draws at a time, as :func:`resampled_sums` does."""
    n, width = counts.shape
    whole = _as_integers(counts)
    if whole is not None:
        if width <= _GATHER_COLUMNS:
            return _gathered_sums(whole, resamples, seed)
        dtype, order_free = _exactness(whole, n)
        if order_free:
            return _multiplied_sums(whole, resamples, seed, dtype)
    matrix = counts.astype(np.float64)
    out = np.empty((resamples, width), dtype=np.float64)
    done = 0
    for take, fill in _weight_blocks(n, resamples, seed):
        weights = np.empty((take, n), dtype=np.float64)
        fill(weights)
        out[done : done + take] = weights @ matrix
        done += take
    return out


def _as_integers(counts: npt.NDArray[Any]) -> npt.NDArray[Any] | None:
    """`counts` when they are integers; float counts that are all whole numbers, with every
    resample's sum exact in float64, as int64 (the same values, the same sums); else None."""
    if counts.dtype.kind in "ui":
        return counts
    if counts.size == 0 or not np.all(np.isfinite(counts)):
        return None
    whole = bool(np.all(counts == np.floor(counts)))
    top = max(abs(float(counts.max())), abs(float(counts.min())))
    if not whole or top * counts.shape[0] >= 2**53:
        return None
    return counts.astype(np.int64)


def _multiplied_sums(
    counts: npt.NDArray[Any], resamples: int, seed: int | None, dtype: type[np.floating[Any]]
) -> FloatArray:
    """:func:`bootstrap_sums` of a wide matrix of integer counts whose sums are exact in
    `dtype`: the weights of many resamples at a time (:func:`_weight_batches`) times the
    counts, a slice of documents at a time copied to `dtype`, so the counts stay in their own
    (narrow) type and no float copy of them is held. Columns that are zero for every document
    (a field a run never got wrong: its fp and fn; a quarter of compare's columns on synth.py's
    invoices) are left out of the product: their sums are 0. Every partial sum is an integer
    `dtype` holds exactly, so the slices and the order of the additions change no bit.

    The products run on one BLAS thread: OpenBLAS's threads wait for one another by spinning,
    so on a machine whose cores are busy more threads made them slower, not faster (figures in
    benchmarks/README.md)."""
    from threadpoolctl import threadpool_limits

    n, width = counts.shape
    used = np.flatnonzero(counts.any(axis=0))  # an all-zero column sums to 0: not multiplied
    step = max(1, _CHUNK_CELLS // max(len(used), 1))  # documents a slice of the counts
    stream = kernel_stream(n, seed)
    byte_weights = stream is None
    while True:
        out = np.zeros((resamples, width), dtype=np.float64)
        done = 0
        try:
            with threadpool_limits(limits=1, user_api="blas"):
                for weights in _weight_batches(n, resamples, seed, byte_weights):
                    block = np.zeros((len(weights), len(used)), dtype=np.float64)
                    for lo in range(0, n, step):
                        part = counts[lo : lo + step, used].astype(dtype)
                        block += weights[:, lo : lo + step].astype(dtype, copy=False) @ part
                    out[done : done + len(weights), used] = block
                    done += len(weights)
        except _ByteOverflow:  # a document drawn more than 255 times: float weights
            byte_weights = False
            continue
        return out


class _ByteOverflow(Exception):
    """A document was drawn more often in one resample than a byte weight holds."""


def _weight_batches(
    n: int, resamples: int, seed: int | None, byte_weights: bool
) -> Iterator[npt.NDArray[Any]]:
    """The weights of every resample (how often each document is drawn in it), as blocks of
    rows in order. Float32 weights, :data:`_PRODUCT_ROWS` resamples a block (:func:`_weight_blocks`,
    the C loop's where it is built); else, with `byte_weights`, bytes of :data:`_BYTE_ROWS`
    resamples a block (twice the resamples per product in the memory of the float block), the next
    block drawn and counted in a thread while the caller multiplies this one (numpy draws and
    counts without the GIL: the draws still come one after another from the one generator).
    Raises _ByteOverflow when a byte cannot hold a weight."""
    if not byte_weights:
        drawn = max(1, _DRAW_CELLS // max(n, 1))  # resamples a block of draws
        rows = min(resamples, max(_PRODUCT_ROWS, drawn))
        weights = np.empty((rows, n), dtype=np.float32)
        filled = 0
        for take, fill in _weight_blocks(n, resamples, seed, drawn):
            if filled + take > rows:
                yield weights[:filled]
                filled = 0
            fill(weights[filled : filled + take])
            filled += take
        yield weights[:filled]
        return
    rng = np.random.default_rng(seed)
    rows = min(resamples, _BYTE_ROWS)
    blocks = [np.empty((rows, n), dtype=np.uint8) for _ in range(2 if resamples > rows else 1)]
    with ThreadPoolExecutor(1, thread_name_prefix="bootstrap-weights") as counter:
        ahead = counter.submit(_count_draws, rng, n, blocks[0][: min(rows, resamples)])
        for k, start in enumerate(range(0, resamples, rows)):
            block = ahead.result()
            after = start + rows
            if after < resamples:
                target = blocks[(k + 1) % 2][: min(rows, resamples - after)]
                ahead = counter.submit(_count_draws, rng, n, target)
            yield block


def _count_draws(rng: np.random.Generator, n: int, out: npt.NDArray[np.uint8]) -> npt.NDArray[Any]:
    """Draw len(out) resamples of `n` documents from `rng` (the draws of
    :func:`resample_indices`, in numpy's 32-bit type where they fit: the same numbers) and
    write how often each document is drawn into each row of `out`; `out` back."""
    draw_type = np.uint32 if n <= 2**32 else np.int64
    drawn = max(1, _DRAW_CELLS // max(n, 1))
    for start in range(0, len(out), drawn):
        block = rng.integers(0, n, size=(min(drawn, len(out) - start), n), dtype=draw_type)
        for k, row in enumerate(block, start):
            counted = np.bincount(row, minlength=n)
            if n > _BYTE_MAX and counted.max() > _BYTE_MAX:
                raise _ByteOverflow
            out[k] = counted
    return out


def _gathered_sums(counts: npt.NDArray[Any], resamples: int, seed: int | None) -> FloatArray:
    """:func:`bootstrap_sums` of integer counts: the same draws, each resample's sums added as
    int64 from the drawn documents' values (no weights, no float copy of the counts): in the C
    loop as each document is drawn, else a gather of each packed word per block of draws. The
    sums are exact integers, as the matrix product's are (its floats hold every integer below
    2**53, and a resample's sum is at most the largest count times the documents): bit for bit
    the same."""
    out = np.empty((resamples, counts.shape[1]), dtype=np.float64)
    stream = kernel_stream(counts.shape[0], seed)
    if stream is not None:  # the C loop: the same draws, each document's counts added as drawn
        sums = np.empty((resamples, counts.shape[1]), dtype=np.int64)
        stream.gather_sums(np.ascontiguousarray(counts), sums)
        out[:] = sums
        return out
    words = _packed_words(counts)

    def gather(start: int, block: IntArray) -> None:
        rows = slice(start, start + len(block))
        for word, fields in words:
            _unpack(word[block].sum(axis=1, dtype=np.int64), fields, out[rows])

    # numpy gathers and sums without the GIL: blocks are gathered in two threads while a third
    # draws the next (each block's sums land in their own rows: the order cannot matter)
    with ThreadPoolExecutor(_GATHER_THREADS, thread_name_prefix="bootstrap-sums") as threads:
        pending: deque[Future[None]] = deque()
        for start, block in _draw_blocks(counts.shape[0], resamples, seed):
            pending.append(threads.submit(gather, start, block))
            if len(pending) > _GATHER_THREADS:
                pending.popleft().result()
        for done in pending:
            done.result()
    return out


def _unpack(sums: IntArray, fields: list[tuple[int, int, int]], out: FloatArray) -> None:
    """One packed word's sums (one per resample) into `out`'s columns of its fields."""
    if len(fields) == 1:
        out[:, fields[0][0]] = sums
        return
    for c, shift, bits in fields:
        out[:, c] = (sums >> shift) & ((1 << bits) - 1)


def _packed_words(counts: npt.NDArray[Any]) -> list[tuple[IntArray, list[tuple[int, int, int]]]]:
    """The count columns packed side by side into int64 words, each with its fields
    (column, shift, bits): a gather of one word sums several columns at once (a gather costs
    the same whatever it moves, and is most of the bootstrap's time).

    Exact: a column holds its own `bits` when no resample's sum of it can reach 2**bits (at
    most documents × its largest count), so one column's sum never carries into the next, and
    a word holds at most 63 bits, so its sum never overflows. Columns with a negative count,
    or too wide to share a word, get a word of their own (their plain int64 sums)."""
    n = counts.shape[0]
    words: list[tuple[IntArray, list[tuple[int, int, int]]]] = []
    shared: list[tuple[int, int, int]] = []
    used = 0

    def close() -> None:
        if shared:
            word = np.zeros(n, dtype=np.int64)
            for lo in range(0, n, _PACK_ROWS):  # a slice at a time: the temporaries stay small
                rows = slice(lo, lo + _PACK_ROWS)
                for c, shift, _ in shared:
                    word[rows] |= counts[rows, c].astype(np.int64) << shift
            words.append((word, list(shared)))
            shared.clear()

    for c in range(counts.shape[1]):
        column = counts[:, c]
        low = int(column.min()) if n else 0
        bits = max(1, (int(column.max()) * n).bit_length()) if n else 1
        if low < 0 or bits > 63:
            words.append((np.ascontiguousarray(column, dtype=np.int64), [(c, 0, 64)]))
            continue
        if used + bits > 63:
            close()
            used = 0
        shared.append((c, used, bits))
        used += bits
    close()
    return words


def _weight_blocks(
    n_docs: int, resamples: int, seed: int | None, step: int | None = None
) -> Iterator[tuple[int, Callable[[npt.NDArray[Any]], None]]]:
    """(rows, fill) per block of :func:`_draw_blocks`' rows (`step` resamples a block, default
    :func:`_block_rows`): `fill` writes the block's weights (how often each document is drawn
    in each of its resamples) into the array it is given."""
    step = step or _block_rows(n_docs)
    stream = kernel_stream(n_docs, seed)
    if stream is not None:  # the C loop draws and counts in one pass, block after block
        for start in range(0, resamples, step):
            yield min(step, resamples - start), stream.weights
        return
    for _, block in _draw_blocks(n_docs, resamples, seed, step):
        yield len(block), partial(_block_weights, block)


def _draw_blocks(
    n_docs: int, resamples: int, seed: int | None, step: int | None = None
) -> Iterator[tuple[int, IntArray]]:
    """(first resample, its block of document indices): the rows of
    :func:`resample_indices`, drawn from one generator `step` rows at a time (default
    :func:`_block_rows`).

    With more than one block, the next block is drawn in a thread while the caller uses this
    one (numpy draws without holding the GIL): the draws still come one after another from the
    one generator, so the stream is the same; a third of the bootstrap's time is drawing."""
    rng = np.random.default_rng(seed)
    step = step or _block_rows(n_docs)

    def draw(start: int) -> IntArray:
        rows = min(step, resamples - start)
        return rng.integers(0, n_docs, size=(rows, n_docs), dtype=np.int64)

    if resamples <= step:
        if resamples > 0:
            yield 0, draw(0)
        return
    with ThreadPoolExecutor(1, thread_name_prefix="bootstrap-draws") as drawer:
        ahead: Future[IntArray] = drawer.submit(draw, 0)
        for start in range(0, resamples, step):
            block = ahead.result()
            if start + step < resamples:
                ahead = drawer.submit(draw, start + step)
            yield start, block


def _block_rows(n_docs: int) -> int:
    return max(1, _CHUNK_CELLS // max(n_docs, 1))


def _block_weights(block: IntArray, out: npt.NDArray[Any]) -> None:
    """How often each document is drawn in each resample (row) of a block, into `out`: one
    bincount per row (a row's counts fit in cache; one flat bincount of the block is ~2.5×
    slower)."""
    n = block.shape[1]
    for k, row in enumerate(block):
        out[k] = np.bincount(row, minlength=n)


def _block_sums(matrix: npt.NDArray[Any], block: IntArray) -> FloatArray:
    """One block of resamples: the weights of every document (a bincount), times the counts."""
    weights = np.empty(block.shape, dtype=matrix.dtype)
    _block_weights(block, weights)
    result: FloatArray = (weights @ matrix).astype(np.float64)
    return result


def percentile_interval(values: FloatArray, confidence: float) -> tuple[float, float]:
    """The central `confidence` interval of `values` (finite, at least one): ``numpy.percentile``
    at (1 − confidence)/2 and 1 − that, default linear method, to the bit.

    Written out because numpy 2's percentile imports ``numpy.ma`` on first use (~15 ms, a
    tenth of the floor's time at 10,000 documents) through ``np.unique``: the same
    interpolation, in the same float64 operations (``(n − 1) · q``, then ``a + (b − a) · g``,
    or ``b − (b − a) · (1 − g)`` from g = 0.5 on), on a copy partly sorted as numpy does."""
    last = len(values) - 1
    tail = (1 - confidence) / 2 * 100
    points = []
    for percent in (tail, 100 - tail):
        at = last * (percent / 100)
        below = math.floor(at)
        if at >= last:  # numpy's clamp: both neighbours the last value, the weight from -1
            below = above = -1
        else:
            above = below + 1
        points.append((at, below, above))
    # numpy's own partial sort (the same kth), so even equal values of opposite sign (0.0,
    # -0.0) land where numpy's land
    ordered = np.array(values, dtype=np.float64)
    ordered.partition(sorted({0, -1, *(i for _, below, above in points for i in (below, above))}))
    ends = []
    for at, below, above in points:
        a, b = float(ordered[below]), float(ordered[above])
        gamma = at - below
        ends.append(a + (b - a) * gamma if gamma < 0.5 else b - (b - a) * (1 - gamma))
    return ends[0], ends[1]


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
