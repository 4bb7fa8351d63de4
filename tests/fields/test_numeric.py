"""numeric.parse_number: numbers as people and models write them.

Expected values are worked out by hand from the written form, not taken from the parser.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from extract_mlflow.fields.numeric import parse_number

finite_floats = st.floats(allow_nan=False, allow_infinity=False)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # grouping and decimal marks
        ("1,250.00", 1250.0),
        ("1,250", 1250.0),
        ("12,345,678", 12345678.0),
        ("1,234.5", 1234.5),
        ("3,5", 3.5),  # a decimal comma
        ("0,5", 0.5),
        ("1,25", 1.25),
        ("1.250,00", 1250.0),  # European: dot groups, comma is the decimal mark
        ("1.234.567", 1234567.0),
        ("1.234.567,89", 1234567.89),
        ("1 250,5", 1250.5),  # space groups thousands
        ("12 345 678", 12345678.0),
        ("1\u00a0250", 1250.0),  # no-break space
        ("1\u202f250,5", 1250.5),  # narrow no-break space (French typography)
        ("1'250.50", 1250.5),  # Swiss apostrophe
        ("1.5", 1.5),
        (".5", 0.5),
        ("1.", 1.0),
        ("0", 0.0),
        ("  42  ", 42.0),
        # exponents
        ("1.2e3", 1200.0),
        ("1.2E3", 1200.0),
        ("1.2e+3", 1200.0),
        ("1e-3", 0.001),
        ("2.5e-7", 2.5e-7),
        # signs
        ("−5", -5.0),  # U+2212 minus sign
        ("–5", -5.0),  # en dash, as typeset documents use it
        ("-5", -5.0),
        ("+5", 5.0),
        ("(12)", -12.0),  # accounting negative
        ("(1,250.00)", -1250.0),
        ("($1,250.00)", -1250.0),
        ("−1.2e3", -1200.0),
        # currencies, before or after, symbol or code
        ("$1,250", 1250.0),
        ("$ 1,250.00", 1250.0),
        ("-$5", -5.0),
        ("$-5", -5.0),
        ("€12", 12.0),
        ("12€", 12.0),
        ("£3.50", 3.5),
        ("USD 12", 12.0),
        ("USD12", 12.0),
        ("12 EUR", 12.0),
        ("12 USD", 12.0),
        ("CHF 1'250.50", 1250.5),
    ],
)
def test_written_numbers(text: str, expected: float) -> None:
    assert parse_number(text) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(5, 5.0), (-3, -3.0), (0, 0.0), (2.5, 2.5), (-0.25, -0.25), (10**300, 1e300)],
)
def test_json_numbers(raw: object, expected: float) -> None:
    assert parse_number(raw) == expected


@pytest.mark.parametrize("raw", [True, False])
def test_bools_are_not_numbers(raw: bool) -> None:
    # JSON true is not 1: a bool where a number is expected is a type error.
    assert parse_number(raw) is None


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "   ",
        "abc",
        "12abc",
        "one",
        "1.2.3",  # not a valid dot grouping
        "1,2,3",
        "1,250,00",
        "1.250.00",
        "1_000",
        "5%",  # a percentage is a quantity, not a plain number
        "1.8 min",
        "e5",
        "1e",
        "--5",  # one sign at most
        "(-5)",
        "-(5)",
        "((5))",
        "$--5",
        "1 2",  # a space groups thousands only
        "12 34",
        "1 , 2",
        "3 1",
        None,
        [1],
        {"a": 1},
        b"12",
    ],
)
def test_garbage_is_none(raw: object) -> None:
    assert parse_number(raw) is None


@pytest.mark.parametrize(
    "raw",
    [
        "inf",
        "-inf",
        "Infinity",
        "nan",
        "NaN",
        "1e999",  # overflows to inf
        "-1e999",
        float("inf"),
        float("-inf"),
        float("nan"),
        pytest.param(10**400, id="int-beyond-float-range"),  # Python's json reads these
        pytest.param(-(10**400), id="negative-int-beyond-float-range"),
    ],
)
def test_non_finite_is_none(raw: object) -> None:
    assert parse_number(raw) is None


def test_period_then_comma_groups_commas() -> None:
    # With both marks the later one is the decimal mark, whichever it is.
    assert parse_number("1,234,567.5") == 1234567.5
    assert parse_number("1.234.567,5") == 1234567.5


def test_single_dot_is_a_decimal_point() -> None:
    # Current (documented) choice: "1.250" reads as 1.25, while "1,250" reads as 1250.
    assert parse_number("1.250") == 1.25
    assert parse_number("1,250") == 1250.0


# -- properties ---------------------------------------------------------------------------


@given(finite_floats)
def test_repr_round_trips(x: float) -> None:
    assert parse_number(repr(x)) == x


@given(finite_floats)
def test_json_float_is_itself(x: float) -> None:
    assert parse_number(x) == x


@given(finite_floats)
def test_grouped_two_decimals(x: float) -> None:
    written = f"{x:,.2f}"
    value = parse_number(written)
    assert value is not None
    # grouping removed, the value is exactly the two-decimal rounding of x ...
    assert value == float(f"{x:.2f}")
    # ... which is round(x, 2)
    assert value == pytest.approx(round(x, 2), rel=1e-12, abs=1e-12)


@given(finite_floats)
def test_european_and_spaced_groupings(x: float) -> None:
    us = f"{x:,.2f}"
    european = us.replace(",", "_").replace(".", ",").replace("_", ".")
    spaced = us.replace(",", " ")
    expected = float(f"{x:.2f}")
    assert parse_number(european) == expected
    assert parse_number(spaced) == expected


@given(st.integers(min_value=-(2**53), max_value=2**53))
def test_grouped_integers(n: int) -> None:
    assert parse_number(f"{n:,}") == n
    assert parse_number(n) == n


@given(st.floats(min_value=0, max_value=1e15, allow_nan=False))
def test_accounting_and_currency(x: float) -> None:
    written = f"{x:,.2f}"
    expected = float(f"{x:.2f}")
    assert parse_number(f"({written})") == -expected
    assert parse_number(f"${written}") == expected
    assert parse_number(f"{written} EUR") == expected
    assert parse_number(f"−{written}") == -expected


@given(st.one_of(st.text(), finite_floats, st.integers(), st.booleans(), st.none()))
def test_result_is_finite_float_or_none(raw: object) -> None:
    value = parse_number(raw)
    assert value is None or (isinstance(value, float) and math.isfinite(value))
