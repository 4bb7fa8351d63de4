"""io.stream: the one-pass join gives exactly what loading both files gives — the same
documents in gold order, the same parse failures, unknown ids, unattributed lines, digests and
the same first error — for files in gold order, shuffled, with gaps, repeats and broken lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from support.stream import doc, file_pairs, write

from extract_mlflow.errors import InputError
from extract_mlflow.io.lines import MAX_LINE_BYTES
from extract_mlflow.io.loading import load_gold, load_predictions
from extract_mlflow.io.stream import JoinedStream, id_hash

Outcome = tuple[Any, ...]


def reference(gold: Path, pred: Path, id_key: str = "id") -> Outcome:
    """Load both files whole (today's loaders), then join: the definition of the stream."""
    try:
        gs = load_gold(gold, id_key)
        ps = load_predictions(pred, id_key)
    except InputError as exc:
        return ("error", str(exc))
    joined = [
        (position, doc_id, doc, ps.docs.get(doc_id), ps.parse_failures.get(doc_id))
        for position, (doc_id, doc) in enumerate(gs.docs.items())
    ]
    unknown = sorted(set(ps.docs).union(ps.parse_failures).difference(gs.docs))
    return ("ok", joined, unknown, ps.unattributed, gs.digest, ps.digest)


def streamed(gold: Path, pred: Path, id_key: str = "id") -> Outcome:
    stream = JoinedStream(gold, pred, id_key)
    try:
        joined = [(j.position, j.id, j.gold, j.pred, j.failure) for j in stream]
    except InputError as exc:
        return ("error", str(exc))
    s = stream.summary
    return ("ok", joined, s.unknown_ids, s.unattributed, s.gold_digest, s.pred_digest)


# -- properties ------------------------------------------------------------------------------


@pytest.mark.slow
@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pair=file_pairs())
def test_the_stream_equals_loading_both_files(tmp_path: Path, pair: Any) -> None:
    gold_lines, pred_lines, gold_bom, pred_bom = pair
    gold = write(tmp_path / "gold.jsonl", gold_lines, gold_bom)
    pred = write(tmp_path / "pred.jsonl", pred_lines, pred_bom)
    assert streamed(gold, pred) == reference(gold, pred)


# -- the cases a property might draw rarely ----------------------------------------------------


def test_lockstep_reads_nothing_twice(tmp_path: Path) -> None:
    gold = write(tmp_path / "g.jsonl", [doc(f"d{i}", 1) for i in range(50)])
    pred = write(tmp_path / "p.jsonl", [doc(f"d{i}", i % 2) for i in range(50)])
    stream = JoinedStream(gold, pred)
    assert [j.id for j in stream] == [f"d{i}" for i in range(50)]
    assert stream.summary.mode == "lockstep"
    assert streamed(gold, pred) == reference(gold, pred)


@pytest.mark.parametrize(
    "preds",
    [
        [doc("b", 1), doc("a", 1)],  # shuffled
        [doc("a", 1)],  # shorter: b has no prediction
        [doc("a", 1), doc("b", 1), doc("c", 1)],  # an unknown id after gold ran out
        [doc("a", 1), doc("a", 2), doc("b", 1)],  # a repeat of a line joined in lockstep
        [doc("a", 1), doc("b", 1), doc("b", 2)],  # a repeat after gold ran out
        [doc("b", 1), "garbage\n", doc("b", 2)],  # a repeat among indexed lines
        [],  # empty file
        ["\n", "  \n"],  # blank lines only
    ],
)
def test_order_breaks_and_repeats(tmp_path: Path, preds: list[str]) -> None:
    gold = write(tmp_path / "g.jsonl", [doc("a", 1), doc("b", 1)])
    pred = write(tmp_path / "p.jsonl", preds)
    assert streamed(gold, pred) == reference(gold, pred)


def test_a_gold_defect_wins_over_a_prediction_defect(tmp_path: Path) -> None:
    gold = write(tmp_path / "g.jsonl", [doc("a", 1), doc("b", 1), '{"id": "c"\n'])
    for preds in ([doc("a", 1), doc("a", 1)], ["\xff\xfe"]):
        pred = write(tmp_path / "p.jsonl", preds)
        got = streamed(gold, pred)
        assert got == reference(gold, pred)
        assert got[1].startswith(f"{gold}:3:")
    missing = tmp_path / "absent.jsonl"
    assert streamed(gold, missing) == reference(gold, missing)
    gold_ok = write(tmp_path / "g2.jsonl", [doc("a", 1)])
    assert streamed(gold_ok, missing) == ("error", f"{missing}: file not found")


def test_utf16_and_empty_gold(tmp_path: Path) -> None:
    pred = write(tmp_path / "p.jsonl", [doc("a", 1)])
    utf16 = tmp_path / "g16.jsonl"
    utf16.write_bytes(doc("a", 1).encode("utf-16"))
    empty = write(tmp_path / "empty.jsonl", [])
    for gold in (utf16, empty):
        assert streamed(gold, pred) == reference(gold, pred)
        assert streamed(gold, pred)[0] == "error"


def test_an_oversized_prediction_line_out_of_order(tmp_path: Path) -> None:
    big = '{"id": "a", "blob": "' + "x" * (MAX_LINE_BYTES + 10) + '"}\n'
    gold = write(tmp_path / "g.jsonl", [doc("a", 1), doc("b", 1)])
    pred = write(tmp_path / "p.jsonl", [doc("b", 1), big])  # read back by seeking
    got = streamed(gold, pred)
    assert got == reference(gold, pred)
    assert "over the 16 MiB limit" in got[1][0][4]


def test_hash_collisions_never_join_the_wrong_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With every id hashing alike, the stream still joins by the full id (the join's hash
    is looked up in the module at each use, compiled or not: the calls are counted)."""
    import extract_mlflow.io.stream as stream_module

    hashed: list[str] = []

    def same_hash(doc_id: str) -> int:
        hashed.append(doc_id)
        return 42

    monkeypatch.setattr(stream_module, "_id_hash", same_hash)
    gold = write(tmp_path / "g.jsonl", [doc(f"d{i}", 1) for i in range(6)])
    pred = write(tmp_path / "p.jsonl", [doc(f"d{i}", i) for i in (5, 3, 1, 0, 9)])
    assert streamed(gold, pred) == reference(gold, pred)
    assert {f"d{i}" for i in (*range(6), 9)} <= set(hashed)  # every gold and prediction id
    dup = write(tmp_path / "g2.jsonl", [doc("x", 1), doc("y", 1), doc("x", 2)])
    assert streamed(dup, pred) == reference(dup, pred)


def test_id_hash_is_stable() -> None:
    assert id_hash("inv-001") == id_hash("inv-001") != id_hash("inv-002")
    assert 0 <= id_hash("") < 2**64


@pytest.mark.parametrize("bom", [False, True])
def test_a_repeated_id_is_found_again_past_blank_lines(tmp_path: Path, bom: bool) -> None:
    """A repeated gold id is looked up by reading the gold file again (no offset is kept per
    document): the message's line numbers count blank lines, with or without a byte order
    mark, as load_gold's do; the earliest repeat is named, and a broken line after it does
    not hide it."""
    lines = [doc("a", 1), "\n", doc("b", 1), "   \n", doc("c", 1), doc("b", 2), doc("a", 3), "{x\n"]
    gold = write(tmp_path / "g.jsonl", lines, bom=bom)
    pred = write(tmp_path / "p.jsonl", [doc("a", 1), doc("b", 1)])
    got = streamed(gold, pred)
    assert got == reference(gold, pred)
    assert got[0] == "error" and "g.jsonl:6: duplicate id 'b' (first on line 3)" in str(got[1])
