"""Text fidelity of one value: n-gram precisions against its source, the BLEU proxy, the band
and the flags, and where in the source the value was found. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..config import FidelityConfig
from .grounding import Span, align_fuzzy, missing_ngrams, verbatim_span
from .tokens import MAX_ORDER, TOKEN_RE, SourceIndex, ngrams, normalize

EXCELLENT, GOOD, SOMEWHAT = "EXCELLENT", "GOOD", "SOMEWHAT"


BANDS = (EXCELLENT, GOOD, SOMEWHAT)


NEW_VOCABULARY, PARAPHRASE = "new_vocabulary", "paraphrase"


FLAGS = (NEW_VOCABULARY, PARAPHRASE)


ORDERS = tuple(range(1, MAX_ORDER + 1))


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
