"""units: reading "50 µM" / "1.8 min⁻¹" and converting between units.

Conversion factors are the SI definitions (1 h = 60 min = 3600 s, 1 M = 1000 mM = 10⁶ µM,
K = °C + 273.15), worked out by hand.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extract_mlflow.fields import units
from extract_mlflow.fields.units import (
    MEASUREMENT_UNITS,
    _registry,
    convert,
    is_measurement,
    normalise_unit,
    parse_duration,
    parse_quantity,
    unit_map,
)

MICRO_SIGN = "\u00b5"  # µ, the micro sign on keyboards
GREEK_MU = "\u03bc"  # μ, the Greek letter that typeset documents use


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        (f"{MICRO_SIGN}M", "uM"),
        (f"{GREEK_MU}M", "uM"),
        ("uM", "uM"),
        ("mM", "mM"),
        ("M", "M"),
        ("nm", "nm"),
        (f"{MICRO_SIGN}m", "um"),  # micrometre: case matters (µm is not µM)
        ("h", "hour"),
        ("hr", "hour"),
        ("hrs", "hour"),
        ("min", "min"),
        ("s", "s"),
        ("sec", "second"),
        ("h⁻¹", "hour^-1"),
        ("min⁻¹", "min^-1"),
        ("s⁻¹", "s^-1"),
        ("h-1", "hour^-1"),
        ("h−1", "hour^-1"),  # U+2212 minus
        ("min^-1", "min^-1"),
        ("/h", "1/hour"),
        ("/min", "1/min"),
        ("per min", "1/min"),
        ("per h", "1/hour"),
        ("°C", "degC"),
        ("° C", "degC"),
        ("℃", "degC"),
        ("K", "kelvin"),
        ("%", "percent"),
        ("mg·L⁻¹", "mg*L^-1"),
        ("", ""),
        ("  ", ""),
    ],
)
def test_normalise_unit(written: str, expected: str) -> None:
    assert normalise_unit(written) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"50 {MICRO_SIGN}M", (50.0, "uM")),
        (f"50 {GREEK_MU}M", (50.0, "uM")),
        (f"50{MICRO_SIGN}M", (50.0, "uM")),
        ("0.05 mM", (0.05, "mM")),
        ("1e-3 M", (0.001, "M")),
        ("1,5 mM", (1.5, "mM")),  # decimal comma
        ("1 250 nM", (1250.0, "nM")),  # space-grouped thousands
        ("2 h", (2.0, "hour")),
        ("30 min", (30.0, "min")),
        ("1.8 min⁻¹", (1.8, "min^-1")),
        ("108 h⁻¹", (108.0, "hour^-1")),
        ("3 h-1", (3.0, "hour^-1")),
        ("3 /h", (3.0, "1/hour")),
        ("3/h", (3.0, "1/hour")),
        ("3 1/h", (3.0, "1/hour")),  # not 31: a space groups thousands only
        ("3 per min", (3.0, "1/min")),
        ("25 °C", (25.0, "degC")),
        ("25°C", (25.0, "degC")),
        ("−5 °C", (-5.0, "degC")),
        ("298.15 K", (298.15, "kelvin")),
        ("532 nm", (532.0, "nm")),
        ("5 %", (5.0, "percent")),
        ("5%", (5.0, "percent")),
        ("12", (12.0, "")),
        ("  12  ", (12.0, "")),
    ],
)
def test_parse_quantity(text: str, expected: tuple[float, str]) -> None:
    assert parse_quantity(text) == expected


@pytest.mark.parametrize("text", ["", "abc", "mM", "µM 50", "inf mM", "nan h"])
def test_parse_quantity_rejects_non_quantities(text: str) -> None:
    assert parse_quantity(text) is None


@pytest.mark.parametrize(
    ("value", "from_text", "to_text", "expected"),
    [
        (50, "µM", "mM", 0.05),
        (50, "μM", "mM", 0.05),
        (0.05, "mM", "µM", 50.0),
        (1, "M", "mM", 1000.0),
        (2, "mM", "M", 0.002),
        (1, "M", "µM", 1e6),
        (2, "h", "min", 120.0),
        (90, "min", "h", 1.5),
        (1, "h", "s", 3600.0),
        (30, "s", "min", 0.5),
        (1.8, "min⁻¹", "h⁻¹", 108.0),
        (108, "h⁻¹", "min⁻¹", 1.8),
        (1, "s⁻¹", "h⁻¹", 3600.0),
        (1.8, "min-1", "/h", 108.0),
        (1.8, "per min", "h-1", 108.0),
        (25, "°C", "K", 298.15),  # offset conversion, not a scale
        (298.15, "K", "°C", 25.0),
        (0, "°C", "K", 273.15),
        (-273.15, "°C", "K", 0.0),
        (100, "°C", "K", 373.15),
        (532, "nm", "µm", 0.532),
        (5, "%", "", 0.05),
        (0.05, "", "%", 5.0),
        (7, "mM", "mM", 7.0),
    ],
)
def test_convert(value: float, from_text: str, to_text: str, expected: float) -> None:
    got = convert(value, normalise_unit(from_text), normalise_unit(to_text))
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize(
    ("from_text", "to_text"),
    [
        ("µM", "h"),  # concentration vs time
        ("h", "h⁻¹"),  # time vs rate
        ("°C", "nm"),
        ("K", "%"),
        ("mM", ""),  # a concentration is not a bare number
        ("nm", "min"),
        ("furlongs-per-fortnight", "mM"),  # not a unit at all
        ("bogus", "bogus2"),
    ],
)
def test_incompatible_units_do_not_convert(from_text: str, to_text: str) -> None:
    f, t = normalise_unit(from_text), normalise_unit(to_text)
    assert unit_map(f, t) is None
    assert convert(1.0, f, t) is None


def test_unit_map_is_linear_with_offset_only_for_temperature() -> None:
    assert unit_map("hour^-1", "min^-1") == pytest.approx((1 / 60, 0.0))
    a, b = unit_map("degC", "kelvin") or (None, None)
    assert a == pytest.approx(1.0)
    assert b == pytest.approx(273.15)
    assert unit_map("uM", "uM") == (1.0, 0.0)
    assert unit_map("", "") == (1.0, 0.0)


def test_fahrenheit_offset() -> None:
    # °F = °C × 9/5 + 32
    assert convert(100, "degC", "degF") == pytest.approx(212.0)
    assert convert(32, normalise_unit("°F"), "degC") == pytest.approx(0.0, abs=1e-12)


# -- properties ---------------------------------------------------------------------------

moderate = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False, allow_subnormal=False)
COMPATIBLE = [
    ("uM", "mM"),
    ("mM", "M"),
    ("uM", "M"),
    ("hour", "min"),
    ("min", "s"),
    ("hour^-1", "min^-1"),
    ("s^-1", "hour^-1"),
    ("1/hour", "min^-1"),
    ("degC", "kelvin"),
    ("nm", "um"),
    ("percent", ""),
]


@given(moderate, st.sampled_from(COMPATIBLE))
def test_conversion_round_trips(x: float, pair: tuple[str, str]) -> None:
    a, b = pair
    there = convert(x, a, b)
    assert there is not None
    back = convert(there, b, a)
    assert back == pytest.approx(x, rel=1e-9, abs=1e-9)


@given(moderate)
def test_celsius_kelvin_is_an_offset(x: float) -> None:
    assert convert(x, "degC", "kelvin") == pytest.approx(x + 273.15, rel=1e-12, abs=1e-9)


@given(moderate)
def test_per_minute_is_sixty_per_hour(x: float) -> None:
    assert convert(x, normalise_unit("min⁻¹"), normalise_unit("h⁻¹")) == pytest.approx(
        60 * x, rel=1e-12, abs=1e-12
    )


@given(
    st.floats(min_value=0, max_value=1e12, allow_nan=False),
    st.sampled_from(["µM", "μM", "mM", "h", "min⁻¹", "h-1", "°C", "K", "nm", "%", ""]),
)
def test_parse_quantity_reads_back_what_was_written(x: float, unit: str) -> None:
    q = parse_quantity(f"{x!r} {unit}")
    assert q == (x, normalise_unit(unit))


# -- compound units, lookalikes and ×10ⁿ (found while building examples/papers) ---------------
@pytest.mark.parametrize(
    ("gold", "pred"),
    [
        ("1.2 mmol g⁻¹ h⁻¹", "1200 µmol g⁻¹ h⁻¹"),
        ("1.2 mmol g-1 h-1", "1200 µmol/g/h"),
        ("0.005 m²", "50 cm²"),
        ("100 mW/cm²", "1 kW/m²"),
        ("25 °C", "25 ºC"),
        ("25 °C", "25 ˚C"),
        ("50 µM", "5.0 × 10⁻⁵ M"),
        ("50 µM", "5 x 10^-5 M"),
        # symbols of MEASUREMENT_UNITS that pint could read otherwise, read as meant
        ("1 min", "60 s"),  # minute, not milli-inch
        ("1 ft", "0.3048 m"),  # foot, not femto-tonne
        ("1 Pa", "0.001 kPa"),  # pascal, not peta-year
        ("1 d", "24 h"),
        ("1 mo", "30.4375 d"),
        ("1 M", "1000 mM"),  # molar
        ("1 yd", "3 ft"),  # yard, not yocto-day
        ("1 kcal", "4184 J"),
        ("1 gal", "3.785411784 l"),
    ],
)
def test_compound_units_and_written_forms_convert(gold: str, pred: str) -> None:
    g, p = parse_quantity(gold), parse_quantity(pred)
    assert g is not None and p is not None
    converted = convert(p[0], p[1], g[1])
    assert converted is not None and converted == pytest.approx(g[0], rel=1e-9)


# -- durations (1 year = 365.25 days = 12 months) -------------------------------------------


def same_duration(a: str, b: str) -> bool:
    """Whether two written durations are equal once converted to the second one's unit."""
    qa, qb = parse_quantity(a), parse_quantity(b)
    assert qa is not None and qb is not None, (a, b)
    converted = convert(qa[0], qa[1], qb[1])
    return converted is not None and converted == pytest.approx(qb[0], rel=1e-12)


@pytest.mark.parametrize(
    ("iso", "expected"),
    [
        ("P3Y", (3.0, "year")),
        ("P18M", (18.0, "month")),  # M before T: months
        ("PT90M", (90.0, "minute")),  # M after T: minutes
        ("P1Y6M", (18.0, "month")),  # several parts: the smallest unit
        ("P2W", (2.0, "week")),
        ("P1DT12H", (36.0, "hour")),
        ("PT1,5H", (1.5, "hour")),  # a decimal comma, as ISO 8601 allows
        ("pt45s", (45.0, "second")),
    ],
)
def test_iso_8601_durations(iso: str, expected: tuple[float, str]) -> None:
    assert parse_quantity(iso) == expected
    assert parse_duration(iso) == expected


@pytest.mark.parametrize("text", ["P", "PT", "P1YT", "P1H", "3Y", "P-1Y", "PxY"])
def test_not_durations(text: str) -> None:
    assert parse_duration(text) is None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("P3Y", "3 years"),
        ("3 years", "36 months"),
        ("P3Y", "36 months"),
        ("P18M", "1.5 yr"),
        ("P1Y6M", "18 months"),
        ("PT90M", "1.5 h"),
        ("90 min", "1.5 hours"),
        ("P2W", "14 days"),
        ("2 wks", "14 d"),
        ("P1DT12H", "1.5 day"),
        ("1 year", "365.25 days"),
        ("1 month", "30.4375 days"),
        ("3 mo", "0.25 years"),
        ("3600 s", "1 hour"),
    ],
)
def test_duration_equalities(a: str, b: str) -> None:
    assert same_duration(a, b)
    assert same_duration(b, a)


def test_durations_differ() -> None:
    assert not same_duration("P3Y", "3 months")
    assert not same_duration("PT90M", "90 days")


def test_duration_field_scores_against_written_gold() -> None:
    """A quantity field: the Kleister NDA baseline writes ``P3Y`` for gold ``3 years``."""
    from extract_mlflow.config import Config, FieldRule
    from extract_mlflow.fields.normalize import Comparators

    comp = Comparators(Config(fields={"term": FieldRule(type="quantity")})).for_leaf("term", "")
    for gold, pred in [("3 years", "P3Y"), ("36 months", "P3Y"), ("1.5 h", "PT90M")]:
        assert comp.equal(comp.canon(gold), comp.canon(pred)), (gold, pred)
    assert not comp.equal(comp.canon("3 years"), comp.canon("P3M"))


# -- measurements: what makes a field without a type a quantity --------------------------------
@pytest.mark.parametrize(
    "text",
    ["1.2 kg", "1200 g", "34.4 l", "34400 ml", "500g", "1.5L", "2 L", "8.7 s⁻¹", "522 min⁻¹",
     "108 h-1", "1.8 /min", "5 per hour", "50 µmol g⁻¹ h⁻¹", "5 × 10⁻⁵ M", "0.5 M", "5 mg/L",
     "−18 °C", "-18°C", "4 ºC", "310.15 K", "12%", "12 %", "1,200 g", "1 200 g", "4 days",
     "18 months", "2 yrs", "100 m²", "101.3 kPa", "1.5 kWh", "2 ft", "12 oz", "30 s", "50 K"],
)  # fmt: skip
def test_measurements(text: str) -> None:
    assert is_measurement(text)
    assert parse_quantity(text) is not None  # and the scorer reads it as a quantity


@pytest.mark.parametrize(
    "text",
    [
        "12 items", "3 pcs", "5 stars", "2 nights", "1 cup", "2 pt", "5 in", "9am", "5pm",
        "3 pm", "1st", "2nd", "3rd", "A4", "v2", "4A", "3D", "5G", "50K", "5M", "30s", "5m",
        "1990s", "24K gold", "2024-01-05", "05/01/2024", "12.03.2024", "5 Jan 2024",
        "30 days net", "1 year warranty", "10 min walk", "6 ft 2 in", "5-10 mg", "5 ± 0.2 mg",
        "~5 kg", "<5 mg", "5 kg (approx.)", "3 x 4 cm", "19 % VAT", "$5/kg", "€3.50/kg",
        "12 EUR", "5 €", "P3Y", "PT90M", "12", "1.5", "kg", "", " ", "n/a", "72 bpm", "5 kgs",
    ],
)  # fmt: skip
def test_not_measurements(text: str) -> None:
    """Counts, ids, dates, money, ranges and words pint would read as units ("pcs" is parsecs,
    "pm" picometres, "in" inches, "pt" pints) are no measurements."""
    assert not is_measurement(text)


@pytest.mark.parametrize("unit", sorted(MEASUREMENT_UNITS))
def test_every_measurement_unit_is_a_unit_pint_reads(unit: str) -> None:
    """Each listed unit (µ spelt u) reads, after normalisation, as a pint unit with a dimension
    (percent aside), and as a quantity after a number and a space."""
    q = _registry().Quantity(1.0, normalise_unit(unit))
    assert unit in ("%", "percent") or not q.dimensionless
    assert is_measurement(f"3 {unit}") and parse_quantity(f"3 {unit}") is not None


_UNIT = st.sampled_from(sorted(MEASUREMENT_UNITS))
_POWER = st.sampled_from(["", "⁻¹", "²", "³", "^2", "^-1", "-1"])
_JOIN = st.sampled_from(["/", " / ", "·", "*", " ", " per "])


@settings(max_examples=300)
@given(
    x=st.floats(0.001, 1e6),
    first=st.tuples(_UNIT, _POWER),
    rest=st.lists(st.tuples(_JOIN, _UNIT, _POWER), max_size=2),
)
def test_every_measurement_reads_in_pint(
    x: float, first: tuple[str, str], rest: list[tuple[str, str, str]]
) -> None:
    """Property: whatever combination of listed units is_measurement accepts, pint reads (so
    is_measurement need not build pint's registry): the quantity converts to its own unit."""
    text = f"{x:g} {first[0]}{first[1]}" + "".join(j + u + p for j, u, p in rest)
    if is_measurement(text):
        q = parse_quantity(text)
        assert q is not None
        assert _registry().Quantity(q[0], q[1]).to(q[1]).magnitude == pytest.approx(q[0])


@pytest.mark.slow
def test_pint_forgets_what_it_parsed_past_a_bound() -> None:
    """pint keeps every unit string it parsed; a source gives endless new ones ("ZN-76150", a
    product code after a number, reads as zettanewton⁻⁷⁶¹⁵⁰). Its caches go back to their
    built state past the bound, and the answers stay the same."""
    codes = [f"ZN^-{n}" for n in range(units.PINT_PARSED + 50)]
    before = [units.unit_map(c, f"({c})") for c in codes[:5]]
    for c in codes:
        units.unit_map(c, f"({c})")
    units.unit_map("kg", "g")  # a miss after the bound: the caches are reset
    assert len(units._built()[0]._cache.parse_unit) <= units.PINT_PARSED
    units.unit_map.cache_clear()
    assert [units.unit_map(c, f"({c})") for c in codes[:5]] == before
    assert units.unit_map("kg", "g") == (1000.0, 0.0)
