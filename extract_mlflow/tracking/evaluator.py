"""extract_mlflow inside MLflow's own evaluation APIs.

1. An evaluator for ``mlflow.models.evaluate``, registered under the ``mlflow.model_evaluator``
   entry point as ``extraction``::

       mlflow.models.evaluate(
           data=df,                      # one row per document: gold and predicted objects
           targets="gold",               # dicts or JSON text
           predictions="pred",           # dicts, JSON text (unparseable = parse failure) or None
           model_type="extraction",
           evaluators="extraction",
           evaluator_config={"config": "config.toml", "id_key": "id"},
       )

   It logs the report's metrics, params, tags and ``eval/`` artifacts to the evaluation run and
   returns them. ``can_evaluate`` is strict (``model_type="extraction"`` only), so unrelated
   ``mlflow.models.evaluate`` calls never pick it up.

2. Deterministic scorers for ``mlflow.genai.evaluate`` (no LLM judge, works offline):
   :func:`field_f1_scorer` (per-document field F1; the run metric ``field_f1/mean`` is the mean
   over documents, not the pooled micro F1 of ``extract-mlflow score``). :data:`SCORERS` lists
   every scorer by name; new families (the BLEU proxy) add a factory there.

Nothing here imports mlflow at module level: the classes MLflow needs are built on first use.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.text import fmt
from ..errors import ConfigError, InputError

if TYPE_CHECKING:
    from mlflow.genai.scorers import Scorer
    from mlflow.models.evaluation import EvaluationResult

    from ..config import Config
    from ..io.loading import GoldSet, PredictionSet
    from ..report import Report

EVALUATOR_NAME = "extraction"
MODEL_TYPE = "extraction"
CONFIG_KEYS = frozenset({"config", "id_key", "col_mapping"})
ARTIFACTS = {
    "summary": ("summary.md", "TextEvaluationArtifact"),
    "diagnostics": ("diagnostics.json", "JsonEvaluationArtifact"),
    "documents": ("documents.parquet", "ParquetEvaluationArtifact"),
    "config": ("config.toml", "TextEvaluationArtifact"),
}


# -- rows -> gold and prediction sets --------------------------------------------------------
def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _gold_object(value: Any, doc_id: str) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise InputError(f"gold of row {doc_id!r} is not valid JSON: {exc}") from None
    if not isinstance(value, Mapping):
        raise InputError(f"gold of row {doc_id!r} is not a JSON object")
    return dict(value)


def _pred_object(value: Any) -> tuple[dict[str, Any] | None, str | None]:
    """(document, None), (None, None) for no prediction, or (None, why) for a parse failure."""
    if _is_missing(value):
        return None, None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            return None, f"invalid JSON: {exc}"
    if not isinstance(value, Mapping):
        return None, f"not a JSON object (got {type(value).__name__})"
    return dict(value), None


def build_sets(
    ids: Sequence[str], golds: Sequence[Any], preds: Sequence[Any], id_key: str = "id"
) -> tuple[GoldSet, PredictionSet]:
    """Gold and prediction sets from parallel columns (dicts or JSON text per row)."""
    from ..io.loading import GoldSet, PredictionSet

    gold_docs: dict[str, dict[str, Any]] = {}
    pred_docs: dict[str, dict[str, Any]] = {}
    failures: dict[str, str] = {}
    for doc_id, g, p in zip(ids, golds, preds, strict=True):
        if doc_id in gold_docs:
            raise InputError(f"duplicate document id {doc_id!r} in the evaluation data")
        gold_docs[doc_id] = {**_gold_object(g, doc_id), id_key: doc_id}
        doc, why = _pred_object(p)
        if why is not None:
            failures[doc_id] = why
        elif doc is not None:
            pred_docs[doc_id] = {**doc, id_key: doc_id}
    canonical = json.dumps(gold_docs, sort_keys=True, default=str, ensure_ascii=False)
    digest = hashlib.sha256(canonical.encode()).hexdigest()
    return GoldSet(gold_docs, digest=digest), PredictionSet(pred_docs, failures)


def _resolve(config: Config | str | Path | Mapping[str, Any] | None, id_key: str | None) -> Config:
    from ..evaluation.evaluate import resolve_config

    return resolve_config(config, id_key)


# -- the mlflow.models.evaluate evaluator ----------------------------------------------------------
class ExtractionEvaluator:
    """``mlflow.models.evaluate`` evaluator (duck-typed ``ModelEvaluator``: MLflow only calls
    ``can_evaluate`` and ``evaluate``), registered as ``extraction``."""

    name = EVALUATOR_NAME

    @classmethod
    def can_evaluate(
        cls, *, model_type: str | None, evaluator_config: Mapping[str, Any] | None, **kwargs: Any
    ) -> bool:
        """Only ``model_type="extraction"``: never claims another evaluation."""
        return model_type == MODEL_TYPE

    def evaluate(
        self,
        *,
        model_type: str | None,
        dataset: Any,
        run_id: str,
        evaluator_config: Mapping[str, Any] | None,
        model: Any = None,
        **kwargs: Any,
    ) -> EvaluationResult:
        """Score the dataset's predictions against its targets and log the report to `run_id`."""
        options = dict(evaluator_config or {})
        unknown = sorted(set(options) - CONFIG_KEYS)
        if unknown:
            raise ConfigError(
                f"unknown evaluator_config key(s) for {EVALUATOR_NAME!r}: {', '.join(unknown)}"
                f" (known: config, id_key)"
            )
        report = score_dataset(dataset, options.get("config"), options.get("id_key"), model)
        artifact_uri = log_to_run(report, run_id)
        return evaluation_result(report, artifact_uri, run_id)


def score_dataset(
    dataset: Any, config: Any = None, id_key: str | None = None, model: Any = None
) -> Report:
    """The report of an MLflow evaluation dataset (targets = gold, predictions = output)."""
    from ..evaluation.evaluate import score_sets

    cfg = _resolve(config, id_key)
    if not dataset.has_targets:
        raise InputError("mlflow.models.evaluate(..., targets=<gold column>) is required")
    features = dataset.features_data
    golds = list(dataset.labels_data)
    preds = _predictions(dataset, model, features)
    if cfg.id_key in getattr(features, "columns", ()):
        ids = [str(v) for v in features[cfg.id_key]]
    else:
        ids = [str(i) for i in range(len(golds))]
    gold_set, pred_set = build_sets(ids, golds, preds, cfg.id_key)
    gold_set.source = str(getattr(dataset, "name", None) or "<rows>")
    return score_sets(gold_set, pred_set, cfg)


def _predictions(dataset: Any, model: Any, features: Any) -> list[Any]:
    if dataset.predictions_data is not None:
        return list(dataset.predictions_data)
    if model is None:
        raise InputError("mlflow.models.evaluate needs predictions=<column> or a model")
    output = model.predict(features)
    if hasattr(output, "columns"):  # a frame: its first column holds the extraction
        output = output.iloc[:, 0]
    return list(output)


def log_to_run(report: Report, run_id: str) -> str:
    """Log the report into the (caller's) run `run_id`; returns the run's artifact URI."""
    import tempfile

    from .payload import write_eval_artifacts
    from .runs import Tracker

    with tempfile.TemporaryDirectory(prefix="extract-mlflow-") as tmp:
        eval_dir = write_eval_artifacts(report, Path(tmp))
        with Tracker() as tracker, tracker.errors():
            target = tracker.open_run(run_id=run_id)
            tracker.log_evaluation(target, report, eval_dir, dataset_input=False)
            return target.artifact_uri


def evaluation_result(report: Report, artifact_uri: str, run_id: str) -> EvaluationResult:
    """The EvaluationResult MLflow returns to the caller: our metrics and ``eval/`` artifacts."""
    from mlflow.models.evaluation import EvaluationResult
    from mlflow.models.evaluation import artifacts as kinds

    base = artifact_uri.rstrip("/") + "/eval/"
    artifacts = {
        name: getattr(kinds, kind)(uri=base + file) for name, (file, kind) in ARTIFACTS.items()
    }
    result: EvaluationResult = EvaluationResult(  # type: ignore[no-untyped-call]
        metrics=report.metrics(), artifacts=artifacts, run_id=run_id
    )
    return result


# -- deterministic mlflow.genai scorers ----------------------------------------------------------
def _gold_from_expectations(expectations: Any) -> Any:
    """The gold object: ``expectations["expected_response"]`` when present (MLflow's usual key),
    else the expectations themselves."""
    if isinstance(expectations, Mapping) and "expected_response" in expectations:
        return expectations["expected_response"]
    return expectations


def score_pair(outputs: Any, expectations: Any, config: Config) -> Report:
    """Score one predicted object against one gold object (one-document report)."""
    from ..evaluation.evaluate import score_sets

    gold = _gold_from_expectations(expectations)
    gold_set, pred_set = build_sets(["row"], [gold], [outputs], config.id_key)
    return score_sets(gold_set, pred_set, config)


def source_text(inputs: Any, expectations: Any) -> str | None:
    """The source document of one evaluation row, where the BLEU proxy scorer looks for it."""
    if isinstance(expectations, Mapping) and isinstance(expectations.get("source"), str):
        return str(expectations["source"])
    if isinstance(inputs, str):
        return inputs
    if isinstance(inputs, Mapping):
        for key in ("source", "text", "document"):
            if isinstance(inputs.get(key), str):
                return str(inputs[key])
    return None


def fidelity_pair(outputs: Any, expectations: Any, source: str, config: Config) -> Any:
    """Text fidelity of one predicted object against its source (one-document summary)."""
    from ..fidelity.score import score_fidelity
    from ..fields.normalize import Comparators

    gold = _gold_from_expectations(expectations)
    if isinstance(gold, Mapping):
        gold = {k: v for k, v in gold.items() if k != "source"}
    gold_set, pred_set = build_sets(["row"], [gold], [outputs], config.id_key)
    return score_fidelity(
        gold_set.docs,
        pred_set.docs,
        {"row": source},
        config.fidelity,
        Comparators(config),
        id_key=config.id_key,
    )


def fidelity_rationale(summary: Any, limit: int = 3) -> str:
    """The values that look least like their source, as the scorer's explanation."""
    worst = summary.worst(limit)
    if not worst:
        return "every checked value was copied from the source"
    parts = []
    for v in worst:
        score = fmt(v.bleu_proxy, 2)
        flags = ", ".join(v.flags) or ("not grounded" if v.grounded is False else v.band)
        parts.append(f"{v.path} {v.value!r}: BLEU proxy {score} ({flags})")
    return "; ".join(parts)


def rationale(report: Report, limit: int = 5) -> str:
    """TP/FP/FN and the first mismatches, as the scorer's explanation."""
    m = report.micro
    parts = [f"TP {m.tp}, FP {m.fp}, FN {m.fn}"]
    examples = [(f.path, e) for f in report.fields.values() for e in f.examples][:limit]
    for path, e in examples:
        parts.append(f"{path}: {e['category']} (expected {e['expected']!r}, got {e['got']!r})")
    status = report.documents[0].status if report.documents else "scored"
    if status != "scored":
        parts.append(f"document {status}")
    return "; ".join(parts)


@functools.cache
def _scorer_classes() -> dict[str, type[Scorer]]:
    """Build the Scorer subclasses on first use (importing mlflow.genai costs seconds)."""
    from mlflow.entities import Feedback
    from mlflow.genai.scorers import Scorer

    class ExtractionScorer(Scorer):
        """Base of our deterministic scorers: a scoring config (as a plain dict)."""

        config_data: dict[str, Any] | None = None

        def report(self, outputs: Any, expectations: Any) -> Report:
            return score_pair(outputs, expectations, _resolve(self.config_data, None))

    class FieldF1Scorer(ExtractionScorer):
        """Field F1 of one document (TP/FP/FN in the feedback's metadata)."""

        name: str = "field_f1"

        def __call__(  # type: ignore[override]
            self, *, outputs: Any = None, expectations: Any = None
        ) -> Feedback:
            report = self.report(outputs, expectations)
            m = report.micro
            return Feedback(
                value=m.f1,
                rationale=rationale(report),
                metadata={"tp": str(m.tp), "fp": str(m.fp), "fn": str(m.fn)},
            )

    class BleuProxyScorer(ExtractionScorer):
        """BLEU proxy of one document's extracted text values against its source text
        (``expectations["source"]``, else ``inputs`` when it is text, else
        ``inputs["source"]``/``inputs["text"]``); groundedness in the metadata."""

        name: str = "bleu_proxy"

        def __call__(  # type: ignore[override]
            self, *, inputs: Any = None, outputs: Any = None, expectations: Any = None
        ) -> Feedback:
            source = source_text(inputs, expectations)
            if source is None:
                return Feedback(value=None, rationale="no source text in inputs or expectations")
            summary = fidelity_pair(outputs, expectations, source, _resolve(self.config_data, None))
            m = summary.metrics()
            grounded = m.get("groundedness")
            return Feedback(
                value=m.get("bleu_proxy"),
                rationale=fidelity_rationale(summary),
                metadata={"groundedness": fmt(grounded, 4)},
            )

    return {"field_f1": FieldF1Scorer, "bleu_proxy": BleuProxyScorer}


def _config_data(config: Config | str | Path | Mapping[str, Any] | None) -> dict[str, Any] | None:
    if config is None:
        return None
    return _resolve(config, None).model_dump(mode="json")


def field_f1_scorer(
    config: Config | str | Path | Mapping[str, Any] | None = None, *, name: str = "field_f1"
) -> Scorer:
    """A deterministic ``mlflow.genai`` scorer: field F1 of `outputs` against `expectations`
    (``expectations["expected_response"]`` or the expectations dict), under `config`.

    >>> mlflow.genai.evaluate(data=rows, scorers=[field_f1_scorer("config.toml")])  # doctest: +SKIP
    """
    cls = _scorer_classes()["field_f1"]
    return cls(name=name, config_data=_config_data(config))  # type: ignore[call-arg]


def bleu_proxy_scorer(
    config: Config | str | Path | Mapping[str, Any] | None = None, *, name: str = "bleu_proxy"
) -> Scorer:
    """A deterministic ``mlflow.genai`` scorer: BLEU proxy (n-gram precision against the
    source text) of the document's extracted text values; no LLM judge."""
    cls = _scorer_classes()["bleu_proxy"]
    return cls(name=name, config_data=_config_data(config))  # type: ignore[call-arg]


SCORERS: dict[str, Callable[..., Scorer]] = {
    "field_f1": field_f1_scorer,
    "bleu_proxy": bleu_proxy_scorer,
}
"""Every deterministic scorer by name."""


def scorers(
    config: Config | str | Path | Mapping[str, Any] | None = None,
    names: Iterable[str] | None = None,
) -> list[Scorer]:
    """The deterministic scorers `names` (default: all of :data:`SCORERS`) under `config`."""
    chosen = list(names) if names is not None else list(SCORERS)
    unknown = [n for n in chosen if n not in SCORERS]
    if unknown:
        raise ConfigError(f"unknown scorer(s): {', '.join(unknown)} (known: {', '.join(SCORERS)})")
    return [SCORERS[n](config) for n in chosen]
