"""The raw reader of lockstep batches (:class:`~extract_mlflow.io.lockstep.RawPairs`) against
the line reader every other pass uses (:class:`~extract_mlflow.io.lines.RawLines`): the same
lines, line numbers, offsets and hashed bytes, for any block size, and the same place to
resume where it stops."""

from __future__ import annotations

import hashlib
import pickle
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extract_mlflow.errors import InputError
from extract_mlflow.io import lockstep
from extract_mlflow.io.lines import MAX_LINE_BYTES, RawLines
from extract_mlflow.io.lockstep import RawPairs, RawSpan, file_identity

_BOMS = {"none": b"", "utf8": b"\xef\xbb\xbf", "utf16": b"\xff\xfe"}

line = st.one_of(
    st.text('ab{}":1 é', min_size=1, max_size=12).filter(lambda s: s[0] not in " "),
    st.sampled_from(["", " ", "   x", "\t{}", "\r", '{"a": 1}\r', "\x0c"]),
)


@st.composite
def jsonl(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(line, max_size=12))
    text = "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n"]))
    return _BOMS[draw(st.sampled_from(list(_BOMS)))] + text.encode("utf-8")


def reference_lines(path: Path) -> list[tuple[int, int, bytes]]:
    """(line number, offset, raw) of the non-blank lines, as every other reader gives them."""
    return [(n, o, raw) for n, o, raw in RawLines(path, hashlib.sha256())]  # type: ignore[misc]


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(gold=jsonl(), pred=jsonl(), size=st.integers(1, 5), block=st.sampled_from([1, 2, 5, 64]))
def test_raw_batches_are_the_lines_every_reader_sees(
    tmp_path: Path, gold: bytes, pred: bytes, size: int, block: int
) -> None:
    g, p = tmp_path / "gold.jsonl", tmp_path / "pred.jsonl"
    g.write_bytes(gold)
    p.write_bytes(pred)
    reader = RawPairs(g, p, size)
    with patch.object(lockstep, "_BLOCK", block):
        batches = list(reader)
    rest = reader.rest
    assert rest is not None
    pairs = [pair for b in batches for pair in b.run.pairs()]
    offsets = [b.start.gold_end + o for b in batches for o in b.run.gold_starts]
    n = len(pairs)
    assert rest.position == n and all(len(b.run.gold_starts) == size for b in batches[:-1])
    if gold.startswith(_BOMS["utf16"]) or pred.startswith(_BOMS["utf16"]):
        assert n == 0  # the stream says what is wrong
        return
    want_gold, want_pred = reference_lines(g), reference_lines(p)
    # the batches are the first lines of both files, as the line reader gives them
    assert [(a, raw) for a, raw, _, _ in pairs] == [(a, raw) for a, _, raw in want_gold[:n]]
    assert [(c, raw) for _, _, c, raw in pairs] == [(c, raw) for c, _, raw in want_pred[:n]]
    assert offsets == [o for _, o, _ in want_gold[:n]]
    # the stream resumes where the hashed bytes end: after the last line given
    for data, end, lineno, hasher in (
        (gold, rest.gold_end, rest.gold_line, rest.gold_hasher),
        (pred, rest.pred_end, rest.pred_line, rest.pred_hasher),
    ):
        assert hasher.digest() == hashlib.sha256(data[:end]).digest()
        assert lineno == lines_in(data[:end])
    # it stops early only where the next batch holds a line it does not cut (a blank line, a
    # line of spaces), the prediction file ends first, or a file is UTF-16
    gl = next_lines(gold[rest.gold_end :], size)
    pl = next_lines(pred[rest.pred_end :], len(gl))
    assert not gl or len(pl) < len(gl) or not all(map(plain, gl + pl))


def lines_in(data: bytes) -> int:
    """Lines (blank ones too) in `data`; a last one without a line end counts, a BOM does not."""
    tail = data[data.rfind(b"\n") + 1 :]
    if b"\n" not in data and tail.startswith(_BOMS["utf8"]):
        tail = tail[len(_BOMS["utf8"]) :]
    return data.count(b"\n") + (tail != b"")


def next_lines(data: bytes, k: int) -> list[bytes]:
    parts = data.split(b"\n")
    if parts[-1] == b"":
        parts.pop()  # the last line's end
    return parts[:k]


def plain(raw: bytes) -> bool:
    return raw != b"" and raw[:1] not in (b" ", b"\t", b"\r", b"\n", b"\x0b", b"\x0c")


def test_a_line_over_the_limit_stops_the_batches(tmp_path: Path) -> None:
    g, p = tmp_path / "gold.jsonl", tmp_path / "pred.jsonl"
    ok = b'{"id": "a"}\n'
    g.write_bytes(ok * 3)
    p.write_bytes(ok + b'{"id": "b", "x": "' + b"x" * MAX_LINE_BYTES + b'"}\n' + ok)
    reader = RawPairs(g, p, 1)
    batches = list(reader)
    assert [len(b.run.pairs()) for b in batches] == [1]
    assert reader.rest is not None and reader.rest.position == 1
    assert reader.rest.pred_end == len(ok) and reader.rest.pred_line == 1
    exact = b'{"id": "' + b"x" * (MAX_LINE_BYTES - 10) + b'"}'
    assert len(exact) == MAX_LINE_BYTES
    p.write_bytes(exact + b"\n" + exact)  # at the limit, with and without a line end: plain lines
    g.write_bytes(ok * 2)
    reader = RawPairs(g, p, 1)
    assert [b.run.pairs()[0][3] for b in reader] == [exact + b"\n", exact]


def test_a_raw_run_pickles_for_the_workers(tmp_path: Path) -> None:
    """A run goes to a worker pickled (its fields restored by its constructor: pickle's
    default of setting them on a made object fails when the module is compiled)."""
    g, p = tmp_path / "gold.jsonl", tmp_path / "pred.jsonl"
    g.write_bytes(b'{"id": "a"}\n{"id": "b"}\n')
    p.write_bytes(b'{"id": "a", "x": 1}\n{"id": "b"}\n')
    (batch,) = RawPairs(g, p, 2)
    run = pickle.loads(pickle.dumps(batch.run, pickle.HIGHEST_PROTOCOL))
    assert run == batch.run and run.pairs() == batch.run.pairs()
    assert run.pairs()[0] == (1, b'{"id": "a"}\n', 1, b'{"id": "a", "x": 1}\n')


def test_a_span_reads_back_the_run_it_stands_for(tmp_path: Path) -> None:
    """What a worker gets instead of the bytes: pickled, then read from the files, each batch
    (after a byte order mark, past the first block) is the run the reader cut."""
    g, p = tmp_path / "gold.jsonl", tmp_path / "pred.jsonl"
    g.write_bytes(b"\xef\xbb\xbf" + b"".join(b'{"id": "d%d"}\n' % i for i in range(50)))
    p.write_bytes(b"".join(b'{"id": "d%d", "x": %d}\n' % (i, i) for i in range(50)))
    with patch.object(lockstep, "_BLOCK", 64):
        batches = list(RawPairs(g, p, 7))
    assert len(batches) == 8
    for batch in batches:
        span = pickle.loads(pickle.dumps(RawSpan.of(batch, g, p), pickle.HIGHEST_PROTOCOL))
        assert span.read() == batch.run


def test_a_file_cut_short_under_a_span_is_an_input_error(tmp_path: Path) -> None:
    g, p = tmp_path / "gold.jsonl", tmp_path / "pred.jsonl"
    g.write_bytes(b'{"id": "a"}\n{"id": "b"}\n')
    p.write_bytes(b'{"id": "a"}\n{"id": "b"}\n')
    (batch,) = RawPairs(g, p, 2)
    before = file_identity(p)
    p.write_bytes(b'{"id": "a"}\n')
    assert file_identity(p) != before
    with pytest.raises(InputError, match=r"pred\.jsonl: changed while it was being scored"):
        RawSpan.of(batch, g, p).read()
    assert file_identity(tmp_path / "missing.jsonl") is None
