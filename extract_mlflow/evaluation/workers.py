"""Scoring a streamed pass in worker processes (``--workers N``), merged into one evaluation.

Each task scores a batch of consecutive gold documents into a fresh compact part
(:class:`~extract_mlflow.evaluation.accumulator.Evaluation` with a
:class:`~extract_mlflow.io.spill.CountsSpill`); this process merges the parts in batch order,
so the report is the one of a single pass. At most two batches per worker are in flight:
memory stays bounded whatever the number of documents.

Two kinds of batch, in this order:

- **raw pairs** (:func:`score_lockstep`), while prediction line *i* is gold document *i*'s:
  this process only reads and hashes lines (:class:`~extract_mlflow.io.lockstep.RawPairs`);
  the workers parse, join (:func:`~extract_mlflow.io.lockstep.join_in_step`) and score. A
  worker that finds its batch out of step returns None; parts of the batches before it are
  merged, those after it are dropped, and
- **documents** (:func:`score_documents`): from that batch's start, a
  :class:`~extract_mlflow.io.stream.JoinedStream` resumed there joins in this process (it
  indexes the prediction file, or meets the defect and raises its error) and the workers
  score the parsed documents.
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
from array import array
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path

from ..core.runtime import gc_paused
from ..io.lockstep import RawBatch, RawPair, RawPairs, join_in_step
from ..io.spill import CountsSpill
from ..io.stream import Resume, id_hash
from .accumulator import DocumentInput, Evaluation, Setup

__all__ = ["BATCH", "score_documents", "score_lockstep", "worker_pool"]

log = logging.getLogger(__name__)

BATCH = 1000
"""documents per task of a worker process"""

Lockstep = tuple[Resume, "array[int]", "array[int]"]
"""where the lockstep batches end, the id hashes and line offsets of the gold documents before"""

_worker_setup: Setup | None = None


def worker_pool(setup: Setup, workers: int) -> ProcessPoolExecutor:
    """`workers` spawned processes, each holding `setup` for its tasks."""
    context = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(
        workers, mp_context=context, initializer=_start_worker, initargs=(setup,)
    )


def _start_worker(setup: Setup) -> None:
    """A worker's initializer: the setup of every task; Ctrl-C is the main process's to
    handle (it stops the pass with one message), not every worker's."""
    global _worker_setup
    _worker_setup = setup
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _score_batch(batch: list[DocumentInput]) -> Evaluation:
    """A worker's task: a fresh compact part with `batch` scored into it."""
    assert _worker_setup is not None
    part = Evaluation(_worker_setup, sink=CountsSpill())
    with gc_paused():
        for doc in batch:
            part.update(doc)
    part.fields.fold()  # its records' mistakes tallied: a part of tens of KB to send back
    return part


def _score_pairs(pairs: list[RawPair], position: int) -> tuple[Evaluation, array[int]] | None:
    """A worker's task: the part of a batch of raw pairs and its gold ids' hashes, or None
    when the batch is not in lockstep."""
    assert _worker_setup is not None
    with gc_paused():
        joined = join_in_step(pairs, position, _worker_setup.config.id_key)
        if joined is None:
            return None
        docs = [DocumentInput(j.position, j.id, j.gold, j.pred, j.failure) for j in joined]
        hashes = array("Q", [id_hash(j.id) for j in joined])
    return _score_batch(docs), hashes


def _batches(docs: Iterator[DocumentInput], size: int) -> Iterator[list[DocumentInput]]:
    batch: list[DocumentInput] = []
    for doc in docs:
        batch.append(doc)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def score_documents(
    run: Evaluation,
    docs: Iterator[DocumentInput],
    pool: ProcessPoolExecutor,
    workers: int,
    size: int = BATCH,
) -> None:
    """Score `docs` in the pool's `workers` processes into `run`, in batches of `size`: at most
    two batches per worker in flight, the parts merged in batch order."""
    pending: deque[Future[Evaluation]] = deque()
    try:
        for batch in _batches(docs, size):
            pending.append(pool.submit(_score_batch, batch))
            if len(pending) >= 2 * workers:
                run.merge(pending.popleft().result())
        while pending:
            run.merge(pending.popleft().result())
    finally:
        for future in pending:
            future.cancel()


_Flight = deque[tuple[RawBatch, "Future[tuple[Evaluation, array[int]] | None]"]]


def score_lockstep(
    run: Evaluation,
    gold: str | Path,
    pred: str | Path,
    pool: ProcessPoolExecutor,
    workers: int,
    size: int = BATCH,
) -> Lockstep:
    """Score the leading lockstep pairs of the two files in the pool into `run`, in batches of
    `size` raw pairs; where a :class:`~extract_mlflow.io.stream.JoinedStream` takes over (the
    start of the first batch not in step, or where the pairs ended), with the id hashes and
    gold line offsets of the documents scored."""
    reader = RawPairs(gold, pred, size)
    hashes, offsets = array("Q"), array("Q")
    pending: _Flight = deque()
    stop: Resume | None = None
    batches = reader.__iter__()
    try:
        for batch in batches:
            pending.append((batch, pool.submit(_score_pairs, batch.pairs, batch.start.position)))
            while stop is None and len(pending) >= 2 * workers:
                stop = _merge_next(run, pending, hashes, offsets)
            if stop is not None:
                break
        while stop is None and pending:
            stop = _merge_next(run, pending, hashes, offsets)
    finally:
        batches.close()
        for _, future in pending:
            future.cancel()  # batches after the one out of step: the stream does them
    rest = stop or reader.rest
    assert rest is not None
    log.debug(
        "%d documents parsed by the workers in lockstep; this process joins from gold line %d",
        rest.position,
        rest.gold_line + 1,
    )
    return rest, hashes, offsets


def _merge_next(
    run: Evaluation, pending: _Flight, hashes: array[int], offsets: array[int]
) -> Resume | None:
    """Merge the first batch in flight; its start if it was not in lockstep."""
    batch, future = pending.popleft()
    done = future.result()
    if done is None:
        return batch.start
    part, part_hashes = done
    run.merge(part)
    hashes.extend(part_hashes)
    offsets.extend(batch.offsets)
    return None
