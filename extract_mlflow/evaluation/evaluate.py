"""`evaluate`: gold + predictions (files or rows) + config -> :class:`Report`."""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Config, load_config
from ..core.counts import Counts
from ..core.paths import document_leaves, lookup
from ..core.runtime import gc_paused
from ..errors import ConfigError
from ..fidelity.approvals import load_approvals
from ..fidelity.score import FidelitySummary, score_fidelity
from ..fields.normalize import Comparators
from ..fields.scorer import CATEGORIES, PARSE_FAILURE, DocCounts, ErrorRecord, FieldScorer
from ..io.loading import (
    GoldSet,
    PredictionSet,
    gold_from_rows,
    load_gold,
    load_predictions,
    predictions_from_rows,
)
from ..io.sources import load_sources, sources_from_gold
from ..pages import prepare_document
from ..report import EXAMPLES_PER_FIELD, DocumentResult, FieldResult, Report
from ..structure.score import StructureSummary
from .config_checks import config_warnings
from .records import latency_ms, usage_tokens
from .slices import count_slice_metrics
from .stats import count_intervals
from .structure import score_structure

GoldInput = str | Path | Iterable[Mapping[str, Any]] | GoldSet
PredInput = str | Path | Iterable[Mapping[str, Any] | str] | PredictionSet


def resolve_config(
    config: Config | str | Path | Mapping[str, Any] | None, id_key: str | None
) -> Config:
    if isinstance(config, Config):
        cfg = config
    elif isinstance(config, Mapping):
        from ..config import config_from_mapping

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
) -> Report:
    """Score predictions against gold, field by field.

    A prediction whose `text_key` (default ``output``) holds a wiki/markdown page is parsed:
    the rows of its table become the list scored against the gold line's ``rows``, and its
    sections give the layout score under `profile` (else the gold line's topic).

    Text fidelity runs when sources are given: `sources` (a folder of ``<id>.txt|.md|.pdf``, a
    JSONL of ``{id, text}``, or a mapping id -> text) or `source_key` (a field of the gold
    line); `approvals` lists (id, path) pairs a reviewer accepted. Document-structure metrics
    run when gold lines carry their fields (``tables``, ``blocks``, ``regions``,
    ``boundaries``); `slice_by` names gold attributes to report every metric by.

    `gold` and `pred` are JSONL paths or rows (mappings; a prediction row may also be raw JSON
    text). `config` is a :class:`Config`, a path to a TOML/JSON file, a mapping, or None.

    >>> r = evaluate([{"id": 1, "total": 10}], [{"id": 1, "total": "10.00"}])
    >>> r.micro.f1
    1.0
    """
    cfg = resolve_config(config, id_key)
    if text_key is not None and text_key != cfg.text_key:
        cfg = cfg.model_copy(update={"text_key": text_key})
    if slice_by:
        structure = cfg.structure.model_copy(update={"slice_by": tuple(slice_by)})
        cfg = cfg.model_copy(update={"structure": structure})
    gs, ps = load_inputs(gold, pred, cfg)
    extras = Extras(
        sources=_sources(sources, source_key, gs, cfg),
        source_key=source_key,
        approvals=load_approvals(approvals) if isinstance(approvals, str | Path) else approvals,
    )
    return score_sets(gs, ps, cfg, profile=profile, extras=extras)


@dataclass
class Extras:
    """Inputs of the optional families: source texts (text fidelity) and approvals."""

    sources: Mapping[str, str] | None = None
    source_key: str | None = None
    approvals: Mapping[tuple[str, str], str | None] | None = None


def _sources(
    sources: str | Path | Mapping[str, str] | None,
    source_key: str | None,
    gs: GoldSet,
    config: Config,
) -> Mapping[str, str] | None:
    if sources is not None and source_key is not None:
        raise ConfigError("give sources as files (--sources) or as a gold field (--source-key)")
    if isinstance(sources, str | Path):
        return load_sources(sources, id_key=config.id_key)
    if source_key is not None:
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
    """Score loaded inputs (what :func:`evaluate` does after loading)."""
    if profile is not None and profile not in config.layout.profiles:
        known = ", ".join(sorted(config.layout.profiles)) or "none configured"
        raise ConfigError(f"unknown layout profile '{profile}' (profiles: {known})")
    extras = extras or Extras()
    structure = _has_structure(gs, config)  # one scan of the gold lines, used three times
    family_keys = _family_keys(ps, config, extras, structure)
    with gc_paused():
        report = _score_sets(gs, ps, config, profile, family_keys)
    report.intervals = count_intervals(report.documents, report.micro, config.structure)
    report.slice_metrics = count_slice_metrics(report.documents, config.structure)
    report.fidelity = _fidelity(gs, ps, config, extras, family_keys)
    report.structure = _structure(gs, ps, config) if structure else None
    _record_inputs(report, gs, profile, extras)
    return report


def _record_inputs(report: Report, gs: GoldSet, profile: str | None, extras: Extras) -> None:
    """What the signature needs beyond the config: a digest of in-memory gold rows, the
    profile, and digests of the source texts actually used and of the approvals."""
    if report.gold_digest is None:
        report.gold_digest = content_digest(sorted(gs.docs.items()))
    report.profile = profile
    if extras.sources is not None:
        used = sorted((i, extras.sources[i]) for i in gs.docs if i in extras.sources)
        report.sources_digest = content_digest(used)
    if extras.approvals:
        pairs = sorted([*key, note or ""] for key, note in extras.approvals.items())
        report.approvals_digest = content_digest(pairs)


def content_digest(value: Any) -> str:
    """sha256 of `value` as canonical JSON (what a signature compares, not how it was stored).

    >>> content_digest([["a", "text"]]) == content_digest([["a", "text"]])
    True
    """
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _structure_keys(config: Config) -> tuple[str, ...]:
    s = config.structure
    return (s.tables_key, s.blocks_key, s.regions_key, s.boundaries_key)


def _has_structure(gs: GoldSet, config: Config) -> bool:
    keys = _structure_keys(config)
    return any(k in doc for doc in gs.docs.values() for k in keys)


def _family_keys(
    ps: PredictionSet, config: Config, extras: Extras, structure: bool
) -> tuple[str, ...]:
    """Top-level keys that feed another family (source text, structure) or only describe the
    gold document (a --slice-by attribute no prediction carries): never fields."""
    keys: tuple[str, ...] = _structure_keys(config) if structure else ()
    for path in config.structure.slice_by:
        top = path.split(".")[0]
        if not any(top in doc for doc in ps.docs.values()):
            keys += (top,)
    return (*keys, extras.source_key) if extras.source_key else keys


def _fidelity(
    gs: GoldSet, ps: PredictionSet, config: Config, extras: Extras, family_keys: tuple[str, ...]
) -> FidelitySummary | None:
    if extras.sources is None:
        return None
    skip = {config.text_key, *family_keys}
    return score_fidelity(
        gs.docs,
        ps.docs,
        extras.sources,
        config.fidelity,
        Comparators(config),
        id_key=config.id_key,
        approvals=extras.approvals,
        skip_keys=skip,
    )


def _structure(gs: GoldSet, ps: PredictionSet, config: Config) -> StructureSummary:
    preds = {doc_id: ps.docs.get(doc_id) for doc_id in gs.docs}
    return score_structure(gs.docs, preds, config.structure, id_key=config.id_key)


def _score_sets(
    gs: GoldSet,
    ps: PredictionSet,
    config: Config,
    profile: str | None = None,
    skip_keys: Iterable[str] = (),
) -> Report:
    scorer = FieldScorer(config, skip_keys)
    documents: list[DocumentResult] = []
    notes: list[str] = []
    pages_possible = bool(config.layout.profiles) or profile is not None
    text_key, slice_by, failures = config.text_key, config.structure.slice_by, ps.parse_failures
    for position, (doc_id, gold_doc) in enumerate(gs.docs.items()):
        pred_doc = ps.docs.get(doc_id)
        prep = None  # most documents are plain JSON: no page, no profile
        if pages_possible or (pred_doc is not None and text_key in pred_doc):
            prep = prepare_document(gold_doc, pred_doc, config, profile, notes)
        gold, pred = (prep.gold, prep.pred) if prep is not None else (gold_doc, pred_doc)
        reason = None
        if doc_id in failures:
            acc = DocCounts()
            scorer.expand_gold(gold, PARSE_FAILURE, acc)
            status, reason = "parse_failure", failures[doc_id]
        else:
            acc = scorer.score(gold, pred)
            status = "scored" if pred_doc is not None else "missing"
        doc = _document(position, doc_id, status, acc, reason)
        if prep is not None:
            doc.layout, doc.rows_gold, doc.rows_pred = prep.layout, prep.rows_gold, prep.rows_pred
        if slice_by:
            doc.attributes = {a: lookup(gold_doc, a) for a in slice_by}
        if pred_doc is not None and ("usage" in pred_doc or "latency_ms" in pred_doc):
            doc.tokens, doc.latency_ms = usage_tokens(pred_doc), latency_ms(pred_doc)
        documents.append(doc)
    for attribute in slice_by:
        if all(d.attributes.get(attribute) is None for d in documents):
            notes.append(f"slice attribute '{attribute}': no gold document has it (no slices)")
    unknown = sorted(set(ps.docs).union(ps.parse_failures).difference(gs.docs))
    return Report(
        tokens_per_doc=tokens_per_doc(ps.docs.get(d) for d in gs.docs),
        documents=documents,
        fields=_fields(documents, scorer, gs.docs),
        config=config,
        skipped=sorted(scorer.skipped | _configured_ignores(config)),
        unknown_ids=unknown,
        unattributed=list(ps.unattributed),
        gold_type_errors=dict(sorted(scorer.gold_type_errors.items())),
        gold_source=gs.source,
        pred_source=ps.source,
        gold_digest=gs.digest,
        pred_digest=ps.digest,
        notes=notes,
        warnings=config_warnings(config, gs.docs),
    )


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


def _document(
    position: int, doc_id: str, status: str, acc: DocCounts, reason: str | None
) -> DocumentResult:
    tp = fp = fn = 0
    for c in acc.counts.values():
        tp += c[0]
        fp += c[1]
        fn += c[2]
    counts = Counts(tp, fp, fn)
    return DocumentResult(doc_id, status, counts, acc.counts, acc.errors, reason, position=position)


def _field_types(
    totals: Mapping[str, list[int]],
    scorer: FieldScorer,
    gold_docs: Mapping[str, Mapping[str, Any]],
) -> dict[str, set[str]]:
    """The type label of each field: its configured type, else the types its gold values were
    read as. A field whose values all matched to the letter was never read as a type, so its
    label is inferred from its first gold value (documents in id order: order-independent)."""
    types: dict[str, set[str]] = defaultdict(set)
    for path, type_name in scorer.types_seen:
        types[path].add(type_name)
    # only fields with gold values can be labelled from gold (tp + fn > 0)
    pending = {
        p
        for p, (tp, _, fn) in totals.items()
        if tp + fn and p not in types and not scorer.comparators.configured_type(p)
    }
    for doc_id in sorted(gold_docs) if pending else ():
        for path, value, _ in document_leaves(gold_docs[doc_id], {scorer.config.id_key}):
            if path in pending:
                types[path].add(scorer.comparators.for_leaf(path, value).type)
                pending.discard(path)
        if not pending:
            break
    return types


def _fields(
    documents: list[DocumentResult],
    scorer: FieldScorer,
    gold_docs: Mapping[str, Mapping[str, Any]],
) -> dict[str, FieldResult]:
    totals: dict[str, list[int]] = {}
    for d in documents:
        for path, (tp, fp, fn) in d.fields.items():
            t = totals.get(path)
            if t is None:
                totals[path] = [tp, fp, fn]
            else:
                t[0] += tp
                t[1] += fp
                t[2] += fn
    errors: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(CATEGORIES, 0))
    tally = Counter((e.path, e.category) for d in documents for e in d.errors)  # counted in C
    for (path, category), n in tally.items():
        errors[path][category] += n
    examples: dict[str, list[dict[str, Any]]] = defaultdict(list)
    full: set[str] = set()  # fields with all their examples (the first ones by document id)
    for d in sorted((d for d in documents if d.errors), key=lambda d: d.id):
        for e in d.errors:
            if e.path not in full:
                ex = examples[e.path]
                ex.append(_example(d.id, e))
                if len(ex) == EXAMPLES_PER_FIELD:
                    full.add(e.path)
        if len(full) == len(errors):
            break
    types = _field_types(totals, scorer, gold_docs)
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
