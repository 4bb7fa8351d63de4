"""The line codec: one JSONL line of gold or of predictions read into a document, with the
checks and the words of every error, for every reader of the package (loading a file, the
joined stream, the workers' byte ranges, Spark's tasks, the sources and approvals files). Also
the reading of a file's raw lines (:class:`RawLines`: a byte order mark, over-long lines, line
numbers and offsets) and of one line at its offset (:func:`line_at`).

Parsing has a fast path and a checked path with one outcome. A line is first given to orjson
(several times faster than the json module with the hooks the checks need); it is taken only
when orjson reads it as an object and nothing could make the json module's reading differ, else
the line goes through the checked path (the json module with its hooks), which also words every
error. Where the two readers differ, orjson refuses (NaN, Infinity, numbers that overflow to
infinity, lone surrogates, a BOM) or the line is sent to the checked path before the result is
used (integers of 19 digits or more, which orjson reads beyond 64 bits as floats; nesting beyond
the depth limit, so that the checked path names it).

:func:`read_gold` and :func:`read_prediction` say what a line is: (id, document, None) for a
usable line, else what is wrong with it (for a gold line, a defect of the file; for a prediction
line, a parse failure of its id when the id can be recovered from the text, else an
unattributed line). :func:`read_object` reads any other JSONL line (a reviewer's approval) and
:func:`read_source` a line of a sources file (an id and a text).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Generator, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from ..errors import InputError

MAX_LINE_BYTES = 16 * 1024 * 1024
"""A line longer than this (16 MiB) is refused: no real extraction record is that large."""
MAX_ENDLESS_BYTES = 4 * MAX_LINE_BYTES
"""An over-long line is skipped (a prediction's becomes a parse failure); one that runs past
this (64 MiB) without a line end stops reading: an endless stream such as ``/dev/zero`` must
neither hang nor be read to the end."""
MAX_DEPTH = 64
"""Objects and lists nested deeper than this are refused (scoring walks them recursively)."""

UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
UTF8_BOM = b"\xef\xbb\xbf"
RECOVER_CHARS = 65536  # how much of a broken prediction line is searched for its id


class _NoHash:
    """A hasher that keeps nothing (for a file whose bytes no digest covers)."""

    __slots__ = ()

    def update(self, data: bytes) -> None:
        pass


NO_HASH = _NoHash()


class _LineError(Exception):
    """A line that is not a usable JSON object (message says why)."""


@dataclass(frozen=True, slots=True)
class Oversized:
    """A line over MAX_LINE_BYTES: its first bytes (to recover an id from) and its size."""

    head: bytes
    size: int


def _reject_constant(name: str) -> Any:
    raise _LineError(f"{name} is not a valid JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if value - value != 0.0:  # infinity (a JSON number too large for a float)
        raise _LineError(f"number {text[:40]} is too large (it reads as Infinity)")
    return value


def _value_problem(value: Any) -> str | None:
    """Why an already-built value cannot be scored (too deep, NaN/Infinity), or None."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            return f"{v} is not a valid JSON value"
        if isinstance(v, dict | list):
            if d > MAX_DEPTH:
                return f"JSON nested deeper than {MAX_DEPTH} levels"
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return None


def _depth_ok(value: Any) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if d > MAX_DEPTH:
            return False
        if isinstance(v, dict):
            stack.extend((x, d + 1) for x in v.values() if isinstance(x, dict | list))
        elif isinstance(v, list):
            stack.extend((x, d + 1) for x in v if isinstance(x, dict | list))
    return True


def _parse_json(text: str) -> Any:
    """Any JSON value from text, or _LineError (bad syntax, NaN/Infinity, absurd nesting)."""
    text = text.rstrip("\r\n")
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        where = "at the end of the line" if exc.pos >= len(text) else f"at character {exc.pos + 1}"
        raise _LineError(f"invalid JSON: {exc.msg} {where}") from None
    except RecursionError:
        raise _LineError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # e.g. an integer literal over Python's 4300-digit limit
        raise _LineError(f"invalid JSON value: {str(exc).split(';')[0]}") from None


_DIGITS_AS_ZERO = bytes.maketrans(b"123456789[", b"000000000{")
"""One copy of a line for both checks of the fast path: every digit a 0 (for runs of digits)
and every opening bracket a brace (for the nesting bound)."""
_LONG_DIGITS = b"0" * 19  # 18 digits always fit in 64 bits; from 19 on, orjson may read a float


def _fast_object(raw: bytes) -> dict[str, Any] | None:
    """`raw` as a JSON object of sane depth when orjson reads it as the checked path would;
    None for anything else (the checked path then reads it, and words its defects). orjson
    refuses a NUL byte anywhere in a line (a control character in a string, else no JSON
    value), so a line it reads holds none."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if type(value) is not dict:
        return None
    shape = raw.translate(_DIGITS_AS_ZERO)
    if _LONG_DIGITS in shape or (shape.count(b"{") > MAX_DEPTH and not _depth_ok(value)):
        return None
    return value


def _gold_object(raw: bytes | Oversized) -> dict[str, Any]:
    """One gold line as a JSON object (the fast path when it reads the line as the checked
    path would), or _LineError saying what is wrong with it."""
    doc = _fast_object(raw) if type(raw) is bytes else None
    return doc if doc is not None else _parse_object(_decode(raw))


def _check_object(value: Any, text: str) -> dict[str, Any]:
    """The parsed value if it is a JSON object of sane depth, else _LineError."""
    if not isinstance(value, dict):
        raise _LineError(f"not a JSON object (got {_json_kind(value)})")
    if text.count("{") + text.count("[") > MAX_DEPTH and not _depth_ok(value):
        raise _LineError(f"JSON nested deeper than {MAX_DEPTH} levels")
    return value


def _parse_object(text: str) -> dict[str, Any]:
    """One JSON object from text, or _LineError saying what is wrong with it."""
    return _check_object(_parse_json(text), text)


def _json_kind(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean"}.get(
        type(value), "number" if isinstance(value, int | float) else "null"
    )


def iter_raw_lines(
    path: Path, hasher: Any = NO_HASH, offset: int = 0, lineno: int = 0, stop: int | None = None
) -> Iterator[tuple[int, int, bytes | Oversized]]:
    """(line number, byte offset of the line, raw line) for non-blank lines, every byte read
    fed to `hasher`; an Oversized for a line over the limit. The UTF-8 BOM of line 1 is
    dropped (its offset is then 3); a UTF-16 file is refused. `offset` and `lineno`: start
    after line `lineno`, which ends at byte `offset`; `stop`: the lines that start before
    that byte only (a range of whole lines: :mod:`~extract_mlflow.io.ranges`)."""
    return iter(RawLines(path, hasher, offset, lineno, stop))


def open_jsonl(path: Path) -> IO[bytes]:
    """`path` opened for reading bytes; an InputError naming it when it cannot be."""
    try:
        return path.open("rb")
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, expected a JSONL file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None


class RawLines:
    """The non-blank lines of a file, as :func:`iter_raw_lines` gives them; while it is read,
    `end` and `lineno` say where the last line given ends (byte offset, line number): where
    another reader resumes, with `hasher` fed every byte before `end`."""

    __slots__ = ("end", "hasher", "lineno", "path", "stop")

    def __init__(
        self,
        path: Path,
        hasher: Any = NO_HASH,
        offset: int = 0,
        lineno: int = 0,
        stop: int | None = None,
    ) -> None:
        self.path, self.hasher, self.end, self.lineno = path, hasher, offset, lineno
        self.stop = stop

    def _open(self) -> IO[bytes]:
        f = open_jsonl(self.path)
        if self.end:
            f.seek(self.end)
        return f

    def __iter__(self) -> Generator[tuple[int, int, bytes | Oversized], None, None]:
        path, hasher, stop = self.path, self.hasher, self.stop
        with self._open() as f:
            lineno, offset = self.lineno, self.end
            while True:
                raw = f.readline(MAX_LINE_BYTES + 1) if stop is None or offset < stop else b""
                if not raw:
                    self.end, self.lineno = offset, lineno
                    return
                hasher.update(raw)
                lineno += 1
                start, offset = offset, offset + len(raw)
                if lineno == 1:
                    if raw.startswith(UTF16_BOMS):
                        raise InputError(f"{path}: file is UTF-16 encoded; save it as UTF-8")
                    if raw.startswith(UTF8_BOM):
                        raw, start = raw[len(UTF8_BOM) :], len(UTF8_BOM)
                if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                    offset, size = _skip_rest(f, hasher, path, lineno, offset, len(raw))
                    self.end, self.lineno = offset, lineno
                    yield lineno, start, Oversized(raw[:RECOVER_CHARS], size)
                    continue
                if raw.strip():
                    self.end, self.lineno = offset, lineno
                    yield lineno, start, raw


def line_at(f: IO[bytes], offset: int) -> bytes | Oversized:
    """The line of an open file that starts at byte `offset` (as :class:`RawLines` gave its
    offset, or 0 for the first line, whose UTF-8 BOM is then dropped): its bytes, or an
    :class:`Oversized` for a line over the limit."""
    f.seek(offset)
    raw = f.readline(MAX_LINE_BYTES + 1)
    if offset == 0:
        raw = raw.removeprefix(UTF8_BOM)
    if len(raw) <= MAX_LINE_BYTES or raw.endswith(b"\n"):
        return raw
    size = len(raw)
    while chunk := f.readline(1 << 20):
        size += len(chunk) - chunk.endswith(b"\n")
        if chunk.endswith(b"\n"):
            break
    return Oversized(raw[:RECOVER_CHARS], size)


def _skip_rest(
    f: IO[bytes], hasher: Any, path: Path, lineno: int, offset: int, size: int
) -> tuple[int, int]:
    """Skip the rest of an over-long line, still hashing it: (offset after it, its size)."""
    while True:
        rest = f.readline(1 << 20)
        hasher.update(rest)
        offset += len(rest)
        size += len(rest) - rest.endswith(b"\n")  # the line end not counted
        if not rest or rest.endswith(b"\n"):
            return offset, size
        if size > MAX_ENDLESS_BYTES:
            raise InputError(
                f"{path}:{lineno}: line runs past {MAX_ENDLESS_BYTES >> 20} MiB "
                f"without a line end (over the {MAX_LINE_BYTES >> 20} MiB limit; "
                "an endless stream?)"
            )


def prediction_at(f: IO[bytes], offset: int, id_key: str) -> Read:
    """:func:`read_prediction` of the line of `f` that starts at byte `offset` (read back by
    an index of the prediction file), an over-long line as the reading in order gives it."""
    return read_prediction(line_at(f, offset), id_key)


def _decode(raw: bytes | Oversized) -> str:
    if isinstance(raw, Oversized):
        raise _LineError(
            f"line is {raw.size:,} bytes, over the {MAX_LINE_BYTES // (1024 * 1024)} MiB limit"
        )
    if b"\x00" in raw:  # never valid in JSON text; typical of UTF-16 without a BOM
        raise _LineError("contains NUL bytes (a UTF-16 or binary file?); save it as UTF-8")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _LineError(f"not valid UTF-8 (byte {exc.start + 1} of the line)") from None


def _doc_id(doc: Mapping[str, Any], id_key: str) -> str:
    value = doc.get(id_key)
    if type(value) is str:  # the usual id: nothing to check
        return value
    if id_key not in doc or doc[id_key] is None:
        raise _LineError(f"no '{id_key}' key (set --id-key or id_key in the config)")
    value = doc[id_key]
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise _LineError(f"'{id_key}' must be a string or an integer, not {_json_kind(value)}")
    return str(value)


def _recover_id(text: str, id_key: str) -> str | None:
    pattern = rf'"{re.escape(id_key)}"\s*:\s*(?:"((?:[^"\\]|\\.)*)"|(-?\d+)\b)'
    m = re.search(pattern, text)
    if m is None:
        return None
    if m.group(1) is not None:
        try:
            return str(json.loads(f'"{m.group(1)}"'))
        except json.JSONDecodeError:
            return m.group(1)
    return m.group(2)


def read_prediction(
    raw: bytes | str | Oversized, id_key: str
) -> tuple[str | None, dict[str, Any] | None, str | None]:
    """(id, document, None) for a usable line; (id or None, None, why) for an unusable one.

    The id comes from the parsed object when the line is a JSON object (its top-level key
    only); it is searched in the text when the line does not parse or is JSON of another kind
    (``[{"id": "a", ...}]`` is a parse failure of ``a``; ``[1, 2]``, ``"x"`` and ``null`` are
    unattributed).
    """
    fast = _fast_object(raw) if type(raw) is bytes else None
    if fast is not None:
        try:
            return _doc_id(fast, id_key), fast, None
        except _LineError as exc:
            return None, None, str(exc)
    try:
        text = raw if isinstance(raw, str) else _decode(raw)
        value = _parse_json(text)
    except _LineError as exc:
        head = raw.head if isinstance(raw, Oversized) else raw[:RECOVER_CHARS]
        broken = head.decode("utf-8", errors="replace") if isinstance(head, bytes) else head
        return _recover_id(broken, id_key), None, str(exc)
    doc_id: str | None = None
    try:
        if isinstance(value, dict):
            doc_id = _doc_id(value, id_key)
        else:  # JSON but not an object: a parse failure of the id its text names, if any
            doc_id = _recover_id(text[:RECOVER_CHARS], id_key)
        doc = _check_object(value, text)
        return doc_id, doc, None
    except _LineError as exc:
        return doc_id, None, str(exc)


Document = dict[str, Any]
Read = tuple[str | None, Document | None, str | None]
"""(id, document, None) for a usable line; (id or None, None, why) for one that is not"""


def read_gold(raw: bytes | Oversized, id_key: str) -> Read:
    """A gold line's (id, document, None), or (None, None, what is wrong with it)."""
    try:
        doc = _gold_object(raw)
        return _doc_id(doc, id_key), doc, None
    except _LineError as exc:
        return None, None, str(exc)


def read_object(
    raw: bytes | Oversized, expected: str | None = None
) -> tuple[dict[str, Any] | None, str | None]:
    """Any JSONL line as (its object, None), or (None, what is wrong with it): the checks and
    words of a gold line, without an id; JSON of another kind is said to be not an object
    (and, given `expected`, what was: ``an object with id and path``)."""
    try:
        return _gold_object(raw), None
    except _LineError as exc:
        why = str(exc)
        if expected is not None and why.startswith("not a JSON object"):
            why += f"; expected {expected}"
        return None, why


def read_source(
    raw: bytes | Oversized, id_key: str, text_key: str
) -> tuple[str, str] | tuple[None, str]:
    """A sources line's (id, text), or (None, what is wrong with it): a JSON object whose
    `id_key` is a string or an integer and whose `text_key` is a string."""
    obj, why = read_object(raw, f'{{"{id_key}": ..., "{text_key}": ...}}')
    if obj is None:
        return None, str(why)
    try:
        doc_id = _doc_id(obj, id_key)
    except _LineError as exc:
        return None, str(exc)
    text = obj.get(text_key)
    if not isinstance(text, str):
        return None, f"'{text_key}' must be a string, not {_json_kind(text)}"
    return doc_id, text


def text_line(text: str | None, *, first: bool) -> bytes | Oversized | None:
    """A line given as text (Spark's reading of a file) as the bytes :class:`RawLines` gives
    (None for a blank line): the UTF-8 BOM of the `first` line dropped, a line end added, an
    over-long line as an :class:`Oversized`."""
    if text is None:
        return None
    if first and text.startswith("\ufeff"):
        text = text[1:]
    raw = text.encode("utf-8", errors="surrogatepass")
    if len(raw) > MAX_LINE_BYTES:
        return Oversized(raw[:RECOVER_CHARS], len(raw))
    return raw + b"\n" if raw.strip() else None


def read_gold_row(row: Any, id_key: str) -> Read:
    """:func:`read_gold` of an in-memory row (a mapping)."""
    if not isinstance(row, Mapping):
        return None, None, f"not an object (got {type(row).__name__})"
    try:
        doc_id = _doc_id(row, id_key)
    except _LineError as exc:
        return None, None, str(exc)
    doc = dict(row)
    problem = _value_problem(doc)
    return (None, None, problem) if problem is not None else (doc_id, doc, None)


def read_prediction_row(row: Any, id_key: str) -> Read:
    """:func:`read_prediction` of an in-memory row: a mapping, or raw JSON text (read as a
    line); ``[{"id": "a", ...}]`` is a parse failure of ``a``."""
    if isinstance(row, str):
        return read_prediction(row, id_key)
    if not isinstance(row, Mapping):
        kind = f"not an object (got {type(row).__name__})"
        if not isinstance(row, list | tuple):
            return None, None, kind
        return _recover_id(json.dumps(row, default=str)[:RECOVER_CHARS], id_key), None, kind
    try:
        doc_id = _doc_id(row, id_key)
    except _LineError as exc:
        return None, None, str(exc)
    doc = dict(row)
    problem = _value_problem(doc)
    return (doc_id, None, problem) if problem is not None else (doc_id, doc, None)
