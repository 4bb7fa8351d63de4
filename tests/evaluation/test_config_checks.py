"""Config rules that do nothing on the gold set (a path no gold field has, an unknown unit, a
date format that parses no gold value and cannot be there for the predictions) are warnings in
the report, in diagnostics and on stderr, and errors (exit 2) with `score --strict`. They read
the config and gold only: the same warnings whatever the prediction file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from support.mlflow_server import MlflowServer

from extract_mlflow import evaluate
from extract_mlflow.cli import main
from extract_mlflow.evaluation.config_checks import config_warnings
from extract_mlflow.views.markdown import report_markdown

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
        {"date_formats": ["%m/%d/%Y"]},  # gold writes 31.01.2024: no format reads it
        "date format '%m/%d/%Y' parses none of the gold values, and 2 gold value(s) that look "
        "like dates are read by no format (e.g. '01.02.2024')",
    ),
}
NO_GOLD_DATE = "and no gold value is a date (no field reads dates with it)"


@pytest.mark.parametrize("case", CASES)
def test_each_warning_is_in_the_report(case: str) -> None:
    config, expected = CASES[case]
    report = evaluate(GOLD, GOLD, config)
    assert report.warnings == [f"config: {expected}"]
    assert report.to_dict()["warnings"] == report.warnings
    assert f"warning: config: {expected}" in report_markdown(report)


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
        f"config: date format '%d %B %Y' parses none of the gold values, {NO_GOLD_DATE}"
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
    parses no gold value, but every gold date is read, so it is taken to be there for the
    predictions, for every candidate (whether it writes such dates or not)."""
    gold = [{"id": "a", "due": "2024-01-31"}, {"id": "b", "due": "2024-02-01"}]
    pred = [{"id": "a", "due": "31.01.2024"}, {"id": "b", "due": "2024-02-01"}]
    used = evaluate(gold, pred, {"date_formats": ["%d.%m.%Y"]})
    assert used.warnings == []
    assert used.micro.tp == 2  # and the format did read the model's date
    assert evaluate(gold, gold, {"date_formats": ["%d.%m.%Y"]}).warnings == []


def test_a_date_format_meant_for_gold_is_reported_whatever_the_predictions() -> None:
    """Gold writes 31/01/2024 and the config reads US dates: no format reads gold's dates, so
    the unused format is reported, the same for a prediction that writes US dates."""
    gold = [{"id": "a", "due": "31/01/2024"}, {"id": "b", "due": "28/02/2024"}]
    us = [{"id": "a", "due": "01/31/2024"}, {"id": "b", "due": "02/28/2024"}]
    config = {"date_formats": ["%m/%d/%Y"]}
    expected = [
        "config: date format '%m/%d/%Y' parses none of the gold values, and 2 gold value(s) "
        "that look like dates are read by no format (e.g. '28/02/2024')"
    ]
    assert evaluate(gold, us, config).warnings == expected
    assert evaluate(gold, gold, config).warnings == expected
    assert evaluate(gold, [], config).warnings == expected


_DATE_TEXTS = st.sampled_from(
    ["2024-01-31", "31.01.2024", "01/31/2024", "31/01/2024", "2024-13-01", "31 Jan 2024", "x"]
)
_FORMATS = st.lists(
    st.sampled_from(["%Y-%m-%d", "%d.%m.%Y", "%m/%d/%Y", "%d/%m/%Y", "%d %b %Y", "%y%m%d"]),
    max_size=3,
    unique=True,
)
_DOC = st.fixed_dictionaries(
    {}, optional={"due": _DATE_TEXTS, "paid": _DATE_TEXTS, "n": st.integers(0, 3)}
)


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(
    gold=st.lists(_DOC, min_size=1, max_size=4),
    preds=st.lists(st.lists(_DOC, max_size=4), min_size=2, max_size=3),
    formats=_FORMATS,
    typed=st.booleans(),
)
def test_warnings_are_the_same_whatever_the_predictions(
    gold: list[dict[str, Any]], preds: list[list[dict[str, Any]]], formats: list[str], typed: bool
) -> None:
    """Property: for any gold set, config and prediction files, the report's warnings are
    config_warnings(config, gold) (which never sees a prediction)."""
    rows = [{"id": f"d{i}", **d} for i, d in enumerate(gold)]
    config: dict[str, Any] = {"date_formats": formats, "fields": {"n": {"type": "number"}}}
    if typed:
        config["fields"]["due"] = {"type": "date"}
    expected = evaluate(rows, rows, config).warnings
    from extract_mlflow.config_file import config_from_mapping

    assert expected == config_warnings(config_from_mapping(config), {r["id"]: r for r in rows})
    for pred in preds:
        pred_rows = [{"id": f"d{i}", **d} for i, d in enumerate(pred)]
        assert evaluate(rows, pred_rows, config).warnings == expected


def _files(tmp_path: Path, gold: list[dict[str, Any]], **preds: list[dict[str, Any]]) -> None:
    for name, rows in {"gold": gold, **preds}.items():
        text = "".join(json.dumps(r) + "\n" for r in rows)
        (tmp_path / f"{name}.jsonl").write_text(text, encoding="utf-8")


def _strict(tmp_path: Path, pred: str, config: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        main,
        ["score", str(tmp_path / "gold.jsonl"), str(tmp_path / pred), "--config",
         str(tmp_path / config), "--no-log", "--strict", "--format", "json"],
    )  # fmt: skip
    return result.exit_code, result.stderr


def test_strict_gives_both_candidates_one_verdict(tmp_path: Path) -> None:
    """The issue's case through the CLI: a config reads the model's US dates; the worse
    candidate writes them, the better one stopped. `score --strict` treats both alike: both
    pass on ISO gold, and both fail with the same line on gold that no format reads."""
    iso = [{"id": "a", "due": "2024-01-31", "n": 1}, {"id": "b", "due": "2024-02-28", "n": 2}]
    worse = [{"id": "a", "due": "01/31/2024", "n": 5}, {"id": "b", "due": "02/28/2024", "n": 2}]
    better = [{"id": "a", "due": "2024-01-31", "n": 1}, {"id": "b", "due": "2024-02-28", "n": 2}]
    (tmp_path / "config.json").write_text(json.dumps({"date_formats": ["%m/%d/%Y"]}))
    _files(tmp_path, iso, worse=worse, better=better)
    assert _strict(tmp_path, "worse.jsonl", "config.json") == (0, "")
    assert _strict(tmp_path, "better.jsonl", "config.json") == (0, "")
    dotted = [{"id": "a", "due": "31.01.2024", "n": 1}, {"id": "b", "due": "28.02.2024", "n": 2}]
    _files(tmp_path, dotted)
    code_w, err_w = _strict(tmp_path, "worse.jsonl", "config.json")
    code_b, err_b = _strict(tmp_path, "better.jsonl", "config.json")
    assert code_w == code_b == 2 and err_w == err_b
    assert err_w.startswith("error: --strict: config: date format '%m/%d/%Y' parses none")


def test_strict_logs_both_candidates_alike_on_a_real_server(
    mlflow_server: MlflowServer, tmp_path: Path
) -> None:
    """Logged with --strict to a real server: the worse and the better candidate are both
    logged, with the same (empty) warnings in their diagnostics, when every gold date is
    read; on gold no format reads, both are refused and neither leaves a run."""
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=mlflow_server.uri)
    iso = [{"id": "a", "due": "2024-01-31"}, {"id": "b", "due": "2024-02-28"}]
    worse = [{"id": "a", "due": "01/31/2024"}, {"id": "b", "due": "02/28/2023"}]
    better = [{"id": "a", "due": "2024-01-31"}, {"id": "b", "due": "2024-02-28"}]
    (tmp_path / "config.json").write_text(json.dumps({"date_formats": ["%m/%d/%Y"]}))

    def strict(pred: str, experiment: str) -> tuple[int, str, str]:
        result = CliRunner().invoke(
            main,
            ["score", str(tmp_path / "gold.jsonl"), str(tmp_path / pred), "--config",
             str(tmp_path / "config.json"), "--strict", "--tracking-uri", mlflow_server.uri,
             "--experiment", experiment, "--format", "json"],
        )  # fmt: skip
        return result.exit_code, result.stdout, result.stderr

    _files(tmp_path, iso, worse=worse, better=better)
    for pred in ("worse.jsonl", "better.jsonl"):
        code, out, err = strict(pred, "strict-iso")
        assert code == 0, err
        run_id = json.loads(out)["run_id"]
        (tmp_path / run_id).mkdir()
        local = client.download_artifacts(run_id, "eval/diagnostics.json", str(tmp_path / run_id))
        assert json.loads(Path(local).read_text(encoding="utf-8"))["warnings"] == []
    dotted = [{"id": "a", "due": "31.01.2024"}, {"id": "b", "due": "28.02.2024"}]
    _files(tmp_path, dotted)
    refused = [strict(pred, "strict-dotted") for pred in ("worse.jsonl", "better.jsonl")]
    assert [code for code, _, _ in refused] == [2, 2] and refused[0][2] == refused[1][2]
    experiment = client.get_experiment_by_name("strict-dotted")
    assert experiment is None or not client.search_runs([experiment.experiment_id])


def test_the_invoice_example_warns_about_nothing() -> None:
    """The bundled example's '%d.%m.%Y' reads the baseline's 14.03.2026: no warning for either
    prediction file, in `diff` or in `score --strict`."""
    example = Path(__file__).resolve().parents[2] / "examples" / "invoices"
    gold, config = str(example / "gold.jsonl"), str(example / "config.toml")
    runner = CliRunner()
    for pred in ("pred_baseline.jsonl", "pred_improved.jsonl"):
        result = runner.invoke(
            main, ["score", gold, str(example / pred), "--config", config, "--no-log", "--strict"]
        )
        assert result.exit_code == 0 and "warning" not in result.stderr, result.stderr
    result = runner.invoke(
        main,
        ["diff", gold, str(example / "pred_baseline.jsonl"), str(example / "pred_improved.jsonl"),
         "--config", config],
    )  # fmt: skip
    assert result.exit_code == 0 and "warning" not in result.stderr, result.stderr
