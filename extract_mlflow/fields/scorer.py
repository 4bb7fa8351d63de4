"""Field scoring: walks a gold and a predicted document together and counts, per leaf path,
true positives, false positives and false negatives with their error categories.

Paths: ``vendor.name`` for nested objects, ``line_items[].qty`` for leaves of list items,
``tags[]`` for scalar lists. The document's id key is not scored.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..config import Config
from ..core.paths import (
    EMPTY_KINDS,
    PRUNED,
    PathCache,
    flat_item,
    is_absent,
    mark_empties,
    walk,
)
from .align import Similarity, assign, bulk_similarity, canonical, pair_identical
from .counts import (
    CATEGORIES,
    HALLUCINATED,
    MISSING,
    PARSE_FAILURE,
    TYPE_ERR,
    WRONG_VALUE,
    DocCounts,
    ErrorRecord,
    FieldState,
)
from .forms import ExactForms, exact_forms
from .normalize import TEXT, TYPE_ERROR, Comparator, Comparators
from .units import is_measurement, may_be_measurement

__all__ = [  # the records of field scoring are named from here too (fields/counts.py)
    "CATEGORIES",
    "HALLUCINATED",
    "META_KEYS",
    "MISSING",
    "PARSE_FAILURE",
    "TYPE_ERR",
    "WRONG_VALUE",
    "DocCounts",
    "ErrorRecord",
    "FieldScorer",
    "FieldState",
]

META_KEYS = ("usage", "latency_ms")
"""Top-level keys that describe the model call, not the document: never scored."""
_NO_SKIP: frozenset[str] = frozenset()


_UNSET: Any = object()

_SCALARS = (str, int, float, bool)


class FieldScorer:
    """Scores documents field by field under one config. Not thread-safe (it caches). `mixed`:
    the paths where no ``quantity`` is inferred (:meth:`FieldState.mixed` of a first pass)."""

    def __init__(
        self,
        config: Config | None = None,
        skip_keys: Iterable[str] = (),
        state: FieldState | None = None,
        mixed: frozenset[str] = frozenset(),
    ) -> None:
        self.config = config or Config()
        self.comparators = Comparators(self.config, mixed)
        self._ignored = frozenset(p for p, r in self.config.fields.items() if r.ignore)
        # top-level keys never scored: the id, call metadata, inputs of other metric families
        self._top_skip = frozenset({self.config.id_key, *META_KEYS, *skip_keys})
        self._threshold = self.config.match_threshold
        # empty values scored as values (config `empty_as_null` leaves their kind out)
        self._kept_empties = frozenset(EMPTY_KINDS) - set(self.config.empty_as_null)
        self._paths = PathCache()
        self._item_resolvers: dict[str, Callable[[str], Callable[[Any], Comparator] | None]] = {}
        self.state = state if state is not None else FieldState()
        # the state's containers, bound once (the hot path adds to them)
        self.skipped = self.state.skipped
        self.types_seen = self.state.types_seen
        self.gold_type_errors = self.state.gold_type_errors
        self.measured = self.state.measured
        self.plain = self.state.plain
        # paths whose gold values need no more noting: a configured type, or known mixed
        configured = {p for p, r in self.config.fields.items() if r.type}
        self._settled = configured | (self.measured & self.plain)

    # -- public -------------------------------------------------------------------------
    def score(self, gold: dict[str, Any], pred: dict[str, Any] | None) -> DocCounts:
        """Score one document; `pred` None means there is no prediction for it."""
        acc = DocCounts()
        if pred is None:
            self.expand_gold(gold, MISSING, acc)
            return acc
        if self._kept_empties:
            gold, pred = self._mark(gold), self._mark(pred)
        self._dict(gold, pred, "", acc, self._top_skip)
        return acc

    def _mark(self, doc: dict[str, Any]) -> dict[str, Any]:
        """The document with its empty values of the kept kinds marked as values (the
        top-level keys that are not scored left as they are)."""
        kept, skip = self._kept_empties, self._top_skip
        return {k: v if k in skip else mark_empties(v, kept) for k, v in doc.items()}

    def expand_gold(self, gold: dict[str, Any], category: str, acc: DocCounts) -> None:
        """Count every gold leaf as a false negative of `category` (missing, parse_failure)."""
        if self._kept_empties:
            gold = self._mark(gold)
        for key, g in gold.items():
            if key not in self._top_skip:
                self._expand(g, key, acc, category, gold_side=True)

    def _node(self, g: Any, p: Any, path: str, acc: DocCounts) -> None:
        # The hot path of scoring: dispatch on the gold value's JSON type with exact type
        # checks, and count a leaf equal to the letter as a match before reading any type.
        if self._ignored and path in self._ignored:
            self.skipped.add(path)
            return
        tg = type(g)
        if tg is dict and g:
            if type(p) is dict or is_absent(p):
                self._dict(g, p if type(p) is dict else {}, path, acc, _NO_SKIP)
            else:
                self._expand(g, path, acc, TYPE_ERR, gold_side=True)
                self._expand(p, path, acc, TYPE_ERR, gold_side=False)
            return
        if tg is list and g:
            if is_absent(p):
                p = []
            elif type(p) is not list:
                p = [p]  # a lone value where a list was expected is read as a list of one
            if any(type(x) is dict or type(x) is list for x in g):
                # items that are objects or lists are aligned by content; a list item's own
                # items are then at `path[][]`, as the path convention walks them
                self._object_list(g, p, path, acc)
            else:
                self._scalar_list(g, p, path, acc)
            return
        if g is None or tg is dict or tg is list or (tg is str and (not g or g.isspace())):
            if not is_absent(p):
                self._expand(p, path, acc, HALLUCINATED, gold_side=False)
            return
        if path not in self._settled and (path not in self.plain or may_be_measurement(g)):
            self._see(path, g)  # only when it can change what is known of the path
        tp_ = type(p)
        if tp_ is tg and g == p:
            acc.tp(path)
        elif is_absent(p):
            acc.fn(path, MISSING, g)
        elif tp_ is dict or tp_ is list:
            acc.fn(path, TYPE_ERR, g)
            self._expand(p, path, acc, TYPE_ERR, gold_side=False)
        else:
            self._leaf(g, p, path, acc)

    def _dict(
        self,
        g: dict[str, Any],
        p: dict[str, Any],
        parent: str,
        acc: DocCounts,
        skip: frozenset[str],
    ) -> None:
        """Walk the keys of a gold object and its predicted counterpart.

        Scalars equal to the letter are counted right here: they are most leaves of most
        documents, and a call per leaf would cost more than the comparison."""
        child = self._paths.children(parent)
        counts = acc.counts
        ignored = self._ignored
        settled, plain = self._settled, self.plain
        for key, gv in g.items():
            if key in skip:
                continue
            path = child.get(key) or self._paths.child(parent, key)
            pv = p.get(key)
            tg = type(gv)
            if (
                tg is type(pv)
                and tg in _SCALARS
                and gv == pv
                and (tg is not str or (gv and not gv.isspace()))
                and not (ignored and path in ignored)
            ):
                c = counts.get(path)
                if c is None:
                    counts[path] = [1, 0, 0]
                else:
                    c[0] += 1
                if path not in settled and (
                    path not in plain or (tg is str and may_be_measurement(gv))
                ):
                    self._see(path, gv)  # as in _node
            else:
                self._node(gv, pv, path, acc)
        for key, pv in p.items():
            if key not in g and key not in skip:
                self._node(None, pv, child.get(key) or self._paths.child(parent, key), acc)

    def _see(self, path: str, value: Any) -> None:
        """Note gold value `value` at `path` (no configured type) as a measurement or not."""
        (self.measured if type(value) is str and is_measurement(value) else self.plain).add(path)
        if path in self.measured and path in self.plain:
            self._settled.add(path)  # known to be mixed: no more noting

    def _leaf(self, g: Any, p: Any, path: str, acc: DocCounts) -> None:
        """Compare two present scalars that differ as written: read both as the field type."""
        category = self.compare_leaf(path, g, p)
        if category is None:
            acc.tp(path)
        else:
            acc.wrong(path, category, g, p)

    def compare_leaf(self, path: str, g: Any, p: Any) -> str | None:
        """How prediction `p` scores against gold `g` (present scalars at `path`): None when
        it matches (as written, or read as the field's type), else the error category."""
        if type(g) is type(p) and g == p:
            return None
        comp = self.comparators.for_leaf(path, g)
        self.types_seen.add((path, comp.type))
        cg = comp.canon(g)
        if cg is TYPE_ERROR:  # the gold value itself does not read as the field type
            self.gold_type_errors[path] += 1
            comp, cg = TEXT, TEXT.canon(g)
        cp = comp.canon(p)
        if cp is TYPE_ERROR:
            return TYPE_ERR
        return None if comp.equal(cg, cp) else WRONG_VALUE

    def _expand(
        self, value: Any, path: str, acc: DocCounts, category: str, gold_side: bool
    ) -> None:
        """Count every leaf under `value` as FN (gold side) or FP (prediction side); an ignored
        subtree is cut off and recorded in `skipped` (the path convention's walk)."""
        ignored = self._ignored.__contains__ if self._ignored else None
        for leaf in walk(value, path, [], ignored=ignored):
            if leaf.value is PRUNED:
                self.skipped.add(leaf.path)
            elif gold_side:
                if leaf.path not in self._settled:
                    self._see(leaf.path, leaf.value)
                self.types_seen.add(
                    (leaf.path, self.comparators.for_leaf(leaf.path, leaf.value).type)
                )
                acc.fn(leaf.path, category, leaf.value)
            else:
                acc.fp(leaf.path, category, leaf.value)

    # -- lists --------------------------------------------------------------------------
    def _object_list(self, gl: list[Any], pl: list[Any], path: str, acc: DocCounts) -> None:
        ipath = path + "[]"
        if ipath in self._ignored:
            self.skipped.add(ipath)
            return
        # (an object that is not empty is present: asked first, it spares most items a call)
        gold = [x for x in gl if (type(x) is dict and x) or not is_absent(x)]
        pred = [x for x in pl if (type(x) is dict and x) or not is_absent(x)]
        pairs, left_g, left_p = pair_identical(gold, pred)
        for i, _ in pairs:
            self._same(gold[i], ipath, acc)
        if len(left_g) == 1 and len(left_p) == 1:
            # One leftover each: score the pair once, keep it if it is similar enough.
            g, p = gold[left_g[0]], pred[left_p[0]]
            scratch = DocCounts()
            self._item(g, p, ipath, scratch)
            share = scratch.similarity()
            if share > 0 and share >= self._threshold:
                acc.merge(scratch)
                return
        elif left_g and left_p:
            # Equally good pairings are told apart by content, never by list order: the
            # leftovers are put in a canonical order first, so reordering either list cannot
            # change which items pair up (and so cannot change the counts).
            left_g = sorted(left_g, key=lambda i: canonical(gold[i]))
            left_p = sorted(left_p, key=lambda j: canonical(pred[j]))
            g_items = [gold[i] for i in left_g]
            p_items = [pred[j] for j in left_p]
            forms = (
                None
                if self._ignored
                else exact_forms(g_items, p_items, self._resolvers_under(ipath))
            )
            if forms is None:
                chosen = assign(self._similarity(g_items, p_items, ipath), self._threshold)
                for a, b in chosen:
                    self._item(g_items[a], p_items[b], ipath, acc)
            else:
                chosen = assign(forms.similarity, self._threshold)
                for a, b in chosen:
                    self._flat_pair(g_items[a], p_items[b], forms, a, b, ipath, acc)
            done_g = {a for a, _ in chosen}
            done_p = {b for _, b in chosen}
            left_g = [i for k, i in enumerate(left_g) if k not in done_g]
            left_p = [j for k, j in enumerate(left_p) if k not in done_p]
        for i in left_g:
            self._expand(gold[i], ipath, acc, MISSING, gold_side=True)
        for j in left_p:
            self._expand(pred[j], ipath, acc, HALLUCINATED, gold_side=False)

    def _item(self, g: Any, p: Any, ipath: str, acc: DocCounts) -> None:
        if type(g) is dict and type(p) is dict:
            self._dict(g, p, ipath, acc, _NO_SKIP)
        else:
            self._node(g, p, ipath, acc)

    def _same(self, g: Any, ipath: str, acc: DocCounts) -> None:
        """:meth:`_item` of an item and its identical prediction (equal, every leaf of the
        same type, as :func:`~extract_mlflow.fields.align.pair_identical` pairs them): the
        item's leaves against themselves, its scalars counted here as matches."""
        if type(g) is not dict:
            self._node(g, g, ipath, acc)
            return
        child = self._paths.children(ipath)
        counts = acc.counts
        ignored = self._ignored
        settled, plain = self._settled, self.plain
        for key, gv in g.items():
            path = child.get(key) or self._paths.child(ipath, key)
            tg = type(gv)
            if (
                tg in _SCALARS
                and (tg is not str or (gv and not gv.isspace()))
                and not (ignored and path in ignored)
            ):
                c = counts.get(path)
                if c is None:
                    counts[path] = [1, 0, 0]
                else:
                    c[0] += 1
                if path not in settled and (
                    path not in plain or (tg is str and may_be_measurement(gv))
                ):
                    self._see(path, gv)
            else:
                self._node(gv, gv, path, acc)

    def _flat_pair(
        self,
        g: dict[str, Any],
        p: dict[str, Any],
        forms: ExactForms,
        a: int,
        b: int,
        ipath: str,
        acc: DocCounts,
    ) -> None:
        """:meth:`_item` of gold item `a` and predicted item `b` of `forms` (no path ignored),
        from the forms the similarity read: the same counts, mistakes (in order) and notes."""
        child = self._paths.children(ipath)
        settled, plain = self._settled, self.plain
        read = forms.pred[b]
        for key, gv, comp, cg in forms.gold[a]:
            path = child.get(key) or self._paths.child(ipath, key)
            if path not in settled and (
                path not in plain or (type(gv) is str and may_be_measurement(gv))
            ):
                self._see(path, gv)
            pv = p.get(key)
            if pv is None:
                acc.fn(path, MISSING, gv)
            elif type(pv) is type(gv) and gv == pv:
                acc.tp(path)
            else:  # compare_leaf, with both values already read
                self.types_seen.add((path, comp.type))
                cp = read[key]
                if cp is TYPE_ERROR:
                    acc.wrong(path, TYPE_ERR, gv, pv)
                elif comp.equal(cg, cp):
                    acc.tp(path)
                else:
                    acc.wrong(path, WRONG_VALUE, gv, pv)
        for key, pv in p.items():
            if key not in g:
                acc.fp(child.get(key) or self._paths.child(ipath, key), HALLUCINATED, pv)

    def item_similarity(self, g: Any, p: Any, ipath: str) -> float:
        """Share of the pair's leaves that compare equal (the reference, one pair at a time)."""
        scratch = DocCounts()
        self._item(g, p, ipath, scratch)
        return scratch.similarity()

    def _similarity(self, gold: list[Any], pred: list[Any], ipath: str) -> Similarity:
        flat_g = [flat_item(x) for x in gold]
        flat_p = [flat_item(x) for x in pred]
        if None not in flat_g and None not in flat_p:
            return bulk_similarity(flat_g, flat_p, self._resolvers_under(ipath))  # type: ignore[arg-type]
        sim = np.zeros((len(gold), len(pred)))
        for i, g in enumerate(gold):
            for j, p in enumerate(pred):
                sim[i, j] = self.item_similarity(g, p, ipath)
        return sim

    def _resolvers_under(self, ipath: str) -> Callable[[str], Callable[[Any], Comparator] | None]:
        """For list items at `ipath`: relative leaf path -> its comparator resolver (None when
        ignored); one memoised function per list path."""
        fn = self._item_resolvers.get(ipath)
        if fn is None:
            memo: dict[str, Callable[[Any], Comparator] | None] = {}

            def fn(rel: str) -> Callable[[Any], Comparator] | None:
                r = memo.get(rel, _UNSET)
                if r is _UNSET:
                    full = self._paths.child(ipath, rel)
                    r = memo[rel] = (
                        None if self._is_ignored(full) else self.comparators.resolver(full)
                    )
                return r  # type: ignore[no-any-return]

            self._item_resolvers[ipath] = fn
        return fn

    def _is_ignored(self, path: str) -> bool:
        if not self._ignored:
            return False
        parts = path.split(".")
        return any(".".join(parts[: k + 1]) in self._ignored for k in range(len(parts)))

    def _scalar_list(self, gl: list[Any], pl: list[Any], path: str, acc: DocCounts) -> None:
        ipath = path + "[]"
        if ipath in self._ignored:
            self.skipped.add(ipath)
            return
        gold = [x for x in gl if not is_absent(x)]
        for x in () if ipath in self._settled else gold:
            self._see(ipath, x)
        pred = []
        for x in pl:
            if type(x) is dict or type(x) is list:  # an object where a scalar belongs
                self._expand(x, ipath, acc, TYPE_ERR, gold_side=False)
            elif not is_absent(x):
                pred.append(x)
        if gold == pred and all(type(a) is type(b) for a, b in zip(gold, pred, strict=True)):
            for _ in gold:
                acc.tp(ipath)
            if gold:
                self.types_seen.add((ipath, self.comparators.for_leaf(ipath, gold[0]).type))
            return
        comp = self._list_comparator(ipath, gold)
        self.types_seen.add((ipath, comp.type))
        cg = [comp.canon(x) for x in gold]
        cp = [comp.canon(x) for x in pred]
        # Exact canonical matches first (a multiset intersection) ...
        index: dict[Any, list[int]] = {}
        for j in range(len(pred) - 1, -1, -1):
            key = ("raw", repr(pred[j])) if cp[j] is TYPE_ERROR else cp[j]
            index.setdefault(key, []).append(j)
        matched_g: set[int] = set()
        matched_p: set[int] = set()
        for i in range(len(gold)):
            key = ("raw", repr(gold[i])) if cg[i] is TYPE_ERROR else cg[i]
            bucket = index.get(key)
            if bucket:
                matched_p.add(bucket.pop())
                matched_g.add(i)
        # ... then, for tolerant types, the largest set of leftover pairs that match.
        if comp.kind != "exact":
            lg = [i for i in range(len(gold)) if i not in matched_g and cg[i] is not TYPE_ERROR]
            lp = [j for j in range(len(pred)) if j not in matched_p and cp[j] is not TYPE_ERROR]
            if lg and lp:
                eq = np.array([[comp.equal(cg[i], cp[j]) for j in lp] for i in lg], dtype=float)
                from scipy.optimize import (
                    linear_sum_assignment,
                )  # only here: scipy is slow to import

                rows, cols = linear_sum_assignment(eq, maximize=True)
                for r, c in zip(rows, cols, strict=True):
                    if eq[r, c] > 0:
                        matched_g.add(lg[r])
                        matched_p.add(lp[c])
        for _ in matched_g:
            acc.tp(ipath)
        for i, g in enumerate(gold):
            if i not in matched_g:
                acc.fn(ipath, MISSING, g)
        for j, p in enumerate(pred):
            if j not in matched_p:
                acc.fp(ipath, TYPE_ERR if cp[j] is TYPE_ERROR else HALLUCINATED, p)

    def _list_comparator(self, ipath: str, gold: list[Any]) -> Comparator:
        """One comparator for a scalar list: the configured type, else the type most gold items
        infer to (ties broken by name, so item order does not matter)."""
        if not gold:
            return self.comparators.for_leaf(ipath, "")
        votes = Counter(self.comparators.for_leaf(ipath, g).type for g in gold)
        best = min(votes, key=lambda t: (-votes[t], t))
        rep = next(
            g for g in sorted(gold, key=repr) if self.comparators.for_leaf(ipath, g).type == best
        )
        return self.comparators.for_leaf(ipath, rep)
