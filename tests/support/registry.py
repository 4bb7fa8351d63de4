"""A tracking server with evaluations, model versions and prompt versions (:class:`World`), and
the helpers the registry, compare and promote tests share: scoring the invoice example,
registering and linking prompts, fresh models, reading tags and aliases back, the CLI."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from extract_mlflow import evaluate
from extract_mlflow.cli import main
from extract_mlflow.report import Report
from extract_mlflow.tracking.client import using_tracking_uri
from extract_mlflow.tracking.log import log_report
from extract_mlflow.tracking.payload import SIGNATURE_TAG, report_params

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "invoices"
GOLD = EXAMPLE / "gold.jsonl"
CONFIG = EXAMPLE / "config.toml"
DROP = [{"metric": "f1", "max_drop": 0.01}]


def score(pred: str, config: Path = CONFIG) -> Report:
    return evaluate(GOLD, EXAMPLE / pred, config)


def client_for(uri: str) -> Any:
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=uri)


@dataclass
class World:
    """Runs logged once per module: `baseline` (worse) and `improved` registered as versions 1
    and 2 of `model` (@champion → 1) and linked to versions 1 and 2 of `prompt` (@champion → 2);
    `other` scored with another config (another signature); `bare` has metrics, the signature
    tag and params but no eval/ artifacts; `failed` ended FAILED."""

    uri: str
    baseline: str
    improved: str
    other: str
    bare: str
    failed: str
    model: str
    prompt: str
    experiment_id: str


def register_prompt(uri: str, name: str, text: str) -> str:
    import mlflow

    with using_tracking_uri(uri):
        return str(mlflow.genai.register_prompt(name=name, template=text).version)


def link_prompt(uri: str, run_id: str, prompt_uri: str) -> None:
    with using_tracking_uri(uri):  # MLflow writes the link through the global store
        client_for(uri).link_prompt_version_to_run(run_id, prompt_uri)


def add_version(uri: str, model: str, run_id: str) -> str:
    """A new version of registered model `model` (created when missing) made from `run_id`."""
    client = client_for(uri)
    if not client.search_registered_models(f"name = '{model}'"):
        client.create_registered_model(model)
    source = client.get_run(run_id).info.artifact_uri + "/eval"
    return str(client.create_model_version(model, source, run_id=run_id).version)


def log_world(uri: str, folder: Path) -> World:
    sfx = uuid.uuid4().hex[:8]
    model, prompt, experiment = f"inv-{sfx}", f"inv-prompt-{sfx}", f"registry-{sfx}"
    other_config = folder / "other.toml"
    other_config.write_text(CONFIG.read_text().replace("rel_tol = 0.001", "rel_tol = 0.002", 1))
    ids, reports = {}, {}
    for label, pred in (("baseline", "pred_baseline.jsonl"), ("improved", "pred_improved.jsonl")):
        version = register_prompt(uri, prompt, f"Extract the invoice ({label}).")
        reports[label] = score(pred)
        logged = log_report(
            reports[label], tracking_uri=uri, experiment=experiment, run_name=label,
            register=model, prompt_uris=[f"prompts:/{prompt}/{version}"],
        )  # fmt: skip
        ids[label] = logged.run_id
    other = log_report(
        score("pred_improved.jsonl", other_config), tracking_uri=uri, experiment=experiment
    )
    client = client_for(uri)
    client.set_registered_model_alias(model, "champion", "1")
    client.set_prompt_alias(prompt, "champion", 2)
    signature = {SIGNATURE_TAG: reports["improved"].signature()}
    params = report_params(reports["improved"])
    bare = client.create_run(other.experiment_id, tags=signature)
    for key, value in reports["improved"].metrics().items():
        client.log_metric(bare.info.run_id, key, value)
    for key, text in params.items():
        client.log_param(bare.info.run_id, key, text)
    client.set_terminated(bare.info.run_id, "FINISHED")
    failed = client.create_run(other.experiment_id, tags=signature)
    for key, text in params.items():
        client.log_param(failed.info.run_id, key, text)
    client.set_terminated(failed.info.run_id, "FAILED")
    return World(
        uri, ids["baseline"], ids["improved"], other.run_id, bare.info.run_id,
        failed.info.run_id, model, prompt, other.experiment_id,
    )  # fmt: skip


def fresh_model(world: World, *runs: str) -> str:
    name = f"promo-{uuid.uuid4().hex[:8]}"
    for run_id in runs:
        add_version(world.uri, name, run_id)
    return name


def version_tags(world: World, name: str, version: str) -> dict[str, str]:
    tags = client_for(world.uri).get_model_version(name, version).tags
    return {k: v for k, v in tags.items() if k.startswith("extract_mlflow.promotion.")}


def aliases(world: World, name: str) -> dict[str, str]:
    return dict(client_for(world.uri).get_registered_model(name).aliases)


GATES_TOML = """
[[gate]]
metric = "f1"
threshold = 0.8
max_drop = 0.01

[[gate]]
metric = "field_f1/line_items.*"
max_drop = 0.05
significant = true
"""


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]
