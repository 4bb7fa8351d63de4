"""``extract-mlflow demo``: the bundled invoice example logged to MLflow in one call.

Logs a baseline and an improved run (each with its prompt, stored as a file under
``eval/prompts/`` and, where the store has a prompt registry, registered and linked), registers
both as versions of one model, and returns what a scoreboard needs plus the command that opens
the MLflow UI on that store.

>>> result = run_demo()  # doctest: +SKIP
>>> print(scoreboard(result))  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from ..core.language import tr
from ..core.text import aligned, fmt
from ..io.examples import find_example_dir
from .client import display_uri, is_http, resolve_tracking_uri
from .log import log_report
from .runs import LoggedRun, Tracker

log = logging.getLogger(__name__)

DEFAULT_EXPERIMENT = "extract-mlflow-demo"
DEFAULT_MODEL = "invoice-extractor"
PROMPT_NAME = "invoice-extraction"

BASELINE_PROMPT = """\
Extract the invoice as JSON with the keys id, vendor, invoice_number, invoice_date, due_date,
currency, total, tax_rate, paid, payment_terms, line_items, tags and notes.

Invoice:
{{document}}
"""

IMPROVED_PROMPT = """\
You extract invoices into one JSON object, and nothing else (no prose, no code fences).

Keys: id, vendor {name, vat_id, address {city, country}}, invoice_number, invoice_date,
due_date, currency (ISO 4217), total (gross, tax included), tax_rate (percent), paid (boolean),
payment_terms, line_items [{description, qty, unit_price, amount}], tags, notes, and weight or
storage_temp when the invoice states them (with their unit).

Rules:
- Copy every line item, in any order; never invent one (no delivery charges that are not there).
- Dates as YYYY-MM-DD. Numbers as numbers. A value the invoice does not state is null.
- Leave out keys that are not listed above.

Invoice:
{{document}}
"""

VARIANTS = (
    ("baseline", "pred_baseline.jsonl", BASELINE_PROMPT),
    ("improved", "pred_improved.jsonl", IMPROVED_PROMPT),
)


@dataclass(frozen=True)
class DemoRun:
    """One logged demo run and its headline scores."""

    label: str
    run: LoggedRun
    f1: float | None
    precision: float | None
    recall: float | None
    prompt_uri: str | None = None


@dataclass(frozen=True)
class DemoResult:
    """Everything the demo logged, and how to look at it."""

    tracking_uri: str
    experiment: str | None
    model_name: str
    runs: list[DemoRun]

    @property
    def ui_command(self) -> str:
        return ui_command(self.tracking_uri)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tracking_uri": self.tracking_uri,
            "experiment": self.experiment,
            "model_name": self.model_name,
            "ui_command": self.ui_command,
            "runs": [
                {
                    "label": r.label,
                    "f1": r.f1,
                    "precision": r.precision,
                    "recall": r.recall,
                    "prompt_uri": r.prompt_uri,
                    **r.run.to_dict(),
                }
                for r in self.runs
            ],
        }


def ui_command(tracking_uri: str) -> str:
    """How to open the MLflow UI on `tracking_uri`.

    >>> ui_command("sqlite:////tmp/demo/mlflow.db")
    'mlflow ui --backend-store-uri sqlite:////tmp/demo/mlflow.db'
    >>> ui_command("http://127.0.0.1:5000")
    'open http://127.0.0.1:5000 in a browser'
    """
    if is_http(tracking_uri):
        return f"open {tracking_uri} in a browser"
    uri = tracking_uri
    if not urlsplit(uri).scheme:  # a bare path is a file store
        uri = Path(unquote(uri)).resolve().as_uri()
    return f"mlflow ui --backend-store-uri {shlex.quote(uri)}"


def register_prompt(text: str, label: str) -> str | None:
    """Register `text` as a new version of the demo prompt; its ``prompts:/`` URI, or None when
    the store has no prompt registry (then the prompt is only stored as a file)."""
    import mlflow

    try:
        version = mlflow.genai.register_prompt(
            name=PROMPT_NAME, template=text, commit_message=f"extract-mlflow demo: {label}"
        )
    except Exception as exc:  # e.g. a file store: no prompt registry
        log.warning("prompt registry unavailable, prompt kept as a file only: %s", exc)
        return None
    return f"prompts:/{version.name}/{version.version}"


def _caller_run(tracking_uri: str | None) -> str | None:
    """The run `mlflow run` (or the caller) started: demo runs become its children."""
    with Tracker(tracking_uri) as tracker:
        return tracker.caller_run_id()


def run_demo(
    *,
    tracking_uri: str | None = None,
    experiment: str | None = DEFAULT_EXPERIMENT,
    model_name: str = DEFAULT_MODEL,
    example_dir: str | Path | None = None,
    register_prompts: bool = True,
) -> DemoResult:
    """Score the bundled example twice (baseline, improved), log both runs with their prompts
    to `tracking_uri` (default: MLflow's default local store), register both as versions of
    `model_name`, and return the scoreboard data."""
    from ..evaluation.evaluate import evaluate

    folder = find_example_dir(example_dir)
    uri = resolve_tracking_uri(tracking_uri)
    parent = _caller_run(uri)
    runs = []
    with tempfile.TemporaryDirectory(prefix="extract-mlflow-demo-") as tmp:
        for label, pred_file, prompt in VARIANTS:
            report = evaluate(folder / "gold.jsonl", folder / pred_file, folder / "config.toml")
            prompt_path = Path(tmp) / f"{label}_prompt.txt"
            prompt_path.write_text(prompt, encoding="utf-8")
            prompt_uri = _register_prompt(uri, prompt, label) if register_prompts else None
            logged = log_report(
                report,
                tracking_uri=uri,
                experiment=None if parent else experiment,
                run_name=f"demo-{label}",
                prompts=[prompt_path],
                prompt_uris=[prompt_uri] if prompt_uri else [],
                params={"variant": label, "predictions": pred_file},
                tool_tags={"extract_mlflow.demo": label},
                register=model_name,
                parent_run_id=parent,
                reuse_caller_run=False,
            )
            m = report.micro
            runs.append(DemoRun(label, logged, m.f1, m.precision, m.recall, prompt_uri))
    return DemoResult(display_uri(uri), None if parent else experiment, model_name, runs)


def _register_prompt(uri: str, text: str, label: str) -> str | None:
    with Tracker(uri) as tracker, tracker.errors():
        return register_prompt(text, label)


def scoreboard(result: DemoResult) -> str:
    """A short plain-text scoreboard of the demo runs and the command to open the UI."""
    where = tr("demo.experiment", name=result.experiment) if result.experiment else ""
    rows = [tuple(tr("demo.head").split("|"))]
    for r in result.runs:
        version = f"{result.model_name}/{r.run.model_version}" if r.run.model_version else "-"
        rows.append((r.label, fmt(r.f1), fmt(r.precision), fmt(r.recall), version, r.run.run_id))
    lines = [tr("demo.logged", uri=result.tracking_uri, where=where), ""]
    lines += aligned(rows, left=len(rows[0]), rule=False)
    delta = _delta(result)
    if delta:
        lines += ["", delta]
    lines += ["", tr("demo.open_ui", command=result.ui_command)]
    return "\n".join(lines) + "\n"


def _delta(result: DemoResult) -> str | None:
    scores = [r.f1 for r in result.runs if r.f1 is not None]
    if len(scores) != 2 or len(result.runs) != 2:
        return None
    before, after = scores
    return tr("demo.delta", before=before, after=after, delta=after - before)
