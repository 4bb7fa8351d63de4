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
  grounded (:mod:`extract_mlflow.fidelity.check` selects and checks a document's values).

Aggregates (:class:`FidelitySummary`) come from summed statistics: pooled p_n = Σ matched /
Σ n-grams per order; the corpus BLEU proxy is the mean of the values' defined BLEU proxies;
groundedness = grounded / checked. Reviewer approvals
(:mod:`extract_mlflow.fidelity.approvals`) clear a value's flags, keep its scores, and list it
as approved.

An evaluation keeps no value once its document is checked (:class:`FidelityAccumulator`): it
folds each into its field's counts and its BLEU proxy into a compact sequence
(:mod:`extract_mlflow.fidelity.sums`), and keeps only the values the outputs list (the worst
``worst`` ones and the approved ones) and the documents the notes name; its memory grows by a
few bytes per value. :func:`score_fidelity` (sets held in memory) keeps every value as well.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .._version import __version__
from ..config import Config, FidelityConfig
from ..core.keys import field_key
from ..core.runtime import gc_paused
from ..fields.normalize import Comparators
from ..fields.scorer import META_KEYS
from .approvals import Approvals, approve
from .canaries import Canary, CanaryTally, check
from .check import Selector, SourceDocument, check_document, glob_regex
from .injection import Finding, scan
from .sums import BleuSequence, Smallest
from .tokens import MAX_ORDER, TOKENIZER_SIGNATURE
from .values import BANDS, FLAGS, GOOD, ORDERS, SOMEWHAT, NgramCounts, ValueFidelity

__all__ = [
    "DocumentFidelity",
    "FidelityAccumulator",
    "FidelityStats",
    "FidelitySummary",
    "FidelityTools",
    "fidelity_signature",
    "glob_regex",
    "score_fidelity",
]


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
        """Count one value in (its BLEU proxy is summed apart: :class:`BleuSequence`)."""
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
        self.bleu_count += v.bleu_proxy is not None
        if v.band is not None:
            self.bands[v.band] += 1
        for f in v.flags:
            self.flags[f] += 1

    def merge(self, other: FidelityStats) -> None:
        """Add `other`'s statistics to these."""
        self.values += other.values
        self.empty += other.empty
        self.bleu_sum += other.bleu_sum
        self.bleu_count += other.bleu_count
        for i in range(MAX_ORDER):
            self.matched[i] += other.matched[i]
            self.total[i] += other.total[i]
        for mine, theirs in ((self.bands, other.bands), (self.flags, other.flags)):
            for key, n in theirs.items():
                mine[key] += n
        self.checked += other.checked
        self.grounded += other.grounded
        self.approved += other.approved

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
    """The fidelity of a prediction set against its sources: per-field and overall statistics,
    the values worth a look and the approved ones, and what could not be checked."""

    overall: FidelityStats
    fields: dict[str, FidelityStats]
    config: FidelityConfig
    documents: int = 0
    worst_values: list[ValueFidelity] = field(default_factory=list)
    """values worth a look, worst first (at most ``config.worst``): :meth:`worst`"""
    approved: list[ValueFidelity] = field(default_factory=list)
    """values a reviewer approved, in gold order"""
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
    values: list[ValueFidelity] = field(default_factory=list)
    """every checked value in gold order: kept by :func:`score_fidelity` only (an evaluation
    keeps the statistics, the worst values and the approved ones)"""

    name: ClassVar[str] = "fidelity"

    def field_paths(self) -> list[str]:
        """The fields it scored (their ``field_bleu_proxy/<suffix>`` metrics)."""
        return list(self.fields)

    def frame_columns(self, start: int, stop: int) -> dict[str, Any]:
        return {}  # no per-document column: the paired comparison reads no fidelity

    def curves(self) -> dict[str, Any]:
        return {}

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
        excluded), worst first: lowest BLEU proxy, then not grounded; the first `n` (at most
        ``config.worst``, all that is kept)."""
        return self.worst_values[: self.config.worst if n is None else n]

    def signature(self) -> str:
        return fidelity_signature(self.config)

    def to_dict(self, all_values: bool = False) -> dict[str, Any]:
        """JSON-ready: statistics, the worst values, approvals, what was not checked (every
        value too with `all_values`, when kept)."""
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


def _notable(v: ValueFidelity) -> bool:
    """Whether a value is worth a look: flagged, below EXCELLENT or not grounded (and not
    approved)."""
    return not v.approved and bool(v.flags or v.grounded is False or v.band in (GOOD, SOMEWHAT))


def _badness(v: ValueFidelity) -> tuple[float, bool, int, str, str]:
    score = v.bleu_proxy if v.bleu_proxy is not None else (0.0 if v.grounded is False else 1.0)
    return (score, v.grounded is not False, -len(v.flags), v.doc_id, v.path)


# -- accumulation ----------------------------------------------------------------------------
@dataclass
class DocumentFidelity:
    """What a gold document's source showed, kept when a note names it (no source, an empty
    source, no prediction, injection findings, canaries); its values are folded, not kept."""

    position: int
    id: str
    findings: list[Finding] = field(default_factory=list)
    empty_source: bool = False
    unchecked: bool = False
    """no source (nothing checked)"""
    no_prediction: bool = False
    canaries: tuple[str, ...] = ()  # the canaries its source carries
    obeyed: tuple[str, ...] = ()  # those its prediction obeys

    @property
    def noted(self) -> bool:
        return bool(
            self.unchecked
            or self.empty_source
            or self.no_prediction
            or self.findings
            or self.canaries
            or self.obeyed
        )


@dataclass
class FidelityTools:
    """What checking a document needs beyond the config (rebuilt, never merged)."""

    comparators: Comparators
    selector: Selector
    skip: frozenset[str]


WorstKey = tuple[tuple[float, bool, int, str, str], int, int]
"""a value's badness, then its document's position and its place there (ties in gold order)"""


@dataclass
class FidelityAccumulator:
    """Text fidelity as mergeable statistics (:meth:`update` per gold document): per field the
    summed counts and where it first occurs, the BLEU proxies in gold order
    (:class:`~extract_mlflow.fidelity.sums.BleuSequence`), the ``worst`` worst values, the
    approved ones (every value with `keep_values`), the documents the notes name and the
    approvals used (a union). Any partition merges to the statistics of one pass: the float
    sums are replayed in gold order by :meth:`result`."""

    config: FidelityConfig
    approvals: Approvals | None = None
    canaries: tuple[Canary, ...] = ()
    keep_values: bool = False
    documents: int = 0
    stats: dict[str, FidelityStats] = field(default_factory=dict)
    first: dict[str, tuple[int, int]] = field(default_factory=dict)
    """field path -> (position, place) of its first value"""
    bleu: BleuSequence = field(default_factory=BleuSequence)
    worst: Smallest[WorstKey, ValueFidelity] = field(init=False)
    kept: list[tuple[int, int, ValueFidelity]] = field(default_factory=list)
    """(position, place, value) of the approved values (every value with `keep_values`)"""
    noted: list[DocumentFidelity] = field(default_factory=list)
    used: set[tuple[str, str]] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.worst = Smallest(self.config.worst)

    def tools(
        self, comparators: Comparators, id_key: str, skip_keys: Collection[str]
    ) -> FidelityTools:
        return FidelityTools(
            comparators, Selector(self.config), frozenset({id_key, *META_KEYS, *skip_keys})
        )

    def update(
        self,
        position: int,
        doc_id: str,
        gold: Mapping[str, Any],
        pred: Mapping[str, Any] | None,
        source: str | None,
        tools: FidelityTools,
    ) -> None:
        """Check one gold document's predicted values against its source (None: unchecked)
        and fold them in."""
        self.documents += 1
        rec = DocumentFidelity(position, doc_id)
        if source is None:
            rec.unchecked = True
        else:
            self._fold(position, self._check(rec, gold, pred, source, tools))
        if rec.noted:
            self.noted.append(rec)

    def _check(
        self,
        rec: DocumentFidelity,
        gold: Mapping[str, Any],
        pred: Mapping[str, Any] | None,
        source: str,
        tools: FidelityTools,
    ) -> list[ValueFidelity]:
        cfg = self.config
        doc = SourceDocument(source, cfg.casefold)
        rec.empty_source = not doc.raw.strip()
        if cfg.scan_injection:
            rec.findings = scan(doc.nfkc, doc.index.folded_vocabulary)
        if self.canaries:
            rec.canaries, rec.obeyed = check(self.canaries, doc.raw, pred, tools.skip)
        if pred is None:
            rec.no_prediction = True
            return []
        return list(
            check_document(
                rec.id, gold, pred, doc, cfg, tools.comparators, tools.selector, tools.skip
            )
        )

    def _fold(self, position: int, values: Sequence[ValueFidelity]) -> None:
        """One document's values into the statistics (approvals applied first)."""
        proxies = []
        for place, v in enumerate(values):
            approve(v, self.approvals or {}, self.used)
            stats = self.stats.get(v.path)
            if stats is None:
                stats = self.stats[v.path] = FidelityStats()
            at = (position, place)
            if at < self.first.setdefault(v.path, at):
                self.first[v.path] = at
            stats.add(v)
            if v.bleu_proxy is not None:
                proxies.append((v.path, v.bleu_proxy))
            if v.approved or self.keep_values:
                self.kept.append((position, place, v))
            if _notable(v):
                self.worst.offer((_badness(v), position, place), v)
        self.bleu.add(position, proxies)

    def merge(self, other: FidelityAccumulator) -> None:
        """Add `other`'s documents (same setup, other positions) to these."""
        theirs = (other.config, other.approvals, other.canaries, other.keep_values)
        if theirs != (self.config, self.approvals, self.canaries, self.keep_values):
            raise ValueError("cannot merge fidelity scored with another setup")
        self.documents += other.documents
        for path, stats in other.stats.items():
            self.stats.setdefault(path, FidelityStats()).merge(stats)
        for path, at in other.first.items():
            self.first[path] = min(at, self.first.get(path, at))
        self.bleu.merge(other.bleu)
        self.worst.merge(other.worst)
        self.kept.extend(other.kept)
        self.noted.extend(other.noted)
        self.used |= other.used

    def result(self, unused_sources: list[str]) -> FidelitySummary:
        """The summary, in gold order (`unused_sources`: source ids not in gold)."""
        summary = FidelitySummary(FidelityStats(), {}, self.config, self.documents)
        summary.unused_sources = list(unused_sources)
        total, per_field = self.bleu.sums()
        for path in sorted(self.stats, key=self.first.__getitem__):
            stats = summary.fields[path] = FidelityStats()
            stats.merge(self.stats[path])
            stats.bleu_sum = per_field.get(path, 0.0)
            summary.overall.merge(stats)
        summary.overall.bleu_sum = total
        summary.worst_values = self.worst.values()
        kept = [v for _, _, v in sorted(self.kept, key=lambda k: k[:2])]
        summary.approved = [v for v in kept if v.approved]
        summary.values = kept if self.keep_values else []
        self._notes(summary)
        summary.unused_approvals = sorted(set(self.approvals or {}) - self.used)
        return summary

    def _notes(self, summary: FidelitySummary) -> None:
        """The documents the notes name, in gold order."""
        if self.canaries:
            summary.canaries = CanaryTally([c.text for c in self.canaries])
        for rec in sorted(self.noted, key=lambda r: r.position):
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
    """Check every selected predicted value of the gold documents against its source (every
    value is kept: :attr:`FidelitySummary.values`).

    `comparators` gives each field its type and tolerance (from the main config). A document
    without a source is listed as unchecked; a prediction for an id not in gold is not checked.
    `skip_keys` are top-level keys never checked besides `id_key` (e.g. the source key).
    """
    acc = FidelityAccumulator(config or FidelityConfig(), approvals, keep_values=True)
    tools = acc.tools(comparators or Comparators(Config(id_key=id_key)), id_key, skip_keys)
    with gc_paused():
        for position, (doc_id, gold) in enumerate(gold_docs.items()):
            acc.update(position, doc_id, gold, pred_docs.get(doc_id), sources.get(doc_id), tools)
    return acc.result([i for i in sources if i not in gold_docs])


def fidelity_signature(config: FidelityConfig) -> str:
    """What makes two fidelity scores comparable (tokeniser, case, thresholds)."""
    case = "folded" if config.casefold else "kept"
    ground = "folded" if config.ground_casefold else "kept"
    return (
        f"fidelity:{__version__}|tok:{TOKENIZER_SIGNATURE}|case:{case}|ground_case:{ground}"
        f"|fuzzy:{config.fuzzy_threshold:g}|bands:{config.excellent:g}/{config.good:g}"
    )
