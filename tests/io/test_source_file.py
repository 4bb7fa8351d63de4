"""A JSONL sources file read by offset (`io/source_file.py`): the same texts, errors and
signature digest as reading the file whole into a dict (the reference here: json.loads of
each line, and the digest as the signature computed it from that dict), and no text held."""

from __future__ import annotations

import json
import pickle
import random
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extract_mlflow.errors import InputError
from extract_mlflow.evaluation.inputs import Extras, Inputs, content_digest
from extract_mlflow.io import source_file
from extract_mlflow.io.lines import line_at, read_source
from extract_mlflow.io.source_file import SourceFile, SourceUse
from extract_mlflow.io.sources import load_sources


def reference(path: Path, id_key: str = "id", text_key: str = "text") -> dict[str, str]:
    """The sources file read whole, line by line (what loading did before it was indexed)."""
    out: dict[str, str] = {}
    for n, raw in enumerate(path.read_bytes().split(b"\n"), 1):
        if raw.strip():
            obj = json.loads(raw.decode("utf-8-sig" if n == 1 else "utf-8"))
            out[str(obj[id_key])] = obj[text_key]
    return out


def reference_facts(sources: dict[str, str], gold_ids: list[str]) -> tuple[str, tuple[str, ...]]:
    """The sources digest and unused sources as the signature computed them from the dict."""
    digest = content_digest(sorted((i, sources[i]) for i in gold_ids if i in sources))
    return digest, tuple(i for i in sources if i not in gold_ids)


def write(path: Path, rows: list[dict[str, Any]], blank: bool = False) -> Path:
    lines = [json.dumps(r, ensure_ascii=bool(n % 2)) for n, r in enumerate(rows)]
    text = "\n\n".join(lines) if blank else "\n".join(lines)
    path.write_text(text + "\n", encoding="utf-8")
    return path


IDS = st.one_of(st.text(max_size=12), st.integers(-(10**20), 10**20))
SOURCES = st.dictionaries(IDS, st.text(max_size=40), max_size=60)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(rows=SOURCES, blank=st.booleans(), data=st.data())
def test_the_texts_and_the_digest_are_those_of_the_file_read_whole(
    tmp_path: Path, rows: dict[Any, str], blank: bool, data: st.DataObject
) -> None:
    unique = {str(k): (k, v) for k, v in rows.items()}  # 1 and "1" are one id
    path = write(tmp_path / "s.jsonl", [{"id": k, "text": v} for k, v in unique.values()], blank)
    want = reference(path)
    got = SourceFile(path)
    assert len(got) == len(want) and list(got) == list(want) and dict(got.items()) == want
    assert got == want and all(got[i] == t for i, t in want.items())
    others = data.draw(st.lists(st.text(max_size=12), max_size=10))
    assert all((i in got) == (i in want) for i in others)
    assert [got.get(i) for i in others] == [want.get(i) for i in others]
    gold = data.draw(st.lists(st.sampled_from(sorted(want)), unique=True)) if want else []
    gold = list(dict.fromkeys([*gold, *others]))  # gold ids are unique
    facts = Inputs.extras_facts(Extras(sources=got), SourceUse(got).add(gold))
    assert (facts["sources_digest"], facts["unused_sources"]) == reference_facts(want, gold)
    in_memory = Inputs.extras_facts(Extras(sources=want), SourceUse(want).add(gold))
    assert in_memory == facts


def test_ids_of_one_hash_are_told_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(source_file, "_id_hash", lambda doc_id: len(doc_id) % 2)
    rows = [{"id": f"doc-{n}", "text": f"text {n}"} for n in range(30)]
    path = write(tmp_path / "s.jsonl", rows)
    got = SourceFile(path)
    assert dict(got.items()) == reference(path)
    assert all(got[r["id"]] == r["text"] for r in rows)
    assert "doc-99" not in got and "doc-7x" not in got and got.get("x") is None
    used = SourceUse(got).add(["doc-3", "doc-12", "nope"])
    assert list(used.used()) == [("doc-12", "text 12"), ("doc-3", "text 3")]
    assert len(list(used.unused())) == 28


A, B, A2, B2 = (json.dumps({"id": i, "text": t}) for i, t in ("ax", "by", "az", "bw"))
ONE = ['{"id": 1, "text": "x"}', '{"id": "1", "text": "y"}']  # 1 and "1": one id


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([A, "", B, A2], "line 4: a second source for id 'a'"),
        (ONE, "line 2: a second source for id '1'"),
        ([A, B, B2, A2], "line 3: a second source for id 'b'"),
        ([A, A2, A2], "line 2: a second source for id 'a'"),
        ([A, A2, '{"id": "b", "text": 1}'], "line 2: a second source for id 'a'"),
        ([A, '{"id": "b", "text": 1}', A2], "line 2: 'text' must be a string"),
        ([A, A2, '{"id": "b", "text": '], "line 2: a second source"),
        ([A, "not json"], "line 2: invalid JSON: Expecting value"),
        ([A, '{"id": ["a"], "text": "x"}'], "line 2: 'id' must be a string or an integer"),
    ],
)  # fmt: skip
def test_the_first_defect_in_file_order_is_the_error(
    tmp_path: Path, lines: list[str], message: str
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=message) as err:
        SourceFile(path)
    assert str(err.value).startswith(f"{path}, line ")


def test_a_byte_order_mark_and_an_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "a", "text": "x"}\n{"id": "b", "text": ""}')
    assert dict(SourceFile(path).items()) == {"a": "x", "b": ""}
    assert SourceFile(path)["a"] == "x"  # read back at offset 0, past the mark
    path.write_bytes(b"")
    assert len(SourceFile(path)) == 0 and SourceFile(path).get("a") is None
    path.write_bytes('{"id": "a", "text": "x"}'.encode("utf-16"))
    with pytest.raises(InputError, match="UTF-16"):
        SourceFile(path)


def test_a_file_changed_after_it_was_read_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [{"id": "a", "text": "x"}, {"id": "b", "text": "y"}])
    got = SourceFile(path)
    path.write_text("garbage\n" * 10, encoding="utf-8")
    with pytest.raises(InputError, match="changed since it was read"):
        got.get("b")


def test_a_copy_reads_the_file_itself(tmp_path: Path) -> None:
    path = write(tmp_path / "s.jsonl", [{"id": "a", "text": "x"}, {"id": "b", "text": "y"}])
    got = SourceFile(path)
    assert got["a"] == "x"  # its file is open now
    copy = pickle.loads(pickle.dumps(got))
    assert copy["b"] == "y" and dict(copy.items()) == dict(got.items())
    got.close()
    assert got["b"] == "y"


def test_no_text_is_held(tmp_path: Path) -> None:
    """Opening a 20 MB file and reading every text back holds a line at a time: the peak of
    the traced allocations is far below the texts' size."""
    text = "Invoice total 597.38 EUR. " * 4000  # 104 KB a text
    path = write(tmp_path / "s.jsonl", [{"id": f"doc-{n}", "text": text} for n in range(200)])
    tracemalloc.start()
    try:
        got = load_sources(path)
        assert isinstance(got, SourceFile)
        assert all(got[f"doc-{n}"] == text for n in range(200))
        used = SourceUse(got).add(f"doc-{n}" for n in range(0, 200, 2))
        facts = Inputs.extras_facts(Extras(sources=got), used)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000, peak  # the texts are 21 MB; one is 0.1 MB
    assert len(facts["unused_sources"]) == 100
    assert (
        facts["sources_digest"]
        == reference_facts(reference(path), [f"doc-{n}" for n in range(0, 200, 2)])[0]
    )


def test_many_ids_in_code_point_order(tmp_path: Path) -> None:
    """Thousands of ids from every plane (and integers): the digest is the dict's, whose
    pairs `sorted` orders by code point."""
    rng = random.Random(7)
    alphabet = "aZ0-_ é\u00ff\u0100\u07ff\u0800\ud7ff\ue000\uffff\U00010000\U0010ffff"
    ids: dict[str, Any] = {}
    while len(ids) < 3000:
        doc_id: Any = "".join(rng.choices(alphabet, k=rng.randint(0, 6)))
        doc_id = rng.randint(-999, 999) if rng.random() < 0.1 else doc_id
        ids.setdefault(str(doc_id), doc_id)
    rows = [
        {"id": i, "text": rng.choice(["", "x", "Total 5 €", "\U0001f600"])} for i in ids.values()
    ]
    path = write(tmp_path / "s.jsonl", rows)
    want = reference(path)
    gold = [*rng.sample(sorted(want), 2000), "absent"]
    got = SourceFile(path)
    facts = Inputs.extras_facts(Extras(sources=got), SourceUse(got))
    assert facts["unused_sources"] == tuple(want)  # nothing used: all unused, in file order
    facts = Inputs.extras_facts(Extras(sources=got), SourceUse(got).add(gold))
    assert (facts["sources_digest"], facts["unused_sources"]) == reference_facts(want, gold)


def test_the_lines_are_read_by_the_line_codec(tmp_path: Path) -> None:
    """One reader of JSONL lines (issue 27): a sources line gets the checks and the words of a
    gold line, and a line read back by its offset is read as the scan read it."""
    path = tmp_path / "s.jsonl"
    path.write_text('{"id": "a", "text": "x"}\n{"id": "b", "text": "y", "n": NaN}\n')
    with pytest.raises(InputError, match="line 2: NaN is not a valid JSON value"):
        SourceFile(path)
    path.write_text('{"id": "a", "text": "x"}\n{"text": "y"}\n')
    with pytest.raises(InputError, match="line 2: no 'id' key"):
        SourceFile(path)
    assert read_source(b'{"id": 3, "text": "t"}\n', "id", "text") == ("3", "t")
    assert read_source(b'{"id": "a"}\n', "id", "text") == (
        None,
        "'text' must be a string, not null",
    )
    assert read_source(b"\xff\n", "id", "text") == (None, "not valid UTF-8 (byte 1 of the line)")
    path.write_bytes(b'\xef\xbb\xbf{"id": "a", "text": "x"}\n' + b" " * 10 + b"\n")
    with path.open("rb") as f:
        assert line_at(f, 0) == line_at(f, 3) == b'{"id": "a", "text": "x"}\n'
