"""Field scoring: hand-computed cases, a plain reference for alignment, and properties."""

from __future__ import annotations

import itertools
import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extract_mlflow import Config, evaluate
from extract_mlflow.core.paths import flat_item
from extract_mlflow.fields.align import bulk_similarity
from extract_mlflow.fields.normalize import Comparators
from extract_mlflow.fields.scorer import FieldScorer

# --------------------------------------------------------------------------- hand-computed


def counts(report: Any, path: str) -> tuple[int, int, int]:
    c = report.fields[path].counts
    return (c.tp, c.fp, c.fn)


def test_leaf_categories_follow_the_design() -> None:
    gold = [{"id": "a", "eq": 1, "wrong": "x", "missing": 2, "nullpred": 3, "bothnull": None}]
    pred = [{"id": "a", "eq": 1, "wrong": "y", "nullpred": None, "extra": 5, "bothnull": None}]
    r = evaluate(gold, pred)
    assert counts(r, "eq") == (1, 0, 0)
    assert counts(r, "wrong") == (0, 1, 1)
    assert r.fields["wrong"].errors == {"wrong_value": 1}
    assert counts(r, "missing") == (0, 0, 1)
    assert r.fields["missing"].errors == {"missing": 1}
    assert counts(r, "nullpred") == (0, 0, 1)
    assert counts(r, "extra") == (0, 1, 0)
    assert r.fields["extra"].errors == {"hallucinated": 1}
    assert "bothnull" not in r.fields
    assert "id" not in r.fields
    # micro: TP 1, FP 2, FN 3 -> P 1/3, R 1/4, F1 2/(2+2+3)
    assert (r.micro.tp, r.micro.fp, r.micro.fn) == (1, 2, 3)
    assert r.micro.f1 == 2 / 7


def test_type_error_when_prediction_does_not_read_as_the_type() -> None:
    cfg = {"fields": {"total": {"type": "number"}}}
    r = evaluate([{"id": 1, "total": 10}], [{"id": 1, "total": "ten"}], cfg)
    assert counts(r, "total") == (0, 1, 1)
    assert r.fields["total"].errors == {"type_error": 1}


def test_zero_over_zero_is_none_not_zero_or_one() -> None:
    r = evaluate([{"id": 1, "a": None}], [{"id": 1}])
    assert r.micro.precision is None and r.micro.recall is None and r.micro.f1 is None
    assert r.macro_f1 is None
    r = evaluate([{"id": 1, "a": 1}], [{"id": 1}])
    assert r.micro.precision is None  # nothing predicted
    assert r.micro.recall == 0.0


def test_missing_document_and_parse_failure_count_every_gold_leaf() -> None:
    gold = [
        {"id": "a", "x": 1, "items": [{"q": 1}, {"q": 2}]},
        {"id": "b", "x": 1, "t": ["u", "v"]},
    ]
    pred: list[dict[str, Any] | str] = [
        '{"id": "a", "x": 1, "items": [{"q": 1}',
        {"id": "z", "x": 1},
    ]
    r = evaluate(gold, pred)
    assert r.parse_failures == ["a"]
    assert r.unknown_ids == ["z"]
    docs = {d.id: d for d in r.documents}
    assert docs["a"].status == "parse_failure" and docs["a"].counts.fn == 3
    assert docs["b"].status == "missing" and docs["b"].counts.fn == 3
    assert r.errors["parse_failure"] == 3 and r.errors["missing"] == 3
    assert r.parse_failure_rate == 0.5


def test_list_items_aligned_by_content_not_position() -> None:
    gold = [
        {"id": 1, "items": [{"d": "bolt", "q": 4}, {"d": "nut", "q": 8}, {"d": "gear", "q": 1}]}
    ]
    pred = [
        {"id": 1, "items": [{"d": "gear", "q": 1}, {"d": "nut", "q": 9}, {"d": "bolt", "q": 4}]}
    ]
    r = evaluate(gold, pred)
    assert counts(r, "items[].d") == (3, 0, 0)
    assert counts(r, "items[].q") == (2, 1, 1)


def test_items_with_nothing_in_common_stay_apart() -> None:
    gold = [{"id": 1, "items": [{"d": "bolt", "q": 4}]}]
    pred = [{"id": 1, "items": [{"d": "gear", "q": 9}]}]
    r = evaluate(gold, pred)
    # unpaired: gold item all FN (missing), predicted item all FP (hallucinated)
    assert counts(r, "items[].d") == (0, 1, 1)
    assert r.fields["items[].d"].errors == {"missing": 1, "hallucinated": 1}


def test_match_threshold_keeps_weak_pairs_apart() -> None:
    gold = [{"id": 1, "items": [{"a": 1, "b": 2, "c": 3}]}]
    pred = [{"id": 1, "items": [{"a": 1, "b": 0, "c": 0}]}]  # similarity 1/3
    loose = evaluate(gold, pred)
    strict = evaluate(gold, pred, {"match_threshold": 0.5})
    assert loose.fields["items[].a"].counts.tp == 1
    assert strict.fields["items[].a"].counts.tp == 0
    assert strict.fields["items[].a"].errors == {"missing": 1, "hallucinated": 1}


def test_match_threshold_applies_while_pairing_not_after() -> None:
    """Similarities (6 leaves each): A-P 5/6, A-Q 3/6, B-P 3/6, B-Q 2/6. Over every pair the
    best assignment is A-P + B-Q (7/6); at threshold 0.5 B-Q is no pair, and the best allowed
    one is A-Q + B-P (6/6 > A-P's 5/6). Pairing over every pair and then dropping B-Q kept only
    A-P: TP 5, F1 0.417 instead of TP 6, F1 0.5."""
    a = {"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1}
    b = {"a": 1, "b": 4, "c": 4, "d": 1, "e": 1, "f": 3}
    p = {"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 2}
    q = {"a": 1, "b": 1, "c": 1, "d": 3, "e": 3, "f": 3}
    gold, pred = [{"id": 1, "items": [a, b]}], [{"id": 1, "items": [p, q]}]
    loose = evaluate(gold, pred).micro
    assert (loose.tp, loose.fp, loose.fn) == (7, 5, 5)  # A-P (5 TP) + B-Q (2 TP)
    strict = evaluate(gold, pred, {"match_threshold": 0.5}).micro
    assert (strict.tp, strict.fp, strict.fn) == (6, 6, 6)  # A-Q (3 TP) + B-P (3 TP)
    assert strict.f1 == 0.5


def test_scalar_lists_are_multisets() -> None:
    gold = [{"id": 1, "tags": ["a", "b", "b", "c"]}]
    pred = [{"id": 1, "tags": ["b", "c", "d", "b", "b"]}]
    r = evaluate(gold, pred)
    # matched b, b, c; gold a missing; pred d and the third b hallucinated
    assert counts(r, "tags[]") == (3, 2, 1)


def test_scalar_list_with_tolerance_uses_a_matching() -> None:
    cfg = {"fields": {"v[]": {"type": "number", "rel_tol": 0.1}}}
    r = evaluate([{"id": 1, "v": [100, 200]}], [{"id": 1, "v": [205, 95]}], cfg)
    assert counts(r, "v[]") == (2, 0, 0)


def test_ignored_fields_are_listed_as_skipped_not_passed() -> None:
    cfg = {"fields": {"notes": {"ignore": True}, "items[].memo": {"ignore": True}}}
    gold = [{"id": 1, "notes": "x", "a": 1, "items": [{"memo": "m", "q": 1}]}]
    pred = [{"id": 1, "notes": "y", "a": 1, "items": [{"memo": "n", "q": 1}]}]
    r = evaluate(gold, pred, cfg)
    assert "notes" not in r.fields and "items[].memo" not in r.fields
    assert r.skipped == ["items[].memo", "notes"]
    assert r.micro.tp == 2


def test_structural_mismatch_counts_both_sides() -> None:
    r = evaluate([{"id": 1, "v": {"a": 1, "b": 2}}], [{"id": 1, "v": "a=1"}])
    assert counts(r, "v.a") == (0, 0, 1)
    assert counts(r, "v") == (0, 1, 0)
    assert r.errors["type_error"] == 3


def test_units_ratio_and_dates_in_context() -> None:
    cfg = {
        "date_formats": ["%d.%m.%Y"],
        "fields": {
            "k": {"type": "quantity", "rel_tol": 0.01},
            "ratio": {"type": "ratio"},
            "conc": {"type": "quantity"},
        },
    }
    gold = [{"id": 1, "k": "108 h⁻¹", "ratio": "4:1", "conc": "50 µM", "when": "2026-03-14"}]
    pred = [{"id": 1, "k": "1.8 min⁻¹", "ratio": "1:4", "conc": "0.05 mM", "when": "14.03.2026"}]
    r = evaluate(gold, pred, cfg)
    assert r.micro.f1 == 1.0, r.to_dict()["fields"]


def test_metric_keys_drop_the_list_marker() -> None:
    r = evaluate([{"id": 1, "items": [{"q": 1}]}], [{"id": 1, "items": [{"q": 1}]}])
    m = r.metrics()
    assert m["field_f1/items.q"] == 1.0
    assert {"precision", "recall", "f1", "macro_f1", "parse_failure_rate", "documents"} <= set(m)


# --------------------------------------------------------------------------- alignment reference
# (the assignment against a brute force, at several thresholds:
# tests/fields/test_align_reference.py)


def ref_similarity(g: dict[str, Any], p: dict[str, Any]) -> float:
    """Plain reference: share of the union of present keys whose values are equal (typed)."""
    keys = {k for k, v in g.items() if v is not None} | {k for k, v in p.items() if v is not None}
    if not keys:
        return 0.0
    same = sum(
        1
        for k in keys
        if g.get(k) is not None and type(g.get(k)) is type(p.get(k)) and g.get(k) == p.get(k)
    )
    return same / len(keys)


flat_items = st.lists(
    st.dictionaries(
        st.sampled_from("abcd"),
        st.one_of(st.integers(0, 2), st.sampled_from(["x", "y"]), st.none()),
        max_size=4,
    ),
    max_size=8,  # up to 64 pairs: both the plain-Python and the array path
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(flat_items, flat_items)
def test_bulk_similarity_equals_the_pairwise_reference(
    gold: list[dict[str, Any]], pred: list[dict[str, Any]]
) -> None:
    comps = Comparators(Config())
    fg = [flat_item(x) for x in gold]
    fp = [flat_item(x) for x in pred]
    sim = np.asarray(bulk_similarity(fg, fp, lambda rel: comps.resolver("items[]." + rel)))  # type: ignore[arg-type]
    for i, g in enumerate(gold):
        for j, p in enumerate(pred):
            assert abs(sim[i, j] - ref_similarity(g, p)) < 1e-12
    # and the scorer's own one-pair-at-a-time similarity agrees too
    scorer = FieldScorer()
    for i, g in enumerate(gold):
        for j, p in enumerate(pred):
            assert abs(scorer.item_similarity(g, p, "items[]") - sim[i, j]) < 1e-12


def test_large_shuffled_list_aligns_exactly() -> None:
    rnd = random.Random(7)
    items: list[dict[str, Any]] = [
        {"sku": f"S{i:05d}", "qty": rnd.randint(1, 50), "desc": f"part {i}"} for i in range(600)
    ]
    pred_items = [dict(x) for x in items]
    changed = 0
    for x in pred_items:
        if rnd.random() < 0.1:
            x["qty"] = x["qty"] + 100
            changed += 1
    rnd.shuffle(pred_items)
    r = evaluate([{"id": 1, "items": items}], [{"id": 1, "items": pred_items}])
    assert counts(r, "items[].sku") == (600, 0, 0)
    assert counts(r, "items[].qty") == (600 - changed, changed, changed)


# --------------------------------------------------------------------------- properties

scalars = st.one_of(
    st.integers(-5, 5),
    st.floats(-100, 100, allow_nan=False),
    st.text("abc xyz", max_size=6),
    st.booleans(),
    st.none(),
    st.sampled_from(["2026-03-14", "2025-12-01"]),
)
keys = st.sampled_from(["a", "b", "c", "d"])
leaf_dicts = st.dictionaries(keys, scalars, max_size=3)
values = st.one_of(
    scalars,
    leaf_dicts,
    st.lists(scalars.filter(lambda v: v is not None), max_size=4),
    st.lists(leaf_dicts.filter(bool), max_size=4),
)
docs = st.dictionaries(st.sampled_from(["f", "g", "h", "v", "w"]), values, max_size=5)


def gold_leaves(value: Any) -> int:
    """Number of scored leaves in a gold value (the definition, written plainly)."""
    if value is None or value == "" or (isinstance(value, str) and not value.strip()):
        return 0
    if isinstance(value, dict):
        return sum(gold_leaves(v) for v in value.values())
    if isinstance(value, list):
        return sum(gold_leaves(v) for v in value)
    return 1


def with_ids(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"id": f"d{i}", **d} for i, d in enumerate(items)]


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(docs, min_size=1, max_size=4))
def test_gold_against_itself_scores_one_everywhere(items: list[dict[str, Any]]) -> None:
    gold = with_ids(items)
    r = evaluate(gold, [dict(d) for d in gold])
    for f in r.fields.values():
        assert f.counts.f1 == 1.0, f
        assert f.counts.fp == 0 and f.counts.fn == 0


def test_identical_items_keep_zero_and_false_apart_in_any_order() -> None:
    """Hypothesis found it: `{"a": 0} == {"a": False}` in Python, so the small lists' identity
    pairing took a false for a 0 and which items paired (and the counts) depended on order."""
    gold = [{"a": 0}, {"a": False}]
    pred = [{"a": 0}, {"a": False}, {"a": None}, {"a": False}]
    results = set()
    for p in itertools.permutations(pred):
        for g in itertools.permutations(gold):
            r = evaluate([{"id": "d", "v": list(g)}], [{"id": "d", "v": list(p)}])
            results.add(counts(r, "v[].a"))
    assert results == {(2, 1, 0)}


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(docs, min_size=1, max_size=4), st.lists(docs, min_size=1, max_size=4), st.randoms())
def test_order_changes_nothing_and_counts_add_up(
    g_items: list[dict[str, Any]], p_items: list[dict[str, Any]], rnd: random.Random
) -> None:
    gold = with_ids(g_items)
    pred = with_ids(p_items)
    r = evaluate(gold, pred)

    def shuffled(doc: dict[str, Any]) -> dict[str, Any]:
        out = {}
        keys_ = list(doc)
        rnd.shuffle(keys_)
        for k in keys_:
            v = doc[k]
            if isinstance(v, list):
                v = list(v)
                rnd.shuffle(v)
            out[k] = v
        return out

    gold2 = [shuffled(d) for d in gold]
    pred2 = [shuffled(d) for d in pred]
    rnd.shuffle(gold2)
    rnd.shuffle(pred2)
    r2 = evaluate(gold2, pred2)
    assert {p: counts(r, p) for p in r.fields} == {p: counts(r2, p) for p in r2.fields}

    for score in [r.micro.precision, r.micro.recall, r.micro.f1, r.macro_f1] + [
        s for f in r.fields.values() for s in (f.counts.precision, f.counts.recall, f.counts.f1)
    ]:
        assert score is None or 0.0 <= score <= 1.0
    total_gold = sum(gold_leaves({k: v for k, v in d.items() if k != "id"}) for d in gold)
    assert r.micro.tp + r.micro.fn == total_gold
    ids = {d["id"] for d in gold}
    total_pred = sum(
        gold_leaves({k: v for k, v in d.items() if k != "id"}) for d in pred if d["id"] in ids
    )
    assert r.micro.tp + r.micro.fp == total_pred


def test_type_labels_of_fields_whose_values_always_matched() -> None:
    gold = [{"id": 2, "d": "2026-03-14", "n": 5, "t": "x", "b": True, "l": ["a"]}]
    r = evaluate(gold, [dict(g) for g in gold])
    assert {p: f.type for p, f in r.fields.items()} == {
        "b": "bool",
        "d": "date",
        "l[]": "text",
        "n": "number",
        "t": "text",
    }
    only_predicted = evaluate([{"id": 1, "a": 1}], [{"id": 1, "a": 1, "extra": "x"}])
    assert only_predicted.fields["extra"].type == "not_in_gold"


GOLD_ORDER = [{"id": i, "total": n} for n, i in enumerate(["c", "a", "e", "b", "d"])]
PRED_ROWS: list[Any] = [
    {"id": "c", "total": 0},
    {"id": "a", "total": 9},
    {"id": "b", "total": 3},
    '[{"id": "e"}]',  # a list: a parse failure of document e
    {"id": "z", "total": 1},  # not in gold; d has no prediction
]


@settings(max_examples=30, deadline=None)
@given(st.permutations(PRED_ROWS))
def test_positions_follow_the_gold_lines_whatever_the_prediction_order(rows: list[Any]) -> None:
    r = evaluate(GOLD_ORDER, rows)
    assert [(d.position, d.id, d.status) for d in r.documents] == [
        (0, "c", "scored"),
        (1, "a", "scored"),
        (2, "e", "parse_failure"),
        (3, "b", "scored"),
        (4, "d", "missing"),
    ]
    assert all("position" not in d.to_dict() for d in r.documents)


def test_equally_good_pairings_do_not_depend_on_list_order() -> None:
    """Gold {a,b} is as similar to pred {a,c} as to pred {b,c} (one leaf each): which one it
    pairs with must not depend on how the lists are ordered (it once did, giving w[].a either
    TP 2 or TP 1 FP 1 FN 1)."""
    gold_items = [{"a": None}, {"a": 0}, {"a": None}, {"a": 0, "b": 0}]
    pred_items = [{"a": 0}, {"a": 0, "c": 0}, {"b": 0, "c": 0}]
    seen = set()
    for g in itertools.permutations(gold_items):
        for p in itertools.permutations(pred_items):
            r = evaluate([{"id": "x", "w": list(g)}], [{"id": "x", "w": list(p)}])
            seen.add(tuple((path, counts(r, path)) for path in sorted(r.fields)))
    assert len(seen) == 1


def test_lists_of_lists_are_aligned_by_content_at_the_walked_paths() -> None:
    """A gold list whose items are lists (a table as rows) is aligned item by item by content,
    and the inner items are counted at ``path[][]``, the path the walk gives them: a missing,
    an empty or a padded prediction counts the same leaves at the same paths (a hypothesis
    property found ``d.a[]`` for one and ``d.a[][]`` for the other)."""
    scorer = FieldScorer(Config())
    rows = {"id": 1, "t": [["a", "b"], ["c", "d"]]}
    got = scorer.score(rows, {"id": 1, "t": [["c", "d"], ["a", "x"]]}).counts
    assert got == {"t[][]": [3, 1, 1]}  # ["c","d"] pairs whole, ["a","b"] with ["a","x"]
    gold = {"id": 1, "d": {"a": [["x"]]}}
    want = {"d.a[][]": [0, 0, 1]}
    for pred in ({"id": 1}, {"id": 1, "d": []}, {"id": 1, "d": [None]}, {"id": 1, "d": {}}):
        assert scorer.score(gold, pred).counts == want, pred
    assert scorer.score(gold, None).counts == want
