"""ANLS (Average Normalized Levenshtein Similarity) per region, the DocVQA rule. Pure.

For a gold answer g and a predicted answer p, both lowercased (``str.lower``: no case folding,
no Unicode normalisation) with white space collapsed and trimmed, the distance is
d = Levenshtein(norm(g), norm(p)) (characters). Two rules divide it differently
(``[structure] anls``):

- ``"normalized"`` (the default, key ``anls``): NL = d / max(len(norm(g)), len(norm(p))), and
  the region scores s = 1 − NL if NL < τ, else 0 (τ = ``anls_threshold``, 0.5), as the paper
  states it (Biten et al. 2019, ICDAR; Mathew et al. 2021, DocVQA). Padding or case cannot move
  the score.
- ``"official"`` (key ``anls_official``): what the public DocVQA/InfographicVQA evaluation
  script computes, so numbers equal published ones. It takes the same d but divides by
  max(len(g.upper()), len(p.upper())), the *raw* strings' lengths after upper-casing: padding
  spaces lower NL (gold "Coca Cola", prediction "   coca   colx   ": 1 − 1/17 = 0.941, where
  the normalised rule gives 1 − 1/9 = 0.889), and so do characters that upper-case to two
  ("ß" → "SS", "ﬁ" → "FI"). It zeroes a score only when 1 − NL < 1 − τ (the script's
  threshold is the similarity's, 0.5), so NL exactly 0.5 keeps 0.5.

Either way: two empty strings → NL 0 (score 1); a region with several gold answers takes the
best of them; a gold region the prediction lacks → 0. Predicted regions absent from gold are not
scored. ANLS of a document is the mean over its gold regions; over a set, the mean over all gold
regions.

``regions`` fields: a list of ``{id, text}`` objects (``text`` a string, or a list of accepted
answers in gold) or a mapping ``{id: text}``. Repeated gold ids pool their answers; a predicted
list counts as its first item (so a gold set scored against itself gets 1), and a repeated
predicted id keeps its first text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rapidfuzz.distance import Levenshtein

DEFAULT_THRESHOLD = 0.5
AnlsRule = Literal["normalized", "official"]


def normalize_answer(text: str) -> str:
    """Lowercased, white space collapsed and trimmed.

    >>> normalize_answer("  New\\tYORK ")
    'new york'
    """
    return " ".join(text.lower().split())


def normalized_levenshtein(gold: str, pred: str, rule: AnlsRule = "normalized") -> float:
    """Levenshtein distance of the :func:`normalize_answer` strings / the longer length: of
    the normalised strings (``"normalized"``), or of the raw strings upper-cased
    (``"official"``, the DocVQA script's). 0 when that length is 0.

    >>> normalized_levenshtein("Coca Cola", "   coca   colx   ", "official")  # 1/17
    0.058823529411764705
    """
    a, b = normalize_answer(gold), normalize_answer(pred)
    if rule == "official":
        longest = max(len(gold.upper()), len(pred.upper()))
    else:
        longest = max(len(a), len(b))
    return Levenshtein.distance(a, b) / longest if longest else 0.0


def anls_score(
    gold: str | Sequence[str],
    pred: str | None,
    threshold: float = DEFAULT_THRESHOLD,
    rule: AnlsRule = "normalized",
) -> float:
    """The DocVQA score of one region: max over the gold answers of 1 − NL when it is kept
    (NL < τ; official: 1 − NL ≥ 1 − τ, the script's comparison), else 0.

    >>> anls_score("abcd", "abxd"), anls_score("abcd", "abxy"), anls_score("", "")
    (0.75, 0.0, 1.0)
    >>> anls_score("abcd", "abxy", rule="official")
    0.5
    """
    if pred is None:
        return 0.0
    answers = [gold] if isinstance(gold, str) else list(gold) or [""]
    best = 0.0
    for answer in answers:
        nl = normalized_levenshtein(answer, pred, rule)
        score = 1.0 - nl
        kept = score >= 1.0 - threshold if rule == "official" else nl < threshold
        if kept:
            best = max(best, score)
    return best


def _text(value: Any) -> list[str]:
    if value is None:
        return [""]
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value if v is not None] or [""]
    return [str(value)]


def _pairs(value: Any, id_key: str, text_key: str) -> list[tuple[str, Any]]:
    if isinstance(value, Mapping):
        return [(str(k), v) for k, v in value.items()]
    if not isinstance(value, (list, tuple)):
        raise TypeError("regions must be a list of {id, text} objects or a mapping id → text")
    out = []
    for item in value:
        if not isinstance(item, Mapping) or item.get(id_key) is None:
            raise TypeError(f"a region must be an object with '{id_key}' and '{text_key}'")
        out.append((str(item[id_key]), item.get(text_key)))
    return out


def parse_gold_regions(
    value: Any, id_key: str = "id", text_key: str = "text"
) -> dict[str, list[str]]:
    """Gold regions: id → accepted answers (repeated ids pool their answers)."""
    out: dict[str, list[str]] = {}
    for region, text in _pairs(value, id_key, text_key):
        out.setdefault(region, []).extend(_text(text))
    return out


def parse_pred_regions(value: Any, id_key: str = "id", text_key: str = "text") -> dict[str, str]:
    """Predicted regions: id → text (a list counts as its first item; a repeated id keeps its
    first text)."""
    out: dict[str, str] = {}
    for region, text in _pairs(value, id_key, text_key):
        out.setdefault(region, _text(text)[0])
    return out


@dataclass(frozen=True, slots=True)
class RegionScores:
    """ANLS per gold region of one document, and the rule that scored them."""

    scores: dict[str, float]
    rule: AnlsRule = "normalized"

    @property
    def key(self) -> str:
        """The metric these scores make: ``anls``, or ``anls_official`` for the script's rule."""
        return "anls_official" if self.rule == "official" else "anls"

    @property
    def total(self) -> float:
        return sum(self.scores.values())

    @property
    def mean(self) -> float | None:
        """The document's ANLS (None without gold regions)."""
        return self.total / len(self.scores) if self.scores else None


def score_regions(
    gold: Mapping[str, Sequence[str]],
    pred: Mapping[str, str],
    threshold: float = DEFAULT_THRESHOLD,
    rule: AnlsRule = "normalized",
) -> RegionScores:
    """ANLS of every gold region (a region the prediction lacks scores 0)."""
    scores = {r: anls_score(a, pred.get(r), threshold, rule) for r, a in gold.items()}
    return RegionScores(scores, rule)
