"""`evaluate`: gold + predictions (files or rows) + config -> :class:`Report`."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from ..config import Config
from ..config_file import load_config
from ..core.runtime import gc_paused, usable_cores
from ..errors import ConfigError, ExtractMlflowError
from ..io.loading import (
    GoldSet,
    PredictionSet,
    gold_from_rows,
    load_gold,
    load_predictions,
    predictions_from_rows,
)
from ..io.source_file import SourceUse
from ..io.sources import load_sources, sources_from_gold
from ..io.spill import CountsSpill
from ..io.stream import JoinedStream, StreamSummary
from ..report import Report
from .accumulator import DocumentInput, Evaluation
from .inputs import Extras, Inputs, Setup, content_digest
from .workers import RANGE_BYTES, Pool, WorkerPool, score_ranges

log = logging.getLogger(__name__)

__all__ = [
    "Extras",
    "content_digest",
    "evaluate",
    "load_inputs",
    "resolve_call_config",
    "resolve_config",
    "score_files",
    "score_sets",
]

NOT_IN_WORKERS = (
    "workers=%d: inputs that are not two JSONL files (rows, loaded sets, a pipe, a --source-key "
    "or stream=False) are scored in this process"
)
"""the note :func:`evaluate` logs (a warning) when it cannot give `workers` their part"""

GoldInput = str | Path | Iterable[Mapping[str, Any]] | GoldSet
PredInput = str | Path | Iterable[Mapping[str, Any] | str] | PredictionSet


def resolve_config(
    config: Config | str | Path | Mapping[str, Any] | None, id_key: str | None
) -> Config:
    if isinstance(config, Config):
        cfg = config
    elif isinstance(config, Mapping):
        from ..config_file import config_from_mapping

        cfg = config_from_mapping(dict(config))
    else:
        cfg = load_config(config)
    if id_key is not None and id_key != cfg.id_key:
        cfg = cfg.model_copy(update={"id_key": id_key})
    return cfg


def load_inputs(gold: GoldInput, pred: PredInput, config: Config) -> tuple[GoldSet, PredictionSet]:
    """Read gold and predictions from files or rows under the config's id key."""
    if isinstance(gold, GoldSet):
        gs = gold
    elif isinstance(gold, str | Path):
        gs = load_gold(gold, config.id_key)
    else:
        gs = gold_from_rows(gold, config.id_key)
    if isinstance(pred, PredictionSet):
        ps = pred
    elif isinstance(pred, str | Path):
        ps = load_predictions(pred, config.id_key)
    else:
        ps = predictions_from_rows(pred, config.id_key)
    return gs, ps


def evaluate(
    gold: GoldInput,
    pred: PredInput,
    config: Config | str | Path | Mapping[str, Any] | None = None,
    *,
    id_key: str | None = None,
    text_key: str | None = None,
    profile: str | None = None,
    sources: str | Path | Mapping[str, str] | None = None,
    source_key: str | None = None,
    approvals: str | Path | Mapping[tuple[str, str], str | None] | None = None,
    slice_by: Sequence[str] | None = None,
    canaries: Sequence[str] | None = None,
    stream: bool | None = None,
    workers: int = 1,
) -> Report:
    """Score predictions against gold, field by field.

    A prediction whose `text_key` (default ``output``) holds a wiki/markdown page is parsed:
    the rows of its table become the list scored against the gold line's ``rows``, and its
    sections give the layout score under `profile` (else the gold line's topic).

    Text fidelity runs when sources are given: `sources` (a folder of ``<id>.txt|.md|.pdf``, a JSONL
    of ``{id, text}``, or a mapping id -> text) or `source_key` (a field of the gold line);
    `approvals` lists (id, path) pairs a reviewer accepted; `canaries` are prompt-injection canaries
    planted in the sources (``INSTRUCTION => PAYLOAD``, see
    :mod:`extract_mlflow.fidelity.canaries`), giving ``injection_obeyed_rate``. Document-structure
    metrics run when gold lines carry their fields (``tables``, ``blocks``, ``regions``,
    ``boundaries``); `slice_by` names gold attributes to report every metric by.

    `gold` and `pred` are JSONL paths or rows (mappings; a prediction row may also be raw JSON
    text). `config` is a :class:`Config`, a path to a TOML/JSON file, a mapping, or None.

    Two JSONL paths are streamed (`stream` None or True): read in one pass, joined on id
    without holding the documents, scored by a compact evaluation
    (:mod:`~extract_mlflow.evaluation.compact`), so memory does not grow with the number of
    documents beyond a few tens of bytes each. The report is the one loading both files gives,
    except that its documents do not keep their per-document mistakes; ``stream=False``
    loads and keeps everything (rows, loaded sets and ``source_key`` are never streamed, and
    score in this process: :data:`NOT_IN_WORKERS`). A streamed pass scores in `workers`
    processes (``0``: one per core) and merges their parts: the same report as one process.

    >>> r = evaluate([{"id": 1, "total": 10}], [{"id": 1, "total": "10.00"}])
    >>> r.micro.f1
    1.0
    """
    workers = resolve_workers(workers)
    cfg = resolve_call_config(config, id_key, text_key, slice_by)
    if stream is not False and source_key is None and _streamable(gold, pred):
        assert isinstance(gold, str | Path) and isinstance(pred, str | Path)
        return _stream(gold, pred, cfg, profile, sources, approvals, canaries, workers)
    gs, ps = _loaded(gold, pred, cfg, workers)
    extras = Extras(
        sources=_sources(sources, source_key, gs, cfg),
        source_key=source_key,
        approvals=_approvals(approvals),
        canaries=tuple(canaries or ()),
    )
    return score_sets(gs, ps, cfg, profile=profile, extras=extras)


def _loaded(
    gold: GoldInput, pred: PredInput, config: Config, workers: int
) -> tuple[GoldSet, PredictionSet]:
    """:func:`load_inputs`, with the warning that `workers` go unused (:data:`NOT_IN_WORKERS`)."""
    if workers > 1:
        log.warning(NOT_IN_WORKERS, workers)
    return load_inputs(gold, pred, config)


def resolve_call_config(
    config: Config | str | Path | Mapping[str, Any] | None,
    id_key: str | None,
    text_key: str | None,
    slice_by: Sequence[str] | None,
) -> Config:
    """The config of a call of :func:`evaluate` (or of the Spark engine's): `config` resolved,
    with the call's `id_key`, `text_key` and `slice_by` when given."""
    cfg = resolve_config(config, id_key)
    if text_key is not None and text_key != cfg.text_key:
        cfg = cfg.model_copy(update={"text_key": text_key})
    if slice_by:
        statistics = cfg.statistics.model_copy(update={"slice_by": tuple(slice_by)})
        cfg = cfg.model_copy(update={"statistics": statistics})
    return cfg


def _streamable(gold: GoldInput, pred: PredInput) -> bool:
    """Two regular files (a pipe or a device cannot be read twice: it is loaded)."""
    paths = [p for p in (gold, pred) if isinstance(p, str | Path)]
    return len(paths) == 2 and all(Path(p).is_file() for p in paths)


def _stream(
    gold: str | Path,
    pred: str | Path,
    cfg: Config,
    profile: str | None,
    sources: str | Path | Mapping[str, str] | None,
    approvals: str | Path | Mapping[tuple[str, str], str | None] | None,
    canaries: Sequence[str] | None = None,
    workers: int = 1,
) -> Report:
    try:
        extras = Extras(
            _sources(sources, None, None, cfg),
            None,
            _approvals(approvals),
            canaries=tuple(canaries or ()),
        )
    except ExtractMlflowError:
        check_files(gold, pred, cfg.id_key)  # a defect of the files is reported first
        raise
    return score_files(gold, pred, cfg, profile=profile, extras=extras, workers=workers)


def _approvals(
    approvals: str | Path | Mapping[tuple[str, str], str | None] | None,
) -> Mapping[tuple[str, str], str | None] | None:
    if not isinstance(approvals, str | Path):
        return approvals
    from ..fidelity.approvals import load_approvals  # text fidelity (~15 ms): for approvals

    return load_approvals(approvals)


def check_files(gold: str | Path, pred: str | Path, id_key: str) -> None:
    """Read both files as a streaming pass would (its InputError, if any), scoring nothing."""
    for _ in JoinedStream(gold, pred, id_key):
        pass


def _sources(
    sources: str | Path | Mapping[str, str] | None,
    source_key: str | None,
    gs: GoldSet | None,
    config: Config,
) -> Mapping[str, str] | None:
    if sources is not None and source_key is not None:
        raise ConfigError("give sources as files (--sources) or as a gold field (--source-key)")
    if isinstance(sources, str | Path):
        return load_sources(sources, id_key=config.id_key)
    if source_key is not None and gs is not None:
        return sources_from_gold(gs.docs, source_key)
    return sources


def score_sets(
    gs: GoldSet,
    ps: PredictionSet,
    config: Config,
    *,
    profile: str | None = None,
    extras: Extras | None = None,
) -> Report:
    """Score loaded inputs (what :func:`evaluate` does after loading): one
    :class:`~extract_mlflow.evaluation.accumulator.Evaluation` updated with every gold
    document in gold order, then its result."""
    extras = extras or Extras()
    failures, preds = ps.parse_failures, ps.docs
    setup: Setup | None = Setup.of(config, profile, extras)
    while setup is not None:  # twice at most: see Evaluation.rescored_setup
        run = Evaluation(setup)
        used = SourceUse(extras.sources) if extras.sources is not None else None
        with gc_paused():
            for position, (doc_id, gold) in enumerate(gs.docs.items()):
                source = used.get(doc_id) if used is not None else None
                doc = DocumentInput(
                    position, doc_id, gold, preds.get(doc_id), failures.get(doc_id), source
                )
                run.update(doc)
        setup = run.rescored_setup()
    return run.result(Inputs.of(gs, ps, extras, used))


def score_files(
    gold: str | Path,
    pred: str | Path,
    config: Config,
    *,
    profile: str | None = None,
    extras: Extras | None = None,
    workers: int = 1,
    range_bytes: int = RANGE_BYTES,
    pool: Pool | None = None,
) -> Report:
    """Score two JSONL files in one streaming pass (what :func:`evaluate` does with paths):
    the setup of the config (with the mixed paths of a first pass when it met some, see
    :meth:`~extract_mlflow.evaluation.accumulator.Evaluation.rescored_setup`),
    the documents joined on id as they are read
    (:class:`~extract_mlflow.io.stream.JoinedStream`), one compact
    :class:`~extract_mlflow.evaluation.accumulator.Evaluation`, then its result. The same
    report, errors and messages as :func:`score_sets` on the loaded files.

    With `workers` > 1, the files are read in ranges of `range_bytes` bytes of whole lines by
    that many processes (at most one per core and one per range: see
    :class:`~.workers.WorkerPool`), which index the prediction file, then join and score the
    gold documents, each range into a fresh compact part, merged here in range order
    (:mod:`~extract_mlflow.evaluation.workers`). A `pool` given runs those tasks instead
    (the Spark engine's), whatever `workers` says."""
    extras = extras or Extras()
    with _files_first(gold, pred, config.id_key):
        setup: Setup | None = Setup.of(config, profile, extras)
    many = pool is None and workers > 1
    with WorkerPool(workers, extras.sources) if many else nullcontext(pool) as pool:
        while setup is not None:  # twice at most: see Evaluation.rescored_setup
            run = Evaluation(setup, sink=CountsSpill())
            summary, used = _pass(run, gold, pred, extras, pool, range_bytes)
            setup = run.rescored_setup()
            if setup is not None:
                log.debug("paths with partly measurements as gold values: scored again")
    return run.result(_stream_inputs(summary, extras, used))


@contextmanager
def _files_first(gold: str | Path, pred: str | Path, id_key: str) -> Iterator[None]:
    """A ConfigError raised inside comes after the files' own defect, if they have one: that
    one is reported first."""
    try:
        yield
    except ConfigError:
        check_files(gold, pred, id_key)
        raise


def _pass(
    run: Evaluation,
    gold: str | Path,
    pred: str | Path,
    extras: Extras,
    pool: Pool | None,
    range_bytes: int,
) -> tuple[StreamSummary, SourceUse | None]:
    """Every gold document joined and scored into `run` (in `pool` when given); what the
    stream learnt of the files and which sources the documents were given."""
    sources = extras.sources
    if pool is not None:
        return score_ranges(run, gold, pred, pool, range_bytes, sources)
    used = SourceUse(sources) if sources is not None else None
    joined = JoinedStream(gold, pred, run.setup.config.id_key)
    with gc_paused():
        for j in joined:
            source = used.get(j.id) if used is not None else None
            run.update(DocumentInput(j.position, j.id, j.gold, j.pred, j.failure, source))
    return joined.summary, used


def _stream_inputs(summary: StreamSummary, extras: Extras, used: SourceUse | None) -> Inputs:
    return Inputs(
        gold_source=summary.gold_source,
        pred_source=summary.pred_source,
        gold_digest=summary.gold_digest,
        pred_digest=summary.pred_digest,
        unknown_ids=tuple(summary.unknown_ids),
        unattributed=tuple(summary.unattributed),
        unattributed_count=summary.unattributed_count,
        **Inputs.extras_facts(extras, used),
    )


def resolve_workers(workers: int) -> int:
    """The number of processes `workers` asks for (``0``: one per core), at most one per core
    this process may use (:func:`~extract_mlflow.core.runtime.usable_cores`): more would only
    take turns on the same cores, with a copy of the scorer each."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
        raise ConfigError(f"workers must be 0 (one per core) or a positive number, not {workers}")
    cores = usable_cores()
    return min(workers or cores, cores)
