"""Loading the source documents that extracted values are checked against, and the reviewer
approvals file (:func:`read_approvals`).

Three ways:

- a folder of ``<id>.txt``, ``<id>.md`` or ``<id>.pdf`` files (the id is the file name without
  its extension; other files are ignored); PDF text is read with pypdf;
- a JSONL file of ``{"id": ..., "text": ...}`` objects, checked whole at open and read by
  offset when a text is asked for (:mod:`~extract_mlflow.io.source_file`);
- a field of the gold line (``--source-key``): :func:`sources_from_gold`.

A source that cannot be read (missing, not UTF-8, a corrupt or encrypted PDF, a bad JSONL line,
two files for one id) is an :class:`~extract_mlflow.errors.InputError` naming the file (and
line). A document without a source is not an error: fidelity reports it as unchecked.
"""

from __future__ import annotations

import csv
import io
import logging
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from .lines import UTF16_BOMS, RawLines, read_object
from .source_file import SourceFile

log = logging.getLogger(__name__)

SOURCE_SUFFIXES = (".txt", ".md", ".pdf")


def load_sources(
    path: str | Path, *, id_key: str = "id", text_key: str = "text"
) -> Mapping[str, str]:
    """Source texts by document id, from a folder (read whole) or a JSONL file (read when
    asked for: :class:`~extract_mlflow.io.source_file.SourceFile`)."""
    p = Path(path)
    if p.is_dir():
        return _load_folder(p)
    if not p.exists():
        raise InputError(f"{p}: sources not found (expected a folder or a JSONL file)")
    if p.suffix.lower() in (".jsonl", ".json", ".ndjson"):
        return SourceFile(p, id_key, text_key)
    raise InputError(
        f"{p}: sources must be a folder of <id>.txt/.md/.pdf files or a JSONL file of "
        f'{{"{id_key}": ..., "{text_key}": ...}} objects'
    )


def _load_folder(folder: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    origin: dict[str, Path] = {}
    for f in sorted(folder.iterdir()):
        if not f.is_file() or f.suffix.lower() not in SOURCE_SUFFIXES or f.name.startswith("."):
            continue
        if f.stem in origin:
            raise InputError(f"{f}: a second source for id {f.stem!r} (also {origin[f.stem]})")
        origin[f.stem] = f
        out[f.stem] = read_pdf(f) if f.suffix.lower() == ".pdf" else read_text(f)
    if not out:
        log.warning("%s: no .txt, .md or .pdf files in the sources folder", folder)
    return out


def read_text(path: Path) -> str:
    """A UTF-8 text file (a UTF-8 or UTF-16 byte-order mark is honoured)."""
    data = _read_bytes(path)
    try:
        if data.startswith(UTF16_BOMS):
            return data.decode("utf-16")
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path}: not valid UTF-8 (byte {exc.start + 1}); save the source as UTF-8"
        ) from None


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None


def read_pdf(path: Path) -> str:
    """The text of every page of a PDF, pages separated by a blank line."""
    from pypdf import PdfReader  # imported here: only folders with PDFs need it

    data = _read_bytes(path)
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise InputError(f"{path}: the PDF is encrypted; save an unencrypted copy")
        pages = [page.extract_text() or "" for page in reader.pages]
    except InputError:
        raise
    except Exception as exc:  # pypdf raises many types on malformed files
        raise InputError(f"{path}: cannot read the PDF: {exc or type(exc).__name__}") from None
    text = "\n\n".join(pages)
    if not text.strip():
        log.warning("%s: the PDF has no text layer (a scan?); nothing to check against", path)
    return text


def read_approvals(path: str | Path) -> list[tuple[str, dict[str, Any]]]:
    """The rows of a reviewer approvals file, each with where it was read (``line 3``): a CSV
    whose header names ``id`` and ``path`` (and ``note``), else JSONL objects (blank lines
    skipped). A file that cannot be read or parsed is an InputError naming it (and the line)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"{p}: approvals file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{p}: cannot read the approvals file: {exc}") from None
    if p.suffix.lower() == ".csv":
        return list(_csv_rows(p, text))
    return list(_jsonl_rows(p))


def _csv_rows(p: Path, text: str) -> Iterator[tuple[str, dict[str, Any]]]:
    reader = csv.DictReader(text.splitlines())
    if not reader.fieldnames or not {"id", "path"} <= set(reader.fieldnames):
        raise InputError(f"{p}: the CSV header must name the columns id and path (and note)")
    for row in reader:
        yield f"line {reader.line_num}", dict(row)


def _jsonl_rows(p: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    for n, _, raw in RawLines(p):
        row, why = read_object(raw, "an object with id and path")
        if row is None:
            raise InputError(f"{p}, line {n}: {why}")
        yield f"line {n}", row


def sources_from_gold(gold_docs: Mapping[str, Mapping[str, Any]], key: str) -> dict[str, str]:
    """Source texts taken from field `key` of each gold document; a document without it (or
    with null) has no source (unchecked). A non-string value is an InputError naming the id."""
    out: dict[str, str] = {}
    for doc_id, doc in gold_docs.items():
        value = doc.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise InputError(f"gold document {doc_id!r}: source field '{key}' is not a string")
        out[doc_id] = value
    return out
