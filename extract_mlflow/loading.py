"""Reading gold and prediction JSONL files (and in-memory rows) into documents keyed by id.

Gold must be clean: any defect is an :class:`InputError` naming the file and line. A prediction
line that cannot be used is a *parse failure* of its document (scored, never fatal); its id is
recovered from the broken text where possible.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import InputError

MAX_LINE_BYTES = 16 * 1024 * 1024
"""A line longer than this (16 MiB) is refused: no real extraction record is that large."""
MAX_DEPTH = 64
"""Objects and lists nested deeper than this are refused (scoring walks them recursively)."""

_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_UTF8_BOM = b"\xef\xbb\xbf"


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
    """unusable lines whose id could not be recovered ("line 7: ...")"""
    source: str = "<rows>"
    digest: str | None = None


class _LineError(Exception):
    """A line that is not a usable JSON object (message says why)."""


def _reject_constant(name: str) -> Any:
    raise _LineError(f"{name} is not a valid JSON value")


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


def parse_object(text: str) -> dict[str, Any]:
    """One JSON object from text, or _LineError saying what is wrong with it."""
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise _LineError(f"invalid JSON: {exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise _LineError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    if not isinstance(value, dict):
        raise _LineError(f"not a JSON object (got {_json_kind(value)})")
    if text.count("{") + text.count("[") > MAX_DEPTH and not _depth_ok(value):
        raise _LineError(f"JSON nested deeper than {MAX_DEPTH} levels")
    return value


def _json_kind(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean"}.get(
        type(value), "number" if isinstance(value, int | float) else "null"
    )


def _iter_lines(path: Path, hasher: Any) -> Iterator[tuple[int, bytes | None]]:
    """(line number, raw line) for non-blank lines; raw None for a line over the size limit."""
    try:
        f = path.open("rb")
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, expected a JSONL file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    with f:
        lineno = 0
        while True:
            raw = f.readline(MAX_LINE_BYTES + 1)
            if not raw:
                return
            hasher.update(raw)
            lineno += 1
            if lineno == 1:
                if raw.startswith(_UTF16_BOMS):
                    raise InputError(f"{path}: file is UTF-16 encoded; save it as UTF-8")
                if raw.startswith(_UTF8_BOM):
                    raw = raw[len(_UTF8_BOM) :]
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while True:  # skip the rest of the over-long line, still hashing it
                    rest = f.readline(1 << 20)
                    hasher.update(rest)
                    if not rest or rest.endswith(b"\n"):
                        break
                yield lineno, None
                continue
            if raw.strip():
                yield lineno, raw


def _decode(raw: bytes | None) -> str:
    if raw is None:
        raise _LineError(f"line is longer than the {MAX_LINE_BYTES // (1024 * 1024)} MiB limit")
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


def load_gold(path: str | Path, id_key: str = "id") -> GoldSet:
    """Read the gold JSONL file; every defect is an InputError naming the line."""
    p = Path(path)
    hasher = _sha256()
    docs: dict[str, dict[str, Any]] = {}
    first_line: dict[str, int] = {}
    for lineno, raw in _iter_lines(p, hasher):
        try:
            doc = parse_object(_decode(raw))
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


def load_predictions(path: str | Path, id_key: str = "id") -> PredictionSet:
    """Read the predictions JSONL file; unusable lines become parse failures."""
    p = Path(path)
    hasher = _sha256()
    out = PredictionSet({}, source=str(p))
    seen_line: dict[str, int] = {}
    n_lines = 0
    for lineno, raw in _iter_lines(p, hasher):
        n_lines += 1
        text = raw.decode("utf-8", errors="replace") if raw is not None else ""
        _add_prediction(out, text, raw, id_key, f"line {lineno}", seen_line, lineno, p)
    if n_lines == 0:
        raise InputError(f"{p}: no predictions (the file is empty)")
    out.digest = hasher.hexdigest()
    return out


def _add_prediction(
    out: PredictionSet,
    text: str,
    raw: bytes | None,
    id_key: str,
    where: str,
    seen_line: dict[str, int],
    lineno: int,
    path: Path | None,
) -> None:
    try:
        doc = parse_object(_decode(raw))
        doc_id = _doc_id(doc, id_key)
    except _LineError as exc:
        rid = _recover_id(text[:65536], id_key)
        if rid is None:
            out.unattributed.append(f"{where}: {exc}")
        elif rid not in out.docs and rid not in out.parse_failures:
            out.parse_failures[rid] = f"{where}: {exc}"
            seen_line[rid] = lineno
        else:
            raise _duplicate(path, lineno, rid, seen_line) from None
        return
    if doc_id in out.docs or doc_id in out.parse_failures:
        raise _duplicate(path, lineno, doc_id, seen_line)
    out.docs[doc_id] = doc
    seen_line[doc_id] = lineno


def _duplicate(path: Path | None, lineno: int, doc_id: str, seen: dict[str, int]) -> InputError:
    where = f"{path}:{lineno}" if path else f"prediction row {lineno}"
    return InputError(f"{where}: duplicate prediction id '{doc_id}' (first on line {seen[doc_id]})")


def gold_from_rows(rows: Iterable[Mapping[str, Any]], id_key: str = "id") -> GoldSet:
    """Gold documents from in-memory rows (same checks as the file, rows counted from 1)."""
    docs: dict[str, dict[str, Any]] = {}
    for n, row in enumerate(rows, 1):
        if not isinstance(row, Mapping):
            raise InputError(f"gold row {n}: not an object (got {type(row).__name__})")
        try:
            doc_id = _doc_id(row, id_key)
        except _LineError as exc:
            raise InputError(f"gold row {n}: {exc}") from None
        if doc_id in docs:
            raise InputError(f"gold row {n}: duplicate id '{doc_id}'")
        docs[doc_id] = dict(row)
    if not docs:
        raise InputError("gold rows: no documents")
    return GoldSet(docs)


def predictions_from_rows(rows: Iterable[Mapping[str, Any] | str], id_key: str = "id") -> PredictionSet:
    """Predictions from in-memory rows: objects, or raw JSON text (parsed like a file line)."""
    out = PredictionSet({})
    seen: dict[str, int] = {}
    for n, row in enumerate(rows, 1):
        if isinstance(row, str):
            _add_prediction(out, row, row.encode(), id_key, f"row {n}", seen, n, None)
            continue
        if not isinstance(row, Mapping):
            out.unattributed.append(f"row {n}: not an object (got {type(row).__name__})")
            continue
        try:
            doc_id = _doc_id(row, id_key)
        except _LineError as exc:
            out.unattributed.append(f"row {n}: {exc}")
            continue
        if doc_id in out.docs or doc_id in out.parse_failures:
            raise _duplicate(None, n, doc_id, seen)
        out.docs[doc_id] = dict(row)
        seen[doc_id] = n
    return out


def digest_file(path: str | Path) -> str:
    """sha256 of a file's bytes."""
    h = _sha256()
    with Path(path).open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
