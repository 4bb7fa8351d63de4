"""Reading a logged evaluation back through ``MlflowClient``: every artifact path of a run, and
a run compared with the report it logged (metrics, params, tags, dataset, artifacts, table)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def artifact_paths(client: Any, run_id: str, path: str | None = None) -> set[str]:
    """Every artifact file of the run under `path`, recursively."""
    out: set[str] = set()
    for item in client.list_artifacts(run_id, path):
        out |= artifact_paths(client, run_id, item.path) if item.is_dir else {item.path}
    return out


def assert_run_holds_report(
    client: Any,
    run_id: str,
    report: Any,
    tmp_path: Path,
    *,
    prompts: dict[str, str] | None = None,
    params: dict[str, str] | None = None,
    tags: dict[str, str] | None = None,
    dataset: bool = True,
    exact: bool = True,
) -> None:
    """Read one evaluation run back through MlflowClient and compare everything with `report`:
    metrics, params, tags, the gold dataset input, every ``eval/`` artifact and the table."""
    import json

    import pandas as pd

    from extract_mlflow.tracking.client import using_tracking_uri
    from extract_mlflow.tracking.payload import (
        RUN_TYPE_EVALUATION,
        RUN_TYPE_TAG,
        SIGNATURE_TAG,
        TABLE_FILE,
        report_params,
    )
    from extract_mlflow.views.frames import report_frame
    from extract_mlflow.views.markdown import report_markdown

    run = client.get_run(run_id)
    metrics = report.metrics()
    if exact:
        assert run.data.metrics == metrics
        assert run.data.params == report_params(report, params)
    else:
        assert {k: run.data.metrics[k] for k in metrics} == metrics
        assert report_params(report, params).items() <= run.data.params.items()
    expected_tags = {SIGNATURE_TAG: report.signature(), RUN_TYPE_TAG: RUN_TYPE_EVALUATION}
    assert {**expected_tags, **(tags or {})}.items() <= run.data.tags.items()
    if dataset:
        (inp,) = [d for d in run.inputs.dataset_inputs if d.dataset.name != "dataset"]
        assert inp.dataset.digest == (report.gold_digest or "")[:36] or not report.gold_digest
        assert json.loads(inp.dataset.profile)["num_rows"] == len(report.documents)
        assert {t.key: t.value for t in inp.tags}["mlflow.data.context"] == "gold"
    prompt_files = {f"eval/prompts/{name}" for name in (prompts or {})}
    expected = {
        "eval/summary.md",
        "eval/diagnostics.json",
        "eval/documents.parquet",
        "eval/config.toml",
        TABLE_FILE,
    } | prompt_files
    assert expected <= artifact_paths(client, run_id, "eval")
    local = Path(client.download_artifacts(run_id, "eval", str(tmp_path)))
    assert (local / "summary.md").read_text(encoding="utf-8") == report_markdown(report)
    diagnostics = json.loads((local / "diagnostics.json").read_text(encoding="utf-8"))
    assert diagnostics == json.loads(json.dumps(report.to_dict(), default=str))
    frame = pd.read_parquet(local / "documents.parquet")
    pd.testing.assert_frame_equal(frame, report_frame(report, "counts"))
    assert (local / "config.toml").read_text(encoding="utf-8") == report.config.to_toml()
    for name, text in (prompts or {}).items():
        assert (local / "prompts" / name).read_text(encoding="utf-8") == text
    with using_tracking_uri(client.tracking_uri):  # load_table searches the global store
        table = client.load_table(run.info.experiment_id, TABLE_FILE, run_ids=[run_id])
    docs = report_frame(report, "documents")
    assert list(table["id"]) == list(docs["id"])
    assert list(table["tp"]) == list(docs["tp"]) and list(table["fn"]) == list(docs["fn"])
    assert json.loads(run.data.tags["mlflow.loggedArtifacts"]) == [
        {"path": TABLE_FILE, "type": "table"}
    ]
