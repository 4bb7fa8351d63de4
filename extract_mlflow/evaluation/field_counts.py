"""The field-count family as mergeable statistics.

:class:`FieldCounts` takes each document's record (counts per path and its mistakes) and keeps
only exact side state: summed integer counts per path, a tally of mistakes per (path,
category), the scorer's :class:`~extract_mlflow.fields.scorer.FieldState`, the first mistakes
of every field (:class:`Smallest`, a bounded reservoir keyed by document id) and, per path, the
first gold document that has a value there (:class:`TypeSamples`). Merging sums, unites and
keeps the smallest keys, so any partition of the documents merges to the one-pass statistics;
:meth:`FieldCounts.fields` turns them into the report's :class:`FieldResult` per path.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter, itemgetter
from typing import Any, Generic, TypeVar

from ..core.counts import Counts
from ..core.paths import document_leaves
from ..fields.normalize import Comparators
from ..fields.scorer import CATEGORIES, ErrorRecord, FieldState
from ..report import EXAMPLES_PER_FIELD, DocumentResult, FieldResult

K = TypeVar("K")
T = TypeVar("T")

_KEY = itemgetter(0)
_ID = attrgetter("id")


class Smallest(Generic[K, T]):
    """The `k` items with the smallest keys offered so far, in key order (keys must be totally
    ordered and unique). Mergeable: the k smallest of a union are the k smallest of the parts'
    k smallest. Once full, an item whose key is not below the largest kept is rejected at once.

    >>> s = Smallest(2)
    >>> for key in (5, 1, 4, 2):
    ...     _ = s.offer(key, str(key))
    >>> s.items
    [(1, '1'), (2, '2')]
    """

    # A plain class, not a dataclass: mypyc cannot compile a generic dataclass. It pickles
    # by its constructor (a compiled class is rebuilt by calling it, not by filling a __dict__).
    def __init__(self, k: int, items: list[tuple[K, T]] | None = None) -> None:
        self.k = k
        self.items: list[tuple[K, T]] = [] if items is None else items

    def __reduce__(self) -> tuple[Any, ...]:
        return Smallest, (self.k, self.items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Smallest) and (self.k, self.items) == (other.k, other.items)

    def __repr__(self) -> str:
        return f"Smallest(k={self.k!r}, items={self.items!r})"

    def offer(self, key: K, item: T) -> bool:
        """Keep (`key`, `item`) if its key is among the k smallest; whether it was kept."""
        items = self.items
        if len(items) >= self.k:
            if not items or not key < items[-1][0]:  # type: ignore[operator]
                return False
            items.pop()
        bisect.insort(items, (key, item), key=_KEY)
        return True

    def merge(self, other: Smallest[K, T]) -> None:
        """Keep the k smallest of both (`other` is left as it is)."""
        if other.k != self.k:
            raise ValueError(f"cannot merge the {other.k} smallest into the {self.k} smallest")
        for key, item in other.items:
            self.offer(key, item)


@dataclass
class TypeSamples:
    """Per field path, the smallest document id having a gold value there, and that gold
    document: the type label of a field whose values all matched to the letter (so were never
    read as a type) comes from its first gold value in document-id order."""

    first: dict[str, tuple[str, Mapping[str, Any]]] = field(default_factory=dict)

    def offer(self, doc_id: str, gold: Mapping[str, Any], paths: Iterable[str]) -> None:
        """`gold` (document `doc_id`) has a gold value at each of `paths`."""
        first = self.first
        for path in paths:
            have = first.get(path)
            if have is None or doc_id < have[0]:
                first[path] = (doc_id, gold)

    def merge(self, other: TypeSamples) -> None:
        for path, (doc_id, gold) in other.first.items():
            self.offer(doc_id, gold, (path,))

    def labels(self, pending: set[str], comparators: Comparators, id_key: str) -> dict[str, str]:
        """The type of each pending path's first gold value (documents in id order, the leaves
        of a document in document order); paths without a sample are left out."""
        by_doc: dict[str, tuple[Mapping[str, Any], set[str]]] = {}
        for path in pending:
            if path in self.first:
                doc_id, gold = self.first[path]
                by_doc.setdefault(doc_id, (gold, set()))[1].add(path)
        out: dict[str, str] = {}
        for doc_id in sorted(by_doc):
            gold, wanted = by_doc[doc_id]
            for path, value, _ in document_leaves(gold, {id_key}):
                if path in wanted:
                    out[path] = comparators.for_leaf(path, value).type
                    wanted.discard(path)
        return out


def _example(key: tuple[str, int], e: ErrorRecord) -> dict[str, Any]:
    return {"id": key[0], "category": e.category, "expected": e.expected, "got": e.got}


@dataclass
class FieldCounts:
    """The field counts of a set of documents, as mergeable statistics (see the module).

    The mistakes of the records are tallied and offered to the reservoirs in batches
    (:meth:`fold`): the records added since the last fold wait in :attr:`pending` (references
    to records the evaluation keeps anyway), so the pass itself does no per-mistake work, and a
    batch in id order stops offering a field's mistakes once its reservoir is closed. A caller
    that drops the records' mistakes (a streaming pass) folds before dropping them."""

    totals: dict[str, list[int]] = field(default_factory=dict)
    tally: Counter[tuple[str, str]] = field(default_factory=Counter)
    state: FieldState = field(default_factory=FieldState)
    examples: dict[str, Smallest[tuple[str, int], ErrorRecord]] = field(default_factory=dict)
    samples: TypeSamples = field(default_factory=TypeSamples)
    pending: list[DocumentResult] = field(default_factory=list)
    """records with mistakes not folded into :attr:`tally` and :attr:`examples` yet"""
    typed: set[str] = field(default_factory=set)
    """the paths of :attr:`state`'s ``types_seen`` (derived; refreshed when it grows)"""
    typed_seen: int = 0

    def add(self, record: DocumentResult) -> None:
        """Count one document's record (the scorer has already updated :attr:`state`)."""
        totals = self.totals
        for path, (tp, fp, fn) in record.fields.items():
            t = totals.get(path)
            if t is None:
                totals[path] = [tp, fp, fn]
            else:
                t[0] += tp
                t[1] += fp
                t[2] += fn
        if record.errors:
            self.pending.append(record)

    def fold(self) -> None:
        """Tally the pending records' mistakes and offer them to the field reservoirs, keyed
        (document id, index in the document). The batch goes in id order, so a field is closed
        once its reservoir is full of keys below the current document: its later mistakes are
        skipped, and the batch stops when every field it touches is closed."""
        pending, self.pending = self.pending, []
        if not pending:
            return
        batch = Counter((e.path, e.category) for d in pending for e in d.errors)  # in C
        self.tally.update(batch)
        paths = {path for path, _ in batch}
        closed: set[str] = set()
        examples = self.examples
        for d in sorted(pending, key=_ID):
            doc_id = d.id
            for i, e in enumerate(d.errors):
                path = e.path
                if path in closed:
                    continue
                box = examples.get(path)
                if box is None:
                    box = examples[path] = Smallest(EXAMPLES_PER_FIELD)
                elif len(box.items) == box.k and box.items[-1][0][0] < doc_id:
                    closed.add(path)
                    continue
                box.offer((doc_id, i), e)
                if len(box.items) == box.k and box.items[-1][0][0] == doc_id:
                    closed.add(path)  # later keys: this document's next mistakes, larger ids
            if len(closed) == len(paths):
                break

    def offer_counted(
        self, doc_id: str, gold: Mapping[str, Any], counts: Mapping[str, list[int]]
    ) -> None:
        """Offer `gold` as the type sample of the paths it counts TP or FN at (`counts`: its
        counts per path). A path already read as a type needs no sample: it is never labelled
        from one, whatever is merged later (the union only grows)."""
        seen = self.state.types_seen
        if len(seen) != self.typed_seen:
            self.typed = {path for path, _ in seen}
            self.typed_seen = len(seen)
        untyped = counts.keys() - self.typed
        if untyped:
            self.samples.offer(doc_id, gold, [p for p in untyped if counts[p][0] or counts[p][2]])

    def merge(self, other: FieldCounts) -> None:
        """Add `other`'s statistics to these (`other` is left as it is)."""
        for path, (tp, fp, fn) in other.totals.items():
            t = self.totals.setdefault(path, [0, 0, 0])
            t[0] += tp
            t[1] += fp
            t[2] += fn
        self.tally.update(other.tally)
        self.state.merge(other.state)
        for path, box in other.examples.items():
            self.examples.setdefault(path, Smallest(box.k)).merge(box)
        self.pending.extend(other.pending)
        self.samples.merge(other.samples)

    def fields(self, comparators: Comparators, id_key: str) -> dict[str, FieldResult]:
        """Every field in path order: its type label, counts, mistakes by category and first
        mistakes (documents in id order, mistakes in document order)."""
        self.fold()
        types = self._types(comparators, id_key)
        out: dict[str, FieldResult] = {}
        tally = self.tally
        for path in sorted(self.totals):
            tp, fp, fn = self.totals[path]
            label = comparators.configured_type(path) or types.get(path) or "not_in_gold"
            errors = {c: tally[(path, c)] for c in CATEGORIES if tally.get((path, c))}
            box = self.examples.get(path)
            examples = [_example(key, e) for key, e in box.items] if box else []
            out[path] = FieldResult(path, label, Counts(tp, fp, fn), errors, examples)
        return out

    def _types(self, comparators: Comparators, id_key: str) -> dict[str, str]:
        """The type label of each field not configured with a type: the types its gold values
        were read as, else the type of its first gold value (only fields with gold values, tp
        + fn > 0, can be labelled from gold)."""
        seen: dict[str, set[str]] = {}
        for path, type_name in self.state.types_seen:
            seen.setdefault(path, set()).add(type_name)
        pending = {
            p
            for p, (tp, _, fn) in self.totals.items()
            if tp + fn and p not in seen and not comparators.configured_type(p)
        }
        out = {p: "/".join(sorted(names)) for p, names in seen.items()}
        if pending:
            out.update(self.samples.labels(pending, comparators, id_key))
        return out
