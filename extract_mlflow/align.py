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

from .normalize import TEXT, TYPE_ERROR, Comparator, is_absent

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
    """An object's present scalar leaves by relative path (`a.b` for nested objects); None when
    it is not an object or holds a non-empty list (such items are compared pair by pair)."""
    if type(item) is not dict:
        return None
    out: dict[str, Any] = {}
    for k, v in item.items():
        t = type(v)
        if t is dict:
            if v:
                sub = flatten_item(v)
                if sub is None:
                    return None
                for sk, sv in sub.items():
                    out[f"{k}.{sk}"] = sv
        elif t is list:
            if v:
                return None
        elif not is_absent(v):
            out[k] = v
    return out


ComparatorFor = Callable[[str, Any], Comparator | None]
_SMALL = 36  # up to this many pairs plain Python beats numpy's per-call overhead


def bulk_similarity(
    gold: list[dict[str, Any]], pred: list[dict[str, Any]], comparator_for: ComparatorFor
) -> NDArray[np.float64]:
    """Similarity matrix of flat items: share of the pair's leaves that compare equal.

    `comparator_for(relpath, gold_value)` gives the comparator of a leaf (for a value of None:
    any comparator, or None when the leaf is not scored). Leaves absent on both sides do not
    count. Exact comparisons are a hash join on canonical forms (no n×m loop); tolerant ones
    compare all pairs of that one leaf in bulk (numpy / rapidfuzz).
    """
    n, m = len(gold), len(pred)
    if n * m <= _SMALL:
        return np.array(small_similarity(gold, pred, comparator_for)).reshape(n, m)
    keys = sorted({k for item in gold for k in item} | {k for item in pred for k in item})
    active = [k for k in keys if comparator_for(k, None) is not None]
    bit = {k: 1 << i for i, k in enumerate(active)}
    gmask = [sum(bit[k] for k in item if k in bit) for item in gold]
    pmask = [sum(bit[k] for k in item if k in bit) for item in pred]
    matched = np.zeros((n, m))
    for key in active:
        gv = [(i, item[key]) for i, item in enumerate(gold) if key in item]
        pv = [(j, item[key]) for j, item in enumerate(pred) if key in item]
        if gv and pv:
            _match_leaf(key, gv, pv, comparator_for, matched)
    if len(active) <= 62:
        union = np.bitwise_or.outer(np.array(gmask, dtype=np.int64), np.array(pmask, dtype=np.int64))
        slots = np.bitwise_count(union).astype(np.float64)
    else:
        slots = np.zeros((n, m))
        for k, b in bit.items():
            gp = np.array([(x & b) != 0 for x in gmask])
            pp = np.array([(x & b) != 0 for x in pmask])
            slots += gp[:, None] | pp[None, :]
    return np.divide(matched, slots, out=np.zeros((n, m)), where=slots > 0)


def small_similarity(
    gold: list[dict[str, Any]], pred: list[dict[str, Any]], comparator_for: ComparatorFor
) -> list[list[float]]:
    """:func:`bulk_similarity` for a few items, in plain Python: each value is read once, then
    every pair is compared (for a handful of items this beats building arrays)."""
    n, m = len(gold), len(pred)
    matched = [[0] * m for _ in range(n)]
    slots = [[0] * m for _ in range(n)]
    keys = {k for item in gold for k in item}
    keys.update(k for item in pred for k in item)
    for key in keys:
        if comparator_for(key, None) is None:
            continue
        g_read = []
        for item in gold:
            v = item.get(key)
            if v is None:
                g_read.append(None)
                continue
            comp = comparator_for(key, v)
            assert comp is not None
            c = comp.canon(v)
            if c is TYPE_ERROR:  # gold unreadable as its type: compared as text, like a leaf
                comp, c = TEXT, TEXT.canon(v)
            g_read.append((comp, c, v))
        p_vals = [item.get(key) for item in pred]
        p_canon: dict[int, list[Any]] = {}  # comparator id -> canonical predicted values
        for i, gr in enumerate(g_read):
            row_m = matched[i]
            row_s = slots[i]
            if gr is None:
                for j, pv in enumerate(p_vals):
                    if pv is not None:
                        row_s[j] += 1
                continue
            comp, c, v = gr
            cps = p_canon.get(id(comp))
            if cps is None:
                cps = p_canon[id(comp)] = [
                    TYPE_ERROR if pv is None else comp.canon(pv) for pv in p_vals
                ]
            exact = comp.kind == "exact"
            for j, pv in enumerate(p_vals):
                row_s[j] += 1
                if pv is None:
                    continue
                cp = cps[j]
                if (type(v) is type(pv) and v == pv) or (
                    cp is not TYPE_ERROR and (c == cp if exact else comp.equal(c, cp))
                ):
                    row_m[j] += 1
    return [
        [matched[i][j] / slots[i][j] if slots[i][j] else 0.0 for j in range(m)] for i in range(n)
    ]


def _match_leaf(
    key: str,
    gv: list[tuple[int, Any]],
    pv: list[tuple[int, Any]],
    comparator_for: ComparatorFor,
    matched: NDArray[np.float64],
) -> None:
    """Add 1 to matched[i, j] for every gold item i and predicted item j whose `key` leaves
    compare equal (the same rule as scoring a single leaf)."""
    groups: dict[int, tuple[Comparator, list[tuple[int, Any, Any]]]] = {}
    for i, v in gv:
        comp = comparator_for(key, v)
        assert comp is not None
        c = comp.canon(v)
        if c is TYPE_ERROR:  # gold unreadable as its type: compared as text, like a leaf
            comp, c = TEXT, TEXT.canon(v)
        group = groups.get(id(comp))
        if group is None:
            group = groups[id(comp)] = (comp, [])
        group[1].append((i, c, v))
    for comp, members in groups.values():
        if comp.kind == "exact":
            buckets: dict[Any, list[int]] = {}
            for i, c, _ in members:
                buckets.setdefault(c, []).append(i)
            for j, p in pv:
                cp = comp.canon(p)
                if cp is not TYPE_ERROR:
                    for i in buckets.get(cp, ()):
                        matched[i, j] += 1
        elif len(members) * len(pv) > _SMALL:
            rows = [i for i, _, _ in members]
            cols = [j for j, _ in pv]
            eq = _equal_matrix(comp, [v for _, _, v in members], [p for _, p in pv])
            matched[np.ix_(rows, cols)] += eq
        else:
            cps = [(j, p, comp.canon(p)) for j, p in pv]
            for i, c, v in members:
                for j, p, cp in cps:
                    if (type(v) is type(p) and v == p) or (
                        cp is not TYPE_ERROR and comp.equal(c, cp)
                    ):
                        matched[i, j] += 1


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
        # the same relative rounding slack as Comparator.close
        slack = 1e-9 * np.maximum(np.abs(g)[:, None], np.abs(p)[None, :])
        with np.errstate(invalid="ignore"):
            eq = (p[None, :] == g[:, None]) | (
                np.abs(p[None, :] - g[:, None]) <= bound[:, None] + slack
            )
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
