"""The document walkers as they were before the path convention had one home (main@ac5f770),
kept verbatim as oracles for tests/core/test_paths.py: field scoring's subtree expansion, text
fidelity's leaves and gold samples, and the gold leaves of hints and config checks."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any

IsIgnored = Callable[[str], bool]


def is_absent(value: Any) -> bool:
    if value is None:
        return True
    t = type(value)
    if t is str:
        return not value or value.isspace()
    if t is list or t is dict:
        return not value
    return False


class Expansion:
    """FieldScorer._expand and its path memo, with FN/FP and skipped recorded as lists."""

    def __init__(self, ignored: Collection[str]) -> None:
        self._ignored = frozenset(ignored)
        self._children: dict[str, dict[str, str]] = {}
        self.skipped: set[str] = set()
        self.leaves: list[tuple[str, Any]] = []

    def _path(self, parent: str, key: str) -> str:
        d = self._children.setdefault(parent, {})
        p = d.get(key)
        if p is None:
            p = d[key] = f"{parent}.{key}" if parent else key
        return p

    def expand(self, value: Any, path: str) -> None:
        if path in self._ignored:
            self.skipped.add(path)
            return
        if is_absent(value):
            return
        if isinstance(value, dict):
            for key, v in value.items():
                self.expand(v, self._path(path, key))
        elif isinstance(value, list):
            ipath = path + "[]"
            for v in value:
                self.expand(v, ipath)
        else:
            self.leaves.append((path, value))


def _leaves(
    value: Any, path: str, ignored: bool, is_ignored: IsIgnored, out: list[Any]
) -> list[tuple[str, Any, bool]]:
    ignored = ignored or is_ignored(path)
    if isinstance(value, dict):
        for key, v in value.items():
            _leaves(v, f"{path}.{key}", ignored, is_ignored, out)
    elif isinstance(value, list):
        for v in value:
            _leaves(v, path + "[]", ignored, is_ignored, out)
    elif value is not None:
        out.append((path, value, ignored))
    return out


def fidelity_leaves(
    doc: Mapping[str, Any], skip: Collection[str], is_ignored: IsIgnored
) -> list[tuple[str, Any, bool]]:
    out: list[tuple[str, Any, bool]] = []
    for key, value in doc.items():
        if key not in skip:
            _leaves(value, str(key), False, is_ignored, out)
    return out


def gold_samples(doc: Mapping[str, Any], skip: Collection[str]) -> dict[str, Any]:
    samples: dict[str, Any] = {}
    for path, value, _ in fidelity_leaves(doc, skip, lambda _path: False):
        if path not in samples and not is_absent(value):
            samples[path] = value
    return samples


def leaf_values(doc: Mapping[str, Any], *, id_key: str = "id") -> Iterator[tuple[str, Any]]:
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
