"""Optimal alignment of lists: objects by content (Hungarian assignment), scalars as multisets.

Identical items are paired first (an identical pair has the largest possible similarity, 1), so
the assignment only sees the leftovers; their similarity matrix is computed in bulk, one column
rule at a time, with numpy/rapidfuzz. There is no positional fallback at any size.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from rapidfuzz import fuzz
from rapidfuzz.process import cdist
from scipy.optimize import linear_sum_assignment

from .normalize import TYPE_ERROR, Comparator, is_absent

Pairs = list[tuple[int, int]]


def freeze(value: Any) -> Any:
    """A hashable image of a JSON value that keeps types apart (1, 1.0 and true differ)."""
    if isinstance(value, dict):
        return ("d", tuple(sorted((k, freeze(v)) for k, v in value.items())))
    if isinstance(value, list):
        return ("l", tuple(freeze(v) for v in value))
    return (type(value).__name__, value)


def pair_identical(gold: Sequence[Any], pred: Sequence[Any]) -> tuple[Pairs, list[int], list[int]]:
    """Pair items that are identical (same JSON value); returns pairs and the unpaired indices."""
    n, m = len(gold), len(pred)
    pairs: Pairs = []
    if n * m <= 64:
        # Small lists: C-level equality beats hashing. Same position first, then any position.
        free = list(range(m))
        left_g: list[int] = []
        for i, g in enumerate(gold):
            if i < m and i in free and _same(g, pred[i]):
                free.remove(i)
                pairs.append((i, i))
                continue
            for j in free:
                if _same(g, pred[j]):
                    free.remove(j)
                    pairs.append((i, j))
                    break
            else:
                left_g.append(i)
        return pairs, left_g, free
    index: dict[Any, list[int]] = {}
    for j in range(m - 1, -1, -1):
        index.setdefault(freeze(pred[j]), []).append(j)
    left_g = []
    for i, g in enumerate(gold):
        bucket = index.get(freeze(g))
        if bucket:
            pairs.append((i, bucket.pop()))
        else:
            left_g.append(i)
    used = {j for _, j in pairs}
    return pairs, left_g, [j for j in range(m) if j not in used]


def _same(a: Any, b: Any) -> bool:
    # C-level equality. Inside objects it does not tell 1 from true; that only matters for
    # items that differ in nothing else, and their leaves are still compared typed.
    return type(a) is type(b) and bool(a == b)


def assign(sim: NDArray[np.float64], threshold: float) -> Pairs:
    """Maximum-similarity assignment; a pair is kept when its similarity is > 0 and ≥ threshold."""
    if sim.size == 0:
        return []
    if sim.shape == (1, 1):
        s = float(sim[0, 0])
        return [(0, 0)] if s > 0 and s >= threshold else []
    rows, cols = linear_sum_assignment(sim, maximize=True)
    keep = (sim[rows, cols] > 0) & (sim[rows, cols] >= threshold)
    return [(int(r), int(c)) for r, c in zip(rows[keep], cols[keep], strict=True)]


def flatten_item(item: Any) -> dict[str, Any] | None:
    """An object's scalar leaves by relative path; None when it holds lists (not flat)."""
    out: dict[str, Any] = {}

    def walk(value: dict[str, Any], prefix: str) -> bool:
        for k, v in value.items():
            key = prefix + k
            if isinstance(v, dict):
                if v and not walk(v, key + "."):
                    return False
            elif isinstance(v, list):
                if v:
                    return False
            elif not is_absent(v):
                out[key] = v
        return True

    if not isinstance(item, dict):
        return None
    return out if walk(item, "") else None


ComparatorFor = Callable[[str, Any], Comparator | None]


def bulk_similarity(
    gold: list[dict[str, Any]], pred: list[dict[str, Any]], comparator_for: ComparatorFor
) -> NDArray[np.float64]:
    """Similarity matrix of flat items: share of the pair's leaves that compare equal.

    `comparator_for(relpath, gold_value)` gives the comparator of a leaf, or None for a leaf
    that is not scored (ignored). Leaves absent on both sides do not count.
    """
    n, m = len(gold), len(pred)
    tp = np.zeros((n, m))
    slots = np.zeros((n, m))
    keys: set[str] = set()
    for item in gold:
        keys.update(item)
    for item in pred:
        keys.update(item)
    for key in sorted(keys):
        gv = [item.get(key) for item in gold]
        pv = [item.get(key) for item in pred]
        comps = {id(c): c for c in (comparator_for(key, v) for v in gv if v is not None)}
        if not comps:  # gold never has it: all FP slots, unless ignored
            if comparator_for(key, None) is None:
                continue
            slots += np.array([v is not None for v in pv], dtype=bool)[None, :]
            continue
        if any(c is None for c in comps.values()):
            continue
        gp = np.array([v is not None for v in gv], dtype=bool)
        pp = np.array([v is not None for v in pv], dtype=bool)
        slots += gp[:, None] | pp[None, :]
        if len(comps) == 1:
            (comp,) = comps.values()
            assert comp is not None
            tp += _equal_matrix(comp, gv, pv)
        else:  # gold values of several inferred types: compare each pair on its own
            tp += _generic_matrix(lambda g: comparator_for(key, g), gv, pv)
    with np.errstate(invalid="ignore", divide="ignore"):
        sim = np.where(slots > 0, tp / np.where(slots > 0, slots, 1), 0.0)
    return sim


def _equal_matrix(comp: Comparator, gv: list[Any], pv: list[Any]) -> NDArray[np.float64]:
    cg = [TYPE_ERROR if v is None else comp.canon(v) for v in gv]
    cp = [TYPE_ERROR if v is None else comp.canon(v) for v in pv]
    # raw-identical values always match, even when the gold value does not read as the type
    raw_eq = np.array(
        [[g is not None and type(g) is type(p) and g == p for p in pv] for g in gv], dtype=bool
    ) if any(c is TYPE_ERROR for c, v in zip(cg, gv, strict=True) if v is not None) else None
    if comp.kind == "exact":
        codes: dict[Any, int] = {}
        gc = np.array([-1 if c is TYPE_ERROR else codes.setdefault(c, len(codes)) for c in cg])
        pc = np.array([-2 if c is TYPE_ERROR else codes.get(c, -3) for c in cp])
        eq = gc[:, None] == pc[None, :]
    elif comp.kind == "numeric":
        g = np.array([np.nan if c is TYPE_ERROR else c for c in cg], dtype=float)
        p = np.array([np.nan if c is TYPE_ERROR else c for c in cp], dtype=float)
        bound = np.maximum(comp.rule.tol or 0.0, (comp.rule.rel_tol or 0.0) * np.abs(g))
        bound = bound + 1e-9 * np.maximum(np.abs(g), 1.0)
        with np.errstate(invalid="ignore"):
            eq = np.abs(p[None, :] - g[:, None]) <= bound[:, None]
    elif comp.kind == "fuzzy":
        gs = ["" if c is TYPE_ERROR else c for c in cg]
        ps = ["" if c is TYPE_ERROR else c for c in cp]
        cutoff = (comp.rule.fuzzy or 0.0) * 100.0 - 1e-9
        scores = cdist(gs, ps, scorer=fuzz.ratio, dtype=np.float64)
        same = np.array([[a == b for b in ps] for a in gs], dtype=bool)
        valid = np.array([c is not TYPE_ERROR for c in cg])[:, None] & np.array(
            [c is not TYPE_ERROR for c in cp]
        )[None, :]
        eq = valid & ((scores >= cutoff) | same)
    else:
        eq = np.array(
            [
                [a is not TYPE_ERROR and b is not TYPE_ERROR and comp.equal(a, b) for b in cp]
                for a in cg
            ],
            dtype=bool,
        )
    if raw_eq is not None:
        eq = eq | raw_eq
    return eq.astype(np.float64)


def _generic_matrix(
    comp_of: Callable[[Any], Comparator | None], gv: list[Any], pv: list[Any]
) -> NDArray[np.float64]:
    out = np.zeros((len(gv), len(pv)))
    for i, g in enumerate(gv):
        comp = comp_of(g) if g is not None else None
        if comp is None:
            continue
        cg = comp.canon(g)
        for j, p in enumerate(pv):
            if p is None:
                continue
            if type(g) is type(p) and g == p:
                out[i, j] = 1.0
                continue
            cp = comp.canon(p)
            if cg is not TYPE_ERROR and cp is not TYPE_ERROR and comp.equal(cg, cp):
                out[i, j] = 1.0
    return out
