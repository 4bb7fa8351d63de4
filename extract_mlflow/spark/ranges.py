"""Two local JSONL files on a local master: the Spark engine's tasks read the files' byte ranges
themselves, as ``--workers`` processes do (:func:`~extract_mlflow.evaluation.workers.score_ranges`:
the prediction file indexed range by range, then every gold range joined with its predictions
and scored into a compact part), and the driver merges the parts in range order.

No line goes through the JVM, no shuffle, no SparkSession: each task is one Spark job of one
partition, at most two per core in flight (the driver runs them from as many threads). The
report, its errors and their messages are those of the local engine's streamed pass, which
this is. The tasks share the driver's disk: the prediction index and the parts' counts are
temporary files of this machine (hence a local master only).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from ..config import Config
from ..errors import ExtractMlflowError
from ..evaluation.evaluate import check_files, score_files
from ..evaluation.inputs import Extras
from ..evaluation.workers import RANGE_BYTES, with_sources
from ..fidelity.approvals import load_approvals
from ..io.ranges import LONG_LINE
from ..io.sources import load_sources
from ..report import Report

__all__ = ["MAX_RANGE_BYTES", "SparkPool", "by_ranges", "evaluate_ranges", "range_bytes"]

T = TypeVar("T")

MAX_RANGE_BYTES = LONG_LINE
"""the most bytes of a file one task reads: the cutter's own limit (it takes more pending bytes
for a line too long to cut, and makes the rest of the file one range)"""


def range_bytes(gold: Path, pred: Path, cores: int) -> int:
    """Bytes of a file per task: two tasks per core for the larger file, between the workers'
    :data:`~extract_mlflow.evaluation.workers.RANGE_BYTES` and :data:`MAX_RANGE_BYTES`: a
    Spark task has a fixed cost, so ranges are as few as keep every core busy (figures in
    benchmarks/README.md)."""
    largest = max(gold.stat().st_size, pred.stat().st_size)
    return min(MAX_RANGE_BYTES, max(RANGE_BYTES, -(-largest // (2 * cores))))


def by_ranges(gold: Any, pred: Any, master: str) -> bool:
    """Whether the tasks can read the inputs' byte ranges: two local files, a local master."""
    local = all(isinstance(p, str | Path) and "://" not in str(p) for p in (gold, pred))
    return local and master.startswith("local") and all(Path(p).is_file() for p in (gold, pred))


def _task(sources: Any, fn: Callable[..., T], args: tuple[Any, ...], _: Any) -> tuple[bool, Any]:
    """A Spark task: ``fn(*args)`` with the broadcast `sources`; (True, its result), or (False,
    the error of the inputs it raised) for the driver to raise as it is."""
    try:
        return True, with_sources(sources.value if sources is not None else None, fn, *args)
    except ExtractMlflowError as exc:
        return False, exc


class SparkPool:
    """A pool for :func:`~extract_mlflow.evaluation.workers.score_ranges` whose tasks are Spark
    jobs of one partition each, on `sc`'s cores (its default parallelism)."""

    def __init__(self, sc: Any, sources: Mapping[str, str] | None) -> None:
        self.sc = sc
        self.limit = max(1, int(sc.defaultParallelism))
        # as they are: a JSONL of sources is its index, each task reads its texts by offset
        self._sources = sc.broadcast(sources) if sources is not None else None
        self._threads = ThreadPoolExecutor(2 * self.limit, thread_name_prefix="extract-mlflow")

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        return self._threads.submit(self._job, fn, args)

    def _job(self, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        task = functools.partial(_task, self._sources, fn, args)
        ok, value = self.sc.parallelize([None], 1).map(task).collect()[0]
        if not ok:
            raise value
        return value  # type: ignore[no-any-return]

    def close(self) -> None:
        """Cancel the tasks not started, wait for the others, drop the broadcast sources."""
        self._threads.shutdown(wait=True, cancel_futures=True)
        if self._sources is not None:
            self._sources.unpersist()


def evaluate_ranges(
    sc: Any, gold: Any, pred: Any, cfg: Config, profile: str | None, given: tuple[Any, ...]
) -> Report:
    """The Report of `gold` and `pred` (see :func:`by_ranges`) scored by `sc`'s tasks."""
    sources, approvals, canaries = given
    try:
        src = (
            load_sources(sources, id_key=cfg.id_key) if isinstance(sources, str | Path) else sources
        )
        apps = load_approvals(approvals) if isinstance(approvals, str | Path) else approvals
    except ExtractMlflowError:
        check_files(gold, pred, cfg.id_key)  # a defect of the files is reported first
        raise
    extras = Extras(sources=src, approvals=apps, canaries=canaries)
    pool = SparkPool(sc, src)
    try:
        size = range_bytes(Path(gold), Path(pred), pool.limit)
        return score_files(
            gold, pred, cfg, profile=profile, extras=extras, range_bytes=size, pool=pool
        )
    finally:
        pool.close()
