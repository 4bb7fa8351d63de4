"""The loader's fast path (orjson) reads a line exactly as a plain json-module reading of it,
or declines it (the checked path then reads it): never another value, never a line the plain
reading refuses."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extract_mlflow.io.lines import MAX_DEPTH, _fast_object
from extract_mlflow.io.loading import load_gold, load_predictions

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import synth


class _Refused(Exception):
    pass


def _refuse(name: str) -> Any:
    raise _Refused(name)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(text)
    return value


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def reference(raw: bytes) -> Any:
    """The plain reading the loader promises: strict UTF-8, no NUL, the json module, no
    NaN/Infinity, no number that overflows to infinity, an object, at most MAX_DEPTH deep.
    None when the line is refused."""
    try:
        if b"\x00" in raw:
            return None
        text = raw.decode("utf-8")
        value = json.loads(text, parse_constant=_refuse, parse_float=_finite)
    except (ValueError, RecursionError, _Refused):
        return None
    if not isinstance(value, dict) or _depth(value) > MAX_DEPTH:
        return None
    return value


def typed(value: Any) -> Any:
    """A comparable image that keeps 1, 1.0 and True apart, and 0.0 and -0.0, and key order."""
    if isinstance(value, dict):
        return ("d", tuple((k, typed(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("l", tuple(typed(v) for v in value))
    if isinstance(value, float):
        return ("f", repr(value))
    return (type(value).__name__, value)


def check(raw: bytes) -> Any:
    fast = _fast_object(raw)
    ref = reference(raw)
    if fast is not None:
        assert ref is not None, raw[:200]
        assert typed(fast) == typed(ref), raw[:200]
    return fast


_TRICKY = [
    b"NaN",
    b"-Infinity",
    b"Infinity",
    b"1e400",
    b"-1e400",
    b"1.7976931348623159e308",
    b"1.7976931348623157e308",
    b"12345678901234567890123",
    b"-9223372036854775809",
    b"9223372036854775807",
    b"18446744073709551616",
    b"-0",
    b"-0.0",
    b"5e-324",
    b'"\\ud800"',
    b'"\\udc00\\ud800"',
    b'"\\u0000"',
    b"\xef\xbb\xbf",
    b"\xff",
    b"\xc3",
    b"\x00",
    b"\x0c",
    b"\t",
    b"[" * 70,
    b"]" * 70,
    b"{",
    b"}",
    b",",
    b'"a":',
    b'"a":1,"a":2',
]

_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=8)
    | st.sampled_from(["1e400", "NaN", "x\u2028y", "\U0001f600", " 12 "])
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=25,
)


@st.composite
def _number_literal(draw: st.DrawFn) -> bytes:
    sign = draw(st.sampled_from(["", "-"]))
    whole = draw(st.sampled_from(["0", ""])) + draw(
        st.from_regex(r"[1-9][0-9]{0,24}", fullmatch=True)
    )
    frac = draw(st.sampled_from(["", "." + draw(st.from_regex(r"[0-9]{1,20}", fullmatch=True))]))
    exp = draw(
        st.sampled_from(["", f"e{draw(st.integers(-400, 400))}", f"E+{draw(st.integers(0, 400))}"])
    )
    return f"{sign}{whole}{frac}{exp}".encode()


@st.composite
def _lines(draw: st.DrawFn) -> bytes:
    value = draw(st.dictionaries(st.text(max_size=6), _values, max_size=6) | _values)
    raw = json.dumps(value, ensure_ascii=draw(st.booleans())).encode("utf-8")
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(raw)))
        piece = draw(st.sampled_from(_TRICKY) | _number_literal())
        raw = raw[:at] + piece + raw[at:]
    if draw(st.booleans()):
        raw += draw(st.sampled_from([b"\n", b"\r\n", b" \n"]))
    return raw


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(_lines())
def test_fast_path_reads_as_the_reference_or_declines(raw: bytes) -> None:
    check(raw)


@settings(max_examples=300, deadline=None)
@given(_number_literal())
def test_numbers_read_exactly_or_decline(literal: bytes) -> None:
    check(b'{"n": ' + literal + b"}")
    check(b'{"n": [' + literal + b", -" + literal + b"]}")


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a": NaN}',
        b'{"a": Infinity}',
        b'{"a": -Infinity}',
        b'{"a": 1e400}',
        b'{"a": -1e400}',
        b'{"a": 123456789012345678901234567890}',
        b'{"a": -9223372036854775809}',
        b'{"a": 18446744073709551616}',
        b'{"a": "\\ud800"}',
        b'{"a": "\xff"}',
        b'\xef\xbb\xbf{"a": 1}',
        '{"a": 1}'.encode("utf-16"),
        b'{"a": "x\x00"}',
        b'{"a":' * 10_000 + b"1" + b"}" * 10_000,
        b"[" * 10_000 + b"]" * 10_000,
        b'{"a":' * (MAX_DEPTH + 1) + b"1" + b"}" * (MAX_DEPTH + 1),
        b"[1, 2]",
        b'"text"',
        b"null",
    ],
)
def test_refused_or_unusual_lines_are_left_to_the_checked_path(raw: bytes) -> None:
    assert check(raw) is None


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a": 1, "a": 2, "b": [1.0, -0.0, true, null, "\\u00e9"]}',
        b'{"a":' * MAX_DEPTH + b"1" + b"}" * MAX_DEPTH,
        b'{"a": 922337203685477580, "b": 0.30000000000000004}\r\n',
    ],
)
def test_ordinary_lines_take_the_fast_path(raw: bytes) -> None:
    assert check(raw) is not None


def test_synthetic_documents_take_the_fast_path_and_load_as_before(tmp_path: Path) -> None:
    gold_rows, pred_rows, _ = synth.make_dataset(50, 3)
    gold, pred = synth.write_dataset(gold_rows, pred_rows, tmp_path)
    for line in gold.read_bytes().splitlines(keepends=True):
        assert check(line) is not None
    gs = load_gold(gold)
    ps = load_predictions(pred)
    assert [typed(d) for d in gs.docs.values()] == [typed(r) for r in gold_rows]
    assert [typed(d) for d in ps.docs.values()] == [typed(r) for r in pred_rows]
