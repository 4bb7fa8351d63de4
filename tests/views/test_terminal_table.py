"""The terminal table of `score`: a header (documents, parse failures, unknown ids), an errors
column by kind per field, the documents with the most errors, and a one-line legend."""

from __future__ import annotations

from typing import Any

from extract_mlflow import evaluate
from extract_mlflow.core.language import tr
from extract_mlflow.views.table import FIELD_WIDTH, error_counts, report_table

LONG = "a_rather_long_section_name.with_a_nested_object_name.and_a_leaf"

GOLD = [
    {"id": "d1", "name": "Acme", "total": 10, "tags": ["x", "y"], LONG: "v"},
    {"id": "d2", "name": "Bolt", "total": 20, "tags": ["z"], LONG: "w"},
    {"id": "d3", "name": "Core", "total": 30, "tags": [], LONG: "u"},
]
PRED: list[dict[str, Any]] = [
    {"id": "d1", "name": "Acme", "total": 11, "tags": ["x"], LONG: "v"},
    {"id": "d2", "name": "Bolt", "total": 20, "tags": ["z", "q"], "extra": 1, LONG: "w"},
    {"id": "d3", "name": "Core", "total": 30, "tags": [], LONG: "u"},
    {"id": "d9", "name": "Nobody"},
]


def table() -> str:
    return report_table(evaluate(GOLD, PRED))


def test_header_counts_documents_parse_failures_and_unknown_ids() -> None:
    first = table().splitlines()[0]
    assert first == "documents 3  parse failures 0  unknown ids 1"


def test_each_field_row_ends_with_its_errors_by_kind() -> None:
    lines = table().splitlines()
    header = next(line for line in lines if line.startswith("field "))
    assert header.split()[-1] == "errors"
    row = {line.split()[0]: line for line in lines if line.startswith(("total ", "tags[] "))}
    assert row["total"].endswith("  wrong_value=1")
    assert row["tags[]"].endswith("  missing=1 hallucinated=1")
    name = next(line for line in lines if line.startswith("name "))
    assert name.endswith("1.000")  # no errors: an empty cell


def test_most_wrong_documents_are_listed_worst_first() -> None:
    lines = table().splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith("most errors (FP+FN)"))
    rows = [line.split() for line in lines[start + 2 : start + 4]]
    # d1: a wrong total (FP 1, FN 1) and a missing tag (FN 1); d2: an extra tag and field (FP 2)
    assert rows == [["d1", "scored", "1", "2", "0.667"], ["d2", "scored", "2", "0", "0.800"]]
    assert lines[start + 4] == ""  # d3 is fully correct: not listed


def test_the_legend_is_the_last_line_and_long_paths_are_cut() -> None:
    text = table()
    assert text.splitlines()[-1] == tr("table.legend")
    assert LONG not in text
    cut = LONG[: FIELD_WIDTH - 1] + "…"
    assert any(line.startswith(cut + " ") for line in text.splitlines())


def test_error_counts_follow_the_category_order_and_skip_zeros() -> None:
    assert error_counts({"missing": 2, "wrong_value": 1, "type_error": 0}) == (
        "wrong_value=1 missing=2"
    )
    assert error_counts({}) == ""
