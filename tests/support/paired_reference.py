"""A plain pandas reference for the paired comparison's frames: how two count frames are
aligned, what their count matrix holds and which documents flip or regressed, written with
pandas row operations as compare once did it (``set_index``/``loc``, ``reindex``,
``sort_values``), independently of ``extract_mlflow.evaluation.paired``'s numpy version.

- Alignment: both frames' ids as text; the documents in both, sorted by id (Python's order of
  str); each side's unpaired ids, sorted.
- Count matrix (one side, documents × columns, float64): tp, fp, fn, then 1.0 for a
  ``parse_failure`` status (when both frames have a status), the layout score (NaN → 0) and
  1.0 where it is defined (when both have one), then ``field_tp``/``field_fp``/``field_fn`` of
  every field path of either frame (zeros where the frame lacks it), then each ratio metric's
  numerator and denominator (NaN → 0).
- Flips: a document is fully correct when tp > 0, fp = fn = 0 and its status (if any) is
  ``scored``; *broke* = fully correct in the baseline only, *fixed* the reverse, both in id
  order. Most regressed: the documents whose F1 (2tp / (2tp + fp + fn), 0/0 undefined) fell or
  whose errors (fp + fn) rose, by F1 change (undefined on either side: 0), then most new
  errors, then id; the first `top`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

PREFIXES = ("field_tp/", "field_fp/", "field_fn/")


def aligned(
    baseline: pd.DataFrame, candidate: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame, tuple[str, ...], tuple[str, ...]]:
    b_ids = [str(i) for i in baseline["id"]]
    c_ids = [str(i) for i in candidate["id"]]
    common = sorted(set(b_ids) & set(c_ids))
    b = baseline.assign(id=b_ids).set_index("id").loc[common]
    c = candidate.assign(id=c_ids).set_index("id").loc[common]
    return b, c, tuple(sorted(set(b_ids) - set(c_ids))), tuple(sorted(set(c_ids) - set(b_ids)))


def paths(frame: pd.DataFrame) -> list[str]:
    return [str(c)[len("field_tp/") :] for c in frame.columns if str(c).startswith("field_tp/")]


def ratios(baseline: pd.DataFrame, candidate: pd.DataFrame) -> list[str]:
    found = []
    for column in map(str, baseline.columns):
        if column.startswith("structure/") and column.endswith("_num"):
            name = column[len("structure/") : -len("_num")]
            den = f"structure/{name}_den"
            if den in baseline.columns and {column, den} <= set(candidate.columns):
                found.append(name)
    return found


def count_matrix(
    frame: pd.DataFrame, all_paths: list[str], status: bool, layout: bool, ratio_names: list[str]
) -> np.ndarray:
    names = ["tp", "fp", "fn", *(pre + p for p in all_paths for pre in PREFIXES)]
    counts = frame.reindex(columns=names, fill_value=0).to_numpy(np.float64, na_value=np.nan)
    extra = []
    if status:
        extra.append((frame["status"].astype(str) == "parse_failure").to_numpy(np.float64))
    if layout:
        score = frame["layout_score"].to_numpy(np.float64, na_value=np.nan)
        extra += [np.nan_to_num(score, nan=0.0), np.isfinite(score).astype(np.float64)]
    parts = [
        np.nan_to_num(frame[f"structure/{r}{part}"].to_numpy(np.float64, na_value=np.nan))
        for r in ratio_names
        for part in ("_num", "_den")
    ]
    return np.column_stack([counts[:, :3], *extra, counts[:, 3:], *parts])


def paired_matrix(baseline: pd.DataFrame, candidate: pd.DataFrame) -> np.ndarray:
    """Both sides' count matrices side by side, the baseline's first."""
    b, c, _, _ = aligned(baseline, candidate)
    all_paths = list(dict.fromkeys([*paths(baseline), *paths(candidate)]))
    both = [k for k in ("status", "layout_score") if k in b.columns and k in c.columns]
    names = ratios(baseline, candidate)
    args = (all_paths, "status" in both, "layout_score" in both, names)
    return np.hstack([count_matrix(b, *args), count_matrix(c, *args)])


def _fully_correct(frame: pd.DataFrame) -> pd.Series:
    ok = (frame["tp"] > 0) & (frame["fp"] == 0) & (frame["fn"] == 0)
    if "status" in frame.columns:
        ok &= frame["status"].astype(str) == "scored"
    return ok


def _f1(tp: Any, fp: Any, fn: Any) -> float | None:
    den = 2 * tp + fp + fn
    return float(2 * tp / den) if den else None


def flips(baseline: pd.DataFrame, candidate: pd.DataFrame, top: int) -> dict[str, Any]:
    """broke, fixed and the most regressed documents as plain data."""
    b, c, _, _ = aligned(baseline, candidate)
    b_ok, c_ok = _fully_correct(b), _fully_correct(c)
    b_f1 = 2 * b["tp"] / (2 * b["tp"] + b["fp"] + b["fn"]).where(lambda s: s > 0)
    c_f1 = 2 * c["tp"] / (2 * c["tp"] + c["fp"] + c["fn"]).where(lambda s: s > 0)
    table = b[[]].assign(
        d_f1=(c_f1 - b_f1).fillna(0.0),
        new_errors=(c["fp"] + c["fn"]) - (b["fp"] + b["fn"]),
        doc=b.index.astype(str),
    )
    worse = table[(table["d_f1"] < 0) | (table["new_errors"] > 0)]
    ranked = worse.sort_values(["d_f1", "new_errors", "doc"], ascending=[True, False, True])
    regressed = []
    for i in ranked.index[:top]:
        rb, rc = b.loc[i], c.loc[i]
        regressed.append(
            {
                "id": str(i),
                "baseline_f1": _f1(rb["tp"], rb["fp"], rb["fn"]),
                "candidate_f1": _f1(rc["tp"], rc["fp"], rc["fn"]),
                "baseline_errors": int(rb["fp"] + rb["fn"]),
                "candidate_errors": int(rc["fp"] + rc["fn"]),
                "baseline_status": str(rb["status"]) if "status" in rb.index else None,
                "candidate_status": str(rc["status"]) if "status" in rc.index else None,
            }
        )
    return {
        "broke": [str(i) for i in b.index[b_ok & ~c_ok]],
        "fixed": [str(i) for i in b.index[~b_ok & c_ok]],
        "regressed": regressed,
    }
