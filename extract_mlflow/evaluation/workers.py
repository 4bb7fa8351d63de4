"""Scoring two JSONL files in worker processes (``--workers N``), merged into one evaluation.

The workers read the files themselves, in newline-aligned byte ranges
(:mod:`~extract_mlflow.io.ranges`: this process only reads blocks, hashes them and cuts them;
no document bytes go through the pipes), with the line codec every reader uses, in two
steps:

1. **the prediction file, indexed**: each range's lines filed by the hash of their id
   (:func:`~extract_mlflow.io.ranges.index_range`); this process joins the parts into one
   :class:`~extract_mlflow.io.stream.LineIndex` and writes it to a file the workers map;
2. **the gold file, scored**: each range's documents joined with their predictions (read back
   by offset through the index) and scored into a fresh compact part
   (:class:`~extract_mlflow.evaluation.accumulator.Evaluation` with a
   :class:`~extract_mlflow.io.spill.CountsSpill`).

This process merges the parts in range order and makes the checks that need a whole file
(repeated ids, unknown ids, the digests) as :class:`~extract_mlflow.io.stream.JoinedStream`
makes them, in its order: the report, the errors and their messages are those of one pass.
At most two ranges per worker are in flight: memory stays bounded whatever the number of
documents. A file that changes while the workers read it is an error.
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import sys
import tempfile
import threading
from array import array
from collections import deque
from collections.abc import Callable, Generator, Iterator, Mapping
from contextlib import closing, contextmanager, nullcontext, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

import numpy as np

from ..core.runtime import die_with_parent, gc_paused, usable_cores
from ..errors import InputError
from ..io.lines import read_gold
from ..io.loading import KEPT_LINES
from ..io.ranges import Cutter, Range, file_identity, index_range, read_range
from ..io.source_file import SourceUse
from ..io.spill import CountsSpill
from ..io.stream import (
    LineIndex,
    StreamSummary,
    first_gold_repeat,
    first_prediction_repeat,
    id_hash,
)
from .accumulator import DocumentInput, Evaluation
from .inputs import Setup

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

__all__ = ["RANGE_BYTES", "Pool", "WorkerPool", "score_ranges", "with_sources"]

log = logging.getLogger(__name__)

RANGE_BYTES = 4 << 20
"""bytes of a file per task of a worker process (whole lines: a little more)"""

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

_GROUP = 16
"""parts merged into one another before their group is merged into the run"""

_setup: tuple[bytes, Setup] | None = None
"""a worker's setup, and the bytes it came from"""
_sources: Mapping[str, str] | None = None
"""a worker's source texts (given once, when it starts)"""
_index: tuple[str | None, LineIndex] | None = None
"""a worker's map of the prediction index, and the file it maps"""


class Pending(Protocol[T_co]):
    """A task submitted to a :class:`Pool`."""

    def result(self) -> T_co: ...

    def cancel(self) -> object: ...


class Pool(Protocol):
    """What :func:`score_ranges` needs of a pool: its size (tasks in flight: twice that) and a
    way to run a task (a :class:`WorkerPool`, or the Spark engine's tasks)."""

    limit: int

    def submit(self, fn: Callable[..., T], *args: Any) -> Pending[T]: ...


def with_sources(sources: Mapping[str, str] | None, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a process of another kind of pool (a Spark task's Python worker),
    with `sources` as this process's source texts (what a :class:`WorkerPool`'s processes are
    given when they start)."""
    global _sources
    _sources = sources
    return fn(*args)


class WorkerPool:
    """At most `workers` processes (capped at :func:`~extract_mlflow.core.runtime.usable_cores`),
    started only when the first tasks are known: when `workers` tasks wait, or when the result
    of one is asked for, as many processes as there are tasks then, up to the cap (a pass of
    one batch starts one). Each task brings the setup pickled (a few KB, read once).

    The processes end with this one, however it ends (:func:`_start_worker`); leaving the
    ``with`` block cancels the tasks not started and waits for the running ones."""

    def __init__(self, workers: int, sources: Mapping[str, str] | None = None) -> None:
        """`sources`: the source texts every worker is given when it starts."""
        self.sources = sources
        self.limit = max(1, min(workers, usable_cores()))
        self._pool: ProcessPoolExecutor | None = None
        self._waiting: list[Task[Any]] = []

    def submit(self, fn: Callable[..., T], *args: Any) -> Task[T]:
        """Run ``fn(*args)`` in a worker (queued until the pool starts)."""
        task: Task[T] = Task(self, fn, args)
        if self._pool is not None:
            task.future = self._pool.submit(fn, *args)
            return task
        self._waiting.append(task)
        if len(self._waiting) >= self.limit:
            self.start()
        return task

    def start(self) -> None:
        """Start the processes for the tasks waiting (none when none waits), and hand them
        the tasks."""
        if self._pool is not None or not self._waiting:
            return
        import multiprocessing  # here: a single-process pass never loads the process pool
        from concurrent.futures import ProcessPoolExecutor

        method = start_method()
        n = min(self.limit, len(self._waiting))
        log.debug("starting %d worker processes (%s)", n, method)
        self._pool = ProcessPoolExecutor(
            n,
            mp_context=multiprocessing.get_context(method),
            initializer=_start_worker,
            initargs=(os.getpid(), self.sources),
        )
        for task in self._waiting:
            task.future = self._pool.submit(task.fn, *task.args)
        self._waiting.clear()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self._waiting.clear()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)


class Task(Generic[T]):
    """A task of a :class:`WorkerPool`: its future once the pool has started."""

    def __init__(self, pool: WorkerPool, fn: Callable[..., T], args: tuple[Any, ...]) -> None:
        self.pool, self.fn, self.args = pool, fn, args
        self.future: Future[T] | None = None

    def result(self) -> T:
        """The task's result (the pool starts now if it has not)."""
        if self.future is None:
            self.pool.start()
        assert self.future is not None
        return self.future.result()

    def cancel(self) -> None:
        """Cancel the task if it has not started."""
        if self.future is not None:
            self.future.cancel()


def start_method() -> str:
    """``fork`` on Linux while this process runs no other thread, else ``spawn``.

    A forked worker starts with the scorer already imported (a spawned one imports it again:
    ~0.3 s of CPU per worker, taken from the scoring on a machine with few cores). Forking is
    only safe with one thread: a lock another thread holds at the fork stays held in the child
    forever. The pool forks all its processes before it starts its own threads (it does so for
    the ``fork`` method), so the check here covers the caller's threads (an MLflow session's,
    a notebook's); with any, and on other systems, the workers are spawned."""
    if sys.platform == "linux" and threading.active_count() == 1:
        return "fork"
    return "spawn"


def _start_worker(parent: int, sources: Mapping[str, str] | None) -> None:
    """A worker's initializer: it ends when its `parent` ends (a killed parent leaves no
    worker behind, see :func:`~extract_mlflow.core.runtime.die_with_parent`: the pool starts
    its processes from the thread that runs the pass, which outlives them); Ctrl-C is the
    main process's to handle (it stops the pass with one message), not every worker's. It
    keeps the `sources`, for every task."""
    global _sources
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _sources = sources


def _setup_of(blob: bytes) -> Setup:
    global _setup
    if _setup is None or _setup[0] != blob:
        _setup = (blob, pickle.loads(blob))
    return _setup[1]


def _index_of(path: str | None) -> LineIndex:
    """The prediction index the file at `path` holds (mapped, not read; empty for None)."""
    global _index
    if _index is None or _index[0] != path:
        if path is None:
            empty = array("q")
            found = LineIndex(array("Q"), empty, empty, ordered=True)
        else:
            table = np.load(path, mmap_mode="r")
            found = LineIndex(
                table[0], table[1].view(np.int64), table[2].view(np.int64), ordered=True
            )
        _index = (path, found)
    return _index[1]


@dataclass
class _Scored:
    """A gold range's part and what this process needs of it for the checks of a whole pass."""

    part: Evaluation
    hashes: array[int]
    """the id hashes of its documents, in order"""
    used: array[int]
    """the index entries its documents were joined with"""
    defect: str | None
    """the error of a gold line that is not a document (the documents before it are scored)"""
    sources: tuple[Any, set[str]] | None
    """the sources its documents were given (:meth:`~SourceUse.noted`)"""


def _score_range(blob: bytes, r: Range, index: str | None, pred: str, score: bool) -> _Scored:
    """A worker's task: the gold documents of range `r` joined with their predictions and
    scored (when `score`: else only read, the pass fails on a defect of the prediction file)
    into a fresh compact part."""
    setup, lines = _setup_of(blob), _index_of(index)
    id_key = setup.config.id_key
    uses = SourceUse(_sources) if _sources is not None else None
    hashes, used = array("Q"), array("q")
    defect = None
    with gc_paused(), open(pred, "rb") if len(lines) else nullcontext() as f:
        part = Evaluation(setup, sink=CountsSpill())
        position = r.position
        for lineno, _, raw in read_range(r):
            doc_id, doc, problem = read_gold(raw, id_key)
            if doc_id is None or doc is None:
                defect = f"{r.path}:{lineno}: {problem}"
                break
            hashes.append(id_hash(doc_id))
            if score:
                found, failure, at = lines.lookup(f, doc_id, id_key) if f else (None, None, -1)
                if at >= 0:
                    used.append(at)
                source = uses.get(doc_id) if uses is not None else None
                part.update(DocumentInput(position, doc_id, doc, found, failure, source))
            position += 1
        part.fields.fold()  # its records' mistakes tallied: a part of tens of KB to send back
    return _Scored(part, hashes, used, defect, uses.noted() if uses is not None else None)


class _Merger:
    """Parts merged into `run` in range order, :data:`_GROUP` into one another first: each
    merge checks the two parts' documents are disjoint at the cost of both sizes, so merging
    every part straight into the run would cost the square of the number of documents."""

    def __init__(self, run: Evaluation) -> None:
        self.run = run
        self.group: Evaluation | None = None
        self.parts = 0

    def add(self, part: Evaluation) -> None:
        self.group = part if self.group is None else self.group.merge(part)
        self.parts += 1
        if self.parts >= _GROUP:
            self.flush()

    def flush(self) -> None:
        if self.group is not None:
            self.run.merge(self.group)
        self.group, self.parts = None, 0


def _in_order(
    pool: Pool, tasks: Iterator[tuple[Callable[..., T], tuple[Any, ...]]]
) -> Generator[T, None, None]:
    """The results of `tasks`, run in the pool, in their order: at most two tasks per
    process in flight (the ones not started are cancelled when the caller stops)."""
    pending: deque[Pending[T]] = deque()
    try:
        for fn, args in tasks:
            pending.append(pool.submit(fn, *args))
            if len(pending) >= 2 * pool.limit:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for task in pending:
            task.cancel()


@dataclass
class _Predictions:
    """The prediction file, indexed (step 1), and what the end of the pass checks of it."""

    cutter: Cutter
    index: LineIndex
    lines: int
    error: InputError | None


def _index_predictions(
    pool: Pool, pred: Path, id_key: str, size: int, summary: StreamSummary
) -> _Predictions:
    """Step 1: the prediction file's ranges indexed in the pool, joined here in range order up
    to the first defect of the file (kept, as the stream keeps it, for the pass's end)."""
    cutter = Cutter(pred, size)
    hashes, offsets, linenos = array("Q"), array("q"), array("q")
    lines, error = 0, None
    tasks = ((index_range, (r, id_key)) for r in cutter)
    try:
        with closing(_in_order(pool, tasks)) as parts:
            for part in parts:
                hashes.extend(part.hashes)
                offsets.extend(part.offsets)
                linenos.extend(part.linenos)
                lines += part.lines
                summary.unattributed.extend(part.unattributed)
                summary.unattributed_count += part.unattributed_count
                if part.error is not None:
                    error = part.error
                    break
    except InputError as exc:  # the file cannot be opened: a defect of the file itself
        error = exc
    del summary.unattributed[KEPT_LINES:]
    index = LineIndex(hashes, offsets, linenos, ordered=False)
    repeat = first_prediction_repeat(pred, id_key, index.suspects())
    return _Predictions(cutter, index, lines, repeat or error)


@contextmanager
def _shared(index: LineIndex) -> Iterator[str | None]:
    """`index` in a file the workers map (None when it is empty), removed afterwards."""
    if not len(index):
        yield None
        return
    fd, path = tempfile.mkstemp(prefix="extract-mlflow-index-", suffix=".npy")
    os.close(fd)
    try:
        shape = (3, len(index))
        table = np.lib.format.open_memmap(path, mode="w+", dtype=np.uint64, shape=shape)
        table[0], table[1] = index.hashes, index.offsets.view(np.uint64)
        table[2] = index.linenos.view(np.uint64)
        table.flush()
        del table  # written column by column: no copy of the whole index in memory
        yield path
    finally:
        with suppress(OSError):
            os.unlink(path)


def _score_gold(
    run: Evaluation,
    pool: Pool,
    gold: Path,
    pred: Path,
    index: str | None,
    size: int,
    found: _Predictions,
    used: SourceUse | None,
) -> tuple[Cutter, array[int], np.ndarray[Any, Any]]:
    """Step 2: the gold file's ranges scored in the pool and merged into `run` in range
    order; a gold line that is not a document raises its error (an earlier repeated id first,
    as the stream says it). The cutter, the documents' id hashes and the index entries used."""
    cutter = Cutter(gold, size)
    blob = pickle.dumps(run.setup)
    score = found.error is None
    tasks = ((_score_range, (blob, r, index, str(pred), score)) for r in cutter)
    hashes, joined = array("Q"), np.zeros(len(found.index), dtype=bool)
    merged = _Merger(run)
    with closing(_in_order(pool, tasks)) as parts:
        for done in parts:
            hashes.extend(done.hashes)
            if done.defect is not None:
                ids = np.frombuffer(hashes, dtype=np.uint64)
                raise first_gold_repeat(gold, run.setup.config.id_key, ids) or InputError(
                    done.defect
                )
            merged.add(done.part)
            joined[np.frombuffer(done.used, dtype=np.int64)] = True
            if used is not None and done.sources is not None:
                used.note(done.sources)
    merged.flush()
    return cutter, hashes, joined


def score_ranges(
    run: Evaluation,
    gold: str | Path,
    pred: str | Path,
    pool: Pool,
    size: int = RANGE_BYTES,
    sources: Mapping[str, str] | None = None,
) -> tuple[StreamSummary, SourceUse | None]:
    """Every gold document of `gold` joined with its prediction from `pred` and scored into
    `run` in the pool's processes, in ranges of `size` bytes; what a
    :class:`~extract_mlflow.io.stream.JoinedStream` would have learnt of the files and which
    of the `sources` (the pool's) the documents were given."""
    gold, pred = Path(gold), Path(pred)
    identities = file_identity(gold), file_identity(pred)
    id_key = run.setup.config.id_key
    summary = StreamSummary(str(gold), str(pred), mode="ranges")
    used = SourceUse(sources) if sources is not None else None
    found = _index_predictions(pool, pred, id_key, size, summary)
    with _shared(found.index) as index:
        cutter, hashes, joined = _score_gold(run, pool, gold, pred, index, size, found, used)
    if not hashes:
        raise InputError(f"{gold}: no documents (the file is empty)")
    repeat = first_gold_repeat(gold, id_key, np.frombuffer(hashes, dtype=np.uint64))
    if repeat is not None:
        raise repeat
    _unchanged(identities, gold, pred)
    if found.error is not None:
        raise found.error
    if found.lines == 0:
        raise InputError(f"{pred}: no predictions (the file is empty)")
    if not joined.all():
        with pred.open("rb") as f:
            summary.unknown_ids = found.index.unknown(f, joined, id_key)
    summary.gold_digest, summary.pred_digest = cutter.digest(), found.cutter.digest()
    return summary, used


def _unchanged(identities: tuple[Any, Any], gold: Path, pred: Path) -> None:
    """The workers read the ranges' bytes from the files after this process hashed them: an
    InputError if either file changed or was replaced meanwhile (its digest would not be of
    the bytes scored)."""
    for path, before in zip((gold, pred), identities, strict=True):
        if file_identity(path) != before:
            raise InputError(f"{path}: changed while it was being scored; score it again")
