"""Paired bootstrap over documents: how sure is a difference between two runs? Pure.

Both runs' per-document count frames (``report_frame(report, "counts")``: id, status, tp, fp, fn,
``field_tp/<path>``, ``field_fp/<path>``, ``field_fn/<path>``, optionally ``layout_score``) are
aligned on the document id (:mod:`.pairing`: documents in both runs only; sorted by id, so row
order never matters). One set of resamples of the documents is drawn with
``numpy.random.default_rng(seed)`` and reused for every metric; each resample recomputes every
count-based score from summed counts, never from per-document scores:

- ``precision``, ``recall``, ``f1`` (micro), ``macro_f1`` (mean of the defined field F1s),
  ``field_f1/<key>``, ``field_precision/<key>``, ``field_recall/<key>`` (keys as logged);
- ``parse_failure_rate`` (from ``status``), and ``layout_score`` and ``composite`` (micro F1 ×
  mean layout score) when both frames carry a ``layout_score`` column;
- every metric family's metrics (``teds``, ``cer``, …) from their per-document
  ``<family>/<metric>_num`` and ``_den`` columns, as Σnum / Σden.

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
from .pairing import FIELD_PREFIXES, RATIO_PREFIXES, CountLayout, Pairing, align, paired_counts
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


_RATIO_COLUMN = re.compile(rf"^((?:{'|'.join(map(re.escape, RATIO_PREFIXES))}).+)_num$")


def field_paths(frame: pd.DataFrame) -> list[str]:
    """The field paths of a counts frame, in column order; each needs all three columns."""
    paths = [c[len("field_tp/") :] for c in frame.columns if str(c).startswith("field_tp/")]
    for p in paths:
        for prefix in FIELD_PREFIXES[1:]:
            if prefix + p not in frame.columns:
                raise InputError(f"documents frame has field_tp/{p} but no {prefix}{p}")
    return paths


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
    for i, stem in enumerate(layout.ratios):
        out[stem.partition("/")[2]] = _ratio(sums[:, at + 2 * i], sums[:, at + 2 * i + 1])
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
    """The per-document ratio metrics both frames carry (numerator and denominator), by the
    stem of their columns (``<family>/<metric>``)."""
    stems = []
    for column in baseline.columns:
        m = _RATIO_COLUMN.match(str(column))
        if m is None:
            continue
        stem = m.group(1)
        den = f"{stem}_den"
        if den in baseline.columns and column in candidate.columns and den in candidate.columns:
            stems.append(stem)
    return tuple(stems)


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


def _most_regressed(pairing: Pairing, b: _Side, c: _Side, top: int) -> list[DocumentChange]:
    """The `top` most regressed of the paired documents (sorted by id): F1 fell the most
    (a 0/0 F1 on either side counts as no change), then most new errors, then by id."""
    d_f1 = c.f1() - b.f1()
    d_f1 = np.where(np.isnan(d_f1), 0.0, d_f1)
    new_errors = c.errors() - b.errors()
    worse = np.flatnonzero((d_f1 < 0) | (new_errors > 0))
    ranked = worse[np.lexsort((worse, -new_errors[worse], d_f1[worse]))][:top]
    out = []
    for k, doc_id in zip(ranked.tolist(), pairing.texts(ranked), strict=True):
        (b_f1, b_errors, b_status), (c_f1, c_errors, c_status) = b.change_part(k), c.change_part(k)
        out.append(DocumentChange(doc_id, b_f1, c_f1, b_errors, c_errors, b_status, c_status))
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
    broke, fixed = tuple(pairing.texts(b_ok & ~c_ok)), tuple(pairing.texts(~b_ok & c_ok))
    return DocumentFlips(broke, fixed, tuple(_most_regressed(pairing, b, c, top)))
