"""The Spark engine: score gold and predictions held by Spark (JSONL files Spark can read, on
local disk or object storage, or DataFrames) and return the same :class:`Report` as
:func:`extract_mlflow.evaluate`.

::

    lines, numbered ──parse + check (executors)──► gold defects, unattributed lines, the Setup
        ──cogroup on id──► one Evaluation per partition (+ repeated and unknown ids), pickled
        ──merge (driver)──► result(Inputs) ──► Report

Every line is read with the functions of the local loaders, so parse failures, their recovered
ids, duplicate ids, gold defects and their messages are the same; the partial statistics merge
into exactly the one-pass result (counts, F1 per field, confidence intervals with the same
seed). Needs the ``spark`` extra (``pip install 'extract-mlflow[spark]'``) and Java.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import shutil
import sys
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config import Config
from .core.runtime import gc_paused
from .errors import ConfigError, InputError
from .evaluation.accumulator import (
    DocumentInput,
    Evaluation,
    Extras,
    Inputs,
    Setup,
    _structure_keys,
)
from .evaluation.evaluate import resolve_config
from .fidelity.approvals import load_approvals
from .io.loading import (
    _RECOVER_CHARS,
    MAX_LINE_BYTES,
    GoldSet,
    PredictionSet,
    _doc_id,
    _LineError,
    _Oversized,
    _read_prediction,
    gold_object,
)
from .io.sources import load_sources
from .report import Report

__all__ = ["evaluate", "session"]

INSTALL_HINT = "pip install 'extract-mlflow[spark]'"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_Raw = bytes | _Oversized


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


# -- the session -------------------------------------------------------------------------------


def _pyspark() -> Any:
    try:
        import pyspark.sql
    except ImportError:
        raise ConfigError(f"the Spark engine needs pyspark: {INSTALL_HINT}") from None
    return pyspark.sql


def session(master: str | None = None) -> Any:
    """A new local-friendly SparkSession (UI off, this Python for the workers, WARN logs
    quieted), or a ConfigError saying what is missing (pyspark, Java) in one line."""
    sql = _pyspark()
    java_home = os.environ.get("JAVA_HOME")
    if not (java_home and Path(java_home, "bin", "java").exists()) and not shutil.which("java"):
        why = "install a Java runtime (e.g. Debian's default-jre-headless) or set JAVA_HOME"
        raise ConfigError(f"the Spark engine needs Java: {why}")
    builder = (
        sql.SparkSession.builder.master(master or "local[*]")
        .appName("extract-mlflow")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.pyspark.python", sys.executable)
        .config("spark.pyspark.driver.python", sys.executable)
        .config("spark.executorEnv.PYTHONWARNINGS", "ignore:PySpark does not yet:FutureWarning")
        .config("spark.sql.shuffle.partitions", "8")
    )
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # the JVM did not start (a broken Java, a bad master URL)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ConfigError(f"cannot start Spark (master {master or 'local[*]'}): {first}") from None
    spark.sparkContext.setLogLevel("ERROR")
    return spark


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
        used += _raw(text, first=index == 0 and i == 0) is not None
    yield index, n, used


def _raw(text: str | None, *, first: bool) -> _Raw | None:
    """A line's bytes as the local reader sees them (None for a blank line): the UTF-8 BOM of
    the first line dropped, the line end kept, an over-long line as _Oversized."""
    if text is None:
        return None
    if first and text.startswith("\ufeff"):
        text = text[1:]
    raw = text.encode("utf-8", errors="surrogatepass")
    if len(raw) > MAX_LINE_BYTES:
        return _Oversized(raw[:_RECOVER_CHARS], len(raw))
    return raw + b"\n" if raw.strip() else None


def _number(index: int, lines: Iterable[str | None], starts: dict[int, tuple[int, int]]) -> Any:
    line, position = starts[index]
    for i, text in enumerate(lines):
        line += 1
        raw = _raw(text, first=index == 0 and i == 0)
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
            if head in _UTF16_BOMS:
                raise InputError(f"{Path(data)}: file is UTF-16 encoded; save it as UTF-8")
            h.update(head)
            while chunk := f.read(1 << 20):
                h.update(chunk)
        return h.hexdigest()
    for text in lines.toLocalIterator():
        h.update((text or "").encode("utf-8", errors="surrogatepass") + b"\n")
    return h.hexdigest()


# -- checking the lines on the executors -------------------------------------------------------


def _gold_rows(id_key: str, keys: tuple[str, ...], rows: Iterable[Any]) -> Iterator[Any]:
    """(position, line, id or None, defect or None, structure keys present, raw) per line."""
    for lineno, position, raw in rows:
        try:
            doc = gold_object(raw)
            doc_id = _doc_id(doc, id_key)
        except _LineError as exc:
            yield position, lineno, None, str(exc), (), raw
            continue
        yield position, lineno, doc_id, None, tuple(k for k in keys if k in doc), raw


def _gold_summary(rows: Iterable[Any]) -> Iterator[Any]:
    """Per partition: (documents, earliest defect (line, why) or None, structure keys found)."""
    n, defect, keys = 0, None, set()
    for _, lineno, _, problem, present, _ in rows:
        n += 1
        if problem is not None and (defect is None or lineno < defect[0]):
            defect = (lineno, problem)
        keys.update(present)
    yield n, defect, keys


def _pred_rows(id_key: str, tops: tuple[str, ...], rows: Iterable[Any]) -> Iterator[Any]:
    """(line, id or None, problem or None, slice attributes carried, raw) per line."""
    for lineno, _, raw in rows:
        doc_id, doc, problem = _read_prediction(raw, id_key)
        carried = () if doc is None else tuple(t for t in tops if t in doc)
        yield lineno, doc_id, problem, carried, raw


def _pred_summary(rows: Iterable[Any]) -> Iterator[Any]:
    """Per partition: (lines, unattributed (line, why), slice attributes carried)."""
    n, unattributed, carried = 0, [], set()
    for lineno, doc_id, problem, present, _ in rows:
        n += 1
        if doc_id is None:
            unattributed.append((lineno, problem))
        carried.update(present)
    yield n, unattributed, carried


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


def _check_gold(rows: Any, named: _Named) -> set[str]:
    """The earliest gold defect as load_gold words it (an InputError; a repeated id before it
    wins), else the structure keys found in gold. Repeats alone are found while scoring."""
    parts = rows.mapPartitions(_gold_summary).collect()
    defects = [p[1] for p in parts if p[1] is not None]
    if defects:
        line, why = min(defects)
        _gold_repeat(rows, named, before=line)
        raise InputError(f"{named.where(line)}: {why}")
    if sum(p[0] for p in parts) == 0:
        empty = f"{named.source}: no documents (the file is empty)"
        raise InputError("gold rows: no documents" if named.rows else empty)
    return set().union(*(p[2] for p in parts))


def _check_predictions(rows: Any, named: _Named) -> tuple[list[str], set[str], bool]:
    """The unattributed lines, the slice attributes some prediction carries, and whether the
    file holds no line at all (an error once the gold file is known to be clean)."""
    parts = rows.mapPartitions(_pred_summary).collect()
    empty = sum(p[0] for p in parts) == 0 and not named.rows
    unattributed = sorted(u for p in parts for u in p[1])
    lines = [f"{named.unit()} {n}: {why}" for n, why in unattributed]
    return lines, set().union(*(p[2] for p in parts)), empty


# -- scoring -----------------------------------------------------------------------------------


def _score(setup: Setup, unit: str, sources: Any, groups: Iterable[Any]) -> Iterator[bytes]:
    """The Evaluation of one partition of documents grouped by id, pickled with what the
    grouping shows: repeated gold and prediction ids (line, first line, id) and unknown ids."""
    run = Evaluation(setup)
    src = sources.value if sources is not None else None
    id_key = setup.config.id_key
    gold_repeats: list[tuple[int, int, str]] = []
    pred_repeats: list[tuple[int, int, str]] = []
    unknown: list[str] = []
    with gc_paused():
        for doc_id, (golds, preds) in groups:
            golds, preds = sorted(golds), sorted(preds)  # by position, by line
            if len(golds) > 1:
                gold_repeats.append((golds[1][1], golds[0][1], doc_id))
            if len(preds) > 1:
                pred_repeats.append((preds[1][0], preds[0][0], doc_id))
            if not golds:
                unknown.append(doc_id)
            if len(golds) != 1 or len(preds) > 1 or gold_repeats or pred_repeats:
                continue  # no document to score, or an error to report (no report then)
            pdoc = failure = None
            if preds:
                lineno, praw = preds[0]
                _, pdoc, problem = _read_prediction(praw, id_key)
                failure = None if pdoc is not None else f"{unit} {lineno}: {problem}"
            position, _, graw = golds[0]
            source = src.get(doc_id) if src is not None else None
            run.update(DocumentInput(position, doc_id, gold_object(graw), pdoc, failure, source))
    yield pickle.dumps((run, gold_repeats, pred_repeats, unknown), pickle.HIGHEST_PROTOCOL)


def _merged(
    blobs: list[bytes], setup: Setup, gnamed: _Named, pnamed: _Named, empty: bool
) -> tuple[Evaluation, list[str]]:
    """The partitions' evaluations merged, and the unknown ids; or the error a reader going
    through gold, then the predictions, stops at (repeated gold id, empty prediction file,
    repeated prediction id)."""
    run, gold_repeats, pred_repeats, unknown = Evaluation(setup), [], [], set()
    for blob in blobs:
        part, g, p, u = pickle.loads(blob)
        run.merge(part)
        gold_repeats += g
        pred_repeats += p
        unknown.update(u)
    if gold_repeats:
        second, first, doc_id = min(gold_repeats)
        unit = gnamed.unit()
        raise InputError(
            f"{gnamed.where(second)}: duplicate id '{doc_id}' (first on {unit} {first})"
        )
    if empty:
        raise InputError(f"{pnamed.source}: no predictions (the file is empty)")
    if pred_repeats:
        second, first, doc_id = min(pred_repeats)
        raise InputError(
            f"{pnamed.where(second)}: duplicate prediction id '{doc_id}' "
            f"(first on {pnamed.unit()} {first})"
        )
    return run, sorted(unknown)


def _config(
    config: Config | str | Path | Mapping[str, Any] | None,
    id_key: str | None,
    text_key: str | None,
    slice_by: Sequence[str] | None,
) -> Config:
    """The config as :func:`extract_mlflow.evaluate` resolves it."""
    cfg = resolve_config(config, id_key)
    if text_key is not None and text_key != cfg.text_key:
        cfg = cfg.model_copy(update={"text_key": text_key})
    if slice_by:
        structure = cfg.structure.model_copy(update={"slice_by": tuple(slice_by)})
        cfg = cfg.model_copy(update={"structure": structure})
    return cfg


def evaluate(
    gold: Any,
    pred: Any,
    config: Config | str | Path | Mapping[str, Any] | None = None,
    *,
    spark: Any = None,
    master: str | None = None,
    id_key: str | None = None,
    text_key: str | None = None,
    profile: str | None = None,
    sources: str | Path | Mapping[str, str] | None = None,
    approvals: str | Path | Mapping[tuple[str, str], str | None] | None = None,
    slice_by: Sequence[str] | None = None,
    canaries: Sequence[str] | None = None,
) -> Report:
    """Score predictions against gold on Spark: the same :class:`Report` as
    :func:`extract_mlflow.evaluate` (counts, F1 per field, intervals with the same seed).

    `gold` and `pred` are each a JSONL path Spark can read (a local path, ``s3a://...``,
    ``hdfs://...``; one file, read with "\\n" line ends, lines numbered in file order) or a
    Spark DataFrame: one string column holds the JSON lines (what ``spark.read.text`` gives; a
    null row is a blank line); any other DataFrame gives one JSON object per row
    (``to_json(struct(*columns))``: a null column is an *absent* key, nulls inside arrays stay
    null; dates and timestamps become strings). Rows keep the DataFrame's order; messages then
    name rows as for in-memory rows ("gold row 3: ...", "row 7: ...").

    Digests: a local file's is the sha256 of its bytes, as the local engine gives (runs
    compare as the same data). For a URI or a DataFrame it is the sha256 of its lines, each
    followed by "\\n", streamed through the driver: equal to the file's when the file is UTF-8
    with "\\n" line ends, no BOM and a final line end; otherwise runs of the local engine on a
    copy of the file carry another digest.

    `spark` is the session to use (else the active one, else a new one on `master`, default
    ``local[*]``, stopped at the end). `sources` (a folder or JSONL read on the driver, or
    a mapping), `approvals`, `canaries` are as in :func:`extract_mlflow.evaluate`; a gold
    field as the source text (``source_key``) is not supported by this engine. Lines over 16
    MiB are parse failures as locally; a line that is not valid UTF-8 is decoded by Spark.
    """
    cfg = _config(config, id_key, text_key, slice_by)
    with warnings.catch_warnings():  # pyspark's notice about the pandas version
        warnings.filterwarnings("ignore", "PySpark does not yet", FutureWarning)
        own = spark is None and _pyspark().SparkSession.getActiveSession() is None
        spark = session(master) if own else spark or _pyspark().SparkSession.getActiveSession()
        try:
            extras = (sources, approvals, tuple(canaries or ()))
            return _evaluate(spark, gold, pred, cfg, profile, extras)
        finally:
            if own:
                spark.stop()


def _evaluate(
    spark: Any, gold: Any, pred: Any, cfg: Config, profile: str | None, given: tuple[Any, ...]
) -> Report:
    sources, approvals, canaries = given
    from pyspark import StorageLevel

    keep, id_key = StorageLevel.MEMORY_AND_DISK, cfg.id_key
    gold_lines, gnamed = _lines(spark, gold, "gold")
    gold_digest = _digest(gold, gold_lines) if _is_local(gold) else None
    keys = _structure_keys(cfg)
    gold_rows = _numbered(gold_lines).mapPartitions(functools.partial(_gold_rows, id_key, keys))
    gold_rows = gold_rows.persist(keep)
    pred_rows = None
    try:
        structure = _check_gold(gold_rows, gnamed)
        try:
            pred_lines, pnamed = _lines(spark, pred, "prediction")
            pred_digest = _digest(pred, pred_lines) if _is_local(pred) else None
        except InputError:
            _gold_repeat(gold_rows, gnamed)  # a defect of the gold file comes first
            raise
        tops = tuple(dict.fromkeys(p.split(".")[0] for p in cfg.structure.slice_by))
        pred_rows = _numbered(pred_lines).mapPartitions(functools.partial(_pred_rows, id_key, tops))
        pred_rows = pred_rows.persist(keep)
        unattributed, carried, empty = _check_predictions(pred_rows, pnamed)
        src = load_sources(sources, id_key=id_key) if isinstance(sources, str | Path) else sources
        apps = load_approvals(approvals) if isinstance(approvals, str | Path) else approvals
        extras = Extras(sources=src, approvals=apps, canaries=canaries)
        witness = (
            GoldSet({"": dict.fromkeys(structure)}),
            PredictionSet({"": dict.fromkeys(carried)}),
        )
        setup = Setup.of(*witness, cfg, profile, extras)  # what Setup.of asks: is a key in any doc
        src_bc = spark.sparkContext.broadcast(dict(src)) if src is not None else None
        groups = gold_rows.map(lambda r: (r[2], (r[0], r[1], r[5]))).cogroup(
            pred_rows.filter(lambda r: r[1] is not None).map(lambda r: (r[1], (r[0], r[4])))
        )
        score = functools.partial(_score, setup, pnamed.unit(), src_bc)
        run, unknown = _merged(groups.mapPartitions(score).collect(), setup, gnamed, pnamed, empty)
        matched = [] if src is None else [d.id for d in run.documents if d.id in src]
        gs = GoldSet(
            {i: {} for i in matched}, gnamed.source, gold_digest or _digest(gold, gold_lines)
        )
        ps = PredictionSet(
            {i: {} for i in unknown}, unattributed=unattributed, source=pnamed.source
        )
        ps.digest = pred_digest or _digest(pred, pred_lines)
        return run.result(Inputs.of(gs, ps, extras))
    finally:
        gold_rows.unpersist()
        if pred_rows is not None:
            pred_rows.unpersist()
