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
groundedness = grounded / checked. Reviewer approvals (:func:`load_approvals`) clear a value's
flags, keep its scores, and list it as approved.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from .._version import __version__
from ..config import Config, FidelityConfig
from ..core.keys import field_key
from ..core.paths import document_leaves, strip_list_marks
from ..core.runtime import gc_paused
from ..core.text import compact, escape_pipes, fmt
from ..errors import InputError
from ..fields.normalize import TYPE_ERROR, Comparator, Comparators, as_text
from .grounding import SourceNumbers, Span, align_fuzzy, missing_ngrams, verbatim_span
from .injection import Finding, scan
from .tokens import MAX_ORDER, TOKEN_RE, TOKENIZER_SIGNATURE, SourceIndex, ngrams, normalize

EXCELLENT, GOOD, SOMEWHAT = "EXCELLENT", "GOOD", "SOMEWHAT"
BANDS = (EXCELLENT, GOOD, SOMEWHAT)
NEW_VOCABULARY, PARAPHRASE = "new_vocabulary", "paraphrase"
FLAGS = (NEW_VOCABULARY, PARAPHRASE)
GROUNDING_TYPES = ("text", "id", "number", "quantity")
"""Field types whose values are grounded by default (dates, booleans, enums and ratios are
written in too many ways to look up verbatim)."""
ORDERS = tuple(range(1, MAX_ORDER + 1))


# -- config --------------------------------------------------------------------------------
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A field-path glob as a regex: ``**`` any text, ``*`` any text without a dot.

    >>> bool(glob_regex("line_items[].*").match("line_items[].qty"))
    True
    """
    parts = re.split(r"(\*\*|\*)", pattern)
    rx = "".join(".*" if p == "**" else "[^.]*" if p == "*" else re.escape(p) for p in parts)
    return re.compile(rx + r"\Z")


# -- one value -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class NgramCounts:
    """Per order n = 1..4: value n-grams found in the source, and value n-grams."""

    matched: tuple[int, ...]
    total: tuple[int, ...]

    @property
    def precisions(self) -> tuple[float | None, ...]:
        return tuple(m / t if t else None for m, t in zip(self.matched, self.total, strict=True))


def bleu_proxy(precisions: Sequence[float | None]) -> float | None:
    """Mean of the defined precisions; None when none is defined."""
    defined = [p for p in precisions if p is not None]
    return sum(defined) / len(defined) if defined else None


def band(score: float | None, config: FidelityConfig) -> str | None:
    if score is None:
        return None
    if score >= config.excellent:
        return EXCELLENT
    return GOOD if score >= config.good else SOMEWHAT


def flags_for(precisions: Sequence[float | None], config: FidelityConfig) -> tuple[str, ...]:
    """``new_vocabulary`` when p1 < 0.80; ``paraphrase`` when p1 ≥ 0.85 and p4 < 0.50 (no p4,
    no paraphrase flag)."""
    p1, p4 = precisions[0], precisions[3]
    out = []
    if p1 is not None and p1 < config.new_vocabulary_p1:
        out.append(NEW_VOCABULARY)
    if (
        p1 is not None
        and p4 is not None
        and p1 >= config.paraphrase_p1
        and p4 < config.paraphrase_p4
    ):
        out.append(PARAPHRASE)
    return tuple(out)


def ngram_counts(tokens: Sequence[str], index: SourceIndex) -> tuple[NgramCounts, list[str]]:
    """The value's n-gram counts against the source, and its n-grams absent from the source
    (each once, shortest first)."""
    hits = index.hits(index.ids_of(tokens))
    counts = NgramCounts(tuple(sum(h) for h in hits), tuple(len(h) for h in hits))
    extra: dict[str, None] = {}
    for n, found in zip(ORDERS, hits, strict=True):
        if all(found):
            continue
        for gram, ok in zip(ngrams(tokens, n), found, strict=True):
            if not ok:
                extra[" ".join(gram)] = None
    return counts, list(extra)


@dataclass(slots=True)
class ValueFidelity:
    """What the fidelity check found for one extracted value.

    ``ngram`` is None when the field is only grounded (not n-gram scored); ``grounded`` is None
    when the value was not checked for grounding (an empty value, or a field not selected);
    ``grounding`` says how it was found: ``verbatim``, ``fuzzy``, ``value`` (numbers) or
    ``not_found``. An approved value keeps its scores; its flags move to ``cleared_flags``.
    """

    doc_id: str
    path: str
    value: Any
    type: str
    tokens: tuple[str, ...] = ()
    ngram: NgramCounts | None = None
    bleu_proxy: float | None = None
    band: str | None = None
    flags: tuple[str, ...] = ()
    extra_ngrams: tuple[str, ...] = ()
    span: Span | None = None
    missing_ngrams: tuple[str, ...] = ()
    grounded: bool | None = None
    grounding: str | None = None
    approved: bool = False
    cleared_flags: tuple[str, ...] = ()
    note: str | None = None

    def p(self, n: int) -> float | None:
        return None if self.ngram is None else self.ngram.precisions[n - 1]

    @property
    def p1(self) -> float | None:
        return self.p(1)

    @property
    def p2(self) -> float | None:
        return self.p(2)

    @property
    def p3(self) -> float | None:
        return self.p(3)

    @property
    def p4(self) -> float | None:
        return self.p(4)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.doc_id,
            "path": self.path,
            "value": self.value,
            "type": self.type,
            "tokens": list(self.tokens),
            **{f"p{n}": self.p(n) for n in ORDERS},
            "bleu_proxy": self.bleu_proxy,
            "band": self.band,
            "flags": list(self.flags),
            "extra_ngrams": list(self.extra_ngrams),
            "span": None if self.span is None else self.span.to_dict(),
            "missing_ngrams": list(self.missing_ngrams),
            "grounded": self.grounded,
            "grounding": self.grounding,
            "approved": self.approved,
            "cleared_flags": list(self.cleared_flags),
            "note": self.note,
        }


def check_text(
    text: str,
    index: SourceIndex,
    config: FidelityConfig,
    *,
    score_ngrams: bool = True,
    ground: bool = True,
) -> ValueFidelity:
    """Check one value's text against one source (doc id and path left empty)."""
    norm = normalize(text, config.casefold)
    tokens = TOKEN_RE.findall(norm)
    out = ValueFidelity("", "", text, "text", tuple(tokens))
    if not tokens:
        if score_ngrams:
            _set_ngrams(out, NgramCounts((0,) * MAX_ORDER, (0,) * MAX_ORDER), [], config)
        return out
    at = index.find(index.ids_of(tokens))
    if at is not None:  # verbatim: every n-gram occurs, the span is the occurrence
        out.span = verbatim_span(index, at, len(tokens))
        if score_ngrams:
            total = tuple(max(0, len(tokens) - n + 1) for n in ORDERS)
            _set_ngrams(out, NgramCounts(total, total), [], config)
    else:
        if score_ngrams:
            _set_ngrams(out, *ngram_counts(tokens, index), config)
        out.span = align_fuzzy(index, tokens, " ".join(norm.split()), config.ground_casefold)
        out.missing_ngrams = tuple(missing_ngrams(out.span, tokens))
    if ground:
        _set_text_grounding(out, at is not None, config)
    return out


def _set_ngrams(
    out: ValueFidelity, counts: NgramCounts, extra: list[str], config: FidelityConfig
) -> None:
    out.ngram, out.extra_ngrams = counts, tuple(extra)
    out.bleu_proxy = bleu_proxy(counts.precisions)
    out.band = band(out.bleu_proxy, config)
    out.flags = flags_for(counts.precisions, config)


def _set_text_grounding(out: ValueFidelity, verbatim: bool, config: FidelityConfig) -> None:
    fuzzy = out.span is not None and out.span.score >= config.fuzzy_threshold
    out.grounded = verbatim or fuzzy
    out.grounding = "verbatim" if verbatim else "fuzzy" if fuzzy else "not_found"


def score_text(
    value: str, source: str | SourceIndex, config: FidelityConfig | None = None
) -> ValueFidelity:
    """Score one value against one source text: the whole per-value check.

    >>> v = score_text("gas boiler", "Annual maintenance, gas boiler")
    >>> v.p1, v.p2, v.bleu_proxy, v.band, v.grounded
    (1.0, 1.0, 1.0, 'EXCELLENT', True)
    """
    cfg = config or FidelityConfig()
    index = source if isinstance(source, SourceIndex) else SourceIndex(source, cfg.casefold)
    return check_text(value, index, cfg)


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


# -- approvals -----------------------------------------------------------------------------
Approvals = Mapping[tuple[str, str], str | None]
"""(document id, field path) -> the reviewer's note (or None)."""


def approval_key(doc_id: str, path: str) -> tuple[str, str]:
    """How approvals are matched: the path's ``[]`` markers do not matter."""
    return str(doc_id), strip_list_marks(path).strip()


def load_approvals(path: str | Path) -> dict[tuple[str, str], str | None]:
    """Reviewer approvals from a CSV (header ``id,path[,note]``) or a JSONL file (objects
    with ``id``, ``path`` and optionally ``note``); a bad line is an InputError naming it."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"{p}: approvals file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{p}: cannot read the approvals file: {exc}") from None
    rows = _csv_rows(p, text) if p.suffix.lower() == ".csv" else _jsonl_rows(p, text)
    out: dict[tuple[str, str], str | None] = {}
    for where, row in rows:
        doc_id, fpath, note = row.get("id"), row.get("path"), row.get("note")
        if (
            not isinstance(doc_id, str | int)
            or isinstance(doc_id, bool)
            or (isinstance(doc_id, str) and not doc_id.strip())
        ):
            raise InputError(f"{p}, {where}: 'id' must be a non-empty string or integer")
        if not isinstance(fpath, str) or not fpath.strip():
            raise InputError(f"{p}, {where}: 'path' must be a non-empty string")
        if note is not None and not isinstance(note, str):
            raise InputError(f"{p}, {where}: 'note' must be a string")
        out[approval_key(str(doc_id), fpath)] = note or None
    return out


def _csv_rows(p: Path, text: str) -> Iterator[tuple[str, dict[str, Any]]]:
    reader = csv.DictReader(text.splitlines())
    if not reader.fieldnames or not {"id", "path"} <= set(reader.fieldnames):
        raise InputError(f"{p}: the CSV header must name the columns id and path (and note)")
    for row in reader:
        yield f"line {reader.line_num}", dict(row)


def _jsonl_rows(p: Path, text: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{p}, line {n}: invalid JSON: {exc.msg}") from None
        if not isinstance(row, dict):
            raise InputError(f"{p}, line {n}: expected a JSON object with id and path")
        yield f"line {n}", row


def _approve(v: ValueFidelity, approvals: Approvals, used: set[tuple[str, str]]) -> None:
    key = approval_key(v.doc_id, v.path)
    if key in approvals:
        used.add(key)
        v.approved, v.note = True, approvals[key]
        v.cleared_flags, v.flags = v.flags, ()


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

    def metrics(self, keys: Mapping[str, str] | None = None) -> dict[str, float]:
        """The metric keys: bleu_proxy, ngram_p1..ngram_p4, groundedness, hallucination_rate,
        field_bleu_proxy/<suffix> (`keys`: the evaluation's field keys); undefined scores are
        left out."""
        o = self.overall
        out: dict[str, float | None] = {"bleu_proxy": o.bleu_proxy}
        out.update({f"ngram_p{n}": p for n, p in zip(ORDERS, o.precisions, strict=True)})
        out["groundedness"] = o.groundedness
        out["hallucination_rate"] = o.hallucination_rate
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
        if all_values:
            out["values"] = [v.to_dict() for v in self.values]
        return out

    def to_markdown(self) -> str:
        return summary_markdown(self)

    def to_table(self) -> str:
        return summary_table(self)


def _badness(v: ValueFidelity) -> tuple[float, bool, int, str, str]:
    score = v.bleu_proxy if v.bleu_proxy is not None else (0.0 if v.grounded is False else 1.0)
    return (score, v.grounded is not False, -len(v.flags), v.doc_id, v.path)


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
    with gc_paused():
        return _score_fidelity(
            gold_docs, pred_docs, sources, config, comparators, id_key, approvals, skip_keys
        )


def _score_fidelity(
    gold_docs: Mapping[str, Mapping[str, Any]],
    pred_docs: Mapping[str, Mapping[str, Any]],
    sources: Mapping[str, str],
    config: FidelityConfig | None,
    comparators: Comparators | None,
    id_key: str,
    approvals: Approvals | None,
    skip_keys: Collection[str],
) -> FidelitySummary:
    cfg = config or FidelityConfig()
    comps = comparators or Comparators(Config(id_key=id_key))
    skip = {id_key, *skip_keys}
    summary = FidelitySummary([], FidelityStats(), {}, cfg, documents=len(gold_docs))
    summary.unused_sources = [i for i in sources if i not in gold_docs]
    used: set[tuple[str, str]] = set()
    selector = _Selector(cfg)
    for doc_id, gold in gold_docs.items():
        if doc_id not in sources:
            summary.unchecked.append(doc_id)
            continue
        doc = _Document(sources[doc_id], cfg.casefold)
        _scan_source(doc_id, doc, cfg, summary)
        pred = pred_docs.get(doc_id)
        if pred is None:
            summary.no_prediction.append(doc_id)
            continue
        for v in _check_document(doc_id, gold, pred, doc, cfg, comps, selector, skip):
            _approve(v, approvals or {}, used)
            summary.values.append(v)
            summary.overall.add(v)
            summary.fields.setdefault(v.path, FidelityStats()).add(v)
    summary.unused_approvals = sorted(set(approvals or {}) - used)
    return summary


def _scan_source(doc_id: str, doc: _Document, cfg: FidelityConfig, out: FidelitySummary) -> None:
    if not doc.raw.strip():
        out.empty_sources.append(doc_id)
    if cfg.scan_injection:
        findings = scan(doc.nfkc, doc.index.folded_vocabulary)
        if findings:
            out.injection[doc_id] = findings


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


# -- views ---------------------------------------------------------------------------------
_LIST_LIMIT = 6


def _cell(value: Any, limit: int = 50) -> str:
    """A value in one markdown table cell (JSON's null for None)."""
    return escape_pipes(compact(value, limit, none=None))


def _grams(grams: Sequence[str]) -> str:
    shown = escape_pipes(", ".join(f"`{g}`" for g in grams[:_LIST_LIMIT]))
    more = len(grams) - _LIST_LIMIT
    return (shown + (f" (+{more})" if more > 0 else "")) or "—"


def _grounded(v: ValueFidelity) -> str:
    return "—" if v.grounded is None else ("yes" if v.grounded else "**no**")


def fields_worst_first(summary: FidelitySummary) -> list[tuple[str, FidelityStats]]:
    """Fields by BLEU proxy ascending (undefined last), then by hallucination rate."""
    return sorted(
        summary.fields.items(),
        key=lambda kv: (
            kv[1].bleu_proxy is None,
            kv[1].bleu_proxy or 0.0,
            -(kv[1].hallucination_rate or 0.0),
            kv[0],
        ),
    )


def _field_row(name: str, s: FidelityStats) -> list[str]:
    bands = "/".join(str(s.bands[b]) for b in BANDS)
    ground = f"{s.grounded}/{s.checked}" if s.checked else "—"
    return [
        name,
        str(s.values),
        fmt(s.bleu_proxy),
        *(fmt(p) for p in s.precisions),
        bands,
        str(s.flags[NEW_VOCABULARY]),
        str(s.flags[PARAPHRASE]),
        ground,
        fmt(s.hallucination_rate),
    ]


_FIELD_HEAD = [
    "field",
    "scored",
    "BLEU proxy",
    "p1",
    "p2",
    "p3",
    "p4",
    "E/G/S",
    "new vocab",
    "paraphrase",
    "grounded",
    "halluc. rate",
]


def summary_markdown(summary: FidelitySummary) -> str:
    """The fidelity section of summary.md (starts with a level-2 heading)."""
    o = summary.overall
    p = " / ".join(fmt(x) for x in o.precisions)
    lines = [
        "## Text fidelity",
        "",
        f"- values n-gram scored: {o.values} ({o.empty} empty); grounding checked: {o.checked}",
        f"- BLEU proxy (mean over values): {fmt(o.bleu_proxy)}; pooled p1..p4: {p}",
        "- bands: " + ", ".join(f"{b} {o.bands[b]}" for b in BANDS),
        "- flags: " + ", ".join(f"{f} {o.flags[f]}" for f in FLAGS),
        f"- groundedness: {fmt(o.groundedness)} ({o.grounded}/{o.checked});"
        f" hallucination rate: {fmt(o.hallucination_rate)}",
        f"- approved by a reviewer: {o.approved}",
        f"- signature: `{summary.signature()}`",
        "",
        "| " + " | ".join(_FIELD_HEAD) + " |",
        "|---|" + "---:|" * (len(_FIELD_HEAD) - 1),
        "| " + " | ".join(_field_row("**all**", o)) + " |",
    ]
    for name, stats in fields_worst_first(summary):
        lines.append("| " + " | ".join(_field_row(f"`{name}`", stats)) + " |")
    lines += _worst_markdown(summary) + _approved_markdown(summary)
    lines += _injection_markdown(summary) + _notes_markdown(summary)
    return "\n".join(lines) + "\n"


def _worst_markdown(summary: FidelitySummary) -> list[str]:
    worst = summary.worst()
    if not worst:
        return []
    lines = [
        "",
        "### Values to review (worst first)",
        "",
        "| document | field | value | BLEU | band | flags | grounded | source span (score)"
        " | extra n-grams | missing n-grams |",
        "|---|---|---|---:|---|---|---|---|---|---|",
    ]
    for v in worst:
        span = "—" if v.span is None else f"{_cell(v.span.text)} ({v.span.score:.2f})"
        lines.append(
            f"| {_cell(v.doc_id)} | `{v.path}` | {_cell(v.value)} | {fmt(v.bleu_proxy)} "
            f"| {v.band or '—'} | {', '.join(v.flags) or '—'} | {_grounded(v)} | {span} "
            f"| {_grams(v.extra_ngrams)} | {_grams(v.missing_ngrams)} |"
        )
    return lines


def _approved_markdown(summary: FidelitySummary) -> list[str]:
    approved = summary.approved
    if not approved:
        return []
    lines = [
        "",
        "### Approved by a reviewer (flags cleared, scores kept)",
        "",
        "| document | field | value | BLEU | cleared flags | grounded | note |",
        "|---|---|---|---:|---|---|---|",
    ]
    for v in approved:
        lines.append(
            f"| {_cell(v.doc_id)} | `{v.path}` | {_cell(v.value)} | {fmt(v.bleu_proxy)} "
            f"| {', '.join(v.cleared_flags) or '—'} | {_grounded(v)} | {_cell(v.note or '—')} |"
        )
    return lines


def _injection_markdown(summary: FidelitySummary) -> list[str]:
    if not summary.injection:
        return []
    lines = [
        "",
        "### Prompt-like text in source documents",
        "",
        "| document | line | pattern | text |",
        "|---|---:|---|---|",
    ]
    for doc_id, findings in summary.injection.items():
        for f in findings:
            lines.append(f"| {_cell(doc_id)} | {f.line} | {f.pattern} | {_cell(f.snippet, 80)} |")
    return lines


def _notes(summary: FidelitySummary) -> list[str]:
    notes = []
    if summary.unchecked:
        notes.append(
            f"{len(summary.unchecked)} document(s) without a source (unchecked): "
            + ", ".join(summary.unchecked[:20])
        )
    if summary.no_prediction:
        notes.append(
            f"{len(summary.no_prediction)} document(s) without a usable prediction "
            "(missing or unparseable; nothing to check): " + ", ".join(summary.no_prediction[:20])
        )
    if summary.empty_sources:
        notes.append("source(s) with no text: " + ", ".join(summary.empty_sources[:20]))
    if summary.unused_sources:
        notes.append(
            f"{len(summary.unused_sources)} source(s) for ids not in gold: "
            + ", ".join(summary.unused_sources[:20])
        )
    for doc_id, path in summary.unused_approvals:
        notes.append(f"approval for {doc_id} `{path}` matched no checked value")
    return notes


def _notes_markdown(summary: FidelitySummary) -> list[str]:
    notes = _notes(summary)
    return ["", "### Fidelity notes", "", *[f"- {n}" for n in notes]] if notes else []


def summary_table(summary: FidelitySummary) -> str:
    """A plain-text table for the terminal: overall, then one row per field."""
    o = summary.overall
    head = (
        f"text fidelity  BLEU proxy {fmt(o.bleu_proxy)}  groundedness {fmt(o.groundedness)}"
        f"  hallucination rate {fmt(o.hallucination_rate)}  approved {o.approved}"
    )
    rows = [_FIELD_HEAD, _field_row("(all)", o)]
    rows += [_field_row(name, stats) for name, stats in fields_worst_first(summary)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_FIELD_HEAD))]
    out = [head, ""]
    for n, r in enumerate(rows):
        cells = [r[0].ljust(widths[0])] + [r[i].rjust(widths[i]) for i in range(1, len(r))]
        out.append("  ".join(cells).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    for doc_id, findings in summary.injection.items():
        out.append(
            f"prompt-like text in {doc_id}: "
            + ", ".join(f"line {f.line} {f.pattern}" for f in findings)
        )
    out += _notes(summary)
    return "\n".join(out) + "\n"


def fidelity_signature(config: FidelityConfig) -> str:
    """What makes two fidelity scores comparable (tokeniser, case, thresholds)."""
    case = "folded" if config.casefold else "kept"
    ground = "folded" if config.ground_casefold else "kept"
    return (
        f"fidelity:{__version__}|tok:{TOKENIZER_SIGNATURE}|case:{case}|ground_case:{ground}"
        f"|fuzzy:{config.fuzzy_threshold:g}|bands:{config.excellent:g}/{config.good:g}"
    )
