"""The lockstep join in two halves, for parsing in other processes: one reader of raw line
pairs (gold line *i*, prediction line *i*) in batches, and the join of one batch wherever it
is parsed.

:class:`RawPairs` only reads lines (and hashes them): it never parses, so it keeps up with
several processes that do. :func:`join_in_step` parses a batch with the rules of
:class:`~extract_mlflow.io.stream.JoinedStream` (:func:`~extract_mlflow.io.stream.read_gold`,
:func:`~extract_mlflow.io.stream.in_step`) and gives its documents, or None when any pair of
the batch is not a clean lockstep pair (a gold line with a defect, a prediction line of
another id). Such a batch, and everything after it, is the stream's: a
:class:`~extract_mlflow.io.stream.JoinedStream` resumed at the batch's start
(:attr:`RawBatch.start`) reads it again and joins, checks and reports exactly as one pass
from the start would (it indexes the prediction file, or raises the gold file's error after
its earlier checks). Speculating costs at most the batches in flight behind it (scored by
the workers, then dropped).
"""

from __future__ import annotations

from array import array
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from .loading import RawLines, _LineError, _Oversized, _sha256
from .stream import Joined, Resume, in_step, read_gold

RawPair = tuple[int, "bytes | _Oversized", int, "bytes | _Oversized"]
"""(gold line number, gold line, prediction line number, prediction line)"""


@dataclass(slots=True)
class RawBatch:
    """Consecutive line pairs, and where they start in both files."""

    start: Resume
    pairs: list[RawPair]
    offsets: array[int]
    """the byte offset of each gold line"""


class RawPairs:
    """Batches of `size` raw (gold line, prediction line) pairs from the start of both files.

    Reading ends at the gold file's end, the prediction file's end or a defect of either file
    (the lines of an unfinished batch are not given); `rest` then says where to resume:
    after the last batch when the gold file ended, else at the start of the unfinished batch.
    """

    def __init__(self, gold: str | Path, pred: str | Path, size: int) -> None:
        self.gold, self.pred, self.size = Path(gold), Path(pred), max(1, size)
        self.rest: Resume | None = None

    def __iter__(self) -> Generator[RawBatch, None, None]:
        ghasher, phasher = _sha256(), _sha256()
        g, p = RawLines(self.gold, ghasher), RawLines(self.pred, phasher)
        golds, preds = g.__iter__(), p.__iter__()

        def here(position: int) -> Resume:
            return Resume(
                position, g.end, g.lineno, ghasher.copy(), p.end, p.lineno, phasher.copy()
            )

        position = 0
        try:
            while True:
                start = here(position)
                pairs: list[RawPair] = []
                offsets = array("Q")
                try:
                    while len(pairs) < self.size:
                        gold = next(golds, None)
                        if gold is None:  # the gold file's end: the batch is whole as it is
                            if pairs:
                                yield RawBatch(start, pairs, offsets)
                            self.rest = here(position + len(pairs))
                            return
                        pred = next(preds, None)
                        if pred is None:
                            self.rest = start
                            return
                        pairs.append((gold[0], gold[2], pred[0], pred[2]))
                        offsets.append(gold[1])
                except InputError:  # the stream meets the defect again, and words it
                    self.rest = start
                    return
                yield RawBatch(start, pairs, offsets)
                position += len(pairs)
        finally:
            golds.close()
            preds.close()


def join_in_step(pairs: list[RawPair], position: int, id_key: str) -> list[Joined] | None:
    """The documents of a batch whose first pair is gold document `position`, joined as
    :class:`~extract_mlflow.io.stream.JoinedStream` joins pairs in lockstep; None when a pair
    is not one (the stream must take over at the batch's start)."""
    out: list[Joined] = []
    for k, (_, gold_raw, pred_line, pred_raw) in enumerate(pairs):
        try:
            doc, doc_id = read_gold(gold_raw, id_key)
        except _LineError:
            return None
        found = in_step((pred_line, 0, pred_raw), doc_id, id_key)
        if found is None:
            return None
        out.append(Joined(position + k, doc_id, doc, *found))
    return out
