"""The `extract-mlflow` command as a user drives it: exit codes (0 pass, 1 gate failed, 2 bad
input), one `error:` line on stderr for bad input and never a traceback, and the report formats."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from extract_mlflow.cli import main

GOLD = (
    '{"id": "a", "total": 10, "vendor": {"name": "ACME"}, "tags": ["x", "y"]}\n'
    '{"id": "b", "total": 20, "vendor": {"name": "Globex"}, "tags": ["z"]}\n'
)
PRED = (
    '{"id": "a", "total": "10.00", "vendor": {"name": "ACME"}, "tags": ["x", "y"]}\n'
    '{"id": "b", "total": 21, "vendor": {"name": "Initech"}, "tags": ["z"]}\n'
)

# bad input -> (file contents by name, extra args, text the error must contain)
Case = tuple[dict[str, bytes | None], list[str], list[str]]
GOOD_LINE = b'{"id": "a", "total": 1}\n'


def _big_gold(tmp_path: Path) -> None:
    chunk = b"x" * (1 << 20)
    with (tmp_path / "gold.jsonl").open("wb") as f:
        f.write(b'{"id": "big", "text": "')
        for _ in range(50):
            f.write(chunk)
        f.write(b'"}\n')


BAD_INPUTS: dict[str, Case] = {
    "missing-file": ({"gold.jsonl": None}, [], ["gold.jsonl", "file not found"]),
    "empty-file": ({"gold.jsonl": b""}, [], ["gold.jsonl", "no documents"]),
    "gold-not-object": ({"gold.jsonl": GOOD_LINE + b"[1, 2]\n"}, [], ["gold.jsonl:2:", "object"]),
    "gold-without-id": ({"gold.jsonl": b'{"ID": "a"}\n'}, [], ["gold.jsonl:1:", "'id'"]),
    "gold-duplicate-id": (
        {"gold.jsonl": GOOD_LINE * 2},
        [],
        ["gold.jsonl:2:", "duplicate id 'a'", "line 1"],
    ),
    "gold-invalid-utf8": ({"gold.jsonl": b'{"id": "\xff"}\n'}, [], ["gold.jsonl:1:", "UTF-8"]),
    "gold-utf16": ({"gold.jsonl": GOOD_LINE.decode().encode("utf-16")}, [], ["UTF-16"]),
    "gold-nan": ({"gold.jsonl": b'{"id": "a", "total": NaN}\n'}, [], ["gold.jsonl:1:", "NaN"]),
    "gold-infinity": (
        {"gold.jsonl": b'{"id": "a", "total": -Infinity}\n'},
        [],
        ["gold.jsonl:1:", "Infinity"],
    ),
    "gold-nested-10000": (
        {"gold.jsonl": b'{"id": "a", "x": ' + b"[" * 10_000 + b"]" * 10_000 + b"}\n"},
        [],
        ["gold.jsonl:1:", "nested deeper"],
    ),
    "pred-missing-file": ({"gold.jsonl": GOOD_LINE, "pred.jsonl": None}, [], ["pred.jsonl"]),
    "pred-empty-file": ({"gold.jsonl": GOOD_LINE, "pred.jsonl": b"\n"}, [], ["pred.jsonl"]),
    "pred-duplicate-id": (
        {"gold.jsonl": GOOD_LINE, "pred.jsonl": GOOD_LINE * 2},
        [],
        ["pred.jsonl:2:", "duplicate prediction id 'a'"],
    ),
    "config-unknown-key": (
        {"cfg.toml": b"match_treshold = 0.5\n"},
        ["--config", "cfg.toml"],
        ["cfg.toml", "unknown config key 'match_treshold'"],
    ),
    "config-bad-field-type": (
        {"cfg.toml": b'[fields."total"]\ntype = "money"\n'},
        ["--config", "cfg.toml"],
        ["cfg.toml", "fields.total.type"],
    ),
    "config-bad-value-type": (
        {"cfg.toml": b'[fields."total"]\nrel_tol = "ten"\n'},
        ["--config", "cfg.toml"],
        ["fields.total.rel_tol"],
    ),
    "config-missing": ({}, ["--config", "none.toml"], ["none.toml", "not found"]),
}


def setup_case(tmp_path: Path, files: dict[str, bytes | None]) -> None:
    """Write the case's files (None: leave it missing); gold and predictions default to a
    small valid pair."""
    defaults: dict[str, bytes | None] = {"gold.jsonl": GOLD.encode(), "pred.jsonl": PRED.encode()}
    for name, data in {**defaults, **files}.items():
        if data is not None:
            (tmp_path / name).write_bytes(data)


def scoring_only(args: list[str]) -> list[str]:
    """These tests are about scoring and bad input: `score` runs with --no-log (logging is
    tested against real stores in test_tracking.py)."""
    return [*args, "--no-log"] if args[:1] == ["score"] else args


def run_module(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "extract_mlflow", *scoring_only(args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def invoke(args: list[str], cwd: Path) -> Result:
    """Run the command in-process from `cwd` (relative paths, as a user types them)."""
    with contextlib.chdir(cwd):
        return CliRunner().invoke(main, scoring_only(args), catch_exceptions=False)


def assert_one_error_line(stderr: str, stdout: str, must: list[str]) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: "), stderr
    for text in must:
        assert text in lines[0], (text, lines[0])
    assert "Traceback" not in stderr + stdout
    assert "internal error" not in stderr


# --------------------------------------------------------------------------- bad input: exit 2

SUBPROCESS_CASES = ["missing-file", "gold-duplicate-id", "gold-nested-10000", "config-unknown-key"]


@pytest.mark.slow
@pytest.mark.parametrize("name", SUBPROCESS_CASES)
def test_bad_input_in_a_real_process(tmp_path: Path, name: str) -> None:
    files, extra, must = BAD_INPUTS[name]
    setup_case(tmp_path, files)
    proc = run_module(["score", "gold.jsonl", "pred.jsonl", *extra], tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert_one_error_line(proc.stderr, proc.stdout, must)


@pytest.mark.slow
def test_50mb_gold_line_in_a_real_process(tmp_path: Path) -> None:
    _big_gold(tmp_path)
    (tmp_path / "pred.jsonl").write_text(PRED)
    proc = run_module(["score", "gold.jsonl", "pred.jsonl"], tmp_path)
    assert proc.returncode == 2
    assert_one_error_line(proc.stderr, proc.stdout, ["gold.jsonl:1:", "16 MiB limit"])


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_exits_2_with_one_line(tmp_path: Path, name: str) -> None:
    files, extra, must = BAD_INPUTS[name]
    setup_case(tmp_path, files)
    result = invoke(["score", "gold.jsonl", "pred.jsonl", *extra], tmp_path)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert_one_error_line(result.stderr, result.stdout, must)


def test_newline_in_an_id_stays_on_one_line(tmp_path: Path) -> None:
    line = b'{"id": "a\\nb"}\n'
    setup_case(tmp_path, {"gold.jsonl": line * 2})
    result = invoke(["score", "gold.jsonl", "pred.jsonl"], tmp_path)
    assert result.exit_code == 2
    assert_one_error_line(result.stderr, result.stdout, ["duplicate id 'a\\nb'"])


@pytest.mark.parametrize(
    "value", ["total", "total=", "=0.5", "total=1.5", "total=abc", "total=nan"]
)
def test_bad_field_min_is_a_usage_error(tmp_path: Path, value: str) -> None:
    setup_case(tmp_path, {"gold.jsonl": GOLD.encode()})
    result = invoke(["score", "gold.jsonl", "pred.jsonl", "--field-min", value], tmp_path)
    assert result.exit_code == 2
    assert "--field-min" in result.stderr
    assert "Traceback" not in result.output and "internal error" not in result.stderr


@pytest.mark.parametrize("args", [["--min-f1", "2"], ["--format", "xml"], []])
def test_usage_errors_exit_2(tmp_path: Path, args: list[str]) -> None:
    setup_case(tmp_path, {"gold.jsonl": GOLD.encode()})
    files = ["gold.jsonl", "pred.jsonl"] if args else ["gold.jsonl"]  # [] -> PRED missing
    result = invoke(["score", *files, *args], tmp_path)
    assert result.exit_code == 2
    assert "Error:" in result.stderr


def test_unwritable_out_exits_2(tmp_path: Path) -> None:
    setup_case(tmp_path, {"gold.jsonl": GOLD.encode()})
    result = invoke(["score", "gold.jsonl", "pred.jsonl", "--out", "no/such/dir/r.md"], tmp_path)
    assert result.exit_code == 2
    assert_one_error_line(result.stderr, result.stdout, ["r.md"])


# --------------------------------------------------------------------------- prediction defects


def test_broken_predictions_are_scored_not_fatal(tmp_path: Path) -> None:
    pred = (
        b'{"id": "a", "total": [1,\n'  # truncated: a parse failure of "a"
        b'{"id": "b", "total": NaN}\n'  # NaN: a parse failure of "b"
        b'{"id": "c", "total": 1}\n'  # not in gold
        b"\xff\xfe garbage\n"  # no id: unattributed
    )
    setup_case(tmp_path, {"gold.jsonl": GOLD.encode(), "pred.jsonl": pred})
    result = invoke(["score", "gold.jsonl", "pred.jsonl", "--format", "json"], tmp_path)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["parse_failures"] == ["a", "b"]
    assert data["unknown_ids"] == ["c"]
    assert len(data["unattributed_lines"]) == 1
    assert data["micro"]["tp"] == 0
    assert data["errors"]["parse_failure"] == data["micro"]["fn"] > 0


# --------------------------------------------------------------------------- gates and formats


def score(tmp_path: Path, *args: str, gold: str = GOLD, pred: str = PRED) -> Result:
    setup_case(tmp_path, {"gold.jsonl": gold.encode(), "pred.jsonl": pred.encode()})
    return invoke(["score", "gold.jsonl", "pred.jsonl", *args], tmp_path)


def test_passing_run_exits_0(tmp_path: Path) -> None:
    result = score(tmp_path, "--min-f1", "0.5", "--field-min", "tags[]=1")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert "vendor.name" in result.stdout and "F1" in result.stdout


def test_min_f1_failure_exits_1(tmp_path: Path) -> None:
    result = score(tmp_path, "--min-f1", "0.99")
    assert result.exit_code == 1
    assert "vendor.name" in result.stdout  # the report is still printed
    failures = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(failures) == 1 and failures[0].startswith("gate failed: f1 ")
    assert "0.99" in failures[0]


def test_every_failing_field_is_listed(tmp_path: Path) -> None:
    result = score(
        tmp_path,
        "--min-f1",
        "0.99",
        "--field-min",
        "total=0.9",
        "--field-min",
        "vendor.name=0.9",
        "--field-min",
        "tags[]=0.9",  # passes
        "--field-min",
        "nope=0.1",  # no such field: fails and says so
    )
    assert result.exit_code == 1
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert all(line.startswith("gate failed: ") for line in lines)
    text = "\n".join(lines)
    assert "field_f1/total " in text and "field_f1/vendor.name " in text
    assert "tags" not in text
    assert "nope" in text and "no such field" in text
    assert len(lines) == 4


def test_field_min_accepts_metric_key_form(tmp_path: Path) -> None:
    gold = '{"id": "a", "items": [{"qty": 1}, {"qty": 2}]}\n'
    pred = '{"id": "a", "items": [{"qty": 1}, {"qty": 3}]}\n'
    result = score(tmp_path, "--field-min", "items.qty=0.9", gold=gold, pred=pred)
    assert result.exit_code == 1
    assert "field_f1/items[].qty" in result.stderr


def test_json_format(tmp_path: Path) -> None:
    result = score(tmp_path, "--format", "json", "--min-f1", "0.99")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    for key in (
        "documents",
        "micro",
        "macro_f1",
        "fields",
        "errors",
        "parse_failures",
        "unknown_ids",
        "skipped",
        "metrics",
    ):
        assert key in data, key
    assert data["documents"] == 2
    assert set(data["micro"]) >= {"tp", "fp", "fn", "precision", "recall", "f1"}
    assert set(data["fields"]) == {"total", "vendor.name", "tags[]"}
    for field in data["fields"].values():
        assert set(field) >= {"type", "tp", "fp", "fn", "precision", "recall", "f1", "errors"}
    assert data["fields"]["total"]["errors"] == {"wrong_value": 1}
    assert data["metrics"]["f1"] == data["micro"]["f1"]
    assert "field_f1/tags" in data["metrics"]
    assert data["gates"]["passed"] is False


def test_md_format(tmp_path: Path) -> None:
    result = score(tmp_path, "--format", "md")
    assert result.exit_code == 0
    assert result.stdout.startswith("# Extraction evaluation")
    assert "| `vendor.name` |" in result.stdout


@pytest.mark.parametrize(
    ("fmt", "check"),
    [
        ("json", lambda text: json.loads(text)["documents"] == 2),
        ("md", lambda text: text.startswith("# ")),
        ("table", lambda text: text.startswith("documents 2")),
    ],
)
def test_out_writes_the_report_to_a_file(
    tmp_path: Path, fmt: str, check: Callable[[str], bool]
) -> None:
    setup_case(tmp_path, {"gold.jsonl": GOLD.encode()})
    runner = CliRunner()
    out = tmp_path / f"report.{fmt}"
    result = runner.invoke(
        main,
        [
            "score",
            str(tmp_path / "gold.jsonl"),
            str(tmp_path / "pred.jsonl"),
            "--format",
            fmt,
            "--out",
            str(out),
            "--no-log",
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert check(out.read_text(encoding="utf-8"))


def test_id_key_option(tmp_path: Path) -> None:
    gold = '{"doc": "a", "total": 1}\n'
    pred = '{"doc": "a", "total": 1}\n'
    assert score(tmp_path, gold=gold, pred=pred).exit_code == 2
    result = score(tmp_path, "--id-key", "doc", "--min-f1", "1", gold=gold, pred=pred)
    assert result.exit_code == 0, result.output


def test_config_is_applied(tmp_path: Path) -> None:
    (tmp_path / "cfg.toml").write_text(
        '[fields."total"]\nrel_tol = 0.1\n[fields."tags[]"]\nignore = true\n'
    )
    result = score(tmp_path, "--config", "cfg.toml", "--format", "json")
    data = json.loads(result.stdout)
    assert data["fields"]["total"]["tp"] == 2
    assert data["skipped"] == ["tags[]"]


# --------------------------------------------------------------------------- help and version


def test_module_help_works() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "extract_mlflow", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0
    assert "extract-mlflow" in proc.stdout and "score" in proc.stdout


def test_score_help_lists_every_option() -> None:
    result = CliRunner().invoke(main, ["score", "--help"])
    assert result.exit_code == 0
    for opt in (
        "--config",
        "--id-key",
        "--min-f1",
        "--field-min",
        "--format",
        "--out",
        "GOLD",
        "PRED",
    ):
        assert opt in result.stdout, opt


def test_version() -> None:
    from extract_mlflow import __version__

    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0 and __version__ in result.stdout
