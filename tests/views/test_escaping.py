"""Terminal escape sequences in ids and values never reach the terminal raw: every human view
(table, markdown, error lines, progress lines) escapes control characters; JSON stays JSON."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from extract_mlflow import evaluate
from extract_mlflow.cli import main
from extract_mlflow.core.text import terminal_safe
from extract_mlflow.views.markdown import report_markdown
from extract_mlflow.views.table import report_table

CLEAR = "\x1b[2J"
EVIL_ID = f"doc{CLEAR}\x07\r\x9b31m"
RAW = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def lines(gold: dict[str, object], pred: dict[str, object]) -> tuple[bytes, bytes]:
    return (json.dumps(gold) + "\n").encode(), (json.dumps(pred) + "\n").encode()


def run(tmp_path: Path, gold: bytes, pred: bytes, *args: str) -> tuple[int, str, str]:
    (tmp_path / "gold.jsonl").write_bytes(gold)
    (tmp_path / "pred.jsonl").write_bytes(pred)
    result = CliRunner().invoke(
        main,
        ["score", str(tmp_path / "gold.jsonl"), str(tmp_path / "pred.jsonl"), "--no-log", *args],
    )
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("fmt", ["table", "md"])
def test_an_evil_id_and_value_are_escaped_in_table_and_markdown(tmp_path: Path, fmt: str) -> None:
    gold, pred = lines(
        {"id": EVIL_ID, f"total{CLEAR}": f"a{CLEAR}b", "n": 1},
        {"id": EVIL_ID, f"total{CLEAR}": f"x{CLEAR}\u202ey", "n": 2},
    )
    code, out, err = run(tmp_path, gold, pred, "--format", fmt)
    assert code == 0, err
    assert RAW.search(out) is None and RAW.search(err) is None
    assert "\\u001b[2J" in out  # shown, escaped
    if fmt == "md":
        assert "doc\\u001b[2J\\u0007\\r\\u009b31m" in out


def test_json_output_keeps_the_values(tmp_path: Path) -> None:
    gold, pred = lines({"id": EVIL_ID, "v": f"a{CLEAR}"}, {"id": EVIL_ID, "v": "b\x9b"})
    code, out, _ = run(tmp_path, gold, pred, "--format", "json")
    assert code == 0 and RAW.search(out) is None
    data = json.loads(out)
    assert data["worst_documents"][0]["id"] == EVIL_ID
    assert data["fields"]["v"]["examples"][0]["got"] == "b\x9b"


def test_an_error_line_escapes_the_id(tmp_path: Path) -> None:
    gold = (json.dumps({"id": EVIL_ID}) + "\n").encode() * 2  # a duplicate id: exit 2
    code, out, err = run(tmp_path, gold, b'{"id": 1}\n')
    assert out == ""
    assert code == 2
    assert err.startswith("error: ") and err.count("\n") == 1
    assert RAW.search(err) is None and "\\u001b[2J" in err


def test_a_gate_failure_line_escapes_the_field(tmp_path: Path) -> None:
    field = f"f{CLEAR}\x07"  # click drops ANSI sequences off a tty, not other controls
    gold, pred = lines({"id": "a", field: 1}, {"id": "a", field: 2})
    code, _, err = run(tmp_path, gold, pred, "--field-min", f"{field}=0.5")
    assert code == 1 and "gate failed" in err and RAW.search(err) is None
    assert "f\\u001b[2J\\u0007" in err


def test_progress_lines_of_pages_are_escaped(tmp_path: Path) -> None:
    page = "== Investigation ==\n```csv\nA,B\n1,2\n```\n"
    gold = (json.dumps({"id": EVIL_ID, "rows": [{"A": "1", "B": "2"}]}) + "\n").encode()
    pred = (json.dumps({"id": EVIL_ID, "output": page}) + "\n").encode()
    config = tmp_path / "config.toml"
    config.write_text(
        '[layout.profiles.p]\nrequired = ["Investigation"]\ntable_section = "Investigation"\n',
        encoding="utf-8",
    )
    code, _, err = run(tmp_path, gold, pred, "--config", str(config))
    assert code == 0 and EVIL_ID[:3] in err and RAW.search(err) is None


def test_library_views_are_escaped() -> None:
    report = evaluate([{"id": EVIL_ID, "v": 1}], [{"id": EVIL_ID, "v": 2}])
    for text in (report_table(report), report_markdown(report)):
        assert RAW.search(text) is None


@given(st.text())
def test_terminal_safe_leaves_no_control_character(text: str) -> None:
    safe = terminal_safe(text, one_line=True)
    assert RAW.search(safe) is None and "\n" not in safe and "\t" not in safe
    assert json.loads(f'"{terminal_safe(json.dumps(text)[1:-1])}"') == text


FORGED = "all gates passed"
NEWLINE_ID = f"inv-1\n{FORGED}"


@pytest.mark.parametrize("fmt", ["table", "md"])
def test_an_id_with_a_newline_cannot_forge_a_line(tmp_path: Path, fmt: str) -> None:
    """Its newline is written as an escape, as every other control character is: the line
    stays one line in the table, the notes and summary.md."""
    gold = [{"id": NEWLINE_ID, "x": 1}, {"id": f"gone\n{FORGED}", "x": 2}, {"id": "c", "x": 3}]
    pred = [{"id": NEWLINE_ID, "x": 5}, {"id": "c", "x": 3}]
    code, out, err = run(tmp_path, *rows(gold), *rows(pred), "--format", fmt)
    assert code == 0, err
    assert not [line for line in out.splitlines() if line.lstrip("|- ").startswith(FORGED)]
    for head in ("inv-1", "gone"):  # escaped, or a space in a markdown cell: on one line
        assert any(head in x and FORGED in x for x in out.splitlines())


def rows(docs: list[dict[str, object]]) -> tuple[bytes]:
    return ("".join(json.dumps(d) + "\n" for d in docs).encode(),)


@pytest.mark.parametrize("fmt", ["table", "md"])
def test_a_flipped_id_with_a_newline_stays_on_its_line(tmp_path: Path, fmt: str) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_bytes(*rows([{"id": NEWLINE_ID, "x": 1}, {"id": "c", "x": 3}]))
    worse = tmp_path / "worse.jsonl"
    worse.write_bytes(*rows([{"id": NEWLINE_ID, "x": 2}, {"id": "c", "x": 3}]))
    result = CliRunner().invoke(main, ["diff", str(gold), str(gold), str(worse), "--format", fmt])
    assert result.exit_code == 0, result.stderr
    assert not [x for x in result.stdout.splitlines() if x.lstrip("|- ").startswith(FORGED)]
    assert any("inv-1" in x and FORGED in x for x in result.stdout.splitlines())


@pytest.mark.parametrize("option", ["--param", "--tag"])
def test_a_key_given_twice_is_a_usage_error(tmp_path: Path, option: str) -> None:
    gold, pred = lines({"id": "a", "x": 1}, {"id": "a", "x": 1})
    code, out, err = run(tmp_path, gold, pred, option, "k=1", option, "k=2")
    assert code == 2 and out == ""
    assert f"Invalid value for {option}: 'k' given twice" in err
    code, _, err = run(tmp_path, gold, pred, option, "k=1", option, "j=2")
    assert code == 0, err
