"""Reading gold and prediction JSONL files (and in-memory rows) into documents keyed by id.

Gold must be clean: any defect is an :class:`InputError` naming the file and line. A prediction
line that cannot be used is a *parse failure* of its document (scored, never fatal); its id is
recovered from the broken text where possible.

Parsing has a fast path and a checked path with one outcome. A line is first given to orjson
(several times faster than the json module with the hooks the checks need); it is taken only
when orjson reads it as an object and nothing could make the json module's reading differ, else
the line goes through the checked path (the json module with its hooks), which also words every
error. Where the two readers differ, orjson refuses (NaN, Infinity, numbers that overflow to
infinity, lone surrogates, a BOM) or the line is sent to the checked path before the result is
used (integers of 19 digits or more, which orjson reads beyond 64 bits as floats; nesting beyond
the depth limit, so that the checked path names it).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

import orjson

from ..core.runtime import gc_paused
from ..errors import InputError

KEPT_LINES = 1000
"""Unattributed prediction lines kept with their reason (the rest are only counted): a file
of garbage lines would otherwise be held, and reported, line by line."""
MAX_LINE_BYTES = 16 * 1024 * 1024
"""A line longer than this (16 MiB) is refused: no real extraction record is that large."""
MAX_ENDLESS_BYTES = 4 * MAX_LINE_BYTES
"""An over-long line is skipped (a prediction's becomes a parse failure); one that runs past
this (64 MiB) without a line end stops reading: an endless stream such as ``/dev/zero`` must
neither hang nor be read to the end."""
MAX_DEPTH = 64
"""Objects and lists nested deeper than this are refused (scoring walks them recursively)."""

_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_UTF8_BOM = b"\xef\xbb\xbf"
_RECOVER_CHARS = 65536  # how much of a broken prediction line is searched for its id


@dataclass
class GoldSet:
    """Gold documents by id, in file order."""

    docs: dict[str, dict[str, Any]]
    source: str = "<rows>"
    digest: str | None = None


@dataclass
class PredictionSet:
    """Predictions by id, plus the lines that could not be used."""

    docs: dict[str, dict[str, Any]]
    parse_failures: dict[str, str] = field(default_factory=dict)
    """id -> why the line could not be read (the id was recovered from the broken text)"""
    unattributed: list[str] = field(default_factory=list)
    """unusable lines whose id could not be recovered ("line 7: ..."): the first
    :data:`KEPT_LINES`"""
    unattributed_count: int = 0
    """how many such lines there were (:func:`note_unattributed`)"""
    source: str = "<rows>"
    digest: str | None = None


class _Unattributed(Protocol):
    unattributed: list[str]
    unattributed_count: int


def note_unattributed(into: _Unattributed, line: str) -> None:
    """Count an unattributed line `into` a prediction set or a stream's summary, and keep it
    while fewer than :data:`KEPT_LINES` are kept."""
    into.unattributed_count = max(into.unattributed_count, len(into.unattributed)) + 1
    if len(into.unattributed) < KEPT_LINES:
        into.unattributed.append(line)


class _LineError(Exception):
    """A line that is not a usable JSON object (message says why)."""


@dataclass(frozen=True, slots=True)
class _Oversized:
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


_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_DIGITS = b"0" * 19  # 18 digits always fit in 64 bits; from 19 on, orjson may read a float


def _fast_object(raw: bytes) -> dict[str, Any] | None:
    """`raw` as a JSON object of sane depth when orjson reads it as the checked path would;
    None for anything else (the checked path then reads it, and words its defects)."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if (
        type(value) is not dict
        or b"\x00" in raw
        or _LONG_DIGITS in raw.translate(_DIGITS_AS_ZERO)
        or (raw.count(b"{") + raw.count(b"[") > MAX_DEPTH and not _depth_ok(value))
    ):
        return None
    return value


def gold_object(raw: bytes | _Oversized) -> dict[str, Any]:
    """One gold line as a JSON object (the fast path when it reads the line as the checked
    path would), or _LineError saying what is wrong with it."""
    doc = _fast_object(raw) if type(raw) is bytes else None
    return doc if doc is not None else parse_object(_decode(raw))


def _check_object(value: Any, text: str) -> dict[str, Any]:
    """The parsed value if it is a JSON object of sane depth, else _LineError."""
    if not isinstance(value, dict):
        raise _LineError(f"not a JSON object (got {_json_kind(value)})")
    if text.count("{") + text.count("[") > MAX_DEPTH and not _depth_ok(value):
        raise _LineError(f"JSON nested deeper than {MAX_DEPTH} levels")
    return value


def parse_object(text: str) -> dict[str, Any]:
    """One JSON object from text, or _LineError saying what is wrong with it."""
    return _check_object(_parse_json(text), text)


def _json_kind(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean"}.get(
        type(value), "number" if isinstance(value, int | float) else "null"
    )


def _iter_lines(path: Path, hasher: Any) -> Iterator[tuple[int, bytes | _Oversized]]:
    """(line number, raw line) for non-blank lines; an _Oversized for a line over the limit."""
    for lineno, _, raw in iter_raw_lines(path, hasher):
        yield lineno, raw


def iter_raw_lines(
    path: Path, hasher: Any, offset: int = 0, lineno: int = 0
) -> Iterator[tuple[int, int, bytes | _Oversized]]:
    """(line number, byte offset of the line, raw line) for non-blank lines, every byte read
    fed to `hasher`; an _Oversized for a line over the limit. The UTF-8 BOM of line 1 is
    dropped (its offset is then 3); a UTF-16 file is refused. `offset` and `lineno`: start
    after line `lineno`, which ends at byte `offset` (see :class:`RawLines`)."""
    return iter(RawLines(path, hasher, offset, lineno))


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

    __slots__ = ("end", "hasher", "lineno", "path")

    def __init__(self, path: Path, hasher: Any, offset: int = 0, lineno: int = 0) -> None:
        self.path, self.hasher, self.end, self.lineno = path, hasher, offset, lineno

    def _open(self) -> IO[bytes]:
        f = open_jsonl(self.path)
        if self.end:
            f.seek(self.end)
        return f

    def __iter__(self) -> Generator[tuple[int, int, bytes | _Oversized], None, None]:
        path, hasher = self.path, self.hasher
        with self._open() as f:
            lineno, offset = self.lineno, self.end
            while True:
                raw = f.readline(MAX_LINE_BYTES + 1)
                if not raw:
                    self.end, self.lineno = offset, lineno
                    return
                hasher.update(raw)
                lineno += 1
                start, offset = offset, offset + len(raw)
                if lineno == 1:
                    if raw.startswith(_UTF16_BOMS):
                        raise InputError(f"{path}: file is UTF-16 encoded; save it as UTF-8")
                    if raw.startswith(_UTF8_BOM):
                        raw, start = raw[len(_UTF8_BOM) :], len(_UTF8_BOM)
                if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                    offset, size = _skip_rest(f, hasher, path, lineno, offset, len(raw))
                    self.end, self.lineno = offset, lineno
                    yield lineno, start, _Oversized(raw[:_RECOVER_CHARS], size)
                    continue
                if raw.strip():
                    self.end, self.lineno = offset, lineno
                    yield lineno, start, raw


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


def _decode(raw: bytes | _Oversized) -> str:
    if isinstance(raw, _Oversized):
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
    if id_key not in doc or doc[id_key] is None:
        raise _LineError(f"no '{id_key}' key (set --id-key or id_key in the config)")
    value = doc[id_key]
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise _LineError(f"'{id_key}' must be a string or an integer, not {_json_kind(value)}")
    return str(value)


def _sha256() -> Any:
    return hashlib.sha256()


@gc_paused()
def load_gold(path: str | Path, id_key: str = "id") -> GoldSet:
    """Read the gold JSONL file; every defect is an InputError naming the line."""
    p = Path(path)
    hasher = _sha256()
    docs: dict[str, dict[str, Any]] = {}
    first_line: dict[str, int] = {}
    for lineno, raw in _iter_lines(p, hasher):
        try:
            doc = gold_object(raw)
            doc_id = _doc_id(doc, id_key)
        except _LineError as exc:
            raise InputError(f"{p}:{lineno}: {exc}") from None
        if doc_id in docs:
            raise InputError(
                f"{p}:{lineno}: duplicate id '{doc_id}' (first on line {first_line[doc_id]})"
            )
        docs[doc_id] = doc
        first_line[doc_id] = lineno
    if not docs:
        raise InputError(f"{p}: no documents (the file is empty)")
    return GoldSet(docs, str(p), hasher.hexdigest())


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


@gc_paused()
def load_predictions(path: str | Path, id_key: str = "id") -> PredictionSet:
    """Read the predictions JSONL file; unusable lines become parse failures."""
    p = Path(path)
    hasher = _sha256()
    out = PredictionSet({}, source=str(p))
    seen_line: dict[str, int] = {}
    n_lines = 0
    for lineno, raw in _iter_lines(p, hasher):
        n_lines += 1
        doc_id, doc, problem = _read_prediction(raw, id_key)
        _add_prediction(out, doc_id, doc, f"line {lineno}: {problem}", seen_line, lineno, p)
    if n_lines == 0:
        raise InputError(f"{p}: no predictions (the file is empty)")
    out.digest = hasher.hexdigest()
    return out


def _read_prediction(
    raw: bytes | str | _Oversized, id_key: str
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
        head = raw.head if isinstance(raw, _Oversized) else raw[:_RECOVER_CHARS]
        broken = head.decode("utf-8", errors="replace") if isinstance(head, bytes) else head
        return _recover_id(broken, id_key), None, str(exc)
    doc_id: str | None = None
    try:
        if isinstance(value, dict):
            doc_id = _doc_id(value, id_key)
        else:  # JSON but not an object: a parse failure of the id its text names, if any
            doc_id = _recover_id(text[:_RECOVER_CHARS], id_key)
        doc = _check_object(value, text)
        return doc_id, doc, None
    except _LineError as exc:
        return doc_id, None, str(exc)


def _add_prediction(
    out: PredictionSet,
    doc_id: str | None,
    doc: dict[str, Any] | None,
    problem: str,
    seen_line: dict[str, int],
    lineno: int,
    path: Path | None,
) -> None:
    """File one prediction: a document, a parse failure of its id, or an unattributed line."""
    if doc_id is None:
        note_unattributed(out, problem)
        return
    if doc_id in out.docs or doc_id in out.parse_failures:
        raise _duplicate(path, lineno, doc_id, seen_line)
    if doc is None:
        out.parse_failures[doc_id] = problem
    else:
        out.docs[doc_id] = doc
    seen_line[doc_id] = lineno


def _duplicate(path: Path | None, lineno: int, doc_id: str, seen: dict[str, int]) -> InputError:
    where = f"{path}:{lineno}" if path else f"prediction row {lineno}"
    first = "line" if path else "row"
    return InputError(
        f"{where}: duplicate prediction id '{doc_id}' (first on {first} {seen[doc_id]})"
    )


def gold_from_rows(rows: Iterable[Mapping[str, Any]], id_key: str = "id") -> GoldSet:
    """Gold documents from in-memory rows (same checks as the file, rows counted from 1)."""
    docs: dict[str, dict[str, Any]] = {}
    first: dict[str, int] = {}
    for n, row in enumerate(rows, 1):
        if not isinstance(row, Mapping):
            raise InputError(f"gold row {n}: not an object (got {type(row).__name__})")
        try:
            doc_id = _doc_id(row, id_key)
        except _LineError as exc:
            raise InputError(f"gold row {n}: {exc}") from None
        problem = _value_problem(dict(row))
        if problem is not None:
            raise InputError(f"gold row {n}: {problem}")
        if doc_id in docs:
            raise InputError(
                f"gold row {n}: duplicate id '{doc_id}' (first on row {first[doc_id]})"
            )
        docs[doc_id] = dict(row)
        first[doc_id] = n
    if not docs:
        raise InputError("gold rows: no documents")
    return GoldSet(docs)


def predictions_from_rows(
    rows: Iterable[Mapping[str, Any] | str], id_key: str = "id"
) -> PredictionSet:
    """Predictions from in-memory rows: objects, or raw JSON text (parsed like a file line)."""
    out = PredictionSet({})
    seen: dict[str, int] = {}
    for n, row in enumerate(rows, 1):
        doc_id: str | None = None
        doc: dict[str, Any] | None = None
        problem: str | None
        if isinstance(row, str):
            doc_id, doc, problem = _read_prediction(row, id_key)
        elif not isinstance(row, Mapping):
            problem = f"not an object (got {type(row).__name__})"
            if isinstance(row, list | tuple):  # [{"id": "a", ...}]: a failure of "a"
                doc_id = _recover_id(json.dumps(row, default=str)[:_RECOVER_CHARS], id_key)
        else:
            try:
                doc_id = _doc_id(row, id_key)
                doc = dict(row)
                problem = _value_problem(doc)
            except _LineError as exc:
                problem = str(exc)
            if problem is not None:
                doc = None
        _add_prediction(out, doc_id, doc, f"row {n}: {problem}", seen, n, None)
    return out
