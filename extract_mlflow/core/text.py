"""TODO: one line on what text owns."""

from __future__ import annotations

import re

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


def fmt(value: float | None, digits: int = 3) -> str:
    """A score for people: n/a for undefined."""
    return "n/a" if value is None else f"{value:.{digits}f}"
