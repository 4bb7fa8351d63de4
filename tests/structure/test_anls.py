"""anls: the DocVQA rule by hand, including NL exactly 0.5 and empty strings."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extract_mlflow.structure.anls import (
    anls_score,
    normalize_answer,
    normalized_levenshtein,
    parse_gold_regions,
    parse_pred_regions,
    score_regions,
)


def test_exact_and_near_answers() -> None:
    assert anls_score("Total due", "total  DUE ") == 1.0  # case and white space
    assert anls_score("abcd", "abxd") == 0.75  # NL 1/4
    assert anls_score("abcdefghi", "abcdexxxx") == pytest.approx(1 - 4 / 9)  # NL 0.444 < 0.5


def test_nl_of_exactly_one_half_scores_zero() -> None:
    assert normalized_levenshtein("abcd", "abxy") == 0.5
    assert anls_score("abcd", "abxy") == 0.0
    assert anls_score("ab", "a") == 0.0  # NL 1/2
    assert anls_score("abcdefghij", "abcdefxxxx") == pytest.approx(0.6)  # NL 0.4


def test_empty_strings() -> None:
    assert anls_score("", "") == 1.0
    assert anls_score("  ", "\t") == 1.0  # both empty after normalisation
    assert anls_score("a", "") == 0.0
    assert anls_score("", "a") == 0.0
    assert anls_score("a", None) == 0.0  # the prediction lacks the region


def test_several_gold_answers_take_the_best() -> None:
    assert anls_score(["New York", "NYC"], "nyc") == 1.0
    assert anls_score(["abcd", "zzzz"], "abxd") == 0.75
    assert anls_score([], "") == 1.0  # no answer listed reads as the empty answer


def test_the_threshold_is_a_parameter() -> None:
    assert anls_score("abcd", "abxy", threshold=0.6) == 0.5
    assert anls_score("abcd", "abxd", threshold=0.25) == 0.0


def test_normalize_answer() -> None:
    assert normalize_answer("  Hello\n  WORLD ") == "hello world"


def test_regions_parse_from_lists_and_mappings() -> None:
    gold = parse_gold_regions([{"id": 1, "text": "a"}, {"id": "1", "text": ["b"]}, {"id": 2}])
    assert gold == {"1": ["a", "b"], "2": [""]}
    assert parse_gold_regions({"q": 12}) == {"q": ["12"]}
    pred = parse_pred_regions([{"id": "q", "text": ["x", "y"]}, {"id": "q", "text": "z"}])
    assert pred == {"q": "x"}
    assert parse_pred_regions([{"rid": "q", "answer": "z"}], "rid", "answer") == {"q": "z"}
    for bad in ("text", [{"text": "no id"}], ["q"]):
        with pytest.raises(TypeError):
            parse_gold_regions(bad)


def test_document_scores_average_the_gold_regions() -> None:
    gold = {"q1": ["abcd"], "q2": ["x"], "q3": ["y"]}
    result = score_regions(gold, {"q1": "abxd", "q2": "x", "extra": "ignored"})
    assert result.scores == {"q1": 0.75, "q2": 1.0, "q3": 0.0}
    assert result.mean == pytest.approx(1.75 / 3)
    assert score_regions({}, {"q": "a"}).mean is None


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=12), st.text(max_size=12))
def test_scores_are_zero_or_above_one_half(gold: str, pred: str) -> None:
    score = anls_score(gold, pred)
    assert score == 0.0 or 0.5 < score <= 1.0
    assert anls_score(gold, gold) == 1.0
    assert score == anls_score(pred, gold)
