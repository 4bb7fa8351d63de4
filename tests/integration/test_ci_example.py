"""examples/ci.yml is a workflow a user copies: every `extract-mlflow` command in it must parse
with today's CLI, and its steps must do what its comments promise when run for real (bash, the
invoice example, the session's `mlflow server`)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from extract_mlflow.cli import main

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "examples" / "ci.yml"
INVOICES = ROOT / "examples" / "invoices"
BASH = shutil.which("bash")


def workflow() -> dict[str, Any]:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def step(job: str, name: str) -> str:
    for s in workflow()["jobs"][job]["steps"]:
        if s.get("name") == name:
            return str(s["run"])
    raise AssertionError(f"no step {name!r} in job {job!r}")


def commands(script: str) -> list[list[str]]:
    """The `extract-mlflow …` commands of a step, continuation lines joined, shell variables
    replaced by a placeholder word."""
    joined = re.sub(r"\\\n\s*", " ", script)
    found = []
    for line in joined.splitlines():
        line = line.strip()
        if line.startswith("extract-mlflow "):
            words = shlex.split(re.sub(r"\$\([^)]*\)|\$\{[^}]*\}|\$\w+", "X", line))
            found.append(words[1:])
    return found


def test_the_workflow_has_both_jobs_and_every_command_parses() -> None:
    data = workflow()
    assert set(data["jobs"]) == {"diff", "gate"}
    seen = set()
    for job in data["jobs"].values():
        for s in job["steps"]:
            for args in commands(str(s.get("run", ""))):
                seen.add(args[0])
                command = main.get_command(click.Context(main), args[0])
                assert command is not None, args[0]
                # parses every option and argument as the CLI would (exit 2 on an unknown one)
                command.make_context(args[0], args[1:], resilient_parsing=False)
    assert seen == {"diff", "score", "promote"}


def run_step(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    assert BASH is not None
    full = {**os.environ, **env, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    return subprocess.run(
        [BASH, "-e", "-c", script], cwd=cwd, env=full, capture_output=True, text=True, timeout=300
    )


def base_env(tmp_path: Path, pred: str, baseline: str) -> dict[str, str]:
    env = {k: str(v) for k, v in workflow()["env"].items()}
    env.update(
        GOLD=str(INVOICES / "gold.jsonl"),
        CONFIG=str(INVOICES / "config.toml"),
        BASELINE_PRED=str(INVOICES / baseline),
        GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"),
        GITHUB_SHA="0123456789abcdef0123456789abcdef01234567",
    )
    shutil.copy(INVOICES / pred, tmp_path / env["PRED"])
    return env


@pytest.mark.slow
@pytest.mark.parametrize(
    ("baseline", "pred", "status"),
    [
        ("pred_baseline.jsonl", "pred_improved.jsonl", 0),
        ("pred_improved.jsonl", "pred_baseline.jsonl", 1),
    ],
)
def test_the_pull_request_job_fails_on_a_regression_and_writes_the_summary(
    tmp_path: Path, baseline: str, pred: str, status: int
) -> None:
    env = base_env(tmp_path, pred, baseline)
    done = run_step(step("diff", "Diff against main"), tmp_path, env)
    assert done.returncode == status, done.stderr
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "line_items[].description" in summary  # a field that changes between the two files
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_the_main_job_registers_and_promotes_only_through_the_gates(
    tmp_path: Path, mlflow_server: Any
) -> None:
    from mlflow import MlflowClient

    model = f"ci-example-{uuid.uuid4().hex[:8]}"
    verdicts = []
    for pred in ("pred_improved.jsonl", "pred_baseline.jsonl"):
        work = tmp_path / pred.split(".")[0]
        work.mkdir()
        env = {
            **base_env(work, pred, "pred_baseline.jsonl"),
            "MODEL": model,
            "MLFLOW_TRACKING_URI": mlflow_server.uri,
        }
        scored = run_step(step("gate", "Score, log and register"), work, env)
        assert scored.returncode == 0, scored.stderr
        promoted = run_step(step("gate", "Promote when the gates pass"), work, env)
        verdicts.append((work / "version.txt").read_text().strip())
        verdicts.append(str(promoted.returncode))
        assert "Traceback" not in promoted.stderr
        assert (work / "summary.md").read_text(encoding="utf-8").strip()
    # the improved run takes the empty alias; the weaker one fails the gates and does not move it
    assert verdicts == ["1", "0", "2", "1"]
    client = MlflowClient(mlflow_server.uri)
    assert client.get_model_version_by_alias(model, "champion").version == "1"
    tags = client.get_model_version(model, "2").tags
    assert tags["extract_mlflow.promotion.verdict"] == "failed"
