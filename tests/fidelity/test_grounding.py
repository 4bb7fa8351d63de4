"""Finding values in their source: spans by fuzzy alignment (and their missing n-grams), and
numbers and quantities by value within the field's tolerance."""

from __future__ import annotations

import pytest

from extract_mlflow.config import FieldRule
from extract_mlflow.fidelity.grounding import SourceNumbers, align, missing_ngrams
from extract_mlflow.fidelity.tokens import SourceIndex, tokenize
from extract_mlflow.fidelity.values import score_text
from extract_mlflow.fields.normalize import Comparator

LINES = """Pos  Description                         Qty  Unit price    Amount
1    Stainless steel shackles, 12 mm      10        7.90     79.00
     Shackles, D-shape, stainless steel AISI 316, WLL 1 t
2    Mooring line, 16 mm, 50 m             2      184.00    368.00
Nordlicht Haustechnik GmbH
"""


def span_of(value: str, source: str = LINES, ignore_case: bool = True) -> str | None:
    index = SourceIndex(source)
    span = align(index, tokenize(value), " ".join(value.split()), ignore_case)
    if span is None:
        return None
    assert index.text[span.start : span.end] == span.text  # offsets into the normalised text
    return span.text


def test_a_verbatim_value_is_its_own_span() -> None:
    index = SourceIndex(LINES)
    span = align(index, tokenize("Mooring line, 16 mm"), "Mooring line, 16 mm")
    assert span is not None and span.text == "Mooring line, 16 mm" and span.score == 1.0


def test_spans_cover_the_matching_phrase() -> None:
    assert span_of("Mooring line 16 mm, 50 m") == "Mooring line, 16 mm, 50 m"  # a dropped comma
    assert span_of("Shackles, stainless, 12 mm") == "Stainless steel shackles, 12 mm"  # reordered
    assert span_of("NORDLICHT HAUSTECHNIK GMBH") == "Nordlicht Haustechnik GmbH"  # capitals
    # case-sensitive: the place is still found (anchors ignore case), but it scores low
    index = SourceIndex(LINES)
    caps = "NORDLICHT HAUSTECHNIK GMBH"
    span = align(index, tokenize(caps), caps, ignore_case=False)
    assert span is not None and span.score < 0.5
    assert span_of("Anchor chain") is None  # no token of the value is in the source
    assert span_of("") is None


def test_missing_ngrams_of_the_span_hand_computed() -> None:
    v = score_text("Mooring line 16 mm, 50 m", LINES)
    assert v.span is not None and v.span.text == "Mooring line, 16 mm, 50 m"
    # span: Mooring line , 16 mm , 50 m; value: Mooring line 16 mm , 50 m
    assert v.missing_ngrams == (
        "line ,",
        ", 16",
        "Mooring line ,",
        "line , 16",
        ", 16 mm",
        "Mooring line , 16",
        "line , 16 mm",
        ", 16 mm ,",
    )
    assert v.grounded is True and v.grounding == "fuzzy"
    assert v.span.score == pytest.approx(23 / 24)  # partial ratio: one comma of 24 characters


def test_missing_ngrams_without_a_span() -> None:
    assert missing_ngrams(None, ["a"]) == []


def test_reworded_value_is_not_grounded_but_shows_its_source_phrase() -> None:
    v = score_text("Shackles, stainless, 12 mm", LINES)
    assert v.p1 == 1.0 and v.flags == ("paraphrase",)
    assert v.grounded is False
    assert v.span is not None and "steel" in v.missing_ngrams


def test_span_of_a_value_in_a_long_document() -> None:
    filler = " ".join(f"word{i} and more text." for i in range(3000))
    source = filler + " Replacement pressure valve, brass (2 pcs). " + filler
    v = score_text("Replacement valve, brass", source)
    assert v.span is not None and v.span.text == "Replacement pressure valve, brass"
    assert v.missing_ngrams[:1] == ("pressure",)


# -- numbers and quantities ------------------------------------------------------------------
def comp(type_: str, **rule: float) -> Comparator:
    kind = "numeric" if type_ == "number" else "generic"
    return Comparator(type_, kind, FieldRule(type=type_, **rule))  # type: ignore[arg-type]


SOURCE_NUMBERS = (
    "Invoice AM-2026-031 of 2026-03-14, page 1/2, A4 paper\n"
    "1 340.00\n"
    "Total CHF 1,250.00; 8.1% VAT; $ 97.50; (accounting) 1'250.50\n"
    "Weight 12.5 kg, storage at -18 °C, rate 1.8 min⁻¹, 50 µM, 40 guests\n"
)


@pytest.fixture(scope="module")
def numbers() -> SourceNumbers:
    return SourceNumbers(SOURCE_NUMBERS)


@pytest.mark.parametrize(
    ("value", "found"),
    [
        (1250.0, True),
        (1340.0, False),  # "1 340.00" in a table row is two numbers, 1 and 340
        (340.0, True),
        (8.1, True),
        (97.5, True),
        (1250.5, True),
        (12.5, True),
        (-18.0, True),
        (40.0, True),
        (3.0, False),  # the month of a date is not a number of the document
        (14.0, False),
        (31.0, False),  # the tail of an id
        (4.0, False),  # A4
        (2026.0, True),  # a year is a number
        (1250.01, False),
    ],
)
def test_numbers_are_found_by_value(numbers: SourceNumbers, value: float, found: bool) -> None:
    assert numbers.has_number(value, comp("number")) is found


def test_number_tolerance_is_the_fields(numbers: SourceNumbers) -> None:
    assert not numbers.has_number(1251.0, comp("number"))
    assert numbers.has_number(1251.0, comp("number", rel_tol=0.001))
    assert numbers.has_number(1251.0, comp("number", tol=1.0))
    assert not numbers.has_number(1252.0, comp("number", tol=1.0))


@pytest.mark.parametrize(
    ("value", "unit", "found"),
    [
        (12500.0, "g", True),
        (12.5, "kg", True),
        (12.5, "g", False),
        (0.0125, "t", True),
        (-18.0, "degC", True),
        (255.15, "kelvin", True),
        (108.0, "hour^-1", True),  # 1.8 min⁻¹
        (0.05, "mM", True),  # 50 µM
        (50.0, "mM", False),
        (40.0, "", True),  # a bare prediction matches any number
        (40.0, "kg", True),  # "40 guests": no known unit, read in the predicted unit
    ],
)
def test_quantities_are_found_after_conversion(
    numbers: SourceNumbers, value: float, unit: str, found: bool
) -> None:
    assert numbers.has_quantity(value, unit, comp("quantity", rel_tol=1e-6)) is found


def test_offset_units_use_the_absolute_tolerance() -> None:
    numbers = SourceNumbers("Keep at 4 °C")
    assert numbers.has_quantity(277.15, "kelvin", comp("quantity", tol=0.5))
    assert numbers.has_quantity(277.5, "kelvin", comp("quantity", tol=0.5))
    assert not numbers.has_quantity(278.0, "kelvin", comp("quantity", tol=0.5))
    assert not numbers.has_quantity(4.0, "kelvin", comp("quantity", tol=0.5))


def test_a_source_without_numbers() -> None:
    assert not SourceNumbers("no digits here").has_number(1.0, comp("number"))
    assert not SourceNumbers("").has_quantity(1.0, "kg", comp("quantity"))
