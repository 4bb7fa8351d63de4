"""TODO: one line on what paths owns."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


# -- field hints ----------------------------------------------------------------------------------
def leaf_values(doc: Mapping[str, Any], *, id_key: str = "id") -> Iterator[tuple[str, Any]]:
    """(path, value) for every scalar leaf, with the scoring engine's paths: ``a.b``, list items
    ``items[].x``, scalar lists ``tags[]``. Nulls, empty strings and the id are left out.

    >>> list(leaf_values({"id": 1, "v": {"n": "A"}, "tags": ["x"], "items": [{"q": 2}]}))
    [('v.n', 'A'), ('tags[]', 'x'), ('items[].q', 2)]
    """
    for key, value in doc.items():
        if key != id_key:
            yield from _walk(value, str(key))


def _walk(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    if isinstance(value, Mapping):
        for key, v in value.items():
            yield from _walk(v, f"{path}.{key}")
    elif isinstance(value, list):
        for v in value:
            yield from _walk(v, f"{path}[]")
    elif value is not None and not (isinstance(value, str) and not value.strip()):
        yield path, value


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


def lookup(doc: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path of a document (None when any step is missing)."""
    value: Any = doc
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value
