"""TEDS and TEDS-S (PubTabNet), computed exactly and fast, and header association. Pure.

Definition (Zhong et al. 2020, PubTabNet). A table is the tree ``table → tr → td`` of
:mod:`extract_mlflow.tables`. Inserting or deleting a node costs 1. Renaming costs 1 when the
tags, colspans or rowspans differ; between two td with the same spans it costs the normalised
Levenshtein distance of their contents (TEDS-S: 0). Content is tokenised into characters
(Unicode code points of the normalised text), and the normalised distance is
distance / length of the longer content (two empty contents: 0). Then

    TEDS(G, P) = 1 − TED(G, P) / max(|G|, |P|)        |T| = nodes of T

A prediction without a table scores 0; identical tables score 1.

Why this is exact (the general ordered tree edit distance, as apted computes it):

1. *The roots map to each other.* If neither root is in a mapping, adding the pair keeps it
   valid (each root is an ancestor of every node on its side) and saves 2. If the gold root is
   mapped to a non-root y, every other mapped prediction node lies under y, so the prediction
   root is unmapped; mapping the two roots instead keeps the mapping valid and changes the cost
   by rename(table, table) − rename(table, y) + insert(y) − insert(table) = −rename ≤ 0.
   Symmetrically for the prediction root. So TED = FD(rows of G, rows of P) + 0.
2. *Forest recurrence* (Zhang & Shasha 1989). Number each forest's nodes in postorder; F[1..p]
   is the forest of the first p nodes and l(p) the leftmost leaf under p. For any costs,
   FD(p, q) = min(FD(p−1, q) + 1, FD(p, q−1) + 1, FD(l(p)−1, l(q)−1) + TD(p, q)),
   where TD is the distance between the subtrees rooted at p and q.
3. *Subtree distances here have closed forms* (step 1 applied to the subtrees; a rename across
   tags costs 1, one insertion): cell–cell δ(c, d) ≤ 1 < 2; cell c vs row s with cells
   d_1..d_l: l + min(1, min_k δ(c, d_k)) (rename c to s, or map c to one d_k, or delete c);
   row r with cells c_1..c_k vs cell d: k + min(1, min_j δ(c_j, d)); row vs row: the string
   edit distance of the two cell sequences (substitution δ, insertion/deletion 1).

So the programme of step 2 with the values of step 3 *is* the general tree edit distance on
these trees. Aligning rows and then cells ("nested DP") is not: the tree edit distance may delete
a ``tr`` and move its cells into a neighbouring row, or rename a ``tr`` into a ``td``. Gold rows
``[a] [] [b]`` against one predicted row ``[a X b]`` cost 4 (delete two tr, insert one, rename
the empty tr into X), while the best row-then-cell alignment costs 5 (see the tests).

Speed: the programme has (|G|)·(|P|) entries, filled one gold node at a time as a numpy vector
over the prediction's nodes: with unit insertions the running term min(FD(p, q−1) + 1, ·) is a
prefix minimum, FD(p, q) = q + min_{q' ≤ q}(B(q') − q'). Subtree distances come in blocks of
gold rows: one rapidfuzz ``cdist`` for the cell distances and every row-vs-row edit distance at
once (a DP over the gold row's cells, vectorised across all predicted rows). Identical tables
short-cut to 1. A deadline (``time.perf_counter()`` value) is checked after every gold row;
:func:`timed_teds` falls back to :func:`approximate_teds` (a lower bound) when it passes.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cdist

from .errors import ExtractMlflowError
from .tables import Cell, Row, Table

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

_BLOCK_ELEMENTS = 2_000_000  # floats per block of gold rows (16 MB)
_MAX_ROW_ELEMENTS = 25_000_000  # floats for a single gold row (200 MB): beyond, no exact TEDS


class TedsBudgetExceeded(ExtractMlflowError):
    """The exact TEDS of one table pair did not finish within its time budget."""


# -- flattening -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Flat:
    """A table laid out for the programme: its cells in order and every node's place in the
    postorder of the row forest (0-based: position q − 1)."""

    texts: list[str]
    lengths: IntArray  # characters per cell
    spans: IntArray  # (cells, 2): colspan, rowspan
    row_len: IntArray  # cells per row
    row_start: IntArray  # first cell of each row
    cell_post: IntArray  # postorder position of each cell
    row_post: IntArray  # postorder position of each row
    lml_before: IntArray  # l(q) − 1 for q = 1..Q (an index into a programme row)
    pad: IntArray  # (rows, longest row): cell index of each row's b-th cell (clipped)
    pad_valid: BoolArray

    @property
    def size(self) -> int:
        """Q: nodes of the row forest (the table root excluded)."""
        return len(self.lml_before)


def _flatten(table: Table) -> _Flat:
    cells = [c for r in table.rows for c in r.cells]
    row_len = np.array([len(r.cells) for r in table.rows], dtype=np.int64)
    row_start = np.cumsum(row_len) - row_len
    cell_post, row_post, lml_before = [], [], []
    q = 0
    for length in row_len.tolist():
        first = q
        for _ in range(length):
            cell_post.append(q)
            lml_before.append(q)
            q += 1
        row_post.append(q)
        lml_before.append(first)
        q += 1
    longest = int(row_len.max()) if len(row_len) else 0
    offsets = np.arange(longest, dtype=np.int64)
    pad_valid = offsets[None, :] < row_len[:, None]
    pad = np.minimum(row_start[:, None] + offsets[None, :], max(len(cells) - 1, 0))
    return _Flat(
        texts=[c.text for c in cells],
        lengths=np.array([len(c.text) for c in cells], dtype=np.int64),
        spans=np.array([(c.colspan, c.rowspan) for c in cells], dtype=np.int64).reshape(-1, 2),
        row_len=row_len,
        row_start=row_start,
        cell_post=np.array(cell_post, dtype=np.int64),
        row_post=np.array(row_post, dtype=np.int64),
        lml_before=np.array(lml_before, dtype=np.int64),
        pad=pad.astype(np.int64),
        pad_valid=pad_valid,
    )


# -- subtree distances ----------------------------------------------------------------------


def cell_costs(
    texts_a: Sequence[str],
    spans_a: IntArray,
    texts_b: Sequence[str],
    spans_b: IntArray,
    structure_only: bool = False,
) -> FloatArray:
    """Rename costs between two lists of cells: 1 where the spans differ, else the normalised
    Levenshtein distance of the texts (0 for structure only)."""
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


def _masked_min(values: FloatArray, valid: BoolArray, axis: int) -> FloatArray:
    """Minimum along ``axis`` over the valid entries (inf where there are none)."""
    if values.shape[axis] == 0:
        shape = list(values.shape)
        del shape[axis]
        return np.full(shape, np.inf)
    return np.asarray(np.where(valid, values, np.inf).min(axis=axis), dtype=np.float64)


def _check(deadline: float | None) -> None:
    if deadline is not None and time.perf_counter() > deadline:
        raise TedsBudgetExceeded("the exact tree edit distance ran out of time")


def _row_pass(
    g: FloatArray, k: IntArray, b: _Flat, deadline: float | None
) -> tuple[FloatArray, FloatArray]:
    """From the cell costs ``g[i, j, d]`` (gold row i's cell j vs prediction cell d): every
    gold cell's distance to every predicted row (block rows × longest × predicted rows), and
    every gold row's cell-sequence edit distance to every predicted row (block rows ×
    predicted rows). One gold cell position at a time, vectorised over the rows of both."""
    c, depth, _ = g.shape
    n, width = b.pad.shape
    ar = np.arange(width + 1, dtype=np.float64)
    e = np.broadcast_to(ar, (c, n, width + 1)).copy()
    cell_row = np.empty((c, depth, n))
    out = np.broadcast_to(b.row_len.astype(np.float64), (c, n)).copy()
    cols = np.arange(n)
    for j in range(depth):
        h = g[:, j][:, b.pad]  # (c, n, width): gold cell j vs predicted row s's cell t
        cell_row[:, j] = b.row_len + np.minimum(1.0, _masked_min(h, b.pad_valid, axis=2))
        x = np.empty_like(e)
        x[:, :, 0] = j + 1
        np.minimum(e[:, :, 1:] + 1.0, e[:, :, :-1] + h, out=x[:, :, 1:])
        x -= ar
        np.minimum.accumulate(x, axis=2, out=x)
        e = x + ar
        done = np.flatnonzero(k == j + 1)
        if len(done):
            out[done] = e[done][:, cols, b.row_len]
        _check(deadline)
    return cell_row, out


@dataclass(frozen=True, slots=True)
class _Block:
    """Subtree distances of a block of gold rows against every prediction node."""

    cells: FloatArray  # (rows, longest, Q): TD(gold cell j of row i, each prediction node)
    rows: FloatArray  # (rows, Q): TD(gold row i, each prediction node)


def _block(
    a: _Flat, lo: int, hi: int, b: _Flat, structure_only: bool, deadline: float | None
) -> _Block:
    """Subtree distances for gold rows lo..hi−1 (see the module docstring, step 3)."""
    k = a.row_len[lo:hi]
    c0 = int(a.row_start[lo]) if hi > lo and len(a.texts) else 0
    c1 = c0 + int(k.sum())
    d = cell_costs(a.texts[c0:c1], a.spans[c0:c1], b.texts, b.spans, structure_only)
    depth = int(k.max()) if len(k) else 0
    offsets = np.arange(depth)
    valid1 = offsets[None, :] < k[:, None]
    starts = a.row_start[lo:hi] - c0
    pad1 = np.minimum(starts[:, None] + offsets[None, :], max(c1 - c0 - 1, 0))
    g = d[pad1] if c1 > c0 else np.zeros((hi - lo, depth, len(b.texts)))
    cell_row, row_row = _row_pass(g, k, b, deadline)
    cells = np.empty((hi - lo, depth, b.size))
    cells[:, :, b.cell_post] = g
    cells[:, :, b.row_post] = cell_row
    rows = np.empty((hi - lo, b.size))
    rows[:, b.cell_post] = k[:, None] + np.minimum(1.0, _masked_min(g, valid1[:, :, None], axis=1))
    rows[:, b.row_post] = row_row
    return _Block(cells, rows)


# -- the programme --------------------------------------------------------------------------


def _advance(
    prev: FloatArray, lookup: FloatArray, td: FloatArray, b: _Flat, ar: FloatArray
) -> FloatArray:
    """FD(p, ·) from FD(p−1, ·), FD(l(p)−1, ·) and TD(p, ·) (module docstring, step 2);
    ``ar`` is ``arange(Q + 1)``."""
    x = np.empty_like(prev)
    x[0] = prev[0] + 1.0
    np.minimum(prev[1:] + 1.0, lookup[b.lml_before] + td, out=x[1:])
    x -= ar
    np.minimum.accumulate(x, out=x)
    x += ar
    return x


def _block_size(a: _Flat, b: _Flat) -> int:
    """Gold rows per block, so that a block's arrays hold about ``_BLOCK_ELEMENTS`` floats;
    a pair whose single rows exceed ``_MAX_ROW_ELEMENTS`` is refused (it would not fit)."""
    depth = int(a.row_len.max()) if len(a.row_len) else 0
    width = int(b.row_len.max()) if len(b.row_len) else 0
    per_row = (depth + 1) * (b.size + len(b.texts)) + 4 * len(b.row_len) * (width + 1)
    if per_row > _MAX_ROW_ELEMENTS:
        raise TedsBudgetExceeded("the table pair is too large for the exact tree edit distance")
    return max(1, _BLOCK_ELEMENTS // max(per_row, 1))


def tree_edit_distance(
    gold: Table, pred: Table, *, structure_only: bool = False, deadline: float | None = None
) -> float:
    """The PubTabNet tree edit distance of two tables (exact; see the module docstring).

    Raises :class:`TedsBudgetExceeded` once ``time.perf_counter()`` passes ``deadline``, or
    when one gold row's arrays would exceed ``_MAX_ROW_ELEMENTS`` floats (tables of about a
    million cells).
    """
    if _same(gold, pred, structure_only):
        return 0.0
    a, b = _flatten(gold), _flatten(pred)
    ar = np.arange(b.size + 1, dtype=np.float64)
    fd = ar.copy()  # FD(0, q) = q insertions
    step = _block_size(a, b)
    for lo in range(0, len(a.row_len), step):
        hi = min(lo + step, len(a.row_len))
        block = _block(a, lo, hi, b, structure_only, deadline)
        for i in range(hi - lo):
            base = fd
            for j in range(int(a.row_len[lo + i])):
                fd = _advance(fd, fd, block.cells[i, j], b, ar)
            fd = _advance(fd, base, block.rows[i], b, ar)
            _check(deadline)
    return float(fd[-1])


def _same(gold: Table, pred: Table, structure_only: bool) -> bool:
    if not structure_only:
        return gold == pred
    return _spans(gold) == _spans(pred)


def _spans(table: Table) -> list[list[tuple[int, int]]]:
    return [[(c.colspan, c.rowspan) for c in r.cells] for r in table.rows]


def teds(
    gold: Table,
    pred: Table | None,
    *,
    structure_only: bool = False,
    deadline: float | None = None,
) -> float:
    """TEDS (``structure_only``: TEDS-S) of a predicted table against a gold one; no
    predicted table → 0.

    >>> from extract_mlflow.tables import parse_tables
    >>> gold = parse_tables("<table><tr><td>ab</td><td>c</td></tr></table>")[0]
    >>> pred = parse_tables("| ab | d |\\n|--|--|")[0]
    >>> round(teds(gold, pred), 3), teds(gold, pred, structure_only=True)
    (0.75, 1.0)
    """
    if pred is None:
        return 0.0
    distance = tree_edit_distance(gold, pred, structure_only=structure_only, deadline=deadline)
    return 1.0 - distance / max(gold.n_nodes, pred.n_nodes)


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


def _row_costs(a: Row, b: Row, structure_only: bool) -> FloatArray:
    def spans(row: Row) -> IntArray:
        return np.array([(c.colspan, c.rowspan) for c in row.cells], dtype=np.int64).reshape(-1, 2)

    return cell_costs(
        [c.text for c in a.cells],
        spans(a),
        [c.text for c in b.cells],
        spans(b),
        structure_only,
    )


def approximate_teds(gold: Table, pred: Table | None, *, structure_only: bool = False) -> float:
    """A lower bound on TEDS in linear time: rows are paired by position and their cells
    aligned, every other row and cell inserted or deleted. That is one valid edit mapping, so
    its cost is at least the tree edit distance."""
    if pred is None:
        return 0.0
    paired = min(len(gold.rows), len(pred.rows))
    cost = sum(
        sequence_edit_distance(_row_costs(g, p, structure_only))
        for g, p in zip(gold.rows[:paired], pred.rows[:paired], strict=True)
    )
    cost += sum(1 + len(r.cells) for r in (*gold.rows[paired:], *pred.rows[paired:]))
    return 1.0 - cost / max(gold.n_nodes, pred.n_nodes)


def timed_teds(
    gold: Table, pred: Table | None, *, structure_only: bool = False, budget_s: float | None
) -> tuple[float, bool]:
    """(score, approximate): exact TEDS within ``budget_s`` seconds, else the lower bound of
    :func:`approximate_teds` (``approximate`` True). ``None`` means no budget."""
    deadline = None if budget_s is None else time.perf_counter() + budget_s
    try:
        return teds(gold, pred, structure_only=structure_only, deadline=deadline), False
    except TedsBudgetExceeded:
        return approximate_teds(gold, pred, structure_only=structure_only), True


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

    >>> from extract_mlflow.tables import parse_tables
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
    gold: Sequence[Table], pred: Sequence[Table], budget_s: float | None
) -> tuple[FloatArray, BoolArray]:
    scores = np.zeros((len(gold), len(pred)))
    approx = np.zeros((len(gold), len(pred)), dtype=bool)
    for i, g in enumerate(gold):
        for j, p in enumerate(pred):
            scores[i, j], approx[i, j] = timed_teds(g, p, budget_s=budget_s)
    return scores, approx


def _paired(
    g: Table, p: Table, i: int, j: int, budget_s: float | None, score: float, approx: bool
) -> TableScore:
    teds_s, approx_s = timed_teds(g, p, structure_only=True, budget_s=budget_s)
    matched, columns = header_association(g, p)
    return TableScore(
        i, j, float(score), teds_s, matched, columns, bool(approx) or approx_s, g.n_nodes, p.n_nodes
    )


def score_tables(
    gold: Sequence[Table], pred: Sequence[Table], *, budget_s: float | None = 10.0
) -> list[TableScore]:
    """Pair the tables by best match (the assignment maximising total TEDS, scipy's
    ``linear_sum_assignment``) and score every slot: one per pair, one per unpaired gold table
    (0, and none of its columns associated) and one per unpaired predicted table (0). A
    document's TEDS is the mean over its max(#gold, #predicted) slots. TEDS-S is computed on
    the same pairs; ``budget_s`` applies to each exact computation."""
    from scipy.optimize import linear_sum_assignment

    scores, approx = _pair_scores(gold, pred, budget_s)
    rows, cols = linear_sum_assignment(-scores) if scores.size else ([], [])
    out: list[TableScore] = []
    for i, j in zip(rows, cols, strict=True):
        out.append(_paired(gold[i], pred[j], int(i), int(j), budget_s, scores[i, j], approx[i, j]))
    for i in sorted(set(range(len(gold))) - {int(r) for r in rows}):
        _, columns = header_association(gold[i], None)
        out.append(TableScore(i, None, 0.0, 0.0, 0, columns, gold_nodes=gold[i].n_nodes))
    for j in sorted(set(range(len(pred))) - {int(c) for c in cols}):
        out.append(TableScore(None, j, 0.0, 0.0, pred_nodes=pred[j].n_nodes))
    return out
