"""Bad inputs, at the library level: gold defects are InputErrors naming file and line;
the same defects in a prediction file are parse failures of the document (or unattributed
lines when no id can be recovered), never fatal, never an uncaught exception."""

from __future__ import annotations

import contextlib
import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extract_mlflow import ConfigError, InputError, evaluate
from extract_mlflow.io.lines import MAX_DEPTH, MAX_LINE_BYTES
from extract_mlflow.io.loading import (
    gold_from_rows,
    load_gold,
    load_predictions,
    predictions_from_rows,
)

GOOD = b'{"id": "a", "total": 1}\n'
DEEP = 10_000


def write(tmp_path: Path, name: str, data: bytes | str) -> Path:
    p = tmp_path / name
    p.write_bytes(data.encode() if isinstance(data, str) else data)
    return p


def nested(depth: int, doc_id: str | None = "a") -> bytes:
    """A line holding a list nested `depth` levels deep inside the object."""
    head = b'{"id": "%s", "x": ' % doc_id.encode() if doc_id is not None else b'{"x": '
    return head + b"[" * depth + b"]" * depth + b"}\n"


def write_big_line(path: Path, size: int, doc_id: str = "big") -> None:
    """One JSON object with a `size`-byte string, written in chunks (fast, little memory)."""
    chunk = b"x" * (1 << 20)
    with path.open("wb") as f:
        f.write(b'{"id": "%s", "text": "' % doc_id.encode())
        for _ in range(size // len(chunk)):
            f.write(chunk)
        f.write(b'"}\n')


def gold_error(tmp_path: Path, data: bytes | str) -> str:
    p = write(tmp_path, "gold.jsonl", data)
    with pytest.raises(InputError) as info:
        load_gold(p)
    return str(info.value)


# --------------------------------------------------------------------------- gold: errors


def test_gold_missing_file(tmp_path: Path) -> None:
    p = tmp_path / "nope.jsonl"
    with pytest.raises(InputError, match="file not found") as info:
        load_gold(p)
    assert str(p) in str(info.value)


def test_gold_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a directory"):
        load_gold(tmp_path)


@pytest.mark.parametrize("data", [b"", b"\n\n  \n", b"\xef\xbb\xbf"], ids=["empty", "blank", "bom"])
def test_gold_empty_file(tmp_path: Path, data: bytes) -> None:
    msg = gold_error(tmp_path, data)
    assert "gold.jsonl" in msg and "no documents" in msg


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        (b"[1, 2]", "array"),
        (b'"a"', "string"),
        (b"3", "number"),
        (b"null", "null"),
        (b"true", "boolean"),
    ],
)
def test_gold_line_not_an_object(tmp_path: Path, line: bytes, kind: str) -> None:
    msg = gold_error(tmp_path, GOOD + line + b"\n")
    assert "gold.jsonl:2:" in msg
    assert f"not a JSON object (got {kind})" in msg


def test_gold_line_without_id_key(tmp_path: Path) -> None:
    msg = gold_error(tmp_path, GOOD + b'{"ID": "b", "total": 2}\n')
    assert "gold.jsonl:2:" in msg and "no 'id' key" in msg


def test_gold_custom_id_key_is_named(tmp_path: Path) -> None:
    p = write(tmp_path, "gold.jsonl", GOOD)
    with pytest.raises(InputError, match=r"gold.jsonl:1: no 'doc_id' key"):
        load_gold(p, id_key="doc_id")


@pytest.mark.parametrize("value", ["null", "[1]", "1.5", "true", '{"a": 1}'])
def test_gold_id_of_unusable_type(tmp_path: Path, value: str) -> None:
    msg = gold_error(tmp_path, f'{{"id": {value}, "total": 1}}\n')
    assert "gold.jsonl:1:" in msg and "'id'" in msg


def test_gold_duplicate_ids_name_both_lines(tmp_path: Path) -> None:
    msg = gold_error(tmp_path, GOOD + b'{"id": "b"}\n' + b'{"id": "a", "total": 9}\n')
    assert "gold.jsonl:3:" in msg
    assert "duplicate id 'a' (first on line 1)" in msg


def test_gold_integer_and_string_id_collide(tmp_path: Path) -> None:
    msg = gold_error(tmp_path, b'{"id": 1}\n{"id": "1"}\n')
    assert "duplicate id '1'" in msg


def test_gold_invalid_utf8(tmp_path: Path) -> None:
    msg = gold_error(tmp_path, GOOD + b'{"id": "b", "name": "caf\xe9"}\n')
    assert "gold.jsonl:2:" in msg and "not valid UTF-8" in msg


def test_gold_utf8_bom_is_stripped(tmp_path: Path) -> None:
    gs = load_gold(write(tmp_path, "gold.jsonl", b"\xef\xbb\xbf" + GOOD))
    assert list(gs.docs) == ["a"]
    assert gs.docs["a"] == {"id": "a", "total": 1}


def test_gold_bom_in_the_middle_is_an_error(tmp_path: Path) -> None:
    msg = gold_error(tmp_path, GOOD + b'\xef\xbb\xbf{"id": "b"}\n')
    assert "gold.jsonl:2:" in msg


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_gold_utf16_is_an_error(tmp_path: Path, encoding: str) -> None:
    msg = gold_error(tmp_path, GOOD.decode().encode(encoding))
    assert "gold.jsonl" in msg
    assert "UTF-16" in msg


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e400", "-2E999"])
def test_gold_nan_and_infinity_are_errors(tmp_path: Path, value: str) -> None:
    msg = gold_error(tmp_path, GOOD + b'{"id": "b", "total": %s}\n' % value.encode())
    assert "gold.jsonl:2:" in msg
    assert value in msg


def test_gold_integer_too_long_for_python_is_an_error(tmp_path: Path) -> None:
    msg = gold_error(tmp_path, b'{"id": "a", "n": ' + b"7" * 5000 + b"}\n")
    assert "gold.jsonl:1:" in msg and "digits" in msg


def test_gold_nested_10000_levels(tmp_path: Path) -> None:
    msg = gold_error(tmp_path, GOOD + nested(DEEP, "b"))
    assert "gold.jsonl:2:" in msg and f"deeper than {MAX_DEPTH}" in msg


def test_gold_nested_just_over_the_limit(tmp_path: Path) -> None:
    msg = gold_error(tmp_path, nested(MAX_DEPTH))  # the object itself is one more level
    assert f"deeper than {MAX_DEPTH}" in msg


def test_gold_nested_within_the_limit_scores(tmp_path: Path) -> None:
    line = nested(MAX_DEPTH - 2)
    gold = write(tmp_path, "gold.jsonl", line)
    pred = write(tmp_path, "pred.jsonl", line)
    assert load_gold(gold).docs["a"]["x"] == json.loads(line)["x"]
    report = evaluate(gold, pred)  # empty leaves: nothing to count, nothing raised
    assert report.documents[0].status == "scored"


def test_gold_truncated_line(tmp_path: Path) -> None:
    msg = gold_error(tmp_path, GOOD + b'{"id": "b", "x": [1,\n')
    assert "gold.jsonl:2: invalid JSON" in msg


def test_gold_50mb_line(tmp_path: Path) -> None:
    p = tmp_path / "gold.jsonl"
    write_big_line(p, 50 * 1024 * 1024)
    with pytest.raises(InputError) as info:
        load_gold(p)
    msg = str(info.value)
    assert "gold.jsonl:1:" in msg and "16 MiB limit" in msg


def test_gold_line_at_the_size_limit_is_read(tmp_path: Path) -> None:
    p = tmp_path / "gold.jsonl"
    prefix, suffix = b'{"id": "a", "t": "', b'"}\n'
    with p.open("wb") as f:  # exactly MAX_LINE_BYTES bytes before the newline
        f.write(prefix + b"y" * (MAX_LINE_BYTES - len(prefix) - len(suffix) + 1) + suffix)
    assert len(load_gold(p).docs["a"]["t"]) > MAX_LINE_BYTES - 100


def test_gold_line_one_byte_over_the_limit_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "gold.jsonl"
    prefix, suffix = b'{"id": "a", "t": "', b'"}\n'
    with p.open("wb") as f:
        f.write(prefix + b"y" * (MAX_LINE_BYTES - len(prefix) - len(suffix) + 2) + suffix)
    with pytest.raises(InputError, match=r"gold\.jsonl:1: line is 16,777,217 bytes"):
        load_gold(p)


def test_gold_blank_lines_and_crlf_are_ignored(tmp_path: Path) -> None:
    data = b'\n{"id": "a"}\r\n\r\n   \n{"id": "b"}\n\n'
    assert list(load_gold(write(tmp_path, "gold.jsonl", data)).docs) == ["a", "b"]


def test_gold_error_line_numbers_count_blank_lines(tmp_path: Path) -> None:
    msg = gold_error(tmp_path, b'{"id": "a"}\n\n\n[]\n')
    assert "gold.jsonl:4:" in msg


def test_gold_digest_is_sha256_of_the_file(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbf" + GOOD + b"\n"
    gs = load_gold(write(tmp_path, "gold.jsonl", data))
    assert gs.digest == hashlib.sha256(data).hexdigest()


def test_evaluate_raises_gold_errors(tmp_path: Path) -> None:
    gold = write(tmp_path, "gold.jsonl", GOOD + GOOD)
    pred = write(tmp_path, "pred.jsonl", GOOD)
    with pytest.raises(InputError, match=r"gold.jsonl:2: duplicate id 'a'"):
        evaluate(gold, pred)
    with pytest.raises(InputError, match="file not found"):
        evaluate(tmp_path / "missing.jsonl", pred)


# --------------------------------------------------------------------------- predictions


def preds(tmp_path: Path, data: bytes | str) -> Any:
    return load_predictions(write(tmp_path, "pred.jsonl", data))


def test_pred_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        load_predictions(tmp_path / "nope.jsonl")
    with pytest.raises(InputError, match=r"pred.jsonl: no predictions"):
        preds(tmp_path, b"\n \n")


def test_pred_truncated_line_is_a_parse_failure_of_its_id(tmp_path: Path) -> None:
    ps = preds(tmp_path, GOOD + b'{"id": "b", "x": [1,\n')
    assert list(ps.docs) == ["a"]
    assert list(ps.parse_failures) == ["b"]
    assert ps.parse_failures["b"].startswith("line 2: invalid JSON")
    assert ps.unattributed == []


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b'{"id": 7, "x": ', "7"),
        (b'{"id": -3, "x": ', "-3"),
        (b'{"id" :  "a\\"b", "x": }', 'a"b'),
        (b'{"id": "caf\\u00e9", ', "café"),
        (b'garbage before {"id": "z"', "z"),
    ],
)
def test_pred_id_recovered_from_broken_text(tmp_path: Path, line: bytes, expected: str) -> None:
    ps = preds(tmp_path, line + b"\n")
    assert list(ps.parse_failures) == [expected]


def test_pred_unrecoverable_line_is_unattributed(tmp_path: Path) -> None:
    ps = preds(tmp_path, GOOD + b"{not json at all\n")
    assert list(ps.docs) == ["a"]
    assert ps.parse_failures == {}
    assert len(ps.unattributed) == 1 and ps.unattributed[0].startswith("line 2: invalid JSON")


@pytest.mark.parametrize("line", [b"[1, 2]", b'"text"', b"42", b"null"])
def test_pred_line_not_an_object(tmp_path: Path, line: bytes) -> None:
    ps = preds(tmp_path, GOOD + line + b"\n")
    assert ps.unattributed == [f"line 2: not a JSON object (got {_kind(line)})"]


def _kind(line: bytes) -> str:
    return {b"[": "array", b'"': "string", b"4": "number", b"n": "null"}[line[:1]]


def test_pred_without_id_is_unattributed_not_a_nested_id(tmp_path: Path) -> None:
    # valid JSON without a top-level id: a nested "id" must not be taken for the document's
    ps = preds(tmp_path, b'{"vendor": {"id": "v1"}, "total": 1}\n')
    assert ps.parse_failures == {} and ps.docs == {}
    assert ps.unattributed == ["line 1: no 'id' key (set --id-key or id_key in the config)"]


def test_pred_id_of_unusable_type_is_unattributed(tmp_path: Path) -> None:
    ps = preds(tmp_path, b'{"id": ["a"], "total": 1}\n')
    assert ps.docs == {} and ps.parse_failures == {}
    assert "must be a string or an integer" in ps.unattributed[0]


def test_pred_invalid_utf8_is_a_parse_failure(tmp_path: Path) -> None:
    ps = preds(tmp_path, b'{"id": "a", "name": "caf\xe9"}\n')
    assert ps.parse_failures["a"].startswith("line 1: not valid UTF-8")


def test_pred_bom_is_stripped(tmp_path: Path) -> None:
    ps = preds(tmp_path, b"\xef\xbb\xbf" + GOOD)
    assert list(ps.docs) == ["a"] and ps.parse_failures == {} and ps.unattributed == []


def test_pred_utf16_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="UTF-16"):
        preds(tmp_path, GOOD.decode().encode("utf-16"))


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_pred_nan_and_infinity_are_parse_failures(tmp_path: Path, value: str) -> None:
    ps = preds(tmp_path, b'{"id": "a", "total": %s}\n' % value.encode())
    assert ps.docs == {}
    assert value in ps.parse_failures["a"]


def test_pred_nested_10000_levels_is_a_parse_failure(tmp_path: Path) -> None:
    ps = preds(tmp_path, nested(DEEP, "a") + nested(DEEP, None) + nested(MAX_DEPTH, "c"))
    assert set(ps.parse_failures) == {"a", "c"}
    assert all(f"deeper than {MAX_DEPTH}" in why for why in ps.parse_failures.values())
    assert len(ps.unattributed) == 1 and ps.unattributed[0].startswith("line 2:")


def test_pred_50mb_line_is_a_parse_failure(tmp_path: Path) -> None:
    p = tmp_path / "pred.jsonl"
    write_big_line(p, 50 * 1024 * 1024, doc_id="big")
    with p.open("ab") as f:
        f.write(GOOD)  # the line after the long one is still read
    ps = load_predictions(p)
    assert "16 MiB limit" in ps.parse_failures["big"]
    assert list(ps.docs) == ["a"]


def test_pred_duplicate_ids_are_an_error(tmp_path: Path) -> None:
    with pytest.raises(
        InputError, match=r"pred.jsonl:3: duplicate prediction id 'a' \(first on line 1\)"
    ):
        preds(tmp_path, GOOD + b'{"id": "b"}\n' + GOOD)


def test_pred_duplicate_of_a_parse_failure_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"pred.jsonl:2: duplicate prediction id 'a'"):
        preds(tmp_path, b'{"id": "a", "x": [\n' + GOOD)


def test_pred_blank_lines_are_ignored(tmp_path: Path) -> None:
    ps = preds(tmp_path, b"\n\n" + GOOD + b"   \r\n\n")
    assert list(ps.docs) == ["a"] and ps.unattributed == []


# --------------------------------------------------------------------------- evaluate


def test_evaluate_parse_failures_unknown_ids_and_unattributed(tmp_path: Path) -> None:
    gold = write(tmp_path, "gold.jsonl", b'{"id": "a", "t": 1, "u": "x"}\n{"id": "b", "t": 2}\n')
    pred = write(
        tmp_path,
        "pred.jsonl",
        b'{"id": "a", "t": [1,\n{"id": "b", "t": 2}\n{"id": "zz", "t": 3}\n[]\n',
    )
    report = evaluate(gold, pred)
    assert [d.status for d in report.documents] == ["parse_failure", "scored"]
    assert report.parse_failures == ["a"]
    assert report.parse_failure_rate == 2 / 3  # a, and the line without an id
    assert report.unknown_ids == ["zz"]
    assert report.unattributed == ["line 4: not a JSON object (got array)"]
    assert len(report.documents) == 2  # unknown ids are reported, not scored
    # every leaf of the unparseable document is a false negative of category parse_failure
    assert report.fields["u"].errors == {"parse_failure": 1}
    t = report.fields["t"].counts
    assert (t.tp, t.fp, t.fn) == (1, 0, 1)
    assert report.documents[0].reason is not None and "line 1" in report.documents[0].reason


def test_evaluate_unknown_id_from_a_broken_line(tmp_path: Path) -> None:
    gold = write(tmp_path, "gold.jsonl", GOOD)
    pred = write(tmp_path, "pred.jsonl", GOOD + b'{"id": "ghost", NaN\n')
    report = evaluate(gold, pred)
    assert report.unknown_ids == ["ghost"] and report.parse_failures == []


def test_rows_get_the_same_checks() -> None:
    with pytest.raises(InputError, match="gold row 2: duplicate id 'a'"):
        gold_from_rows([{"id": "a"}, {"id": "a"}])
    with pytest.raises(InputError, match="gold row 1: nan"):
        gold_from_rows([{"id": "a", "x": float("nan")}])
    with pytest.raises(InputError, match=f"gold row 1: JSON nested deeper than {MAX_DEPTH}"):
        gold_from_rows([{"id": "a", "x": json.loads("[" * 100 + "]" * 100)}])
    with pytest.raises(InputError, match="gold row 1: no 'id' key"):
        gold_from_rows([{"x": 1}])
    with pytest.raises(InputError, match="no documents"):
        gold_from_rows([])
    rows: list[Any] = [{"id": "a", "x": float("inf")}, '{"id": "b", "x": [', {"x": 1}, 5]
    ps = predictions_from_rows([*rows, '{"id": "c"}'])
    assert set(ps.parse_failures) == {"a", "b"}
    assert ps.parse_failures["b"].startswith("row 2: invalid JSON")
    assert ps.unattributed[0].startswith("row 3: no 'id' key")
    assert ps.unattributed[1] == "row 4: not an object (got int)"
    assert list(ps.docs) == ["c"]
    with pytest.raises(InputError, match=r"prediction row 2: duplicate prediction id 'a'"):
        predictions_from_rows([{"id": "a"}, '{"id": "a"}'])


# --------------------------------------------------------------------------- config


def test_config_unknown_key_names_the_key(tmp_path: Path) -> None:
    cfg = write(tmp_path, "cfg.toml", 'id_key = "id"\nmatch_treshold = 0.5\n')
    with pytest.raises(ConfigError, match=r"cfg.toml: unknown config key 'match_treshold'"):
        evaluate([{"id": "a"}], [{"id": "a"}], cfg)
    cfg = write(tmp_path, "cfg2.toml", '[fields."total"]\ntype = "number"\nrel_tolerance = 0.1\n')
    with pytest.raises(ConfigError, match=r"unknown config key 'fields.total.rel_tolerance'"):
        evaluate([{"id": "a"}], [{"id": "a"}], cfg)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('[fields."total"]\ntype = "money"\n', "fields.total.type"),
        ('[fields."total"]\nrel_tol = "ten percent"\n', "fields.total.rel_tol"),
        ('[fields."total"]\ntol = -1\n', "fields.total.tol"),
        ('match_threshold = "high"\n', "match_threshold"),
        ("date_formats = 3\n", "date_formats"),
    ],
)
def test_config_bad_field_type_names_the_key(tmp_path: Path, text: str, key: str) -> None:
    cfg = write(tmp_path, "cfg.toml", text)
    with pytest.raises(ConfigError, match=f"config key '{key}'"):
        evaluate([{"id": "a"}], [{"id": "a"}], cfg)


def test_config_json_and_unparseable(tmp_path: Path) -> None:
    cfg = write(tmp_path, "cfg.json", json.dumps({"fields": {"t": {"kind": "number"}}}))
    with pytest.raises(ConfigError, match=r"unknown config key 'fields.t.kind'"):
        evaluate([{"id": "a"}], [{"id": "a"}], cfg)
    with pytest.raises(ConfigError, match="cannot parse config"):
        evaluate([{"id": "a"}], [{"id": "a"}], write(tmp_path, "bad.toml", "id_key = \n"))
    with pytest.raises(ConfigError, match="config file not found"):
        evaluate([{"id": "a"}], [{"id": "a"}], tmp_path / "none.toml")


# --------------------------------------------------------------------------- properties

_line_bytes = st.one_of(
    st.binary(max_size=40),
    st.text(max_size=40).map(str.encode),
    st.sampled_from(
        [
            b'{"id": "a"}',
            b'{"id": "a", "x": [1,',
            b"NaN",
            b"[[[[",
            b'{"id": 1e999}',
            b"\xef\xbb\xbf",
            b"\xff\xfe",
            b'{"id": "a\\ud800"}',
            b"\x00\x00",
            b'{"id": 1}',
            b'{"id": "1"}',
        ]
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_line_bytes, max_size=6))
def test_any_bytes_load_or_raise_input_error(lines: list[bytes]) -> None:
    """Whatever the bytes, loading gives a result or an InputError, never another exception."""
    data = b"\n".join(lines)
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "f.jsonl"
        p.write_bytes(data)
        for load in (load_gold, load_predictions):
            with contextlib.suppress(InputError):
                load(p)
