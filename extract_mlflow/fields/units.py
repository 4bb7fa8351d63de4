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

:func:`is_measurement` is stricter than :func:`parse_quantity`: it says whether a gold string is
plainly a measurement (a number and a unit from a short list of measurement units), which is
what the scorer asks before it infers the type ``quantity`` for a field without a rule.
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


PINT_PARSED = 4096
"""How many unit strings pint may keep parsed before its caches are reset. Its registry keeps
every string it was given (and the units it made of them) in dicts without bound, and a source
text gives new ones without end: "1153.22\nZN-76150" is 1153.22 zettanewton⁻⁷⁶¹⁵⁰, one more
entry per product code (~1.4 KB a document on synth.py's invoices)."""

_PINT_CACHES = ("root_units", "dimensionality", "parse_unit", "conversion_factor")


@cache
def _built() -> tuple[Any, dict[str, dict[Any, Any]]]:
    """pint's registry and what its caches held once it was built."""
    import pint  # lazy: building the registry is the expensive part

    ureg: Any = pint.UnitRegistry()
    return ureg, {name: dict(getattr(ureg._cache, name)) for name in _PINT_CACHES}


def _registry() -> Any:
    """pint's registry, its caches reset to what they held once it was built when they hold
    over :data:`PINT_PARSED` strings: they only memoise, so no answer changes."""
    ureg, built = _built()
    if len(ureg._cache.parse_unit) > PINT_PARSED:
        for name, held in built.items():
            mine = getattr(ureg._cache, name)  # emptied in place: a context's view shares it
            mine.clear()
            mine.update(held)
    return ureg


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


def _prefixed(prefixes: str, *symbols: str) -> set[str]:
    """Every symbol with and without each one-letter SI prefix (``u`` stands for µ/μ)."""
    return {p + s for s in symbols for p in ("", *prefixes)}


_MEASUREMENT_WORDS = (
    *("gram", "kilogram", "milligram", "microgram", "pound", "ounce", "tonne"),
    *("meter", "metre", "kilometer", "kilometre", "centimeter", "centimetre", "millimeter"),
    *("millimetre", "micrometer", "micrometre", "nanometer", "nanometre", "inch", "foot"),
    *("mile", "yard", "liter", "litre", "milliliter", "millilitre", "microliter", "microlitre"),
    *("gallon", "second", "minute", "hour", "day", "week", "month", "year", "kelvin", "percent"),
)
MEASUREMENT_UNITS: frozenset[str] = frozenset(
    {
        *_prefixed("kmun", "g"),
        *_prefixed("kcmun", "m"),
        *_prefixed("mcdu", "l", "L"),
        *_prefixed("mun", "s"),
        *_prefixed("munp", "M"),
        *_prefixed("munp", "mol"),
        *_prefixed("kM", "J", "W", "Wh"),
        *_prefixed("kMh", "Pa"),
        *_prefixed("kMG", "Hz"),
        *_prefixed("mk", "V"),
        *("mbar", "kcal", "cal", "bar", "psi", "atm", "mmHg", "rpm"),
        *("lb", "lbs", "oz", "ft", "mi", "yd", "gal", "inches", "feet"),
        *("sec", "secs", "min", "mins", "h", "hr", "hrs", "d", "wk", "wks", "mo", "mos", "yr"),
        *("yrs", "°C", "°F", "℃", "℉", "K", "%"),
        *_MEASUREMENT_WORDS,
        *(w + "s" for w in _MEASUREMENT_WORDS if w not in ("foot", "inch", "kelvin", "percent")),
    }
)
"""The unit symbols and names (as written, µ/μ spelt ``u``) that make a gold string a
measurement: mass, length, volume, time, temperature, amount and concentration, percent,
energy, power, pressure, frequency and voltage, with their common SI prefixes. Left out on
purpose, though pint reads them: words and letters that are something else in documents
("in", "at", "a", "pcs" (parsec), "pt", "ct", "B", "A", "C", "D", "G", "t", "am"/"pm")."""

_UNIT_WORD = re.compile(r"[A-Za-z°%℃℉]+")
_EXPONENT = r"(?:\^[-+]?\d+|(?<=[A-Za-z])-\d+)?"  # "h-1" as normalise_unit reads it
_UNIT_SHAPE = re.compile(
    rf"^(?:/\s*|per\s+)?{_UNIT_WORD.pattern}{_EXPONENT}"
    rf"(?:(?:\s*[/*]\s*|\s+(?:per\s+)?){_UNIT_WORD.pattern}{_EXPONENT})*$"
)
_CURRENCY_SIGNS = frozenset("$€£¥₹")
_GLUED = frozenset("%gLl")  # one-character units that may touch the number: "12%", "500g"


def is_measurement(text: str) -> bool:
    """Whether `text` is plainly a number with a unit of measurement: a number (no currency
    sign), then units of :data:`MEASUREMENT_UNITS` joined by ``/``, ``·``, ``*``, spaces or
    "per", each with an optional exponent. A unit of one letter alone counts
    only after a space ("50 K", "30 s"; but "500g", "1.5L" as labels write them): "50K", "5M",
    "30s", "1990s" are as often thousands, millions and decades as kelvin, molar or seconds.
    ISO-8601 durations (``P3Y``) are quantities to :func:`parse_quantity` but not measurements
    here.

    >>> [is_measurement(t) for t in ("1.2 kg", "34.4 l", "8.7 s⁻¹", "−18 °C", "12%", "5 mg/L")]
    [True, True, True, True, True, True]
    >>> [is_measurement(t) for t in ("12 items", "3 pcs", "5 stars", "2024-01-05", "A4", "50K")]
    [False, False, False, False, False, False]
    """
    # most strings are words: answered before the memo (which they would fill)
    return may_be_measurement(text) and _measurement(text)


def may_be_measurement(value: Any) -> bool:
    """Whether `value` may be a measurement: a string that starts with a digit, a space, a
    sign or a point (:func:`is_measurement` is False for any other value)."""
    if type(value) is not str:
        return False
    head = value[:1]
    return head.isdigit() or head in _LEADS


_LEADS = frozenset(" \t-+−–.")


@lru_cache(maxsize=65536)
def _measurement(text: str) -> bool:
    m = _QUANTITY_RE.match(_TIMES_TEN.sub(_as_exponent, text))
    if m is None or parse_number(m.group("num")) is None:
        return False
    if _CURRENCY_SIGNS.intersection(m.group("num")):
        return False
    unit = m.group("unit").replace("µ", "u").replace("μ", "u").translate(_DEGREE)
    unit = _SUPERSCRIPT_RUN.sub(lambda r: "^" + r.group(0).translate(_SUPERSCRIPTS), unit)
    unit = unit.replace("−", "-").replace("° C", "°C").replace("° F", "°F")
    unit = unit.replace("·", "*").replace("⋅", "*")
    if not _UNIT_SHAPE.match(unit):
        return False
    words = [w for w in _UNIT_WORD.findall(unit) if w != "per"]
    if not words or not all(w in MEASUREMENT_UNITS for w in words):
        return False
    # "50K", "30s": a lone letter glued to the number. (pint is not asked: every unit of the
    # list reads in pint, and so do their products, quotients and powers; building its
    # registry costs 0.4 s, paid only when two values in different units are compared.)
    spaced = m.start("unit") > m.end("num")
    return len(unit) > 1 or unit in _GLUED or spaced
