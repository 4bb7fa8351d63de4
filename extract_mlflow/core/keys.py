"""MLflow metric keys of field paths and slice labels: the one place that makes them.

MLflow accepts a metric key of letters, digits, ``_``, ``-``, ``.``, spaces and ``/`` (``:``
too, except on Windows), at most 250 characters long, that is its own normalised path (no
empty, ``.`` or ``..`` segment, no leading or trailing ``/``). A field's metrics are
``<metric>/<suffix>`` (``field_f1/line_items.qty``): the MLflow UI makes one chart section per
prefix, so every field's F1 sits side by side.

The suffix of a field path:

- an *ordinary* path (only letters, digits, ``_``, ``-``, ``.``, inner spaces and the ``[]``
  list marker) keeps its text with the ``[]`` marker dropped: ``line_items[].qty`` ->
  ``line_items.qty``;
- any other path (``p/q``, ``k:1``, ``a[0]``, ``..``, ``""``) has each character MLflow
  rejects replaced by ``_`` and a hash of the full path appended: ``k:1`` -> ``k_1-<hash>``,
  where ``<hash>`` is the first 10 hex digits of its SHA-256; so ``k_1`` (ordinary) and ``k:1``
  never share a key;
- a suffix longer than its room under 250 characters is cut and gets the hash too.

Two paths of one evaluation can still reach one readable suffix (``x`` and ``x[]``, when a
field is a list in one document and a scalar in another). Then :func:`field_keys` keeps the
readable suffix for one of them and hashes the others: the one gold path among them, else the
gold path that is the suffix verbatim (``x``); when none qualifies every one is hashed. Since
that choice reads only the gold paths, two comparable runs (same gold) give their gold fields
the same keys. Every suffix is then unique: hashes that still meet another key are lengthened.

A gate may name a field by its path (``field_f1/line_items[].qty``, ``field_f1/p/q``):
:func:`resolve_metric` turns the path into the key logged for it.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from typing import TYPE_CHECKING

from .paths import strip_list_marks

if TYPE_CHECKING:
    import pandas as pd

MAX_KEY_LENGTH = 250
"""MLflow's limit on the length of a metric key."""
FIELD_METRICS = ("field_f1", "field_precision", "field_recall", "field_bleu_proxy")
"""The per-field metrics; one suffix per field serves them all."""
FIELD_SUFFIX_LENGTH = MAX_KEY_LENGTH - 1 - max(len(m) for m in FIELD_METRICS)
"""Room for a field's suffix under the longest per-field prefix."""
HASH_DIGITS = 10

_REJECTED = re.compile(r"[^\w.\- ]")  # MLflow's key characters, without ':' (Windows) and '/'
_GLOB = re.compile(r"[*?\[]")
_FIELD_METRIC = re.compile(r"^(?P<metric>field_[a-z0-9_]+)/(?P<path>.*)$", re.DOTALL)


def _digest(path: str) -> str:
    return hashlib.sha256(path.encode("utf-8", "surrogatepass")).hexdigest()


def _readable(path: str, lists: bool) -> str:
    return strip_list_marks(path) if lists else path


def _is_ordinary(text: str, room: int) -> bool:
    """True when `text` is a valid suffix as it is."""
    return (
        0 < len(text) <= room
        and text not in (".", "..")
        and text == text.strip()
        and _REJECTED.search(text) is None
    )


def _hashed(path: str, room: int, lists: bool, digits: int = HASH_DIGITS) -> str:
    clean = _REJECTED.sub("_", _readable(path, lists)) or "_"
    tail = "-" + _digest(path)[:digits]
    return clean[: room - len(tail)] + tail


def key_suffix(path: str, room: int = FIELD_SUFFIX_LENGTH, *, lists: bool = True) -> str:
    """The suffix of one path on its own (no other path to collide with); see the module.

    >>> key_suffix("line_items[].qty")
    'line_items.qty'
    >>> key_suffix("k:1")
    'k_1-3263756b4d'
    """
    text = _readable(path, lists)
    return text if _is_ordinary(text, room) else _hashed(path, room, lists)


def metric_key(prefix: str, path: str, *, lists: bool = True) -> str:
    """``prefix/suffix`` for one path (or slice label, with ``lists=False``) on its own.

    >>> metric_key("field_f1", "line_items[].qty")
    'field_f1/line_items.qty'
    """
    return f"{prefix}/{key_suffix(path, MAX_KEY_LENGTH - 1 - len(prefix), lists=lists)}"


def field_keys(paths: Iterable[str], gold: Collection[str] = ()) -> dict[str, str]:
    """Path -> suffix for every field path of one evaluation, distinct for distinct paths.

    `gold` names the paths that have gold values: they keep a readable suffix first.

    >>> field_keys(["x", "x[]"], gold={"x[]"})["x[]"]
    'x'
    """
    room = FIELD_SUFFIX_LENGTH
    out = {p: key_suffix(p, room) for p in dict.fromkeys(paths)}
    groups: dict[str, list[str]] = defaultdict(list)
    for path, suffix in out.items():
        groups[suffix].append(path)
    for suffix, members in groups.items():
        if len(members) > 1:
            owner = _owner(suffix, members, gold)
            for path in members:
                if path != owner:
                    out[path] = _hashed(path, room, True)
    return _unique(out, room)


def _owner(suffix: str, members: list[str], gold: Collection[str]) -> str | None:
    """Which of several paths with one readable suffix keeps it (see the module)."""
    golden = [p for p in members if p in gold] or members
    if len(golden) == 1 and len(members) > 1 and golden[0] in gold:
        return golden[0]
    return suffix if suffix in golden else None


def _unique(out: dict[str, str], room: int) -> dict[str, str]:
    """Lengthen the hashes of hashed suffixes that still meet another suffix."""
    for digits in (16, 24, 40, 64):
        seen: dict[str, list[str]] = defaultdict(list)
        for path, suffix in out.items():
            seen[suffix].append(path)
        clashes = [p for ps in seen.values() if len(ps) > 1 for p in ps]
        if not clashes:
            break
        for path in clashes:
            if out[path] != _readable(path, True):  # a readable owner keeps its suffix
                out[path] = _hashed(path, room, True, digits)
    return out


def field_key(metric: str, path: str, keys: Mapping[str, str] | None = None) -> str:
    """``metric/suffix`` of a field path under an evaluation's `keys` (else on its own)."""
    if keys is not None and path in keys:
        return f"{metric}/{keys[path]}"
    return metric_key(metric, path)


def keys_from_frame(frame: pd.DataFrame) -> dict[str, str]:
    """The field keys of a run from its per-document counts (``documents.parquet``: columns
    ``field_tp/<path>``, ``field_fn/<path>``), as :func:`field_keys` gave them when it was
    logged."""
    paths = [str(c)[len("field_tp/") :] for c in frame.columns if str(c).startswith("field_tp/")]
    gold = {
        p
        for p in paths
        if f"field_fn/{p}" in frame.columns
        and float(frame[f"field_tp/{p}"].sum()) + float(frame[f"field_fn/{p}"].sum()) > 0
    }
    return field_keys(paths, gold)


def resolve_metric(name: str, keys: Mapping[str, str]) -> str:
    """A gate's metric name as logged: ``field_<metric>/<path>`` naming a field path of
    `keys` becomes that field's key; another field name becomes the key of its text on its
    own (so a key names itself); globs and other metrics are returned unchanged.

    >>> resolve_metric("field_f1/p/q", {"p/q": "p_q-0123456789"})
    'field_f1/p_q-0123456789'
    """
    m = _FIELD_METRIC.match(name) or _FIELD_METRIC.match(name.strip())
    if m is None:
        return name
    metric, path = m.group("metric"), m.group("path")
    if path in keys:
        return f"{metric}/{keys[path]}"
    if _GLOB.search(strip_list_marks(path)):
        return name  # a glob over the logged keys
    return metric_key(metric, path)  # a key stays itself; an unknown path gets its own key


_ATTRIBUTE_CHARS = re.compile(r"[^\w.\-]")


def slice_key(metric: str, attribute: str, label: str) -> str:
    """``<metric>_by_<attribute>/<value>`` as an MLflow key.

    >>> slice_key("teds", "layout", "two column")
    'teds_by_layout/two column'
    """
    return metric_key(f"{metric}_by_{_ATTRIBUTE_CHARS.sub('_', attribute)}", label, lists=False)
