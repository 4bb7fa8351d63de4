"""One report whatever the source and the engine: in-memory rows, two JSONL files, ``workers=2``
and Spark ``local[2]`` give the same ``Report.to_dict()`` on every example set and on 3,000
generated documents with structure, text fidelity and pages (rows differ only in what names
their inputs: source, digest and the signature's gold digest)."""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.spark import require_spark

from extract_mlflow import evaluate

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(ROOT / "benchmarks"))

import synth  # noqa: E402

pytestmark = pytest.mark.slow  # every test starts or uses a Spark session (a JVM)

CASES = [
    ("invoices", "pred_baseline.jsonl", "config.toml", True),
    ("invoices", "pred_improved.jsonl", "config.toml", True),
    ("papers", "pred_complete.jsonl", "config.toml", False),
    ("papers", "pred_csv_only.jsonl", "config.toml", False),
    ("receipts", "pred.jsonl", "config_text.toml", False),
    ("receipts", "pred.jsonl", "config_quantity.toml", False),
    ("tables", "pred_weak.jsonl", "config.toml", False),
    ("tables", "pred_better.jsonl", "config.toml", False),
    ("iterations", "baseline.jsonl", "config.toml", False),
]


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    require_spark()
    from extract_mlflow.spark import session

    s = session("local[2]")
    yield s
    s.stop()


def _named_apart(report: dict[str, Any]) -> dict[str, Any]:
    """The report without what names its inputs (rows have no file, nor a file's digest, and a
    parse failure names its "row 7", not its "line 7")."""
    out = dict(report)
    for side in ("gold", "predictions"):
        out[side] = None
    out["signature"] = None
    named: dict[str, Any] = json.loads(json.dumps(out).replace('"row ', '"line '))
    return named


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _agree(spark: Any, gold: Path, pred: Path, config: Any, **kwargs: Any) -> dict[str, Any]:
    """The files' report, checked equal to the workers', Spark's and (named apart) the rows'."""
    from extract_mlflow.spark import evaluate as spark_evaluate

    files = evaluate(gold, pred, config, **kwargs).to_dict()
    assert evaluate(gold, pred, config, workers=2, **kwargs).to_dict() == files
    assert spark_evaluate(gold, pred, config, spark=spark, **kwargs).to_dict() == files
    gold_rows = [json.loads(line) for line in _lines(gold)]
    rows = evaluate(gold_rows, _lines(pred), config, **kwargs).to_dict()  # prediction lines as text
    assert _named_apart(rows) == _named_apart(files)
    return files


@pytest.mark.parametrize(("example", "pred", "config", "with_sources"), CASES)
def test_every_example_gives_one_report(
    spark: Any, example: str, pred: str, config: str, with_sources: bool
) -> None:
    folder = EXAMPLES / example
    kwargs = {"sources": folder / "sources"} if with_sources else {}
    report = _agree(spark, folder / "gold.jsonl", folder / pred, folder / config, **kwargs)
    assert report["documents"] >= 5


@pytest.mark.slow
def test_generated_documents_with_structure_fidelity_and_pages(spark: Any, tmp_path: Path) -> None:
    """3,000 invoices, each a third of the time with structure fields, as a page (its
    prediction a wiki page) or plain, every one with its source text; predictions shuffled (the
    join seeks), some missing, one line broken."""
    gold_rows, pred_rows, _ = synth.make_dataset(3000, 29)
    rng = random.Random(29)
    golds: list[dict[str, Any]] = []
    preds: list[str] = []
    sources: list[dict[str, str]] = []
    for g, p in zip(gold_rows, pred_rows, strict=True):
        kind = rng.randrange(3)
        if kind == 0:
            g, p = synth.structure_documents(g, p, rng)
        elif kind == 1:
            g, p = synth.page_documents(g, p, rng)
        sources.append({"id": g["id"], "text": synth.source_text(gold_rows[len(golds)])})
        golds.append(g)
        if rng.random() > 0.02:
            preds.append(json.dumps(p))
    rng.shuffle(preds)
    preds[7] = preds[7][:-5]  # a parse failure
    gold = synth.write_jsonl(golds, tmp_path / "gold.jsonl")
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(line + "\n" for line in preds), encoding="utf-8")
    src = synth.write_jsonl(sources, tmp_path / "sources.jsonl")
    config = tmp_path / "config.toml"
    config.write_text(synth.PAGE_CONFIG, encoding="utf-8")
    report = _agree(spark, gold, pred, config, sources=src)
    assert report["documents"] == 3000
    assert report["structure"] is not None and report["fidelity"] is not None
    assert report["layout"] is not None and report["layout"]["layout_score"] is not None
