"""Config rules that do nothing on the gold set (a path no gold field has, an unknown unit, a
date format that parses no gold or predicted value) are warnings in the report, in diagnostics
and on stderr, and errors (exit 2) with `score --strict`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from extract_mlflow import evaluate
from extract_mlflow.cli import main

GOLD = [
    {"id": "a", "total": 10, "weight": "5 kg", "due": "31.01.2024", "items": [{"qty": 1}]},
    {"id": "b", "total": 20, "weight": "7 kg", "due": "01.02.2024", "items": [{"qty": 2}]},
]

CASES: dict[str, tuple[dict[str, Any], str]] = {
    "path": ({"fields": {"totl": {"type": "number"}}}, '[fields."totl"] matches no gold field'),
    "unit": (
        {"fields": {"weight": {"type": "quantity", "unit": "kgg"}}},
        "[fields.\"weight\"] unit 'kgg' is not a known unit",
    ),
    "date": (
        {"date_formats": ["%d.%m.%Y", "%m/%d/%Y"]},
        "date format '%m/%d/%Y' parses no gold or predicted value",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_each_warning_is_in_the_report(case: str) -> None:
    config, expected = CASES[case]
    report = evaluate(GOLD, GOLD, config)
    assert report.warnings == [f"config: {expected}"]
    assert report.to_dict()["warnings"] == report.warnings
    assert f"warning: config: {expected}" in report.to_markdown()


def test_a_sound_config_has_no_warning() -> None:
    config = {
        "date_formats": ["%d.%m.%Y"],
        "fields": {
            "total": {"type": "number", "rel_tol": 0.1},
            "weight": {"type": "quantity", "unit": "g"},
            "items[].qty": {"type": "number"},
            "items": {"ignore": True},  # an ignored subtree matches the paths under it
        },
    }
    assert evaluate(GOLD, GOLD, config).warnings == []
    assert evaluate(GOLD, GOLD).warnings == []  # the default date format is not checked


def test_a_date_format_of_a_date_typed_field_counts() -> None:
    gold = [{"id": "a", "d": "31 January 2024"}]
    config = {"date_formats": ["%d %B %Y"], "fields": {"d": {"type": "date"}}}
    assert evaluate(gold, gold, config).warnings == []
    config = {"date_formats": ["%d %B %Y"]}  # untyped: never read as a date
    assert evaluate(gold, gold, config).warnings == [
        "config: date format '%d %B %Y' parses no gold or predicted value"
    ]


def run(tmp_path: Path, config: dict[str, Any], *args: str) -> tuple[int, str, str]:
    lines = "".join(json.dumps(d) + "\n" for d in GOLD)
    (tmp_path / "gold.jsonl").write_text(lines, encoding="utf-8")
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    result = CliRunner().invoke(
        main,
        ["score", str(tmp_path / "gold.jsonl"), str(tmp_path / "gold.jsonl"),
         "--config", str(tmp_path / "config.json"), "--no-log", *args],
    )  # fmt: skip
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("case", CASES)
def test_cli_warns_and_strict_refuses(tmp_path: Path, case: str) -> None:
    config, expected = CASES[case]
    code, out, err = run(tmp_path, config, "--format", "json")
    assert code == 0, err
    assert f"warning: config: {expected}\n" in err
    assert json.loads(out)["warnings"] == [f"config: {expected}"]
    code, out, err = run(tmp_path, config, "--strict")
    assert code == 2 and out == ""
    assert err == f"error: --strict: config: {expected}\n"


def test_strict_passes_a_sound_config(tmp_path: Path) -> None:
    code, _, err = run(tmp_path, {"fields": {"total": {"type": "number"}}}, "--strict")
    assert code == 0 and err == ""


def test_a_date_format_for_the_predictions_is_no_typo() -> None:
    """Gold in ISO dates, the model writes 31.01.2024: the format that reads the model's dates
    is in use, so no warning; a format neither side uses still warns."""
    gold = [{"id": "a", "due": "2024-01-31"}, {"id": "b", "due": "2024-02-01"}]
    pred = [{"id": "a", "due": "31.01.2024"}, {"id": "b", "due": "2024-02-01"}]
    used = evaluate(gold, pred, {"date_formats": ["%d.%m.%Y"]})
    assert used.warnings == []
    assert used.micro.tp == 2  # and the format did read the model's date
    unused = evaluate(gold, gold, {"date_formats": ["%d.%m.%Y"]})
    assert unused.warnings == ["config: date format '%d.%m.%Y' parses no gold or predicted value"]
