"""Every comparison is kept: `compare` and `promote` store their page and JSON in a folder of
their own on the candidate's run (``eval/comparisons/<baseline run id>/<UTC time>/``), the tags
point to the latest, and each kept comparison lists the ones before it. Read back from a real
`mlflow server` through MlflowClient."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.mlflow_server import MlflowServer
from support.registry import client_for, score

from extract_mlflow.cli import main
from extract_mlflow.tracking.comparisons import LATEST_TAG
from extract_mlflow.tracking.log import log_report
from extract_mlflow.tracking.registry import COMPARISON_TAG, SUMMARY_TAG, VERDICT_TAG

TIME = re.compile(r"\d{8}T\d{6}\.\d{6}Z")


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def kept(client: Any, run_id: str) -> list[str]:
    """Every folder under eval/comparisons/<baseline>/ of the run, as MlflowClient lists it."""
    folders = []
    for baseline in client.list_artifacts(run_id, "eval/comparisons"):
        folders += [t.path for t in client.list_artifacts(run_id, baseline.path) if t.is_dir]
    return sorted(folders)


def read(client: Any, run_id: str, path: str, folder: Path) -> str:
    return Path(client.download_artifacts(run_id, path, str(folder))).read_text(encoding="utf-8")


@pytest.mark.server
def test_every_compare_and_promote_is_kept_and_the_tags_point_to_the_latest(
    mlflow_server: MlflowServer, tmp_path: Path
) -> None:
    uri, name = mlflow_server.uri, f"history-{uuid.uuid4().hex[:8]}"
    client = client_for(uri)
    kwargs: dict[str, Any] = {"tracking_uri": uri, "experiment": name, "register": name}
    first = log_report(score("pred_baseline.jsonl"), **kwargs).run_id  # version 1
    cand = log_report(score("pred_improved.jsonl"), **kwargs).run_id  # version 2
    second = log_report(score("pred_improved.jsonl"), **kwargs).run_id  # version 3
    common = ("--tracking-uri", uri, "--format", "json")
    steps = [  # (command, baseline run or None, exit code)
        (("compare", first, cand, "--max-drop", "f1=0.01"), first, 0),
        (("compare", second, cand, "--max-drop", "f1=0.01"), second, 0),
        (("compare", first, cand, "--min", "f1=0.999"), first, 1),  # twice against one
        (("promote", name, "2", "--alias", "staging", "--min", "f1=0.999"), None, 1),
    ]
    outputs = []
    for args, _, expected in steps:
        code, out, err = cli(*args, *common)
        assert code == expected, err
        outputs.append(json.loads(out))
    client.set_registered_model_alias(name, "champion", "1")
    code, out, err = cli("promote", name, "2", "--alias", "champion", "--max-drop", "f1=0.01",
                         *common)  # fmt: skip
    assert code == 0, err
    outputs.append(json.loads(out))
    steps.append((("promote",), first, 0))

    folders = kept(client, cand)
    assert len(folders) == 5  # nothing overwritten
    logged = [o.get("comparison", o)["logged_as"] for o in outputs]
    assert sorted(entry["path"] for entry in logged) == folders
    for entry, (_, baseline, _) in zip(logged, steps, strict=True):
        assert entry["baseline_run"] == (baseline or "none")
        assert entry["path"] == f"eval/comparisons/{entry['baseline_run']}/{entry['logged_at']}"
        assert TIME.fullmatch(entry["logged_at"])
    times = [entry["logged_at"] for entry in logged]
    assert times == sorted(times) and len(set(times)) == 5
    # every kept comparison readable, page and JSON, with its own verdict
    verdicts = []
    for entry in logged:
        data = json.loads(read(client, cand, f"{entry['path']}/comparison.json", tmp_path))
        page = read(client, cand, f"{entry['path']}/comparison.html", tmp_path)
        comparison = data.get("comparison", data)
        assert comparison["logged_as"] == entry
        verdicts.append(data["tags"][VERDICT_TAG] if "tags" in data else comparison["passed"])
        assert entry["path"] in page
    assert verdicts == [True, True, False, "failed", "passed"]
    # the latest lists the four before it, newest first; the first listed none
    latest = outputs[-1]["comparison"]
    assert [e["path"] for e in latest["earlier"]] == [e["path"] for e in logged[-2::-1]]
    assert outputs[0]["earlier"] == []
    # the run's tag and the version's tags point to the latest; the earlier verdict is kept
    assert client.get_run(cand).data.tags[LATEST_TAG] == logged[-1]["path"]
    tags = client.get_model_version(name, "2").tags
    assert tags[VERDICT_TAG] == "passed"
    assert tags[COMPARISON_TAG] == f"runs:/{cand}/{logged[-1]['path']}"
    earlier = json.loads(read(client, cand, f"{logged[3]['path']}/comparison.json", tmp_path))
    assert earlier["tags"][VERDICT_TAG] == "failed" and earlier["alias"] == "staging"
    assert "gate failed: f1 0.9912 < threshold 0.999" in earlier["tags"][SUMMARY_TAG]
    assert earlier["tags"][COMPARISON_TAG] == f"runs:/{cand}/{logged[3]['path']}"
    page = read(client, cand, f"{logged[-1]['path']}/comparison.html", tmp_path)
    assert "Earlier comparisons (4), newest first:" in page
    assert all(e["path"] in page for e in logged[:-1])
