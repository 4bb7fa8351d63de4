"""List alignment's fast paths against plain references written here: the similarity of every
pair of items computed one pair and one leaf at a time (the leaf rule of scoring), and the
pairing of identical items as a plain greedy scan. Values are drawn so that raw and canonical
equality differ (5 and 5.0, spacing, dates in two formats, units, tolerances, fuzzy text, values
that do not read as the field's type)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from extract_mlflow import Config
from extract_mlflow.core.paths import flat_item
from extract_mlflow.fields.align import bulk_similarity, pair_identical, small_similarity
from extract_mlflow.fields.normalize import TEXT, TYPE_ERROR, Comparator, Comparators
from extract_mlflow.fields.scorer import FieldScorer

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
VALUES = st.sampled_from(
    [
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
)
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


def reference_similarity(g: dict[str, Any], p: dict[str, Any], comps: Comparators) -> float:
    """Share of the pair's scored keys (present on either side) whose leaves match."""
    scored = [k for k in {*g, *p} if k != "skip"]
    if not scored:
        return 0.0
    same = sum(
        1
        for k in scored
        if k in g and k in p and leaf_matches(comps.for_leaf(f"items[].{k}", g[k]), g[k], p[k])
    )
    return same / len(scored)


def _resolvers(comps: Comparators) -> Any:
    return lambda rel: None if rel == "skip" else comps.resolver(f"items[].{rel}")


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
            expected = reference_similarity(g, p, comps)  # type: ignore[arg-type]
            assert small[i][j] == expected
            assert abs(float(bulk[i][j]) - expected) < 1e-12
            assert abs(scorer.item_similarity(gold[i], pred[j], "items[]") - expected) < 1e-12


def reference_pairing(
    gold: list[Any], pred: list[Any]
) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """Each gold item in order takes the predicted item at its own position when that one is
    free and identical (same type, ==), else the first free identical one."""
    free = list(range(len(pred)))
    pairs, left = [], []
    for i, g in enumerate(gold):
        same = [j for j in free if type(pred[j]) is type(g) and pred[j] == g]
        if same:
            j = i if i in same else same[0]
            free.remove(j)
            pairs.append((i, j))
        else:
            left.append(i)
    return pairs, left, free


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
