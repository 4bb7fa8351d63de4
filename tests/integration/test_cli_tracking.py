"""The CLI's MLflow side, driven as a user would: `score` logs a run (embedded store and a real
server), `score-iterations` logs a parent run with a step per iteration, `demo` fills a store,
and an unreachable server is one line and exit 2 within seconds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.mlflow_server import MlflowServer, closed_port_uri
from support.runs import artifact_paths, assert_run_holds_report

from extract_mlflow import evaluate
from extract_mlflow.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "invoices"
GOLD = str(EXAMPLE / "gold.jsonl")
BASELINE = str(EXAMPLE / "pred_baseline.jsonl")
IMPROVED = str(EXAMPLE / "pred_improved.jsonl")
CONFIG = str(EXAMPLE / "config.toml")


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def client_for(uri: str):  # type: ignore[no-untyped-def]
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=uri)


@pytest.mark.slow
def test_score_logs_one_run_to_the_embedded_store(mlflow_env: Path, tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'cli.db'}"
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Extract every invoice field as JSON.\n", encoding="utf-8")
    code, out, err = cli(
        "score", GOLD, IMPROVED, "--config", CONFIG, "--tracking-uri", uri,
        "--experiment", "cli", "--run-name", "improved", "--tag", "team=docs",
        "--param", "model=test-model", "--prompt", str(prompt), "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    report = evaluate(GOLD, IMPROVED, CONFIG)
    client = client_for(uri)
    run = client.get_run(data["run_id"])
    assert run.info.status == "FINISHED"
    assert run.info.run_name == "improved"
    assert client.get_experiment(run.info.experiment_id).name == "cli"
    assert_run_holds_report(
        client,
        data["run_id"],
        report,
        tmp_path / "download",
        prompts={"prompt.txt": prompt.read_text(encoding="utf-8")},
        params={"model": "test-model"},
        tags={"team": "docs"},
    )
    assert f"logged run {data['run_id']}" in err


@pytest.mark.slow
def test_score_registers_a_model_version(mlflow_env: Path, tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'reg.db'}"
    code, out, err = cli(
        "score", GOLD, BASELINE, "--config", CONFIG, "--tracking-uri", uri,
        "--register", "invoice-extractor", "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    version = client_for(uri).get_model_version("invoice-extractor", data["model_version"])
    assert version.run_id == data["run_id"]


@pytest.mark.slow
def test_score_gate_failure_still_logs_the_run(mlflow_env: Path, tmp_path: Path) -> None:
    uri = f"sqlite:///{tmp_path / 'gate.db'}"
    code, out, err = cli(
        "score", GOLD, BASELINE, "--config", CONFIG, "--tracking-uri", uri,
        "--min-f1", "0.95", "--format", "json",
    )  # fmt: skip
    assert code == 1
    assert "gate failed: f1 0.865 is below 0.95" in err
    run = client_for(uri).get_run(json.loads(out)["run_id"])
    assert run.info.status == "FINISHED"


@pytest.mark.server
def test_score_logs_to_a_real_server(mlflow_server: MlflowServer, tmp_path: Path) -> None:
    code, out, err = cli(
        "score", GOLD, IMPROVED, "--config", CONFIG, "--tracking-uri", mlflow_server.uri,
        "--experiment", "cli-server", "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    run_id = json.loads(out)["run_id"]
    report = evaluate(GOLD, IMPROVED, CONFIG)
    assert_run_holds_report(client_for(mlflow_server.uri), run_id, report, tmp_path)


@pytest.mark.server
def test_score_with_a_match_threshold_logs_the_optimal_pairing(
    mlflow_server: MlflowServer, tmp_path: Path
) -> None:
    """The case of docs/scoring.md: at match_threshold 0.5 the pairing A-Q + B-P (TP 6, F1 0.5)
    beats A-P alone, which is what pairing over every pair and then dropping B-Q kept (F1
    0.417, items.a 0.5)."""
    a = {"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1}
    b = {"a": 1, "b": 4, "c": 4, "d": 1, "e": 1, "f": 3}
    p = {"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 2}
    q = {"a": 1, "b": 1, "c": 1, "d": 3, "e": 3, "f": 3}
    gold, pred, config = tmp_path / "gold.jsonl", tmp_path / "pred.jsonl", tmp_path / "c.toml"
    gold.write_text(json.dumps({"id": "x", "items": [a, b]}) + "\n", encoding="utf-8")
    pred.write_text(json.dumps({"id": "x", "items": [p, q]}) + "\n", encoding="utf-8")
    config.write_text("match_threshold = 0.5\n", encoding="utf-8")
    code, out, err = cli(
        "score", str(gold), str(pred), "--config", str(config),
        "--tracking-uri", mlflow_server.uri, "--experiment", "match-threshold", "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    run = client_for(mlflow_server.uri).get_run(json.loads(out)["run_id"])
    assert run.info.status == "FINISHED"
    assert run.data.metrics["f1"] == 0.5
    assert run.data.metrics["field_f1/items.a"] == 1.0


@pytest.mark.slow
def test_unreachable_server_is_one_line_and_exit_2_fast(tmp_path: Path) -> None:
    uri = closed_port_uri()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    # No wall-time bound (a busy machine breaks one): the 60 s timeout is the guard, as
    # MLflow's own retries against a closed port would take minutes.
    done = subprocess.run(
        [sys.executable, "-m", "extract_mlflow", "score", GOLD, IMPROVED, "--tracking-uri", uri],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and uri in lines[0], done.stderr
    assert "Traceback" not in done.stderr + done.stdout


@pytest.mark.slow
def test_score_iterations_logs_a_step_per_iteration(mlflow_env: Path, tmp_path: Path) -> None:
    folder = tmp_path / "loop"
    for name, pred, prompt in (("01", BASELINE, "first"), ("02", IMPROVED, "second")):
        (folder / name).mkdir(parents=True)
        (folder / name / "pred.jsonl").write_bytes(Path(pred).read_bytes())
        (folder / name / "prompt.txt").write_text(prompt, encoding="utf-8")
    uri = f"sqlite:///{tmp_path / 'iter.db'}"
    code, out, err = cli(
        "score-iterations", str(folder), "--gold", GOLD, "--config", CONFIG,
        "--tracking-uri", uri, "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    assert data["best_iteration"] == "02"
    client = client_for(uri)
    history = client.get_metric_history(data["run_id"], "f1")
    expected = [evaluate(GOLD, p, CONFIG).micro.f1 for p in (BASELINE, IMPROVED)]
    assert [m.step for m in history] == [0, 1]
    assert [m.value for m in history] == pytest.approx(expected)
    best = Path(client.download_artifacts(data["run_id"], "eval/best_prompt.txt", str(tmp_path)))
    assert best.read_text(encoding="utf-8").strip() == "second"


@pytest.mark.slow
def test_demo_fills_the_embedded_default_store(mlflow_env: Path) -> None:
    code, out, err = cli("demo")
    assert code == 0, err
    assert "baseline" in out and "improved" in out and "mlflow ui" in out
    uri = f"sqlite:///{mlflow_env / 'mlflow.db'}"
    assert (mlflow_env / "mlflow.db").is_file(), "the default store is in the working directory"
    client = client_for(uri)
    (exp,) = [e for e in client.search_experiments() if e.name == "extract-mlflow-demo"]
    runs = client.search_runs([exp.experiment_id])
    assert {r.info.run_name for r in runs} >= {"demo-baseline", "demo-improved"}
    assert all(r.info.status == "FINISHED" and "f1" in r.data.metrics for r in runs)
    versions = client.search_model_versions("name='invoice-extractor'")
    assert len(versions) == 2


@pytest.mark.server
def test_page_run_logs_layout_composite_and_tokens(
    mlflow_server: MlflowServer, tmp_path: Path
) -> None:
    papers = ROOT / "examples" / "papers"
    gold, pred, config = (
        str(papers / "gold.jsonl"),
        str(papers / "pred_complete.jsonl"),
        str(papers / "config.toml"),
    )
    code, out, err = cli(
        "score", gold, pred, "--config", config, "--tracking-uri", mlflow_server.uri,
        "--experiment", "pages", "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    assert "paper-01: matched 47/48 gold cells, rows 6/6, 3594 tokens, layout 7/7" in err
    data = json.loads(out)
    report = evaluate(gold, pred, config)
    client = client_for(mlflow_server.uri)
    assert_run_holds_report(client, data["run_id"], report, tmp_path)
    metrics = client.get_run(data["run_id"]).data.metrics
    assert metrics["layout_score"] == 1.0
    assert metrics["composite"] == pytest.approx(report.composite)
    assert metrics["tokens_per_doc"] == pytest.approx(report.tokens_per_doc)
    local = Path(client.download_artifacts(data["run_id"], "eval", str(tmp_path / "again")))
    diagnostics = json.loads((local / "diagnostics.json").read_text(encoding="utf-8"))
    assert diagnostics["layout"]["documents"]["paper-04"]["rows_pred"] == 4
    assert "## Pages" in (local / "summary.md").read_text(encoding="utf-8")


@pytest.mark.server
def test_fidelity_run_logs_ngram_and_grounding_metrics(
    mlflow_server: MlflowServer, tmp_path: Path
) -> None:
    sources = str(EXAMPLE / "sources")
    code, out, err = cli(
        "score", GOLD, BASELINE, "--config", CONFIG, "--sources", sources,
        "--tracking-uri", mlflow_server.uri, "--experiment", "fidelity", "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    data = json.loads(out)
    report = evaluate(GOLD, BASELINE, CONFIG, sources=sources)
    assert report.family("fidelity") is not None
    client = client_for(mlflow_server.uri)
    assert_run_holds_report(client, data["run_id"], report, tmp_path)
    metrics = client.get_run(data["run_id"]).data.metrics
    for key in ("bleu_proxy", "ngram_p1", "ngram_p2", "ngram_p3", "ngram_p4"):
        assert metrics[key] == pytest.approx(report.family("fidelity").metrics()[key])
    assert metrics["groundedness"] + metrics["hallucination_rate"] == pytest.approx(1.0)
    assert "field_bleu_proxy/line_items.description" in metrics
    assert data["fidelity"]["injection"], "inv-005 carries a planted instruction"


def structure_lines() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Six made-up parsed pages with tables, reading order, regions and section boundaries."""
    gold, pred = [], []
    for i in range(6):
        table = "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>x</td></tr></table>"
        gold.append(
            {
                "id": f"d{i}",
                "layout": "two_column" if i % 2 else "single",
                "scan_dpi": 150 + 50 * i,
                "tables": [table],
                "blocks": ["title", "p1", "p2", "fig", "p3"],
                "regions": [{"id": "total", "text": f"{100 + i}.00 EUR"}],
                "boundaries": [0, 120, 480],
            }
        )
        pred.append(
            {
                "id": f"d{i}",
                "tables": [table.replace("x", "y") if i % 3 == 0 else table],
                "blocks": ["title", "p2", "p1", "fig", "p3"] if i % 2 else gold[-1]["blocks"],
                "regions": [{"id": "total", "text": f"{100 + i}.00 EUR" if i < 4 else "10O EUR"}],
                "boundaries": [0, 118, 500],
            }
        )
    return gold, pred


@pytest.mark.server
def test_structure_run_logs_metrics_slices_intervals_and_plot(
    mlflow_server: MlflowServer, tmp_path: Path
) -> None:
    gold, pred = structure_lines()
    (tmp_path / "gold.jsonl").write_text("\n".join(json.dumps(g) for g in gold) + "\n")
    (tmp_path / "pred.jsonl").write_text("\n".join(json.dumps(p) for p in pred) + "\n")
    config = tmp_path / "config.toml"
    config.write_text("[structure]\nboundary_window = 5.0\n", encoding="utf-8")
    args = [str(tmp_path / "gold.jsonl"), str(tmp_path / "pred.jsonl"), "--config", str(config)]
    code, out, err = cli(
        "score", *args, "--slice-by", "layout", "--slice-by", "scan_dpi",
        "--tracking-uri", mlflow_server.uri, "--experiment", "structure", "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    run_id = json.loads(out)["run_id"]
    report = evaluate(
        tmp_path / "gold.jsonl", tmp_path / "pred.jsonl", config, slice_by=["layout", "scan_dpi"]
    )
    assert report.family("structure") is not None
    assert not report.fields, "structure inputs are not scored as fields"
    client = client_for(mlflow_server.uri)
    assert_run_holds_report(client, run_id, report, tmp_path / "dl", dataset=True)
    metrics = client.get_run(run_id).data.metrics
    for name in ("teds", "teds_s", "reading_order", "kendall_tau", "anls", "boundary_f1"):
        assert name in metrics
        assert metrics[f"{name}_ci_low"] <= metrics[name] <= metrics[f"{name}_ci_high"]
    assert metrics["teds_s"] == 1.0 and metrics["teds"] < 1.0
    assert "teds_by_layout/two_column" in metrics and "teds_by_layout/single" in metrics
    assert "eval/robustness.png" in artifact_paths(client, run_id, "eval")
