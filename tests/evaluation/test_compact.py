"""A compact evaluation (records' counts spilled, records dropped) gives the retaining one's
report: every field, the JSON text, the counts frame, the worst documents, the documents as
rebuilt from the columns; for any partition merged in any order, and pickled."""

from __future__ import annotations

import dataclasses
import functools
import gc
import json
import pickle
from array import array
from pathlib import Path
from typing import Any
from unittest.mock import patch

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.compact import assert_compact_same, plain
from support.merge import ARGS, case_of, expected

from extract_mlflow.config import Config
from extract_mlflow.core.counts import Counts
from extract_mlflow.errors import NotKeptError
from extract_mlflow.evaluation import chunks as chunks_module
from extract_mlflow.evaluation import compact as compact_module
from extract_mlflow.evaluation.accumulator import DocumentInput, Evaluation, Inputs, Setup
from extract_mlflow.evaluation.compact import CompactRecords, DocumentColumns
from extract_mlflow.evaluation.evaluate import evaluate
from extract_mlflow.evaluation.records import counts_frame
from extract_mlflow.io.loading import gold_from_rows, predictions_from_rows
from extract_mlflow.io.spill import CountsSpill
from extract_mlflow.report import DocumentResult
from extract_mlflow.views.frames import report_frame


def compact_pass(setup: Setup, docs: list[DocumentInput]) -> Evaluation:
    run = Evaluation(setup, sink=CountsSpill())
    for d in docs:
        run.update(d)
    return run


@pytest.mark.parametrize("case", sorted(ARGS))
def test_compact_one_pass_is_the_retaining_one(case: str) -> None:
    setup, inputs, docs = case_of(case)
    run = compact_pass(setup, docs)
    assert run.documents == [] and run.compact is not None
    assert_compact_same(run.result(inputs), expected(case))


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(ARGS))
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_compact_partitions_merge_to_the_retaining_result(case: str, data: st.DataObject) -> None:
    setup, inputs, docs = case_of(case)
    k = data.draw(st.integers(1, min(5, len(docs))), label="parts")
    owner = data.draw(st.lists(st.integers(0, k - 1), min_size=len(docs), max_size=len(docs)))
    runs, early = [], []
    for i in range(k):
        part = data.draw(st.permutations([d for d, o in zip(docs, owner, strict=True) if o == i]))
        run = compact_pass(setup, part[:-1])
        if data.draw(st.booleans(), label="a result before the last update"):
            early.append(run.result(inputs))  # kept: its columns may view the part's arrays
        for d in part[-1:]:
            run.update(d)
        if data.draw(st.booleans(), label="pickled"):
            run = pickle.loads(pickle.dumps(run))
        if data.draw(st.booleans(), label="counts as bytes (a Spark part)"):
            assert isinstance(run.sink, CountsSpill)
            run.sink = CountsSpill.from_portable(run.sink.portable())
        runs.append(run)
    order = data.draw(st.permutations(range(k)), label="merge order")
    merged = functools.reduce(Evaluation.merge, [runs[i] for i in order])
    assert_compact_same(merged.result(inputs), expected(case))


def test_compact_refuses_what_it_does_not_keep() -> None:
    setup, inputs, docs = case_of("invoices")
    report = compact_pass(setup, docs).result(inputs)
    doc = report.documents[0]
    with pytest.raises(NotKeptError, match="not kept"):
        list(doc.errors)
    with pytest.raises(NotKeptError, match="counts"):
        dict(doc.fields)
    with pytest.raises(ValueError, match="compact"):
        compact_pass(setup, docs[:1]).merge(Evaluation(setup))
    a = compact_pass(setup, docs[:2])
    with pytest.raises(ValueError, match="position"):
        a.merge(compact_pass(setup, docs[1:3]))
    with pytest.raises(ValueError, match="position"):
        a.update(docs[0])


def test_the_spill_holds_the_counts_not_the_memory() -> None:
    """The records are dropped: the part keeps columns, the counts per path are on disk."""
    setup, _, docs = case_of("synthetic")
    run = compact_pass(setup, docs)
    assert not run.documents and not run.positions
    assert isinstance(run.sink, CountsSpill)
    run.sink.flush()
    size = sum(Path(s.file).stat().st_size for s in run.sink.segments)
    entries = sum(len(d) for d in _record_fields(setup, docs))
    assert size == 20 * entries  # five int32 per (document, path) entry
    files = [s.file for s in run.sink.segments]
    del run
    gc.collect()
    assert not any(Path(f).exists() for f in files)  # removed with their owner


@pytest.mark.slow
def test_a_spill_file_goes_with_its_owner() -> None:
    """A spill's files are removed when the spill that owns them is collected, not before:
    merging hands them to the adopting spill, pickling to the unpickled copy, which goes on
    appending to its own file."""
    a, b = CountsSpill(), CountsSpill()
    a.add(0, {"x": [1, 0, 0]})
    b.add(1, {"x": [0, 1, 0], "y": [0, 0, 1]})
    a.merge(b)
    files = [s.file for s in a.segments]
    del b
    gc.collect()
    assert len(files) == 2 and all(Path(f).exists() for f in files)
    copy = pickle.loads(pickle.dumps(a))
    del a
    gc.collect()
    assert all(Path(f).exists() for f in files)
    copy.add(2, {"y": [1, 1, 1]})
    assert [(paths, len(data)) for paths, data in copy.portable()] == [
        (["x", "y"], 40),
        (["x", "y"], 40),
    ]
    frame = copy.long_frame(np.arange(3), ["a", "b", "c"])
    assert frame[["id", "field", "tp"]].values.tolist() == [
        ["a", "x", 1], ["b", "x", 0], ["b", "y", 0], ["c", "y", 1]
    ]  # fmt: skip
    del copy
    gc.collect()
    assert not any(Path(f).exists() for f in files)


def _record_fields(setup: Setup, docs: list[DocumentInput]) -> list[dict[str, list[int]]]:
    run = Evaluation(setup)
    return [run.update(d).fields for d in docs]


@pytest.mark.parametrize("case", sorted(ARGS))
def test_evaluate_streams_files_to_the_same_report(case: str, tmp_path: Path) -> None:
    """`evaluate` on two JSONL paths streams them (a compact evaluation) and gives the
    report of loading them; rows are written to files first where the case has rows."""
    args = ARGS[case]()
    gold, pred = args.pop("gold"), args.pop("pred")
    want = evaluate(gold, pred, stream=False, **args)
    paths = []
    for name, value in (("gold", gold), ("pred", pred)):
        if not isinstance(value, Path):
            path = tmp_path / f"{name}.jsonl"
            path.write_text("".join(json.dumps(row) + "\n" for row in value), encoding="utf-8")
            value = path
        paths.append(value)
    got = evaluate(paths[0], paths[1], **args)
    if not isinstance(gold, Path):  # rows: the loaded files' digests and names differ
        want = evaluate(paths[0], paths[1], stream=False, **args)
    assert_compact_same(got, want)


def test_documents_frame_when_no_score_is_defined(tmp_path: Path) -> None:
    """Every document without a prediction: precision n/a everywhere (a column of None)."""
    gold, pred = tmp_path / "g.jsonl", tmp_path / "p.jsonl"
    gold.write_text('{"id": "a", "x": 1}\n{"id": "b", "x": 2}\n', encoding="utf-8")
    pred.write_text('{"id": "c", "x": 1}\n', encoding="utf-8")
    got, want = evaluate(gold, pred), evaluate(gold, pred, stream=False)
    assert_compact_same(got, want)


def test_a_compact_report_pickles() -> None:
    setup, inputs, docs = case_of("synthetic")
    report = compact_pass(setup, docs).result(inputs)
    copy = pickle.loads(pickle.dumps(report))
    assert [plain(d) for d in copy.documents] == [plain(d) for d in report.documents]
    pd.testing.assert_frame_equal(counts_frame(copy), counts_frame(report))


def _bytes_held(value: Any, seen: set[int] | None = None) -> int:
    """The bytes of every array, buffer and bytes object reachable from `value` (through
    lists, tuples, dicts and object attributes), each counted once: what a state's columns
    cost, deterministic for given inputs."""
    seen = set() if seen is None else seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        return int(value.nbytes) if value.base is None else _bytes_held(value.base, seen)
    if isinstance(value, array):
        return value.itemsize * len(value)
    if isinstance(value, (bytes, bytearray)):
        return len(value)
    if isinstance(value, memoryview):
        return value.nbytes
    if isinstance(value, (list, tuple)):
        return sum(_bytes_held(v, seen) for v in value)
    if isinstance(value, dict):
        return sum(_bytes_held(v, seen) for v in value.values())
    names = getattr(type(value), "__mypyc_attrs__", None)  # compiled by mypyc: no __dict__
    if names is not None:
        return sum(_bytes_held(getattr(value, n), seen) for n in names if hasattr(value, n))
    if hasattr(value, "__dict__"):
        return _bytes_held(vars(value), seen)
    return 0


_IDS = 10  # "doc-000001": the bytes of one id


@pytest.mark.slow
def test_the_compact_columns_cost_a_few_bytes_per_document() -> None:
    """20,000 documents scored in gold order, in one part or in batches merged: the compact
    state's columns hold ≤ 8 bytes per document besides the id's bytes (a status byte, tp/fp/fn
    and the id's length in the narrowest type, no position), and the documents of the report
    ≤ 12 (adding the ids' 4-byte ends)."""
    n = 20_000
    gold: list[dict[str, Any]] = [
        {"id": f"doc-{i:06d}", "total": i % 97, "items": [{"sku": i % 5}] * (i % 3)}
        for i in range(n)
    ]
    pred = [
        {"id": d["id"], "total": d["total"] if i % 4 else 0, "items": d["items"][:1]}
        for i, d in enumerate(gold)
    ]
    gs, ps = gold_from_rows(gold, "id"), predictions_from_rows(pred, "id")
    setup = Setup.of(Config())
    docs = [DocumentInput(i, d["id"], d, pred[i]) for i, d in enumerate(gold)]
    one = compact_pass(setup, docs)
    batches = compact_pass(setup, docs[:1000])
    for start in range(1000, n, 1000):
        batches.merge(compact_pass(setup, docs[start : start + 1000]))
    for run in (one, batches):
        assert run.compact is not None
        assert n * (_IDS + 4) <= _bytes_held(run.compact) <= n * (_IDS + 8)
        report = run.result(Inputs.of(gs, ps))
        assert type(report.documents) is DocumentColumns
        assert _bytes_held(report.documents) - _bytes_held(report.documents.spill) <= n * (
            _IDS + 12
        )
        assert report.documents[n - 1].id == f"doc-{n - 1:06d}"
        assert report.documents[n - 1].position == n - 1


@given(
    ids=st.lists(st.text(max_size=6), min_size=1, max_size=40),
    order=st.randoms(use_true_random=False),
    cut=st.integers(0, 40),
)
def test_columns_give_back_every_id_and_count(ids: list[str], order: Any, cut: int) -> None:
    """Ids spread over many small buffers, counts over chunks that widen, documents added in
    any order and merged from two parts: the columns give each document back in gold order
    (also after pickling), and adding more documents later leaves them as they were."""
    docs = [
        DocumentResult(i, "scored", Counts(k, 300 * k, 70_000 * (k % 2)), {}, [], position=k)
        for k, i in enumerate(ids)
    ]
    shuffled = docs[:]
    order.shuffle(shuffled)
    with (
        patch.object(compact_module, "_BLOB_BYTES", 5),
        patch.object(chunks_module, "CHUNK_ROWS", 3),
    ):
        a, b = CompactRecords(), CompactRecords()
        for d in shuffled[:cut]:
            a.add(d)
        for d in shuffled[cut:]:
            b.add(d)
        a.merge(b)
        columns = a.columns(None)
        a.add(dataclasses.replace(docs[0], id="late", position=len(docs)))
    for got in (columns, pickle.loads(pickle.dumps(columns))):
        assert list(got.ids) == ids
        assert [(d.id, d.counts, d.position) for d in got] == [
            (d.id, d.counts, d.position) for d in docs
        ]


@given(
    errors=st.lists(
        st.tuples(st.integers(0, 3), st.sampled_from([0, 1, 2, 255, 65_535])), max_size=60
    ),
    n=st.integers(-1, 70),
)
def test_worst_documents_are_the_sorted_ones(errors: list[tuple[int, int]], n: int) -> None:
    """The worst documents of the columns are the plain sort's: most FP + FN first (> 0,
    counts of any width, sums past the counts' type), ties by id."""
    records = CompactRecords()
    for k, (fp, fn) in enumerate(errors):
        records.add(
            DocumentResult(f"d{k % 7}-{k}", "scored", Counts(1, fp, fn), {}, [], position=k)
        )
    want = sorted(
        ((-(fp + fn), f"d{k % 7}-{k}") for k, (fp, fn) in enumerate(errors) if fp + fn),
    )[: max(n, 0)]
    assert [d.id for d in records.columns(None).worst(n)] == [i for _, i in want]


@pytest.mark.parametrize("case", sorted(ARGS))
def test_a_retaining_evaluation_gives_the_same_table_with_its_records(case: str) -> None:
    """The records of a retaining evaluation become the one document table: each item is its
    record (counts per field and mistakes included), and the per-document frames read the kept
    counts as a plain computation over the records gives them."""
    setup, inputs, docs = case_of(case)
    run = Evaluation(setup)
    records = sorted((run.update(d) for d in docs), key=lambda r: r.position)
    report = run.result(inputs)
    assert type(report.documents) is DocumentColumns and report.documents.spill is None
    assert list(report.documents) == records and report.documents == records
    paths = list(report.fields)
    frame = counts_frame(report)
    for p in paths:
        for k, name in enumerate(("tp", "fp", "fn")):
            want = [r.fields.get(p, [0, 0, 0])[k] for r in records]
            assert frame[f"field_{name}/{p}"].tolist() == want
    long = [(r.id, p, *c) for r in records for p, c in r.fields.items()]
    got = report_frame(report, "document_fields")
    assert [tuple(row) for row in got.itertuples(index=False)] == long
