"""Typed comparison: each field type reads a raw JSON value once into a canonical form, and
compares two canonical forms (gold first, prediction second).

A comparator's ``kind`` tells the aligner how to compare many values at once:

- ``exact``: canonical forms are hashable and equal exactly when the values match;
- ``numeric``: canonical forms are floats compared with a tolerance relative to gold;
- ``fuzzy``: canonical forms are strings compared by rapidfuzz similarity;
- ``generic``: only :meth:`Comparator.equal` knows.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import lru_cache
from typing import Any, Final, Literal

from rapidfuzz import fuzz

from ..config import Config, FieldRule
from .numeric import parse_number
from .units import convert, is_measurement, normalise_unit, parse_quantity


class _TypeError:
    """Sentinel: the raw value cannot be read as the field's type."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "TYPE_ERROR"


TYPE_ERROR: Final = _TypeError()
Kind = Literal["exact", "numeric", "fuzzy", "generic"]

_TRUE = frozenset({"true", "yes", "y", "1", "t"})
_FALSE = frozenset({"false", "no", "n", "0", "f"})
_RATIO_SPLIT = re.compile(r"\s*[:/]\s*")
_REL_EPS = 1e-9  # float rounding slack on tolerance boundaries


def as_text(value: Any) -> str | None:
    """A scalar as the string a person would read; None for objects and lists."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(int(value)) if value.is_integer() and abs(value) < 1e16 else repr(value)
    return None


@dataclass(frozen=True, slots=True)
class Comparator:
    """Reads and compares the values of one field type (with its rule's options).

    ``canon(raw)`` gives the canonical comparable form of a raw value, or TYPE_ERROR. It is a
    function chosen once per comparator (no per-value dispatch on the type): reading values is
    the inner loop of list alignment.
    """

    type: str
    kind: Kind
    rule: FieldRule
    date_formats: tuple[str, ...] = ("%Y-%m-%d",)
    canon: Callable[[Any], Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "canon", self._reader())

    # -- reading -------------------------------------------------------------------------
    def _reader(self) -> Callable[[Any], Any]:
        t = self.type
        if t == "text":
            return _read_text_folded if self.rule.casefold else _read_text
        if t == "number":
            return _read_number
        if t == "id":
            return _read_id
        if t == "enum":
            return _read_enum
        if t == "bool":
            return _read_bool
        if t == "date":
            formats = self.date_formats
            return lambda raw: _read_date(raw, formats) if type(raw) is str else TYPE_ERROR
        if t == "ratio":
            return lambda raw: _read_ratio(raw) if type(raw) is str else TYPE_ERROR
        if t == "quantity":
            return self._read_quantity
        raise AssertionError(f"unknown type {t}")

    def _read_quantity(self, raw: Any) -> Any:
        if isinstance(raw, bool):
            return TYPE_ERROR
        if isinstance(raw, int | float):
            v = parse_number(raw)  # None for NaN, infinities and ints beyond the float range
            q: tuple[float, str] | None = None if v is None else (v, "")
        elif isinstance(raw, str):
            q = parse_quantity(raw)
        else:
            return TYPE_ERROR
        if q is None:
            return TYPE_ERROR
        if not q[1] and self.rule.unit:
            return (q[0], normalise_unit(self.rule.unit))
        return q

    # -- comparing -----------------------------------------------------------------------
    def equal(self, g: Any, p: Any) -> bool:
        """Whether prediction `p` matches gold `g` (both canonical, neither TYPE_ERROR)."""
        t = self.type
        if t == "number":
            return self.close(g, p)
        if t == "text" and self.rule.fuzzy is not None:
            return g == p or fuzz.ratio(g, p) >= self.rule.fuzzy * 100.0 - _REL_EPS
        if t == "quantity":
            gv, gu = g
            pv, pu = p
            if not pu:  # a bare predicted number is read in the gold unit
                pu = gu
            conv = convert(pv, pu, gu)
            return conv is not None and self.close(gv, conv)
        if t == "ratio":
            if len(g) != len(p):
                return False
            return all(self.close(a, b) for a, b in zip(g, p, strict=True))
        return bool(g == p)

    def close(self, g: float, p: float) -> bool:
        """|p − g| ≤ max(tol, rel_tol·|g|), with float rounding slack.

        The slack is relative to the values (never absolute), so that without a tolerance
        5e-9 and 6e-9 stay different.
        """
        if g == p:
            return True
        bound = max(self.rule.tol or 0.0, (self.rule.rel_tol or 0.0) * abs(g))
        return abs(p - g) <= bound + _REL_EPS * max(abs(g), abs(p))


def _read_text(raw: Any) -> Any:
    if type(raw) is str:
        return " ".join(raw.split())
    s = as_text(raw)
    return TYPE_ERROR if s is None else " ".join(s.split())


def _read_text_folded(raw: Any) -> Any:
    s = _read_text(raw)
    return s if s is TYPE_ERROR else s.casefold()


def _read_number(raw: Any) -> Any:
    t = type(raw)
    if t is float:  # the common cases first: JSON numbers
        return raw if raw - raw == 0.0 else TYPE_ERROR  # NaN and infinities fail x - x == 0
    if t is int and -(2**53) <= raw <= 2**53:
        return float(raw)
    v = parse_number(raw)
    return TYPE_ERROR if v is None else v


def _read_id(raw: Any) -> Any:
    s = as_text(raw)
    return TYPE_ERROR if s is None else s.strip()


def _read_enum(raw: Any) -> Any:
    s = as_text(raw)
    return TYPE_ERROR if s is None else " ".join(s.split()).casefold()


def _read_bool(raw: Any) -> Any:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int | float) and raw in (0, 1):
        return bool(raw)
    if isinstance(raw, str):
        s = raw.strip().casefold()
        if s in _TRUE:
            return True
        if s in _FALSE:
            return False
    return TYPE_ERROR


@lru_cache(maxsize=65536)
def _read_date(raw: str, formats: tuple[str, ...]) -> Any:
    s = raw.strip()
    for fmt in formats:
        try:
            if fmt == _ISO_DAY and _is_iso_day(s):  # strptime's reading, without strptime
                return date(int(s[:4]), int(s[5:7]), int(s[8:]))
            return datetime.strptime(s, fmt).date()
        except ValueError:
            continue
    try:  # ISO 8601 is always understood, with or without a time part (nothing else after)
        return datetime.fromisoformat(s).date()
    except ValueError:
        return TYPE_ERROR


_ISO_DAY = "%Y-%m-%d"


def reads_as_date(raw: str, formats: tuple[str, ...]) -> bool:
    """Whether the scorer reads `raw` as a date with `formats` (then ISO 8601).

    >>> reads_as_date("31.01.2024", ("%d.%m.%Y",)), reads_as_date("31/01/2024", ("%m/%d/%Y",))
    (True, False)
    """
    return _read_date(raw, formats) is not TYPE_ERROR


def _is_iso_day(s: str) -> bool:
    """`s` is 4, 2 and 2 ASCII digits joined by dashes: what ``%Y-%m-%d`` reads as those
    numbers (the most common date format; strptime costs ~10 µs a call)."""
    digits = s[:4] + s[5:7] + s[8:]
    return len(s) == 10 and s[4] == s[7] == "-" and digits.isascii() and digits.isdigit()


@lru_cache(maxsize=65536)
def _read_ratio(raw: str) -> Any:
    parts = _RATIO_SPLIT.split(raw.strip())
    if len(parts) < 2:
        return TYPE_ERROR
    values = [parse_number(p) for p in parts]
    if any(v is None or v < 0 for v in values):
        return TYPE_ERROR
    nums = sorted(v for v in values if v is not None)
    smallest = next((v for v in nums if v > 0), None)
    if smallest is None:
        return TYPE_ERROR
    return tuple(round(v / smallest, 12) for v in nums)


def _kind(type_: str, rule: FieldRule) -> Kind:
    if type_ == "number":
        return "numeric" if (rule.tol or rule.rel_tol) else "exact"
    if type_ == "text":
        return "fuzzy" if rule.fuzzy is not None else "exact"
    if type_ in ("quantity", "ratio"):
        return "generic"
    return "exact"


_DEFAULT_RULE = FieldRule()
TEXT: Final = Comparator("text", "exact", _DEFAULT_RULE)
"""Plain text comparison: the fallback for a gold value that does not read as its type."""
DATE_HINT = re.compile(r"^\s*\d{1,4}[-./ ]\d{1,2}[-./ ]\d{1,4}(?:[T ][\d:.+\-Z]*)?\s*$")


class Comparators:
    """Resolves the comparator of a leaf: the configured type, else one inferred from the gold
    value (bool → bool, number → number, a string that reads as a date → date, a measurement
    such as "1.2 kg" → quantity, else text).

    A field is a quantity only when *every* gold value of its path is a measurement
    (:func:`~extract_mlflow.fields.units.is_measurement`): `mixed` names the paths whose gold
    values are partly measurements (found by a first pass over the gold set), where the
    measurements are read as before, as text."""

    def __init__(self, config: Config, mixed: frozenset[str] = frozenset()) -> None:
        self._config = config
        self._mixed = mixed
        self._by_key: dict[tuple[str, str], Comparator] = {}
        self._resolvers: dict[str, Callable[[Any], Comparator]] = {}
        self._formats = config.date_formats

    def configured_type(self, path: str) -> str | None:
        rule = self._config.fields.get(path)
        return rule.type if rule is not None else None

    def infer_type(self, gold: Any, path: str | None = None) -> str:
        """The type gold value `gold` infers (at `path`: a measurement infers ``quantity``
        unless the path is mixed; without a path, never)."""
        if isinstance(gold, bool):
            return "bool"
        if isinstance(gold, int | float):
            return "number"
        if isinstance(gold, str):
            if DATE_HINT.match(gold) and _read_date(gold, self._formats) is not TYPE_ERROR:
                return "date"
            if path is not None and path not in self._mixed and is_measurement(gold):
                return "quantity"
        return "text"

    def for_leaf(self, path: str, gold: Any) -> Comparator:
        """The comparator for gold value `gold` at `path`."""
        r = self._resolvers.get(path)
        return (r or self.resolver(path))(gold)

    def resolver(self, path: str) -> Callable[[Any], Comparator]:
        """A function gold value -> comparator for one path, built once per path: a configured
        type answers at once; otherwise the answer is cached per Python type, except for
        strings that may be dates or measurements (those starting with a digit, a space, a
        sign or a point are checked one by one)."""
        r = self._resolvers.get(path)
        if r is not None:
            return r
        rule = self._config.fields.get(path)
        if rule is not None and rule.type:
            comp = self._resolve(path, None)
            r = self._resolvers[path] = lambda _value: comp
            return r
        by_type: dict[type, Comparator] = {}
        resolve = self._resolve

        def infer(value: Any) -> Comparator:
            t = type(value)
            if t is str:
                head = value[:1]
                if head.isdigit() or head.isspace() or head in _SIGNED:
                    return resolve(path, value)
            c = by_type.get(t)
            if c is None:
                c = by_type[t] = resolve(path, value)
            return c

        self._resolvers[path] = infer
        return infer

    def _resolve(self, path: str, gold: Any) -> Comparator:
        rule = self._config.fields.get(path)
        type_ = rule.type if rule is not None and rule.type else self.infer_type(gold, path)
        key = (path, type_)
        comp = self._by_key.get(key)
        if comp is None:
            r = rule or _DEFAULT_RULE
            comp = Comparator(type_, _kind(type_, r), r, self._formats)
            self._by_key[key] = comp
        return comp


_SIGNED: Final = frozenset("-+−–.")
"""First characters of a measurement besides digits and spaces ("-18 °C", ".5 mg")."""
