"""TEDS and TEDS-S (PubTabNet), computed exactly and fast, and header association. Pure.

Definition: the public PubTabNet evaluation (ibm-aur-nlp/PubTabNet), the one published
table-recognition results are computed with. Its code parses HTML with lxml (comments removed),
scores the first ``<table>`` of the document body, and builds the tree as follows; this module
computes the same numbers (the trees are read by :mod:`extract_mlflow.structure.tables`):

- *Nodes.* The table element is the root and every element below it is a node, by its tag:
  ``thead``/``tbody``/``tfoot`` (so ``table → thead/tbody → tr → td``), ``tr``, ``td``, ``th``,
  ``caption``, and any element inside a ``th``. A ``td`` is a leaf: the elements inside it are
  not nodes.
- *``th``.* Only ``td`` carries spans and content: a ``th`` is compared by its tag alone (its
  text is never read; ``th`` against ``td`` is a change of tag), and its child elements (a
  ``<b>`` around a header) are nodes.
- *Content of a ``td``.* The token list of its inner HTML: each character of its text, and
  ``<b>`` … ``</b>`` tokens around each element inside it (an ``unk`` element has no closing
  token), white space kept: ``<td><b>x</b></td>`` holds three tokens, ``<td> </td>`` one.
- *Costs.* Inserting or deleting a node costs 1. Renaming costs 1 when the tags differ, or when
  two ``td`` differ in colspan or rowspan (each read as the integer written, 1 when absent);
  between two ``td`` with the same spans it is the Levenshtein distance of the token lists over
  the longer length (0 when both are empty; TEDS-S: always 0); 0 between other equal tags.
- *Size.* ``TEDS = 1 − TED(G, P) / max(|G|, |P|)`` where ``|T|`` counts the elements below the
  table element (lxml's ``.//*``): the root is not counted, the elements inside a ``td`` are
  (so ``<td><b>x</b></td>`` counts 2 though it is one node).
- *No table, empty tables.* An empty string or a document without a table scores 0 (here: a
  predicted table missing from its slot). Two tables with no element below the root make the
  official code divide by zero; they are equal trees and score 1 here. The official code looks
  for the table under ``<body>``, so it expects a whole document (``<html><body><table>…``; a
  bare ``<table>…</table>`` string handed to it directly finds none): each table here scores
  as it would standing alone in such a document.

The normalised variant (``normalized=True``) scores the tree ``table → tr → td`` of
:attr:`Table.rows` instead: sections unwrapped, ``th`` read as ``td``, contents the characters
of the cell text with inline markup removed and white space collapsed, size the nodes of that
tree (the root included). It ignores differences of markup alone.

Why the programme below is the exact tree edit distance (any ordered trees, unit insertions
and deletions, renames costing at most 1). Number each tree's nodes in postorder; l(i) is the
leftmost leaf under i, T_i the subtree rooted at i and F_i = T_i − i the forest of its
descendants, whose nodes are the postorder range l(i) .. i−1.

1. *Forest recurrence* (Zhang & Shasha 1989). For forests numbered in postorder, with FD(i, j)
   the distance between the first i nodes of one and the first j of the other,
   FD(i, j) = min(FD(i−1, j) + 1, FD(i, j−1) + 1, FD(l(i)−1, l(j)−1) + TD(i, j)),
   where TD is the distance between the subtrees rooted at i and j. Applied to F_p and F_q it
   gives A(p, q) = FD(F_p, F_q) from the subtree distances of their nodes.
2. *Subtree distances.* TD(p, q) = min(γ(p, q) + A(p, q),
   1 + |F_p| + min over children c of p of (TD(c, q) − |T_c|),
   1 + |F_q| + min over children d of q of (TD(p, d) − |T_d|)).
   In a mapping of T_p onto T_q, if both roots are mapped they are mapped to each other (were
   p mapped to y ≠ q, q would be a proper ancestor of y and could only be mapped to a proper
   ancestor of p: there is none), and the rest is a mapping of F_p onto F_q: the first term.
   If p is deleted and q mapped, say to a node of the child subtree T_c, every other mapped
   node of T_q lies under q, so its image lies in T_c; the other children of p are deleted
   whole: 1 + (|F_p| − |T_c|) + TD(c, q) at best, which a best mapping of T_c onto T_q
   attains: the second term. The third is the mirror image. If neither root is mapped, the
   cost is 2 + A(p, q) or more, never below the first term (γ ≤ 1). For a gold leaf p this is
   TD(p, q) = |T_q| − 1 + min over x in T_q of γ(p, x): map p to the best node of T_q.
3. *The whole distance* is TD(gold root, predicted root).

The previous closed forms for ``table → tr → td`` (cell–cell, cell–row, row–row as a string
edit distance of cells) are step 2 on trees of depth 2; step 2 is what carries them to the
``thead``/``tbody`` level and to the elements under a ``th``. Aligning rows and then cells
("nested DP") is not exact: the tree edit distance may delete a ``tr`` (or a ``tbody``) and
move its children into a neighbour, or rename a ``tr`` into a ``td``. Gold rows ``[a] [] [b]``
against one predicted row ``[a X b]`` cost 4 (delete two tr, insert one, rename the empty tr
into X), while the best row-then-cell alignment costs 5; ``thead[tr] tbody[tr tr]`` against
``tbody[tr tr tr]`` costs 3 (delete both sections, insert one), not a rebuild of the rows.

The programme: gold nodes are taken in postorder. Every gold node p with children runs the
forest programme of step 1 over F_p against F_q of *every* predicted node q at once; when the
walk reaches a gold node i, each of i's ancestors advances its programme by one row, which
needs only TD(i, ·) and the ancestor's row at l(i) − 1 (the previous row for a leaf; for an
inner node, the rows saved when its leftmost leaf was reached). When the walk reaches p
itself, its programme is complete: A(p, q) is the last column of q's part, and step 2 gives
TD(p, ·) from it, from a running minimum over p's children, and over the predicted nodes by
increasing height (TD(p, d) of q's children first). Gold node i advances depth(i) programmes,
each over Σ_q |F_q| entries (a predicted node counts once per ancestor), so the work is about
depth(G) · depth(P) · |G| · |P| operations, in |G| vectorised steps.

Speed: each step is a few numpy operations on 2-D arrays: the predicted forests F_q side by
side, in buckets of similar size (padding under half); unit insertions make the running term
min(FD(i, t−1) + 1, ·) a prefix minimum, FD(i, t) = t + min_{t' ≤ t}(B(t') − t'). Content
distances come from rapidfuzz ``cdist`` over blocks of gold cells (each tag token stands as one
private-use character). Identical trees short-cut to 0. A deadline (``time.perf_counter()``
value) is checked after every gold node; :func:`timed_teds` falls back to
:func:`approximate_teds` (a lower bound) when it passes.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist

from ..errors import ExtractMlflowError
from .tables import SECTION_TAGS, Cell, Node, Table

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

_BLOCK_ELEMENTS = 2_000_000  # content distances computed at a time (16 MB)
_MAX_STATE_ELEMENTS = 25_000_000  # floats of the programmes' state (200 MB): beyond, no exact TEDS
_PRIVATE_USE = 0x100000  # code points standing for tag tokens in content strings


class TedsBudgetExceeded(ExtractMlflowError):
    """The exact TEDS of one table pair did not finish within its time budget."""


# -- trees in postorder ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Post:
    """A tree in postorder (0-based): each node's leftmost leaf, subtree size, depth, parent
    (−1 for the root), children and height."""

    nodes: list[Node]
    lml: IntArray
    size: IntArray
    depth: IntArray
    parent: IntArray
    children: list[list[int]]
    height: IntArray


def _postorder(root: Node) -> _Post:
    nodes: list[Node] = []
    lml: list[int] = []
    size: list[int] = []
    depth: list[int] = []
    height: list[int] = []
    children: list[list[int]] = []
    stack: list[tuple[Node, int, list[int]]] = [(root, 0, [])]
    iters = [iter(root.children)]
    while stack:
        child = next(iters[-1], None)
        if child is not None:
            stack.append((child, stack[-1][1] + 1, []))
            iters.append(iter(child.children))
            continue
        node, d, kids = stack.pop()
        iters.pop()
        i = len(nodes)
        nodes.append(node)
        depth.append(d)
        children.append(kids)
        lml.append(lml[kids[0]] if kids else i)
        size.append(1 + sum(size[k] for k in kids))
        height.append(1 + max(height[k] for k in kids) if kids else 0)
        if stack:
            stack[-1][2].append(i)
    parent = np.full(len(nodes), -1, dtype=np.int64)
    for i, kids in enumerate(children):
        parent[kids] = i
    as_int = np.array
    return _Post(
        nodes,
        as_int(lml, dtype=np.int64),
        as_int(size, dtype=np.int64),
        as_int(depth, dtype=np.int64),
        parent,
        children,
        as_int(height, dtype=np.int64),
    )


@dataclass(frozen=True, slots=True)
class _Bucket:
    """Predicted subtrees of similar size, laid out side by side for the programmes: row s is
    the forest of subtree ``qs[s]``'s descendants, column t its first t nodes in postorder.
    The programmes keep FD − t (the column number), which turns unit insertions into a prefix
    minimum."""

    qs: IntArray  # (m,) the subtree roots
    ends: IntArray  # (m,): the last column (all descendants)
    width: int  # w: the longest forest
    nodes: IntArray  # (m·w,): the node of column t + 1 (padding: any node)
    lookup: IntArray  # (m·w,): flat index of the column of l(node) − 1, in a (m, w + 1) row
    shift: FloatArray  # (m, w): that column's number minus t + 1

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.qs), self.width + 1


def _buckets(t: _Post) -> list[_Bucket]:
    """The predicted tree's inner nodes grouped so that sizes within a group differ by at most
    a factor of 2 (padding stays below half of each group)."""
    inner = sorted((int(t.size[q]) - 1, q) for q in range(len(t.nodes)) if t.children[q])
    groups: list[list[int]] = []
    low = 0
    for forest, q in inner:
        if not groups or forest > 2 * low:
            groups.append([])
            low = forest
        groups[-1].append(q)
    out = []
    for group in groups:
        qs = np.array(group, dtype=np.int64)
        widths = t.size[qs] - 1
        w = int(widths.max())
        cols = np.arange(w, dtype=np.int64)
        first = t.lml[qs][:, None]
        nodes = np.where(cols[None, :] < widths[:, None], first + cols[None, :], first)
        lookup = t.lml[nodes] - first
        flat = np.arange(len(qs), dtype=np.int64)[:, None] * (w + 1) + lookup
        shift = (lookup - cols[None, :] - 1).astype(np.float64)
        out.append(_Bucket(qs, widths, w, nodes.ravel(), flat.ravel(), shift))
    return out


@dataclass(frozen=True, slots=True)
class _Levels:
    """The predicted tree's inner nodes by height, with their children side by side (for a
    minimum over each node's children with one ``reduceat``)."""

    nodes: list[IntArray]
    kids: list[IntArray]
    starts: list[IntArray]


def _levels(t: _Post) -> _Levels:
    levels = _Levels([], [], [])
    for h in range(1, int(t.height.max()) + 1 if len(t.nodes) else 1):
        qs = np.flatnonzero(t.height == h)
        kids = [t.children[q] for q in qs.tolist()]
        counts = np.array([len(k) for k in kids], dtype=np.int64)
        levels.nodes.append(qs)
        levels.kids.append(np.array([k for ks in kids for k in ks], dtype=np.int64))
        levels.starts.append(np.cumsum(counts) - counts)
    return levels


# -- rename costs ---------------------------------------------------------------------------


def _content_strings(gold: _Post, pred: _Post) -> tuple[list[str], list[str]]:
    """Every td's content tokens as one string (a tag token is one private-use character)."""
    vocabulary: dict[str, str] = {}
    singles = {tok for t in (gold, pred) for n in t.nodes if n.tag == "td" for tok in n.tokens}
    code = _PRIVATE_USE
    for tok in sorted(tok for tok in singles if len(tok) != 1):
        while chr(code) in singles:
            code += 1
        vocabulary[tok] = chr(code)
        code += 1

    def strings(t: _Post) -> list[str]:
        return [
            "".join(vocabulary.get(tok, tok) for tok in n.tokens) for n in t.nodes if n.tag == "td"
        ]

    return strings(gold), strings(pred)


class _Renames:
    """Rename costs of each gold node against every predicted node: 1 between different tags;
    between two td, 1 when the spans differ, else the normalised Levenshtein distance of the
    contents (0 for structure only or two empty contents); 0 between other equal tags."""

    def __init__(self, gold: _Post, pred: _Post, structure_only: bool) -> None:
        tags: dict[str, int] = {}
        self.gtag = np.array([tags.setdefault(n.tag, len(tags)) for n in gold.nodes])
        self.ptag = np.array([tags.setdefault(n.tag, len(tags)) for n in pred.nodes])
        td = tags.get("td", -1)
        self.td = td
        self.gtd = np.cumsum(self.gtag == td) - 1  # td ordinal of each gold td
        self.ptd = np.flatnonzero(self.ptag == td)
        self.gspans = np.array([(n.colspan, n.rowspan) for n in gold.nodes], dtype=np.int64)
        self.pspans = np.array(
            [(pred.nodes[q].colspan, pred.nodes[q].rowspan) for q in self.ptd.tolist()],
            dtype=np.int64,
        ).reshape(-1, 2)
        self.structure_only = structure_only
        if not structure_only:
            self.gtexts, self.ptexts = _content_strings(gold, pred)
            self.plen = np.array([len(x) for x in self.ptexts], dtype=np.int64)
        self.chunk_start, self.chunk = 0, np.zeros((0, len(self.ptd)))

    def _content(self, k: int) -> FloatArray:
        """Normalised Levenshtein distances of gold td number k to every predicted td."""
        if not self.chunk_start <= k < self.chunk_start + len(self.chunk):
            step = max(1, _BLOCK_ELEMENTS // max(len(self.ptd), 1))
            texts = self.gtexts[k : k + step]
            dist = cdist(texts, self.ptexts, scorer=Levenshtein.distance, dtype=np.int64)
            glen = np.array([len(x) for x in texts], dtype=np.int64)
            longest = np.maximum(glen[:, None], self.plen[None, :])
            self.chunk = np.zeros(longest.shape)
            np.divide(dist, longest, out=self.chunk, where=longest > 0)
            self.chunk_start = k
        return np.asarray(self.chunk[k - self.chunk_start], dtype=np.float64)

    def row(self, i: int) -> FloatArray:
        out = np.asarray(self.ptag != self.gtag[i], dtype=np.float64)
        if self.gtag[i] == self.td and len(self.ptd):
            same = (self.pspans == self.gspans[i]).all(axis=1)
            content = 0.0 if self.structure_only else self._content(int(self.gtd[i]))
            out[self.ptd] = np.where(same, content, 1.0)
        return out


# -- the programme --------------------------------------------------------------------------


def _check(deadline: float | None) -> None:
    if deadline is not None and time.perf_counter() > deadline:
        raise TedsBudgetExceeded("the exact tree edit distance ran out of time")


class _Programme:
    """The forest programmes of every open gold node against every predicted subtree (module
    docstring, steps 2 and 3)."""

    def __init__(self, gold: _Post, pred: _Post, structure_only: bool) -> None:
        self.gold, self.pred = gold, pred
        self.buckets = _buckets(pred)
        self.levels = _levels(pred)
        self.renames = _Renames(gold, pred, structure_only)
        inner = [i for i in range(len(gold.nodes)) if gold.children[i]]
        rows = int(gold.depth[inner].max()) + 1 if inner else 1
        cells = rows * sum(b.shape[0] * b.shape[1] for b in self.buckets)
        if cells > _MAX_STATE_ELEMENTS:
            raise TedsBudgetExceeded("the table pair is too large for the exact tree edit distance")
        self.state = [np.zeros((rows, *b.shape)) for b in self.buckets]
        self.best_child = np.full((rows, len(pred.nodes)), np.inf)
        self.snapshots: list[list[FloatArray]] = []
        n = len(pred.nodes)
        self.subtree_ends = np.empty(2 * n, dtype=np.int64)
        self.subtree_ends[0::2], self.subtree_ends[1::2] = pred.lml, np.arange(1, n + 1)
        self.forest = (pred.size - 1).astype(np.float64)

    def _open(self, leaf: int) -> None:
        """Before a gold leaf: start the programmes of the nodes it is the leftmost leaf of,
        and keep the state that those nodes' steps look back to."""
        gold = self.gold
        a = int(gold.parent[leaf])
        opened = False
        while a >= 0 and gold.lml[a] == leaf:
            row = int(gold.depth[a])
            for state in self.state:
                state[row] = 0.0
            self.best_child[row] = np.inf
            opened = True
            a = int(gold.parent[a])
        depth = int(gold.depth[leaf])
        if opened and depth >= 2:
            self.snapshots.append([state[: depth - 1].copy() for state in self.state])

    def _tree_distances(self, i: int) -> FloatArray:
        """TD(gold subtree i, every predicted subtree) (module docstring, step 3)."""
        gold, pred = self.gold, self.pred
        gamma = self.renames.row(i)
        if not gold.children[i]:
            smallest = np.minimum.reduceat(np.append(gamma, 0.0), self.subtree_ends)[0::2]
            return np.asarray(self.forest + smallest, dtype=np.float64)
        row, forest = int(gold.depth[i]), float(gold.size[i] - 1)
        a = np.full(len(pred.nodes), forest)
        for state, bucket in zip(self.state, self.buckets, strict=True):
            a[bucket.qs] = state[row, np.arange(len(bucket.qs)), bucket.ends] + bucket.ends
        td: FloatArray = np.minimum(gamma + a, 1.0 + forest + self.best_child[row])
        levels = self.levels
        for qs, kids, starts in zip(levels.nodes, levels.kids, levels.starts, strict=True):
            inner = np.minimum.reduceat(td[kids] - pred.size[kids], starts)
            td[qs] = np.minimum(td[qs], 1.0 + self.forest[qs] + inner)
        return td

    def _step(self, i: int, td: FloatArray) -> None:
        """Advance the programmes of gold node i's ancestors by node i (step 2)."""
        gold = self.gold
        depth = int(gold.depth[i])
        leaf = not gold.children[i]
        for k, (state, bucket) in enumerate(zip(self.state, self.buckets, strict=True)):
            cur = state[:depth]
            back = cur if leaf else self.snapshots[-1][k][:depth]
            m, w = len(bucket.qs), bucket.width
            diagonal = np.take(back.reshape(depth, -1), bucket.lookup, axis=1).reshape(depth, m, w)
            diagonal += td[bucket.nodes].reshape(m, w) + bucket.shift
            np.minimum(cur[:, :, 1:] + 1.0, diagonal, out=diagonal)
            cur[:, :, 0] += 1.0
            cur[:, :, 1:] = diagonal
            np.minimum.accumulate(cur, axis=2, out=cur)
        parent = int(gold.parent[i])
        self.best_child[depth - 1] = np.minimum(self.best_child[depth - 1], td - gold.size[i])
        if not leaf and (depth == 1 or gold.lml[parent] != gold.lml[i]):
            self.snapshots.pop()

    def run(self, deadline: float | None) -> float:
        gold = self.gold
        for i in range(len(gold.nodes)):
            if not gold.children[i]:
                self._open(i)
            td = self._tree_distances(i)
            if gold.depth[i] == 0:
                return float(td[-1])
            self._step(i, td)
            _check(deadline)
        raise AssertionError("the root comes last in postorder")  # pragma: no cover


def node_distance(
    gold: Node, pred: Node, *, structure_only: bool = False, deadline: float | None = None
) -> float:
    """The tree edit distance of two element trees under the TEDS costs (exact; see the module
    docstring)."""
    if _shape(gold, structure_only) == _shape(pred, structure_only):
        return 0.0
    return _Programme(_postorder(gold), _postorder(pred), structure_only).run(deadline)


def _shape(node: Node, structure_only: bool) -> Node:
    """The node as the costs see it (the content dropped for structure only)."""
    if not structure_only:
        return node
    if node.tag == "td":
        return Node("td", node.colspan, node.rowspan)
    return Node(node.tag, children=tuple(_shape(c, True) for c in node.children))


def normalized_tree(table: Table) -> Node:
    """The normalised tree ``table → tr → td`` of a table (content: its normalised text)."""
    rows = (
        Node("tr", children=tuple(Node("td", c.colspan, c.rowspan, tuple(c.text)) for c in r.cells))
        for r in table.rows
    )
    return Node("table", children=tuple(rows))


def tree_edit_distance(
    gold: Table,
    pred: Table,
    *,
    structure_only: bool = False,
    normalized: bool = False,
    deadline: float | None = None,
) -> float:
    """The TEDS tree edit distance of two tables (exact; see the module docstring): of their
    element trees, or of their normalised trees (``normalized``).

    Raises :class:`TedsBudgetExceeded` once ``time.perf_counter()`` passes ``deadline``, or
    when the programmes' state would exceed ``_MAX_STATE_ELEMENTS`` floats.
    """
    if normalized:
        if _same_normalized(gold, pred, structure_only):
            return 0.0
        a, b = normalized_tree(gold), normalized_tree(pred)
    else:
        a, b = gold.tree, pred.tree
    return node_distance(a, b, structure_only=structure_only, deadline=deadline)


def _same_normalized(gold: Table, pred: Table, structure_only: bool) -> bool:
    if not structure_only:
        return gold == pred
    return _spans(gold) == _spans(pred)


def _spans(table: Table) -> list[list[tuple[int, int]]]:
    return [[(c.colspan, c.rowspan) for c in r.cells] for r in table.rows]


def table_size(table: Table, *, normalized: bool = False) -> int:
    """What TEDS divides by: the elements below ``<table>`` (``normalized``: the nodes of the
    normalised tree, the table included)."""
    return table.n_nodes if normalized else table.n_elements


def teds(
    gold: Table,
    pred: Table | None,
    *,
    structure_only: bool = False,
    normalized: bool = False,
    deadline: float | None = None,
) -> float:
    """TEDS (``structure_only``: TEDS-S) of a predicted table against a gold one; no
    predicted table → 0. ``normalized``: the normalised variant.

    >>> from extract_mlflow.structure.tables import parse_tables
    >>> gold = parse_tables("<table><tr><td>ab</td><td>c</td></tr></table>")[0]
    >>> pred = parse_tables("<table><tr><td>ab</td><td>d</td></tr></table>")[0]
    >>> round(teds(gold, pred), 3), teds(gold, pred, structure_only=True)
    (0.667, 1.0)
    """
    if pred is None:
        return 0.0
    distance = tree_edit_distance(
        gold, pred, structure_only=structure_only, normalized=normalized, deadline=deadline
    )
    size = max(table_size(gold, normalized=normalized), table_size(pred, normalized=normalized))
    return 1.0 - distance / size if size else 1.0


# -- fallback -------------------------------------------------------------------------------


def sequence_edit_distance(costs: FloatArray) -> float:
    """String edit distance with substitution costs ``costs[j, b]`` and unit insertions and
    deletions."""
    k, width = costs.shape
    ar = np.arange(width + 1, dtype=np.float64)
    e = ar.copy()
    for j in range(k):
        x = np.empty_like(e)
        x[0] = j + 1
        np.minimum(e[1:] + 1.0, e[:-1] + costs[j], out=x[1:])
        e = np.minimum.accumulate(x - ar) + ar
    return float(e[-1])


def cell_costs(
    texts_a: Sequence[str],
    spans_a: IntArray,
    texts_b: Sequence[str],
    spans_b: IntArray,
    structure_only: bool = False,
) -> FloatArray:
    """Rename costs between two lists of td cells: 1 where the spans differ, else the
    normalised Levenshtein distance of the contents (0 for structure only)."""
    differ = (spans_a[:, None, :] != spans_b[None, :, :]).any(axis=-1)
    if structure_only or not len(texts_a) or not len(texts_b):
        return np.asarray(differ, dtype=np.float64)
    dist = cdist(list(texts_a), list(texts_b), scorer=Levenshtein.distance, dtype=np.int64)
    len_a = np.array([len(t) for t in texts_a], dtype=np.int64)
    len_b = np.array([len(t) for t in texts_b], dtype=np.int64)
    longest = np.maximum(len_a[:, None], len_b[None, :])
    out = np.zeros(differ.shape, dtype=np.float64)
    np.divide(dist, longest, out=out, where=longest > 0)
    out[differ] = 1.0
    return out


def _rename(a: Node, b: Node, structure_only: bool) -> float:
    if a.tag != b.tag:
        return 1.0
    if a.tag != "td":
        return 0.0
    if (a.colspan, a.rowspan) != (b.colspan, b.rowspan):
        return 1.0
    if structure_only:
        return 0.0
    return float(Levenshtein.normalized_distance(a.tokens, b.tokens))


def _size(node: Node) -> int:
    return 1 + sum(_size(c) for c in node.children)


def _mapping_cost(a: Node, b: Node, structure_only: bool) -> float:
    """The cost of one edit mapping: a to b, then their children in order (aligned by a
    string edit distance when all of them are leaves, else paired by position), the rest
    inserted or deleted."""
    cost = _rename(a, b, structure_only)
    if all(not c.children for c in (*a.children, *b.children)):
        costs = np.array(
            [[_rename(c, d, structure_only) for d in b.children] for c in a.children]
        ).reshape(len(a.children), len(b.children))
        return cost + sequence_edit_distance(costs)
    paired = min(len(a.children), len(b.children))
    for c, d in zip(a.children[:paired], b.children[:paired], strict=True):
        cost += _mapping_cost(c, d, structure_only)
    return cost + sum(_size(c) for c in (*a.children[paired:], *b.children[paired:]))


def _unwrapped(root: Node) -> tuple[Node, int]:
    """The table with its sections deleted (their rows moved up) and how many were deleted."""
    children: list[Node] = []
    sections = 0
    for child in root.children:
        if child.tag in SECTION_TAGS:
            children.extend(child.children)
            sections += 1
        else:
            children.append(child)
    return Node(root.tag, children=tuple(children)), sections


def approximate_teds(
    gold: Table, pred: Table | None, *, structure_only: bool = False, normalized: bool = False
) -> float:
    """A lower bound on TEDS in linear time: the trees mapped top-down, children paired by
    position (the cells of two rows aligned), every other node inserted or deleted, with the
    sections kept or deleted (their rows moved up), whichever costs less. Either is a valid
    edit script, so its cost is at least the tree edit distance."""
    if pred is None:
        return 0.0
    a, b = (normalized_tree(t) if normalized else t.tree for t in (gold, pred))
    (flat_a, cut_a), (flat_b, cut_b) = _unwrapped(a), _unwrapped(b)
    cost = min(
        _mapping_cost(a, b, structure_only),
        cut_a + cut_b + _mapping_cost(flat_a, flat_b, structure_only),
    )
    size = max(table_size(gold, normalized=normalized), table_size(pred, normalized=normalized))
    return 1.0 - cost / size if size else 1.0


def timed_teds(
    gold: Table,
    pred: Table | None,
    *,
    structure_only: bool = False,
    normalized: bool = False,
    budget_s: float | None,
) -> tuple[float, bool]:
    """(score, approximate): exact TEDS within ``budget_s`` seconds, else the lower bound of
    :func:`approximate_teds` (``approximate`` True). ``None`` means no budget."""
    deadline = None if budget_s is None else time.perf_counter() + budget_s
    options = {"structure_only": structure_only, "normalized": normalized}
    try:
        return teds(gold, pred, deadline=deadline, **options), False
    except TedsBudgetExceeded:
        return approximate_teds(gold, pred, **options), True


# -- header association ---------------------------------------------------------------------


def header_paths(table: Table, rows: int) -> list[tuple[str | None, ...]]:
    """Per grid column, the casefolded texts of the cells covering its first ``rows`` rows
    (spans resolved; None where no cell or no row is)."""
    grid = table.grid()
    width = len(grid[0]) if grid else 0
    return [
        tuple(_slot_text(grid[r][c]) if r < len(grid) else None for r in range(rows))
        for c in range(width)
    ]


def _slot_text(cell: Cell | None) -> str | None:
    return None if cell is None else cell.text.casefold()


def header_association(gold: Table, pred: Table | None) -> tuple[int, int]:
    """(gold columns whose header path the prediction has at the same column index, gold
    columns).

    The header rows are the gold table's leading header rows (``<thead>``, all-``<th>`` rows or
    the Markdown header; the first row when none is marked). A column's header path is the
    casefolded text of each header row's cell over that column, spans resolved; the
    prediction's path is read from its first rows, as many as the gold table's header rows.

    >>> from extract_mlflow.structure.tables import parse_tables
    >>> g = parse_tables("| a | b | c |\\n|-|-|-|")[0]
    >>> header_association(g, parse_tables("| A | c | b |\\n|-|-|-|")[0])
    (1, 3)
    """
    depth = gold.header_row_count()
    wanted = header_paths(gold, depth)
    if pred is None:
        return 0, len(wanted)
    found = header_paths(pred, depth)
    matched = sum(1 for c, path in enumerate(wanted) if c < len(found) and found[c] == path)
    return matched, len(wanted)


# -- several tables per document ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TableScore:
    """One slot of a document's tables: a gold/predicted pair, or a table left unpaired
    (scored 0). ``approximate`` marks a score from the fallback of :func:`timed_teds`."""

    gold: int | None
    pred: int | None
    teds: float
    teds_s: float
    header_matched: int = 0
    header_columns: int = 0
    approximate: bool = False
    gold_nodes: int = 0
    pred_nodes: int = 0
    normalized: bool = False

    def to_dict(self) -> dict[str, object]:
        return {
            "gold_table": self.gold,
            "pred_table": self.pred,
            "teds": self.teds,
            "teds_s": self.teds_s,
            "header_matched": self.header_matched,
            "header_columns": self.header_columns,
            "approximate": self.approximate,
        }


def _pair_scores(
    gold: Sequence[Table], pred: Sequence[Table], budget_s: float | None, normalized: bool
) -> tuple[FloatArray, BoolArray]:
    scores = np.zeros((len(gold), len(pred)))
    approx = np.zeros((len(gold), len(pred)), dtype=bool)
    for i, g in enumerate(gold):
        for j, p in enumerate(pred):
            scores[i, j], approx[i, j] = timed_teds(g, p, normalized=normalized, budget_s=budget_s)
    return scores, approx


def _paired(
    g: Table,
    p: Table,
    ij: tuple[int, int],
    budget_s: float | None,
    normalized: bool,
    scored: tuple[float, bool],
) -> TableScore:
    teds_s, approx_s = timed_teds(
        g, p, structure_only=True, normalized=normalized, budget_s=budget_s
    )
    matched, columns = header_association(g, p)
    return TableScore(
        *ij,
        float(scored[0]),
        teds_s,
        matched,
        columns,
        bool(scored[1]) or approx_s,
        table_size(g, normalized=normalized),
        table_size(p, normalized=normalized),
        normalized,
    )


def score_tables(
    gold: Sequence[Table],
    pred: Sequence[Table],
    *,
    budget_s: float | None = 10.0,
    normalized: bool = False,
) -> list[TableScore]:
    """Pair the tables by best match (the assignment maximising total TEDS, scipy's
    ``linear_sum_assignment``) and score every slot: one per pair, one per unpaired gold table
    (0, and none of its columns associated) and one per unpaired predicted table (0). A
    document's TEDS is the mean over its max(#gold, #predicted) slots. TEDS-S is computed on
    the same pairs; ``budget_s`` applies to each exact computation; ``normalized`` scores the
    normalised variant."""
    from scipy.optimize import linear_sum_assignment

    scores, approx = _pair_scores(gold, pred, budget_s, normalized)
    rows, cols = linear_sum_assignment(-scores) if scores.size else ([], [])
    out: list[TableScore] = []
    for i, j in zip(rows, cols, strict=True):
        scored = (float(scores[i, j]), bool(approx[i, j]))
        out.append(_paired(gold[i], pred[j], (int(i), int(j)), budget_s, normalized, scored))
    for i in sorted(set(range(len(gold))) - {int(r) for r in rows}):
        _, columns = header_association(gold[i], None)
        size = table_size(gold[i], normalized=normalized)
        out.append(
            TableScore(i, None, 0.0, 0.0, 0, columns, gold_nodes=size, normalized=normalized)
        )
    for j in sorted(set(range(len(pred))) - {int(c) for c in cols}):
        size = table_size(pred[j], normalized=normalized)
        out.append(TableScore(None, j, 0.0, 0.0, pred_nodes=size, normalized=normalized))
    return out
