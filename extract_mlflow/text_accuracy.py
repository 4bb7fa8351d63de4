"""Text accuracy: character and word error rates (CER, WER) as mergeable edit statistics.

Definition. A *reference* (the gold text) and a *hypothesis* (the prediction) are each cut into
tokens (characters or words, below). The fewest substitutions S, deletions D and insertions I
that turn the reference's tokens into the hypothesis's (Levenshtein, each edit costs 1) align
the two; the reference tokens left unchanged are the hits H, so the reference has
N = H + S + D tokens. The error rate is (S + D + I) / N: 0 for identical texts, lower is better,
and not bounded by 1 (``"a"`` read as ``"a b c"`` has WER 2.0).

Tokens, defined once here:

- words are ``text.split()``: any run of whitespace separates two words and leading and
  trailing whitespace is ignored; whitespace is what ``str.isspace`` says (space, tab, newline,
  no-break space U+00A0, ideographic space U+3000, ...; not the zero-width space U+200B). Case
  and punctuation are kept: ``"Ltd."`` and ``"Ltd"`` are different words.
- characters are ``text.strip()``: leading and trailing whitespace is dropped and every other
  character counts, whitespace included, runs not collapsed (``"a  b"`` has four characters).
  This is jiwer's default CER transform (strip, then one token per character).

Characters are Python code points and nothing is Unicode-normalised: a precomposed ``é``
(U+00E9) is one character, ``e`` + U+0301 two, and the two spellings differ; an emoji sequence
joined by U+200D is several characters; CJK text counts one character per ideograph and, having
no spaces, is a single word, so for unsegmented scripts CER is the meaningful rate. A caller who
wants NFC or case-folded comparison applies it before. The functions take ``str`` only: what a
missing value (``None``) means is the caller's decision, for instance ``""``.

Empty texts. An empty reference has N = 0 and as many errors as the hypothesis has tokens (all
insertions); its rate is ``None``: text with nothing to get right has no error rate (jiwer
returns the insertion count there instead). Both empty: no errors, rate ``None``.

Corpus. Statistics first, score from statistics, as sacrebleu builds corpus BLEU:
:func:`corpus_rate` sums S, D, I and N over the documents and divides once, so a long document
weighs more than a short one, an empty reference adds its insertions and nothing to N, and the
corpus has no rate only when no document has reference text. The mean of per-document rates is
a different number. Sums of integers are exact, so the order and the grouping of documents
change nothing (``EditCounts.__add__`` is associative and commutative).

The split. S + D + I (the distance) and N are unique; S, D and I alone are not: ``"ab"`` to
``"ba"`` is two substitutions or one deletion and one insertion. The counts follow rapidfuzz's
alignment (``Levenshtein.opcodes``), the one jiwer also reads, so the split equals jiwer's.

jiwer's defaults. CER is the same. WER is the same whenever the single whitespace character
between two words is a space: jiwer turns runs of two or more whitespace characters into one
space, strips, and splits on the space only, so a lone tab, newline or U+00A0 between two words
leaves them one word there (``"a\\tb"``) and two here.

Speed. The alignment is rapidfuzz's, in C. Characters are compared as code points. In a list,
rapidfuzz compares items other than one-character strings by ``hash()``, so two different words
with equal hashes would count as equal. Every block the alignment calls equal is therefore
checked by value; on a mismatch (a 64-bit hash collision) the words are aligned again as
integer codes, which compare exactly. When every equal block holds, the alignment is optimal
for exact equality too: hashing only adds matches, so its least cost is at most the exact least
cost, and this alignment costs the same under both.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from itertools import count

from rapidfuzz.distance import Levenshtein

HIGHER_IS_BETTER = False
"""The direction of CER and WER: an error rate, lower is better."""


@dataclass(frozen=True, slots=True)
class EditCounts:
    """The statistics of one alignment (or the sum of several): the edits, the hits and the
    reference's length in tokens (``hits + substitutions + deletions``).

    >>> char_edits("kitten", "sitting")
    EditCounts(substitutions=2, deletions=0, insertions=1, hits=4, reference_length=6)
    """

    substitutions: int
    deletions: int
    insertions: int
    hits: int
    reference_length: int

    def __post_init__(self) -> None:
        if min(self.substitutions, self.deletions, self.insertions, self.hits) < 0:
            raise ValueError(f"negative edit counts: {self}")
        if self.reference_length != self.hits + self.substitutions + self.deletions:
            raise ValueError(f"reference_length is not hits + substitutions + deletions: {self}")

    @property
    def errors(self) -> int:
        """Substitutions + deletions + insertions (the edit distance of one alignment)."""
        return self.substitutions + self.deletions + self.insertions

    @property
    def rate(self) -> float | None:
        """errors / reference_length; ``None`` when there is no reference text (no rate)."""
        if self.reference_length == 0:
            return None
        return self.errors / self.reference_length

    def __add__(self, other: object) -> EditCounts:
        """The statistics of both texts together (merging documents or parts of a corpus)."""
        if not isinstance(other, EditCounts):
            return NotImplemented
        return EditCounts(
            self.substitutions + other.substitutions,
            self.deletions + other.deletions,
            self.insertions + other.insertions,
            self.hits + other.hits,
            self.reference_length + other.reference_length,
        )

    def to_dict(self) -> dict[str, int]:
        """The five statistics by field name (``EditCounts(**d)`` reads them back)."""
        return {
            "substitutions": self.substitutions,
            "deletions": self.deletions,
            "insertions": self.insertions,
            "hits": self.hits,
            "reference_length": self.reference_length,
        }


def char_edits(reference: str, hypothesis: str) -> EditCounts:
    """The character statistics (CER's) of a hypothesis against its reference.

    >>> char_edits("  ab c ", "abd c").rate
    0.25
    """
    counts = _edit_counts(reference.strip(), hypothesis.strip(), verify=False)
    assert counts is not None  # code points compare exactly: nothing to verify
    return counts


def word_edits(reference: str, hypothesis: str) -> EditCounts:
    """The word statistics (WER's) of a hypothesis against its reference.

    >>> word_edits("the cat sat", "the  cat sat down").rate
    0.3333333333333333
    """
    return _word_counts(reference.split(), hypothesis.split())


def total_edits(counts: Iterable[EditCounts]) -> EditCounts:
    """The summed statistics of many alignments (a corpus)."""
    s = d = i = h = n = 0
    for c in counts:
        s, d, i = s + c.substitutions, d + c.deletions, i + c.insertions
        h, n = h + c.hits, n + c.reference_length
    return EditCounts(s, d, i, h, n)


def corpus_rate(counts: Iterable[EditCounts]) -> float | None:
    """Summed errors / summed reference length: the corpus CER or WER (``None`` without any
    reference text). Not the mean of the documents' rates.

    >>> corpus_rate([char_edits("abcd", "abcx"), char_edits("", "zz")])
    0.75
    """
    return total_edits(counts).rate


def _word_counts(reference: Sequence[str], hypothesis: Sequence[str]) -> EditCounts:
    """The statistics of two word lists, exact even when two different words share a hash."""
    counts = _edit_counts(reference, hypothesis, verify=True)
    if counts is None:  # a hash collision between two different words: align exact codes
        codes = dict(zip(dict.fromkeys([*reference, *hypothesis]), count()))
        ref, hyp = [codes[w] for w in reference], [codes[w] for w in hypothesis]
        counts = _edit_counts(ref, hyp, verify=False)
        assert counts is not None
    return counts


def _edit_counts(
    reference: Sequence[Hashable], hypothesis: Sequence[Hashable], *, verify: bool
) -> EditCounts | None:
    """S/D/I/H of rapidfuzz's alignment; ``None`` when ``verify`` finds an equal block whose
    items differ (rapidfuzz compared them by hash)."""
    n = len(reference)
    if reference == hypothesis:
        return EditCounts(0, 0, 0, n, n)
    s = d = i = 0
    for op in Levenshtein.opcodes(reference, hypothesis):
        tag = op.tag
        if tag == "replace":
            s += op.src_end - op.src_start
        elif tag == "delete":
            d += op.src_end - op.src_start
        elif tag == "insert":
            i += op.dest_end - op.dest_start
        elif verify and (
            reference[op.src_start : op.src_end] != hypothesis[op.dest_start : op.dest_end]
        ):
            return None
    return EditCounts(s, d, i, n - s - d, n)
