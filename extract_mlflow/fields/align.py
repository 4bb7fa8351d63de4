"""Optimal alignment of lists: objects by content (Hungarian assignment), scalars as multisets.

Identical items are paired first (an identical pair has the largest possible similarity, 1), so
the assignment only sees the leftovers; their similarity matrix is computed in bulk, one column
rule at a time, with numpy/rapidfuzz. There is no positional fallback at any size.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import orjson
from numpy.typing import NDArray
from rapidfuzz import fuzz
from rapidfuzz.process import cdist

from .normalize import TEXT, TYPE_ERROR, Comparator

Pairs = list[tuple[int, int]]


def freeze(value: Any) -> Any:
    """A hashable image of a JSON value that keeps types apart (1, 1.0 and true differ)."""
    if isinstance(value, dict):
        return ("d", tuple(sorted((k, freeze(v)) for k, v in value.items())))
    if isinstance(value, list):
        return ("l", tuple(freeze(v) for v in value))
    return (type(value).__name__, value)


_CONTAINERS = (dict, list)


def same_types(a: Any, b: Any) -> bool:
    """For two equal JSON values: whether every leaf has the same type on both sides (with
    ``a == b`` this is freeze's identity: 0, 0.0 and false differ)."""
    t = type(a)
    if t is not type(b):
        return False
    if t is dict:  # scalars checked here: most items are flat
        for k, v in a.items():
            w = b[k]
            tv = type(v)
            if tv is not type(w) or ((tv is dict or tv is list) and not same_types(v, w)):
                return False
        return True
    if t is list:
        return all(map(same_types, a, b))
    return True


def pair_identical(gold: Sequence[Any], pred: Sequence[Any]) -> tuple[Pairs, list[int], list[int]]:
    """Pair items that are identical (same JSON value); returns pairs and the unpaired indices."""
    n, m = len(gold), len(pred)
    pairs: Pairs = []
    if n * m <= 64:
        # Small lists: C-level equality beats hashing. Same position first, then any position.
        # (`type(a) is type(b) and a == b`, inline; equal containers are then checked for
        # types, since == inside them does not tell 0 from false or 1 from 1.0, as freeze
        # does: otherwise which items pair, and so the counts, would depend on their order.)
        free = list(range(m))
        left_g: list[int] = []
        for i, g in enumerate(gold):
            tg = type(g)
            if i < m and i in free:
                p = pred[i]
                if type(p) is tg and g == p and (tg not in _CONTAINERS or same_types(g, p)):
                    free.remove(i)
                    pairs.append((i, i))
                    continue
            for j in free:
                p = pred[j]
                if type(p) is tg and g == p and (tg not in _CONTAINERS or same_types(g, p)):
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


Similarity = NDArray[np.float64] | list[list[float]]
"""An n×m similarity matrix: an array, or (for a few items) nested lists."""


def assign(sim: Similarity, threshold: float) -> Pairs:
    """The assignment of maximum total similarity over the allowed pairs: similarity > 0 and
    ≥ threshold.

    A pair below the threshold is no edge: it counts as similarity 0 when the assignment is
    solved, and pairs at 0 are not kept. (Leaving a pair out is always possible, so this is
    the best set of allowed pairs. Solving over every pair and dropping the weak ones after
    would not be: a weak pair can take the place of two allowed ones.)

    When every row's best column is a different column (or every column's best row a different
    row), taking those is optimal: no assignment can beat the sum of row (column) maxima. That
    certificate settles most small cases without the Hungarian algorithm. Both are
    deterministic: the same matrix always gives the same pairs, ties included.
    """
    if isinstance(sim, list):
        if threshold > 0:
            sim = [[s if s >= threshold else 0.0 for s in row] for row in sim]
        pairs = _by_certificate(sim)
        if pairs is None:
            return assign(np.array(sim, dtype=np.float64).reshape(len(sim), -1), 0.0)
        return pairs
    if sim.size == 0:
        return []
    # imported here: scipy.optimize takes ~0.2 s to import, and most lists never need it
    from scipy.optimize import linear_sum_assignment

    if threshold > 0:
        sim = np.where(sim >= threshold, sim, 0.0)
    rows, cols = linear_sum_assignment(sim, maximize=True)
    keep = sim[rows, cols] > 0
    return [(int(r), int(c)) for r, c in zip(rows[keep], cols[keep], strict=True)]


def _by_certificate(sim: list[list[float]]) -> Pairs | None:
    n = len(sim)
    m = len(sim[0]) if n else 0
    if not n or not m:
        return []
    pairs = []
    used: set[int] = set()
    for i, row in enumerate(sim):  # each row's first best column
        j = row.index(max(row))
        if row[j] > 0:
            if j in used:
                break
            used.add(j)
            pairs.append((i, j))
    else:
        return pairs
    pairs = []
    used = set()
    for j, column in enumerate(zip(*sim, strict=True)):  # each column's first best row
        i = column.index(max(column))
        if sim[i][j] > 0:
            if i in used:
                return None
            used.add(i)
            pairs.append((i, j))
    return pairs


ComparatorFor = Callable[[str], Callable[[Any], Comparator] | None]
"""relative path -> (gold value -> comparator), or None for a leaf that is not scored"""
SMALL_PAIRS = 36
"""up to this many pairs, plain Python beats numpy's per-call overhead"""


def bulk_similarity(
    gold: list[dict[str, Any]], pred: list[dict[str, Any]], comparator_for: ComparatorFor
) -> Similarity:
    """Similarity matrix of flat items: share of the pair's leaves that compare equal.

    `comparator_for(relpath)` gives the function that picks the comparator of a leaf from its
    gold value, or None when the leaf is not scored. Leaves absent on both sides do not count.
    Exact comparisons are a hash join on canonical forms (no n×m loop); tolerant ones compare
    all pairs of that one leaf in bulk (numpy / rapidfuzz).
    """
    n, m = len(gold), len(pred)
    if n * m <= SMALL_PAIRS:
        return small_similarity(gold, pred, comparator_for)
    keys = sorted({k for item in gold for k in item} | {k for item in pred for k in item})
    resolvers = {k: comparator_for(k) for k in keys}
    active = [k for k in keys if resolvers[k] is not None]
    bit = {k: 1 << i for i, k in enumerate(active)}
    gmask = [sum(bit[k] for k in item if k in bit) for item in gold]
    pmask = [sum(bit[k] for k in item if k in bit) for item in pred]
    matched = np.zeros((n, m))
    for key in active:
        gv = [(i, item[key]) for i, item in enumerate(gold) if key in item]
        pv = [(j, item[key]) for j, item in enumerate(pred) if key in item]
        if gv and pv:
            resolve = resolvers[key]
            assert resolve is not None
            _match_leaf(gv, pv, resolve, matched)
    if len(active) <= 62:
        union = np.bitwise_or.outer(
            np.array(gmask, dtype=np.int64), np.array(pmask, dtype=np.int64)
        )
        slots = np.bitwise_count(union).astype(np.float64)
    else:
        slots = np.zeros((n, m))
        for b in bit.values():
            gp = np.array([(x & b) != 0 for x in gmask])
            pp = np.array([(x & b) != 0 for x in pmask])
            slots += gp[:, None] | pp[None, :]
    return np.divide(matched, slots, out=np.zeros((n, m)), where=slots > 0)


def small_similarity(
    gold: list[dict[str, Any]], pred: list[dict[str, Any]], comparator_for: ComparatorFor
) -> list[list[float]]:
    """:func:`bulk_similarity` for a few items, in plain Python (no array overhead): each value
    is read once; exact leaves are matched through a dict of canonical forms, tolerant ones
    pair by pair; the slot count of a pair is the popcount of its two key masks.

    One pass over the predicted items collects each key's values and the items' key masks;
    one pass over the gold items reads each gold value and looks it up among that key's
    predicted values, read (once per key and comparator) by the gold value's comparator.
    (Plain dicts and lists, no object per key: this runs for most lists of most documents.)"""
    m = len(pred)
    bits: dict[str, int] = {}  # key -> its bit in the key masks (0: the key is not scored)
    resolvers: dict[str, Callable[[Any], Comparator]] = {}
    values, pmasks = _predicted(pred, comparator_for, bits, resolvers)
    sides: dict[str, dict[int, Any]] = {}  # key -> id(comparator) -> the values read by it
    out = []
    for item in gold:
        row = [0] * m
        gm = 0
        for k, v in item.items():
            bit = bits.get(k)
            if bit is None:
                bit = _register(k, comparator_for, bits, resolvers)
            if not bit:
                continue
            gm |= bit
            at = values.get(k)
            if at is None:
                continue
            comp = resolvers[k](v)
            c = comp.canon(v)
            if c is TYPE_ERROR:  # gold unreadable as its type: compared as text, like a leaf
                comp, c = TEXT, TEXT.canon(v)
            by_comp = sides.get(k)
            if by_comp is None:
                by_comp = sides[k] = {}
            side = by_comp.get(id(comp))
            exact = comp.kind == "exact"
            if side is None:
                side = by_comp[id(comp)] = _read_side(comp, at, exact)
            if exact:
                js = side.get(c)
                if js is not None:
                    for j in js:
                        row[j] += 1
            else:
                tv = type(v)
                for j, pv, cp in side:
                    if (tv is type(pv) and v == pv) or (cp is not TYPE_ERROR and comp.equal(c, cp)):
                        row[j] += 1
        out.append([row[j] / ((gm | pm).bit_count() or 1) for j, pm in enumerate(pmasks)])
    return out


def _predicted(
    pred: list[dict[str, Any]],
    comparator_for: ComparatorFor,
    bits: dict[str, int],
    resolvers: dict[str, Callable[[Any], Comparator]],
) -> tuple[dict[str, list[tuple[int, Any]]], list[int]]:
    """Each scored key's predicted (item, value) pairs, and every item's key mask."""
    values: dict[str, list[tuple[int, Any]]] = {}
    pmasks = []
    for j, item in enumerate(pred):
        pm = 0
        for k, pv in item.items():
            bit = bits.get(k)
            if bit is None:
                bit = _register(k, comparator_for, bits, resolvers)
            if bit:
                pm |= bit
                at = values.get(k)
                if at is None:
                    values[k] = [(j, pv)]
                else:
                    at.append((j, pv))
        pmasks.append(pm)
    return values, pmasks


def _register(
    key: str,
    comparator_for: ComparatorFor,
    bits: dict[str, int],
    resolvers: dict[str, Callable[[Any], Comparator]],
) -> int:
    """Give `key` the next free bit (0 when it is not scored) and remember its resolver."""
    resolve = comparator_for(key)
    if resolve is None:
        bits[key] = 0
        return 0
    resolvers[key] = resolve
    bit = bits[key] = 1 << len(resolvers) - 1
    return bit


def _read_side(comp: Comparator, at: list[tuple[int, Any]], exact: bool) -> Any:
    """Predicted values of one leaf read by `comp`: for exact comparison a dict canonical form
    -> item indices (unreadable values left out), else a list of (index, raw, canonical)."""
    canon = comp.canon
    if not exact:
        return [(j, pv, canon(pv)) for j, pv in at]
    by_form: dict[Any, list[int]] = {}
    for j, pv in at:
        cp = canon(pv)
        if cp is not TYPE_ERROR:
            lst = by_form.get(cp)
            if lst is None:
                by_form[cp] = [j]
            else:
                lst.append(j)
    return by_form


def _match_leaf(
    gv: list[tuple[int, Any]],
    pv: list[tuple[int, Any]],
    resolve: Callable[[Any], Comparator],
    matched: NDArray[np.float64],
) -> None:
    """Add 1 to matched[i, j] for every gold item i and predicted item j whose leaves (of one
    relative path) compare equal (the same rule as scoring a single leaf)."""
    groups: dict[int, tuple[Comparator, list[tuple[int, Any, Any]]]] = {}
    for i, v in gv:
        comp = resolve(v)
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
        elif len(members) * len(pv) > SMALL_PAIRS:
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
    raw_eq = (
        np.array(
            [[g is not None and type(g) is type(p) and g == p for p in pv] for g in gv], dtype=bool
        )
        if any(c is TYPE_ERROR for c, v in zip(cg, gv, strict=True) if v is not None)
        else None
    )
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
        valid = (
            np.array([c is not TYPE_ERROR for c in cg])[:, None]
            & np.array([c is not TYPE_ERROR for c in cp])[None, :]
        )
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
    out: NDArray[np.float64] = eq.astype(np.float64)
    return out


def canonical(value: Any) -> bytes:
    """A list item as canonical JSON (keys sorted): equal items, equal bytes. orjson is ~10×
    faster than the json module here; an integer beyond 64 bits makes it refuse, and then the
    json module writes the item (either way the key is total and depends on content only)."""
    try:
        return b"o" + orjson.dumps(value, option=orjson.OPT_SORT_KEYS, default=str)
    except TypeError:
        return b"j" + json.dumps(value, sort_keys=True, default=str).encode("utf-8")
