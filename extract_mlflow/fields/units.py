"""Quantities with units: parsing "50 µM" / "1.8 min⁻¹" and converting between units.

pint does the unit algebra. Its registry costs ~0.4 s to build, so it is built on first use only,
and every (from, to) unit pair is turned once into a linear map ``y = a·x + b`` (``b`` is non-zero
only for offset units such as °C) that is cached: converting a value is then two float operations.

Time units run from seconds to years (``s``, ``sec``, ``min``, ``h``/``hr``, ``day``/``d``,
``week``/``wk``, ``month``/``mo``, ``year``/``yr``, singular or plural) with pint's calendar
convention: 1 year = 365.25 days (the Julian year) = 12 months, so 1 month = 30.4375 days and
1 week = 7 days. ISO-8601 durations read as one quantity in their smallest unit: ``P3Y`` is
3 years, ``P1Y6M`` 18 months, ``PT90M`` 90 minutes, ``P2W`` 2 weeks, ``P1DT12H`` 36 hours (``M``
is months before the ``T`` and minutes after it). Numbers written as words ("eighteen months")
are not read.
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from typing import Any

from .numeric import NUMBER_PATTERN, parse_number

_SUPERSCRIPTS = str.maketrans(
    {"⁻": "-", "⁺": "", "¹": "1", "²": "2", "³": "3", "⁴": "4", "⁵": "5", "⁶": "6", "⁷": "7",
     "⁸": "8", "⁹": "9", "⁰": "0"}
)  # fmt: skip
_SUPERSCRIPT_RUN = re.compile(r"[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+")
# "h-1", "g-1 h-1": a signed integer right after a unit name is an exponent
_ASCII_EXPONENT = re.compile(r"(?<=[A-Za-z])(-\d+)(?=$|[\s*/·)])")
# 5.0 × 10⁻⁵, 5 x 10^-5, 5·10-5 -> 5.0e-5
_TIMES_TEN = re.compile(r"(?<=\d)\s*[×x·*]\s*10\s*(?:\^\s*)?([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+|[-+−]?\d+)")
# lookalikes of the degree sign: masculine ordinal, ring above
_DEGREE = str.maketrans({"º": "°", "˚": "°"})
_QUANTITY_RE = re.compile(rf"^\s*(?P<num>{NUMBER_PATTERN})\s*(?P<unit>.*?)\s*$")
# Unit spellings that pint does not read as we mean them (or at all).
_ALIASES = {
    "hr": "hour",
    "hrs": "hour",
    "h": "hour",
    "sec": "second",
    "secs": "second",
    "mins": "minute",
    "%": "percent",
    "°c": "degC",
    "℃": "degC",
    "°f": "degF",
    "℉": "degF",
    "k": "kelvin",
    "wk": "week",
    "wks": "week",
    "mo": "month",
    "mos": "month",
    "mth": "month",
    "mths": "month",
}
# ISO-8601 durations: PnYnMnWnDTnHnMnS, any subset, fractions with "." or ","
_ISO_DURATION = re.compile(
    r"^\s*P(?!\s*$)(?:(?P<year>\d+(?:[.,]\d+)?)Y)?(?:(?P<month>\d+(?:[.,]\d+)?)M)?"
    r"(?:(?P<week>\d+(?:[.,]\d+)?)W)?(?:(?P<day>\d+(?:[.,]\d+)?)D)?"
    r"(?:T(?=\d)(?:(?P<hour>\d+(?:[.,]\d+)?)H)?(?:(?P<minute>\d+(?:[.,]\d+)?)M)?"
    r"(?:(?P<second>\d+(?:[.,]\d+)?)S)?)?\s*$",
    re.IGNORECASE,
)


@cache
def _registry() -> Any:
    import pint  # lazy: building the registry is the expensive part

    return pint.UnitRegistry()


@lru_cache(maxsize=4096)
def normalise_unit(text: str) -> str:
    """Rewrite a unit as written in documents into pint syntax ('' for none).

    >>> normalise_unit("µM"), normalise_unit("h⁻¹"), normalise_unit("°C")
    ('uM', 'hour^-1', 'degC')
    """
    s = text.strip().replace("µ", "u").replace("μ", "u").translate(_DEGREE)
    s = _SUPERSCRIPT_RUN.sub(lambda m: "^" + m.group(0).translate(_SUPERSCRIPTS), s)
    s = s.replace("−", "-").replace("° C", "°C").replace("·", "*")
    if not s:
        return ""
    if s.lower() in _ALIASES:
        return _ALIASES[s.lower()]
    # "h-1", "g-1 h-1" -> exponents; "/h" -> "1/h"
    s = _ASCII_EXPONENT.sub(r"^\1", s)
    if s.startswith("/"):
        s = "1" + s
    if s.lower().startswith("per "):
        s = "1/" + s[4:]
    return re.sub(
        r"[A-Za-z°%℃℉]+",
        lambda m: _ALIASES.get(m.group(0).lower(), m.group(0)) if m.group(0) != "K" else "kelvin",
        s,
    )


@lru_cache(maxsize=4096)
def unit_map(from_unit: str, to_unit: str) -> tuple[float, float] | None:
    """The linear map (a, b) taking a value in `from_unit` to `to_unit`; None if incompatible
    or unknown. Both units are in pint syntax (see :func:`normalise_unit`)."""
    if from_unit == to_unit:
        return (1.0, 0.0)
    ureg = _registry()
    try:
        y0 = ureg.Quantity(0.0, from_unit or "dimensionless").to(to_unit or "dimensionless")
        y1 = ureg.Quantity(1.0, from_unit or "dimensionless").to(to_unit or "dimensionless")
    except Exception:  # pint raises many types: undefined, dimensionality, syntax
        return None
    b = float(y0.magnitude)
    return (float(y1.magnitude) - b, b)


def parse_duration(text: str) -> tuple[float, str] | None:
    """An ISO-8601 duration as (value, unit) in its smallest unit; None if it is not one.

    >>> parse_duration("P3Y"), parse_duration("P1Y6M"), parse_duration("P1DT12H")
    ((3.0, 'year'), (18.0, 'month'), (36.0, 'hour'))
    """
    m = _ISO_DURATION.match(text)
    if m is None:
        return None
    parts = [(float(v.replace(",", ".")), unit) for unit, v in m.groupdict().items() if v]
    if not parts:
        return None
    smallest = parts[-1][1]
    total = 0.0
    for value, unit in parts:
        lin = unit_map(unit, smallest)
        if lin is None:  # pragma: no cover - every pair of time units converts
            return None
        total += lin[0] * value
    return total, smallest


@lru_cache(maxsize=65536)
def parse_quantity(text: str) -> tuple[float, str] | None:
    """'1.8 min⁻¹' -> (1.8, 'minute^-1'); 'P18M' -> (18.0, 'month'); a bare number -> (x, '');
    None if not a quantity."""
    duration = parse_duration(text)
    if duration is not None:
        return duration
    m = _QUANTITY_RE.match(_TIMES_TEN.sub(_as_exponent, text))
    if m is None:
        return None
    value = parse_number(m.group("num"))
    if value is None:
        return None
    return value, normalise_unit(m.group("unit"))


def _as_exponent(m: re.Match[str]) -> str:
    return "e" + m.group(1).translate(_SUPERSCRIPTS).replace("−", "-")


def convert(value: float, from_unit: str, to_unit: str) -> float | None:
    """`value` in `from_unit` expressed in `to_unit`; None when the units do not convert."""
    lin = unit_map(from_unit, to_unit)
    if lin is None:
        return None
    return lin[0] * value + lin[1]


@lru_cache(maxsize=1024)
def known_unit(text: str) -> bool:
    """True when `text` (as written in documents or a config) reads as a unit.

    >>> known_unit("µM"), known_unit("min⁻¹"), known_unit("kgg")
    (True, True, False)
    """
    unit = normalise_unit(text)
    if not unit:
        return False
    try:
        _registry().Quantity(1.0, unit)
    except Exception:  # pint raises many types: undefined, syntax
        return False
    return True
