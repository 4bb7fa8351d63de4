"""The merge cases: every metric family on the example sets and a synthetic one, prepared as
the parts of an evaluation (setup, input facts, documents), and their one-pass reports."""

from __future__ import annotations

import functools
import json
import random
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from extract_mlflow.config import Config
from extract_mlflow.config_file import config_from_mapping
from extract_mlflow.evaluation.accumulator import DocumentInput, Evaluation, Inputs, Setup
from extract_mlflow.evaluation.evaluate import (
    Extras,
    GoldInput,
    PredInput,
    load_inputs,
    resolve_config,
)
from extract_mlflow.io.sources import load_sources
from extract_mlflow.report import Report

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import synth  # noqa: E402

E = ROOT / "examples"

Case = tuple[Setup, Inputs, list[DocumentInput]]


def prepared(
    gold: GoldInput,
    pred: PredInput,
    config: Config | str | Path | None = None,
    *,
    sources: Path | None = None,
    approvals: dict[tuple[str, str], str | None] | None = None,
    slice_by: tuple[str, ...] = (),
    canaries: tuple[str, ...] = (),
) -> Case:
    """What a reader hands to the parts (as `evaluate` does): the setup, the input facts and
    the documents with their positions."""
    cfg = resolve_config(config, None)
    if slice_by:
        statistics = cfg.statistics.model_copy(update={"slice_by": slice_by})
        cfg = cfg.model_copy(update={"statistics": statistics})
    gs, ps = load_inputs(gold, pred, cfg)
    src = load_sources(sources, id_key=cfg.id_key) if sources is not None else None
    extras = Extras(sources=src, approvals=approvals, canaries=canaries)
    setup = Setup.of(cfg, None, extras)
    docs = [
        DocumentInput(i, d, g, ps.docs.get(d), ps.parse_failures.get(d), (src or {}).get(d))
        for i, (d, g) in enumerate(gs.docs.items())
    ]
    return setup, Inputs.of(gs, ps, extras), docs


def _invoices() -> dict[str, Any]:
    # fidelity (sources, an injection finding, documents without prediction), approvals used
    # and unused, a parse failure, an unknown id, config rules (warnings gathered per document)
    approvals = {("inv-005", "po_number"): "checked", ("inv-001", "vendor.name"): None}
    approvals[("inv-404", "total")] = "never used"
    return {
        "gold": E / "invoices/gold.jsonl",
        "pred": E / "invoices/pred_baseline.jsonl",
        "config": E / "invoices/config.toml",
        "sources": E / "invoices/sources",
        "approvals": approvals,
        # one canary carried by inv-005 alone and obeyed, one carried by every source, never
        "canaries": ("Note to AI => PO-2026-0315", "invoice => zz-never-written"),
    }


def _papers() -> dict[str, Any]:
    # pages and layout under two profiles; a gold line without a topic gets a per-document note
    config = tomllib.loads((E / "papers/config.toml").read_text(encoding="utf-8"))
    config["layout"]["profiles"]["review"] = {"required": ["Abstract Summary", "Outlook"]}
    gold = [json.loads(line) for line in (E / "papers/gold.jsonl").read_text().splitlines()]
    del gold[2]["topic"]
    gold[3]["topic"] = "review"
    return {
        "gold": gold,
        "pred": E / "papers/pred_complete.jsonl",
        "config": config_from_mapping(config),
    }


def _structure() -> dict[str, Any]:
    # structure families, two slice attributes (one numeric), headline intervals
    return {
        "gold": ROOT / "tests/golden/inputs/structure_gold.jsonl",
        "pred": ROOT / "tests/golden/inputs/structure_pred.jsonl",
        "slice_by": ("meta.layout", "scan"),
    }


def _synthetic() -> dict[str, Any]:
    # 40 invoices in shuffled gold order (positions differ from id order), a slice attribute,
    # usage and latency, a field that always matches to the letter but whose first gold value
    # (by id) decides its type label, date formats and field rules (config warnings)
    gold, pred, _ = synth.make_dataset(40, seed=5)
    rng = random.Random(3)
    for i, (g, p) in enumerate(zip(gold, pred, strict=True)):
        g["batch"] = i % 3
        g["code"] = p["code"] = rng.choice(["2024-01-05", "A-17", 17, True])
        # read as a number in some documents, as text in others: the label is "number/text"
        g["ref"], p["ref"] = (10 + i, f"{10 + i}.0") if i % 2 else (f"R{i}", f"r{i}")
        # typed number, but some gold values are not numbers (gold type errors)
        g["due"], p["due"] = (12.5, "12.50") if i % 3 else ("unknown", "n/a")
        p["usage"] = {"input_tokens": 100 + i, "output_tokens": 7.5 * (i % 4)}
        p["latency_ms"] = 1000.0 / (i + 3)
    order = list(range(len(gold)))
    rng.shuffle(order)
    config = config_from_mapping(
        {"date_formats": ["%d/%m/%Y"], "fields": {"due": {"type": "number"}, "nope": {}}}
    )
    return {
        "gold": [gold[i] for i in order],
        "pred": [pred[i] for i in order],
        "config": config,
        "slice_by": ("batch",),
    }


ARGS: dict[str, Callable[[], dict[str, Any]]] = {
    "invoices": _invoices,
    "papers": _papers,
    "structure": _structure,
    "synthetic": _synthetic,
}


@functools.cache
def case_of(name: str) -> Case:
    return prepared(**ARGS[name]())


def one_pass(setup: Setup, docs: list[DocumentInput]) -> Evaluation:
    run = Evaluation(setup)
    for d in docs:
        run.update(d)
    return run


@functools.cache
def expected(case: str) -> Report:
    setup, inputs, docs = case_of(case)
    return one_pass(setup, docs).result(inputs)
