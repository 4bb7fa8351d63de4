"""core.paths: the one document walker equals each walker it replaced
(tests/support/paths_reference.py, kept verbatim as oracles), and the scorer built on it reports
the same leaves and cuts."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from support import paths_reference as ref

from extract_mlflow.config import Config, FieldRule
from extract_mlflow.core.paths import (
    PATH_PATTERN,
    PRUNED,
    covers,
    document_leaves,
    flat_item,
    strip_list_marks,
    walk,
)
from extract_mlflow.fields.scorer import MISSING, DocCounts, FieldScorer

KEYS = st.sampled_from(["id", "usage", "a", "b", "c", "items", ""])
SCALARS = st.one_of(
    st.none(),
    st.sampled_from(["", " ", "\u3000", "\x1c", "x", "0"]),
    st.integers(-3, 3),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False, width=16),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3)),
    max_leaves=12,
)
DOCS = st.dictionaries(KEYS, VALUES, max_size=5)
PATHS = st.sampled_from(["a", "b", "a.b", "a.c", "items", "items[]", "items[].a", "c[]", "usage"])
IGNORES = st.frozensets(PATHS, max_size=3)


def _nameless_object(doc: dict[str, Any]) -> bool:
    """A top-level key "" holding something to walk into: the one place the old walkers
    disagreed (the scorer named its children ``k``, fidelity and hints ``.k``); the one walk
    follows the scorer (:func:`test_a_nameless_top_level_key_is_named_like_the_scorer`)."""
    return isinstance(doc.get(""), (dict, list)) and bool(doc[""])


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(DOCS, IGNORES)
def test_walk_expands_like_the_field_scorer(doc: dict[str, Any], ignores: frozenset[str]) -> None:
    for key, value in doc.items():
        old = ref.Expansion(ignores)
        old.expand(value, key)
        leaves = walk(value, key, [], ignored=ignores.__contains__ if ignores else None)
        assert [(x.path, x.value) for x in leaves if x.value is not PRUNED] == old.leaves
        assert {x.path for x in leaves if x.value is PRUNED} == old.skipped


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(DOCS, IGNORES, st.frozensets(KEYS, max_size=2))
def test_document_leaves_read_like_text_fidelity(
    doc: dict[str, Any], ignores: frozenset[str], skip: frozenset[str]
) -> None:
    assume(not _nameless_object(doc))

    def is_ignored(path: str) -> bool:
        return path in ignores

    new = document_leaves(doc, skip, keep_blank=True, ignored=is_ignored, prune=False)
    assert [tuple(x) for x in new] == ref.fidelity_leaves(doc, skip, is_ignored)
    samples: dict[str, Any] = {}
    for leaf in document_leaves(doc, skip):
        samples.setdefault(leaf.path, leaf.value)
    assert samples == ref.gold_samples(doc, skip)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(DOCS, KEYS)
def test_document_leaves_read_like_hints_and_config_checks(
    doc: dict[str, Any], id_key: str
) -> None:
    assume(not _nameless_object(doc))
    new = [(x.path, x.value) for x in document_leaves(doc, {id_key})]
    assert new == list(ref.leaf_values(doc, id_key=id_key))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(DOCS, IGNORES)
def test_the_scorer_counts_and_skips_what_the_walk_finds(
    doc: dict[str, Any], ignores: frozenset[str]
) -> None:
    """A missing document: every gold leaf a false negative, every ignored subtree skipped."""
    paths = {p: FieldRule(ignore=True) for p in ignores}
    scorer = FieldScorer(Config(fields=paths))
    acc = DocCounts()
    scorer.expand_gold(doc, MISSING, acc)
    old = ref.Expansion(ignores)
    for key, value in doc.items():
        if key not in {"id", "usage", "latency_ms"}:
            old.expand(value, key)
    assert [(e.path, e.expected) for e in acc.errors] == old.leaves
    assert scorer.skipped == old.skipped


def test_the_small_helpers() -> None:
    assert strip_list_marks("line_items[].qty") == "line_items.qty"
    assert covers("items", ["items[].qty"]) and not covers("item", ["items[].qty"])
    assert PATH_PATTERN.match("a[].b") and not PATH_PATTERN.match("a..b")
    assert flat_item({"a": {"b": 1, "c": " "}, "d": []}) == {"a.b": 1}
    assert flat_item({"a": [1]}) is None


def test_a_nameless_top_level_key_is_named_like_the_scorer() -> None:
    """The children of a top-level key "" are named as field scoring always named them."""
    doc = {"id": 1, "": {"a": 2, "b": [3]}}
    assert [x.path for x in document_leaves(doc, {"id"})] == ["a", "b[]"]
    old = ref.Expansion(())
    old.expand(doc[""], "")
    assert old.leaves == [("a", 2), ("b[]", 3)]
    assert [p for p, _ in ref.leaf_values(doc)] == [".a", ".b[]"]  # what hints used to say
