"""normalize: typed comparison, through the public path Comparators(config).for_leaf(...).

Each case states gold, prediction and the hand-worked verdict; `compare` returns True/False,
or "type_error" when a value cannot be read as the field type.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from extract_mlflow.config import Config, FieldRule
from extract_mlflow.core.paths import is_absent
from extract_mlflow.fields.normalize import TYPE_ERROR, Comparator, Comparators, as_text

PATH = "x"


def comparator(gold: Any, *, config: Config | None = None, **rule: Any) -> Comparator:
    if config is None:
        config = Config(fields={PATH: FieldRule(**rule)} if rule else {})
    return Comparators(config).for_leaf(PATH, gold)


def compare(gold: Any, pred: Any, *, config: Config | None = None, **rule: Any) -> bool | str:
    comp = comparator(gold, config=config, **rule)
    g, p = comp.canon(gold), comp.canon(pred)
    assert g is not TYPE_ERROR, f"gold {gold!r} does not read as {comp.type}"
    if p is TYPE_ERROR:
        return "type_error"
    return comp.equal(g, p)


# -- number --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "pred", "expected"),
    [
        (1250, "1,250.00", True),
        (1250, "$1,250", True),
        (1200, "1.2e3", True),
        (-5, "−5", True),
        (-12, "(12)", True),
        (3.5, "3,5", True),
        (1250.0, "1.250,00", True),
        (1250, 1250.0, True),
        (1250, "1250.01", False),
        (1250, "1,251", False),
        (0, "0.0", True),
        (0, "-0", True),
        (5, "five", "type_error"),
        (5, True, "type_error"),
        (5, [5], "type_error"),
        (5, "inf", "type_error"),
    ],
)
def test_number_without_tolerance(gold: Any, pred: Any, expected: bool | str) -> None:
    assert compare(gold, pred, type="number") == expected


def test_number_is_inferred_from_a_json_number() -> None:
    assert compare(1250, "1,250.00") is True
    assert comparator(2.5).type == "number"


@pytest.mark.parametrize(
    ("gold", "pred", "tol", "expected"),
    [
        (10, 10.5, 0.5, True),  # exactly on the bound
        (10, 9.5, 0.5, True),
        (10, 10.51, 0.5, False),
        (10, 9.49, 0.5, False),
        (0.3, 0.4, 0.1, True),  # 0.4 − 0.3 = 0.10000000000000003 in floats: still on the bound
        (0.3, 0.2, 0.1, True),
        (0, 0.1, 0.1, True),
        (0, 0.1001, 0.1, False),
        (1e6, 1e6 + 0.5, 0.5, True),
        (1e6, 1e6 + 0.6, 0.5, False),
    ],
)
def test_number_absolute_tolerance(gold: float, pred: float, tol: float, expected: bool) -> None:
    assert compare(gold, pred, type="number", tol=tol) is expected


@pytest.mark.parametrize(
    ("gold", "pred", "rel_tol", "expected"),
    [
        (100, 110, 0.10, True),  # |p − g| = 10 = 0.10·100: on the bound
        (100, 90, 0.10, True),
        (100, 110.01, 0.10, False),
        (100, 89.99, 0.10, False),
        (3, 3.3, 0.10, True),
        (3, 2.7, 0.10, True),
        (1.1, 1.21, 0.10, True),
        (-200, -220, 0.10, True),  # relative to |g|
        (-200, -180, 0.10, True),
        (-200, 180, 0.10, False),
        (0, 0, 0.10, True),
        (0, 1e-12, 0.10, False),  # relative to a zero gold, only zero matches
        (2.5e-9, 2.75e-9, 0.10, True),
        (2.5e-9, 2.8e-9, 0.10, False),
    ],
)
def test_number_relative_tolerance(
    gold: float, pred: float, rel_tol: float, expected: bool
) -> None:
    assert compare(gold, pred, type="number", rel_tol=rel_tol) is expected


def test_number_tol_and_rel_tol_take_the_larger_bound() -> None:
    # bound = max(tol, rel_tol·|g|): for g = 100, max(2, 5) = 5; for g = 10, max(2, 0.5) = 2.
    assert compare(100, 105, type="number", tol=2, rel_tol=0.05) is True
    assert compare(100, 105.1, type="number", tol=2, rel_tol=0.05) is False
    assert compare(10, 12, type="number", tol=2, rel_tol=0.05) is True
    assert compare(10, 12.1, type="number", tol=2, rel_tol=0.05) is False


def test_relative_tolerance_is_relative_to_gold_so_not_symmetric() -> None:
    # g=100, p=111: |11| > 0.10·100 = 10. Swapped, g=111, p=100: |11| ≤ 0.10·111 = 11.1.
    assert compare(100, 111, type="number", rel_tol=0.10) is False
    assert compare(111, 100, type="number", rel_tol=0.10) is True


def test_tiny_numbers_are_not_equal_by_rounding_slack() -> None:
    # Without a tolerance, 5e-9 and 6e-9 are different numbers (a 20 % difference).
    assert compare(5e-9, 6e-9, type="number") is False
    assert compare(1e-10, 5e-10) is False
    assert compare(0, 1e-10) is False
    assert compare(5e-9, "5e-9") is True


def test_number_kind() -> None:
    assert comparator(1, type="number").kind == "exact"
    assert comparator(1, type="number", tol=0.1).kind == "numeric"
    assert comparator(1, type="number", rel_tol=0.1).kind == "numeric"


# -- quantity ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "pred", "expected"),
    [
        ("1.8 min⁻¹", "108 h⁻¹", True),
        ("108 h⁻¹", "1.8 min⁻¹", True),
        ("1.8 min⁻¹", "108 h-1", True),
        ("1.8 min⁻¹", "108 /h", True),
        ("1.8 min⁻¹", "108 per hour", True),
        ("1.8 min⁻¹", "0.03 s⁻¹", True),
        ("1.8 min⁻¹", "107 h⁻¹", False),
        ("50 µM", "0.05 mM", True),
        ("50 μM", "0.05 mM", True),  # Greek mu
        ("50 µM", "50 μM", True),
        ("50 µM", "5e-5 M", True),
        ("50 µM", "0.5 mM", False),
        ("25 °C", "298.15 K", True),  # offset conversion
        ("298.15 K", "25 °C", True),
        ("25 °C", "25 K", False),
        ("2 h", "120 min", True),
        ("2 h", "7200 s", True),
        ("532 nm", "0.532 µm", True),
        ("5 %", "5%", True),
        ("5 %", "0.05", False),  # a bare number is read in the gold unit: 0.05 %
        ("50 µM", "50", True),  # ... so 50 is 50 µM
        ("50 µM", 50, True),
        ("50 µM", "0.05", False),
        ("50 µM", "5 h", False),  # incompatible units: a wrong value
        ("50 µM", "50 bogus", False),
        ("50 µM", "fifty", "type_error"),
        ("50 µM", True, "type_error"),
        ("50 µM", float("nan"), "type_error"),
        pytest.param("50 µM", 10**400, "type_error", id="int-beyond-float-range"),
        ("50 µM", {"value": 50}, "type_error"),
    ],
)
def test_quantity(gold: Any, pred: Any, expected: bool | str) -> None:
    assert compare(gold, pred, type="quantity") == expected


def test_quantity_rule_unit_applies_to_bare_numbers() -> None:
    rule: dict[str, Any] = {"type": "quantity", "unit": "µM"}
    assert compare(50, "0.05 mM", **rule) is True
    assert compare("50", "0.05 mM", **rule) is True
    assert compare("0.05 mM", 50, **rule) is True  # a bare prediction is in µM too
    assert compare("0.05 mM", "50 µM", **rule) is True
    assert compare(50, "50 mM", **rule) is False
    assert comparator(50, **rule).canon(50) == (50.0, "uM")


def test_quantity_tolerance_is_in_the_gold_unit() -> None:
    # 0.104 M = 104 mM: |104 − 100| = 4 ≤ 0.05·100; 0.106 M = 106 mM is not.
    assert compare("100 mM", "0.104 M", type="quantity", rel_tol=0.05) is True
    assert compare("100 mM", "0.106 M", type="quantity", rel_tol=0.05) is False
    # 298.5 K = 25.35 °C (within 0.5 of 25 °C); 299 K = 25.85 °C is not.
    assert compare("25 °C", "298.5 K", type="quantity", tol=0.5) is True
    assert compare("25 °C", "299 K", type="quantity", tol=0.5) is False


def test_quantity_tiny_values_are_not_equal_by_rounding_slack() -> None:
    assert compare("5e-9 M", "6e-9 M", type="quantity") is False
    assert compare("5 nM", "5e-9 M", type="quantity") is True


def test_quantity_bare_gold_and_unit_prediction() -> None:
    # Current behaviour: a bare gold number has no unit, so a prediction with a unit does not
    # convert to it (only a bare prediction is read in the gold's unit).
    assert compare("50", "50 µM", type="quantity") is False
    assert compare("0.05", "5 %", type="quantity") is True  # % converts to a bare fraction


# -- ratio ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "pred", "expected"),
    [
        ("4:1", "1:4", True),
        ("2:8", "1:4", True),
        ("1:4", "25:100", True),
        ("1 : 4", "4:1", True),
        ("1/4", "4:1", True),
        ("1.5:3", "1:2", True),
        ("1,5:3", "1:2", True),  # decimal comma
        ("1:1:2", "2:1:1", True),
        ("1:1:2", "2:2:4", True),
        ("1:1:2", "1:2:2", False),
        ("1:2", "1:2:3", False),
        ("1:3", "1:4", False),
        ("0:1", "0:5", True),
        ("1:4", "a:b", "type_error"),
        ("1:4", "4", "type_error"),
        ("1:4", "1:-4", "type_error"),
        ("1:4", "0:0", "type_error"),
        ("1:4", 4, "type_error"),
    ],
)
def test_ratio(gold: str, pred: Any, expected: bool | str) -> None:
    assert compare(gold, pred, type="ratio") == expected


def test_ratio_with_tolerance() -> None:
    # 1:4.3 → (1, 4.3): |4.3 − 4| = 0.3 ≤ 0.10·4; 1:4.5 is not.
    assert compare("1:4", "4.3:1", type="ratio", rel_tol=0.10) is True
    assert compare("1:4", "1:4.5", type="ratio", rel_tol=0.10) is False


# -- date ----------------------------------------------------------------------------------


def test_date_formats_are_tried_in_order() -> None:
    config = Config(
        date_formats=("%d/%m/%Y", "%m/%d/%Y"),
        fields={PATH: FieldRule(type="date")},
    )
    comp = Comparators(config).for_leaf(PATH, "2026-04-03")
    assert comp.canon("03/04/2026") == dt.date(2026, 4, 3)  # day first wins
    assert comp.canon("03/14/2026") == dt.date(2026, 3, 14)  # day-first fails, month-first
    assert comp.canon("2026-03-14") == dt.date(2026, 3, 14)  # ISO always understood
    assert comp.canon("2026-03-14T10:30:00Z") == dt.date(2026, 3, 14)
    assert comp.canon("2026-03-14 10:30") == dt.date(2026, 3, 14)
    assert comp.equal(comp.canon("2026-04-03"), comp.canon("03/04/2026"))
    reversed_ = Config(date_formats=("%m/%d/%Y", "%d/%m/%Y"), fields={PATH: FieldRule(type="date")})
    assert Comparators(reversed_).for_leaf(PATH, "x").canon("03/04/2026") == dt.date(2026, 3, 4)


@pytest.mark.parametrize(
    ("gold", "pred", "expected"),
    [
        ("2026-03-14", "2026-03-14", True),
        ("2026-03-14", " 2026-03-14 ", True),
        ("2026-03-14", "2026-3-14", True),
        ("2026-03-14", "2026-03-14T23:59:59", True),
        ("2026-03-14", "2026-03-15", False),
        ("2026-03-14", "14.03.2026", "type_error"),  # not a configured format
        ("2026-03-14", "March 14, 2026", "type_error"),
        ("2026-03-14", "2026-02-30", "type_error"),
        ("2026-03-14", "2026-03-14 or 2026-03-15", "type_error"),  # nothing after the date
        ("2026-03-14", "2026-03-14T99:99", "type_error"),
        ("2026-03-14", 20260314, "type_error"),
    ],
)
def test_date(gold: str, pred: Any, expected: bool | str) -> None:
    assert compare(gold, pred) == expected  # type inferred from the gold


def test_date_with_configured_format() -> None:
    config = Config(date_formats=("%Y-%m-%d", "%d.%m.%Y"))
    assert compare("2026-03-14", "14.03.2026", config=config) is True
    assert compare("14.03.2026", "2026-03-14", config=config) is True


# -- text ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "pred", "rule", "expected"),
    [
        ("Acme Corp", "  Acme   Corp\n", {}, True),
        ("Acme\tCorp", "Acme Corp", {}, True),
        ("Acme Corp", "ACME CORP", {}, False),
        ("Acme Corp", "ACME CORP", {"casefold": True}, True),
        ("Straße", "STRASSE", {"casefold": True}, True),  # casefold, not lower
        ("Acme Corp", "Acme Corp.", {}, False),
        # rapidfuzz ratio = 100·(1 − indel/(|a|+|b|)); kitten/sitting: LCS 4, indel 5 → 61.5
        ("kitten", "sitting", {"fuzzy": 0.6}, True),
        ("kitten", "sitting", {"fuzzy": 0.62}, False),
        # abcd/abce: LCS 3, indel 2 → 100·(1 − 2/8) = 75.0, exactly on the bound
        ("abcd", "abce", {"fuzzy": 0.75}, True),
        ("abcd", "abce", {"fuzzy": 0.76}, False),
        ("ABCD", "abce", {"fuzzy": 0.75, "casefold": True}, True),
        ("ABCD", "abce", {"fuzzy": 0.75}, False),
        ("abc", "xyz", {"fuzzy": 0.0}, True),
        ("12", 12, {}, True),  # a number reads as its text
        ("Acme", {"name": "Acme"}, {}, "type_error"),
        ("Acme", ["Acme"], {}, "type_error"),
    ],
)
def test_text(gold: str, pred: Any, rule: dict[str, Any], expected: bool | str) -> None:
    assert compare(gold, pred, type="text", **rule) == expected


def test_text_kind() -> None:
    assert comparator("a", type="text").kind == "exact"
    assert comparator("a", type="text", fuzzy=0.9).kind == "fuzzy"


# -- id, enum, bool ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "pred", "expected"),
    [
        ("INV-001", " INV-001 ", True),
        ("INV-001", "inv-001", False),  # exact: case matters
        ("INV-001", "INV-0001", False),
        ("INV 001", "INV  001", False),  # only trimmed, not whitespace-normalised
        (123, "123", True),
        ("123", 123, True),
        (123, 123.0, True),
        (123, "0123", False),
        ("A1", ["A1"], "type_error"),
    ],
)
def test_id(gold: Any, pred: Any, expected: bool | str) -> None:
    assert compare(gold, pred, type="id") == expected


@pytest.mark.parametrize(
    ("gold", "pred", "expected"),
    [
        ("Paid", "PAID", True),
        ("Paid", " paid ", True),
        ("in progress", "In  Progress", True),
        ("Paid", "unpaid", False),
        ("Paid", "Pai", False),
        ("Paid", None, "type_error"),
    ],
)
def test_enum(gold: Any, pred: Any, expected: bool | str) -> None:
    assert compare(gold, pred, type="enum") == expected


@pytest.mark.parametrize(
    ("pred", "expected"),
    [
        (True, True),
        ("true", True),
        ("True", True),
        (" TRUE ", True),
        ("yes", True),
        ("Yes", True),
        ("1", True),
        (1, True),
        (1.0, True),
        (False, False),
        ("false", False),
        ("no", False),
        ("NO", False),
        ("0", False),
        (0, False),
    ],
)
def test_bool_spellings(pred: Any, expected: bool) -> None:
    comp = comparator(True, type="bool")
    assert comp.canon(pred) is expected
    assert compare(True, pred, type="bool") is expected
    assert compare(False, pred, type="bool") is (not expected)


@pytest.mark.parametrize("pred", ["maybe", 2, -1, 0.5, "", None, [True]])
def test_bool_type_errors(pred: Any) -> None:
    assert comparator(True, type="bool").canon(pred) is TYPE_ERROR


# -- inference, sentinel, helpers ----------------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "expected"),
    [
        (True, "bool"),
        (False, "bool"),
        (3, "number"),
        (2.5, "number"),
        ("2026-03-14", "date"),
        ("2026-03-14T10:00:00", "date"),
        ("2026-13-45", "text"),  # looks like a date, is not one
        ("14.03.2026", "text"),  # not a configured format
        ("hello", "text"),
        ("1,250", "text"),  # a numeric-looking string stays text without config
        ("4:1", "text"),
    ],
)
def test_inference_without_config(gold: Any, expected: str) -> None:
    assert Comparators(Config()).for_leaf("anything", gold).type == expected


def test_inference_uses_configured_date_formats() -> None:
    config = Config(date_formats=("%d.%m.%Y",))
    assert Comparators(config).for_leaf("d", "14.03.2026").type == "date"


def test_configured_type_wins_over_inference() -> None:
    config = Config(fields={"a": FieldRule(type="id"), "b": FieldRule(rel_tol=0.1)})
    comps = Comparators(config)
    assert comps.for_leaf("a", 123).type == "id"
    assert comps.for_leaf("b", 100).type == "number"  # rule without type: inferred
    assert comps.for_leaf("b", 100).rule.rel_tol == 0.1
    assert comps.configured_type("a") == "id"
    assert comps.configured_type("b") is None
    assert comps.configured_type("c") is None
    assert comps.for_leaf("a", 1) is comps.for_leaf("a", 2)  # cached per (path, type)


def test_type_error_sentinel() -> None:
    assert repr(TYPE_ERROR) == "TYPE_ERROR"
    for type_, raw in [
        ("number", "abc"),
        ("quantity", "abc"),
        ("ratio", "abc"),
        ("date", "abc"),
        ("text", {"a": 1}),
        ("id", [1]),
        ("enum", {"a": 1}),
        ("bool", "abc"),
    ]:
        assert comparator("g", type=type_).canon(raw) is TYPE_ERROR, type_


@pytest.mark.parametrize(
    ("value", "absent"),
    [
        (None, True),
        ("", True),
        ("  \n", True),
        ([], True),
        ({}, True),
        (0, False),
        (False, False),
        ("0", False),
        ([None], False),
    ],
)
def test_is_absent(value: Any, absent: bool) -> None:
    assert is_absent(value) is absent


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("a", "a"),
        (True, "true"),
        (False, "false"),
        (12, "12"),
        (12.0, "12"),
        (1.5, "1.5"),
        (None, None),
        ([1], None),
        ({"a": 1}, None),
    ],
)
def test_as_text(value: Any, text: str | None) -> None:
    assert as_text(value) == text


# -- properties ----------------------------------------------------------------------------

finite = st.floats(allow_nan=False, allow_infinity=False)
tolerances = st.one_of(st.none(), st.floats(min_value=0, max_value=10, allow_nan=False))
ratio_parts = st.lists(
    st.floats(min_value=0, max_value=1e9, allow_nan=False, allow_subnormal=False),
    min_size=2,
    max_size=4,
).filter(lambda xs: any(x > 0 for x in xs))


def _self_equal(comp: Comparator, raw: Any) -> bool:
    c = comp.canon(raw)
    return c is not TYPE_ERROR and comp.equal(c, comp.canon(raw))


@given(finite, tolerances, tolerances)
def test_number_equals_itself(x: float, tol: float | None, rel_tol: float | None) -> None:
    comp = comparator(x, type="number", tol=tol, rel_tol=rel_tol)
    assert _self_equal(comp, x)
    assert _self_equal(comp, repr(x))
    assert comp.equal(comp.canon(x), comp.canon(repr(x)))


@given(
    st.floats(min_value=0, max_value=1e12, allow_nan=False),
    st.sampled_from(
        [
            "µM",
            "μM",
            "mM",
            "M",
            "h",
            "min",
            "s",
            "min⁻¹",
            "h-1",
            "/h",
            "°C",
            "K",
            "nm",
            "%",
            "",
            "bogus",
        ]
    ),
)
def test_quantity_equals_itself(x: float, unit: str) -> None:
    assert _self_equal(comparator("1", type="quantity"), f"{x!r} {unit}")


@given(ratio_parts)
def test_ratio_equals_itself_in_any_order(parts: list[float]) -> None:
    comp = comparator("1:1", type="ratio")
    written = ":".join(repr(p) for p in parts)
    rotated = ":".join(repr(p) for p in [*parts[1:], parts[0]])
    assert _self_equal(comp, written)
    assert comp.equal(comp.canon(written), comp.canon(rotated))


@given(st.dates(min_value=dt.date(1000, 1, 1)), st.sampled_from(["%Y-%m-%d", "%d.%m.%Y"]))
def test_date_equals_itself(day: dt.date, fmt: str) -> None:
    config = Config(date_formats=("%d.%m.%Y",), fields={PATH: FieldRule(type="date")})
    comp = Comparators(config).for_leaf(PATH, day.isoformat())
    assert comp.canon(day.strftime(fmt)) == day
    assert comp.equal(comp.canon(day.isoformat()), comp.canon(day.strftime(fmt)))


@given(st.text(), st.booleans(), st.one_of(st.none(), st.floats(min_value=0, max_value=1)))
def test_text_equals_itself(s: str, casefold: bool, fuzzy: float | None) -> None:
    assert _self_equal(comparator(s, type="text", casefold=casefold, fuzzy=fuzzy), s)


@given(st.one_of(st.text(), st.integers()), st.sampled_from(["id", "enum"]))
def test_id_and_enum_equal_themselves(value: str | int, type_: str) -> None:
    assert _self_equal(comparator(value, type=type_), value)


@given(st.sampled_from([True, False, "true", "false", "yes", "no", "1", "0", 1, 0]))
def test_bool_equals_itself(value: Any) -> None:
    assert _self_equal(comparator(True, type="bool"), value)


@given(st.one_of(st.booleans(), finite, st.integers(), st.text()))
def test_inferred_comparator_equals_itself(gold: Any) -> None:
    comp = Comparators(Config()).for_leaf(PATH, gold)
    assert _self_equal(comp, gold)


moderate = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_subnormal=False)


@given(moderate, moderate, st.floats(min_value=0, max_value=100, allow_nan=False))
def test_absolute_tolerance_is_symmetric(g: float, p: float, tol: float) -> None:
    comp = comparator(g, type="number", tol=tol)
    assert comp.equal(g, p) == comp.equal(p, g)


@given(moderate, moderate, st.floats(min_value=0, max_value=1, allow_nan=False))
@example(1e6, 999999.9999999999, 0.0)  # within the rounding slack: equal, even at rel_tol 0
def test_relative_tolerance_bound_is_the_gold_magnitude(g: float, p: float, r: float) -> None:
    comp = comparator(g, type="number", rel_tol=r)
    if abs(p - g) <= 0.999 * r * abs(g):
        assert comp.equal(g, p)
    # beyond the bound and the comparator's float-rounding slack (1e-9 of the larger magnitude)
    if abs(p - g) > 1.001 * r * abs(g) + 1e-9 * max(abs(g), abs(p)):
        assert not comp.equal(g, p)


@given(moderate, moderate, st.floats(min_value=0, max_value=1, allow_nan=False))
def test_relative_tolerance_favours_the_larger_gold(g: float, p: float, r: float) -> None:
    # The bound scales with |gold|, so a match read from the smaller side also holds from the
    # larger side; the converse fails for some pairs (see the asymmetric case above).
    small, large = sorted((g, p), key=abs)
    comp = comparator(small, type="number", rel_tol=r)
    if comp.equal(small, large):
        assert comp.equal(large, small)


def _strptime_date(raw: str, formats: tuple[str, ...]) -> Any:
    """The reference reading of a date: each format through strptime, then ISO 8601."""
    s = raw.strip()
    for fmt in formats:
        try:
            return dt.datetime.strptime(s, fmt).date()
        except ValueError:
            continue
    try:
        return dt.datetime.fromisoformat(s).date()
    except ValueError:
        return TYPE_ERROR


_DAYISH = st.builds(
    lambda y, m, d, sep, pad: f"{pad}{y}{sep}{m}{sep}{d}{pad}",
    st.sampled_from(["2024", "0000", "0001", "9999", "１２３４", "202", "20245"]),
    st.sampled_from(["01", "1", "12", "13", "00", "02", "٠٢"]),
    st.sampled_from(["01", "29", "30", "31", "7", "00"]),
    st.sampled_from(["-", "/", "."]),
    st.sampled_from(["", " ", "\t"]),
)


@given(raw=st.one_of(_DAYISH, st.text(max_size=12)))
@example(raw="2024-02-29")
@example(raw="2023-02-29")
@example(raw="2024-13-01")
def test_iso_days_read_as_strptime_reads_them(raw: str) -> None:
    """The shortcut for ``%Y-%m-%d`` (no strptime for four, two and two digits) reads every
    string as strptime does: leap days, impossible months, unpadded parts, non-ASCII digits,
    other separators, spaces around."""
    from extract_mlflow.fields import normalize

    for formats in (("%Y-%m-%d",), ("%d.%m.%Y", "%Y-%m-%d")):
        assert normalize._read_date(raw, formats) == _strptime_date(raw, formats)
