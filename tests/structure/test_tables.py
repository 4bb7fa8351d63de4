"""tables: HTML and Markdown tables parsed into the normalised table → tr → td tree."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import teds_reference as ref

from extract_mlflow.structure.table_text import (
    parse_html_tables,
    parse_markdown_tables,
    parse_tables,
    split_pipe_row,
)
from extract_mlflow.structure.tables import Cell, Node, Row, Table, read_span


def texts(table: Table) -> list[list[str]]:
    return [[c.text for c in r.cells] for r in table.rows]


def spans(table: Table) -> list[list[tuple[int, int]]]:
    return [[(c.colspan, c.rowspan) for c in r.cells] for r in table.rows]


# -- HTML -----------------------------------------------------------------------------------


def test_thead_and_tbody_are_unwrapped_and_th_becomes_a_header_td() -> None:
    html = (
        "<table><thead><tr><th>Name</th><th>Qty</th></tr></thead>"
        "<tbody><tr><td>a</td><td>1</td></tr></tbody><tfoot><tr><td>x</td></tr></tfoot></table>"
    )
    (table,) = parse_html_tables(html)
    assert texts(table) == [["Name", "Qty"], ["a", "1"], ["x"]]
    assert [r.header for r in table.rows] == [True, False, False]
    assert table.rows[0].cells[0].header and not table.rows[1].cells[0].header
    rows = (Row((Cell("Name"), Cell("Qty"))), Row((Cell("a"), Cell("1"))), Row((Cell("x"),)))
    assert table == Table(rows)


def test_entities_whitespace_and_inline_markup_are_normalised() -> None:
    html = (
        "<table><tr><td>  a &amp;\n b&nbsp;&nbsp;c </td><td><b>x</b>y</td>"
        "<td>1<br>2<br/>3</td><td><p>p</p><div>q</div></td><td>&#233;&eacute;&lt;</td></tr></table>"
    )
    assert texts(parse_html_tables(html)[0]) == [["a & b c", "xy", "1 2 3", "p q", "éé<"]]


def test_spans_are_read_as_integers_with_html_defaults() -> None:
    html = (
        '<table><tr><td colspan="2" rowspan=" 3 ">a</td><td colspan="x">b</td>'
        '<td colspan="0">c</td><td colspan="5000" rowspan="-1">d</td></tr></table>'
    )
    assert spans(parse_html_tables(html)[0]) == [[(2, 3), (1, 1), (1, 1), (1000, 1)]]
    assert read_span(None, 10) == 1 and read_span("12", 10) == 10


def test_a_bare_table_rows_alone_and_several_tables() -> None:
    assert texts(parse_tables("<TABLE><TR><TD>1</TD></TR></TABLE>")[0]) == [["1"]]
    assert texts(parse_tables("<tr><td>1</td></tr><tr><td>2</td>")[0]) == [["1"], ["2"]]
    both = parse_tables("<p>x</p><table><tr><td>1</td></tr></table>text<table></table>")
    assert [t.n_nodes for t in both] == [3, 1]


def test_cells_outside_a_row_form_an_implicit_row() -> None:
    (table,) = parse_tables("<table><td>1</td><td>2</td><tr><td>3</td></tr></table>")
    assert texts(table) == [["1", "2"], ["3"]]


def test_unclosed_cells_and_rows_close_implicitly() -> None:
    (table,) = parse_tables("<table><tr><td>1<td>2<tr><td>3</table>")
    assert texts(table) == [["1", "2"], ["3"]]


def test_a_nested_table_is_flattened_into_its_cell_and_captions_are_dropped() -> None:
    html = (
        "<table><caption>Cap</caption><tr><td>a<table><tr><td>x</td><td>y</td></tr></table>b"
        "</td><td>c</td></tr></table>"
    )
    (table,) = parse_tables(html)
    assert texts(table) == [["a x y b", "c"]]


def test_empty_rows_are_rows() -> None:
    (table,) = parse_tables("<table><tr></tr><tr><td></td></tr></table>")
    assert table.n_nodes == 4 and texts(table) == [[], [""]]


# -- Markdown -------------------------------------------------------------------------------


def test_markdown_pipe_table() -> None:
    md = "Intro\n\n| Name | Qty |\n|:-----|----:|\n| a \\| b | 1 |\n| c | 2 &amp; 3<br>4 |\n\nEnd"
    (table,) = parse_markdown_tables(md)
    assert texts(table) == [["Name", "Qty"], ["a | b", "1"], ["c", "2 & 3 4"]]
    assert [r.header for r in table.rows] == [True, False, False]


def test_markdown_rows_are_cut_or_padded_to_the_header_width() -> None:
    (table,) = parse_tables("a | b\n--|--\n| 1 |\n1 | 2 | 3")
    assert texts(table) == [["a", "b"], ["1", ""], ["1", "2"]]


def test_markdown_needs_a_delimiter_row_of_the_header_width() -> None:
    assert parse_tables("| a | b |\n| 1 | 2 |") == []
    assert parse_tables("| a | b |\n|---|\n| 1 | 2 |") == []
    assert parse_tables("no table | here") == []


def test_several_markdown_tables_and_the_end_of_a_table() -> None:
    md = "|a|\n|-|\n|1|\nplain line\n|b|\n|:-:|\n|2|\n\n|3|"
    tables = parse_tables(md)
    assert [texts(t) for t in tables] == [[["a"], ["1"]], [["b"], ["2"]]]


def test_split_pipe_row() -> None:
    assert split_pipe_row("| a | b \\| c |") == [" a ", " b \\| c "]
    assert split_pipe_row("a|b") == ["a", "b"]
    assert split_pipe_row("no pipe") is None


def test_markdown_and_html_give_the_same_tree() -> None:
    md = parse_tables("| h1 | h2 |\n|---|---|\n| 1 | x y |")[0]
    html = parse_tables("<table><tr><th>h1</th><th>h2</th></tr><tr><td>1</td><td>x  y</td></tr>")
    assert md == html[0]
    assert [r.header for r in md.rows] == [r.header for r in html[0].rows]


def test_a_list_of_strings_mixes_formats_and_other_values_fail() -> None:
    tables = parse_tables(["|a|\n|-|", "<table><tr><td>b</td></tr></table>"])
    assert [texts(t) for t in tables] == [[["a"]], [["b"]]]
    assert parse_tables(None) == [] and parse_tables([]) == [] and parse_tables("") == []
    with pytest.raises(TypeError):
        parse_tables(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        parse_tables([{"html": "<table>"}])  # type: ignore[list-item]


# -- grid -----------------------------------------------------------------------------------


def test_the_grid_resolves_spans_as_html_lays_tables_out() -> None:
    html = (
        "<table><tr><td rowspan=2>A</td><td colspan=2>B</td></tr>"
        "<tr><td>c</td><td rowspan=5>d</td></tr><tr><td>e</td></tr></table>"
    )
    table = parse_tables(html)[0]
    grid = [[c.text if c else None for c in row] for row in table.grid()]
    assert grid == [["A", "B", "B"], ["A", "c", "d"], ["e", None, "d"]]
    assert table.shape == (3, 3)


def test_header_row_count() -> None:
    two = parse_tables("<table><thead><tr><td>a</td></tr><tr><th>b</th></tr></thead><tr><td>1")
    assert two[0].header_row_count() == 2
    assert parse_tables("<table><tr><td>a</td></tr></table>")[0].header_row_count() == 1
    assert Table().header_row_count() == 0


# -- against lxml (the reference's parser) and round trips --------------------------------


def as_tuples(node: ref.Node) -> tuple[object, ...]:
    return (
        node.tag,
        node.colspan,
        node.rowspan,
        node.content,
        tuple(map(as_tuples, node.children)),
    )


@pytest.mark.parametrize("seed", range(30))
def test_our_parser_and_lxml_read_generated_tables_alike(seed: int) -> None:
    rng = random.Random(seed)
    gold, pred = ref.random_pair(rng, rng.randint(1, 6), rng.randint(1, 5))
    for html in (gold, pred):
        ours = ref.tree_from_html(parse_tables(html)[0].to_html())
        theirs = ref.tree_from_html(html)
        assert ours is not None and theirs is not None
        assert as_tuples(ours) == as_tuples(theirs)


cell_text = st.text(alphabet="ab <>&|\\é", max_size=6).map(lambda s: " ".join(s.split()))
cells = st.builds(Cell, cell_text, st.integers(1, 3), st.integers(1, 3), st.booleans())
tables = st.lists(st.lists(cells, max_size=4).map(lambda c: Row(tuple(c))), max_size=4).map(
    lambda rows: Table(tuple(rows))
)


@settings(max_examples=80, deadline=None)
@given(tables)
def test_to_html_round_trips(table: Table) -> None:
    assert parse_tables(table.to_html()) == [table]


# -- the element tree (the official TEDS tree) ----------------------------------------------


def official_tuples(node: ref.OfficialNode) -> tuple[object, ...]:
    spans = (node.colspan, node.rowspan) if node.tag == "td" else ()
    return (node.tag, spans, tuple(node.content), tuple(map(official_tuples, node.children)))


def tree_tuples(node: Node) -> tuple[object, ...]:
    spans = (node.colspan, node.rowspan) if node.tag == "td" else ()
    return (node.tag, spans, node.tokens, tuple(map(tree_tuples, node.children)))


def lxml_tree(html: str) -> tuple[object, ...]:
    element = ref.official_table(html)
    assert element is not None
    return official_tuples(ref._official(element, False))


@pytest.mark.parametrize("seed", range(40))
def test_the_element_tree_is_the_one_lxml_reads(seed: int) -> None:
    rng = random.Random(seed)
    for html in ref.random_official_pair(rng, rng.randint(1, 6), rng.randint(1, 5)):
        (table,) = parse_tables(html)
        assert tree_tuples(table.tree) == lxml_tree(html)
        assert table.n_elements == len(ref.official_table(html).xpath(".//*"))


@pytest.mark.parametrize(
    "html",
    [
        "<table><tr><td>1<td>2<tr><td>3</table>",  # implied ends
        "<table><td>x</td><caption>c <b>d</b></caption><tr><td><p>a<p>b</td></tr></table>",
        "<table><tr><td><b>x</td><td>y</b></td></tr></table>",  # an end tag with nothing open
        "<table><tr><td>a\r\nb\rc</td><td colspan=0>x</td><td colspan=' 2 '>y</td></tr></table>",
        "<table><tr><td>a<!-- note -->b</td><th>q<br>r<i>s</i></th></tr></table>",
        "<table><tr><td><table><tr><td>n</td></tr></table>t</td></tr></table>",  # nested
        "<table><tr><td>a<table><tr><td>n</td> x<td>m</td></tr></table>t</td></tr></table>",
        "<table><thead><tr><td>q<td>r</thead><tr><td>z</table>",
        "<table><tr><td>a<ul><li>x<li>y</ul><p>b<div>c</div></td></tr></table>",  # auto-closing
        "<table><tr><td><dl><dt>a<dd>b<dt>c</dl><select><option>a<option>b</select></td></tr>",
        "<table></table>",
    ],
)
def test_the_element_tree_recovers_html_as_lxml_does(html: str) -> None:
    (table,) = parse_tables(html)
    assert tree_tuples(table.tree) == lxml_tree(html)


def test_the_element_tree_keeps_white_space_tokens_and_counts_inline_elements() -> None:
    (table,) = parse_tables("<table><tr><td> a <b>x</b>\n</td><th><b>h</b></th></tr></table>")
    td, th = table.tree.children[0].children
    assert td.tokens == (" ", "a", " ", "<b>", "x", "</b>", "\n") and td.hidden == 1
    assert [c.tag for c in th.children] == ["b"] and th.tokens == ()
    assert table.n_elements == 5  # tr, td, b, th, b


def test_markdown_element_tree() -> None:
    (table,) = parse_tables("| a | b |\n|---|---|\n| 1 \\| x | <b>2</b> |")
    head, body = table.tree.children
    assert (head.tag, body.tag) == ("thead", "tbody")
    assert [c.tag for c in head.children[0].children] == ["th", "th"]
    assert [c.tokens for c in body.children[0].children] == [
        ("1", " ", "|", " ", "x"),
        ("<b>", "2", "</b>"),
    ]
