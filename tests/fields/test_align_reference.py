"""List alignment against plain references written here: the similarity of every pair of items
computed one pair and one leaf at a time (the leaf rule of scoring), the pairing of identical
items as a plain greedy scan, and the assignment of the rest as a brute force over every
assignment at several match thresholds (for similarity matrices, and for whole lists scored by
the scorer, whose counts must be those of an optimal pairing). Values are drawn so that raw and
canonical equality differ (5 and 5.0, spacing, dates in two formats, units, tolerances, fuzzy
text, values that do not read as the field's type)."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extract_mlflow import Config
from extract_mlflow.core.paths import flat_item
from extract_mlflow.fields.align import assign, bulk_similarity, pair_identical, small_similarity
from extract_mlflow.fields.forms import exact_forms
from extract_mlflow.fields.normalize import TEXT, TYPE_ERROR, Comparator, Comparators
from extract_mlflow.fields.scorer import DocCounts, FieldScorer

CONFIG = Config.model_validate(
    {
        "date_formats": ["%d.%m.%Y"],
        "fields": {
            "items[].tol": {"type": "number", "tol": 0.5},
            "items[].fuzzy": {"type": "text", "fuzzy": 0.8},
            "items[].qty": {"type": "quantity"},
            "items[].when": {"type": "date"},
            "items[].skip": {"ignore": True},
        },
    }
)
KEYS = ["tol", "fuzzy", "qty", "when", "skip", "any", "n", "s"]
VALUE_LIST: list[Any] = [
    0,
    1,
    5,
    1.0,
    5.0,
    5.4,
    5.6,
    True,
    False,
    "5",
    "5.0",
    "1",
    "true",
    "yes",
    "a",
    " a ",
    "A",
    "x y",
    "x  y",
    "2024-01-02",
    "02.01.2024",
    "2024-01-02T00:00",
    "5 kg",
    "5000 g",
    "kg",
    "Acme Corp",
    "Acme Corp.",
    "Acme Inc",
    "",
    None,
]
VALUES = st.sampled_from(VALUE_LIST)
ITEMS = st.lists(st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=5), max_size=7)


def leaf_matches(comp: Comparator, g: Any, p: Any) -> bool:
    """One gold leaf against one predicted leaf, as scoring compares two present scalars."""
    if type(g) is type(p) and g == p:
        return True
    cg = comp.canon(g)
    if cg is TYPE_ERROR:
        comp, cg = TEXT, TEXT.canon(g)
    cp = comp.canon(p)
    return cp is not TYPE_ERROR and comp.equal(cg, cp)


def reference_similarity(g: dict[str, Any], p: dict[str, Any], comps: Comparators) -> Fraction:
    """Share of the pair's scored keys (present on either side) whose leaves match."""
    scored = [k for k in {*g, *p} if k != "skip"]
    same = sum(
        1
        for k in scored
        if k in g and k in p and leaf_matches(comps.for_leaf(f"items[].{k}", g[k]), g[k], p[k])
    )
    return Fraction(same, len(scored)) if scored else Fraction(0)


def _resolvers(comps: Comparators) -> Any:
    return lambda rel: None if rel == "skip" else comps.resolver(f"items[].{rel}")


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(ITEMS, ITEMS)
def test_similarity_equals_the_pair_by_pair_reference(
    gold: list[dict[str, Any]], pred: list[dict[str, Any]]
) -> None:
    comps = Comparators(CONFIG)
    fg = [flat_item(x) for x in gold]
    fp = [flat_item(x) for x in pred]
    assert None not in fg and None not in fp
    small = small_similarity(fg, fp, _resolvers(comps))  # type: ignore[arg-type]
    bulk = bulk_similarity(fg, fp, _resolvers(comps))  # type: ignore[arg-type]
    scorer = FieldScorer(CONFIG)
    for i, g in enumerate(fg):
        for j, p in enumerate(fp):
            expected = float(reference_similarity(g, p, comps))  # type: ignore[arg-type]
            assert small[i][j] == expected
            assert abs(float(bulk[i][j]) - expected) < 1e-12
            assert abs(scorer.item_similarity(gold[i], pred[j], "items[]") - expected) < 1e-12


def reference_pairing(
    gold: list[Any], pred: list[Any]
) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """Each gold item in order takes the predicted item at its own position when that one is
    free and identical (the same JSON value, every leaf of the same type: 1, 1.0 and true
    differ, inside objects too), else the first free identical one."""
    free = list(range(len(pred)))
    pairs, left = [], []
    for i, g in enumerate(gold):
        same = [j for j in free if typed(pred[j]) == typed(g)]
        if same:
            j = i if i in same else same[0]
            free.remove(j)
            pairs.append((i, j))
        else:
            left.append(i)
    return pairs, left, free


def typed(value: Any) -> Any:
    """A JSON value with the type of every leaf beside it (Python's == takes 1 == 1.0 == True)."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, value)


SMALL_ITEMS = st.lists(
    st.dictionaries(st.sampled_from("ab"), st.sampled_from([1, 1.0, True, "1"]), max_size=2)
    | st.sampled_from([1, True, "x"]),
    max_size=8,
)


@settings(max_examples=400, deadline=None)
@given(SMALL_ITEMS, SMALL_ITEMS)
def test_identical_pairing_equals_the_greedy_reference(gold: list[Any], pred: list[Any]) -> None:
    if len(gold) * len(pred) <= 64:  # the scan; larger lists hash frozen values
        assert pair_identical(gold, pred) == reference_pairing(gold, pred)


# --------------------------------------------------------------------------- the assignment
# The documented rule: identical items are paired first; the leftovers are paired by the
# assignment that maximises the total similarity of the *allowed* pairs, a pair being allowed
# when its similarity (as scoring reports it, a float) is above 0 and at least
# match_threshold. The brute force below enumerates every assignment; sums are exact fractions.

THRESHOLDS = (0.0, 0.3, 0.5, 0.8)
Pairing = frozenset[tuple[int, int]]
Count = tuple[str, str]  # (path, "tp" | "fp" | "fn")


def allowed(s: Fraction, threshold: float) -> bool:
    return float(s) > 0 and float(s) >= threshold


def brute_force_optimum(
    sim: list[list[Fraction]], threshold: float
) -> tuple[Fraction, set[Pairing]]:
    """Every way to give each row its own column (each column its own row when there are
    fewer columns); a pair counts only when allowed (an assignment may always leave a pair
    out). Returns the best total and every set of allowed pairs that reaches it."""
    n, m = len(sim), len(sim[0])
    if n > m:  # the same search on the transpose
        best, reached = brute_force_optimum([list(c) for c in zip(*sim, strict=True)], threshold)
        return best, {frozenset((i, j) for j, i in kept) for kept in reached}
    scale = math.lcm(*(s.denominator for row in sim for s in row))  # exact sums in integers
    weight = [[int(s * scale) if allowed(s, threshold) else 0 for s in row] for row in sim]
    top, reached = 0, {Pairing()}
    for cols in itertools.permutations(range(m), n):
        total = sum(row[j] for row, j in zip(weight, cols, strict=True))
        if total >= top:
            kept = frozenset((i, j) for i, j in enumerate(cols) if weight[i][j])
            if total > top:
                top, reached = total, {kept}
            else:
                reached.add(kept)
    return Fraction(top, scale), reached


def check_assignment(sim: list[list[Fraction]], threshold: float) -> None:
    """`assign` on the matrix as nested lists (the optimality certificate, else Hungarian) and
    as an array (Hungarian): distinct rows and columns, allowed pairs only, the best total."""
    best, _ = brute_force_optimum(sim, threshold)
    floats = [[float(s) for s in row] for row in sim]
    array = np.array(floats, dtype=np.float64).reshape(len(sim), -1)
    for form in (floats, array):
        chosen = assign(form, threshold)
        assert len({i for i, _ in chosen}) == len(chosen) == len({j for _, j in chosen})
        assert all(allowed(sim[i][j], threshold) for i, j in chosen), (chosen, sim)
        assert sum((sim[i][j] for i, j in chosen), Fraction(0)) == best, (chosen, sim, threshold)


SHARES = st.sampled_from(
    [Fraction(s) for s in ("0", "1/5", "1/4", "1/3", "2/5", "1/2", "3/5", "2/3", "3/4", "4/5", "1")]
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 6).flatmap(
        lambda m: st.lists(st.lists(SHARES, min_size=m, max_size=m), min_size=1, max_size=6)
    )
)
def test_assignment_is_the_brute_force_optimum_over_allowed_pairs(
    sim: list[list[Fraction]],
) -> None:
    """Similarities with many ties and values at the thresholds (4/5 against 0.8, 1/2 against
    0.5): the matrix and its transpose, each as lists and as an array."""
    for threshold in THRESHOLDS:
        check_assignment(sim, threshold)
        check_assignment([list(col) for col in zip(*sim, strict=True)], threshold)


# --------------------------------------------------------------------------- whole lists


def config_at(threshold: float) -> Config:
    return Config.model_validate({**CONFIG.model_dump(), "match_threshold": threshold})


def pair_counts(g: dict[str, Any], p: dict[str, Any], comps: Comparators) -> Counter[Count]:
    """The leaf rule on two paired flat items (either may be {}: an unpaired item): per
    scored key a match is a TP, else the gold leaf an FN and the predicted one an FP."""
    out = Counter[Count]()
    for k in {*g, *p} - {"skip"}:
        path = f"items[].{k}"
        if k in g and k in p and leaf_matches(comps.for_leaf(path, g[k]), g[k], p[k]):
            out[path, "tp"] += 1
        else:
            out[path, "fp"] += k in p
            out[path, "fn"] += k in g
    return +out


def optimal_outcomes(gold: list[Any], pred: list[Any], threshold: float) -> list[Counter[Count]]:
    """The counts of every pairing the documented rule calls optimal: identical items paired
    first (the greedy reference above), then each optimal pairing of the leftovers (the brute
    force over the pair-by-pair reference similarity); unpaired items count all their leaves."""
    comps = Comparators(CONFIG)
    pairs, left_g, left_p = reference_pairing(gold, pred)
    fg, fp = [flat(x) for x in gold], [flat(x) for x in pred]
    fixed = Counter[Count]()
    for i, j in pairs:
        fixed += pair_counts(fg[i], fp[j], comps)
    sim = [[reference_similarity(fg[i], fp[j], comps) for j in left_p] for i in left_g]
    _, optimal = brute_force_optimum(sim, threshold) if sim and sim[0] else (0, {Pairing()})
    outcomes = []
    for kept in optimal:
        total = Counter(fixed)
        for a, b in kept:
            total += pair_counts(fg[left_g[a]], fp[left_p[b]], comps)
        for a, i in enumerate(left_g):
            if all(a != x for x, _ in kept):
                total += pair_counts(fg[i], {}, comps)
        for b, j in enumerate(left_p):
            if all(b != y for _, y in kept):
                total += pair_counts({}, fp[j], comps)
        outcomes.append(total)
    return outcomes


def flat(item: dict[str, Any]) -> dict[str, Any]:
    """The item's present leaves (None, "" and blanks left out), as the scorer reads them."""
    out = flat_item(item)
    assert out is not None
    return out


def tally(acc: DocCounts) -> Counter[Count]:
    """The scorer's per-path counts in the same form."""
    names = ("tp", "fp", "fn")
    return +Counter({(p, names[k]): v for p, c in acc.counts.items() for k, v in enumerate(c)})


def random_item(rnd: random.Random) -> dict[str, Any]:
    return {k: rnd.choice(VALUE_LIST) for k in rnd.sample(KEYS, rnd.randint(1, 5))}


def random_lists(rnd: random.Random) -> tuple[list[Any], list[Any]]:
    """Up to 7 gold and 7 predicted items; most predicted items are a gold item with one to
    three leaves changed, dropped or added (near misses: similarities on both sides of each
    threshold), the rest unrelated."""
    gold = [random_item(rnd) for _ in range(rnd.randint(0, 7))]
    pred = []
    for _ in range(rnd.randint(0, 7)):
        if gold and rnd.random() < 0.7:
            item = dict(rnd.choice(gold))
            for k in rnd.sample(KEYS, rnd.randint(1, 3)):
                if k in item and rnd.random() < 0.4:
                    del item[k]
                else:
                    item[k] = rnd.choice(VALUE_LIST)
            pred.append(item)
        else:
            pred.append(random_item(rnd))
    return gold, pred


@pytest.mark.slow
@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_lists_are_scored_as_an_optimal_pairing_of_the_rule(threshold: float) -> None:
    """1,000 random list pairs per threshold: the counts are those of an optimal pairing, and
    equally good pairings are decided by content, not order (shuffled lists, same counts)."""
    rnd = random.Random(2607)
    scorer = FieldScorer(config_at(threshold))
    ties = 0
    for case in range(1000):
        gold, pred = random_lists(rnd)
        got = tally(scorer.score({"items": gold}, {"items": pred}))
        outcomes = optimal_outcomes(gold, pred, threshold)
        assert got in outcomes, (case, gold, pred)
        ties += len({frozenset(o.items()) for o in outcomes}) > 1
        shuffled = {"items": rnd.sample(gold, len(gold))}, {"items": rnd.sample(pred, len(pred))}
        assert tally(scorer.score(*shuffled)) == got, (case, gold, pred)
    assert ties  # equally good pairings with different counts occur: the order check bites


EXACT_VALUES: dict[str, list[Any]] = {
    "n": [0, 1, 5, 1.0, 5.0],
    "s": ["a", " a ", "A", "x y", "x  y", "Acme Corp"],
    "when": ["2024-01-02", "02.01.2024"],
    "b": [True, False],
}


def exact_lists(rnd: random.Random) -> tuple[list[Any], list[Any]]:
    """Gold items whose keys each hold values of one type (one comparator, no tolerance);
    predicted items near them, with now and then a value of another type or a blank one."""
    keys = list(EXACT_VALUES)
    gold = [
        {k: rnd.choice(EXACT_VALUES[k]) for k in rnd.sample(keys, rnd.randint(1, 4))}
        for _ in range(rnd.randint(2, 6))
    ]
    pred = []
    for _ in range(rnd.randint(2, 6)):
        item = dict(rnd.choice(gold))
        for k in rnd.sample(keys, rnd.randint(1, 2)):
            if k in item and rnd.random() < 0.3:
                del item[k]
            elif rnd.random() < 0.1:
                item[k] = rnd.choice(VALUE_LIST)
            else:
                item[k] = rnd.choice(EXACT_VALUES[k])
        pred.append(item)
    return gold, pred


@pytest.mark.slow
@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_pairs_scored_from_the_read_forms_equal_pairs_scored_again(
    threshold: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Leftover items of exact types, scored from the forms their similarity read
    (:func:`~extract_mlflow.fields.align.exact_forms`), give the counts (in the same order),
    the mistakes and the field state of the general path, which scores each pair again."""
    config = Config.model_validate(
        {"match_threshold": threshold, "date_formats": ["%d.%m.%Y"], "fields": {}}
    )
    rnd = random.Random(4711)
    cases = [exact_lists(rnd) for _ in range(1000)]
    cases += [  # items that are not objects: a scalar among them, a lone value as a list
        ([{"n": 1}, {"n": 2}, 5], [3, {"n": 1.0}, {"n": 5}]),
        ([{"h": [{"n": 0}, {"n": 1}]}, {"n": 1}], [{"h": 0}, {"n": 2}]),
    ]
    read = [0]

    def counted(*args: Any) -> Any:
        forms = exact_forms(*args)
        read[0] += forms is not None
        return forms

    def outcome(scorer: FieldScorer, gold: list[Any], pred: list[Any]) -> Any:
        acc = scorer.score({"items": gold}, {"items": pred})
        errors = [(e.path, e.category, typed(e.expected), typed(e.got)) for e in acc.errors]
        return list(acc.counts.items()), errors

    monkeypatch.setattr("extract_mlflow.fields.scorer.exact_forms", counted)
    fast = FieldScorer(config)
    got = [outcome(fast, gold, pred) for gold, pred in cases]
    monkeypatch.setattr("extract_mlflow.fields.scorer.exact_forms", lambda *args: None)
    general = FieldScorer(config)
    assert got == [outcome(general, gold, pred) for gold, pred in cases]
    assert fast.state == general.state
    assert read[0] > 100  # the forms were used
