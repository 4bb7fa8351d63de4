"""Tokens for text fidelity, and the n-gram index of one source document.

Tokens: the text is NFKC-normalised (so "ﬁ" reads "fi", "℃" reads
"°C", "h⁻¹" reads "h−1", full-width digits read as digits), optionally case-folded, then split
by one compiled regex into

- words: runs of letters, digits and ``_``, where a ``.`` or ``,`` between two digits stays
  inside the word ("1,250.00", "v2.1" and "12.5kg" are one token each, "30," is "30" and
  ",", "e.g." is "e", ".", "g", ".");
- single punctuation marks and symbols: every other non-space character is a token of its own
  ("°", "%", "−", "(").

>>> tokenize("Net 1,250.00 € (h⁻¹)")
['Net', '1,250.00', '€', '(', 'h', '−', '1', ')']

Every non-space character of the normalised text belongs to exactly one token, and a token
never spans whitespace, so token boundaries map back to character offsets (see
:meth:`SourceIndex.token_offsets`).

:class:`SourceIndex` is built once per source document: its tokens, a per-document vocabulary
(token -> id) and all its n-grams (n = 2..4) encoded as exact integers (the ids of the n tokens
packed side by side in one 64-bit int, the order in the top bits) in one sorted array. Checking
a value is then a few dict lookups and one binary search, whatever the size of the source.
Positions by case-folded token (for locating spans) and token offsets are built on first use.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Sequence
from functools import cached_property
from typing import TypeVar

import numpy as np

T = TypeVar("T")
MAX_ORDER = 4
TOKEN_PATTERN = r"\w+(?:(?<=\d)[.,](?=\d)\w+)*|[^\w\s]"
TOKEN_RE = re.compile(TOKEN_PATTERN)
TOKENIZER_SIGNATURE = "nfkc-words-v1"
"""Names the tokenisation rules; changes whenever they change (part of a fidelity signature)."""

# The characters that `str.isspace` (and so the regex `\s`) calls whitespace; a test checks this
# list against every code point.
WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
_WHITESPACE_TABLE = np.ones(max(map(ord, WHITESPACE)) + 2, dtype=bool)
_WHITESPACE_TABLE[[ord(c) for c in WHITESPACE]] = False  # True: not whitespace
_PACK_LIMIT = 63  # bits of an int64 the packed n-gram keys may use
_ORDER_BITS = 2  # the top bits of a packed key hold n - 2
_ORDER_SHIFT = _PACK_LIMIT - _ORDER_BITS


def normalize(text: str, casefold: bool = False) -> str:
    """NFKC-normalise `text` (and case-fold it when asked); the text tokens are drawn from."""
    if not text.isascii() and not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    if casefold:
        text = text.casefold()
        if not text.isascii():
            text = unicodedata.normalize("NFKC", text)
    return text


def tokenize(text: str, casefold: bool = False) -> list[str]:
    """The tokens of `text` (see the module docstring)."""
    return TOKEN_RE.findall(normalize(text, casefold))


def ngrams(items: Sequence[T], n: int) -> list[tuple[T, ...]]:
    """The n-grams of `items` in order, repeats kept (none when there are fewer than n)."""
    return list(zip(*(items[i:] for i in range(n)), strict=False))


class SourceIndex:
    """One source document, tokenised and indexed once.

    ``text`` is the normalised text (character offsets of spans refer to it), ``tokens`` its
    tokens, ``vocab`` maps each distinct token to an id. N-gram membership is exact: the ids of
    an n-gram and its order are packed into one int64 when they fit (a document with fewer than
    32,768 distinct tokens, i.e. any realistic one) and all of them are kept in one sorted array
    (a value's n-grams are then looked up with one binary search); otherwise the n-grams are
    kept as tuples of ids in one set per order.
    """

    def __init__(self, text: str, casefold: bool = False) -> None:
        self.casefold = casefold
        self.text = normalize(text, casefold)
        self.tokens: list[str] = TOKEN_RE.findall(self.text)
        self.vocab: dict[str, int] = {t: i for i, t in enumerate(dict.fromkeys(self.tokens))}
        self._bits = max(1, len(self.vocab).bit_length())
        self._grams = self._build_grams()

    # -- building ------------------------------------------------------------------------
    @cached_property
    def ids(self) -> np.ndarray:
        """The token ids of the document, in order (int64)."""
        return np.fromiter(map(self.vocab.__getitem__, self.tokens), np.int64, len(self.tokens))

    @property
    def _packed(self) -> bool:
        """Whether n-gram keys are packed ids (with the order in the top bits) in an int64."""
        return self._bits * MAX_ORDER + _ORDER_BITS <= _PACK_LIMIT

    def _build_grams(self) -> np.ndarray | list[set[tuple[int, ...]]]:
        """All 2-, 3- and 4-grams (unigrams are the vocabulary itself): one sorted array of
        packed keys, or (for a vocabulary too large to pack) one set of id tuples per order."""
        if not self._packed:
            ids = self.ids.tolist()
            return [set(zip(*(ids[i:] for i in range(n)), strict=False)) for n in (2, 3, 4)]
        ids, b = self.ids, self._bits
        parts = []
        keys = ids
        for n in range(2, MAX_ORDER + 1):
            keys = (keys[:-1] << b) | ids[n - 1 :]
            parts.append(keys | ((n - 2) << _ORDER_SHIFT))
        return np.sort(np.concatenate(parts)) if parts else np.empty(0, np.int64)

    # -- checking values -----------------------------------------------------------------
    def ids_of(self, tokens: Sequence[str]) -> list[int]:
        """The ids of `tokens` in this document's vocabulary; -1 for a token it never uses."""
        get = self.vocab.get
        return [get(t, -1) for t in tokens]

    def hits(self, ids: Sequence[int]) -> list[list[bool]]:
        """For n = 1..4: for each n-gram of a value (given by its token ids, in order), whether
        it occurs anywhere in the document. Orders longer than the value get an empty list."""
        known = [i >= 0 for i in ids]
        if not self._packed:
            sets = self._grams
            assert isinstance(sets, list)
            return [known] + [
                [min(g) >= 0 and g in sets[n - 2] for g in ngrams(ids, n)]
                for n in range(2, MAX_ORDER + 1)
            ]
        keys, b = list(ids), self._bits
        valid, queries = [known], []
        for n in range(2, MAX_ORDER + 1):
            last = ids[n - 1 :]
            keys = [(k << b) | i for k, i in zip(keys, last, strict=False)]
            valid.append([a and i >= 0 for a, i in zip(valid[-1], last, strict=False)])
            tag = (n - 2) << _ORDER_SHIFT
            queries += [k | tag for k, ok in zip(keys, valid[-1], strict=True) if ok]
        found = iter(self._lookup(queries))
        return [known] + [[ok and next(found) for ok in v] for v in valid[1:]]

    def _lookup(self, keys: list[int]) -> list[bool]:
        """Whether each packed n-gram key occurs in the document."""
        grams = self._grams
        assert isinstance(grams, np.ndarray)
        if not keys or not len(grams):
            return [False] * len(keys)
        q = np.array(keys, dtype=np.int64)
        at = np.minimum(np.searchsorted(grams, q), len(grams) - 1)
        return list((grams[at] == q).tolist())

    def find(self, ids: Sequence[int]) -> int | None:
        """The first token position where the value with token `ids` occurs verbatim (all of
        its tokens, contiguous and in order), or None. Candidates are the places of the
        value's rarest token."""
        if not ids or min(ids) < 0:
            return None
        to_anchor = self._folding[2]
        j = min(range(len(ids)), key=lambda k: self.frequency(to_anchor[ids[k]]))
        doc, want, n = self.id_list, list(ids), len(ids)
        for p in self.positions(to_anchor[ids[j]]).tolist():
            start = p - j
            if start >= 0 and doc[start : start + n] == want:
                return int(start)
        return None

    # -- case-folded anchors, positions and offsets (built on first use) -----------------
    @cached_property
    def id_list(self) -> list[int]:
        """The token ids as a Python list (fast to slice and compare)."""
        return list(self.ids.tolist())

    @cached_property
    def _folding(self) -> tuple[dict[str, int], np.ndarray, list[int]]:
        """The case-folded vocabulary (folded token -> anchor id), and token id -> anchor id
        (as an array and as a list)."""
        keys = list(map(str.casefold, self.vocab))
        folded = {k: i for i, k in enumerate(dict.fromkeys(keys))}
        to_anchor = list(map(folded.__getitem__, keys))
        return folded, np.array(to_anchor, dtype=np.int64), to_anchor

    @cached_property
    def anchor_list(self) -> list[int]:
        """The case-folded id of every token, in order."""
        return list(self._folding[1][self.ids].tolist()) if self.tokens else []

    @property
    def folded_vocabulary(self) -> Collection[str]:
        """The document's distinct tokens, case-folded."""
        return self._folding[0].keys()

    def anchor_ids_of(self, tokens: Sequence[str]) -> list[int]:
        """Case-folded ids of `tokens` (alignment finds candidate places by these); -1 for a
        token that the document never uses in any case."""
        get = self._folding[0].get
        return [get(t.casefold(), -1) for t in tokens]

    @cached_property
    def _order(self) -> tuple[np.ndarray, list[int]]:
        anchors = self._folding[1][self.ids] if len(self.ids) else self.ids
        order = np.argsort(anchors, kind="stable")
        bounds = np.searchsorted(anchors[order], np.arange(len(self._folding[0]) + 1))
        return order, bounds.tolist()

    def positions(self, anchor_id: int) -> np.ndarray:
        """The token positions where the token with case-folded id `anchor_id` occurs."""
        if anchor_id < 0:
            return np.empty(0, dtype=np.int64)
        order, bounds = self._order
        return order[bounds[anchor_id] : bounds[anchor_id + 1]]

    def frequency(self, anchor_id: int) -> int:
        """How often the token with case-folded id `anchor_id` occurs in the document."""
        if anchor_id < 0:
            return 0
        bounds = self._order[1]
        return bounds[anchor_id + 1] - bounds[anchor_id]

    @cached_property
    def token_offsets(self) -> tuple[np.ndarray, np.ndarray]:
        """(starts, ends): the character offsets in ``text`` of every token (int64 arrays).

        Tokens cover every non-space character exactly once, so the k-th non-space character is
        found by its rank: no second pass of the regex is needed."""
        codes = np.frombuffer(self.text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        solid = np.flatnonzero(_WHITESPACE_TABLE[np.minimum(codes, len(_WHITESPACE_TABLE) - 1)])
        lengths = np.fromiter(map(len, self.tokens), np.int64, len(self.tokens))
        last = np.cumsum(lengths) - 1
        return solid[last - lengths + 1], solid[last] + 1

    def char_span(self, first: int, last: int) -> tuple[int, int]:
        """Character offsets covering tokens `first`..`last` (inclusive)."""
        starts, ends = self.token_offsets
        return int(starts[first]), int(ends[last])

    def tokens_in(self, start: int, end: int) -> tuple[int, int]:
        """The first and last token overlapping characters [start, end) (end > start)."""
        starts, ends = self.token_offsets
        first = int(np.searchsorted(ends, start, side="right"))
        last = int(np.searchsorted(starts, end, side="left")) - 1
        return first, max(first, last)
