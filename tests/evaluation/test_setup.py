"""The config decides which top-level keys are not fields, never the data: the structure keys
(``[structure]``'s key names), the top-level key of every ``--slice-by`` attribute and the
``--source-key`` field. A document is scored for structure when its own gold line carries a
structure key; once one does, the structure section lists every document. The same from rows,
streamed files and workers (no prescan, no second pass)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from extract_mlflow import evaluate
from extract_mlflow.config import Config
from extract_mlflow.evaluation.inputs import Extras, Setup
from extract_mlflow.report import Report


def _config(slice_by: tuple[str, ...]) -> Config:
    cfg = Config()
    statistics = cfg.statistics.model_copy(update={"slice_by": slice_by})
    return cfg.model_copy(update={"statistics": statistics})


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _every_way(tmp_path: Path, gold: list[Any], pred: list[Any], **kw: Any) -> list[Report]:
    """Rows, streamed files in one process and in two workers."""
    g, p = _write(tmp_path / "g.jsonl", gold), _write(tmp_path / "p.jsonl", pred)
    return [evaluate(gold, pred, **kw), evaluate(g, p, **kw), evaluate(g, p, workers=2, **kw)]


def test_the_config_names_the_keys_that_are_not_fields() -> None:
    setup = Setup.of(_config(("meta.layout", "scan", "meta.dpi")), None, Extras(source_key="src"))
    structure = ("tables", "blocks", "regions", "boundaries")
    assert setup.family_keys == (*structure, "meta", "scan", "src")
    assert Setup.of(Config()).family_keys == structure


def test_a_structure_key_only_predictions_carry_is_not_a_field(tmp_path: Path) -> None:
    """Gold without structure, a prediction with ``tables``: no hallucinated field ``tables``
    (before, a gold set without structure keys made them fields), and no structure section."""
    gold = [{"id": "a", "title": "x"}, {"id": "b", "title": "y"}]
    pred = [{"id": "a", "title": "x", "tables": ["<table><tr><td>1</td></tr></table>"]}]
    pred.append({"id": "b", "title": "z", "blocks": ["b1"]})
    for report in _every_way(tmp_path, gold, pred):
        assert (report.micro.tp, report.micro.fp, report.micro.fn) == (1, 1, 1)  # title only
        assert set(report.fields) == {"title"}
        assert report.family("structure") is None


def test_a_slice_attribute_a_prediction_carries_is_not_a_field(tmp_path: Path) -> None:
    """``--slice-by layout`` where predictions carry ``layout`` too: an attribute of the gold
    document, never a scored field (before, a prediction carrying it made it a field)."""
    gold = [{"id": "a", "title": "x", "layout": "one"}, {"id": "b", "title": "y", "layout": "two"}]
    pred = [{"id": "a", "title": "x", "layout": "two"}, {"id": "b", "title": "y"}]
    for report in _every_way(tmp_path, gold, pred, slice_by=["layout"]):
        assert (report.micro.tp, report.micro.fp, report.micro.fn) == (2, 0, 0)
        assert set(report.fields) == {"title"}
        assert report.to_dict()["metrics"]["f1_by_layout/two"] == 1.0


@pytest.mark.slow
@pytest.mark.parametrize("first", [True, False])
def test_structure_metrics_cover_the_documents_whose_gold_line_has_a_key(
    tmp_path: Path, first: bool
) -> None:
    """Two of three gold lines carry ``blocks``: the structure section has every document
    (the third with no metric), the metrics those two, wherever the plain document is."""
    plain: dict[str, Any] = {"id": "p", "title": "t"}
    gold: list[dict[str, Any]] = [
        {"id": "a", "title": "x", "blocks": ["b1", "b2"]},
        {"id": "c", "title": "z", "blocks": ["b1", "b2", "b3", "b4"]},
    ]
    gold = [plain, *gold] if first else [*gold, plain]
    pred = [
        {"id": "a", "title": "x", "blocks": ["b2", "b1"]},
        {"id": "c", "title": "z", "blocks": ["b1", "b2", "b3", "b4"]},
        {"id": "p", "title": "t", "blocks": ["b9"]},
    ]
    dicts = [r.to_dict() for r in _every_way(tmp_path, gold, pred)]
    assert dicts[1] == dicts[2]
    for d in dicts:
        assert d["structure"]["documents"] == 3
        # ROAcc = 1 - Levenshtein / max length, per document: a 1 - 2/2 = 0, c 1 - 0/4 = 1
        assert d["structure"]["metrics"]["reading_order"]["value"] == 0.5
        assert d["structure"]["metrics"]["reading_order"]["documents"] == 2
        assert (d["micro"]["tp"], d["micro"]["fp"], d["micro"]["fn"]) == (3, 0, 0)
