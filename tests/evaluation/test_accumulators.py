"""The mergeable pieces of an evaluation, each against a plain reference: `Smallest` against
`heapq.nsmallest`, `TypeSamples` against a scan of the documents in id order, and the merges
that must refuse (another setup, the same document twice, another reservoir size)."""

from __future__ import annotations

import heapq
import pickle
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extract_mlflow.config import Config, FidelityConfig
from extract_mlflow.core.counts import Counts
from extract_mlflow.core.paths import document_leaves
from extract_mlflow.evaluation.accumulator import (
    DocumentInput,
    Evaluation,
    Extras,
    Inputs,
    Setup,
    Smallest,
    TypeSamples,
)
from extract_mlflow.evaluation.config_checks import ConfigUse, config_warnings
from extract_mlflow.evaluation.field_counts import FieldCounts
from extract_mlflow.fidelity.score import FidelityAccumulator
from extract_mlflow.fields.normalize import Comparators
from extract_mlflow.fields.scorer import ErrorRecord, FieldState
from extract_mlflow.io.loading import gold_from_rows, predictions_from_rows
from extract_mlflow.report import DocumentResult


# -- Smallest -------------------------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(
    keys=st.lists(st.integers(-50, 50), unique=True, max_size=40),
    k=st.integers(0, 8),
    parts=st.integers(1, 5),
    data=st.data(),
)
def test_smallest_is_nsmallest_of_the_union(
    keys: list[int], k: int, parts: int, data: st.DataObject
) -> None:
    """Split the offers into parts in any way, merge in any order: the k smallest keys, in
    key order, each with its own item."""
    owner = data.draw(st.lists(st.integers(0, parts - 1), min_size=len(keys), max_size=len(keys)))
    boxes = [Smallest[int, str](k) for _ in range(parts)]
    for key, o in zip(keys, owner, strict=True):
        kept = boxes[o].offer(key, f"item {key}")
        assert kept == (key in [kk for kk, _ in boxes[o].items])
    order = data.draw(st.permutations(range(parts)))
    merged = boxes[order[0]]
    for i in order[1:]:
        merged.merge(boxes[i])
    want = heapq.nsmallest(k, keys)
    assert merged.items == [(key, f"item {key}") for key in want]


def test_smallest_rejects_at_once_when_full() -> None:
    box = Smallest[tuple[str, int], str](2)
    assert box.offer(("b", 0), "b0") and box.offer(("a", 3), "a3")
    assert not box.offer(("b", 1), "b1")  # not below the largest kept
    assert box.offer(("a", 4), "a4")
    assert box.items == [(("a", 3), "a3"), (("a", 4), "a4")]
    with pytest.raises(ValueError, match="smallest"):
        box.merge(Smallest(3))


# -- TypeSamples ----------------------------------------------------------------------------
leaf_values = st.one_of(
    st.integers(-5, 5), st.sampled_from(["x", "2024-01-02", "y z"]), st.booleans()
)
documents = st.dictionaries(
    st.sampled_from(["a", "b", "c"]),
    st.one_of(leaf_values, st.dictionaries(st.sampled_from(["d", "e"]), leaf_values, max_size=2)),
    max_size=3,
)


@settings(max_examples=150, deadline=None)
@given(
    docs=st.dictionaries(st.text("pqrs", min_size=1, max_size=3), documents, max_size=8),
    parts=st.integers(1, 4),
    data=st.data(),
)
def test_type_samples_label_from_the_first_document_by_id(
    docs: dict[str, dict[str, Any]], parts: int, data: st.DataObject
) -> None:
    """Offered in any order and any partition, the label of a path is the type of its first
    gold value in the first document (by id) that has one: a scan in id order."""
    comparators = Comparators(Config())
    owner = data.draw(st.lists(st.integers(0, parts - 1), min_size=len(docs), max_size=len(docs)))
    samples = [TypeSamples() for _ in range(parts)]
    items = data.draw(st.permutations(list(zip(docs.items(), owner, strict=True))))
    for (doc_id, doc), o in items:
        samples[o].offer(doc_id, doc, {leaf.path for leaf in document_leaves(doc, {"id"})})
    merged = samples[0]
    for other in samples[1:]:
        merged.merge(other)
    pending = {leaf.path for doc in docs.values() for leaf in document_leaves(doc)}
    want: dict[str, str] = {}
    for doc_id in sorted(docs):
        for path, value, _ in document_leaves(docs[doc_id]):
            want.setdefault(path, comparators.for_leaf(path, value).type)
    assert merged.labels(pending, comparators, "id") == want


@settings(max_examples=150, deadline=None)
@given(
    counts=st.lists(
        st.dictionaries(
            st.sampled_from(["a", "b", "c[]"]),
            st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 2)).map(list),
            max_size=3,
        ),
        max_size=10,
    ),
    data=st.data(),
)
def test_type_samples_keep_the_smallest_id_per_counted_path(
    counts: list[dict[str, list[int]]], data: st.DataObject
) -> None:
    """Offered a document's counts in any document order, a path's sample is the smallest
    document id where the path counts a gold value (tp + fn > 0)."""
    ids = [f"doc-{i:02d}" for i in range(len(counts))]
    field_counts = FieldCounts()
    field_counts.state.types_seen.add(("typed", "number"))  # read as a type: needs no sample
    for i in data.draw(st.permutations(range(len(counts)))):
        field_counts.offer_counted(ids[i], {"n": i}, {"typed": [1, 0, 0], **counts[i]})
    samples = field_counts.samples
    want: dict[str, str] = {}
    for doc_id, c in zip(ids, counts, strict=True):
        for path, (tp, _, fn) in c.items():
            if tp + fn:
                want.setdefault(path, doc_id)
    assert {p: first[0] for p, first in samples.first.items()} == want
    assert all(samples.first[p][1] == {"n": ids.index(d)} for p, d in want.items())


def _record(doc_id: str, *errors: tuple[str, str]) -> DocumentResult:
    mistakes = [ErrorRecord(path, category, doc_id) for path, category in errors]
    return DocumentResult(doc_id, "scored", Counts(0, 0, len(mistakes)), {}, mistakes)


def test_fold_offers_until_every_field_is_closed() -> None:
    """A batch in id order skips a field once its reservoir is closed, and stops only when
    every field it touches is closed: a field with few mistakes still gets its late ones."""
    counts = FieldCounts()
    two = (("a", "missing"), ("a", "wrong_value"))
    for record in (
        _record("d6", *two),
        _record("d3", *two),
        _record("d1", ("b", "missing")),
        _record("d2", *two),
        _record("d8", ("b", "hallucinated"), ("a", "missing")),
        _record("d5", *two),
        _record("d4", *two),
    ):
        counts.add(record)
    counts.fold()
    kept = {p: [(k, e.category) for k, e in box.items] for p, box in counts.examples.items()}
    assert kept["a"] == [
        (("d2", 0), "missing"),
        (("d2", 1), "wrong_value"),
        (("d3", 0), "missing"),
        (("d3", 1), "wrong_value"),
        (("d4", 0), "missing"),
    ]
    assert kept["b"] == [(("d1", 0), "missing"), (("d8", 0), "hallucinated")]  # after "a" closed
    assert counts.tally == Counter(
        {
            ("a", "missing"): 6,
            ("a", "wrong_value"): 5,
            ("b", "missing"): 1,
            ("b", "hallucinated"): 1,
        }
    )
    assert counts.pending == []


# -- the other side states ------------------------------------------------------------------
def test_field_state_merge_unites_and_sums() -> None:
    a = FieldState({("x", "number")}, {"notes"}, Counter({"x": 2}))
    b = FieldState({("x", "text"), ("y", "date")}, {"memo"}, Counter({"x": 1, "y": 4}))
    a.merge(b)
    assert a == FieldState(
        {("x", "number"), ("x", "text"), ("y", "date")},
        {"notes", "memo"},
        Counter({"x": 3, "y": 4}),
    )


def test_config_use_merged_warns_as_one_pass() -> None:
    cfg = Config.model_validate(
        {"date_formats": ["%d/%m/%Y"], "fields": {"a.b": {}, "typo": {}, "w": {"unit": "kgg"}}}
    )
    docs: dict[str, dict[str, Any]] = {
        "1": {"id": "1", "a": {"b": "01/02/2024"}},
        "2": {"id": "2", "w": 3, "c": "2024-13-01"},
    }
    parts = [ConfigUse.of(cfg), ConfigUse.of(cfg)]
    assert parts[0] is not None and parts[1] is not None
    parts[1].update(docs["1"])
    parts[0].update(docs["2"])
    parts[1].merge(parts[0])
    assert parts[1].warnings(cfg) == config_warnings(cfg, docs)
    assert parts[1].warnings(cfg) == [
        'config: [fields."typo"] matches no gold field',
        "config: [fields.\"w\"] unit 'kgg' is not a known unit",
    ]
    assert ConfigUse.of(Config()) is None  # nothing to check: no walk at all


def test_fidelity_merge_refuses_another_setup() -> None:
    a = FidelityAccumulator(FidelityConfig())
    with pytest.raises(ValueError, match="setup"):
        a.merge(FidelityAccumulator(FidelityConfig(casefold=True)))
    with pytest.raises(ValueError, match="setup"):
        a.merge(FidelityAccumulator(FidelityConfig(), {("a", "x"): None}))


# -- Evaluation -----------------------------------------------------------------------------
def _evaluation_parts() -> tuple[Setup, Inputs, list[DocumentInput]]:
    gold = [{"id": f"d{i}", "n": i, "t": "abc"} for i in range(6)]
    pred = [{"id": f"d{i}", "n": i + i % 2, "t": "abc"} for i in range(5)]
    gs, ps = gold_from_rows(gold, "id"), predictions_from_rows(pred, "id")
    setup = Setup.of(Config(), None, Extras())
    docs = [DocumentInput(i, d, g, ps.docs.get(d)) for i, (d, g) in enumerate(gs.docs.items())]
    return setup, Inputs.of(gs, ps), docs


def test_evaluation_refuses_a_document_twice_and_other_setups() -> None:
    setup, _, docs = _evaluation_parts()
    a, b = Evaluation(setup), Evaluation(setup)
    a.update(docs[0])
    with pytest.raises(ValueError, match="already scored"):
        a.update(docs[0])
    b.update(docs[0])
    with pytest.raises(ValueError, match=r"position\(s\) \[0\]"):
        a.merge(b)
    other = Setup(Config(id_key="key"))
    with pytest.raises(ValueError, match="setup"):
        a.merge(Evaluation(other))


def test_evaluation_state_is_plain_data() -> None:
    """What a worker process sends back: no caches, no closures; merges as if never sent."""
    setup, inputs, docs = _evaluation_parts()
    part = Evaluation(setup)
    for d in docs[3:]:
        part.update(d)
    sent = pickle.loads(pickle.dumps(part))
    assert sent._tools is None and part._tools is not None
    names = getattr(Evaluation, "__mypyc_attrs__", None) or vars(part)  # compiled: no vars
    for name in set(names) - {"_tools", "__dict__"}:
        assert getattr(sent, name) == getattr(part, name), name  # every attribute is sent
    rest = Evaluation(setup)
    for d in docs[:3]:
        rest.update(d)
    one = Evaluation(setup)
    for d in docs:
        one.update(d)
    got, want = rest.merge(sent).result(inputs), one.result(inputs)
    assert got.to_dict() == want.to_dict()
    assert [d.position for d in got.documents] == list(range(6))
