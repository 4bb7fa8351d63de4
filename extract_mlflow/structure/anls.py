"""ANLS (Average Normalized Levenshtein Similarity) per region, the DocVQA rule. Pure.

For a gold answer g and a predicted answer p, both lowercased with white space collapsed and
trimmed, NL = Levenshtein(g, p) / max(len(g), len(p)) (characters; two empty strings → NL 0).
The region scores

    s = 1 − NL   if NL < τ        s = 0   otherwise        (τ = 0.5)

so a prediction at least half wrong scores nothing (NL exactly 0.5 → 0). A region with several
gold answers takes the best of them. Both empty → 1; one empty → 0; a gold region the prediction
lacks → 0. Predicted regions absent from gold are not scored. ANLS of a document is the mean
over its gold regions; over a set, the mean over all gold regions (Biten et al. 2019, ICDAR;
Mathew et al. 2021, DocVQA).

``regions`` fields: a list of ``{id, text}`` objects (``text`` a string, or a list of accepted
answers in gold) or a mapping ``{id: text}``. Repeated gold ids pool their answers; a predicted
list counts as its first item (so a gold set scored against itself gets 1), and a repeated
predicted id keeps its first text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz.distance import Levenshtein

DEFAULT_THRESHOLD = 0.5


def normalize_answer(text: str) -> str:
    """Lowercased, white space collapsed and trimmed.

    >>> normalize_answer("  New\\tYORK ")
    'new york'
    """
    return " ".join(text.lower().split())


def normalized_levenshtein(gold: str, pred: str) -> float:
    """Levenshtein distance / the longer length, after :func:`normalize_answer` (0 for two
    empty strings)."""
    a, b = normalize_answer(gold), normalize_answer(pred)
    longest = max(len(a), len(b))
    return Levenshtein.distance(a, b) / longest if longest else 0.0


def anls_score(
    gold: str | Sequence[str], pred: str | None, threshold: float = DEFAULT_THRESHOLD
) -> float:
    """The DocVQA score of one region: max over the gold answers of 1 − NL when NL < τ, else 0.

    >>> anls_score("abcd", "abxd"), anls_score("abcd", "abxy"), anls_score("", "")
    (0.75, 0.0, 1.0)
    """
    if pred is None:
        return 0.0
    answers = [gold] if isinstance(gold, str) else list(gold) or [""]
    best = 0.0
    for answer in answers:
        nl = normalized_levenshtein(answer, pred)
        if nl < threshold:
            best = max(best, 1.0 - nl)
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
    """ANLS per gold region of one document."""

    scores: dict[str, float]

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
) -> RegionScores:
    """ANLS of every gold region (a region the prediction lacks scores 0)."""
    return RegionScores({r: anls_score(a, pred.get(r), threshold) for r, a in gold.items()})
