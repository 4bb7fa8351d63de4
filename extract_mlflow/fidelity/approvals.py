"""Reviewer approvals: values a person checked and accepted (a CSV or JSONL of document id,
field path and an optional note). An approved value keeps its scores; its flags are cleared.

The file is read by :func:`extract_mlflow.io.sources.read_approvals`; the rows become approvals
here (:func:`approvals_from_rows`, pure)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..core.paths import strip_list_marks
from ..errors import InputError
from ..io.sources import read_approvals
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
    return approvals_from_rows(read_approvals(path), source=str(path))


def approvals_from_rows(
    rows: Iterable[tuple[str, Mapping[str, Any]]], *, source: str = "approvals"
) -> dict[tuple[str, str], str | None]:
    """Approvals from rows (``id``, ``path``, optional ``note``), each given with where it was
    read (``line 3``): a bad row is an InputError naming `source` and that place. Pure."""
    out: dict[tuple[str, str], str | None] = {}
    for where, row in rows:
        doc_id, fpath, note = row.get("id"), row.get("path"), row.get("note")
        if (
            not isinstance(doc_id, str | int)
            or isinstance(doc_id, bool)
            or (isinstance(doc_id, str) and not doc_id.strip())
        ):
            raise InputError(f"{source}, {where}: 'id' must be a non-empty string or integer")
        if not isinstance(fpath, str) or not fpath.strip():
            raise InputError(f"{source}, {where}: 'path' must be a non-empty string")
        if note is not None and not isinstance(note, str):
            raise InputError(f"{source}, {where}: 'note' must be a string")
        out[approval_key(str(doc_id), fpath)] = note or None
    return out


def approve(v: ValueFidelity, approvals: Approvals, used: set[tuple[str, str]]) -> None:
    key = approval_key(v.doc_id, v.path)
    if key in approvals:
        used.add(key)
        v.approved, v.note = True, approvals[key]
        v.cleared_flags, v.flags = v.flags, ()
