"""Any partition of the documents, updated in any order and merged in any order, gives the
one-pass result: the same Report field by field (confidence intervals included, fixed seed),
the same JSON, the same counts frame, the same worst documents. Every metric family is covered:
field counts and their mistake examples, type labels, config warnings, pages and layout notes,
tokens and latency, slices, structure with its intervals, text fidelity with sources, injection
findings, approvals and prompt-injection canaries."""

from __future__ import annotations

import dataclasses
import functools
import json
import pickle
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.merge import ARGS, case_of, expected, one_pass

from extract_mlflow.config import Config
from extract_mlflow.evaluation.accumulator import Evaluation
from extract_mlflow.evaluation.evaluate import (
    evaluate,
)
from extract_mlflow.evaluation.records import counts_frame
from extract_mlflow.fields.normalize import Comparators
from extract_mlflow.report import Report

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

E = ROOT / "examples"


def assert_same(got: Report, want: Report) -> None:
    for f in dataclasses.fields(Report):
        assert getattr(got, f.name) == getattr(want, f.name), f.name
    assert json.dumps(got.to_dict()) == json.dumps(want.to_dict())
    pd.testing.assert_frame_equal(counts_frame(got), counts_frame(want))
    for n in (1, 3, 10, 25):
        assert got.worst_documents(n) == want.worst_documents(n)


def test_the_cases_cover_every_family() -> None:
    """The cases are worth merging: each family has something to merge in some case."""
    inv, papers, structure, synth_ = (expected(c) for c in sorted(ARGS))
    assert (
        inv.family("fidelity") is not None
        and inv.family("fidelity").worst_values
        and inv.family("fidelity").injection
    )
    assert inv.family("fidelity").approved and inv.family("fidelity").unused_approvals == [
        ("inv-404", "total")
    ]
    assert inv.family("fidelity").no_prediction and inv.parse_failures and inv.unknown_ids
    assert inv.family("fidelity").canaries is not None and inv.family("fidelity").canaries.obeyed
    assert len(inv.family("fidelity").canaries.documents) > 1
    assert any(f.examples for f in inv.fields.values()) and inv.intervals
    assert papers.layouts and papers.notes and papers.tokens_per_doc is not None
    assert structure.family("structure") is not None and structure.family("structure").slices
    assert any(m.ci_low < m.ci_high for m in structure.family("structure").headline.values())
    assert "continuity" in structure.family("structure").headline  # a gold page break
    assert synth_.slice_metrics and synth_.warnings and synth_.latency_ms(0.95) is not None
    assert sum(len(f.examples) == 5 for f in synth_.fields.values()) >= 3
    # the label of a field always matched to the letter: its first gold value in id order
    _, _, docs = case_of("synthetic")
    first = min(docs, key=lambda d: d.id).gold["code"]
    assert synth_.fields["code"].type == Comparators(Config()).for_leaf("code", first).type
    assert min(docs, key=lambda d: d.position).id != min(d.id for d in docs)
    assert synth_.fields["ref"].type == "number/text" and synth_.gold_type_errors["due"] > 3


@pytest.mark.parametrize("case", sorted(ARGS))
def test_examples_are_the_first_mistakes_by_document_id(case: str) -> None:
    """The reservoirs against the plain definition: per field, the first five mistakes of the
    documents taken in id order, each document's mistakes in its order."""
    report = expected(case)
    want: dict[str, list[dict[str, Any]]] = {}
    for d in sorted(report.documents, key=lambda d: d.id):
        for e in d.errors:
            shown = want.setdefault(e.path, [])
            if len(shown) < 5:
                shown.append(
                    {"id": d.id, "category": e.category, "expected": e.expected, "got": e.got}
                )
    assert {p: f.examples for p, f in report.fields.items() if f.examples} == want


@pytest.mark.parametrize("case", sorted(ARGS))
def test_one_pass_is_what_evaluate_returns(case: str) -> None:
    """The Evaluation driven part by part is the evaluation `evaluate` runs."""
    args = ARGS[case]()
    got = evaluate(args.pop("gold"), args.pop("pred"), stream=False, **args)
    assert_same(got, expected(case))


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(ARGS))
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_any_partition_merges_to_the_one_pass_result(case: str, data: st.DataObject) -> None:
    setup, inputs, docs = case_of(case)
    k = data.draw(st.integers(1, min(6, len(docs))), label="parts")
    owner = data.draw(st.lists(st.integers(0, k - 1), min_size=len(docs), max_size=len(docs)))
    parts = [
        data.draw(st.permutations([d for d, o in zip(docs, owner, strict=True) if o == i]))
        for i in range(k)
    ]
    # the mistakes are folded into the reservoirs in batches: at the end (result), or also
    # within a part and before merging (as a streaming caller would before dropping them)
    folds = data.draw(st.sets(st.integers(0, len(docs))), label="fold after")
    runs = []
    for part in parts:
        run = Evaluation(setup)
        for n, d in enumerate(part):
            run.update(d)
            if n in folds:
                run.fields.fold()
        if data.draw(st.booleans(), label="a result before merging"):
            run.result(inputs)
        runs.append(run)
    order = data.draw(st.permutations(range(k)), label="merge order")
    if data.draw(st.booleans(), label="tree"):  # ((a + b) + (c + d)): associativity
        half = len(order) // 2 or 1
        left = functools.reduce(Evaluation.merge, [runs[i] for i in order[:half]])
        rest = [runs[i] for i in order[half:]]
        merged = left.merge(functools.reduce(Evaluation.merge, rest)) if rest else left
    else:
        merged = functools.reduce(Evaluation.merge, [runs[i] for i in order])
    assert_same(merged.result(inputs), expected(case))


@pytest.mark.parametrize("case", sorted(ARGS))
def test_parts_travel_pickled(case: str) -> None:
    """A part is plain data: pickled (as to a worker process and back), merged and even
    updated further, it still gives the one-pass result."""
    setup, inputs, docs = case_of(case)
    half = len(docs) // 2
    first = pickle.loads(pickle.dumps(one_pass(setup, docs[:half])))
    second = one_pass(setup, docs[half:-1])
    second = pickle.loads(pickle.dumps(second))
    second.update(docs[-1])  # the scorer is rebuilt after unpickling
    assert_same(second.merge(first).result(inputs), expected(case))


def test_merge_refuses_overlaps_and_other_setups() -> None:
    setup, _, docs = case_of("papers")
    a, b = one_pass(setup, docs[:2]), one_pass(setup, docs[1:3])
    with pytest.raises(ValueError, match="position"):
        a.merge(b)
    with pytest.raises(ValueError, match="position"):
        a.update(docs[0])
    other, _, _ = case_of("invoices")
    with pytest.raises(ValueError, match="setup"):
        one_pass(setup, docs[:1]).merge(Evaluation(other))
    changed = dataclasses.replace(setup, profile="photocat")
    with pytest.raises(ValueError, match="setup"):
        one_pass(setup, docs[:1]).merge(one_pass(changed, docs[1:2]))
    inv, _, inv_docs = case_of("invoices")
    fewer = dataclasses.replace(inv, canaries=inv.canaries[:1])
    with pytest.raises(ValueError, match="setup"):
        one_pass(inv, inv_docs[:1]).merge(one_pass(fewer, inv_docs[1:2]))
