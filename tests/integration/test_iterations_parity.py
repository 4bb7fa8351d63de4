"""The CLI (`score-iterations`) and the Python API (`IterationLogger`) on examples/iterations
give the same results folder (byte for byte, images and PDFs aside) and the same MLflow runs,
read back through MlflowClient; `--no-log` writes the same files as a logged run."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from extract_mlflow import IterationLogger
from extract_mlflow.cli import main
from extract_mlflow.evaluation.iterations import BASELINE, IterationScorer
from extract_mlflow.tracking.iterations import BEST_TAG, ITERATION_TAG
from extract_mlflow.tracking.payload import PARENT_RUN_TAG

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "iterations"
BINARY = {".png", ".pdf"}
PER_RUN_TAGS = ("mlflow.source.", "mlflow.user", "mlflow.log-model", PARENT_RUN_TAG)
"""Tags that name where and by whom a run was made, or another run's id: they differ by design."""


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def files(folder: Path) -> dict[str, bytes | None]:
    """Every file under `folder`: its bytes, or None for images and PDFs (only their presence
    is compared: their renderers embed nothing run-specific, but fonts may differ by a byte)."""
    return {
        p.relative_to(folder).as_posix(): None if p.suffix in BINARY else p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def run_cli(folder: Path, uri: str, results: Path) -> str:
    code, out, err = cli(
        "score-iterations", str(folder), "--config", str(folder / "config.toml"),
        "--baseline", str(folder / "baseline.jsonl"), "--results", str(results),
        "--tracking-uri", uri, "--experiment", "parity", "--run-name", "loop",
        "--param", "model=demo-llm", "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    import json

    return str(json.loads(out)["run_id"])


def run_api(folder: Path, uri: str, results: Path) -> str:
    scorer = IterationScorer(folder / "gold.jsonl", folder / "config.toml")
    baseline = scorer.score(folder / "baseline.jsonl", BASELINE)
    with IterationLogger(
        tracking_uri=uri,
        experiment="parity",
        run_name="loop",
        params={"model": "demo-llm"},
        results=results,
        baseline=baseline,
    ) as loop:
        for iteration in scorer.score_folder(folder):
            loop.log(iteration)
    assert loop.result is not None
    return loop.result.parent.run_id


def tree(client: Any, run_id: str) -> dict[str, Any]:
    """What a run holds, without what differs by design (ids, times, who ran it)."""
    run = client.get_run(run_id)
    tags = {
        k: v
        for k, v in run.data.tags.items()
        if not k.startswith(PER_RUN_TAGS) and k != "mlflow.runName"
    }
    history = {
        key: sorted((m.step, m.value) for m in client.get_metric_history(run_id, key))
        for key in run.data.metrics
    }
    artifacts = set()
    stack = [None]
    while stack:
        path = stack.pop()
        for item in client.list_artifacts(run_id, path):
            if item.is_dir:
                stack.append(item.path)
            else:
                artifacts.add(item.path)
    inputs = [(d.dataset.name, d.dataset.digest) for d in run.inputs.dataset_inputs]
    return {
        "status": run.info.status,
        "name": run.info.run_name,
        "params": run.data.params,
        "tags": tags,
        "history": history,
        "artifacts": artifacts,
        "inputs": inputs,
    }


def children(client: Any, parent: Any, experiment_id: str) -> dict[str, dict[str, Any]]:
    found = client.search_runs(
        [experiment_id], filter_string=f"tags.`{PARENT_RUN_TAG}` = '{parent}'"
    )
    return {r.data.tags[ITERATION_TAG]: tree(client, r.info.run_id) for r in found}


@pytest.mark.parametrize(
    "store",
    [
        pytest.param("local_store", marks=pytest.mark.slow),
        pytest.param("mlflow_server", marks=[pytest.mark.server, pytest.mark.slow]),
    ],
)
def test_cli_and_logger_give_the_same_files_and_runs(
    store: str, request: pytest.FixtureRequest, mlflow_env: Path, tmp_path: Path
) -> None:
    from mlflow import MlflowClient

    backend = request.getfixturevalue(store)
    uri = backend if isinstance(backend, str) else backend.uri
    folder = tmp_path / "loop"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("results"))
    cli_parent = run_cli(folder, uri, tmp_path / "cli")
    api_parent = run_api(folder, uri, tmp_path / "api")

    cli_files, api_files = files(tmp_path / "cli"), files(tmp_path / "api")
    assert cli_files == api_files
    assert {"metrics.csv", "trend.pdf", "tokens.png", "best_prompt.txt"} <= set(cli_files)

    client = MlflowClient(uri)
    cli_tree, api_tree = tree(client, cli_parent), tree(client, api_parent)
    assert cli_tree == api_tree
    assert cli_tree["tags"][BEST_TAG] == "iter_2" and cli_tree["status"] == "FINISHED"
    assert [s for s, _ in cli_tree["history"]["f1"]] == [0, 1, 2]  # the baseline is no step
    assert {f"eval/{name}" for name in cli_files} == cli_tree["artifacts"]  # the same folder
    experiment = client.get_run(cli_parent).info.experiment_id
    cli_children = children(client, cli_parent, experiment)
    assert set(cli_children) == {BASELINE, "iter_1", "iter_2", "iter_3"}
    assert cli_children == children(client, api_parent, experiment)


@pytest.mark.slow
def test_no_log_writes_the_same_files_as_a_logged_run(
    mlflow_env: Path, local_store: str, tmp_path: Path
) -> None:
    folder = tmp_path / "loop"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("results"))
    run_cli(folder, local_store, tmp_path / "logged")
    code, _, err = cli(
        "score-iterations", str(folder), "--config", str(folder / "config.toml"),
        "--baseline", str(folder / "baseline.jsonl"), "--no-log",
    )  # fmt: skip
    assert code == 0, err
    assert files(folder / "results") == files(tmp_path / "logged")
    assert not (mlflow_env / "mlflow.db").exists()  # --no-log made no store
