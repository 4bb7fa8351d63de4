"""The run's MLflow documents table is bounded: every document of a set up to
``TABLE_ROWS``, beyond it the half with the lowest F1 and a seeded sample of the rest, said in
the run's description; ``documents.parquet`` keeps every document."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from support.runs import artifact_paths

from extract_mlflow import evaluate
from extract_mlflow.cli import main
from extract_mlflow.tracking.payload import NOTE_TAG, TABLE_FILE
from extract_mlflow.views import frames
from extract_mlflow.views.frames import report_frame, table_rows

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "invoices"
GOLD, PRED = str(EXAMPLE / "gold.jsonl"), str(EXAMPLE / "pred_baseline.jsonl")


def plain_worst(counts: list[tuple[int, int, int]], k: int) -> list[int]:
    """The `k` documents with the lowest F1, written plainly: F1 = 2tp / (2tp + fp + fn), a
    document with no values at all last, ties by position."""

    def key(i: int) -> tuple[float, int]:
        tp, fp, fn = counts[i]
        den = 2 * tp + fp + fn
        return (2 * tp / den if den else float("inf"), i)

    return sorted(range(len(counts)), key=key)[:k]


counts_lists = st.lists(st.tuples(*(st.integers(0, 6),) * 3), min_size=0, max_size=60)


@settings(max_examples=300, deadline=None)
@given(counts=counts_lists, limit=st.integers(1, 30))
def test_rows_are_the_worst_half_and_a_sample_of_the_rest(
    counts: list[tuple[int, int, int]], limit: int
) -> None:
    rows = table_rows(np.array(counts, dtype=np.int64).reshape(-1, 3), limit).tolist()
    n = len(counts)
    if n <= limit:
        assert rows == list(range(n))
        return
    assert len(rows) == limit
    assert rows == sorted(set(rows)) and all(0 <= r < n for r in rows)
    assert set(plain_worst(counts, limit // 2)) <= set(rows)
    again = table_rows(np.array(counts, dtype=np.int64), limit).tolist()
    assert again == rows  # seeded: the same report gives the same table


def test_the_sample_is_spread_over_the_rest() -> None:
    """With every document equally good, the sampled half is not just the first documents."""
    rows = table_rows(np.tile([3, 1, 0], (1000, 1)), 10)
    assert len(rows) == 10 and rows[-1] > 100


@pytest.mark.slow
def test_a_large_run_logs_a_bounded_table_and_says_so(
    mlflow_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlflow import MlflowClient

    from extract_mlflow.tracking.client import using_tracking_uri

    report = evaluate(GOLD, PRED)
    n = len(report.documents)
    limit = 4
    assert n > limit
    monkeypatch.setattr(frames, "TABLE_ROWS", limit)
    uri = f"sqlite:///{tmp_path / 'table.db'}"
    result = CliRunner().invoke(
        main, ["score", GOLD, PRED, "--tracking-uri", uri, "--format", "json"]
    )
    assert result.exit_code == 0, result.stderr
    run_id = json.loads(result.stdout)["run_id"]
    client = MlflowClient(tracking_uri=uri)
    run = client.get_run(run_id)
    with using_tracking_uri(uri):
        table = client.load_table(run.info.experiment_id, TABLE_FILE, run_ids=[run_id])
    docs = report_frame(report, "documents")
    counts = docs[["tp", "fp", "fn"]].to_numpy().tolist()
    expected = [docs["id"][i] for i in sorted(table_rows(np.array(counts), limit).tolist())]
    assert list(table["id"]) == expected
    worst = {docs["id"][i] for i in plain_worst([tuple(c) for c in counts], limit // 2)}
    assert worst <= set(table["id"])
    note = run.data.tags[NOTE_TAG]
    assert f"lists {limit:,} of the {n:,} documents" in note
    assert "documents.parquet has every document" in note
    assert "eval/documents.parquet" in artifact_paths(client, run_id, "eval")
    local = Path(client.download_artifacts(run_id, "eval/documents.parquet", str(tmp_path)))
    assert len(pd.read_parquet(local)) == n


@pytest.mark.slow
def test_a_small_run_logs_every_document_and_no_table_note(
    mlflow_env: Path, tmp_path: Path
) -> None:
    from mlflow import MlflowClient

    uri = f"sqlite:///{tmp_path / 'small.db'}"
    result = CliRunner().invoke(
        main, ["score", GOLD, PRED, "--tracking-uri", uri, "--format", "json"]
    )
    assert result.exit_code == 0, result.stderr
    run = MlflowClient(tracking_uri=uri).get_run(json.loads(result.stdout)["run_id"])
    assert "documents table" not in run.data.tags[NOTE_TAG]
