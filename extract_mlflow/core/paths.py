"""The document-path convention, in one place: how a leaf of a JSON document is named, what
counts as absent, and the one walk over a document's leaves.

A path joins keys with ``.`` (``vendor.name``) and marks the items of a list with ``[]``
(``line_items[].qty``; ``tags[]`` for a list of scalars). The document's top-level keys are the
first segments; the id key and the keys that feed other metric families are skipped by the
caller (``skip``).

Absent: null, an empty or blank string, an empty list or object (:func:`is_absent`). A config's
``empty_as_null`` may make empty strings, lists or objects values instead: field scoring replaces
them by a mark first (:func:`mark_empties`), so this rule stays the one rule. Two callers
need a different rule, and say so with arguments of :func:`walk`:

- text fidelity checks every *predicted* value, blank strings included (``keep_blank=True``):
  an empty extracted value is counted as scored-and-empty, not dropped;
- an ignored path (config ``ignore = true``) is cut off by field scoring (``prune=True``: one
  :data:`PRUNED` leaf names the cut, so the scorer can report it as skipped) but walked and flagged
  by text fidelity (``prune=False``: a fidelity ``fields`` pattern may still select it).

>>> doc = {"id": 1, "v": {"n": "A"}, "t": [" ", 2]}
>>> [(leaf.path, leaf.value) for leaf in document_leaves(doc, {"id"})]
[('v.n', 'A'), ('t[]', 2)]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from typing import Any, Final, Literal, NamedTuple

LIST_MARK: Final = "[]"
PATH_PATTERN: Final = re.compile(r"^[^.\[\]]+(\[\])?(\.[^.\[\]]+(\[\])?)*$")
"""A field path as a config may name it: dot-separated keys, each optionally followed by ``[]``."""


class _Pruned:
    __slots__ = ()

    def __repr__(self) -> str:
        return "PRUNED"


PRUNED: Final = _Pruned()
"""The value of the :class:`Leaf` that stands for an ignored subtree cut off (``prune=True``)."""


class Leaf(NamedTuple):
    path: str
    value: Any
    ignored: bool = False
    """under an ignored path (``prune=False``), or the cut itself (value :data:`PRUNED`)"""


def join(parent: str, key: Any) -> str:
    """The path of `key` under `parent` (the key alone at the top, ``parent == ""``)."""
    return f"{parent}.{key}" if parent else str(key)


def items(path: str) -> str:
    """The path of the items of the list at `path`."""
    return path + LIST_MARK


def strip_list_marks(path: str) -> str:
    """``line_items[].qty`` -> ``line_items.qty`` (metric keys, gate names, approvals)."""
    return path.replace(LIST_MARK, "")


def is_absent(value: Any) -> bool:
    """Null, an empty or blank string and an empty list/object count as absent."""
    if value is None:
        return True
    t = type(value)
    if t is str:
        return not value or value.isspace()
    if t is list or t is dict:
        return not value
    return False


EmptyKind = Literal["empty_string", "empty_list", "empty_object"]
EMPTY_KINDS: Final[tuple[EmptyKind, ...]] = ("empty_list", "empty_object", "empty_string")
"""The kinds of empty value a config's ``empty_as_null`` may list (sorted); all of them by
default, which is :func:`is_absent`."""
EMPTY_MARKS: Final[dict[str, str]] = {
    "empty_string": "<empty string>",
    "empty_list": "<empty list>",
    "empty_object": "<empty object>",
}
"""What an empty value of a kind *not* listed in ``empty_as_null`` is scored as: a value."""


def empty_kind(value: Any) -> str | None:
    """The kind of an empty value (a blank string is an empty string), None for anything else
    (null included: null is always absent)."""
    t = type(value)
    if t is str:
        return "empty_string" if not value or value.isspace() else None
    if t is list:
        return None if value else "empty_list"
    if t is dict:
        return None if value else "empty_object"
    return None


def mark_empties(value: Any, kept: Collection[str]) -> Any:
    """`value` with every empty value of a kind in `kept` (kinds that are *values*, not absent)
    replaced by its mark in :data:`EMPTY_MARKS`, at any depth; a copy only where needed.

    >>> mark_empties({"a": "", "b": [[], {}], "c": None}, {"empty_string", "empty_list"})
    {'a': '<empty string>', 'b': ['<empty list>', {}], 'c': None}
    """
    kind = empty_kind(value)
    if kind is not None:
        return EMPTY_MARKS[kind] if kind in kept else value
    if type(value) is dict:
        return {k: mark_empties(v, kept) for k, v in value.items()}
    if type(value) is list:
        return [mark_empties(v, kept) for v in value]
    return value


def walk(
    value: Any,
    path: str,
    out: list[Leaf],
    *,
    keep_blank: bool = False,
    ignored: Callable[[str], bool] | None = None,
    prune: bool = True,
    under: bool = False,
) -> list[Leaf]:
    """Append every present scalar leaf under `value` (at `path`) to `out`, depth first in
    document order, and return `out`. (A list, not a generator: this runs for every missing
    document and every hallucinated subtree, and generators cost a third more.)"""
    if ignored is not None and not under and ignored(path):
        if prune:
            out.append(Leaf(path, PRUNED, True))
            return out
        under = True
    if isinstance(value, dict):
        for key, v in value.items():
            walk(
                v,
                join(path, key),
                out,
                keep_blank=keep_blank,
                ignored=ignored,
                prune=prune,
                under=under,
            )
    elif isinstance(value, list):
        ipath = items(path)
        for v in value:
            walk(v, ipath, out, keep_blank=keep_blank, ignored=ignored, prune=prune, under=under)
    elif value is not None and (
        keep_blank or not (type(value) is str and (not value or value.isspace()))
    ):
        out.append(Leaf(path, value, under))
    return out


def document_leaves(
    doc: Mapping[str, Any],
    skip: Collection[str] = (),
    *,
    keep_blank: bool = False,
    ignored: Callable[[str], bool] | None = None,
    prune: bool = True,
) -> list[Leaf]:
    """:func:`walk` over every top-level key of a document except those in `skip`."""
    out: list[Leaf] = []
    for key, value in doc.items():
        if key not in skip:
            walk(value, join("", key), out, keep_blank=keep_blank, ignored=ignored, prune=prune)
    return out


def covers(path: str, paths: Collection[str]) -> bool:
    """`path` is one of `paths`, or an object or list above one of them (an ignored subtree).

    >>> covers("vendor", {"vendor.name"}), covers("items", {"items[].qty"}), covers("v", {"vat"})
    (True, True, False)
    """
    return any(g == path or g.startswith((f"{path}.", f"{path}[]")) for g in paths)


def lookup(doc: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path of a document (None when any step is missing)."""
    value: Any = doc
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


class PathCache:
    """Memoised child paths: the same string object for the same (parent, key), built once
    (field scoring asks for them millions of times)."""

    __slots__ = ("_children",)

    def __init__(self) -> None:
        self._children: dict[str, dict[str, str]] = {}

    def children(self, parent: str) -> dict[str, str]:
        """The memo of the children of `parent` (key -> path), filled by :meth:`child`."""
        d = self._children.get(parent)
        if d is None:
            d = self._children[parent] = {}
        return d

    def child(self, parent: str, key: str) -> str:
        """:func:`join` of `parent` and `key`, memoised."""
        d = self.children(parent)
        p = d.get(key)
        if p is None:
            p = d[key] = f"{parent}.{key}" if parent else key
        return p


def flat_item(item: Any) -> dict[str, Any] | None:
    """An object's present scalar leaves by relative path (`a.b` for nested objects); None when
    it is not an object or holds a non-empty list (such items are compared pair by pair).

    This is :func:`walk` for the items of an object list, in the flat form the bulk matcher
    needs: the item itself when it is already flat and holds nothing absent (no copy).

    >>> flat_item({"sku": "A", "price": {"amount": 3, "unit": ""}, "note": None})
    {'sku': 'A', 'price.amount': 3}
    >>> flat_item({"tags": ["x"]}) is None
    True
    """
    if type(item) is not dict:
        return None
    for v in item.values():  # already flat, nothing absent: the item itself (no copy)
        t = type(v)
        if t is dict or t is list or v is None or (t is str and (not v or v.isspace())):
            break
    else:
        return item
    out: dict[str, Any] = {}
    for k, v in item.items():
        t = type(v)
        if t is dict:
            if v:
                sub = flat_item(v)
                if sub is None:
                    return None
                for sk, sv in sub.items():
                    out[f"{k}.{sk}"] = sv
        elif t is list:
            if v:
                return None
        elif not is_absent(v):
            out[k] = v
    return out
