"""Plain TEDS references for the tests: lxml parses, apted computes the tree edit distance.

Both are written independently of ``extract_mlflow.structure.tables``/``teds``.

*Official* (:func:`official_teds`): the definition of the public PubTabNet evaluation
(ibm-aur-nlp/PubTabNet), as its README and code define it, written here from scratch:

- the string is parsed by lxml's HTML parser with comments removed, wrapped in
  ``<html><body>…</body></html>`` when it is a fragment; the table is the first ``table`` that is
  a child of ``body`` (none: no table);
- every element below the table is a node with its tag; a ``td`` is a leaf carrying colspan
  and rowspan (``int`` of the attribute, 1 when missing; unreadable → 1 here, an error there)
  and its content: the characters of its text and of every descendant's text and tail (but
  for the tail of a nested td), with ``<tag>`` and ``</tag>`` tokens around each descendant
  element (white space kept); any other element (``th`` too) carries no content and has its
  child elements as children;
- insertion and deletion cost 1; renaming costs 1 when tags, colspans or rowspans differ (only
  td carry spans), otherwise between two td the Levenshtein distance of the token lists divided
  by the longer length when either is non-empty, and 0 in every other case (TEDS-S: td
  contents are empty);
- TEDS = 1 − TED / max(elements below ``<table>`` of either side, counted with ``.//*``, so
  elements inside td count); no table on either side → 0. The official code divides by zero
  when neither table has an element below it: 1.0 here (the trees are equal).

*Normalised* (:func:`teds`), the published definition read loosely, as our normalised variant:

- the tree is ``table → tr → td``: thead/tbody/tfoot unwrapped, ``th`` read as ``td``;
- a td node carries colspan, rowspan (integers; missing or unreadable → 1, below 1 → 1, capped
  at 1000 / 65534) and its content: the characters of its text, with ``br``/``p``/``div``/``li``
  read as white space, entities decoded and white space collapsed and trimmed;
- insertion and deletion cost 1; renaming costs 1 when the tags, colspans or rowspans differ,
  otherwise (two td) the normalised Levenshtein distance of the contents (distance / longer
  length; two empty contents → 0), and 0 for structure only;
- TEDS = 1 − TED / max(nodes of the two trees); no table in the prediction → 0.
"""

from __future__ import annotations

import html as html_lib
import random
from typing import Any

import lxml.html
from apted import APTED, Config

_BREAKS = ("br", "p", "div", "li")


class Node:
    """An apted tree node."""

    def __init__(self, tag: str, colspan: int = 1, rowspan: int = 1, content: str = "") -> None:
        self.tag = tag
        self.colspan = colspan
        self.rowspan = rowspan
        self.content = content
        self.children: list[Node] = []

    def count(self) -> int:
        return 1 + sum(child.count() for child in self.children)


def levenshtein(a: str, b: str) -> int:
    """The textbook dynamic programme."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


class TedsConfig(Config):  # type: ignore[misc]
    """PubTabNet costs."""

    def __init__(self, structure_only: bool) -> None:
        self.structure_only = structure_only

    def rename(self, a: Node, b: Node) -> float:
        if a.tag != b.tag or a.colspan != b.colspan or a.rowspan != b.rowspan:
            return 1.0
        if a.tag == "td" and not self.structure_only and (a.content or b.content):
            return levenshtein(a.content, b.content) / max(len(a.content), len(b.content))
        return 0.0

    def children(self, node: Node) -> list[Node]:
        return node.children


def _span(value: Any, cap: int) -> int:
    try:
        return min(max(int(str(value).strip()), 1), cap)
    except ValueError:
        return 1


def _cell_text(cell: Any) -> str:
    for element in cell.iter():
        if element is not cell and element.tag in _BREAKS:
            element.tail = " " + (element.tail or "")
            element.text = " " + (element.text or "")
    return " ".join(cell.text_content().split())


def tree_from_html(html: str) -> Node | None:
    """The first top-level table of the string as an apted tree, or None without a table."""
    if not html.strip():
        return None
    document = lxml.html.document_fromstring(html)
    tables = [t for t in document.iter("table") if not list(t.iterancestors("table"))]
    if not tables:
        return None
    root = Node("table")
    for tr in tables[0].xpath("./tr | ./thead/tr | ./tbody/tr | ./tfoot/tr"):
        row = Node("tr")
        for td in tr.xpath("./td | ./th"):
            colspan = _span(td.get("colspan", "1"), 1000)
            rowspan = _span(td.get("rowspan", "1"), 65534)
            row.children.append(Node("td", colspan, rowspan, _cell_text(td)))
        root.children.append(row)
    return root


def ted(gold: Node, pred: Node, structure_only: bool = False) -> float:
    return float(APTED(gold, pred, TedsConfig(structure_only)).compute_edit_distance())


def teds(gold_html: str, pred_html: str, structure_only: bool = False) -> float:
    """TEDS (or TEDS-S) of two HTML tables by the definition above."""
    gold, pred = tree_from_html(gold_html), tree_from_html(pred_html)
    if gold is None or pred is None:
        return 0.0
    return 1.0 - ted(gold, pred, structure_only) / max(gold.count(), pred.count())


# -- the official definition -----------------------------------------------------------------


class OfficialNode:
    """An apted node of the official tree (``content`` only for td)."""

    def __init__(self, tag: str, colspan: int = 1, rowspan: int = 1) -> None:
        self.tag = tag
        self.colspan = colspan
        self.rowspan = rowspan
        self.content: list[str] = []
        self.children: list[OfficialNode] = []


class OfficialConfig(Config):  # type: ignore[misc]
    """The official rename cost."""

    def rename(self, a: OfficialNode, b: OfficialNode) -> float:
        if a.tag != b.tag or (a.tag == "td" and (a.colspan, a.rowspan) != (b.colspan, b.rowspan)):
            return 1.0
        if a.tag == "td" and (a.content or b.content):
            return levenshtein_tokens(a.content, b.content) / max(len(a.content), len(b.content))
        return 0.0

    def children(self, node: OfficialNode) -> list[OfficialNode]:
        return node.children


def levenshtein_tokens(a: list[str], b: list[str]) -> int:
    """The textbook dynamic programme over token lists."""
    previous = list(range(len(b) + 1))
    for i, ta in enumerate(a, 1):
        current = [i]
        for j, tb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ta != tb)))
        previous = current
    return previous[-1]


def _int_attr(element: Any, name: str) -> int:
    try:
        return int(element.get(name, "1"))
    except ValueError:
        return 1


def _content(td: Any) -> list[str]:
    tokens = list(td.text or "")
    for child in td:
        tokens.append(f"<{child.tag}>")
        tokens.extend(_content(child))
        if child.tag != "unk":
            tokens.append(f"</{child.tag}>")
        if child.tag != "td":  # the text after a (nested) td is not read
            tokens.extend(child.tail or "")
    return tokens


def _official(element: Any, structure_only: bool) -> OfficialNode:
    if element.tag == "td":
        node = OfficialNode("td", _int_attr(element, "colspan"), _int_attr(element, "rowspan"))
        node.content = [] if structure_only else _content(element)
        return node
    node = OfficialNode(element.tag)
    node.children = [_official(child, structure_only) for child in element]
    return node


def official_table(html: str) -> Any:
    """The lxml element of the table the official evaluation scores, or None."""
    if not html.strip():
        return None
    if "<html" not in html.lower():
        html = f"<html><body>{html}</body></html>"
    parser = lxml.html.HTMLParser(remove_comments=True)
    document = lxml.html.document_fromstring(html, parser=parser)
    tables = document.xpath("body/table")
    return tables[0] if tables else None


def official_ted(gold_html: str, pred_html: str, structure_only: bool = False) -> float:
    gold, pred = official_table(gold_html), official_table(pred_html)
    a, b = _official(gold, structure_only), _official(pred, structure_only)
    return float(APTED(a, b, OfficialConfig()).compute_edit_distance())


def official_teds(gold_html: str, pred_html: str, structure_only: bool = False) -> float:
    """TEDS (or TEDS-S) by the official definition above."""
    gold, pred = official_table(gold_html), official_table(pred_html)
    if gold is None or pred is None:
        return 0.0
    size = max(len(gold.xpath(".//*")), len(pred.xpath(".//*")))
    distance = official_ted(gold_html, pred_html, structure_only)
    return 1.0 - distance / size if size else 1.0


# -- a seeded generator of table pairs ------------------------------------------------------

WORDS = ("total", "net", "2021", "3.5", "µM", "Naïve", "a & b", "<5", "x", "rate (%)", "—")
Spec = list[list[tuple[str, int, int]]]  # rows of (text, colspan, rowspan)


def random_text(rng: random.Random) -> str:
    if rng.random() < 0.12:
        return ""
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))


def random_spec(rng: random.Random, rows: int, cols: int, merge: float = 0.2) -> Spec:
    """A grid of rows × cols slots, some merged by colspan/rowspan."""
    taken: set[tuple[int, int]] = set()
    spec: Spec = []
    for r in range(rows):
        row = []
        for c in range(cols):
            if (r, c) in taken:
                continue
            colspan = rowspan = 1
            if rng.random() < merge:
                while c + colspan < cols and (r, c + colspan) not in taken and rng.random() < 0.5:
                    colspan += 1
            if rng.random() < merge / 2:
                rowspan = rng.randint(1, rows - r)
            for dr in range(rowspan):
                for dc in range(colspan):
                    taken.add((r + dr, c + dc))
            row.append((random_text(rng), colspan, rowspan))
        spec.append(row)
    return spec


def _edit_text(rng: random.Random, text: str) -> str:
    chars = list(text)
    for _ in range(rng.randint(1, 3)):
        i = rng.randint(0, len(chars))
        op = rng.random()
        if op < 0.4 and chars and i < len(chars):
            chars[i] = rng.choice("abcxyz09")
        elif op < 0.7 and chars and i < len(chars):
            del chars[i]
        else:
            chars.insert(i, rng.choice("abcxyz09 "))
    return "".join(chars)


def _merge_cells(rng: random.Random, spec: Spec) -> None:
    row = rng.choice(spec)
    if len(row) >= 2:
        i = rng.randrange(len(row) - 1)
        (t1, c1, r1), (t2, c2, _) = row[i], row[i + 1]
        row[i : i + 2] = [(f"{t1} {t2}".strip(), c1 + c2, r1)]


def _split_cell(rng: random.Random, spec: Spec) -> None:
    row = rng.choice(spec)
    spanned = [i for i, (_, c, r) in enumerate(row) if c > 1 or r > 1]
    if spanned:
        i = rng.choice(spanned)
        text, colspan, _ = row[i]
        row[i : i + 1] = [(text, 1, 1)] + [("", 1, 1)] * (colspan - 1)


def mutate(rng: random.Random, spec: Spec) -> Spec:
    """A prediction of the gold spec: dropped, added, swapped or emptied rows, merged or split
    cells, changed spans and edited, emptied or dropped cell text."""
    pred = [list(r) for r in spec]
    for _ in range(rng.randint(1, 5)):
        op = rng.randrange(10)
        if op == 0 and len(pred) > 1:
            del pred[rng.randrange(len(pred))]
        elif op == 1:
            pred.insert(rng.randint(0, len(pred)), [(random_text(rng), 1, 1) for _ in range(3)])
        elif op == 2 and len(pred) > 1:
            i, j = rng.sample(range(len(pred)), 2)
            pred[i], pred[j] = pred[j], pred[i]
        elif op == 3:
            _merge_cells(rng, pred)
        elif op == 4:
            _split_cell(rng, pred)
        elif op == 5:
            pred.insert(rng.randint(0, len(pred)), [])
        elif op == 6 and pred and pred[0]:
            row = rng.choice([r for r in pred if r] or [pred[0]])
            i = rng.randrange(len(row))
            text, colspan, rowspan = row[i]
            row[i] = (text, colspan, rowspan + 1) if rng.random() < 0.5 else (text, colspan + 1, 1)
        elif op == 7:
            row = rng.choice(pred)
            if row:
                del row[rng.randrange(len(row))]
        else:
            for row in pred:
                for i, (text, colspan, rowspan) in enumerate(row):
                    if rng.random() < 0.3:
                        row[i] = (_edit_text(rng, text) if text else "x", colspan, rowspan)
                    elif rng.random() < 0.05:
                        row[i] = ("", colspan, rowspan)
    return pred


def _cell_html(rng: random.Random, text: str, tag: str, colspan: int, rowspan: int) -> str:
    attrs = (f' colspan="{colspan}"' if colspan != 1 or rng.random() < 0.1 else "") + (
        f" rowspan={rowspan}" if rowspan != 1 or rng.random() < 0.1 else ""
    )
    body = html_lib.escape(text, quote=False)
    if rng.random() < 0.2:
        body = body.replace("&amp;", "&#38;").replace("ï", "&iuml;")
    if rng.random() < 0.15 and " " in body:
        body = body.replace(" ", rng.choice(["<br>", "&nbsp;", " \n  ", "<br/>"]), 1)
    if rng.random() < 0.1 and body:
        body = f"<b>{body}</b>"
    pad = rng.choice(["", " ", "\n  "])
    return f"<{tag}{attrs}>{pad}{body}{pad}</{tag}>"


def render(rng: random.Random, spec: Spec, header_rows: int = 0) -> str:
    """HTML for a spec; the first ``header_rows`` rows as ``th`` (in a ``thead`` or not),
    the body in a ``tbody`` or bare."""
    rows = []
    for r, row in enumerate(spec):
        tag = "th" if r < header_rows else "td"
        rows.append("<tr>" + "".join(_cell_html(rng, t, tag, c, s) for t, c, s in row) + "</tr>")
    head, body = rows[:header_rows], rows[header_rows:]
    if head and rng.random() < 0.5:
        head = ["<thead>", *head, "</thead>"]
    if rng.random() < 0.5:
        body = ["<tbody>", *body, "</tbody>"]
    return "<table>" + "\n".join(head + body) + "</table>"


def random_pair(rng: random.Random, rows: int, cols: int, merge: float = 0.2) -> tuple[str, str]:
    """A gold table of rows × cols slots (a share ``merge`` of cells spanning) and a mutated
    prediction, both as HTML."""
    spec = random_spec(rng, rows, cols, merge)
    header_rows = rng.choice([0, 1, 1, 2]) if rows > 2 else 0
    pred = mutate(rng, spec)
    pred_header = header_rows + (1 if rng.random() < 0.15 else 0)
    return render(rng, spec, header_rows), render(rng, pred, min(pred_header, len(pred)))


# -- a seeded generator for the official definition -----------------------------------------

INLINE = ("b", "i", "sup", "sub")


def _markup(rng: random.Random, text: str) -> str:
    """Cell HTML with inline tags, line breaks, entities and white space, at random."""
    body = html_lib.escape(text, quote=False)
    if rng.random() < 0.1 and " " in body:
        body = body.replace(" ", rng.choice(["<br>", "<br/>", "&nbsp;"]), 1)
    if body and rng.random() < 0.3:
        tag = rng.choice(INLINE)
        body = f"<{tag}>{body}</{tag}>"
        if rng.random() < 0.2:
            outer = rng.choice(INLINE)
            body = f"<{outer}>x{body}</{outer}>"
    if rng.random() < 0.1:
        return rng.choice([" ", "  ", "\n", " <b> </b> "])  # white space only
    pad = rng.choice(["", "", " ", "\n"])
    return f"{pad}{body}{pad if rng.random() < 0.5 else ''}"


def render_official(rng: random.Random, spec: Spec, header_rows: int = 0) -> str:
    """HTML for a spec with the markup the official definition reads: header rows of th (or
    td) in a thead (or not), the body bare, in one or two tbody, the last row in a tfoot,
    inline tags in cells (th included), white-space cells and spans."""
    rows = []
    for r, row in enumerate(spec):
        cells = []
        for text, colspan, rowspan in row:
            tag = "th" if r < header_rows and rng.random() < 0.8 else "td"
            attrs = (f' colspan="{colspan}"' if colspan != 1 or rng.random() < 0.1 else "") + (
                f" rowspan={rowspan}" if rowspan != 1 else ""
            )
            cells.append(f"<{tag}{attrs}>{_markup(rng, text)}</{tag}>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    head, body = rows[:header_rows], rows[header_rows:]
    if head and rng.random() < 0.6:
        head = ["<thead>", *head, "</thead>"]
    choice = rng.random()
    if body and choice < 0.15:
        body = ["<tbody>", *body[:-1], "</tbody>", "<tfoot>", body[-1], "</tfoot>"]
    elif len(body) > 1 and choice < 0.3:
        cut = rng.randrange(1, len(body))
        body = ["<tbody>", *body[:cut], "</tbody>", "<tbody>", *body[cut:], "</tbody>"]
    elif choice < 0.65:
        body = ["<tbody>", *body, "</tbody>"]
    return "<table>" + rng.choice(["", "\n"]).join(head + body) + "</table>"


def random_official_pair(
    rng: random.Random, rows: int, cols: int, merge: float = 0.2
) -> tuple[str, str]:
    """A gold table and a mutated prediction, each rendered with its own random markup."""
    spec = random_spec(rng, rows, cols, merge)
    header_rows = rng.choice([0, 1, 1, 2]) if rows > 2 else 0
    pred = mutate(rng, spec) if rng.random() < 0.8 else [list(r) for r in spec]
    pred_header = max(0, header_rows + rng.choice([0, 0, 0, 1, -1]))
    return (
        render_official(rng, spec, header_rows),
        render_official(rng, pred, min(pred_header, len(pred))),
    )
