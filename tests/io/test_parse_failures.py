"""`parse_failure_rate` counts every unreadable prediction line, attributed or not: a file of
garbage cannot pass a `parse_failure_rate` gate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from extract_mlflow import evaluate
from extract_mlflow.cli import main
from extract_mlflow.comparison import compare
from extract_mlflow.io.loading import load_predictions

GOLD = b'{"id": "a", "total": 1}\n{"id": "b", "total": 2}\n{"id": "c", "total": 3}\n'
GOOD = b'{"id": "a", "total": 1}\n{"id": "b", "total": 2}\n{"id": "c", "total": 3}\n'
GARBAGE = b'garbage\n[1, 2]\n"x"\n3\nnull\n{no json\n'


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def rate(tmp_path: Path, pred: bytes) -> float | None:
    return evaluate(write(tmp_path, "gold.jsonl", GOLD), write(tmp_path, "p.jsonl", pred)) \
        .parse_failure_rate  # fmt: skip


def test_a_garbage_prediction_file_has_rate_one(tmp_path: Path) -> None:
    assert rate(tmp_path, GARBAGE) == 1.0
    assert rate(tmp_path, b"garbage\n") == pytest.approx(1 / 3)  # one lost line, 3 documents


@pytest.mark.parametrize(
    ("pred", "expected"),
    [
        (GOOD, 0.0),
        (GOOD[:48] + b"junk\n", 1 / 3),  # c has no prediction; the junk line is taken as its
        (GOOD + b"junk\n", 1 / 4),  # every document predicted: the junk line is one more
        (GOOD.replace(b'"total": 1}', b'"total": [1}'), 1 / 3),  # a parse failure of a
        (b'{"id": "a", "total": [1}\njunk\njunk\njunk\n', 4 / 4),
    ],
)
def test_rate_counts_attributed_and_unattributed_lines(
    tmp_path: Path, pred: bytes, expected: float
) -> None:
    assert rate(tmp_path, pred) == pytest.approx(expected)


@pytest.mark.parametrize("line", [b'[{"id": "b", "total": 2}]', b'["id", {"id": "b"}]'])
def test_json_that_is_not_an_object_fails_the_document_its_text_names(
    tmp_path: Path, line: bytes
) -> None:
    ps = load_predictions(write(tmp_path, "p.jsonl", line + b"\n"))
    assert list(ps.parse_failures) == ["b"] and ps.unattributed == []
    assert ps.parse_failures["b"] == "line 1: not a JSON object (got array)"
    report = evaluate(write(tmp_path, "gold.jsonl", GOLD), write(tmp_path, "q.jsonl", line + b"\n"))
    assert report.parse_failures == ["b"]


def test_rate_gate_fails_a_garbage_run_in_the_library(tmp_path: Path) -> None:
    gold = write(tmp_path, "gold.jsonl", GOLD)
    base = evaluate(gold, write(tmp_path, "good.jsonl", GOOD))
    bad = evaluate(gold, write(tmp_path, "bad.jsonl", GARBAGE))
    gates = [{"metric": "parse_failure_rate", "threshold": 0.05}]
    assert compare(base, bad, gates).exit_code == 1
    assert compare(base, base, gates).exit_code == 0


def test_garbage_fails_a_max_parse_failure_rate_gate_in_the_cli(
    tmp_path: Path, local_store: str, mlflow_env: Path
) -> None:
    write(tmp_path, "gold.jsonl", GOLD)
    write(tmp_path, "good.jsonl", GOOD)
    write(tmp_path, "bad.jsonl", GARBAGE)
    runs = []
    for pred in ("good.jsonl", "bad.jsonl"):
        result = CliRunner().invoke(
            main,
            ["score", "gold.jsonl", pred, "--tracking-uri", local_store,
             "--experiment", "parse-failures", "--format", "json"],
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        data = json.loads(result.stdout)
        runs.append(data["run_id"])
    assert data["parse_failure_rate"] == 1.0
    assert data["metrics"]["parse_failure_rate"] == 1.0
    result = CliRunner().invoke(
        main,
        ["compare", runs[0], runs[1], "--tracking-uri", local_store,
         "--max", "parse_failure_rate=0.05"],
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "parse_failure_rate" in result.stderr


def test_a_list_row_fails_the_document_it_names() -> None:
    from extract_mlflow.io.loading import predictions_from_rows

    rows: list[Any] = [[{"id": "b", "total": 2}], 3, '[{"id": "c"}]']
    ps = predictions_from_rows(rows)
    assert list(ps.parse_failures) == ["b", "c"]
    assert ps.unattributed == ["row 2: not an object (got int)"]
