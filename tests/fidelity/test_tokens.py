"""Tokens (NFKC, words with inner ./, between digits, single punctuation) and the source index:
n-gram presence checked against a plain reference implementation written here."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extract_mlflow.fidelity.tokens import WHITESPACE, SourceIndex, ngrams, normalize, tokenize


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Net 30 days", ["Net", "30", "days"]),
        ("1,250.00 EUR", ["1,250.00", "EUR"]),  # digits with inner , and . are one token
        ("Net 30, 1.5% late fee", ["Net", "30", ",", "1.5", "%", "late", "fee"]),
        ("paid 2026-02-10.", ["paid", "2026", "-", "02", "-", "10", "."]),
        ("Call-out fee", ["Call", "-", "out", "fee"]),
        ("(hours)", ["(", "hours", ")"]),
        ("v2.1 A4 80g", ["v2.1", "A4", "80g"]),
        ("e.g. abc.123", ["e", ".", "g", ".", "abc", ".", "123"]),  # a mark between letters splits
        ("12.5kg 1.1b", ["12.5kg", "1.1b"]),  # one run of word characters, as "80g"
        ("...", [".", ".", "."]),  # each punctuation mark is a token of its own
        ("", []),
        ("   \n\t ", []),
    ],
)
def test_words_numbers_and_punctuation(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("50 µM", ["50", "μM"]),  # micro sign U+00B5 -> Greek mu U+03BC
        ("50 μM", ["50", "μM"]),
        ("1.8 h⁻¹", ["1.8", "h", "−", "1"]),  # superscripts fold to U+2212 and 1
        ("37 ℃", ["37", "°", "C"]),  # degree Celsius sign -> ° C
        ("37 °C", ["37", "°", "C"]),
        ("ﬁtting", ["fitting"]),  # ligature
        ("１，２５０．００", ["1,250.00"]),  # full-width digits and marks
        ("①", ["1"]),
        ("1\u00a0250", ["1", "250"]),  # a no-break space is a space
    ],
)
def test_unicode_forms_fold_under_nfkc(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


def test_case_is_kept_unless_folded() -> None:
    assert tokenize("Gas BOILER") == ["Gas", "BOILER"]
    assert tokenize("Gas BOILER", casefold=True) == ["gas", "boiler"]
    assert tokenize("Straße", casefold=True) == ["strasse"]


def test_normalize_leaves_ascii_alone() -> None:
    text = "plain ascii"
    assert normalize(text) is text


def test_ngrams() -> None:
    assert ngrams(["a", "b", "c"], 2) == [("a", "b"), ("b", "c")]
    assert ngrams(["a", "b", "c"], 4) == []
    assert ngrams(["a", "a"], 1) == [("a",), ("a",)]  # repeats kept


def test_the_whitespace_table_is_what_the_regex_calls_whitespace() -> None:
    spaces = {chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000 and chr(c).isspace()}
    assert set(WHITESPACE) == spaces
    assert all(re.fullmatch(r"\s", c) for c in spaces)


# -- a plain reference implementation -------------------------------------------------------
def plain_tokens(text: str) -> list[str]:
    """Character by character: a run of word characters is a word, and a `.` or `,` between two
    digits inside a word continues it; any other non-space character is a token alone."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif re.match(r"\w", c):
            j = i
            while j < n and (
                re.match(r"\w", text[j])
                or (
                    text[j] in ".,"
                    and j > i
                    and text[j - 1].isdecimal()
                    and j + 1 < n
                    and text[j + 1].isdecimal()
                )
            ):
                j += 1
            out.append(text[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    return out


def plain_source_grams(source: list[str]) -> list[set[tuple[str, ...]]]:
    """For n = 1..4, the set of the source's n-grams."""
    grams = []
    for n in range(1, 5):
        found = set()
        for i in range(len(source) - n + 1):
            found.add(tuple(source[i : i + n]))
        grams.append(found)
    return grams


def plain_hits(value: list[str], source_grams: list[set[tuple[str, ...]]]) -> list[int]:
    """For n = 1..4, how many of the value's n-grams occur somewhere in the source."""
    found = []
    for n in range(1, 5):
        count = 0
        for i in range(len(value) - n + 1):
            if tuple(value[i : i + n]) in source_grams[n - 1]:
                count += 1
        found.append(count)
    return found


ASCIIISH = "ab c1.2,;:-()%° µM\n"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=ASCIIISH + "x9", max_size=60))
def test_tokenizer_agrees_with_the_plain_tokenizer(text: str) -> None:
    assert tokenize(text) == plain_tokens(normalize(text))


def _random_text(rng: random.Random, words: list[str], n: int) -> str:
    return " ".join(rng.choice(words) for _ in range(n))


@pytest.mark.parametrize("seed", range(20))
def test_ngram_hits_agree_with_the_plain_implementation(seed: int) -> None:
    rng = random.Random(seed)
    words = ["a", "b", "c", "d", ",", ".", "1.5", "x", "y"][: rng.randint(3, 9)]
    source = _random_text(rng, words, rng.randint(0, 200))
    index = SourceIndex(source)
    reference = plain_source_grams(tokenize(source))
    for _ in range(30):
        value = tokenize(_random_text(rng, [*words, "zz"], rng.randint(0, 9)))
        hits = index.hits(index.ids_of(value))
        assert [sum(h) for h in hits] == plain_hits(value, reference)
        assert [len(h) for h in hits] == [max(0, len(value) - n + 1) for n in range(1, 5)]


def test_ngram_hits_agree_for_a_vocabulary_too_large_to_pack() -> None:
    rng = random.Random(7)
    words = [f"w{i}" for i in range(40_000)]
    source = " ".join(words + [rng.choice(words) for _ in range(5000)])
    index = SourceIndex(source)
    assert not index._packed  # 40,000 distinct tokens: n-grams kept as tuples
    src = tokenize(source)
    reference = plain_source_grams(src)
    for _ in range(200):
        start = rng.randrange(len(src) - 6)
        value = src[start : start + rng.randint(1, 6)]
        if rng.random() < 0.5:
            value = [*value, rng.choice(words)]
        hits = index.hits(index.ids_of(value))
        assert [sum(h) for h in hits] == plain_hits(value, reference)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab ,.1\n\u00a0µ⁻¹ﬁ℃", max_size=80))
def test_token_offsets_point_at_the_tokens(text: str) -> None:
    index = SourceIndex(text)
    starts, ends = index.token_offsets
    assert [index.text[s:e] for s, e in zip(starts, ends, strict=True)] == index.tokens


def test_find_locates_a_verbatim_run() -> None:
    index = SourceIndex("a b c a b d a b d")
    assert index.find(index.ids_of(["a", "b", "d"])) == 3
    assert index.find(index.ids_of(["b", "c"])) == 1
    assert index.find(index.ids_of(["d", "c"])) is None
    assert index.find(index.ids_of(["zz"])) is None
    assert index.find([]) is None


def test_positions_ignore_case() -> None:
    index = SourceIndex("Gas gas GAS boiler")
    anchor = index.anchor_ids_of(["gAs"])[0]
    assert index.positions(anchor).tolist() == [0, 1, 2]
    assert index.frequency(anchor) == 3
    assert index.anchor_ids_of(["absent"]) == [-1]
