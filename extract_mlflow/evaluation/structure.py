"""Structure scores outside an evaluation: score a set of documents (:func:`score_structure`),
summarize scored documents (:func:`summarize`) and their values as a frame
(:func:`structure_frame`), with the engine's statistics (:data:`~.families.TOOLS`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..core.statistics import StatisticsConfig
from ..errors import InputError
from ..structure.records import StructureRecords
from ..structure.score import DocumentStructure, StructureSummary, score_document
from ..structure.section import StructureConfig
from .families import TOOLS

if TYPE_CHECKING:
    import pandas as pd


def _keyed(docs: Mapping[str, Any] | Iterable[Mapping[str, Any]], id_key: str) -> dict[str, Any]:
    if isinstance(docs, Mapping):
        return {str(k): v for k, v in docs.items()}
    out: dict[str, Any] = {}
    for doc in docs:
        if doc.get(id_key) is None:
            raise InputError(f"a document lacks its id key '{id_key}'")
        out[str(doc[id_key])] = doc
    return out


def score_structure(
    gold_docs: Mapping[str, Mapping[str, Any]] | Iterable[Mapping[str, Any]],
    pred_docs: Mapping[str, Mapping[str, Any] | None] | Iterable[Mapping[str, Any]],
    config: StructureConfig | None = None,
    statistics: StatisticsConfig | None = None,
    *,
    id_key: str = "id",
) -> StructureSummary:
    """Score every gold document's structure fields against its prediction, sliced and
    resampled as `statistics` say (the defaults of ``[statistics]`` when None).

    Documents are mappings ``id → line`` or lists of lines carrying ``id_key``; a gold
    document without a prediction is scored against an empty one.
    """
    cfg, stats = config or StructureConfig(), statistics or StatisticsConfig()
    gold, pred = _keyed(gold_docs, id_key), _keyed(pred_docs, id_key)
    scored = [score_document(i, g, pred.get(i), cfg, stats.slice_by) for i, g in gold.items()]
    return summarize(scored, cfg, stats)


def summarize(
    documents: Iterable[DocumentStructure],
    config: StructureConfig,
    statistics: StatisticsConfig | None = None,
) -> StructureSummary:
    """The summary of the scored documents (in gold order): headline values with their
    intervals, the slices and the documents' notes."""
    stats = statistics or StatisticsConfig()
    records = StructureRecords(stats.slice_by)
    for position, doc in enumerate(documents):
        records.add(position, doc)
    return records.summary(config, stats, TOOLS)


def structure_frame(summary: StructureSummary, ids: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per document: id, then its structure values (the counts frame's columns,
    without their ``structure/`` prefix). `ids`: the documents' ids in gold order (by default
    those of the listed documents, when every document is listed)."""
    import pandas as pd

    if ids is None:
        if summary.count != len(summary.documents):
            raise ValueError("not every document is listed: give the ids")
        ids = [d.id for d in summary.documents]
    columns = summary.frame_columns(0, len(ids))
    prefix = f"{summary.name}/"
    return pd.DataFrame(
        {"id": list(ids), **{k.removeprefix(prefix): v for k, v in columns.items()}}
    )
