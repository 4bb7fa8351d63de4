"""`extract-mlflow compare` and `promote` driven as a CI job would, against a real `mlflow server`:
exit codes 0/1/2, the failing gate named, md/json output, refs through aliases, the alias moved
only on a pass and the version tagged both ways (read back through MlflowClient), and an
unreachable server answered in one line within seconds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.mlflow_server import MlflowServer, closed_port_uri
from support.registry import (
    GATES_TOML,
    World,
    add_version,
    cli,
    client_for,
    error_lines,
    link_prompt,
    log_world,
    register_prompt,
)

from extract_mlflow.tracking.registry import BASELINE_TAG, CRITERIA_TAG, SUMMARY_TAG, VERDICT_TAG

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def world(mlflow_server: MlflowServer, tmp_path_factory: pytest.TempPathFactory) -> World:
    return log_world(mlflow_server.uri, tmp_path_factory.mktemp("cli-compare"))


@pytest.mark.server
def test_regressed_candidate_exits_1_and_names_the_gate(world: World) -> None:
    code, out, err = cli(
        "compare", f"models:/{world.model}/2", f"prompts:/{world.prompt}/1",
        "--tracking-uri", world.uri, "--max-drop", "f1=0.01", "--min", "precision=0.5",
        "--format", "md",
    )  # fmt: skip
    assert code == 1, err
    assert "gate failed: f1 dropped 0.1257 > max_drop 0.01" in error_lines(err)
    assert out.startswith("## ❌ extract_mlflow compare: FAILED: 2 checked, 1 failed\n")
    assert "- f1 dropped 0.1257 > max_drop 0.01" in out
    assert "| `f1` | 0.991 | 0.865 | -0.126 |" in out


@pytest.mark.server
def test_improved_candidate_exits_0_with_a_gates_file(world: World, tmp_path: Path) -> None:
    gates = tmp_path / "gates.toml"
    gates.write_text(GATES_TOML, encoding="utf-8")
    report = tmp_path / "compare.json"
    code, out, err = cli(
        "compare", world.baseline, f"runs:/{world.improved}", "--tracking-uri", world.uri,
        "--gates", str(gates), "--seed", "7", "--resamples", "250", "--min-documents", "10",
        "--format", "json", "--out", str(report),
    )  # fmt: skip
    assert code == 0, err
    assert out == "" and err == ""
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["passed"] and data["failures"] == []
    assert data["bootstrap"] == {"resamples": 250, "seed": 7, "confidence": 0.95}
    f1 = next(m for m in data["metrics"] if m["metric"] == "f1")
    assert f1["delta"] > 0 and f1["ci_low"] <= f1["delta"] <= f1["ci_high"]
    assert 0 < f1["p_value"] <= 1
    assert len(data["gates"]) > 2  # the glob gate gives one result per field
    assert data["documents"]["paired"] == 10 and "inv-007" in data["documents"]["fixed"]


@pytest.mark.server
def test_refs_resolved_through_aliases(world: World) -> None:
    code, out, err = cli(
        "compare", f"models:/{world.model}@champion", f"prompts:/{world.prompt}@champion",
        "--tracking-uri", world.uri, "--format", "json", "--max-drop", "f1=0.01",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert data["baseline"] == f"models:/{world.model}@champion (run {world.baseline})"
    assert data["candidate"] == f"prompts:/{world.prompt}@champion (run {world.improved})"


@pytest.mark.server
def test_signature_mismatch_exits_2_unless_allowed(world: World) -> None:
    code, out, err = cli("compare", world.baseline, world.other, "--tracking-uri", world.uri)
    assert code == 2 and out == ""
    (line,) = error_lines(err)
    assert line.startswith("error: ") and "scored differently" in line
    assert "--allow-incomparable" in line
    code, out, err = cli(
        "compare", world.baseline, world.other, "--tracking-uri", world.uri,
        "--allow-incomparable", "--max-drop", "f1=0.01", "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["comparable"] is False


@pytest.mark.server
@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("models:/{model}@nobody", "alias nobody not found"),
        ("prompts:/{prompt}/9", "not found"),
        ("ffffffffffffffffffffffffffffffff", "not found"),
    ],
)
def test_unknown_ref_exits_2_with_one_line(world: World, template: str, message: str) -> None:
    ref = template.format(**vars(world))
    code, out, err = cli("compare", world.baseline, ref, "--tracking-uri", world.uri)
    assert code == 2 and out == ""
    (line,) = error_lines(err)
    assert f"bad reference {ref!r}" in line and message in line


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["abc", "def"], "bad reference 'abc'"),
        (["0" * 32, "0" * 32, "--min", "f1"], "--min 'f1': expected METRIC=NUMBER"),
        (["0" * 32, "0" * 32, "--gates", "missing.toml"], "gates file not found"),
    ],
)
def test_bad_input_exits_2_before_the_network(args: list[str], message: str) -> None:
    code, out, err = cli("compare", *args, "--tracking-uri", "http://127.0.0.1:1")
    assert code == 2 and out == ""
    (line,) = error_lines(err)
    assert message in line and "unreachable" not in line


def test_usage_errors_exit_2() -> None:
    code, _, err = cli("compare", "a", "b", "--resamples", "0")
    assert code == 2 and "--resamples" in err
    code, _, err = cli("promote", "inv", "1", "--tracking-uri", "http://127.0.0.1:1")
    assert code == 2 and "at least one gate" in err


def promotion_tags(world: World, name: str, version: str) -> dict[str, str]:
    tags = client_for(world.uri).get_model_version(name, version).tags
    return {k: v for k, v in tags.items() if k.startswith("extract_mlflow.promotion.")}


@pytest.mark.server
def test_promote_moves_the_alias_only_on_pass(world: World) -> None:
    name = f"cli-promo-{world.model}"
    for run_id in (world.baseline, world.improved, world.baseline):
        add_version(world.uri, name, run_id)
    client = client_for(world.uri)
    gates = ["--min", "f1=0.8", "--max-drop", "f1=0.01", "--tracking-uri", world.uri]
    code, out, err = cli("promote", name, "1", *gates)
    assert code == 0, err
    assert f"promoted models:/{name}/1 to @champion (was unset)" in err
    code, out, err = cli("promote", name, "2", *gates, "--format", "md")
    assert code == 0, err
    assert out.startswith(f"## ✅ promoted models:/{name}/2 to @champion (was version 1)")
    assert dict(client.get_registered_model(name).aliases) == {"champion": "2"}
    code, out, err = cli("promote", name, "3", *gates, "--format", "json")
    assert code == 1
    assert "gate failed: f1 dropped 0.1257 > max_drop 0.01" in error_lines(err)
    assert json.loads(out)["promoted"] is False
    assert dict(client.get_registered_model(name).aliases) == {"champion": "2"}
    passed, failed = promotion_tags(world, name, "2"), promotion_tags(world, name, "3")
    assert (passed[VERDICT_TAG], passed[BASELINE_TAG]) == ("passed", "1")
    assert (failed[VERDICT_TAG], failed[BASELINE_TAG]) == ("failed", "2")
    assert "f1 0.865 vs 0.991 (-0.126)" in failed[SUMMARY_TAG]
    assert json.loads(failed[CRITERIA_TAG]) == [
        {"metric": "f1", "threshold": 0.8, "higher_is_better": True},
        {"metric": "f1", "max_drop": 0.01},
    ]


@pytest.mark.server
def test_promote_a_prompt_with_a_gates_file(world: World, tmp_path: Path) -> None:
    gates = tmp_path / "gates.toml"
    gates.write_text(GATES_TOML, encoding="utf-8")
    name = f"cli-prompt-{world.prompt}"
    for run_id in (world.baseline, world.improved):
        version = register_prompt(world.uri, name, f"Extract ({run_id[:6]}).")
        link_prompt(world.uri, run_id, f"prompts:/{name}/{version}")
    client = client_for(world.uri)
    client.set_prompt_alias(name, "production", 1)
    code, out, err = cli(
        "promote", f"prompts:/{name}", "2", "--alias", "production", "--gates", str(gates),
        "--tracking-uri", world.uri, "--min-documents", "10",
    )  # fmt: skip
    assert code == 0, err
    assert out.startswith(f"promoted prompts:/{name}/2 to @production (was version 1)")
    assert client.get_prompt_version_by_alias(name, "production").version == 2
    assert client.get_prompt_version(name, 2).tags[VERDICT_TAG] == "passed"


@pytest.mark.slow
def test_unreachable_server_exits_2_in_one_line_fast(tmp_path: Path) -> None:
    uri = closed_port_uri()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env["MLFLOW_TRACKING_URI"] = uri
    for args in (
        ["compare", "models:/inv@champion", "prompts:/inv/2", "--max-drop", "f1=0.01"],
        ["promote", "inv", "2", "--min", "f1=0.8"],
    ):
        # No wall-time bound (a busy machine breaks one): the 60 s timeout is the guard, as
        # MLflow's own retries against a closed port would take minutes.
        done = subprocess.run(
            [sys.executable, "-m", "extract_mlflow", *args],
            capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60,
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        (line,) = error_lines(done.stderr)
        assert line.startswith("error:") and uri in line and "unreachable" in line
        assert "Traceback" not in done.stderr + done.stdout


@pytest.mark.slow
@pytest.mark.server
def test_mlproject_compare_entry_point(world: World, tmp_path: Path) -> None:
    env: dict[str, Any] = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    env["MLFLOW_TRACKING_URI"] = world.uri
    mlflow_bin = Path(sys.executable).with_name("mlflow")
    env["PATH"] = os.pathsep.join([str(mlflow_bin.parent), env.get("PATH", "")])
    done = subprocess.run(
        [
            str(mlflow_bin), "run", str(ROOT), "-e", "compare", "--env-manager", "local",
            "-P", f"baseline=models:/{world.model}@champion",
            "-P", f"candidate=prompts:/{world.prompt}@champion", "-P", "format=md",
        ],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "## ✅ extract_mlflow compare" in done.stdout
    swapped = subprocess.run(
        [
            str(mlflow_bin), "run", str(ROOT), "-e", "compare", "--env-manager", "local",
            "-P", f"baseline=prompts:/{world.prompt}@champion",
            "-P", f"candidate=models:/{world.model}@champion", "-P", "max_drop=0.01",
        ],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert swapped.returncode != 0, "a regressed candidate fails the project's max_drop gate"
    assert "FAILED" in swapped.stdout
