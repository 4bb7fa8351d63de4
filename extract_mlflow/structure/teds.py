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
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist

from .tables import SECTION_TAGS, Cell, Node, Table
from .tree_edit import (
    BoolArray,
    FloatArray,
    IntArray,
    TedsBudgetExceeded,
    normalized_tree,
    tree_edit_distance,
)

# -- trees in postorder ---------------------------------------------------------------------


# -- rename costs ---------------------------------------------------------------------------


# -- the programme --------------------------------------------------------------------------


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

    >>> from extract_mlflow.structure.table_text import parse_tables
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

    >>> from extract_mlflow.structure.table_text import parse_tables
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
