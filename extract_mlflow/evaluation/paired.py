"""Paired bootstrap over documents: how sure is a difference between two runs? Pure.

Both runs' per-document count frames (``Report.to_frame("counts")``: id, status, tp, fp, fn,
``field_tp/<path>``, ``field_fp/<path>``, ``field_fn/<path>``, optionally ``layout_score``) are
aligned on the document id (documents in both runs only; sorted by id, so row order never
matters). One set of resamples of the documents is drawn with ``numpy.random.default_rng(seed)``
and reused for every metric; each resample recomputes every count-based score from summed counts,
never from per-document scores:

- ``precision``, ``recall``, ``f1`` (micro), ``macro_f1`` (mean of the defined field F1s),
  ``field_f1/<key>``, ``field_precision/<key>``, ``field_recall/<key>`` (keys as logged);
- ``parse_failure_rate`` (from ``status``), and ``layout_score`` and ``composite`` (micro F1 ×
  mean layout score) when both frames carry a ``layout_score`` column;
- the document-structure metrics (``teds``, ``anls``, ``reading_order``, …) from their
  per-document ``structure/<metric>_num`` and ``_den`` columns, as Σnum / Σden.

For each metric the result holds the point delta (candidate − baseline on the paired documents),
the percentile interval of the resampled deltas and a two-sided p-value: twice the smaller share
of resamples on either side of zero, with the usual +1 correction,
``p = min(1, 2 · min(#{d ≤ 0} + 1, #{d ≥ 0} + 1) / (B + 1))``, so p < 1 − confidence exactly when
the percentile interval (nearly) excludes 0, and p is never 0. Resamples where a score is 0/0 on
either side are left out of that metric's interval and p-value (``Interval.resamples`` counts the
ones used). With fewer than two paired documents there is nothing to resample: no intervals.

Summing is one matrix product: W (resamples × documents) counts how often each document is
drawn, and W @ counts gives every resample's summed counts at once.

The document flips of a comparison (:func:`document_view`: documents that became fully
correct or stopped being so, and the largest F1 moves) are read from the same paired documents
(:func:`paired_view` aligns the two frames once for both).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..core.keys import field_key, keys_from_frame
from ..errors import InputError
from .stats import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    FloatArray,
    IntArray,
    Interval,
    bootstrap_sums,
    summarize,
)

if TYPE_CHECKING:
    import pandas as pd


MIN_DOCUMENTS = 2


_FIELD_PREFIXES = ("field_tp/", "field_fp/", "field_fn/")


@dataclass(frozen=True, slots=True)
class Bootstrap:
    """Intervals by metric, and which documents were paired."""

    intervals: dict[str, Interval]
    paired: int
    baseline_only: tuple[str, ...] = ()
    candidate_only: tuple[str, ...] = ()
    resamples: int = DEFAULT_RESAMPLES
    seed: int | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class CountLayout:
    """Which columns of a count matrix hold what (the same for both runs)."""

    paths: tuple[str, ...]
    has_status: bool
    has_layout: bool
    ratios: tuple[str, ...] = ()
    """metrics given per document as a numerator and a denominator (``structure/<m>_num``,
    ``structure/<m>_den``): the run's value is Σnum / Σden"""
    keys: dict[str, str] = field(default_factory=dict)
    """field path -> the suffix of its metric keys, as the runs logged them"""

    @property
    def width(self) -> int:
        return self.ratio_start + 2 * len(self.ratios)

    @property
    def ratio_start(self) -> int:
        return self.field_start + 3 * len(self.paths)

    @property
    def field_start(self) -> int:
        return 3 + int(self.has_status) + 2 * int(self.has_layout)


RATIO_PREFIX = "structure/"


_RATIO_COLUMN = re.compile(rf"^{re.escape(RATIO_PREFIX)}(.+)_num$")


def field_paths(frame: pd.DataFrame) -> list[str]:
    """The field paths of a counts frame, in column order; each needs all three columns."""
    paths = [c[len("field_tp/") :] for c in frame.columns if str(c).startswith("field_tp/")]
    for p in paths:
        for prefix in _FIELD_PREFIXES[1:]:
            if prefix + p not in frame.columns:
                raise InputError(f"documents frame has field_tp/{p} but no {prefix}{p}")
    return paths


def _sorted_ids(frame: pd.DataFrame, side: str) -> tuple[npt.NDArray[Any], IntArray]:
    """The frame's document ids as text, sorted, and the row of each; an InputError when a
    column compare needs is missing or an id repeats."""
    missing = [c for c in ("id", "tp", "fp", "fn") if c not in frame.columns]
    if missing:
        raise InputError(f"{side} documents frame lacks column '{missing[0]}'")
    # the ids as str objects made at once: iterating an Arrow-backed column in Python costs
    # ~0.75 µs an id (0.3 s of a 100,000-document comparison)
    ids = frame["id"].astype(str).to_numpy(dtype=object)
    rows = np.argsort(ids, kind="stable")  # Python's own order of str; fast when sorted
    ordered = ids[rows]
    if len(ordered) > 1 and not (ordered[1:] != ordered[:-1]).all():
        seen: set[str] = set()
        repeated = next(i for i in ids if i in seen or seen.add(i))  # type: ignore[func-returns-value]
        raise InputError(f"{side} documents frame repeats document id {repeated!r}")
    return ordered, rows


@dataclass(frozen=True)
class Pairing:
    """The documents in both frames, sorted by id, as rows of each frame, and the ids of each
    side's unpaired documents."""

    ids: npt.NDArray[Any]
    baseline_rows: IntArray
    candidate_rows: IntArray
    baseline_only: tuple[str, ...] = ()
    candidate_only: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.ids)


def align(baseline: pd.DataFrame, candidate: pd.DataFrame) -> Pairing:
    """Where the documents in both frames are, sorted by id, so row order never matters."""
    b_ids, b_rows = _sorted_ids(baseline, "baseline")
    c_ids, c_rows = _sorted_ids(candidate, "candidate")
    at = np.searchsorted(c_ids, b_ids).clip(max=max(len(c_ids) - 1, 0))
    found = (c_ids[at] == b_ids) if len(c_ids) else np.zeros(len(b_ids), dtype=bool)
    in_baseline = np.zeros(len(c_ids), dtype=bool)
    in_baseline[at[found]] = True
    return Pairing(
        b_ids[found],
        b_rows[found],
        c_rows[at[found]],
        tuple(b_ids[~found].tolist()),
        tuple(c_ids[~in_baseline].tolist()),
    )


def narrowest_type(values: npt.NDArray[Any]) -> np.dtype[Any]:
    """The narrowest integer type that holds every one of the integer `values` (a run's counts
    mostly fit in a byte); float64 for other values."""
    if values.dtype.kind not in "uib":
        return np.dtype(np.float64)
    if values.size == 0:
        return np.dtype(np.uint8)
    low, high = int(values.min()), int(values.max())
    if low >= 0:
        return np.min_scalar_type(high)
    return np.result_type(np.min_scalar_type(low), np.min_scalar_type(-high - 1))


def narrowest(values: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Integer `values` in :func:`narrowest_type` (the same numbers); other values as they are."""
    return values.astype(narrowest_type(values)) if values.dtype.kind in "uib" else values


def _integers(frame: pd.DataFrame, name: str) -> bool:
    dtype = frame[name].dtype
    return isinstance(dtype, np.dtype) and dtype.kind in "uib"


def _column_specs(layout: CountLayout) -> list[tuple[str, str]]:
    """(kind, column) of each of the layout.width columns of a run's count matrix, in order."""
    counts = [("count", name) for name in ("tp", "fp", "fn")]
    if layout.has_status:
        counts.append(("failed", "status"))
    if layout.has_layout:
        counts += [("score", "layout_score"), ("scored", "layout_score")]
    counts += [("count", pre + p) for p in layout.paths for pre in _FIELD_PREFIXES]
    parts = ("_num", "_den")
    return counts + [("ratio", f"{RATIO_PREFIX}{m}{part}") for m in layout.ratios for part in parts]


def _column_type(frame: pd.DataFrame, kind: str, name: str) -> np.dtype[Any]:
    """The type the column is held in: counts as :func:`narrowest_type` of the whole column (a
    missing field: zeros in a byte), flags as bool, scores and ratios as float64."""
    if kind == "count":
        if name not in frame.columns:
            return np.dtype(np.uint8)
        return narrowest_type(frame[name].to_numpy()) if _integers(frame, name) else np.dtype("f8")
    return np.dtype(np.bool_ if kind in ("failed", "scored") else np.float64)


def _column(frame: pd.DataFrame, rows: IntArray, kind: str, name: str, side: str) -> Any:
    """The column's values for the documents at `rows`. An InputError when a count is negative
    or empty; a document without a score or a ratio's input adds 0 (and 0 / 0) to the sums."""
    if kind == "failed":
        return frame["status"].astype(str).to_numpy()[rows] == "parse_failure"
    if kind != "count":
        values = frame[name].to_numpy(dtype=np.float64, na_value=np.nan)[rows]
        return np.isfinite(values) if kind == "scored" else np.nan_to_num(values, nan=0.0)
    if name not in frame.columns:
        return 0
    if _integers(frame, name):
        values = frame[name].to_numpy()[rows]
        bad = values.dtype.kind == "i" and values.size > 0 and values.min() < 0
    else:
        values = frame[name].to_numpy(np.float64, na_value=np.nan)[rows]
        bad = not np.all(np.isfinite(values) & (values >= 0))
    if bad:
        raise InputError(f"{side} documents frame: column '{name}' holds a negative or empty count")
    return values


def paired_counts(
    baseline: pd.DataFrame, candidate: pd.DataFrame, pairing: Pairing, layout: CountLayout
) -> npt.NDArray[Any]:
    """The (paired documents × 2·layout.width) matrix of both runs' counts, the baseline's
    columns first, filled one column at a time. Integer counts stay integers, in the narrowest
    type that holds them all (a 100,000-document comparison's matrix is then ~20 MB); with a
    fractional column (a layout score, a structure ratio) the matrix is float64. Column-major,
    as pandas gives a frame's values: a column's sum adds its values in the same order."""
    specs = _column_specs(layout)
    sides = [
        (baseline, pairing.baseline_rows, "baseline"),
        (candidate, pairing.candidate_rows, "candidate"),
    ]
    types = [_column_type(frame, kind, name) for frame, _, _ in sides for kind, name in specs]
    shape = (len(pairing), len(types))
    out = np.empty(shape, dtype=np.result_type(np.uint8, *types), order="F")
    k = 0
    for frame, rows, side in sides:
        for kind, name in specs:
            out[:, k] = _column(frame, rows, kind, name, side)
            k += 1
    return out


def _ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _prf(tp: FloatArray, fp: FloatArray, fn: FloatArray) -> tuple[FloatArray, ...]:
    return _ratio(tp, tp + fp), _ratio(tp, tp + fn), _ratio(2 * tp, 2 * tp + fp + fn)


def _nanmean_rows(values: FloatArray) -> FloatArray:
    defined = np.isfinite(values)
    n = defined.sum(axis=1)
    return _ratio(np.where(defined, values, 0.0).sum(axis=1), n.astype(np.float64))


def scores_from_sums(
    sums: FloatArray, layout: CountLayout, n_docs: int, present: Sequence[bool] | None = None
) -> dict[str, FloatArray]:
    """Every count-based score of each row of summed counts (rows = resamples); 0/0 is NaN.

    ``present`` says which of ``layout.paths`` the run has (the others do not enter macro F1).
    """
    tp, fp, fn = sums[:, 0], sums[:, 1], sums[:, 2]
    out: dict[str, FloatArray] = dict(
        zip(("precision", "recall", "f1"), _prf(tp, fp, fn), strict=True)
    )
    if layout.has_status:
        out["parse_failure_rate"] = sums[:, 3] / n_docs
    if layout.has_layout:
        at = 3 + int(layout.has_status)
        out["layout_score"] = _ratio(sums[:, at], sums[:, at + 1])
        out["composite"] = out["f1"] * out["layout_score"]
    at = layout.ratio_start
    for i, name in enumerate(layout.ratios):
        out[name] = _ratio(sums[:, at + 2 * i], sums[:, at + 2 * i + 1])
    if not layout.paths:
        return out
    s, e = layout.field_start, layout.ratio_start
    p, r, f = _prf(sums[:, s:e:3], sums[:, s + 1 : e : 3], sums[:, s + 2 : e : 3])
    keep = np.ones(len(layout.paths), bool) if present is None else np.asarray(present, bool)
    out["macro_f1"] = _nanmean_rows(f[:, keep])
    for i, path in enumerate(layout.paths):
        out[field_key("field_f1", path, layout.keys)] = f[:, i]
        out[field_key("field_precision", path, layout.keys)] = p[:, i]
        out[field_key("field_recall", path, layout.keys)] = r[:, i]
    return out


def _layout(
    baseline: pd.DataFrame, candidate: pd.DataFrame, keys: dict[str, str] | None = None
) -> CountLayout:
    b_paths, c_paths = field_paths(baseline), field_paths(candidate)
    paths = tuple(dict.fromkeys([*b_paths, *c_paths]))
    both = [
        c for c in ("status", "layout_score") if c in baseline.columns and c in candidate.columns
    ]
    return CountLayout(
        paths,
        "status" in both,
        "layout_score" in both,
        ratio_names(baseline, candidate),
        keys or {},
    )


def ratio_names(baseline: pd.DataFrame, candidate: pd.DataFrame) -> tuple[str, ...]:
    """The per-document ratio metrics both frames carry (numerator and denominator)."""
    names = []
    for column in baseline.columns:
        m = _RATIO_COLUMN.match(str(column))
        if m is None:
            continue
        name = m.group(1)
        den = f"{RATIO_PREFIX}{name}_den"
        if den in baseline.columns and column in candidate.columns and den in candidate.columns:
            names.append(name)
    return tuple(names)


def _scores(
    sums: FloatArray, layout: CountLayout, n: int, frame: pd.DataFrame
) -> dict[str, FloatArray]:
    own = set(field_paths(frame))
    return scores_from_sums(sums, layout, n, [p in own for p in layout.paths])


def paired_bootstrap(
    baseline: pd.DataFrame,
    candidate: pd.DataFrame,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Bootstrap:
    """Bootstrap intervals of (candidate − baseline) for every count-based score.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"id": ["a", "b"], "tp": [3, 1], "fp": [0, 1], "fn": [1, 0]})
    >>> paired_bootstrap(frame, frame, resamples=50).intervals["f1"].high
    0.0
    """
    _check_settings(resamples, confidence)
    return _bootstrap(baseline, candidate, align(baseline, candidate), resamples, seed, confidence)


def paired_view(
    baseline: pd.DataFrame,
    candidate: pd.DataFrame,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    top: int = 10,
) -> tuple[Bootstrap, DocumentFlips]:
    """:func:`paired_bootstrap` and :func:`document_view` of two frames, aligned once."""
    _check_settings(resamples, confidence)
    pairing = align(baseline, candidate)
    boot = _bootstrap(baseline, candidate, pairing, resamples, seed, confidence)
    return boot, _flips(baseline, candidate, pairing, top)


def _check_settings(resamples: int, confidence: float) -> None:
    if resamples < 1 or not 0 < confidence < 1:
        raise ValueError("resamples must be ≥ 1 and confidence strictly between 0 and 1")


def _bootstrap(
    baseline: pd.DataFrame,
    candidate: pd.DataFrame,
    pairing: Pairing,
    resamples: int,
    seed: int | None,
    confidence: float,
) -> Bootstrap:
    n, b_only, c_only = len(pairing), pairing.baseline_only, pairing.candidate_only
    if n < MIN_DOCUMENTS:
        note = f"{n} paired document(s): at least {MIN_DOCUMENTS} are needed for intervals"
        return Bootstrap({}, n, b_only, c_only, resamples, seed, (note,))
    keys = {**keys_from_frame(baseline), **keys_from_frame(candidate)}  # the logged keys
    layout = _layout(baseline, candidate, keys)
    counts = paired_counts(baseline, candidate, pairing, layout)
    sums = bootstrap_sums(counts, resamples, seed)
    full = counts.sum(axis=0, keepdims=True, dtype=np.float64)
    w = layout.width
    b_point = _scores(full[:, :w], layout, n, baseline)
    c_point = _scores(full[:, w:], layout, n, candidate)
    b_boot, c_boot = (
        _scores(sums[:, :w], layout, n, baseline),
        _scores(sums[:, w:], layout, n, candidate),
    )
    intervals: dict[str, Interval] = {}
    for name, b_value in b_point.items():
        point = float(c_point[name][0] - b_value[0])
        found = summarize(point, c_boot[name] - b_boot[name], confidence)
        if found is not None:
            intervals[name] = found
    return Bootstrap(intervals, n, b_only, c_only, resamples, seed)


@dataclass(frozen=True, slots=True)
class DocumentChange:
    """One document on both sides (F1 None when 0/0)."""

    id: str
    baseline_f1: float | None
    candidate_f1: float | None
    baseline_errors: int
    candidate_errors: int
    baseline_status: str | None = None
    candidate_status: str | None = None

    @property
    def delta_f1(self) -> float | None:
        if self.baseline_f1 is None or self.candidate_f1 is None:
            return None
        return self.candidate_f1 - self.baseline_f1

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "baseline_f1": self.baseline_f1,
            "candidate_f1": self.candidate_f1,
            "delta_f1": self.delta_f1,
            "baseline_errors": self.baseline_errors,
            "candidate_errors": self.candidate_errors,
            "baseline_status": self.baseline_status,
            "candidate_status": self.candidate_status,
        }


def _doc_f1(tp: float, fp: float, fn: float) -> float | None:
    den = 2 * tp + fp + fn
    return float(2 * tp / den) if den else None


@dataclass(frozen=True)
class _Side:
    """tp, fp, fn (int64, or float64 for a float column) and statuses of one frame's paired
    documents, in pairing order."""

    tp: npt.NDArray[Any]
    fp: npt.NDArray[Any]
    fn: npt.NDArray[Any]
    status: npt.NDArray[Any] | None

    @classmethod
    def of(cls, frame: pd.DataFrame, rows: IntArray) -> _Side:
        def column(name: str) -> npt.NDArray[Any]:
            series = frame[name]
            if isinstance(series.dtype, np.dtype) and series.dtype.kind in "uib":
                return series.to_numpy()[rows].astype(np.int64)
            return series.to_numpy(np.float64, na_value=np.nan)[rows]

        status = None
        if "status" in frame.columns:
            status = frame["status"].to_numpy(dtype=object)[rows]
        return cls(column("tp"), column("fp"), column("fn"), status)

    def fully_correct(self) -> npt.NDArray[np.bool_]:
        ok: npt.NDArray[np.bool_] = (self.tp > 0) & (self.fp == 0) & (self.fn == 0)
        if self.status is not None:
            ok &= self.status.astype(str) == "scored"
        return ok

    def f1(self) -> FloatArray:
        den = 2 * self.tp + self.fp + self.fn
        return np.asarray(2 * self.tp / np.where(den > 0, den, np.nan), dtype=np.float64)

    def errors(self) -> npt.NDArray[Any]:
        return np.asarray(self.fp + self.fn)

    def change_part(self, k: int) -> tuple[float | None, int, str | None]:
        """Document `k`'s F1, errors and status, as :class:`DocumentChange` holds them."""
        tp, fp, fn = self.tp[k].item(), self.fp[k].item(), self.fn[k].item()
        status = None if self.status is None else str(self.status[k])
        return _doc_f1(tp, fp, fn), int(fp + fn), status


def _most_regressed(ids: npt.NDArray[Any], b: _Side, c: _Side, top: int) -> list[DocumentChange]:
    """The `top` most regressed of the paired documents `ids` (sorted): F1 fell the most
    (a 0/0 F1 on either side counts as no change), then most new errors, then by id."""
    d_f1 = c.f1() - b.f1()
    d_f1 = np.where(np.isnan(d_f1), 0.0, d_f1)
    new_errors = c.errors() - b.errors()
    worse = np.flatnonzero((d_f1 < 0) | (new_errors > 0))
    ranked = worse[np.lexsort((worse, -new_errors[worse], d_f1[worse]))][:top]
    out = []
    for k in ranked.tolist():
        (b_f1, b_errors, b_status), (c_f1, c_errors, c_status) = b.change_part(k), c.change_part(k)
        out.append(DocumentChange(ids[k], b_f1, c_f1, b_errors, c_errors, b_status, c_status))
    return out


@dataclass(frozen=True)
class DocumentFlips:
    broke: tuple[str, ...] = ()
    fixed: tuple[str, ...] = ()
    regressed: tuple[DocumentChange, ...] = ()


def document_view(baseline: pd.DataFrame, candidate: pd.DataFrame, top: int) -> DocumentFlips:
    """Flips both ways and the most regressed documents, over the paired documents."""
    return _flips(baseline, candidate, align(baseline, candidate), top)


def _flips(
    baseline: pd.DataFrame, candidate: pd.DataFrame, pairing: Pairing, top: int
) -> DocumentFlips:
    b = _Side.of(baseline, pairing.baseline_rows)
    c = _Side.of(candidate, pairing.candidate_rows)
    b_ok, c_ok = b.fully_correct(), c.fully_correct()
    ids = pairing.ids
    broke, fixed = tuple(ids[b_ok & ~c_ok].tolist()), tuple(ids[~b_ok & c_ok].tolist())
    return DocumentFlips(broke, fixed, tuple(_most_regressed(ids, b, c, top)))
