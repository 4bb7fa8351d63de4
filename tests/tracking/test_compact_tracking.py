"""The documents.parquet a streamed evaluation logs is the table the loaded one logs (read back
from a real store), written in row groups."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from extract_mlflow.evaluation.compact import DocumentColumns
from extract_mlflow.evaluation.evaluate import evaluate
from extract_mlflow.io import spill
from extract_mlflow.tracking.log import log_report

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import synth  # noqa: E402


def _documents(store: str, run_id: str, into: Path) -> Path:
    from mlflow.tracking import MlflowClient

    path = MlflowClient(store).download_artifacts(run_id, "eval/documents.parquet", str(into))
    return Path(path)


@pytest.mark.slow
@pytest.mark.parametrize("parse_failure", [False, True])
def test_streamed_documents_parquet_is_the_loaded_one(
    mlflow_env: Path, local_store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    parse_failure: bool,
) -> None:  # fmt: skip
    gold, pred, _ = synth.make_dataset(60, seed=11)
    g, p = tmp_path / "gold.jsonl", tmp_path / "pred.jsonl"
    synth.write_jsonl(gold, g)
    synth.write_jsonl(pred[::-1][:55], p)  # out of order (indexed join), 5 missing
    if parse_failure:
        with p.open("a", encoding="utf-8") as f:
            f.write('{"id": "' + gold[2]["id"] + '", "total": \n')  # one of the 5 missing
    monkeypatch.setattr(spill, "_BLOCK_CELLS", 7 * 3 * 40)  # a few documents per row group
    streamed = evaluate(g, p)
    loaded = evaluate(g, p, stream=False)
    assert type(streamed.documents) is type(loaded.documents) is DocumentColumns  # one table
    assert streamed.documents.spill is not None and loaded.documents.spill is None
    runs = [
        log_report(r, tracking_uri=local_store, experiment="compact") for r in (streamed, loaded)
    ]
    files = [_documents(local_store, r.run_id, tmp_path / str(i)) for i, r in enumerate(runs)]
    assert pq.ParquetFile(files[0]).num_row_groups > 1
    got, want = (pd.read_parquet(f) for f in files)
    assert len(want) == 60 and len(want.columns) > 20
    pd.testing.assert_frame_equal(got, want)
