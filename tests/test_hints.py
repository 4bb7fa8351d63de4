"""`extract-mlflow hints GOLD --for ID`: example values per field from the other gold documents
only, as prompt text; `field_hints` reads a gold path as well as rows; bad input exits 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from extract_mlflow import field_hints
from extract_mlflow.cli import main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "invoices"
GOLD = EXAMPLE / "gold.jsonl"
HEADER = "Example values from other documents (formats, not answers):"


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def leaves(value: Any, path: str = "") -> list[tuple[str, Any]]:
    """A plain reference walk: (path, value) of every scalar, `[]` after list names."""
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in leaves(v, f"{path}.{k}" if path else k)]
    if isinstance(value, list):
        return [x for v in value for x in leaves(v, f"{path}[]")]
    return [(path, value)]


def gold_docs() -> list[dict[str, Any]]:
    return [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines()]


def shown(line: str) -> tuple[str, list[Any]]:
    path, _, values = line[2:].partition(": ")
    return path, [json.loads(v) for v in values.split(" | ")]


def test_hints_come_from_other_documents_only() -> None:
    code, out, err = cli("hints", str(GOLD), "--for", "inv-003", "--per-field", "2")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == HEADER
    docs = gold_docs()
    others: dict[str, list[Any]] = {}
    for doc in docs:
        if doc["id"] != "inv-003":
            for path, value in leaves({k: v for k, v in doc.items() if k != "id"}):
                others.setdefault(path, []).append(value)
    own = {(p, json.dumps(v)) for p, v in leaves(next(d for d in docs if d["id"] == "inv-003"))}
    paths = []
    for line in lines[1:]:
        path, values = shown(line)
        paths.append(path)
        assert 1 <= len(values) <= 2 and len({json.dumps(v) for v in values}) == len(values)
        assert all(v in others[path] for v in values), line
        only_own = {v for p, v in own if p == path} - {json.dumps(v) for v in others[path]}
        assert not only_own & {json.dumps(v) for v in values}, line  # nothing from inv-003
    assert paths == sorted(others) and "id" not in paths
    assert "notes" in paths  # without --config nothing is ignored


def test_config_drops_ignored_fields_and_per_field_counts() -> None:
    code, out, err = cli(
        "hints", str(GOLD), "--for", "inv-001", "--config", str(EXAMPLE / "config.toml")
    )
    assert code == 0, err
    values = dict(shown(line) for line in out.splitlines()[1:])
    assert "notes" not in values  # ignore = true in the config
    assert len(values["currency"]) <= 3 and len(values["vendor.name"]) == 3  # default 3


def test_field_hints_reads_a_path_like_rows() -> None:
    rows = gold_docs()
    assert field_hints(GOLD, "inv-002") == field_hints(rows, "inv-002")
    assert field_hints(str(GOLD), "inv-002", per_field=1) == field_hints(
        rows, "inv-002", per_field=1
    )


def test_unknown_id_and_missing_gold_exit_2_with_one_line(tmp_path: Path) -> None:
    for args in (
        ["hints", str(GOLD), "--for", "inv-404"],
        ["hints", str(tmp_path / "none.jsonl"), "--for", "inv-001"],
    ):
        code, out, err = cli(*args)
        lines = [line for line in err.splitlines() if line.strip()]
        assert code == 2 and out == ""
        assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "inv-404" in cli("hints", str(GOLD), "--for", "inv-404")[2]
