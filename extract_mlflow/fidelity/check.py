"""Checking one document's predicted values against its source: which leaves are checked
(:class:`Selector`, from the ``[fidelity]`` globs and the field types), the source indexed on
first use (:class:`SourceDocument`), and each value's :class:`ValueFidelity`
(:func:`check_document`). Pure."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from functools import cached_property
from typing import Any

from ..config import FidelityConfig
from ..core.paths import document_leaves
from ..fields.normalize import TYPE_ERROR, Comparator, Comparators, as_text
from .grounding import SourceNumbers
from .tokens import SourceIndex, normalize
from .values import ValueFidelity, check_text

GROUNDING_TYPES = ("text", "id", "number", "quantity")
"""Field types whose values are grounded by default (dates, booleans, enums and ratios are
written in too many ways to look up verbatim)."""


# -- config --------------------------------------------------------------------------------
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A field-path glob as a regex: ``**`` any text, ``*`` any text without a dot.

    >>> bool(glob_regex("line_items[].*").match("line_items[].qty"))
    True
    """
    parts = re.split(r"(\*\*|\*)", pattern)
    rx = "".join(".*" if p == "**" else "[^.]*" if p == "*" else re.escape(p) for p in parts)
    return re.compile(rx + r"\Z")


# -- documents -----------------------------------------------------------------------------
class SourceDocument:
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


class Selector:
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
    raw: Any, comp: Comparator, doc: SourceDocument, config: FidelityConfig, want: tuple[bool, bool]
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
    raw: Any, doc: SourceDocument, config: FidelityConfig, score_ngrams: bool, ground: bool
) -> ValueFidelity:
    if not score_ngrams and not ground:
        return ValueFidelity("", "", raw, "")
    text = as_text(raw) or ""
    out = check_text(text, doc.index, config, score_ngrams=score_ngrams, ground=ground)
    out.value = raw
    return out


def _is_ignored(comps: Comparators, path: str) -> bool:
    """Whether the main config says ``ignore = true`` for `path` (read from the rule that its
    comparator carries; an unconfigured path has the default rule)."""
    return comps.for_leaf(path, None).rule.ignore


def check_document(
    doc_id: str,
    gold: Mapping[str, Any],
    pred: Mapping[str, Any],
    doc: SourceDocument,
    cfg: FidelityConfig,
    comps: Comparators,
    selector: Selector,
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
