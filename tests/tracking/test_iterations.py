"""Prompt-iteration logging: pure tables and plots, then one parent run with a child per
iteration on the embedded store and on a real server, read back through MlflowClient."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from support.mlflow_server import MlflowServer
from support.runs import artifact_paths, assert_run_holds_report

from extract_mlflow import evaluate
from extract_mlflow.core.text import tex_escape
from extract_mlflow.errors import InputError, TrackingError
from extract_mlflow.evaluation.iterations import Iteration
from extract_mlflow.io.iterations import best_index, find_iterations
from extract_mlflow.report import Report
from extract_mlflow.tracking.iterations import (
    BEST_TAG,
    ITERATION_TAG,
    IterationLogger,
    IterationsResult,
    log_iteration_dir,
    log_iterations,
)
from extract_mlflow.tracking.payload import PARENT_RUN_TAG
from extract_mlflow.views.iterations import (
    COLUMNS,
    LoopRow,
    loop_rows,
    metrics_csv,
    metrics_latex,
)
from extract_mlflow.views.plots import plot_tokens, plot_trend

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "invoices"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def example(pred: str) -> Report:
    return evaluate(EXAMPLE / "gold.jsonl", EXAMPLE / pred, EXAMPLE / "config.toml")


@pytest.fixture(scope="module")
def loop() -> list[Iteration]:
    """Three iterations: baseline, improved (the best), baseline again."""
    base, better = example("pred_baseline.jsonl"), example("pred_improved.jsonl")
    return [
        Iteration(base, "prompt one\n", tokens_per_doc=1200.0),
        Iteration(better, "prompt two\n", tokens_per_doc=1500.0),
        Iteration(base, "prompt three\n", tokens_per_doc=900.0),
    ]


def rows(metrics: list[dict[str, float]]) -> list[LoopRow]:
    return loop_rows([(f"{i + 1:02d}", m) for i, m in enumerate(metrics)])


# -- pure ----------------------------------------------------------------------------------------
def test_best_index_prefers_composite_then_f1() -> None:
    assert best_index([]) is None
    assert best_index([{"f1": 0.5}, {"f1": 0.9}, {"f1": 0.9}]) == 1  # earliest on ties
    assert best_index([{"f1": 0.9, "composite": 0.1}, {"f1": 0.5, "composite": 0.4}]) == 1
    assert best_index([{"precision": 1.0}, {"f1": 0.2}]) == 1  # no score ranks last


def test_metrics_csv_has_a_row_per_iteration() -> None:
    text = metrics_csv(rows([{"f1": 0.5, "field_f1/a": 0.1}, {"f1": 0.4, "recall": 0.6}]))
    table = list(csv.DictReader(io.StringIO(text)))
    assert [r["iteration"] for r in table] == ["01", "02"]
    assert tuple(table[0]) == COLUMNS  # fixed columns; per-field metrics stay in the runs
    assert (table[1]["f1"], table[1]["f1_best"]) == ("0.4", "0.5")  # the running maximum
    assert table[0]["recall"] == "" and table[0]["composite_best"] == ""  # undefined: empty


def test_metrics_latex_is_a_booktabs_table() -> None:
    tex = metrics_latex(rows([{"f1": 0.5, "tokens_per_doc": 1234.0}, {"f1": 0.75}]))
    assert tex.index(r"\toprule") < tex.index(r"\midrule") < tex.index(r"\bottomrule")
    assert r"\textbf{02} & \textbf{0.750}" in tex  # the best row in bold
    assert "1{,}234" in tex and "--" in tex  # thousands grouping; a missing value
    assert tex.count(r" \\") == 3  # header + 2 rows
    assert r"\begin{axis}" in tex and "(1,0.5000) (2,0.7500)" in tex  # the pgfplots trend
    assert tex_escape("a_b & 50% #1") == r"a\_b \& 50\% \#1"


def test_plots_are_png_and_pdf(tmp_path: Path) -> None:
    recs = rows([{"f1": 0.5, "tokens_per_doc": 10.0}, {"f1": 0.8, "precision": 0.9}])
    plot_trend(recs, [tmp_path / "trend.png", tmp_path / "trend.pdf"])
    plot_tokens(recs, [tmp_path / "tokens.png", tmp_path / "tokens.pdf"])
    for name in ("trend", "tokens"):
        assert (tmp_path / f"{name}.png").read_bytes().startswith(PNG_MAGIC)
        assert (tmp_path / f"{name}.pdf").read_bytes().startswith(b"%PDF")
    with pytest.raises(ValueError, match="no token usage"):  # never an empty placeholder
        plot_tokens(rows([{"f1": 0.5}]), [tmp_path / "none.png"])
    assert not (tmp_path / "none.png").exists()


def test_find_iterations_natural_order(tmp_path: Path) -> None:
    for name in ("10", "2", "1"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "pred.jsonl").write_text("{}\n")
    (tmp_path / "2" / "prompt.txt").write_text("p2")
    (tmp_path / "notes").mkdir()  # no pred.jsonl: not an iteration
    found = find_iterations(tmp_path)
    assert [f.name for f in found] == ["1", "2", "10"]
    assert found[1].prompt == tmp_path / "2" / "prompt.txt" and found[0].prompt is None
    with pytest.raises(InputError, match="no iteration folders"):
        find_iterations(tmp_path / "notes")
    with pytest.raises(InputError, match="not a directory"):
        find_iterations(tmp_path / "missing")


def test_tokens_per_doc_comes_from_usage_and_is_not_scored() -> None:
    gold = [{"id": k, "x": 1} for k in "abcd"]
    pred: list[dict[str, Any] | str] = [
        {"id": "a", "x": 1, "usage": {"input_tokens": 100, "output_tokens": 20}},
        {"id": "b", "x": 1, "usage": {"tokens": 80}, "latency_ms": 900},
        {"id": "c", "x": 1},
        {"id": "z", "usage": {"tokens": 5000}},  # not a gold document: not counted
        "{broken",
    ]
    report = evaluate(gold, pred)
    assert report.tokens_per_doc == (120 + 80) / 4
    assert report.metrics()["tokens_per_doc"] == 50.0
    assert set(report.fields) == {"x"}  # usage and latency_ms are metadata
    assert evaluate(gold, [{"id": "a", "x": 1}]).tokens_per_doc is None


# -- logging a loop ------------------------------------------------------------------------------
def check_iteration_run(
    client: Any, result: IterationsResult, loop: list[Iteration], tmp_path: Path
) -> None:
    """The parent's metric history has one step per iteration, equal to each report; each child
    holds its report and prompt; the parent holds the loop's artifacts."""
    parent = client.get_run(result.parent.run_id)
    assert parent.info.status == "FINISHED"
    for key in ("f1", "precision", "tokens_per_doc", "field_f1/total"):
        history = client.get_metric_history(result.parent.run_id, key)
        assert sorted((m.step, m.value) for m in history) == [
            (i, it.metrics()[key]) for i, it in enumerate(loop)
        ]
    assert parent.data.tags[BEST_TAG] == "02"
    assert "pred_digest" not in parent.data.params
    assert parent.data.params["gold_digest"] == loop[0].report.gold_digest
    eval_files = artifact_paths(client, result.parent.run_id, "eval")
    assert {
        "eval/metrics.csv",
        "eval/trend.png",
        "eval/tokens.png",
        "eval/metrics.tex",
        "eval/best_prompt.txt",
    } <= eval_files
    local = Path(client.download_artifacts(result.parent.run_id, "eval", str(tmp_path / "parent")))
    assert (local / "best_prompt.txt").read_text() == "prompt two\n"
    assert len(list(csv.DictReader((local / "metrics.csv").open()))) == len(loop)
    assert (local / "trend.png").read_bytes().startswith(PNG_MAGIC)
    for i, (rec, it) in enumerate(zip(result.records, loop, strict=True)):
        child = client.get_run(rec.run.run_id)
        assert child.data.tags[PARENT_RUN_TAG] == result.parent.run_id
        assert child.data.tags[ITERATION_TAG] == f"{i + 1:02d}"
        assert child.info.status == "FINISHED"
        assert_run_holds_report(
            client,
            rec.run.run_id,
            it.report,
            tmp_path / f"child{i}",
            prompts={"prompt.txt": it.prompt or ""},
            exact=False,
        )
        assert child.data.metrics["tokens_per_doc"] == it.tokens_per_doc


@pytest.mark.slow
def test_log_iterations_local_store(
    mlflow_env: Path, local_store: str, loop: list[Iteration], tmp_path: Path
) -> None:
    from mlflow import MlflowClient

    result = log_iterations(
        loop, tracking_uri=local_store, experiment="iterations", run_name="prompt-loop"
    )
    assert result.best is not None and result.best.name == "02"
    assert [r["iteration"] for r in result.to_dict()["iterations"]] == ["01", "02", "03"]
    check_iteration_run(MlflowClient(local_store), result, loop, tmp_path)


@pytest.mark.slow
def test_logger_as_a_loop(mlflow_env: Path, local_store: str, loop: list[Iteration]) -> None:
    from mlflow import MlflowClient

    with IterationLogger(tracking_uri=local_store, experiment="loop-cm") as logger:
        for it in loop[:2]:
            child = logger.log(it.report, prompt=it.prompt, tokens_per_doc=it.tokens_per_doc)
            assert child.run_id
    assert logger.result is not None and len(logger.result.records) == 2
    client = MlflowClient(local_store)
    assert client.get_run(logger.result.parent.run_id).info.status == "FINISHED"


def test_error_in_the_loop_fails_the_parent(
    mlflow_env: Path, local_store: str, loop: list[Iteration]
) -> None:
    from mlflow import MlflowClient

    with (
        pytest.raises(TrackingError, match=r"FAILED.*model crashed"),
        IterationLogger(tracking_uri=local_store, experiment="loop-fails") as logger,
    ):
        logger.log(loop[0])
        raise RuntimeError("model crashed")
    assert logger.result is not None
    run = MlflowClient(local_store).get_run(logger.result.parent.run_id)
    assert run.info.status == "FAILED"


def write_iteration_dir(root: Path) -> Path:
    for name, pred, prompt in (
        ("01", "pred_baseline.jsonl", "first prompt"),
        ("02", "pred_improved.jsonl", "second prompt"),
    ):
        (root / name).mkdir(parents=True)
        lines = (EXAMPLE / pred).read_text().splitlines()
        usage = [_with_usage(line) for line in lines]
        (root / name / "pred.jsonl").write_text("\n".join(usage) + "\n")
        (root / name / "prompt.txt").write_text(prompt)
    (root / "gold.jsonl").write_bytes((EXAMPLE / "gold.jsonl").read_bytes())
    return root


def _with_usage(line: str) -> str:
    try:
        doc = json.loads(line)
    except ValueError:
        return line  # the example's broken line stays broken
    doc["usage"] = {"input_tokens": 1000, "output_tokens": 100}
    return json.dumps(doc)


def test_score_iterations_dir(mlflow_env: Path, local_store: str, tmp_path: Path) -> None:
    folder = write_iteration_dir(tmp_path / "runs")
    result = log_iteration_dir(
        folder, config=EXAMPLE / "config.toml", tracking_uri=local_store, experiment="dir"
    )
    assert [r.name for r in result.records] == ["01", "02"]
    assert result.best is not None and result.best.prompt == "second prompt"
    first = result.records[0].metrics
    direct = evaluate(folder / "gold.jsonl", folder / "01" / "pred.jsonl", EXAMPLE / "config.toml")
    assert first == {**direct.metrics(), "tokens_per_doc": first["tokens_per_doc"]}
    # 10 gold documents; 8 predictions of them record usage (inv-007 is broken, inv-008
    # missing; inv-999 is not a gold document)
    assert first["tokens_per_doc"] == 8 * 1100 / 10
    (folder / "gold.jsonl").unlink()
    with pytest.raises(InputError, match="no gold"):
        log_iteration_dir(folder)
    with pytest.raises(InputError, match="no iteration folders"):
        log_iteration_dir(folder / "01", folder / "01" / "pred.jsonl")


@pytest.mark.server
def test_log_iterations_server(
    mlflow_env: Path, mlflow_server: MlflowServer, loop: list[Iteration], tmp_path: Path
) -> None:
    from mlflow import MlflowClient

    result = log_iterations(loop, tracking_uri=mlflow_server.uri, experiment="iterations")
    check_iteration_run(MlflowClient(mlflow_server.uri), result, loop, tmp_path)


@pytest.mark.server
def test_score_iterations_logs_the_best_iteration_on_the_parent(
    mlflow_env: Path, mlflow_server: MlflowServer, tmp_path: Path
) -> None:
    """The parent's plain keys are the last iteration's (the latest step); ``best_*`` are the
    best iteration's, which the tag names: a loop whose last iteration is worse than its best."""
    from click.testing import CliRunner
    from mlflow import MlflowClient

    from extract_mlflow.cli import main

    folder = write_iteration_dir(tmp_path / "runs")
    (folder / "03").mkdir()
    (folder / "03" / "pred.jsonl").write_bytes((folder / "01" / "pred.jsonl").read_bytes())
    (folder / "03" / "prompt.txt").write_text("third prompt")
    result = CliRunner().invoke(
        main,
        ["score-iterations", str(folder), "--config", str(EXAMPLE / "config.toml"),
         "--tracking-uri", mlflow_server.uri, "--experiment", "best", "--format", "json"],
        catch_exceptions=False,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    client = MlflowClient(mlflow_server.uri)
    parent = client.get_run(out["run_id"]).data
    children = {
        r.data.tags[ITERATION_TAG]: r.data.metrics
        for r in client.search_runs(
            [client.get_run(out["run_id"]).info.experiment_id],
            f"tags.`{PARENT_RUN_TAG}` = '{out['run_id']}'",
        )
    }
    assert sorted(children) == ["01", "02", "03"]
    assert parent.tags[BEST_TAG] == out["best_iteration"] == "02"
    best, last = children["02"], children["03"]
    assert best["f1"] > last["f1"]
    for key in ("f1", "precision", "recall", "f1_ci_low", "f1_ci_high", "tokens_per_doc"):
        assert parent.metrics[key] == last[key], key  # the latest step: the last iteration
        assert parent.metrics[f"best_{key}"] == best[key], key
    assert not any(k.startswith("best_") and "/" in k for k in parent.metrics)
    assert client.get_metric_history(out["run_id"], "best_f1")[0].step == 1
