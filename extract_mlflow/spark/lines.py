"""The Spark engine's reading of its inputs: lines numbered as the local reader numbers them,
digests, and the checks of gold and prediction lines (on the executors, then on the driver),
each worded as the local loaders word it."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError, InputError
from ..io.lines import UTF16_BOMS, read_gold, read_prediction, text_line
from ..io.loading import KEPT_LINES

INSTALL_HINT = "pip install 'extract-mlflow[spark]'"


@dataclass(frozen=True)
class _Named:
    """How one input is named in the report and in messages (a path, a URI or a DataFrame)."""

    source: str
    kind: str  # "gold" or "prediction"
    rows: bool  # a DataFrame: "row N" (as in-memory rows), else "line N" of a file

    def where(self, n: int) -> str:
        return f"{self.kind} row {n}" if self.rows else f"{self.source}:{n}"

    def unit(self) -> str:  # what a prediction's parse failure names
        return "row" if self.rows else "line"


def _pyspark() -> Any:
    try:
        import pyspark.sql
    except ImportError:
        raise ConfigError(f"the Spark engine needs pyspark: {INSTALL_HINT}") from None
    return pyspark.sql


# -- reading lines -----------------------------------------------------------------------------


def _is_local(data: Any) -> bool:
    return isinstance(data, Path) or (isinstance(data, str) and "://" not in data)


def _lines(spark: Any, data: Any, kind: str) -> tuple[Any, _Named]:
    """The input's lines as an RDD of str in order (None for a null row), and its name."""
    if isinstance(data, str | Path):
        local, p = _is_local(data), Path(data)
        if local and not p.is_file():
            what = "is a directory, expected a JSONL file" if p.is_dir() else "file not found"
            raise InputError(f"{p}: {what}")
        named = _Named(str(p) if local else str(data), kind, False)
        uri = str(p.absolute()) if local else str(data)
        try:
            df = spark.read.option("lineSep", "\n").text(uri)
        except Exception as exc:
            if "PATH_NOT_FOUND" in str(exc) or "does not exist" in str(exc):
                raise InputError(f"{named.source}: file not found") from None
            raise
        return df.rdd.map(lambda r: r[0]), named
    sql = _pyspark()
    if not isinstance(data, sql.DataFrame):
        raise InputError(f"{kind}: expected a path or a Spark DataFrame, not {type(data).__name__}")
    named = _Named("<dataframe>", kind, True)
    fields = data.schema.fields
    if len(fields) == 1 and fields[0].dataType.typeName() == "string":
        return data.rdd.map(lambda r: r[0]), named
    from pyspark.sql import functions as F

    row = F.struct(*[F.col(f"`{c}`") for c in data.columns])
    as_json = F.to_json(row, {"ignoreNullFields": "true"})
    return data.select(as_json.alias("value")).rdd.map(lambda r: r[0]), named


def _count(index: int, lines: Iterable[str | None]) -> Iterator[tuple[int, int, int]]:
    n = used = 0
    for i, text in enumerate(lines):
        n += 1
        used += text_line(text, first=index == 0 and i == 0) is not None
    yield index, n, used


def _number(index: int, lines: Iterable[str | None], starts: dict[int, tuple[int, int]]) -> Any:
    line, position = starts[index]
    for i, text in enumerate(lines):
        line += 1
        raw = text_line(text, first=index == 0 and i == 0)
        if raw is not None:
            yield line, position, raw
            position += 1


def _numbered(rdd: Any) -> Any:
    """(line number from 1, position among the non-blank lines from 0, raw) per non-blank line,
    in order (one counting job, as zipWithIndex does)."""
    counts = sorted(rdd.mapPartitionsWithIndex(_count).collect())
    starts: dict[int, tuple[int, int]] = {}
    line = position = 0
    for index, n, used in counts:
        starts[index] = (line, position)
        line, position = line + n, position + used
    return rdd.mapPartitionsWithIndex(functools.partial(_number, starts=starts))


# -- digests -----------------------------------------------------------------------------------


def _digest(data: Any, lines: Any) -> str:
    """sha256 of a local file's bytes (as the local engine); for a URI or a DataFrame, sha256
    of its lines each followed by a line end, streamed through the driver (equal to the file's
    digest when the file is UTF-8 with "\\n" line ends, no BOM and a final line end)."""
    h = hashlib.sha256()
    if _is_local(data):
        with Path(data).open("rb") as f:
            head = f.read(2)
            if head in UTF16_BOMS:
                raise InputError(f"{Path(data)}: file is UTF-16 encoded; save it as UTF-8")
            h.update(head)
            while chunk := f.read(1 << 20):
                h.update(chunk)
        return h.hexdigest()
    for text in lines.toLocalIterator():
        h.update((text or "").encode("utf-8", errors="surrogatepass") + b"\n")
    return h.hexdigest()


# -- checking the lines on the executors -------------------------------------------------------


def _gold_rows(id_key: str, rows: Iterable[Any]) -> Iterator[Any]:
    """(position, line, id or None, defect or None, raw) per line."""
    for lineno, position, raw in rows:
        doc_id, _, problem = read_gold(raw, id_key)
        yield position, lineno, doc_id, problem, raw


def _gold_summary(rows: Iterable[Any]) -> Iterator[Any]:
    """Per partition: (documents, earliest defect (line, why) or None)."""
    n, defect = 0, None
    for _, lineno, _, problem, _ in rows:
        n += 1
        if problem is not None and (defect is None or lineno < defect[0]):
            defect = (lineno, problem)
    yield n, defect


def _pred_rows(id_key: str, rows: Iterable[Any]) -> Iterator[Any]:
    """(line, id or None, problem or None, raw) per line."""
    for lineno, _, raw in rows:
        doc_id, _, problem = read_prediction(raw, id_key)
        yield lineno, doc_id, problem, raw


def _pred_summary(rows: Iterable[Any]) -> Iterator[Any]:
    """Per partition: (lines, the first :data:`KEPT_LINES` unattributed (line, why),
    unattributed lines)."""
    n, unusable = 0, 0
    unattributed: list[tuple[int, str]] = []
    for lineno, doc_id, problem, _ in rows:
        n += 1
        if doc_id is None:
            unusable += 1
            if len(unattributed) < KEPT_LINES:
                unattributed.append((lineno, problem))
    yield n, unattributed, unusable


def _first_repeat(pairs: Any) -> tuple[int, int, str] | None:
    """(line of the earliest repeat, line of its first occurrence, id) among (id, line) pairs,
    or None: where a reader going through the lines in order stops."""
    repeats = pairs.groupByKey().flatMap(_repeat)
    found = repeats.takeOrdered(1)
    return found[0] if found else None


def _repeat(item: tuple[str, Iterable[int]]) -> list[tuple[int, int, str]]:
    doc_id, lines = item
    ordered = sorted(lines)
    return [(ordered[1], ordered[0], doc_id)] if len(ordered) > 1 else []


# -- the checks on the driver ------------------------------------------------------------------


def _gold_repeat(rows: Any, named: _Named, before: int | None = None) -> None:
    """The gold file's earliest repeated id as load_gold words it (an InputError), if it comes
    before line `before` (a defect found there) or there is no such line."""
    repeat = _first_repeat(rows.filter(lambda r: r[2] is not None).map(lambda r: (r[2], r[1])))
    if repeat is not None and (before is None or repeat[0] < before):
        second, first, doc_id = repeat
        raise InputError(
            f"{named.where(second)}: duplicate id '{doc_id}' (first on {named.unit()} {first})"
        )


def _check_gold(rows: Any, named: _Named) -> None:
    """The earliest gold defect as load_gold words it (an InputError; a repeated id before it
    wins). Repeats alone are found while scoring."""
    parts = rows.mapPartitions(_gold_summary).collect()
    defects = [p[1] for p in parts if p[1] is not None]
    if defects:
        line, why = min(defects)
        _gold_repeat(rows, named, before=line)
        raise InputError(f"{named.where(line)}: {why}")
    if sum(p[0] for p in parts) == 0:
        empty = f"{named.source}: no documents (the file is empty)"
        raise InputError("gold rows: no documents" if named.rows else empty)


def _check_predictions(rows: Any, named: _Named) -> tuple[tuple[list[str], int], bool]:
    """The first :data:`KEPT_LINES` unattributed lines and how many there are, and whether the
    file holds no line at all (an error once the gold file is known to be clean)."""
    parts = rows.mapPartitions(_pred_summary).collect()
    empty = sum(p[0] for p in parts) == 0 and not named.rows
    unattributed = sorted(u for p in parts for u in p[1])[:KEPT_LINES]
    lines = [f"{named.unit()} {n}: {why}" for n, why in unattributed]
    return (lines, sum(p[2] for p in parts)), empty
