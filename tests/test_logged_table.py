"""The per-document table (``eval/documents_table.json``) is written a block of documents at a
time, and is the file MLflow's own ``log_table`` writes of the whole "documents" frame: the
same bytes (checked on the file, and on runs of a real store read back through MlflowClient),
the same ``mlflow.loggedArtifacts`` tag, and rows appended when a run has the table already."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from extract_mlflow.evaluation.compact import DocumentColumns
from extract_mlflow.evaluation.evaluate import evaluate
from extract_mlflow.report import Report
from extract_mlflow.tracking.log import log_report
from extract_mlflow.tracking.payload import TABLE_FILE, write_table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import synth  # noqa: E402


def _whole_frame_json(report: Report) -> str:
    """What ``MlflowClient.log_table`` writes for the report's "documents" frame."""
    return str(report.to_frame("documents").to_json(orient="split", index=False, date_format="iso"))


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Synthetic invoices with awkward ids (a slash, quotes, non-ASCII), 4 without a
    prediction, an unreadable prediction line, one document with nothing to score (0/0)."""
    gold, pred, _ = synth.make_dataset(50, seed=4)
    for k, name in ((0, 'a/b "c"'), (1, "ünï-çødé"), (2, "tab\there")):
        gold[k]["id"] = pred[k]["id"] = name
    gold.append({"id": "empty"})
    pred.append({"id": "empty"})
    folder = tmp_path_factory.mktemp("table")
    g, p = folder / "gold.jsonl", folder / "pred.jsonl"
    synth.write_jsonl(gold, g)
    synth.write_jsonl(pred[:45] + pred[49:], p)
    with p.open("a", encoding="utf-8") as f:
        f.write('{"id": "' + gold[46]["id"] + '", "total": \n')
    return g, p


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("rows", [None, 1, 7, 51, 1000])
def test_written_table_is_the_whole_frame_json(
    files: tuple[Path, Path], tmp_path: Path, stream: bool, rows: int | None
) -> None:
    report = evaluate(*files, stream=stream)
    assert isinstance(report.documents, DocumentColumns) is stream
    frame = report.to_frame("documents")
    assert set(frame["status"]) == {"scored", "missing", "parse_failure"}
    assert frame["precision"].isna().any() and frame["reason"].notna().any()
    out = tmp_path / "table.json"
    write_table(report, out, rows)
    assert out.read_text(encoding="utf-8") == _whole_frame_json(report)


def test_table_of_no_documents(tmp_path: Path) -> None:
    from extract_mlflow.config import Config

    report = Report(documents=[], fields={}, config=Config())
    out = tmp_path / "table.json"
    write_table(report, out)
    assert out.read_text(encoding="utf-8") == _whole_frame_json(report)
    assert json.loads(out.read_text(encoding="utf-8"))["data"] == []


def _table_bytes(store: str, run_id: str, into: Path) -> bytes:
    from mlflow.tracking import MlflowClient

    return Path(MlflowClient(store).download_artifacts(run_id, TABLE_FILE, str(into))).read_bytes()


@pytest.mark.parametrize(
    "where", ["local", pytest.param("server", marks=[pytest.mark.server, pytest.mark.slow])]
)
def test_logged_table_is_what_log_table_logs(
    mlflow_env: Path,
    request: pytest.FixtureRequest,
    files: tuple[Path, Path],
    tmp_path: Path,
    where: str,
) -> None:
    from mlflow.tracking import MlflowClient

    if where == "server":
        store = request.getfixturevalue("mlflow_server").uri
    else:
        store = request.getfixturevalue("local_store")
    client = MlflowClient(store)
    report = evaluate(*files)
    logged = log_report(report, tracking_uri=store, experiment=f"table-bytes-{where}")
    reference = client.create_run(client.get_run(logged.run_id).info.experiment_id)
    client.log_table(reference.info.run_id, report.to_frame("documents"), TABLE_FILE)
    ours = _table_bytes(store, logged.run_id, tmp_path / "ours")
    theirs = _table_bytes(store, reference.info.run_id, tmp_path / "theirs")
    assert ours == theirs and len(json.loads(ours)["data"]) == len(report.documents)
    tag = "mlflow.loggedArtifacts"
    assert (
        client.get_run(logged.run_id).data.tags[tag]
        == client.get_run(reference.info.run_id).data.tags[tag]
    )

    # a second evaluation logged into the same run appends its rows, as log_table does
    again = log_report(report, tracking_uri=store, run_id=logged.run_id)
    assert again.run_id == logged.run_id
    client.log_table(reference.info.run_id, report.to_frame("documents"), TABLE_FILE)
    ours = _table_bytes(store, logged.run_id, tmp_path / "ours2")
    theirs = _table_bytes(store, reference.info.run_id, tmp_path / "theirs2")
    assert ours == theirs and len(json.loads(ours)["data"]) == 2 * len(report.documents)
    assert json.loads(client.get_run(logged.run_id).data.tags[tag]) == [
        {"path": TABLE_FILE, "type": "table"}
    ]
