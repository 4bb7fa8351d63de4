"""Tables as trees: HTML (stdlib ``html.parser``) and Markdown pipe tables. Pure.

Each table is read twice over, in one parse:

*The element tree* (:attr:`Table.tree`, what the default TEDS scores; the tree the public
PubTabNet evaluation builds with lxml): every element below ``<table>`` is a :class:`Node` with
its tag, in document order, comments removed and ``\\r``/``\\r\\n`` read as ``\\n``:

- ``thead``/``tbody``/``tfoot``, ``tr``, ``th``, ``caption`` and any other element are nodes
  whose children are their child elements (the text of a ``th`` is not read; an element inside a
  ``th`` is a node);
- a ``td`` is a leaf with its ``colspan``/``rowspan`` (an integer as written, else 1) and its
  content tokens: the characters of its text, white space kept, with every element inside it as
  an opening and a closing token (``<b>``, ``</b>``; entities decoded); those elements are no
  nodes of the tree but are counted in :attr:`Table.n_elements`;
- implied ends as an HTML parser recovers them: a ``td``/``th`` closes an open cell, a ``tr`` an
  open row, a section an open section; a block (``div``, ``p``, ``ul``, …) closes an open
  ``p``, an ``li`` an open ``li`` (as ``dt``/``dd``, ``option``); end tags without an open
  element are ignored; a table nested in a cell is part of that cell;
- rows or cells outside any ``<table>`` make one table, as if a ``<table>`` held them (the
  official evaluation finds no table in such a string and scores it 0).

A Markdown table maps as a Markdown renderer writes it in HTML: the header row is a ``thead``
row of ``th`` cells, the body rows a ``tbody`` (none without body rows) of ``td`` cells whose
content is the cell's text, trimmed, ``\\|`` read as ``|``, entities decoded and inline HTML
(``<br>``, ``<b>``) read as elements (Markdown emphasis such as ``**x**`` is not rendered: its
characters are content).

*The normalised tree* (:attr:`Table.rows`, for ``[structure] teds = "normalized"``, header
association and the grid) ``table → tr → td``:

- rows are the ``<tr>`` elements of the table in document order; ``<thead>``, ``<tbody>`` and
  ``<tfoot>`` are unwrapped; ``<caption>``, ``<colgroup>`` and anything outside a cell are
  dropped; cells met outside any row are gathered into an implicit row;
- a cell is ``<td>`` or ``<th>`` (``th`` becomes ``td``; whether it was a header cell is kept
  aside in :attr:`Cell.header`, for header association, and is no part of the tree label);
- ``colspan``/``rowspan`` are read as integers (missing, unreadable or below 1 → 1; capped at
  1000 and 65534 as HTML does);
- a cell's content is its text with inline markup removed, entities decoded, ``<br>``, ``<p>``,
  ``<div>`` and ``<li>`` read as white space, and white space collapsed and trimmed
  (:func:`normalize_text`). A table nested in a cell is flattened into that cell's text.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

SECTION_TAGS = frozenset({"thead", "tbody", "tfoot"})


def normalize_text(text: str) -> str:
    """White space collapsed to single spaces and trimmed (Unicode spaces such as the
    no-break space of ``&nbsp;`` included).

    >>> normalize_text("  a\\u00a0 b\\n")
    'a b'
    """
    return " ".join(text.split())


def read_span(value: str | None, cap: int) -> int:
    """An HTML ``colspan``/``rowspan`` value: an integer in [1, cap]; anything else is 1."""
    try:
        span = int((value or "").strip())
    except ValueError:
        return 1
    return min(max(span, 1), cap)


@dataclass(frozen=True, slots=True)
class Node:
    """One element of a table's element tree (see the module docstring). ``colspan``,
    ``rowspan`` and ``tokens`` are read for ``td`` only; ``hidden`` counts the elements inside a
    ``td`` (content tokens, not nodes)."""

    tag: str
    colspan: int = 1
    rowspan: int = 1
    tokens: tuple[str, ...] = ()
    children: tuple[Node, ...] = ()
    hidden: int = 0

    def elements(self) -> int:
        """Elements below this one (its descendants, with those inside a ``td``)."""
        return sum(1 + c.hidden + c.elements() for c in self.children)


@dataclass(frozen=True, slots=True)
class Cell:
    """One ``td`` node: its normalised text and spans; ``header`` is not part of the label."""

    text: str = ""
    colspan: int = 1
    rowspan: int = 1
    header: bool = field(default=False, compare=False)


@dataclass(frozen=True, slots=True)
class Row:
    """One ``tr`` node; ``header`` when it sat in ``<thead>`` or holds only header cells."""

    cells: tuple[Cell, ...] = ()
    header: bool = field(default=False, compare=False)


@dataclass(frozen=True, slots=True)
class Table:
    """One table: its normalised tree ``table → tr → td`` (``rows``) and its element tree
    (``tree``). Equality compares the normalised tree only."""

    rows: tuple[Row, ...] = ()
    tree: Node = field(default=Node("table"), compare=False)

    @property
    def n_nodes(self) -> int:
        """Nodes of the normalised tree: the table, its rows and their cells."""
        return 1 + len(self.rows) + sum(len(r.cells) for r in self.rows)

    @property
    def n_elements(self) -> int:
        """Elements below ``<table>`` in the element tree (inside cells too): the size that
        the default TEDS divides by."""
        return self.tree.elements()

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns) of the resolved grid."""
        grid = self.grid()
        return len(grid), len(grid[0]) if grid else 0

    def grid(self) -> list[list[Cell | None]]:
        """The cell covering each slot, spans resolved as HTML lays a table out (a rowspan is
        cut at the last row); ``None`` where no cell reaches."""
        return resolve_grid(self.rows)

    def header_row_count(self) -> int:
        """How many leading rows are header rows (at least 1 when the table has rows)."""
        count = 0
        for row in self.rows:
            if not row.header:
                break
            count += 1
        return max(count, 1) if self.rows else 0

    def to_html(self) -> str:
        """A canonical HTML rendering (``<th>`` for header cells)."""
        return "<table>" + "".join(_row_html(r) for r in self.rows) + "</table>"


def _row_html(row: Row) -> str:
    cells = []
    for c in row.cells:
        tag = "th" if c.header else "td"
        attrs = (f' colspan="{c.colspan}"' if c.colspan != 1 else "") + (
            f' rowspan="{c.rowspan}"' if c.rowspan != 1 else ""
        )
        cells.append(f"<{tag}{attrs}>{html.escape(c.text, quote=False)}</{tag}>")
    return "<tr>" + "".join(cells) + "</tr>"


def resolve_grid(rows: tuple[Row, ...]) -> list[list[Cell | None]]:
    """Lay the rows out on a grid: each cell takes the first free slot of its row and covers
    ``rowspan × colspan`` slots (rows past the last are cut)."""
    taken: dict[tuple[int, int], Cell] = {}
    width = 0
    for r, row in enumerate(rows):
        col = 0
        for cell in row.cells:
            while (r, col) in taken:
                col += 1
            for dr in range(min(cell.rowspan, len(rows) - r)):
                for dc in range(cell.colspan):
                    taken[(r + dr, col + dc)] = cell
            col += cell.colspan
            width = max(width, col)
    return [[taken.get((r, c)) for c in range(width)] for r in range(len(rows))]


# -- HTML -----------------------------------------------------------------------------------


# -- Markdown -------------------------------------------------------------------------------
