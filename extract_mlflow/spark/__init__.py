"""The Spark engine: score gold and predictions held by Spark (JSONL files Spark can read, on
local disk or object storage, or DataFrames) and return the same :class:`Report` as
:func:`extract_mlflow.evaluate`.

Two local files on a local master are read by the tasks themselves, in byte ranges, as
``--workers`` reads them (:mod:`.ranges`: no line through the JVM, no shuffle, no
SparkSession when the engine starts Spark itself). Anything else (a URI, a DataFrame, a
cluster) goes through Spark's partitions:

::

    lines, numbered ──parse + check (executors)──► gold defects, unattributed lines, the Setup
        ──cogroup on id──► one compact Evaluation per partition, its counts as bytes
        (+ repeated and unknown ids), pickled ──merge (driver, a part at a time)──►
        result(Inputs) ──► Report

Every line is read with the functions of the local loaders, so parse failures, their recovered
ids, duplicate ids, gold defects and their messages are the same; the partial statistics merge
into exactly the one-pass result (counts, F1 per field, confidence intervals with the same
seed). A part holds a few numbers per document (its per-path counts travel as bytes and
are spilled to the driver's disk), so the driver's memory does not grow with the documents
beyond the local engine's. Needs the ``spark`` extra (``pip install
'extract-mlflow[spark]'``) and Java.
"""

from __future__ import annotations

import functools
import os
import pickle
import shutil
import sys
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..config import Config
from ..core.runtime import gc_paused
from ..errors import ConfigError, InputError
from ..evaluation.accumulator import DocumentInput, Evaluation
from ..evaluation.evaluate import resolve_call_config
from ..evaluation.inputs import Extras, Inputs, Setup
from ..fidelity.approvals import load_approvals
from ..io.lines import read_gold, read_prediction
from ..io.loading import GoldSet, PredictionSet
from ..io.source_file import SourceUse
from ..io.sources import load_sources
from ..io.spill import CountsSpill
from ..report import Report
from .lines import (
    INSTALL_HINT,
    _check_gold,
    _check_predictions,
    _digest,
    _gold_repeat,
    _gold_rows,
    _is_local,
    _lines,
    _Named,
    _numbered,
    _pred_rows,
    _pyspark,
)
from .ranges import by_ranges, evaluate_ranges

__all__ = ["INSTALL_HINT", "evaluate", "session"]

# -- the session -------------------------------------------------------------------------------

_LOG_CONFIG = Path(__file__).with_name("log4j2.properties").as_uri()
"""the JVM's log of a session started here: errors only (no start-up notices on stderr)"""


def _conf(master: str | None, java: str = "") -> Any:
    """The SparkConf of a session or context started here (UI off, this Python for the
    workers, the JVM's log at errors only: ``spark/log4j2.properties``), or a ConfigError
    saying what is missing (pyspark, Java) in one line; `java`: more options of the JVM."""
    _pyspark()
    from pyspark import SparkConf

    java_home = os.environ.get("JAVA_HOME")
    if not (java_home and Path(java_home, "bin", "java").exists()) and not shutil.which("java"):
        why = "install a Java runtime (e.g. Debian's default-jre-headless) or set JAVA_HOME"
        raise ConfigError(f"the Spark engine needs Java: {why}")
    # Spark starts its Python workers with $PYSPARK_PYTHON, read when the session starts, before
    # ``spark.pyspark.python``: without it they run the first ``python3`` on PATH, which need not
    # be the environment this package is installed in.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    return (
        SparkConf()
        .setMaster(master or "local[*]")
        .setAppName("extract-mlflow")
        .set("spark.ui.enabled", "false")
        .set("spark.ui.showConsoleProgress", "false")
        .set("spark.pyspark.python", sys.executable)
        .set("spark.pyspark.driver.python", sys.executable)
        .set("spark.executorEnv.PYTHONWARNINGS", "ignore:PySpark does not yet:FutureWarning")
        .set("spark.sql.shuffle.partitions", "8")
        .set("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={_LOG_CONFIG}{java}")
    )


def _started(start: Any, master: str | None) -> Any:
    try:
        return start()
    except Exception as exc:  # the JVM did not start (a broken Java, a bad master URL)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ConfigError(f"cannot start Spark (master {master or 'local[*]'}): {first}") from None


def session(master: str | None = None) -> Any:
    """A new local-friendly SparkSession (see :func:`_conf`), or a ConfigError saying what is
    missing (pyspark, Java) in one line."""
    builder = _pyspark().SparkSession.builder.config(conf=_conf(master))
    spark = _started(builder.getOrCreate, master)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _context(master: str | None) -> Any:
    """A SparkContext alone, for tasks that read byte ranges (a SparkSession costs seconds
    more to start: only the reading of DataFrames and URIs needs one). Its JVM only schedules
    them: it compiles with C1 alone (the optimising compiler's threads would take the cores
    the tasks need at the start; figures in benchmarks/README.md)."""
    from pyspark import SparkContext

    conf = _conf(master, java=" -XX:TieredStopAtLevel=1")
    sc = _started(functools.partial(SparkContext.getOrCreate, conf), master)
    sc.setLogLevel("ERROR")
    return sc


# -- scoring -----------------------------------------------------------------------------------


def _score(setup: Setup, unit: str, sources: Any, groups: Iterable[Any]) -> Iterator[bytes]:
    """The compact Evaluation of one partition of documents grouped by id, pickled with its
    spilled counts as bytes, the ids that have a source, and what the grouping shows: repeated
    gold and prediction ids (line, first line, id) and unknown ids."""
    spill = CountsSpill()
    run = Evaluation(setup, sink=spill)
    src = sources.value if sources is not None else None
    id_key = setup.config.id_key
    gold_repeats: list[tuple[int, int, str]] = []
    pred_repeats: list[tuple[int, int, str]] = []
    unknown: list[str] = []
    with_source: list[str] = []
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
                _, pdoc, problem = read_prediction(praw, id_key)
                failure = None if pdoc is not None else f"{unit} {lineno}: {problem}"
            position, _, graw = golds[0]
            source = src.get(doc_id) if src is not None else None
            if source is not None:
                with_source.append(doc_id)
            gdoc = read_gold(graw, id_key)[1]
            assert gdoc is not None  # checked by _check_gold
            run.update(DocumentInput(position, doc_id, gdoc, pdoc, failure, source))
    run.fields.fold()  # the records' mistakes tallied: the part holds a few numbers a document
    run.sink = None  # the counts travel as bytes (the executor's files are not the driver's)
    part = (run, spill.portable(), with_source, gold_repeats, pred_repeats, unknown)
    yield pickle.dumps(part, pickle.HIGHEST_PROTOCOL)


def _merged(
    blobs: Iterable[bytes],
    setup: Setup,
    gnamed: _Named,
    pnamed: _Named,
    empty: bool,
    used: SourceUse | None,
) -> tuple[Evaluation, list[str]]:
    """The partitions' evaluations merged (one at a time) and the unknown ids, the sources
    the documents were given noted in `used`; or the error a reader going through gold, then
    the predictions, stops at (repeated gold id, empty prediction file, repeated prediction id)."""
    run = Evaluation(setup, sink=CountsSpill())
    gold_repeats, pred_repeats, unknown = [], [], set()
    for blob in blobs:
        part, counts, w, g, p, u = pickle.loads(blob)
        part.sink = CountsSpill.from_portable(counts)
        run.merge(part)
        if used is not None:
            used.add(w)
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
    MiB are parse failures as locally; a line that is not valid UTF-8 is decoded by Spark
    (except from two local files on a local master, which the tasks read in byte ranges with
    the local engine's reader: :mod:`.ranges`).
    """
    cfg = resolve_call_config(config, id_key, text_key, slice_by)
    with warnings.catch_warnings():  # pyspark's notice about the pandas version
        warnings.filterwarnings("ignore", "PySpark does not yet", FutureWarning)
        active = _pyspark().SparkSession.getActiveSession()
        own = spark is None and active is None
        extras = (sources, approvals, tuple(canaries or ()))
        if own and by_ranges(gold, pred, master or "local[*]"):
            sc = _context(master)
            try:
                return evaluate_ranges(sc, gold, pred, cfg, profile, extras)
            finally:
                sc.stop()
        spark = session(master) if own else spark or active
        try:
            if by_ranges(gold, pred, spark.sparkContext.master):
                return evaluate_ranges(spark.sparkContext, gold, pred, cfg, profile, extras)
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
    gold_rows = _numbered(gold_lines).mapPartitions(functools.partial(_gold_rows, id_key))
    gold_rows = gold_rows.persist(keep)
    pred_rows = None
    try:
        _check_gold(gold_rows, gnamed)
        try:
            pred_lines, pnamed = _lines(spark, pred, "prediction")
            pred_digest = _digest(pred, pred_lines) if _is_local(pred) else None
        except InputError:
            _gold_repeat(gold_rows, gnamed)  # a defect of the gold file comes first
            raise
        pred_rows = _numbered(pred_lines).mapPartitions(functools.partial(_pred_rows, id_key))
        pred_rows = pred_rows.persist(keep)
        unattributed, empty = _check_predictions(pred_rows, pnamed)
        src = load_sources(sources, id_key=id_key) if isinstance(sources, str | Path) else sources
        apps = load_approvals(approvals) if isinstance(approvals, str | Path) else approvals
        extras = Extras(sources=src, approvals=apps, canaries=canaries)
        setup = Setup.of(cfg, profile, extras)
        src_bc = spark.sparkContext.broadcast(dict(src.items())) if src is not None else None
        groups = gold_rows.map(lambda r: (r[2], (r[0], r[1], r[4]))).cogroup(
            pred_rows.filter(lambda r: r[1] is not None).map(lambda r: (r[1], (r[0], r[3])))
        )
        again: Setup | None = setup
        while again is not None:  # twice at most: see Evaluation.rescored_setup
            score = functools.partial(_score, again, pnamed.unit(), src_bc)
            parts = groups.mapPartitions(score).persist(keep)
            used = SourceUse(src) if src is not None else None
            try:
                parts.count()  # scored in parallel; then brought to the driver one at a time
                blobs = parts.toLocalIterator()
                run, unknown = _merged(blobs, again, gnamed, pnamed, empty, used)
            finally:
                parts.unpersist()
            again = run.rescored_setup()
        gs = GoldSet({}, gnamed.source, gold_digest or _digest(gold, gold_lines))
        ps = PredictionSet({i: {} for i in unknown}, {}, *unattributed, source=pnamed.source)
        ps.digest = pred_digest or _digest(pred, pred_lines)
        return run.result(Inputs.of(gs, ps, extras, used))
    finally:
        gold_rows.unpersist()
        if pred_rows is not None:
            pred_rows.unpersist()
