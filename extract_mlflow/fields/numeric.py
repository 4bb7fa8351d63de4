"""Reading numbers as people and models write them: "1,250.00", "$1,250", "1.2e3", "−5", "(12)".

One function, :func:`parse_number`, memoised because the same strings recur across documents.
"""

from __future__ import annotations

import re
from functools import lru_cache

# Digits with optional grouping/decimal marks and exponent; currency and sign handled around it.
# A space or apostrophe only groups thousands ("1 250,5", "1'250.50"), so "3 1/h" is 3 per hour.
NUMBER_PATTERN = (
    r"[-+−–]?\s*[$€£¥₹]?\s*"
    r"(?:\d{1,3}(?:['\u00a0\u202f ]\d{3})+(?:[.,]\d+)?|\d[\d,.]*\d|\d|\.\d+)(?:[eE][-+−]?\d+)?"
)
_CURRENCY_MARK = r"(?:[$€£¥₹]|USD|EUR|GBP|CHF|JPY|CAD|AUD|INR)"
_CURRENCY = re.compile(rf"^{_CURRENCY_MARK}\s*|\s*{_CURRENCY_MARK}$")
_NUMBER_RE = re.compile(r"^(?:\d[\d,.'\s]*\d\.?|\d\.?|\.\d+)(?:[eE][-+]?\d+)?$")
_GROUPED_COMMA = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_GROUPED_DOT = re.compile(r"^\d{1,3}(?:\.\d{3})+(?:,\d+)?$")
_GROUPED_SPACE = re.compile(r"^\d{1,3}(?:['\u00a0\u202f ]\d{3})+(?:[.,]\d*)?$")


@lru_cache(maxsize=65536)
def _parse_text(text: str) -> float | None:
    s = text.strip().replace("−", "-").replace("–", "-")
    negative = signed = False  # one sign at most: "--5" and "(-5)" are not numbers
    if s.startswith("(") and s.endswith(")"):  # accounting negative: (1,250.00)
        s, negative, signed = s[1:-1].strip(), True, True
    if s[:1] in "+-" and s[:1] and not signed:
        negative, signed = s[0] == "-", True
        s = s[1:].strip()
    s = _CURRENCY.sub("", s).strip()
    if s[:1] in "+-" and s[:1] and not signed:  # sign after the currency: "$-5"
        negative = s[0] == "-"
        s = s[1:].strip()
    if not s or not _NUMBER_RE.match(s):
        return None
    mantissa, _, exponent = s.replace("E", "e").partition("e")
    if re.search(r"[\s']", mantissa) and not _GROUPED_SPACE.match(mantissa):
        return None  # spaces and apostrophes group thousands only: "1 2" is not 12
    mantissa = re.sub(r"[\s']", "", mantissa)
    if "," in mantissa and "." in mantissa:
        # Both marks: the later one is the decimal mark.
        if mantissa.rfind(",") > mantissa.rfind("."):
            mantissa = mantissa.replace(".", "").replace(",", ".")
        else:
            mantissa = mantissa.replace(",", "")
    elif "," in mantissa:
        # "1,250" groups thousands; "3,5" is a decimal comma.
        grouped = _GROUPED_COMMA.match(mantissa)
        mantissa = mantissa.replace(",", "" if grouped else ".")
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
        try:
            value = float(raw)
        except OverflowError:  # a JSON integer beyond the float range
            return None
        return value if value == value and abs(value) != float("inf") else None
    if isinstance(raw, str):
        return _parse_text(raw)
    return None
