"""core.text: the display helpers on their edge values (None, blank, long, pipes, newlines)."""

from __future__ import annotations

from extract_mlflow.core.text import (
    compact,
    escape_pipes,
    fmt,
    md_cell,
    terminal_safe,
    tex_escape,
    truncate,
)


def test_fmt() -> None:
    assert fmt(None) == "n/a" and fmt(None, 2) == "n/a"
    assert fmt(2 / 3) == "0.667" and fmt(2 / 3, 2) == "0.67" and fmt(0.5, 4) == "0.5000"
    assert fmt(1.0) == "1.000" and fmt(0.0) == "0.000"


def test_truncate() -> None:
    assert truncate("", 3) == "" and truncate("abc", 3) == "abc"
    assert truncate("abcd", 3) == "ab…" and len(truncate("x" * 500, 250)) == 250


def test_compact() -> None:
    assert compact(None, 60) == "—"
    assert compact(None, 60, none="nothing") == "nothing"
    assert compact(None, 60, none=None) == "null"
    assert compact("  a \n\t b  ", 60) == "a b"
    assert compact("a b", 60, quote=True) == '"a b"'
    assert compact(" ", 60, quote=True) == '""'
    assert compact({"k": [1, "é"]}, 60) == '{"k": [1, "é"]}'
    assert compact(3, 60, quote=True) == "3"
    assert compact("x" * 70, 60) == "x" * 59 + "…"
    assert compact("x" * 70, 10, quote=True) == '"xxxxxxxx…'


def test_markdown_escapes() -> None:
    assert escape_pipes("a|b|") == "a\\|b\\|" and escape_pipes("a\nb") == "a\nb"
    assert md_cell("a|b\nc") == "a\\|b c"


def test_terminal_and_tex() -> None:
    assert terminal_safe("a\x1b[2Jb\r") == "a\\u001b[2Jb\\r"
    assert terminal_safe("a\tb\n", one_line=True) == "a\\tb\\n"
    assert tex_escape("50% of $x_1 & ~y^2\\") == (
        r"50\% of \$x\_1 \& \textasciitilde{}y\textasciicircum{}2\textbackslash{}"
    )
