"""Text fidelity: did the model copy a value from its source document, paraphrase it, or make
it up?

Per extracted value (the *predicted* values are the ones that must be faithful):

- tokens (:mod:`extract_mlflow.fidelity.tokens`) and, for n = 1..4, p_n = (value n-grams that occur
  anywhere in the source) / (value n-grams). "Occur anywhere" is presence, not clipped counts:
  a value n-gram repeated twice counts twice when the source has it once ("the the" against a
  source with one "the" has p1 = 1.0). An order with no n-gram (a value shorter than n tokens)
  is undefined (None) and left out of the mean; an empty value has no defined order, so its
  BLEU proxy is None (reported, never 0);
- BLEU proxy = mean of the defined p_n; band: ≥ 0.70 EXCELLENT, ≥ 0.50 GOOD, else SOMEWHAT;
- flags: ``new_vocabulary`` when p1 < 0.80; ``paraphrase`` when p1 ≥ 0.85 and p4 < 0.50 (a value
  of fewer than 4 tokens has no p4 and is never flagged as a paraphrase);
- extra n-grams (the value's n-grams absent from the source), the best-matching source span
  and its missing n-grams (:mod:`extract_mlflow.fidelity.grounding`), and whether the value is
  grounded.

Aggregates (:class:`FidelitySummary`) come from summed statistics: pooled p_n = Σ matched /
Σ n-grams per order; the corpus BLEU proxy is the mean of the values' defined BLEU proxies;
groundedness = grounded / checked. Reviewer approvals
(:mod:`extract_mlflow.fidelity.approvals`) clear a value's flags, keep its scores, and list it
as approved.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .._version import __version__
from ..config import Config, FidelityConfig
from ..core.keys import field_key
from ..core.paths import document_leaves
from ..core.runtime import gc_paused
from ..fields.normalize import TYPE_ERROR, Comparator, Comparators, as_text
from ..fields.scorer import META_KEYS
from .approvals import Approvals, approve
from .canaries import Canary, CanaryTally, check
from .grounding import SourceNumbers
from .injection import Finding, scan
from .tokens import MAX_ORDER, TOKENIZER_SIGNATURE, SourceIndex, normalize
from .values import (
    BANDS,
    FLAGS,
    GOOD,
    ORDERS,
    SOMEWHAT,
    NgramCounts,
    ValueFidelity,
    check_text,
)

GROUNDING_TYPES = ("text", "id", "number", "quantity")
"""Field types whose values are grounded by default (dates, booleans, enums and ratios are
written in too many ways to look up verbatim)."""


# -- config --------------------------------------------------------------------------------
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A field-path glob as a regex: ``**`` any text, ``*`` any text without a dot.

    >>> bool(glob_regex("line_items[].*").match("line_items[].qty"))
    True
    """
    parts = re.split(r"(\*\*|\*)", pattern)
    rx = "".join(".*" if p == "**" else "[^.]*" if p == "*" else re.escape(p) for p in parts)
    return re.compile(rx + r"\Z")


# -- documents -----------------------------------------------------------------------------
class _Document:
    """One source, indexed on first use: tokens for text values, numbers for numeric ones."""

    def __init__(self, text: str, casefold: bool) -> None:
        self.raw = text
        self.casefold = casefold

    @cached_property
    def index(self) -> SourceIndex:
        return SourceIndex(self.raw, self.casefold)

    @cached_property
    def nfkc(self) -> str:
        """The NFKC text, case kept (numbers, units and injection patterns are read here)."""
        return normalize(self.raw) if self.casefold else self.index.text

    @cached_property
    def numbers(self) -> SourceNumbers:
        return SourceNumbers(self.nfkc)


class _Selector:
    """Which leaves are n-gram scored and which are grounded."""

    def __init__(self, config: FidelityConfig) -> None:
        self._fields = _compile(config.fields)
        self._ground = _compile(config.grounding_fields)
        self._exclude = _compile(config.exclude) or []

    def choose(self, path: str, type_: str, ignored: bool) -> tuple[bool, bool]:
        """(n-gram scored, grounded) for a leaf."""
        if any(rx.match(path) for rx in self._exclude):
            return False, False
        return (
            _selected(self._fields, path, not ignored and type_ == "text"),
            _selected(self._ground, path, not ignored and type_ in GROUNDING_TYPES),
        )


def _compile(patterns: Sequence[str] | None) -> list[re.Pattern[str]] | None:
    return None if patterns is None else [glob_regex(p) for p in patterns]


def _selected(patterns: list[re.Pattern[str]] | None, path: str, default: bool) -> bool:
    return default if patterns is None else any(rx.match(path) for rx in patterns)


def _gold_samples(doc: Mapping[str, Any], skip: Collection[str]) -> dict[str, Any]:
    """The first present gold value at each path (to read the field's type from)."""
    samples: dict[str, Any] = {}
    for leaf in document_leaves(doc, skip):
        samples.setdefault(leaf.path, leaf.value)
    return samples


def _check_leaf(
    raw: Any, comp: Comparator, doc: _Document, config: FidelityConfig, want: tuple[bool, bool]
) -> ValueFidelity:
    score_ngrams, ground = want
    if ground and comp.type in ("number", "quantity"):
        canon = comp.canon(raw)
        if canon is not TYPE_ERROR:
            out = _check_text_of(raw, doc, config, score_ngrams, False)
            if comp.type == "quantity":
                out.grounded = doc.numbers.has_quantity(canon[0], canon[1], comp)
            else:
                out.grounded = doc.numbers.has_number(canon, comp)
            out.grounding = "value" if out.grounded else "not_found"
            return out
    return _check_text_of(raw, doc, config, score_ngrams, ground)


def _check_text_of(
    raw: Any, doc: _Document, config: FidelityConfig, score_ngrams: bool, ground: bool
) -> ValueFidelity:
    if not score_ngrams and not ground:
        return ValueFidelity("", "", raw, "")
    text = as_text(raw) or ""
    out = check_text(text, doc.index, config, score_ngrams=score_ngrams, ground=ground)
    out.value = raw
    return out


# -- aggregation ---------------------------------------------------------------------------
@dataclass
class FidelityStats:
    """Summable statistics of a set of values (one field, or all)."""

    values: int = 0
    """n-gram scored values (empty ones included)"""
    empty: int = 0
    bleu_sum: float = 0.0
    bleu_count: int = 0
    matched: list[int] = field(default_factory=lambda: [0] * MAX_ORDER)
    total: list[int] = field(default_factory=lambda: [0] * MAX_ORDER)
    bands: dict[str, int] = field(default_factory=lambda: dict.fromkeys(BANDS, 0))
    flags: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FLAGS, 0))
    checked: int = 0
    grounded: int = 0
    approved: int = 0

    def add(self, v: ValueFidelity) -> None:
        self.approved += v.approved
        if v.grounded is not None:
            self.checked += 1
            self.grounded += v.grounded
        if v.ngram is None:
            return
        self.values += 1
        self.empty += not v.tokens
        for i in range(MAX_ORDER):
            self.matched[i] += v.ngram.matched[i]
            self.total[i] += v.ngram.total[i]
        if v.bleu_proxy is not None:
            self.bleu_sum += v.bleu_proxy
            self.bleu_count += 1
        if v.band is not None:
            self.bands[v.band] += 1
        for f in v.flags:
            self.flags[f] += 1

    @property
    def bleu_proxy(self) -> float | None:
        """Mean of the values' defined BLEU proxies."""
        return self.bleu_sum / self.bleu_count if self.bleu_count else None

    @property
    def precisions(self) -> tuple[float | None, ...]:
        """Pooled p1..p4: Σ matched / Σ n-grams per order."""
        return NgramCounts(tuple(self.matched), tuple(self.total)).precisions

    @property
    def groundedness(self) -> float | None:
        return self.grounded / self.checked if self.checked else None

    @property
    def hallucination_rate(self) -> float | None:
        g = self.groundedness
        return None if g is None else 1.0 - g

    def to_dict(self) -> dict[str, Any]:
        return {
            "values": self.values,
            "empty": self.empty,
            "bleu_proxy": self.bleu_proxy,
            **{f"p{n}": p for n, p in zip(ORDERS, self.precisions, strict=True)},
            "matched": list(self.matched),
            "ngrams": list(self.total),
            "bands": dict(self.bands),
            "flags": dict(self.flags),
            "checked": self.checked,
            "grounded": self.grounded,
            "groundedness": self.groundedness,
            "hallucination_rate": self.hallucination_rate,
            "approved": self.approved,
        }


@dataclass
class FidelitySummary:
    """The fidelity of a prediction set against its sources: every value, per-field and overall
    statistics, and what could not be checked."""

    values: list[ValueFidelity]
    overall: FidelityStats
    fields: dict[str, FidelityStats]
    config: FidelityConfig
    documents: int = 0
    unchecked: list[str] = field(default_factory=list)
    """gold documents with no source (nothing checked)"""
    no_prediction: list[str] = field(default_factory=list)
    empty_sources: list[str] = field(default_factory=list)
    """sources with no text at all (a scanned PDF without a text layer?)"""
    unused_sources: list[str] = field(default_factory=list)
    """sources whose id is not in gold"""
    unused_approvals: list[tuple[str, str]] = field(default_factory=list)
    injection: dict[str, list[Finding]] = field(default_factory=dict)
    canaries: CanaryTally | None = None
    """prompt-injection canaries (None: none given)"""

    def metrics(self, keys: Mapping[str, str] | None = None) -> dict[str, float]:
        """The metric keys: bleu_proxy, ngram_p1..ngram_p4, groundedness, hallucination_rate,
        field_bleu_proxy/<suffix> (`keys`: the evaluation's field keys); undefined scores are
        left out."""
        o = self.overall
        out: dict[str, float | None] = {"bleu_proxy": o.bleu_proxy}
        out.update({f"ngram_p{n}": p for n, p in zip(ORDERS, o.precisions, strict=True)})
        out["groundedness"] = o.groundedness
        out["hallucination_rate"] = o.hallucination_rate
        if self.canaries is not None:
            out["injection_obeyed_rate"] = self.canaries.rate
        for path, stats in self.fields.items():
            out[field_key("field_bleu_proxy", path, keys)] = stats.bleu_proxy
        return {k: float(v) for k, v in out.items() if v is not None}

    def worst(self, n: int | None = None) -> list[ValueFidelity]:
        """Values worth a look (flagged, below EXCELLENT or not grounded; approved ones
        excluded), worst first: lowest BLEU proxy, then not grounded."""
        notable = [
            v
            for v in self.values
            if not v.approved and (v.flags or v.grounded is False or v.band in (GOOD, SOMEWHAT))
        ]
        notable.sort(key=_badness)
        return notable[: self.config.worst if n is None else n]

    @property
    def approved(self) -> list[ValueFidelity]:
        return [v for v in self.values if v.approved]

    def signature(self) -> str:
        return fidelity_signature(self.config)

    def to_dict(self, all_values: bool = False) -> dict[str, Any]:
        """JSON-ready: statistics, the worst values, approvals, what was not checked (every
        value too with `all_values`)."""
        out: dict[str, Any] = {
            "signature": self.signature(),
            "documents": self.documents,
            "overall": self.overall.to_dict(),
            "fields": {p: s.to_dict() for p, s in self.fields.items()},
            "worst_values": [v.to_dict() for v in self.worst()],
            "approved": [v.to_dict() for v in self.approved],
            "unused_approvals": [{"id": i, "path": p} for i, p in self.unused_approvals],
            "unchecked_documents": self.unchecked,
            "documents_without_prediction": self.no_prediction,
            "empty_sources": self.empty_sources,
            "unused_sources": self.unused_sources,
            "injection": {d: [f.to_dict() for f in fs] for d, fs in self.injection.items()},
            "metrics": self.metrics(),
        }
        if self.canaries is not None:
            out["canaries"] = self.canaries.to_dict()
        if all_values:
            out["values"] = [v.to_dict() for v in self.values]
        return out


def _badness(v: ValueFidelity) -> tuple[float, bool, int, str, str]:
    score = v.bleu_proxy if v.bleu_proxy is not None else (0.0 if v.grounded is False else 1.0)
    return (score, v.grounded is not False, -len(v.flags), v.doc_id, v.path)


# -- accumulation ----------------------------------------------------------------------------
@dataclass
class DocumentFidelity:
    """One gold document's fidelity record: its checked values and what its source showed."""

    position: int
    id: str
    values: list[ValueFidelity] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    empty_source: bool = False
    unchecked: bool = False
    """no source (nothing checked)"""
    no_prediction: bool = False
    canaries: tuple[str, ...] = ()  # the canaries its source carries
    obeyed: tuple[str, ...] = ()  # those its prediction obeys


@dataclass
class FidelityTools:
    """What checking a document needs beyond the config (rebuilt, never merged)."""

    comparators: Comparators
    selector: _Selector
    skip: frozenset[str]


@dataclass
class FidelityAccumulator:
    """Text fidelity as mergeable statistics: one record per gold document (:meth:`update`),
    the approvals used (a union); :meth:`result` replays the records in gold order, so the
    float sums are those of one pass whatever the partition."""

    config: FidelityConfig
    approvals: Approvals | None = None
    canaries: tuple[Canary, ...] = ()
    records: list[DocumentFidelity] = field(default_factory=list)
    used: set[tuple[str, str]] = field(default_factory=set)

    def tools(
        self, comparators: Comparators, id_key: str, skip_keys: Collection[str]
    ) -> FidelityTools:
        return FidelityTools(
            comparators, _Selector(self.config), frozenset({id_key, *META_KEYS, *skip_keys})
        )

    def update(
        self,
        position: int,
        doc_id: str,
        gold: Mapping[str, Any],
        pred: Mapping[str, Any] | None,
        source: str | None,
        tools: FidelityTools,
    ) -> DocumentFidelity:
        """Check one gold document's predicted values against its source (None: unchecked)."""
        cfg = self.config
        rec = DocumentFidelity(position, doc_id)
        self.records.append(rec)
        if source is None:
            rec.unchecked = True
            return rec
        doc = _Document(source, cfg.casefold)
        rec.empty_source = not doc.raw.strip()
        if cfg.scan_injection:
            rec.findings = scan(doc.nfkc, doc.index.folded_vocabulary)
        if self.canaries:
            rec.canaries, rec.obeyed = check(self.canaries, doc.raw, pred, tools.skip)
        if pred is None:
            rec.no_prediction = True
            return rec
        values = _check_document(
            doc_id, gold, pred, doc, cfg, tools.comparators, tools.selector, tools.skip
        )
        for v in values:
            approve(v, self.approvals or {}, self.used)
            rec.values.append(v)
        return rec

    def merge(self, other: FidelityAccumulator) -> None:
        """Add `other`'s records (same config and approvals) to these."""
        theirs = (other.config, other.approvals, other.canaries)
        if theirs != (self.config, self.approvals, self.canaries):
            raise ValueError("cannot merge fidelity scored with another setup")
        self.records.extend(other.records)
        self.used |= other.used

    def result(self, unused_sources: list[str]) -> FidelitySummary:
        """The summary: the records in gold order (`unused_sources`: source ids not in gold)."""
        summary = FidelitySummary([], FidelityStats(), {}, self.config, len(self.records))
        summary.unused_sources = list(unused_sources)
        if self.canaries:
            summary.canaries = CanaryTally([c.text for c in self.canaries])
        for rec in sorted(self.records, key=lambda r: r.position):
            if rec.unchecked:
                summary.unchecked.append(rec.id)
                continue
            if rec.empty_source:
                summary.empty_sources.append(rec.id)
            if rec.findings:
                summary.injection[rec.id] = rec.findings
            if summary.canaries is not None:
                summary.canaries.add(rec.id, rec.canaries, rec.obeyed)
            if rec.no_prediction:
                summary.no_prediction.append(rec.id)
                continue
            for v in rec.values:
                summary.values.append(v)
                summary.overall.add(v)
                summary.fields.setdefault(v.path, FidelityStats()).add(v)
        summary.unused_approvals = sorted(set(self.approvals or {}) - self.used)
        return summary


# -- entry point ---------------------------------------------------------------------------
def score_fidelity(
    gold_docs: Mapping[str, Mapping[str, Any]],
    pred_docs: Mapping[str, Mapping[str, Any]],
    sources: Mapping[str, str],
    config: FidelityConfig | None = None,
    comparators: Comparators | None = None,
    *,
    id_key: str = "id",
    approvals: Approvals | None = None,
    skip_keys: Collection[str] = (),
) -> FidelitySummary:
    """Check every selected predicted value of the gold documents against its source.

    `comparators` gives each field its type and tolerance (from the main config). A document
    without a source is listed as unchecked; a prediction for an id not in gold is not checked.
    `skip_keys` are top-level keys never checked besides `id_key` (e.g. the source key).
    """
    acc = FidelityAccumulator(config or FidelityConfig(), approvals)
    tools = acc.tools(comparators or Comparators(Config(id_key=id_key)), id_key, skip_keys)
    with gc_paused():
        for position, (doc_id, gold) in enumerate(gold_docs.items()):
            acc.update(position, doc_id, gold, pred_docs.get(doc_id), sources.get(doc_id), tools)
    return acc.result([i for i in sources if i not in gold_docs])


def _is_ignored(comps: Comparators, path: str) -> bool:
    """Whether the main config says ``ignore = true`` for `path` (read from the rule that its
    comparator carries; an unconfigured path has the default rule)."""
    return comps.for_leaf(path, None).rule.ignore


def _check_document(
    doc_id: str,
    gold: Mapping[str, Any],
    pred: Mapping[str, Any],
    doc: _Document,
    cfg: FidelityConfig,
    comps: Comparators,
    selector: _Selector,
    skip: Collection[str],
) -> Iterator[ValueFidelity]:
    samples = _gold_samples(gold, skip)
    leaves = document_leaves(
        pred, skip, keep_blank=True, ignored=lambda p: _is_ignored(comps, p), prune=False
    )
    for path, raw, ignored in leaves:
        if isinstance(raw, bool):
            continue
        comp = comps.for_leaf(path, samples.get(path, raw))
        want = selector.choose(path, comp.type, ignored)
        if not any(want):
            continue
        v = _check_leaf(raw, comp, doc, cfg, want)
        v.doc_id, v.path, v.type = doc_id, path, comp.type
        yield v


def fidelity_signature(config: FidelityConfig) -> str:
    """What makes two fidelity scores comparable (tokeniser, case, thresholds)."""
    case = "folded" if config.casefold else "kept"
    ground = "folded" if config.ground_casefold else "kept"
    return (
        f"fidelity:{__version__}|tok:{TOKENIZER_SIGNATURE}|case:{case}|ground_case:{ground}"
        f"|fuzzy:{config.fuzzy_threshold:g}|bands:{config.excellent:g}/{config.good:g}"
    )
