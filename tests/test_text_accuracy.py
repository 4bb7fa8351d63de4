"""text_accuracy: CER and WER statistics equal jiwer's and a plain Levenshtein DP.

Two independent references. jiwer (``process_characters``/``process_words`` for the S/D/I/H
counts, ``cer``/``wer`` for the rates, per document and over corpora) and, on small cases, a
textbook O(n·m) dynamic programme written here. The total S + D + I is unique and is checked
against both; the split into S, D and I is not unique (``"ab"`` to ``"ba"``: two substitutions
or a deletion and an insertion), so it is checked against jiwer, which reads the same rapidfuzz
alignment, and against the DP only as "one of the minimal alignments": its deletion count is one
an optimal alignment has (which, with the total and the two lengths, fixes S and I too).

jiwer's WER splits words on the space only (after turning runs of whitespace into one space),
so jiwer's default is the reference where that equals ``str.split()``, and jiwer with every
whitespace character turned into a space (``ANY_WHITESPACE``) is the reference everywhere.
"""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Sequence

import jiwer
import jiwer.transforms as jt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jiwer.transformations import wer_default

from extract_mlflow.text_accuracy import (
    HIGHER_IS_BETTER,
    EditCounts,
    _edit_counts,
    _word_counts,
    char_edits,
    corpus_rate,
    total_edits,
    word_edits,
)

TOL = 1e-12

ANY_WHITESPACE = jt.Compose(
    [
        jt.SubstituteRegexes({r"\s": " "}),
        jt.RemoveMultipleSpaces(),
        jt.Strip(),
        jt.ReduceToListOfListOfWords(),
    ]
)
"""jiwer's default WER transform, with every whitespace character a word boundary."""

WHITESPACE = [" ", " ", " ", "\t", "\n", "\r\n", "\u00a0", "\u2003", "\u3000", "\x1f", "\u2028"]
"""Separators (space most often); each is ``str.isspace`` and matched by jiwer's ``\\s``."""

POOLS = [
    "abcdefghijklmnopqrstuvwxyz",
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    ".,;:!?-'\"()/%€$",
    "éèàüöñçßøåÉÜ",  # precomposed
    "абвгдежзийклмн",
    "的一是不了人我在有他这中大来上个国北京",  # CJK: no spaces inside a sentence
]
# all but the first are several code points: a skin tone, a ZWJ sequence, a flag, a variation
EMOJI = ["😀", "👍", "👍🏽", "👩\u200d💻", "🇫🇷", "❤\ufe0f"]
COMBINING = ["\u0301", "\u0308", "\u0327"]


# -- the plain reference: a textbook Levenshtein table and its backtrace ----------------------


def levenshtein_table(a: Sequence[object], b: Sequence[object]) -> list[list[int]]:
    t = [[i + j if i == 0 or j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            diagonal = t[i - 1][j - 1] + (a[i - 1] != b[j - 1])
            t[i][j] = min(diagonal, t[i - 1][j] + 1, t[i][j - 1] + 1)
    return t


def plain_edits(a: Sequence[object], b: Sequence[object]) -> tuple[int, int, int, int]:
    """(S, D, I, H) of one minimal alignment (diagonal first, then deletion, then insertion)."""
    t = levenshtein_table(a, b)
    i, j, s, d, ins, h = len(a), len(b), 0, 0, 0, 0
    while i or j:
        if i and j and t[i][j] == t[i - 1][j - 1] + (a[i - 1] != b[j - 1]):
            h, s = (h + 1, s) if a[i - 1] == b[j - 1] else (h, s + 1)
            i, j = i - 1, j - 1
        elif i and t[i][j] == t[i - 1][j] + 1:
            d, i = d + 1, i - 1
        else:
            ins, j = ins + 1, j - 1
    return s, d, ins, h


def optimal_deletions(a: Sequence[object], b: Sequence[object]) -> set[int]:
    """Every deletion count that some minimal alignment of ``a`` to ``b`` has."""
    t = levenshtein_table(a, b)
    dels: list[list[set[int]]] = [[set() for _ in range(len(b) + 1)] for _ in range(len(a) + 1)]
    dels[0][0] = {0}
    for i in range(len(a) + 1):
        for j in range(len(b) + 1):
            if i and j and t[i][j] == t[i - 1][j - 1] + (a[i - 1] != b[j - 1]):
                dels[i][j] |= dels[i - 1][j - 1]
            if i and t[i][j] == t[i - 1][j] + 1:
                dels[i][j] |= {d + 1 for d in dels[i - 1][j]}
            if j and t[i][j] == t[i][j - 1] + 1:
                dels[i][j] |= dels[i][j - 1]
    return dels[len(a)][len(b)]


def assert_matches_plain_dp(ref: Sequence[object], hyp: Sequence[object], got: EditCounts) -> None:
    s, d, i, h = plain_edits(ref, hyp)
    assert got.errors == s + d + i, (ref, hyp, got)
    assert got.reference_length == len(ref) == h + s + d
    assert got.hits + got.substitutions + got.insertions == len(hyp)
    assert got.deletions in optimal_deletions(ref, hyp), (ref, hyp, got)


def assert_plain_dp_on_both(ref: str, hyp: str, limit: int = 3000) -> bool:
    """Both granularities against the DP when the character table is small; whether it ran."""
    if len(ref) * len(hyp) > limit:
        return False
    assert_matches_plain_dp(ref.strip(), hyp.strip(), char_edits(ref, hyp))
    assert_matches_plain_dp(ref.split(), hyp.split(), word_edits(ref, hyp))
    return True


# -- jiwer ------------------------------------------------------------------------------------


def split_of(out: jiwer.WordOutput | jiwer.CharacterOutput) -> tuple[int, int, int, int]:
    return out.substitutions, out.deletions, out.insertions, out.hits


def ours_split(c: EditCounts) -> tuple[int, int, int, int]:
    return c.substitutions, c.deletions, c.insertions, c.hits


def assert_rate(jiwer_value: float, got: EditCounts, rate: float | None) -> None:
    """jiwer's rate; where there is no reference text jiwer returns the insertions instead."""
    if rate is None:
        assert jiwer_value == got.insertions
    else:
        assert abs(jiwer_value - rate) <= TOL, (jiwer_value, rate)


def jiwer_splits_like_us(*texts: str) -> bool:
    return all(wer_default(t) == [t.split()] for t in texts)


def assert_matches_jiwer(ref: str, hyp: str) -> None:
    chars = char_edits(ref, hyp)
    assert ours_split(chars) == split_of(jiwer.process_characters(ref, hyp)), (ref, hyp)
    assert_rate(jiwer.cer(ref, hyp), chars, chars.rate)
    words = word_edits(ref, hyp)
    any_ws = jiwer.process_words(ref, hyp, ANY_WHITESPACE, ANY_WHITESPACE)
    assert ours_split(words) == split_of(any_ws), (ref, hyp)
    assert_rate(any_ws.wer, words, words.rate)
    if jiwer_splits_like_us(ref, hyp):
        assert ours_split(words) == split_of(jiwer.process_words(ref, hyp)), (ref, hyp)
        assert_rate(jiwer.wer(ref, hyp), words, words.rate)


def assert_corpus_matches_jiwer(refs: list[str], hyps: list[str]) -> None:
    chars = total_edits(char_edits(r, h) for r, h in zip(refs, hyps, strict=True))
    assert ours_split(chars) == split_of(jiwer.process_characters(refs, hyps))
    assert_rate(jiwer.cer(refs, hyps), chars, corpus_rate(map(char_edits, refs, hyps)))
    words = total_edits(map(word_edits, refs, hyps))
    any_ws = jiwer.process_words(refs, hyps, ANY_WHITESPACE, ANY_WHITESPACE)
    assert ours_split(words) == split_of(any_ws)
    assert_rate(any_ws.wer, words, corpus_rate(map(word_edits, refs, hyps)))
    if jiwer_splits_like_us(*refs, *hyps):
        assert ours_split(words) == split_of(jiwer.process_words(refs, hyps))
        assert_rate(jiwer.wer(refs, hyps), words, words.rate)


# -- the seeded generator ---------------------------------------------------------------------


def random_word(rng: random.Random) -> str:
    if rng.random() < 0.08:
        return rng.choice(EMOJI)
    pool = rng.choice(POOLS) if rng.random() < 0.4 else POOLS[0]
    chars = [rng.choice(pool) for _ in range(rng.randint(1, 8))]
    if rng.random() < 0.1:  # a decomposed accent: base letter + combining mark
        chars.insert(rng.randint(1, len(chars)), rng.choice(COMBINING))
    return "".join(chars)


def separator(rng: random.Random, space_alone: bool) -> str:
    """One space, or a run of whitespace (a lone tab or U+00A0 only when not ``space_alone``)."""
    if rng.random() < 0.7:
        return " "
    run = "".join(rng.choice(WHITESPACE) for _ in range(rng.randint(1, 4)))
    return run if len(run) > 1 or not space_alone else " "


def join(rng: random.Random, words: list[str], space_alone: bool) -> str:
    edge = ["", "", " ", "\n", " \t ", "\u3000"]
    seps = [separator(rng, space_alone) for _ in words[1:]]
    body = "".join(sep + w for sep, w in zip(["", *seps], words, strict=False))
    return rng.choice(edge) + body + rng.choice(edge)


def typo(rng: random.Random, word: str) -> str:
    k = rng.randrange(len(word))
    edit = rng.choice(["replace", "drop", "add", "accent"])
    if edit == "replace":
        return word[:k] + random_word(rng)[0] + word[k + 1 :]
    if edit == "drop":
        return word[:k] + word[k + 1 :] or word
    if edit == "add":
        return word[:k] + random_word(rng)[0] + word[k:]
    return word[: k + 1] + rng.choice(COMBINING) + word[k + 1 :]


def noisy(rng: random.Random, words: list[str], vocab: list[str], p: float) -> list[str]:
    """Each word dropped, replaced, misspelt or upper-cased with probability p/5 each, a word
    inserted after it with p/5; then, with probability p, two neighbours swapped."""
    out: list[str] = []
    for w in words:
        r = rng.random() * 5 / p if p else 5.0
        if r >= 1:
            out.append(
                rng.choice(vocab) if r < 2 else typo(rng, w) if r < 3 else w.upper() if r < 4 else w
            )
        if rng.random() < p / 5:
            out.append(rng.choice(vocab))
    if len(out) > 1 and rng.random() < p:
        k = rng.randrange(len(out) - 1)
        out[k], out[k + 1] = out[k + 1], out[k]
    return out


def random_pair(rng: random.Random, space_alone: bool = True) -> tuple[str, str]:
    """A reference and a noisy reading of it: repeated words from a small vocabulary, whitespace
    runs, empty and blank references, empty and unrelated hypotheses."""
    vocab = [random_word(rng) for _ in range(rng.choice([2, 5, 20]))]
    n = rng.choice([0, 0, 1, 2, 3, 5, 8, 13, 30])
    ref_words = [rng.choice(vocab) for _ in range(n)]
    r = rng.random()
    if r < 0.05:
        hyp_words: list[str] = []
    elif r < 0.1:
        hyp_words = [rng.choice(vocab) for _ in range(rng.randint(1, 10))]
    else:
        hyp_words = noisy(rng, ref_words, vocab, rng.choice([0.0, 0.05, 0.2, 0.5, 1.0]))
    return join(rng, ref_words, space_alone), join(rng, hyp_words, space_alone)


SEEDED_PAIRS = 800
SEEDED_CORPORA = 150


def test_seeded_pairs_equal_jiwer_and_the_plain_dp() -> None:
    rng = random.Random(20240611)
    pairs = [random_pair(rng, space_alone=rng.random() < 0.7) for _ in range(SEEDED_PAIRS)]
    for ref, hyp in pairs:
        assert_matches_jiwer(ref, hyp)
    on_dp = sum(assert_plain_dp_on_both(ref, hyp) for ref, hyp in pairs)
    no_reference = sum(not ref.strip() for ref, _ in pairs)
    jiwer_default = sum(jiwer_splits_like_us(ref, hyp) for ref, hyp in pairs)
    assert on_dp >= 300 and no_reference >= 50 and jiwer_default >= 400  # the mix is there


def test_seeded_corpora_equal_jiwer() -> None:
    rng = random.Random(7)
    for _ in range(SEEDED_CORPORA):
        size = rng.randint(1, 12)
        pairs = [random_pair(rng, space_alone=rng.random() < 0.5) for _ in range(size)]
        refs, hyps = [r for r, _ in pairs], [h for _, h in pairs]
        assert_corpus_matches_jiwer(refs, hyps)


# -- hypothesis strategies --------------------------------------------------------------------

LATIN_WORDS = ["a", "b", "ab", "the", "The", "é", "e\u0301", "x.y", "\u200b"]  # U+200B: a word
OTHER_WORDS = ["👍", "👩\u200d💻", "我爱", "北京"]
WORDS = st.sampled_from([*LATIN_WORDS, *OTHER_WORDS])
SEPARATORS = st.lists(st.sampled_from(WHITESPACE), min_size=1, max_size=3).map("".join)


@st.composite
def word_texts(draw: st.DrawFn) -> str:
    words = draw(st.lists(WORDS, max_size=10))
    seps = draw(st.lists(SEPARATORS, min_size=len(words) + 1, max_size=len(words) + 1))
    return "".join(s + w for s, w in zip(seps, [*words, ""], strict=True))


TEXTS = st.one_of(st.text(max_size=30), word_texts(), st.just(""))


@settings(max_examples=300, deadline=None)
@given(TEXTS, TEXTS)
def test_generated_pairs_equal_jiwer_and_the_plain_dp(ref: str, hyp: str) -> None:
    assert_matches_jiwer(ref, hyp)
    assert_plain_dp_on_both(ref, hyp)


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(TEXTS, TEXTS), min_size=1, max_size=6))
def test_generated_corpora_equal_jiwer(pairs: list[tuple[str, str]]) -> None:
    assert_corpus_matches_jiwer([r for r, _ in pairs], [h for _, h in pairs])


# -- properties -------------------------------------------------------------------------------


@given(TEXTS)
def test_a_text_against_itself_has_no_errors(text: str) -> None:
    for counts in (char_edits(text, text), word_edits(text, text)):
        assert counts.errors == 0
        assert counts.rate == (0.0 if counts.reference_length else None)


@given(st.lists(WORDS, max_size=8), st.lists(SEPARATORS, min_size=9, max_size=9))
def test_whitespace_between_words_changes_no_word(words: list[str], seps: list[str]) -> None:
    spaced = "".join(s + w for s, w in zip(seps, [*words, ""], strict=False))
    assert word_edits(" ".join(words), spaced).errors == 0


@given(TEXTS, TEXTS)
def test_errors_lie_between_the_length_difference_and_the_longer_length(ref: str, hyp: str) -> None:
    for counts, n, m in (
        (char_edits(ref, hyp), len(ref.strip()), len(hyp.strip())),
        (word_edits(ref, hyp), len(ref.split()), len(hyp.split())),
    ):
        assert abs(n - m) <= counts.errors <= max(n, m)
        assert counts.reference_length == n
        assert counts.insertions - counts.deletions == m - n


COUNTS = st.builds(
    lambda s, d, i, h: EditCounts(s, d, i, h, h + s + d),
    *[st.integers(0, 10**6)] * 4,
)


@given(COUNTS, COUNTS, COUNTS)
def test_adding_counts_is_associative_and_commutative(
    a: EditCounts, b: EditCounts, c: EditCounts
) -> None:
    assert (a + b) + c == a + (b + c)
    assert a + b == b + a
    assert total_edits([a, b, c]) == a + b + c
    assert (a + b).errors == a.errors + b.errors


@given(st.lists(st.tuples(TEXTS, TEXTS), max_size=8), st.data())
def test_a_split_corpus_has_the_rate_of_the_whole(
    pairs: list[tuple[str, str]], data: st.DataObject
) -> None:
    k = data.draw(st.integers(0, len(pairs)))
    order = data.draw(st.permutations(range(len(pairs))))
    for edits in (char_edits, word_edits):
        counts = [edits(r, h) for r, h in pairs]
        whole = corpus_rate(counts)
        assert corpus_rate([total_edits(counts[:k]), total_edits(counts[k:])]) == whole
        assert corpus_rate(counts[i] for i in order) == whole
        assert (whole is None) == all(c.reference_length == 0 for c in counts)


@given(COUNTS)
def test_counts_round_trip_through_a_dict(c: EditCounts) -> None:
    assert EditCounts(**c.to_dict()) == c
    assert c.rate == (c.errors / c.reference_length if c.reference_length else None)


# -- definitions, pinned ----------------------------------------------------------------------


def test_jiwers_whitespace_is_ours() -> None:
    """``ANY_WHITESPACE`` rests on this: jiwer's ``\\s`` matches what ``str.split`` splits on."""
    space = re.compile(r"\s")
    assert all(bool(space.match(chr(c))) == chr(c).isspace() for c in range(sys.maxunicode + 1))


def test_the_rate_is_an_error_rate() -> None:
    assert HIGHER_IS_BETTER is False
    assert word_edits("a", "a b c").rate == 2.0  # not bounded by 1


@pytest.mark.parametrize(
    ("ref", "hyp", "expected"),
    [
        ("", "abc", EditCounts(0, 0, 3, 0, 0)),
        (" \t ", "ab", EditCounts(0, 0, 2, 0, 0)),
        ("abc", "", EditCounts(0, 3, 0, 0, 3)),
        ("", "", EditCounts(0, 0, 0, 0, 0)),
        ("  ", "\n", EditCounts(0, 0, 0, 0, 0)),
    ],
)
def test_empty_texts(ref: str, hyp: str, expected: EditCounts) -> None:
    got = char_edits(ref, hyp)
    assert got == expected
    assert_matches_plain_dp(ref.strip(), hyp.strip(), got)
    assert got.rate == (None if not ref.strip() else 1.0)
    assert_rate(jiwer.cer(ref, hyp), got, got.rate)  # no reference: jiwer's is a count


def test_corpus_rate_sums_before_dividing() -> None:
    counts = [char_edits("abcd", "abcx"), char_edits("", "zz"), char_edits("ab", "ab")]
    assert corpus_rate(counts) == 3 / 6  # mean of the defined per-document rates: 0.125
    assert corpus_rate([]) is None
    assert corpus_rate([char_edits("", "zz")]) is None
    assert (
        corpus_rate(map(word_edits, ["", "a b"], ["x", "a b"]))
        == 0.5
        == jiwer.wer(["", "a b"], ["x", "a b"])
    )


def test_characters_are_code_points_without_normalisation() -> None:
    decomposed = char_edits("\u00e9", "e\u0301")  # é precomposed vs e + combining acute
    assert (decomposed.reference_length, decomposed.errors) == (1, 2)
    assert char_edits("👩\u200d💻", "👩\u200d💻").reference_length == 3
    assert char_edits("我爱北京", "我爱上海").rate == 0.5
    assert word_edits("我爱北京", "我爱上海").rate == 1.0  # one word: no spaces
    assert char_edits("Ltd.", "ltd").errors == 2  # case and punctuation count


def test_inner_whitespace_counts_for_characters_not_for_words() -> None:
    assert char_edits(" a  b ", "a b") == EditCounts(0, 1, 0, 3, 4)
    assert char_edits("a  b", "a b").rate == jiwer.cer("a  b", "a b") == 0.25
    assert word_edits("a \t\n b", "a b").errors == 0


@pytest.mark.parametrize("sep", ["\t", "\n", "\u00a0", "\u3000"])
def test_a_lone_non_space_separates_words_here_not_in_jiwers_default(sep: str) -> None:
    assert word_edits(f"a{sep}b", "a b").errors == 0
    assert jiwer.wer(f"a{sep}b", "a b") == 2.0  # jiwer: one word "a<sep>b", read as two
    assert jiwer.wer(f"a{sep}b", "a b", ANY_WHITESPACE, ANY_WHITESPACE) == 0.0
    assert jiwer.wer(f"a{sep}{sep}b", "a b") == 0.0  # a run is collapsed to a space first


def test_the_split_is_not_unique_and_follows_jiwer() -> None:
    got = char_edits("ab", "ba")
    assert got.errors == 2 and optimal_deletions("ab", "ba") == {0, 1}
    assert ours_split(got) == split_of(jiwer.process_characters("ab", "ba"))
    assert plain_edits("ab", "ba") == (2, 0, 0, 0)  # the textbook backtrace: two substitutions


class Colliding(str):
    """A word whose hash collides with every other (rapidfuzz compares list items by hash)."""

    def __hash__(self) -> int:
        return 7


def test_words_with_equal_hashes_are_still_told_apart() -> None:
    ref = [Colliding(w) for w in ["ab", "cd", "ef", "ab"]]
    hyp = [Colliding(w) for w in ["cd", "ab", "xy"]]
    assert _edit_counts(ref, hyp, verify=True) is None  # rapidfuzz took them all as equal
    got = _word_counts(ref, hyp)
    assert_matches_plain_dp(ref, hyp, got)
    assert got.errors == 3


def test_counts_that_do_not_add_up_are_refused() -> None:
    with pytest.raises(ValueError, match="reference_length"):
        EditCounts(1, 1, 0, 1, 2)
    with pytest.raises(ValueError, match="negative"):
        EditCounts(-1, 0, 0, 1, 0)


def test_the_functions_take_text_only() -> None:
    with pytest.raises(AttributeError):
        word_edits(None, "x")  # type: ignore[arg-type]
