"""Reading tables from text: HTML (stdlib ``html.parser``, with the implied ends an HTML parser
recovers) and Markdown pipe tables, into the model of :mod:`extract_mlflow.structure.tables`
(whose docstring gives the rules of both readings). Pure.

A string holding no ``<table>`` but ``<tr>``/``<td>`` elements is read as one bare table; a
string with no HTML table markup is read as Markdown: GitHub pipe tables (a header row, the
delimiter row ``|---|:-:|``, then body rows up to a blank line or a line without a pipe;
``\\|`` is a literal pipe; body rows are cut or padded to the header's width as GitHub renders
them; the header row's cells are header cells).

>>> [t.shape for t in parse_tables("| a | b |\\n|---|---|\\n| 1 | 2 |")]
[(2, 2)]
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from html.parser import HTMLParser

from .tables import SECTION_TAGS, Cell, Node, Row, Table, normalize_text, read_span

VOID_ELEMENTS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
     "source", "track", "wbr"}
)  # fmt: skip


_CELL_TAGS = frozenset({"td", "th"})


_BLOCKS = ("address", "blockquote", "div", "dl", "fieldset", "form", "h1", "h2", "h3", "h4",
           "h5", "h6", "hr", "ol", "p", "pre", "table", "ul")  # fmt: skip


# an open element (the key's values) that a start tag (the key) closes, as HTML parsers do
_CLOSED_BY: dict[str, frozenset[str]] = {
    **{tag: frozenset({"p"}) for tag in _BLOCKS},
    "li": frozenset({"li"}),
    "dt": frozenset({"dt", "dd"}),
    "dd": frozenset({"dt", "dd"}),
    "option": frozenset({"option"}),
}


MAX_COLSPAN = 1000


MAX_ROWSPAN = 65534


_HTML_TABLE = re.compile(r"<\s*(table|tr|td|th)\b", re.IGNORECASE)


_BREAK_TAGS = frozenset({"br", "p", "div", "li"})


_DELIMITER_CELL = re.compile(r"^\s*:?-+:?\s*$")


_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


_BR = re.compile(r"<\s*br\s*/?\s*>", re.IGNORECASE)


@dataclass
class _Builder:
    """The table being read: finished rows, the open row and the open cell."""

    rows: list[Row] = field(default_factory=list)
    row: list[Cell] | None = None
    row_in_head: bool = False
    cell_attrs: tuple[int, int, bool] | None = None
    text: list[str] = field(default_factory=list)

    def open_cell(self, colspan: int, rowspan: int, header: bool, in_head: bool) -> None:
        self.close_cell()
        if self.row is None:
            self.open_row(in_head)
        self.cell_attrs = (colspan, rowspan, header or in_head)

    def close_cell(self) -> None:
        if self.cell_attrs is None or self.row is None:
            return
        colspan, rowspan, header = self.cell_attrs
        self.row.append(Cell(normalize_text("".join(self.text)), colspan, rowspan, header))
        self.cell_attrs, self.text = None, []

    def open_row(self, in_head: bool) -> None:
        self.close_row()
        self.row, self.row_in_head = [], in_head

    def close_row(self) -> None:
        self.close_cell()
        if self.row is not None:
            cells = tuple(self.row)
            header = self.row_in_head or (bool(cells) and all(c.header for c in cells))
            self.rows.append(Row(cells, header))
        self.row = None

    def finish(self) -> Table:
        self.close_row()
        return Table(tuple(self.rows))


@dataclass
class _Element:
    """An element of the table being read: its tag, attributes and content in order."""

    tag: str
    attrs: dict[str, str | None] = field(default_factory=dict)
    items: list[str | _Element] = field(default_factory=list)

    def node(self) -> Node:
        if self.tag != "td":
            children = (i.node() for i in self.items if isinstance(i, _Element))
            return Node(self.tag, children=tuple(children))
        tokens: list[str] = []
        hidden = _tokens(self.items, tokens)
        return Node(
            "td",
            _official_span(self.attrs.get("colspan")),
            _official_span(self.attrs.get("rowspan")),
            tuple(tokens),
            hidden=hidden,
        )


def _tokens(items: list[str | _Element], out: list[str]) -> int:
    """Append the content tokens of ``items`` to ``out``; return how many elements they hold.
    Text right after a ``td`` (in a table nested in the cell) is left out, as the reference
    evaluation leaves it out."""
    count = 0
    after_td = False  # the reference evaluation drops the text that follows a nested td
    for item in items:
        if isinstance(item, str):
            if not after_td:
                out.extend(item)
            continue
        after_td = item.tag == "td"
        out.append(f"<{item.tag}>")
        count += 1 + _tokens(item.items, out)
        if item.tag != "unk":  # the PubTabNet token for an unknown cell closes nothing
            out.append(f"</{item.tag}>")
    return count


def _official_span(value: str | None) -> int:
    """A span as the reference evaluation reads it: the integer written (0 and negatives kept),
    1 when missing or not an integer."""
    try:
        return int((value or "1").strip())
    except ValueError:
        return 1


class _Dom:
    """The element tree of one table, built with an HTML parser's recovery rules (see the
    module docstring)."""

    def __init__(self) -> None:
        self.root = _Element("table")
        self.stack: list[_Element] = [self.root]

    def _scope(self) -> int:
        """Index in the stack of the innermost open table."""
        return max(i for i, e in enumerate(self.stack) if e.tag == "table")

    def _pop_to(self, *groups: frozenset[str] | set[str]) -> None:
        """Close the innermost open element of the first group that has one open within the
        innermost table, with everything opened after it (nothing when none is open)."""
        scope = self._scope()
        for tags in groups:
            for i in range(len(self.stack) - 1, scope, -1):
                if self.stack[i].tag in tags:
                    del self.stack[i:]
                    return

    def start(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("td", "th"):
            self._pop_to(_CELL_TAGS)
        elif tag == "tr":
            self._pop_to({"tr"}, _CELL_TAGS)
        elif tag in SECTION_TAGS:
            self._pop_to(SECTION_TAGS, {"tr"}, _CELL_TAGS)
        elif self.stack[-1].tag in _CLOSED_BY.get(tag, ()):
            self.stack.pop()
        element = _Element(tag, dict(attrs))
        self.stack[-1].items.append(element)
        if tag not in VOID_ELEMENTS:
            self.stack.append(element)

    def end(self, tag: str) -> None:
        if tag == "table":
            scope = self._scope()
            if scope > 0:
                del self.stack[scope:]
            return
        self._pop_to({tag})

    def data(self, text: str) -> None:
        self.stack[-1].items.append(text.replace("\r\n", "\n").replace("\r", "\n"))


class _TableParser(HTMLParser):
    """Collects the top-level tables of an HTML string (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[Table] = []
        self.current: _Builder | None = None
        self.dom = _Dom()
        self.depth = 0  # nesting of <table> inside the current table
        self.in_head = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        opens = self.current is None and tag == "table"
        self._read_start(tag, attrs)
        if self.current is not None and not opens:
            self.dom.start(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if self.current is not None:
            self.dom.end(tag)
        self._read_end(tag)

    def handle_data(self, data: str) -> None:
        if self.current is not None:
            self.dom.data(data)
        self._add_text(data)

    def _read_start(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.depth > 1 or (self.depth == 1 and tag == "table"):
            self._nested_start(tag)
        elif tag == "table":
            self._start_table()
        elif tag in ("thead", "tbody", "tfoot"):
            self.in_head = tag == "thead"
        elif tag == "tr":
            self._ensure_table().open_row(self.in_head)
        elif tag in ("td", "th"):
            values = dict(attrs)
            self._ensure_table().open_cell(
                read_span(values.get("colspan"), MAX_COLSPAN),
                read_span(values.get("rowspan"), MAX_ROWSPAN),
                tag == "th",
                self.in_head,
            )
        elif tag in _BREAK_TAGS:
            self._add_text(" ")

    def _read_end(self, tag: str) -> None:
        if self.depth > 1:
            if tag == "table":
                self.depth -= 1
            self._add_text(" ")
        elif self.current is None:
            return
        elif tag == "table":
            self._end_table()
        elif tag in ("td", "th"):
            self.current.close_cell()
        elif tag == "tr":
            self.current.close_row()
        elif tag == "thead":
            self.in_head = False
        elif tag in _BREAK_TAGS:
            self._add_text(" ")

    def close(self) -> None:
        super().close()
        if self.current is not None:
            self._end_table()

    def _nested_start(self, tag: str) -> None:
        if tag == "table":
            self.depth += 1
        self._add_text(" ")

    def _add_text(self, text: str) -> None:
        if self.current is not None and self.current.cell_attrs is not None:
            self.current.text.append(text)

    def _start_table(self) -> None:
        if self.current is not None:  # an implicit table ends where a real one starts
            self._end_table()
        self.current, self.depth, self.in_head = _Builder(), 1, False
        self.dom = _Dom()

    def _ensure_table(self) -> _Builder:
        if self.current is None:  # rows or cells outside any <table>: one bare table
            self.current, self.depth = _Builder(), 1
            self.dom = _Dom()
        return self.current

    def _end_table(self) -> None:
        if self.current is not None:
            table = self.current.finish()
            self.tables.append(Table(table.rows, self.dom.root.node()))
        self.current, self.depth, self.in_head = None, 0, False


def parse_html_tables(text: str) -> list[Table]:
    """The top-level tables of an HTML string (a bare ``<table>`` or rows alone will do).

    >>> [c.text for r in parse_html_tables("<tr><th>a</th><td>1 &amp;\\n 2</td>")[0].rows
    ...  for c in r.cells]
    ['a', '1 & 2']
    """
    parser = _TableParser()
    parser.feed(text)
    parser.close()
    return parser.tables


def split_pipe_row(line: str) -> list[str] | None:
    """The raw cells of a pipe-table line (``\\|`` kept escaped), or None without a pipe."""
    s = line.strip()
    if not _UNESCAPED_PIPE.search(s):
        return None
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    return _UNESCAPED_PIPE.split(s)


def _markdown_cell(raw: str, header: bool) -> Cell:
    text = html.unescape(_BR.sub(" ", raw.replace("\\|", "|")))
    return Cell(normalize_text(text), header=header)


def _is_delimiter(cells: list[str] | None, width: int) -> bool:
    return (
        cells is not None and len(cells) == width and all(_DELIMITER_CELL.match(c) for c in cells)
    )


def _markdown_table(lines: list[str], start: int) -> tuple[Table | None, int]:
    """The table whose header is ``lines[start]`` (and the index after it), or (None, start+1)."""
    head = split_pipe_row(lines[start])
    if head is None or start + 1 >= len(lines):
        return None, start + 1
    if not _is_delimiter(split_pipe_row(lines[start + 1]), len(head)):
        return None, start + 1
    rows = [Row(tuple(_markdown_cell(c, True) for c in head), header=True)]
    body: list[list[str]] = []
    i = start + 2
    while i < len(lines) and lines[i].strip():
        raw = split_pipe_row(lines[i])
        if raw is None:
            break
        raw = (raw + [""] * len(head))[: len(head)]
        rows.append(Row(tuple(_markdown_cell(c, False) for c in raw)))
        body.append(raw)
        i += 1
    return Table(tuple(rows), _markdown_tree(head, body)), i


def _markdown_tree(head: list[str], body: list[list[str]]) -> Node:
    """The element tree of a Markdown table, as a Markdown renderer writes it in HTML."""

    def row(cells: list[str], tag: str) -> str:
        return "<tr>" + "".join(f"<{tag}>{_markdown_html(c)}</{tag}>" for c in cells) + "</tr>"

    html_text = "<table><thead>" + row(head, "th") + "</thead>"
    if body:
        html_text += "<tbody>" + "".join(row(r, "td") for r in body) + "</tbody>"
    (table,) = parse_html_tables(html_text + "</table>")
    return table.tree


def _markdown_html(raw: str) -> str:
    return raw.replace("\\|", "|").strip()


def parse_markdown_tables(text: str) -> list[Table]:
    """The GitHub pipe tables of a Markdown string (see the module docstring)."""
    lines = text.splitlines()
    tables: list[Table] = []
    i = 0
    while i < len(lines):
        table, i = _markdown_table(lines, i)
        if table is not None:
            tables.append(table)
    return tables


def is_html(text: str) -> bool:
    """Whether the string carries HTML table markup (else it is read as Markdown)."""
    return bool(_HTML_TABLE.search(text))


def parse_table_text(text: str) -> list[Table]:
    """The tables of one string: HTML when it has table markup, else Markdown pipe tables."""
    return parse_html_tables(text) if is_html(text) else parse_markdown_tables(text)


def parse_tables(value: str | Iterable[str] | None) -> list[Table]:
    """The tables of a ``tables`` field: one string or a list of strings, each HTML or
    Markdown and each holding any number of tables (in order). Not a string or list → error.
    """
    if value is None:
        return []
    if isinstance(value, str):
        return parse_table_text(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return [t for v in value for t in parse_table_text(v)]
    raise TypeError("tables must be a string or a list of strings (HTML or Markdown)")
