"""Two runs' per-document count frames side by side. Pure.

:func:`align` finds the documents both frames hold, sorted by id (so row order never matters),
as rows of each frame; :func:`paired_counts` fills the matrix the paired bootstrap resamples
(:mod:`.paired`) with both runs' counts of those documents, a column at a time. Counts are
integers, and most fit in a byte: they are kept in the narrowest integer type that holds them
(:mod:`~..core.narrow`), an eighth of float64.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..core.arrow import system_pool
from ..core.narrow import narrowest_type
from ..errors import InputError
from ..families import FAMILIES
from .stats import IntArray

if TYPE_CHECKING:
    import pandas as pd

FIELD_PREFIXES = ("field_tp/", "field_fp/", "field_fn/")


RATIO_PREFIXES = tuple(f"{f.name}/" for f in FAMILIES)
"""the prefixes of the per-document ratio columns: each metric family's
(:mod:`extract_mlflow.families`)"""


@dataclass(frozen=True, slots=True)
class CountLayout:
    """Which columns of a count matrix hold what (the same for both runs)."""

    paths: tuple[str, ...]
    has_status: bool
    has_layout: bool
    ratios: tuple[str, ...] = ()
    """metrics given per document as a numerator and a denominator, by the stem of their
    columns (``<family>/<m>`` of ``<family>/<m>_num`` and ``_den``; the metric is what
    follows the prefix): the run's value is Σnum / Σden"""
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


def _id_array(frame: pd.DataFrame, side: str) -> Any:
    """The frame's document ids as text in an Arrow array (the column's own buffers when it is
    Arrow-backed, as a read ``documents.parquet``'s is: no Python str per id); UTF-8 bytes
    when an id holds a lone surrogate (JSON can spell one), in the same code point order. An
    InputError when a column compare needs is missing."""
    import pyarrow as pa

    missing = [c for c in ("id", "tp", "fp", "fn") if c not in frame.columns]
    if missing:
        raise InputError(f"{side} documents frame lacks column '{missing[0]}'")
    try:
        ids = pa.array(frame["id"].astype(str))
    except (UnicodeEncodeError, pa.ArrowException):
        raw = [str(i).encode("utf-8", "surrogatepass") for i in frame["id"]]
        ids = pa.array(raw, pa.large_binary())
    ids = ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids
    return ids if pa.types.is_large_binary(ids.type) else ids.cast(pa.large_string())


def id_texts(ids: Any) -> list[str]:
    """Arrow ids (:func:`_id_array`) as str."""
    import pyarrow as pa

    if pa.types.is_large_binary(ids.type):
        return [b.decode("utf-8", "surrogatepass") for b in ids.to_pylist()]
    return list(ids.to_pylist())


def _sorted_rows(ids: Any, side: str) -> IntArray:
    """The rows of `ids` in id order (UTF-8 byte order is code point order, Python's order of
    str; stable); an InputError when an id repeats."""
    import pyarrow.compute as pc

    rows: IntArray = pc.array_sort_indices(ids).to_numpy().astype(np.int64)
    ordered = ids.take(rows)
    if len(ids) > 1 and pc.any(pc.equal(ordered[1:], ordered[:-1])).as_py():
        seen: set[str] = set()
        repeated = next(i for i in id_texts(ids) if i in seen or seen.add(i))  # type: ignore[func-returns-value]
        raise InputError(f"{side} documents frame repeats document id {repeated!r}")
    return rows


@dataclass(frozen=True)
class Pairing:
    """The documents in both frames, sorted by id, as rows of each frame, and the ids of each
    side's unpaired documents."""

    ids: Any
    """the paired documents' ids, sorted: an Arrow array (:func:`id_texts` gives them as str)"""
    baseline_rows: IntArray
    candidate_rows: IntArray
    baseline_only: tuple[str, ...] = ()
    candidate_only: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.ids)

    def texts(self, which: npt.NDArray[Any]) -> list[str]:
        """The paired ids at `which` (positions, or a mask of them), as str."""
        import pyarrow as pa

        picked = pa.array(which)
        chosen = self.ids.filter(picked) if which.dtype == bool else self.ids.take(picked)
        return id_texts(chosen)


def align(baseline: pd.DataFrame, candidate: pd.DataFrame) -> Pairing:
    """Where the documents in both frames are, sorted by id, so row order never matters."""
    import pyarrow as pa
    import pyarrow.compute as pc

    with system_pool():  # the hash tables and sorted copies are given back once done
        b_ids, c_ids = _id_array(baseline, "baseline"), _id_array(candidate, "candidate")
        if b_ids.type != c_ids.type:  # one side's ids are bytes (a lone surrogate): both are
            b_ids, c_ids = b_ids.cast(pa.large_binary()), c_ids.cast(pa.large_binary())
        b_rows, c_rows = _sorted_rows(b_ids, "baseline"), _sorted_rows(c_ids, "candidate")
        b_sorted, c_sorted = b_ids.take(b_rows), c_ids.take(c_rows)
        if b_sorted.equals(c_sorted):  # the same documents (two runs of one gold set)
            return Pairing(b_sorted, b_rows, c_rows)
        at = pc.index_in(b_sorted, value_set=c_ids)  # each sorted baseline id's candidate row
        found = at.is_valid()
        c_only = c_sorted.filter(pc.invert(pc.is_in(c_sorted, value_set=b_ids)))
        return Pairing(
            b_sorted.filter(found),
            b_rows[found.to_numpy(zero_copy_only=False)],
            at.filter(found).to_numpy().astype(np.int64),
            tuple(id_texts(b_sorted.filter(pc.invert(found)))),
            tuple(id_texts(c_only)),
        )


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
    counts += [("count", pre + p) for p in layout.paths for pre in FIELD_PREFIXES]
    parts = ("_num", "_den")
    return counts + [("ratio", f"{m}{part}") for m in layout.ratios for part in parts]


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
    type that holds them all (most often a byte); with a
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
