"""Reviewer approvals: values a person checked and accepted (a CSV or JSONL of document id,
field path and an optional note). An approved value keeps its scores; its flags are cleared."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..core.paths import strip_list_marks
from ..errors import InputError
from .values import ValueFidelity

# -- approvals -----------------------------------------------------------------------------
Approvals = Mapping[tuple[str, str], str | None]
"""(document id, field path) -> the reviewer's note (or None)."""


def approval_key(doc_id: str, path: str) -> tuple[str, str]:
    """How approvals are matched: the path's ``[]`` markers do not matter."""
    return str(doc_id), strip_list_marks(path).strip()


def load_approvals(path: str | Path) -> dict[tuple[str, str], str | None]:
    """Reviewer approvals from a CSV (header ``id,path[,note]``) or a JSONL file (objects
    with ``id``, ``path`` and optionally ``note``); a bad line is an InputError naming it."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"{p}: approvals file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{p}: cannot read the approvals file: {exc}") from None
    rows = _csv_rows(p, text) if p.suffix.lower() == ".csv" else _jsonl_rows(p, text)
    out: dict[tuple[str, str], str | None] = {}
    for where, row in rows:
        doc_id, fpath, note = row.get("id"), row.get("path"), row.get("note")
        if (
            not isinstance(doc_id, str | int)
            or isinstance(doc_id, bool)
            or (isinstance(doc_id, str) and not doc_id.strip())
        ):
            raise InputError(f"{p}, {where}: 'id' must be a non-empty string or integer")
        if not isinstance(fpath, str) or not fpath.strip():
            raise InputError(f"{p}, {where}: 'path' must be a non-empty string")
        if note is not None and not isinstance(note, str):
            raise InputError(f"{p}, {where}: 'note' must be a string")
        out[approval_key(str(doc_id), fpath)] = note or None
    return out


def _csv_rows(p: Path, text: str) -> Iterator[tuple[str, dict[str, Any]]]:
    reader = csv.DictReader(text.splitlines())
    if not reader.fieldnames or not {"id", "path"} <= set(reader.fieldnames):
        raise InputError(f"{p}: the CSV header must name the columns id and path (and note)")
    for row in reader:
        yield f"line {reader.line_num}", dict(row)


def _jsonl_rows(p: Path, text: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{p}, line {n}: invalid JSON: {exc.msg}") from None
        if not isinstance(row, dict):
            raise InputError(f"{p}, line {n}: expected a JSON object with id and path")
        yield f"line {n}", row


def approve(v: ValueFidelity, approvals: Approvals, used: set[tuple[str, str]]) -> None:
    key = approval_key(v.doc_id, v.path)
    if key in approvals:
        used.add(key)
        v.approved, v.note = True, approvals[key]
        v.cleared_flags, v.flags = v.flags, ()
