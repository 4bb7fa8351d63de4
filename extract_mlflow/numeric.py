"""Reading numbers as people and models write them: "1,250.00", "$1,250", "1.2e3", "−5", "(12)".

One function, :func:`parse_number`, memoised because the same strings recur across documents.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Digits with optional grouping/decimal marks and exponent; currency and sign handled around it.
NUMBER_PATTERN = r"[-+−–]?\s*[$€£¥₹]?\s*(?:\d[\d,.'\u00a0\u202f ]*\d|\d|\.\d+)(?:[eE][-+−]?\d+)?"
_CURRENCY = re.compile(r"^(?:[$€£¥₹]|USD|EUR|GBP|CHF|JPY|CAD|AUD|INR)\s*|\s*(?:[$€£¥₹]|USD|EUR|GBP|CHF|JPY|CAD|AUD|INR)$")
_NUMBER_RE = re.compile(r"^(?:\d[\d,.'\s]*\d\.?|\d\.?|\.\d+)(?:[eE][-+]?\d+)?$")
_GROUPED_COMMA = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_GROUPED_DOT = re.compile(r"^\d{1,3}(?:\.\d{3})+(?:,\d+)?$")


@lru_cache(maxsize=65536)
def _parse_text(text: str) -> float | None:
    s = text.strip().replace("−", "-").replace("–", "-")
    negative = False
    if s.startswith("(") and s.endswith(")"):  # accounting negative: (1,250.00)
        s, negative = s[1:-1].strip(), True
    if s[:1] in "+-" and s[:1]:
        negative ^= s[0] == "-"
        s = s[1:].strip()
    s = _CURRENCY.sub("", s).strip()
    if s[:1] in "+-" and s[:1]:  # sign after the currency: "$-5"
        negative ^= s[0] == "-"
        s = s[1:].strip()
    if not s or not _NUMBER_RE.match(s):
        return None
    mantissa, _, exponent = s.replace("E", "e").partition("e")
    mantissa = mantissa.replace("'", "").replace("\u00a0", "").replace("\u202f", "").replace(" ", "")
    if "," in mantissa and "." in mantissa:
        # Both marks: the later one is the decimal mark.
        if mantissa.rfind(",") > mantissa.rfind("."):
            mantissa = mantissa.replace(".", "").replace(",", ".")
        else:
            mantissa = mantissa.replace(",", "")
    elif "," in mantissa:
        # "1,250" groups thousands; "3,5" is a decimal comma.
        mantissa = mantissa.replace(",", "") if _GROUPED_COMMA.match(mantissa) else mantissa.replace(",", ".")
    elif mantissa.count(".") > 1:
        if not _GROUPED_DOT.match(mantissa):
            return None
        mantissa = mantissa.replace(".", "")
    try:
        value = float(mantissa + ("e" + exponent if exponent else ""))
    except ValueError:
        return None
    if value != value or value in (float("inf"), float("-inf")):
        return None
    return -value if negative else value


def parse_number(raw: object) -> float | None:
    """A finite float from a JSON number or a written number; None when it is not one.

    >>> parse_number("$1,250.00"), parse_number("1.2e3"), parse_number("−5"), parse_number("3,5")
    (1250.0, 1200.0, -5.0, 3.5)
    """
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        value = float(raw)
        return value if value == value and abs(value) != float("inf") else None
    if isinstance(raw, str):
        return _parse_text(raw)
    return None
