"""Reading gold and prediction JSONL files (and in-memory rows) into documents keyed by id.

Gold must be clean: any defect is an :class:`InputError` naming the file and line. A prediction
line that cannot be used is a *parse failure* of its document (scored, never fatal); its id is
recovered from the broken text where possible.

Every line and row is read by the line codec (:mod:`~extract_mlflow.io.lines`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..core.runtime import gc_paused
from ..errors import InputError
from .lines import (
    iter_raw_lines,
    read_gold,
    read_gold_row,
    read_prediction,
    read_prediction_row,
)

KEPT_LINES = 1000
"""Unattributed prediction lines kept with their reason (the rest are only counted): a file
of garbage lines would otherwise be held, and reported, line by line."""


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


def _sha256() -> Any:
    return hashlib.sha256()


@gc_paused()
def load_gold(path: str | Path, id_key: str = "id") -> GoldSet:
    """Read the gold JSONL file; every defect is an InputError naming the line."""
    p = Path(path)
    hasher = _sha256()
    docs: dict[str, dict[str, Any]] = {}
    first_line: dict[str, int] = {}
    for lineno, _, raw in iter_raw_lines(p, hasher):
        doc_id, doc, problem = read_gold(raw, id_key)
        if doc_id is None or doc is None:
            raise InputError(f"{p}:{lineno}: {problem}")
        if doc_id in docs:
            raise InputError(
                f"{p}:{lineno}: duplicate id '{doc_id}' (first on line {first_line[doc_id]})"
            )
        docs[doc_id] = doc
        first_line[doc_id] = lineno
    if not docs:
        raise InputError(f"{p}: no documents (the file is empty)")
    return GoldSet(docs, str(p), hasher.hexdigest())


@gc_paused()
def load_predictions(path: str | Path, id_key: str = "id") -> PredictionSet:
    """Read the predictions JSONL file; unusable lines become parse failures."""
    p = Path(path)
    hasher = _sha256()
    out = PredictionSet({}, source=str(p))
    seen_line: dict[str, int] = {}
    n_lines = 0
    for lineno, _, raw in iter_raw_lines(p, hasher):
        n_lines += 1
        doc_id, doc, problem = read_prediction(raw, id_key)
        _add_prediction(out, doc_id, doc, f"line {lineno}: {problem}", seen_line, lineno, p)
    if n_lines == 0:
        raise InputError(f"{p}: no predictions (the file is empty)")
    out.digest = hasher.hexdigest()
    return out


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
        doc_id, doc, problem = read_gold_row(row, id_key)
        if doc_id is None or doc is None:
            raise InputError(f"gold row {n}: {problem}")
        if doc_id in docs:
            raise InputError(
                f"gold row {n}: duplicate id '{doc_id}' (first on row {first[doc_id]})"
            )
        docs[doc_id] = doc
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
        doc_id, doc, problem = read_prediction_row(row, id_key)
        _add_prediction(out, doc_id, doc, f"row {n}: {problem}", seen, n, None)
    return out
