"""extract_mlflow inside MLflow's own APIs: the ``extraction`` evaluator of
``mlflow.models.evaluate`` (found through the entry point) and the deterministic
``mlflow.genai`` scorers."""

from __future__ import annotations

import json
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from support.mlflow_server import MlflowServer
from support.runs import assert_run_holds_report

from extract_mlflow import evaluate
from extract_mlflow.errors import ConfigError, InputError
from extract_mlflow.report import Report
from extract_mlflow.tracking.client import using_tracking_uri
from extract_mlflow.tracking.evaluator import (
    EVALUATOR_NAME,
    MODEL_TYPE,
    SCORERS,
    ExtractionEvaluator,
    bleu_proxy_scorer,
    build_sets,
    field_f1_scorer,
    score_pair,
    scorers,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "invoices"
CONFIG = EXAMPLE / "config.toml"


def gold_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (EXAMPLE / "gold.jsonl").read_text().splitlines()]


def pred_by_id() -> dict[str, Any]:
    """The baseline predictions by id: objects, and the broken line as its raw text."""
    out: dict[str, Any] = {}
    for line in (EXAMPLE / "pred_baseline.jsonl").read_text().splitlines():
        try:
            doc = json.loads(line)
            out[doc["id"]] = doc
        except ValueError:
            out["inv-007"] = line  # the example's truncated line (inv-007)
    return out


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    """One row per gold document: id, gold JSON text, prediction (JSON text, broken, or None)."""
    preds = pred_by_id()
    rows = []
    for g in gold_rows():
        p = preds.get(g["id"])
        rows.append(
            {
                "id": g["id"],
                "gold": json.dumps(g),
                "pred": json.dumps(p) if isinstance(p, dict) else p,
            }
        )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def reference() -> Report:
    """The same documents scored by `evaluate` on the files (unknown ids aside)."""
    return evaluate(EXAMPLE / "gold.jsonl", EXAMPLE / "pred_baseline.jsonl", CONFIG)


# -- the evaluator -------------------------------------------------------------------------------
def test_entry_point_is_registered() -> None:
    (ep,) = [e for e in entry_points(group="mlflow.model_evaluator") if e.name == EVALUATOR_NAME]
    assert ep.load() is ExtractionEvaluator
    from mlflow.models.evaluation.evaluator_registry import _model_evaluation_registry

    assert _model_evaluation_registry.is_registered(EVALUATOR_NAME)  # type: ignore[no-untyped-call]


@pytest.mark.parametrize(
    "model_type", [None, "classifier", "regressor", "text", "question-answering"]
)
def test_can_evaluate_is_strict(model_type: str | None) -> None:
    assert not ExtractionEvaluator.can_evaluate(model_type=model_type, evaluator_config={})
    assert ExtractionEvaluator.can_evaluate(model_type=MODEL_TYPE, evaluator_config=None)


def test_build_sets() -> None:
    gold, pred = build_sets(
        ["a", "b", "c", "d"],
        [{"x": 1}, '{"x": 2}', {"x": 3}, {"x": 4}],
        [{"x": 1}, "{broken", None, float("nan")],
    )
    assert gold.docs["b"] == {"x": 2, "id": "b"}
    assert set(pred.docs) == {"a"} and set(pred.parse_failures) == {"b"}
    assert gold.digest and len(gold.digest) == 64
    with pytest.raises(InputError, match="duplicate document id"):
        build_sets(["a", "a"], [{}, {}], [None, None])
    with pytest.raises(InputError, match="not a JSON object"):
        build_sets(["a"], ["[1, 2]"], [None])


def models_evaluate(frame: pd.DataFrame, **kwargs: Any) -> Any:
    import mlflow

    return mlflow.models.evaluate(  # type: ignore[no-untyped-call]
        data=frame,
        targets="gold",
        predictions="pred",
        model_type=MODEL_TYPE,
        evaluators=EVALUATOR_NAME,
        evaluator_config={"config": str(CONFIG)},
        **kwargs,
    )


def check_models_evaluate(uri: str, frame: pd.DataFrame, reference: Report, tmp_path: Path) -> None:
    import mlflow
    from mlflow import MlflowClient

    mlflow.set_tracking_uri(uri)
    mlflow.set_experiment("models-evaluate")
    with mlflow.start_run() as run:
        result = models_evaluate(frame)
    metrics = reference.metrics()
    assert result.metrics == metrics
    assert set(result.artifacts) == {"summary", "diagnostics", "documents", "config"}
    client = MlflowClient(uri)
    logged = client.get_run(run.info.run_id)
    assert logged.info.status == "FINISHED"
    assert {k: logged.data.metrics[k] for k in metrics} == metrics
    report = evaluate_frame(frame)
    assert report.metrics() == metrics
    assert_run_holds_report(client, run.info.run_id, report, tmp_path, dataset=False, exact=False)


def evaluate_frame(frame: pd.DataFrame) -> Report:
    from extract_mlflow.config_file import load_config
    from extract_mlflow.evaluation.evaluate import score_sets

    gold, pred = build_sets(list(frame["id"]), list(frame["gold"]), list(frame["pred"]))
    gold.source = "dataset"  # what mlflow.models.evaluate names a DataFrame it was given
    return score_sets(gold, pred, load_config(CONFIG))


def test_models_evaluate_local_store(
    mlflow_env: Path, local_store: str, frame: pd.DataFrame, reference: Report, tmp_path: Path
) -> None:
    check_models_evaluate(local_store, frame, reference, tmp_path)


@pytest.mark.server
def test_models_evaluate_server(
    mlflow_env: Path,
    mlflow_server: MlflowServer,
    frame: pd.DataFrame,
    reference: Report,
    tmp_path: Path,
) -> None:
    check_models_evaluate(mlflow_server.uri, frame, reference, tmp_path)


def test_models_evaluate_with_a_model(
    mlflow_env: Path, local_store: str, frame: pd.DataFrame
) -> None:
    import mlflow

    preds = dict(zip(frame["id"], frame["pred"], strict=True))

    def model(features: pd.DataFrame) -> list[Any]:
        return [preds[i] for i in features["id"]]

    mlflow.set_tracking_uri(local_store)
    result = mlflow.models.evaluate(  # type: ignore[no-untyped-call]
        model=model,
        data=frame.drop(columns=["pred"]),
        targets="gold",
        model_type=MODEL_TYPE,
        evaluators=EVALUATOR_NAME,
        evaluator_config={"config": str(CONFIG)},
    )
    assert result.metrics == evaluate_frame(frame).metrics()


def test_bad_evaluator_config(mlflow_env: Path, local_store: str, frame: pd.DataFrame) -> None:
    import mlflow

    mlflow.set_tracking_uri(local_store)
    with pytest.raises(ConfigError, match="unknown evaluator_config key"):
        mlflow.models.evaluate(  # type: ignore[no-untyped-call]
            data=frame,
            targets="gold",
            predictions="pred",
            model_type=MODEL_TYPE,
            evaluators=EVALUATOR_NAME,
            evaluator_config={"threshold": 1},
        )


def test_unrelated_evaluations_are_untouched(mlflow_env: Path, local_store: str) -> None:
    """With the plugin installed, a regressor evaluation over all evaluators still runs and
    never reaches ours."""
    import mlflow

    mlflow.set_tracking_uri(local_store)
    data = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "y": [1.1, 1.9, 3.2, 3.9], "p": [1, 2, 3, 4]})
    with mlflow.start_run():
        result = mlflow.models.evaluate(  # type: ignore[no-untyped-call]
            data=data, targets="y", predictions="p", model_type="regressor"
        )
    assert "mean_squared_error" in result.metrics
    assert "macro_f1" not in result.metrics


# -- genai scorers -----------------------------------------------------------------------------
def test_field_f1_scorer_per_document() -> None:
    scorer: Any = field_f1_scorer(CONFIG)  # its calls return Feedback
    gold = {"total": 597.38, "currency": "EUR", "paid": False}
    same = scorer(outputs=dict(gold), expectations={"expected_response": gold})
    assert same.value == 1.0 and same.metadata == {"tp": "3", "fp": "0", "fn": "0"}
    wrong = scorer(outputs=json.dumps({"total": 1.0, "currency": "EUR"}), expectations=gold)
    assert wrong.value == pytest.approx(2 / 5)  # TP 1, FP 1, FN 2
    assert "total" in wrong.rationale and "TP 1, FP 1, FN 2" in wrong.rationale
    broken = scorer(outputs='{"total": 5', expectations=gold)
    assert broken.value == 0.0 and "parse_failure" in broken.rationale
    assert scorer(outputs={}, expectations={}).value is None  # 0/0 is n/a, never 0 or 1


def test_scorer_matches_the_report() -> None:
    """The scorer's per-document F1 is the document F1 of `evaluate` on the files."""
    reference = evaluate(EXAMPLE / "gold.jsonl", EXAMPLE / "pred_baseline.jsonl", CONFIG)
    by_id = {d.id: d.counts.f1 for d in reference.documents}
    scorer: Any = field_f1_scorer(CONFIG)  # its calls return Feedback
    preds = pred_by_id()
    for g in gold_rows():
        assert scorer(outputs=preds.get(g["id"]), expectations=g).value == by_id[g["id"]]


@pytest.mark.slow
def test_genai_evaluate_offline(mlflow_env: Path, local_store: str) -> None:
    import mlflow

    preds = pred_by_id()
    data = [
        {
            "inputs": {"id": g["id"]},
            "outputs": preds.get(g["id"]),
            "expectations": {"expected_response": g},
        }
        for g in gold_rows()
    ]
    from extract_mlflow.config_file import load_config

    config = load_config(CONFIG)
    expected = [score_pair(r["outputs"], r["expectations"], config).micro.f1 for r in data]
    mean = sum(v for v in expected if v is not None) / len([v for v in expected if v is not None])
    with using_tracking_uri(local_store):
        mlflow.set_experiment("genai")
        result = mlflow.genai.evaluate(data=data, scorers=scorers(CONFIG))
    assert result.metrics["field_f1/mean"] == pytest.approx(mean)


def test_bleu_proxy_scorer_against_the_source() -> None:
    source = "Invoice NH-2026-0412. Annual maintenance, gas boiler: 340.00 EUR."
    scorer: Any = bleu_proxy_scorer(CONFIG)  # its calls return Feedback
    gold = {"line_items": [{"description": "Annual maintenance, gas boiler"}]}
    copied = scorer(inputs={"source": source}, outputs=gold, expectations=gold)
    assert copied.value == 1.0 and copied.metadata == {"groundedness": "1.0000"}
    invented = {"line_items": [{"description": "Yearly servicing of the heater"}]}
    made_up = scorer(inputs=source, outputs=invented, expectations=gold)
    assert made_up.value is not None and made_up.value < 0.2
    assert "new_vocabulary" in made_up.rationale
    assert scorer(outputs=gold, expectations=gold).value is None  # no source: n/a


def test_scorer_registry() -> None:
    assert set(SCORERS) == {"field_f1", "bleu_proxy"}
    assert [s.name for s in scorers()] == ["field_f1", "bleu_proxy"]
    with pytest.raises(ConfigError, match="unknown scorer"):
        scorers(names=["bleu_proxy_typo"])
