"""The Spark engine (``extract_mlflow.spark``) gives exactly the local engine's Report: every
field of it, its JSON text, its confidence intervals (same seed); and the same error text for
gold defects and repeated ids. One SparkSession (``local[2]``) serves the whole test session.

Skipped with the reason when pyspark or Java is missing, except under ``CI=true``, where a
missing one fails the tests instead (CI must run them: ``.ci/run`` installs both)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from support.spark import require_spark

from extract_mlflow.errors import InputError
from extract_mlflow.evaluation.evaluate import evaluate as local_evaluate
from extract_mlflow.report import Report
from extract_mlflow.views.frames import report_frame

ROOT = Path(__file__).resolve().parents[2]
E = ROOT / "examples"
sys.path.insert(0, str(ROOT / "benchmarks"))
import synth  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    require_spark()
    from extract_mlflow.spark import session

    s = session("local[2]")
    yield s
    s.stop()


@pytest.fixture(params=["ranges", "partitions"])
def reading(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """How the engine reads two local files on a local master: its tasks read byte ranges
    (what it does), or Spark reads the lines into partitions grouped by id (what it does with
    URIs and DataFrames; forced here on the same files)."""
    if request.param == "partitions":
        import extract_mlflow.spark

        monkeypatch.setattr(extract_mlflow.spark, "by_ranges", lambda *_: False)
    return str(request.param)


def spark_evaluate(spark: Any, gold: Any, pred: Any, *config: Any, **kwargs: Any) -> Report:
    from extract_mlflow.spark import evaluate

    return evaluate(gold, pred, *config, spark=spark, **kwargs)


def _f1s(report: Report) -> dict[str, float | None]:
    return {path: f.counts.f1 for path, f in report.fields.items()}


def _documents(report: Report) -> list[tuple[int, dict[str, Any]]]:
    return [(d.position, d.to_dict()) for d in report.documents]


def assert_same(got: Report, want: Report) -> None:
    """Every field of the Report equal (records, fields, intervals, ...), and the JSON text.
    The local engine streams files into compact documents (no per-document mistakes kept), so
    documents compare by what they hold: position and their JSON."""
    for f in dataclasses.fields(Report):
        if f.name == "documents":
            assert _documents(got) == _documents(want), f.name
            continue
        assert getattr(got, f.name) == getattr(want, f.name), f.name
    assert got.micro == want.micro
    assert _f1s(got) == _f1s(want)
    assert got.intervals == want.intervals
    assert json.dumps(got.to_dict(), default=str) == json.dumps(want.to_dict(), default=str)


@pytest.mark.parametrize("form", ["folder", "jsonl"])
def test_invoices_with_sources_equal_the_local_engine(
    spark: Any, tmp_path: Path, form: str, reading: str
) -> None:
    """Sources from a folder or a JSONL file (read by offset on the driver; with a source no
    gold document uses): the same report, digest and unused sources as the local engine."""
    sources: Path = E / "invoices/sources"
    if form == "jsonl":
        rows = [
            {"id": f.stem, "text": f.read_text(encoding="utf-8")} for f in sorted(sources.iterdir())
        ]
        rows.insert(3, {"id": "inv-unused", "text": "a source no gold document has"})
        sources = tmp_path / "sources.jsonl"
        sources.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    kwargs: dict[str, Any] = {"config": E / "invoices/config.toml", "sources": sources}
    approvals = {("inv-005", "po_number"): "checked", ("inv-404", "total"): None}
    for pred in ("pred_baseline.jsonl", "pred_improved.jsonl"):
        args = (E / "invoices/gold.jsonl", E / "invoices" / pred)
        want = local_evaluate(*args, approvals=approvals, **kwargs)
        got = spark_evaluate(spark, *args, approvals=approvals, **kwargs)
        assert want.family("fidelity") is not None and want.gold_digest and want.pred_digest
        assert got.gold_source == str(args[0])
        assert_same(got, want)
        assert want.family("fidelity").unused_sources == (["inv-unused"] if form == "jsonl" else [])


def test_pages_equal_the_local_engine(spark: Any) -> None:
    args = (E / "papers/gold.jsonl", E / "papers/pred_complete.jsonl", E / "papers/config.toml")
    want = local_evaluate(*args)
    assert want.layouts  # pages with their layout scores
    assert_same(spark_evaluate(spark, *args), want)
    assert_same(
        spark_evaluate(spark, *args, profile="photocat"), local_evaluate(*args, profile="photocat")
    )


def test_inferred_quantities_equal_the_local_engine(spark: Any, tmp_path: Path) -> None:
    """Quantities inferred from all gold values (the receipts example), and a field whose gold
    values are partly measurements: found by the first pass, scored again on Spark too."""
    args = (E / "receipts/gold.jsonl", E / "receipts/pred.jsonl")
    want = local_evaluate(*args)
    assert want.inferred_types == {"fuel_volume": "quantity", "items[].amount": "quantity"}
    assert_same(spark_evaluate(spark, *args), want)
    gold, pred = tmp_path / "gold.jsonl", tmp_path / "pred.jsonl"
    gold.write_text('{"id": "a", "w": "1.2 kg"}\n{"id": "b", "w": "n/a"}\n', encoding="utf-8")
    pred.write_text('{"id": "a", "w": "1200 g"}\n{"id": "b", "w": "n/a"}\n', encoding="utf-8")
    want = local_evaluate(gold, pred)
    assert want.inferred_types == {} and want.fields["w"].errors == {"wrong_value": 1}
    assert_same(spark_evaluate(spark, gold, pred), want)


def test_structure_with_slices_equals_the_local_engine(spark: Any) -> None:
    gold = ROOT / "tests/golden/inputs/structure_gold.jsonl"
    pred = ROOT / "tests/golden/inputs/structure_pred.jsonl"
    slices = ("meta.layout", "scan")
    want = local_evaluate(gold, pred, slice_by=slices)
    assert want.family("structure") is not None and want.family("structure").slices
    assert_same(spark_evaluate(spark, gold, pred, slice_by=slices), want)


def _messy(tmp: Path, n: int) -> tuple[Path, Path]:
    """`n` synthetic invoices; predictions shuffled, with broken lines (recoverable id or not),
    unknown ids, missing predictions, blank lines, usage and a BOM."""
    gold, pred, _ = synth.make_dataset(n, seed=11)
    for i, g in enumerate(gold):
        g["batch"] = i % 3  # a slice attribute no prediction carries
    rng = random.Random(7)
    lines = [json.dumps(p) for p in pred]
    for i in rng.sample(range(n), n // 50):
        lines[i] = lines[i][: len(lines[i]) // 2]  # truncated: a parse failure of its id
    for i in rng.sample(range(n), n // 100):
        lines[i] = ""  # no prediction (a blank line)
    lines += ['{"broken": ', "[1, 2]", json.dumps({"id": "ghost-1", "total": 1})]
    lines += [json.dumps({"id": "ghost-2"}), json.dumps({"nope": 1}), "   "]
    rng.shuffle(lines)
    g, p = tmp / "gold.jsonl", tmp / "pred.jsonl"
    g.write_text("\ufeff" + "\n\n".join(json.dumps(d) for d in gold) + "\n", encoding="utf-8")
    p.write_text("\n".join(lines), encoding="utf-8")  # no final line end
    return g, p


def test_2000_messy_synthetic_documents_equal_the_local_engine(
    spark: Any, tmp_path: Path, reading: str
) -> None:
    gold, pred = _messy(tmp_path, 2000)
    want = local_evaluate(gold, pred, slice_by=("batch",))
    assert want.unknown_ids == ["ghost-1", "ghost-2"] and len(want.unattributed) == 3
    assert want.slice_metrics
    assert sum(d.status == "parse_failure" for d in want.documents) >= 30
    assert sum(d.status == "missing" for d in want.documents) >= 20
    assert want.intervals and len(want.documents) == 2000
    got = spark_evaluate(spark, str(gold), str(pred), slice_by=("batch",))
    assert_same(got, want)
    for kind in ("counts", "document_fields"):  # read from the counts shipped as bytes
        pd.testing.assert_frame_equal(report_frame(got, kind), report_frame(want, kind))


def test_dataframes_equal_the_local_engine(spark: Any, tmp_path: Path) -> None:
    """JSON lines from spark.read.text, and structured rows (to_json of every column)."""
    gold, pred = _messy(tmp_path, 300)
    want = local_evaluate(gold, pred)
    text = spark.read.option("lineSep", "\n").text
    got = spark_evaluate(spark, text(str(gold)), text(str(pred)))
    assert got.gold_source == got.pred_source == "<dataframe>"
    # the digest of the lines, each with a line end: the file's when it ends with one and has
    # no BOM (Hadoop's line reader drops it)
    bom = "\ufeff".encode()
    assert got.gold_digest == hashlib.sha256(gold.read_bytes().removeprefix(bom)).hexdigest()
    assert got.pred_digest == hashlib.sha256(pred.read_bytes() + b"\n").hexdigest()
    assert got.pred_digest != want.pred_digest
    # rows are named as in-memory rows ("row 7: ..."), else the same report
    g, w = got.to_dict(), want.to_dict()
    for d in (g, w):
        for key in ("gold", "predictions", "signature"):  # sources and digests
            d.pop(key)
    assert json.dumps(g).count('"row ') == json.dumps(w).count('"line ') > 5
    assert json.dumps(g) == json.dumps(w).replace('"line ', '"row ')
    assert got.intervals == want.intervals and _f1s(got) == _f1s(want)
    rows, _, _ = synth.make_dataset(50, seed=3, n_items=2)
    for r in rows:
        r["note"] = None  # a null column: an absent key
    local_rows = [{k: v for k, v in r.items() if v is not None} for r in rows]
    frame = spark.read.json(spark.sparkContext.parallelize([json.dumps(r) for r in rows]))
    assert "note" in frame.columns
    frame = frame.select(*sorted(frame.columns))  # structured columns, in another order
    want = local_evaluate(local_rows, [json.dumps(r) for r in local_rows])
    got = spark_evaluate(spark, frame, frame)
    assert got.micro == want.micro and got.micro.fp == 0
    assert _f1s(got) == _f1s(want)


def _error(call: Any) -> str:
    with pytest.raises(InputError) as info:
        call()
    return str(info.value)


@pytest.mark.parametrize(
    "lines",
    [
        ['{"id": "a", "x": 1}', "", '{"id": "b", "x": [1, }', '{"id": "a"}'],  # defect first
        ['{"id": "a", "x": 1}', '{"id": "b"}', "", '{"id": "a"}', "{oops"],  # repeat first
        ['{"id": "a"}', '{"x": 1}'],
        ['{"id": "a"}', '{"id": true}', '{"id": "a"}'],
        ['{"id": "a"}', "[1, 2]"],
        ['{"id": "a", "v": NaN}'],
        ["", "  "],
    ],
)
def test_gold_defects_give_the_local_error_text(
    spark: Any, tmp_path: Path, lines: list[str], reading: str
) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_text("\n".join(lines) + "\n", encoding="utf-8")
    pred = tmp_path / "pred.jsonl"
    pred.write_text('{"id": "a"}\n', encoding="utf-8")
    want = _error(lambda: local_evaluate(gold, pred))
    assert _error(lambda: spark_evaluate(spark, gold, pred)) == want
    assert want.startswith(str(gold))


def test_prediction_errors_give_the_local_error_text(
    spark: Any, tmp_path: Path, reading: str
) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"id": "a"}\n{"id": "b"}\n', encoding="utf-8")
    pred = tmp_path / "pred.jsonl"
    for text in [
        '{"id": "b"}\n{"id": "a"}\n{"id": "b", "x": 1}\n',
        '{"id": "a"}\n{"id": "a", \n',
        "\n",
    ]:
        pred.write_text(text, encoding="utf-8")
        want = _error(lambda: local_evaluate(gold, pred))
        assert _error(lambda: spark_evaluate(spark, gold, pred)) == want
    missing = tmp_path / "nope.jsonl"
    assert _error(lambda: spark_evaluate(spark, gold, missing)) == _error(
        lambda: local_evaluate(gold, missing)
    )
    # a repeated gold id comes before any defect of the prediction file
    gold.write_text('{"id": "a"}\n{"id": "b"}\n{"id": "a"}\n', encoding="utf-8")
    for text in ["", '{"id": "b"}\n{"id": "b"}\n']:
        pred.write_text(text, encoding="utf-8")
        for p in (pred, missing):
            want = _error(lambda: local_evaluate(gold, p))  # noqa: B023
            assert "duplicate id 'a'" in want
            assert _error(lambda: spark_evaluate(spark, gold, p)) == want  # noqa: B023


def _cli(
    *args: str, env: dict[str, str] | None = None, code: str = ""
) -> subprocess.CompletedProcess[str]:
    prog = f"import sys; {code}from extract_mlflow.cli import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", prog, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_cli_engine_spark_gives_the_local_json(tmp_path: Path) -> None:
    require_spark()
    gold, pred = str(E / "invoices/gold.jsonl"), str(E / "invoices/pred_baseline.jsonl")
    common = ["score", gold, pred, "--config", str(E / "invoices/config.toml"), "--no-log"]
    common += ["--sources", str(E / "invoices/sources"), "--format", "json", "--min-f1", "0.5"]
    local = _cli(*common, "--out", str(tmp_path / "local.json"))
    # started from outside the environment: its bin not on PATH, no PYSPARK_PYTHON (Spark's
    # workers would otherwise run the first python3 on PATH, which lacks this package)
    here = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != here)
    spark = _cli(
        *common,
        "--engine",
        "spark",
        "--spark-master",
        "local[2]",
        "--out",
        str(tmp_path / "spark.json"),
        env=env,
    )
    assert local.returncode == 0, local.stderr
    assert spark.returncode == 0, spark.stderr
    assert (tmp_path / "spark.json").read_text() == (tmp_path / "local.json").read_text()
    # the JVM's start-up log is quiet (only errors); the JVM launcher's own notice may remain
    noise = [line for line in spark.stderr.splitlines() if _jvm_log_line(line)]
    assert noise == [], noise


def _jvm_log_line(line: str) -> bool:
    """A line of Spark's or log4j's start-up log (not one of ours, not the JVM launcher's)."""
    return any(
        mark in line
        for mark in ("log4j", "Setting default log level", "setLogLevel", " WARN ", " INFO ")
    )


def test_cli_engine_spark_without_pyspark_says_how_to_install() -> None:
    gold, pred = str(E / "invoices/gold.jsonl"), str(E / "invoices/pred_baseline.jsonl")
    out = _cli(
        "score", gold, pred, "--no-log", "--engine", "spark", code="sys.modules['pyspark'] = None; "
    )
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "error: the Spark engine needs pyspark: pip install 'extract-mlflow[spark]'"
    ]


def test_cli_engine_spark_without_java_says_so() -> None:
    pytest.importorskip("pyspark", reason="pyspark is not installed")
    gold, pred = str(E / "invoices/gold.jsonl"), str(E / "invoices/pred_baseline.jsonl")
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(Path(sys.executable).parent)  # the venv's tools, no java
    out = _cli("score", gold, pred, "--no-log", "--engine", "spark", env=env)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: the Spark engine needs Java"), lines


def test_cli_engine_local_is_the_default() -> None:
    from extract_mlflow.cli import score

    engine = next(p for p in score.params if p.name == "engine")
    assert engine.default == "local"


def test_text_accuracy_equals_the_local_engine(spark: Any, tmp_path: Path) -> None:
    """A metric family (CER/WER) rides on the engine: Spark gives the local report."""
    gold = ROOT / "tests/golden/inputs/structure_gold.jsonl"
    pred = ROOT / "tests/golden/inputs/structure_pred.jsonl"
    config = tmp_path / "config.toml"
    config.write_text("[text_accuracy]\nregions = true\n", encoding="utf-8")
    want = local_evaluate(gold, pred, config, slice_by=("scan",))
    assert "cer" in want.metrics() and "cer_by_scan/0.9" in want.metrics()
    assert_same(spark_evaluate(spark, gold, pred, config, slice_by=("scan",)), want)


def test_ranges_are_two_per_core_of_the_larger_file_between_4_and_8_mib(tmp_path: Path) -> None:
    """The tasks' byte ranges on a local master (a Spark job costs a tenth of a second or more:
    fewer, larger ranges than the workers', as long as each core gets two), at most what the
    cutter cuts (larger, it would make the whole file one range)."""
    from extract_mlflow.evaluation.workers import RANGE_BYTES
    from extract_mlflow.io.ranges import Cutter
    from extract_mlflow.spark.ranges import MAX_RANGE_BYTES, range_bytes

    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    small.write_bytes(b'{"id": "a"}\n')
    line = b'{"id": "x"}' + b" " * 1000 + b"\n"
    big.write_bytes(line * (24 << 10))  # ~24 MiB
    assert range_bytes(small, small, 2) == RANGE_BYTES == 4 << 20
    assert range_bytes(small, big, 2) == -(-big.stat().st_size // 4)
    assert range_bytes(big, small, 1) == MAX_RANGE_BYTES == 8 << 20
    assert len(list(Cutter(big, range_bytes(big, small, 1)))) == 3
