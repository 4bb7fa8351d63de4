"""Scoring a streamed pass in worker processes (``--workers N``), merged into one evaluation.

Each task scores a batch of consecutive gold documents into a fresh compact part
(:class:`~extract_mlflow.evaluation.accumulator.Evaluation` with a
:class:`~extract_mlflow.io.spill.CountsSpill`); this process merges the parts in batch order,
so the report is the one of a single pass. At most two batches per worker are in flight:
memory stays bounded whatever the number of documents.

Two kinds of batch, in this order:

- **raw pairs** (:func:`score_lockstep`), while prediction line *i* is gold document *i*'s
  and both files are plain lines: this process only reads blocks, hashes them and finds the
  line ends (:class:`~extract_mlflow.io.lockstep.RawPairs`); the workers read their runs'
  bytes from the files themselves (:class:`~extract_mlflow.io.lockstep.RawSpan`: no document
  bytes through the pipes; a file that changes meanwhile is an error), cut the lines, parse,
  join (:func:`~extract_mlflow.io.lockstep.join_in_step`) and score. A worker that finds its
  batch out of step returns None; parts of the batches before it are merged, those after it
  are dropped, and
- **documents** (:func:`score_documents`): from that batch's start, a
  :class:`~extract_mlflow.io.stream.JoinedStream` resumed there joins in this process (it
  indexes the prediction file, or meets the defect and raises its error) and the workers
  score the parsed documents.
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import sys
import threading
from array import array
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ..core.runtime import die_with_parent, gc_paused, usable_cores
from ..errors import InputError
from ..io.lockstep import FileIdentity, RawPairs, RawSpan, file_identity, join_in_step
from ..io.spill import CountsSpill
from ..io.stream import Resume, id_hash
from .accumulator import DocumentInput, Evaluation
from .inputs import Setup

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

__all__ = ["BATCH", "WorkerPool", "score_documents", "score_lockstep"]

log = logging.getLogger(__name__)

BATCH = 1000
"""documents per task of a worker process"""

Lockstep = tuple[Resume, "array[int]"]
"""where the lockstep batches end, and the id hashes of the gold documents before"""

T = TypeVar("T")

_GROUP = 16
"""parts merged into one another before their group is merged into the run"""

_setup: tuple[bytes, Setup] | None = None
"""a worker's setup, and the bytes it came from"""


class WorkerPool:
    """At most `workers` processes (capped at :func:`~extract_mlflow.core.runtime.usable_cores`),
    started only when the first tasks are known: when `workers` tasks wait, or when the result
    of one is asked for, as many processes as there are tasks then, up to the cap (a pass of
    one batch starts one). Each task brings the setup pickled (a few KB, read once).

    The processes end with this one, however it ends (:func:`_start_worker`); leaving the
    ``with`` block cancels the tasks not started and waits for the running ones."""

    def __init__(self, workers: int) -> None:
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
            initargs=(os.getpid(),),
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


def _start_worker(parent: int) -> None:
    """A worker's initializer: it ends when its `parent` ends (a killed parent leaves no
    worker behind, see :func:`~extract_mlflow.core.runtime.die_with_parent`: the pool starts
    its processes from the thread that runs the pass, which outlives them); Ctrl-C is the
    main process's to handle (it stops the pass with one message), not every worker's."""
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _setup_of(blob: bytes) -> Setup:
    global _setup
    if _setup is None or _setup[0] != blob:
        _setup = (blob, pickle.loads(blob))
    return _setup[1]


def _score_batch(blob: bytes, batch: bytes) -> Evaluation:
    """A worker's task: a fresh compact part with the pickled documents of `batch` scored
    into it. Pickled by the caller so that the documents are this function's alone: they are
    let go before the collector runs again (switched back on, it first walks the young
    objects, which would be every document still held: ~7 ms a task)."""
    with gc_paused():
        docs: list[DocumentInput] = pickle.loads(batch)
        part = Evaluation(_setup_of(blob), sink=CountsSpill())
        for doc in docs:
            part.update(doc)
        docs.clear()
        part.fields.fold()  # its records' mistakes tallied: a part of tens of KB to send back
    return part


_Scored = tuple[Evaluation, "array[int]"]
"""a lockstep run's part and its gold ids' hashes"""


def _score_pairs(blob: bytes, span: RawSpan) -> _Scored | None:
    """A worker's task: the part of a run of raw lines (read here from both files) and its
    gold ids' hashes, or None when the run is not in lockstep (the part scored so far is then
    dropped)."""
    run = span.read()
    setup = _setup_of(blob)
    hashes = array("Q")
    with gc_paused():
        part = Evaluation(setup, sink=CountsSpill())
        for j in join_in_step(run.pairs(), run.position, setup.config.id_key):
            if j is None:
                return None
            hashes.append(id_hash(j.id))
            part.update(DocumentInput(j.position, j.id, j.gold, j.pred, j.failure))
        part.fields.fold()  # its records' mistakes tallied: a part of tens of KB to send back
    return part, hashes


def _batches(docs: Iterator[DocumentInput], size: int) -> Iterator[list[DocumentInput]]:
    batch: list[DocumentInput] = []
    for doc in docs:
        batch.append(doc)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


class _Merger:
    """Parts merged into `run` in batch order, :data:`_GROUP` into one another first: each
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


def score_documents(
    run: Evaluation,
    docs: Iterator[DocumentInput],
    pool: WorkerPool,
    size: int = BATCH,
) -> None:
    """Score `docs` in the pool's processes into `run`, in batches of `size`: at most two
    batches per process in flight, the parts merged in batch order."""
    pending: deque[Task[Evaluation]] = deque()
    merged = _Merger(run)
    blob = pickle.dumps(run.setup)
    try:
        for batch in _batches(docs, size):
            pending.append(pool.submit(_score_batch, blob, pickle.dumps(batch)))
            if len(pending) >= 2 * pool.limit:
                merged.add(pending.popleft().result())
        while pending:
            merged.add(pending.popleft().result())
        merged.flush()
    finally:
        for task in pending:
            task.cancel()


_Flight = deque[tuple[Resume, "Task[_Scored | None]"]]


def score_lockstep(
    run: Evaluation,
    gold: str | Path,
    pred: str | Path,
    pool: WorkerPool,
    size: int = BATCH,
) -> Lockstep:
    """Score the leading lockstep pairs of the two files in the pool into `run`, in batches of
    `size` raw pairs; where a :class:`~extract_mlflow.io.stream.JoinedStream` takes over (the
    start of the first batch not in step, or where the pairs ended), with the id hashes of
    the documents scored."""
    reader = RawPairs(gold, pred, size)
    gold, pred = Path(gold), Path(pred)
    identities = file_identity(gold), file_identity(pred)
    hashes = array("Q")
    pending: _Flight = deque()
    stop: Resume | None = None
    batches = reader.__iter__()
    merged = _Merger(run)
    blob = pickle.dumps(run.setup)
    try:
        for batch in batches:
            task = pool.submit(_score_pairs, blob, RawSpan.of(batch, gold, pred))
            pending.append((batch.start, task))
            while stop is None and len(pending) >= 2 * pool.limit:
                stop = _merge_next(merged, pending, hashes)
            if stop is not None:
                break
        while stop is None and pending:
            stop = _merge_next(merged, pending, hashes)
        merged.flush()
    finally:
        batches.close()
        for _, task in pending:
            task.cancel()  # batches after the one out of step: the stream does them
    _unchanged(identities, gold, pred)
    rest = stop or reader.rest
    assert rest is not None
    log.debug(
        "%d documents parsed by the workers in lockstep; this process joins from gold line %d",
        rest.position,
        rest.gold_line + 1,
    )
    return rest, hashes


def _merge_next(
    merged: _Merger,
    pending: _Flight,
    hashes: array[int],
) -> Resume | None:
    """Merge the first batch in flight; its start if it was not in lockstep."""
    start, task = pending.popleft()
    done = task.result()
    if done is None:
        return start
    part, part_hashes = done
    merged.add(part)
    hashes.extend(part_hashes)
    return None


def _unchanged(
    identities: tuple[FileIdentity | None, FileIdentity | None], gold: Path, pred: Path
) -> None:
    """The workers read the runs' bytes from the files after this process hashed them: an
    InputError if either file changed or was replaced meanwhile (its digest would not be of
    the bytes scored)."""
    for path, before in zip((gold, pred), identities, strict=True):
        if file_identity(path) != before:
            raise InputError(f"{path}: changed while it was being scored; score it again")
