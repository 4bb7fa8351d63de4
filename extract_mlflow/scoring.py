"""`evaluate`: gold + predictions (files or rows) + config -> :class:`Report`."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ._runtime import gc_paused
from .config import Config, load_config
from .fields import CATEGORIES, PARSE_FAILURE, DocCounts, ErrorRecord, FieldScorer
from .loading import (
    GoldSet,
    PredictionSet,
    gold_from_rows,
    load_gold,
    load_predictions,
    predictions_from_rows,
)
from .report import EXAMPLES_PER_FIELD, Counts, DocumentResult, FieldResult, Report

GoldInput = str | Path | Iterable[Mapping[str, Any]] | GoldSet
PredInput = str | Path | Iterable[Mapping[str, Any] | str] | PredictionSet


def resolve_config(
    config: Config | str | Path | Mapping[str, Any] | None, id_key: str | None
) -> Config:
    if isinstance(config, Config):
        cfg = config
    elif isinstance(config, Mapping):
        from .config import config_from_mapping

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
) -> Report:
    """Score predictions against gold, field by field.

    `gold` and `pred` are JSONL paths or rows (mappings; a prediction row may also be raw JSON
    text). `config` is a :class:`Config`, a path to a TOML/JSON file, a mapping, or None.

    >>> r = evaluate([{"id": 1, "total": 10}], [{"id": 1, "total": "10.00"}])
    >>> r.micro.f1
    1.0
    """
    cfg = resolve_config(config, id_key)
    gs, ps = load_inputs(gold, pred, cfg)
    return score_sets(gs, ps, cfg)


def score_sets(gs: GoldSet, ps: PredictionSet, config: Config) -> Report:
    """Score loaded inputs (what :func:`evaluate` does after loading)."""
    with gc_paused():
        return _score_sets(gs, ps, config)


def _score_sets(gs: GoldSet, ps: PredictionSet, config: Config) -> Report:
    scorer = FieldScorer(config)
    documents: list[DocumentResult] = []
    for doc_id, gold_doc in gs.docs.items():
        reason = None
        if doc_id in ps.parse_failures:
            acc = DocCounts()
            scorer.expand_gold(gold_doc, PARSE_FAILURE, acc)
            status, reason = "parse_failure", ps.parse_failures[doc_id]
        else:
            pred_doc = ps.docs.get(doc_id)
            acc = scorer.score(gold_doc, pred_doc)
            status = "scored" if pred_doc is not None else "missing"
        documents.append(_document(doc_id, status, acc, reason))
    unknown = sorted(set(ps.docs).union(ps.parse_failures).difference(gs.docs))
    return Report(
        tokens_per_doc=tokens_per_doc(ps.docs.get(d) for d in gs.docs),
        documents=documents,
        fields=_fields(documents, scorer),
        config=config,
        skipped=sorted(scorer.skipped | _configured_ignores(config)),
        unknown_ids=unknown,
        unattributed=list(ps.unattributed),
        gold_type_errors=dict(sorted(scorer.gold_type_errors.items())),
        gold_source=gs.source,
        pred_source=ps.source,
        gold_digest=gs.digest,
        pred_digest=ps.digest,
    )


def usage_tokens(pred: Mapping[str, Any] | None) -> float | None:
    """Tokens one prediction's `usage` records: input + output tokens, else `tokens`."""
    usage = pred.get("usage") if pred is not None else None
    if not isinstance(usage, Mapping):
        return None
    parts = [usage.get("input_tokens"), usage.get("output_tokens")]
    numbers = [float(v) for v in parts if isinstance(v, int | float) and not isinstance(v, bool)]
    if numbers:
        return sum(numbers)
    total = usage.get("tokens")
    if isinstance(total, int | float) and not isinstance(total, bool):
        return float(total)
    return None


def tokens_per_doc(preds: Iterable[Mapping[str, Any] | None]) -> float | None:
    """Σ tokens over the predictions of the gold documents / documents; None when no
    prediction records usage (a document without a prediction counts as 0 tokens)."""
    total, documents, seen = 0.0, 0, False
    for pred in preds:
        documents += 1
        tokens = usage_tokens(pred)
        if tokens is not None:
            total, seen = total + tokens, True
    return total / documents if seen and documents else None


def _configured_ignores(config: Config) -> set[str]:
    return {p for p, r in config.fields.items() if r.ignore}


def _document(doc_id: str, status: str, acc: DocCounts, reason: str | None) -> DocumentResult:
    tp = fp = fn = 0
    for c in acc.counts.values():
        tp += c[0]
        fp += c[1]
        fn += c[2]
    return DocumentResult(doc_id, status, Counts(tp, fp, fn), acc.counts, acc.errors, reason)


def _fields(documents: list[DocumentResult], scorer: FieldScorer) -> dict[str, FieldResult]:
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for d in documents:
        for path, c in d.fields.items():
            t = totals[path]
            t[0] += c[0]
            t[1] += c[1]
            t[2] += c[2]
    errors: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(CATEGORIES, 0))
    examples: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for d in sorted(documents, key=lambda d: d.id):
        for e in d.errors:
            errors[e.path][e.category] += 1
            ex = examples[e.path]
            if len(ex) < EXAMPLES_PER_FIELD:
                ex.append(_example(d.id, e))
    types: dict[str, set[str]] = defaultdict(set)
    for path, type_name in scorer.types_seen:
        types[path].add(type_name)
    out: dict[str, FieldResult] = {}
    for path in sorted(totals):
        tp, fp, fn = totals[path]
        configured = scorer.comparators.configured_type(path)
        label = configured or "/".join(sorted(types.get(path, ()))) or "not_in_gold"
        out[path] = FieldResult(
            path,
            label,
            Counts(tp, fp, fn),
            {k: v for k, v in errors[path].items() if v} if path in errors else {},
            examples.get(path, []),
        )
    return out


def _example(doc_id: str, e: ErrorRecord) -> dict[str, Any]:
    return {"id": doc_id, "category": e.category, "expected": e.expected, "got": e.got}
