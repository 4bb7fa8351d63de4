r"""Text for people, in one place: scores (``n/a`` for undefined), values on one line, cut with
"…", and escaping for markdown tables, terminals and LaTeX.

These are display helpers only: the scoring normalisations (white space, case, NFKC) have their
own definitions next to the scores they define, so a display change never moves a number.

>>> fmt(None), fmt(0.5), fmt(0.5, 2)
('n/a', '0.500', '0.50')
>>> compact({"a": [1,  2]}, 60), compact("a\n b", 60, quote=True), compact(None, 60, none="nothing")
('{"a": [1, 2]}', '"a b"', 'nothing')
>>> truncate("abcdef", 4), escape_pipes("a|b"), md_cell("a|b\nc")
('abc…', 'a\\|b', 'a\\|b c')
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from .language import tr

T = TypeVar("T")

# C0 controls but tab and newline, DEL, C1 controls (0x9b is a CSI on its own), and the
# bidirectional overrides that can make a line read differently from what it holds
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


_LINE_BREAKS = re.compile(r"[\t\n]")


_NAMED = {"\r": r"\r", "\n": r"\n", "\t": r"\t"}


def _escape(m: re.Match[str]) -> str:
    char = m.group()
    return _NAMED.get(char) or f"\\u{ord(char):04x}"


def terminal_safe(text: str, *, one_line: bool = False) -> str:
    r"""`text` with every control character a terminal would act on written as an escape
    (``\r``, ``\u001b``): ids and values from the inputs cannot clear the screen, recolour it
    or rewrite a line. Tabs and newlines stay unless `one_line`. The escapes are JSON's own,
    so JSON text stays valid JSON with the same values.

    >>> terminal_safe("a\x1b[2Jb\r")
    'a\\u001b[2Jb\\r'
    """
    text = _CONTROL.sub(_escape, text)
    return _LINE_BREAKS.sub(_escape, text) if one_line else text


def safe_lines(lines: Iterable[str]) -> str:
    r"""`lines` as text for a terminal or a markdown file: one line each whatever they hold
    (:func:`terminal_safe` with `one_line`: an id holding a newline cannot start a line of
    its own, such as a forged "all gates passed"), each ended by a newline.

    >>> safe_lines(["id a\nall gates passed", "ok"])
    'id a\\nall gates passed\nok\n'
    """
    return "".join(terminal_safe(line, one_line=True) + "\n" for line in lines)


def fmt(value: float | None, digits: int = 3) -> str:
    """A score for people: n/a for undefined."""
    return "n/a" if value is None else f"{value:.{digits}f}"


def display_width(text: str) -> int:
    """Columns `text` takes in a terminal: wide and full-width characters (Hangul, CJK) count
    two, combining marks none.

    >>> display_width("F1"), display_width("필드")
    (2, 4)
    """
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def pad(text: str, width: int, *, right: bool = False) -> str:
    """`text` padded with spaces to `width` columns (on the left when `right`)."""
    fill = " " * max(0, width - display_width(text))
    return fill + text if right else text + fill


def truncate(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, the last one "…" when it had to be cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def compact(value: Any, limit: int, *, none: str | None = "—", quote: bool = False) -> str:
    """A value on one line: strings as they are, anything else as JSON; white space runs
    collapsed to one space; cut to `limit`. `none` is what None reads as (JSON's ``null`` when
    `none` is None); `quote` puts strings in JSON quotes (after the collapse)."""
    if value is None and none is not None:
        return none
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    if quote and isinstance(value, str):
        text = json.dumps(text, ensure_ascii=False)
    return truncate(text, limit)


def escape_pipes(text: str) -> str:
    """`text` safe inside a markdown table cell written on one line already (``|`` escaped)."""
    return text.replace("|", "\\|")


def md_cell(text: str) -> str:
    """`text` as one markdown table cell: ``|`` escaped, newlines read as spaces."""
    return text.replace("|", "\\|").replace("\n", " ")


_TEX_SPECIAL = {c: "\\" + c for c in "&%$#_{}"} | {
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "\\": r"\textbackslash{}",
}


def tex_escape(text: str) -> str:
    """Text safe inside a LaTeX table cell.

    >>> tex_escape("a_b & 50%")
    'a\\\\_b \\\\& 50\\\\%'
    """
    return "".join(_TEX_SPECIAL.get(c, c) for c in text)


FIELDS_LISTED = 200
"""fields shown in a field table, worst first (with their mismatch examples)"""
LISTED = 50
"""entries shown of one listing (notes of a kind, pages, flipped documents, slices…)"""


def capped(
    items: Sequence[T], limit: int = LISTED, total: int | None = None
) -> tuple[Sequence[T], str | None]:
    """The first `limit` of `items`, and the line saying how many more there are (None when
    none is left out). `total`: how many there are in all, when `items` are the first of them.

    >>> capped([1, 2, 3], 2)
    ([1, 2], '… 1 more not shown')
    >>> capped([1, 2], 5, total=9)
    ([1, 2], '… 7 more not shown')
    """
    shown = items[:limit] if len(items) > limit else items
    more = (len(items) if total is None else total) - len(shown)
    return shown, tr("list.more", n=more) if more > 0 else None


def capped_lines(lines: Sequence[str], limit: int = LISTED, total: int | None = None) -> list[str]:
    """`lines` cut to `limit`, the line saying how many more there are (of `total`) last."""
    shown, more = capped(lines, limit, total)
    return [*shown, *([more] if more else [])]


def aligned(
    rows: Sequence[Sequence[str]], *, left: int = 1, rule: bool = True, last_left: bool = False
) -> list[str]:
    """Rows as aligned plain-text lines: the first `left` columns padded on the right, the
    others on the left (numbers), two spaces between columns, trailing blanks cut; with `rule`,
    a line of dashes under the first row (the header); with `last_left`, the last column is
    text, padded on the right too.

    >>> aligned([("name", "n"), ("a", "10")])
    ['name   n', '----  --', 'a     10']
    """
    rows = [[terminal_safe(c, one_line=True) for c in r] for r in rows]  # one line each
    widths = [max(display_width(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = []
    for n, r in enumerate(rows):
        cells = [
            pad(c, w, right=not (i < left or (last_left and i == len(widths) - 1)))
            for i, (c, w) in enumerate(zip(r, widths, strict=False))
        ]
        out.append("  ".join(cells).rstrip())
        if rule and n == 0:
            out.append("  ".join("-" * w for w in widths))
    return out
