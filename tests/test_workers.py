"""`--workers N`: batches scored in worker processes and merged give the report of one
process, field by field (JSON text, metrics, intervals, counts frame, documents), and the same
error for defective files. While the files are in lockstep the workers parse raw line pairs;
from the first batch out of step this process joins: the tests check both the parity and
where the hand-over happened (the debug log of the workers module)."""

from __future__ import annotations

import json
import logging
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_compact import assert_compact_same
from test_stream import file_pairs, write

from extract_mlflow.config import Config, load_config
from extract_mlflow.core.runtime import usable_cores
from extract_mlflow.errors import ConfigError, ExtractMlflowError
from extract_mlflow.evaluation.accumulator import Extras
from extract_mlflow.evaluation.evaluate import evaluate, score_files
from extract_mlflow.io.lines import MAX_LINE_BYTES
from extract_mlflow.io.sources import load_sources
from extract_mlflow.report import Report

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(ROOT / "benchmarks"))

from synth import make_dataset, write_dataset  # noqa: E402


def assert_workers_same(got: Report, want: Report) -> None:
    assert_compact_same(got, want)
    assert got.intervals == want.intervals


@pytest.mark.parametrize(
    ("example", "pred", "with_sources"),
    [("invoices", "pred_baseline.jsonl", True), ("papers", "pred_complete.jsonl", False)],
)
def test_examples_in_workers_equal_one_process(example: str, pred: str, with_sources: bool) -> None:
    folder = EXAMPLES / example
    kwargs = {"sources": folder / "sources"} if with_sources else {}
    args = (folder / "gold.jsonl", folder / pred, folder / "config.toml")
    want = evaluate(*args, **kwargs)  # type: ignore[arg-type]
    extras = Extras(sources=load_sources(folder / "sources") if with_sources else None)
    config = load_config(folder / "config.toml")
    got = score_files(args[0], args[1], config, extras=extras, workers=2, batch_size=2)
    assert len(want.documents) > 4
    if with_sources:
        assert want.fidelity is not None and got.fidelity == want.fidelity
    assert_workers_same(got, want)


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """~3,000 synthetic documents, predictions in another order (the joined stream seeks)."""
    gold_rows, pred_rows, _ = make_dataset(3000, 13)
    random.Random(13).shuffle(pred_rows)
    paths: tuple[Path, Path] = write_dataset(gold_rows, pred_rows, tmp_path_factory.mktemp("w"))
    return paths


@pytest.mark.slow
def test_synthetic_in_workers_equal_one_process(synthetic: tuple[Path, Path]) -> None:
    gold, pred = synthetic
    want = evaluate(gold, pred)
    assert len(want.documents) == 3000 and want.intervals
    assert_workers_same(evaluate(gold, pred, workers=2), want)
    assert_workers_same(evaluate(gold, pred, workers=0), want)


def _score(*args: object) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "extract_mlflow", "score", *map(str, args), "--no-log"]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.slow
def test_cli_json_is_byte_identical(synthetic: tuple[Path, Path]) -> None:
    gold, pred = synthetic
    one = _score(gold, pred, "--format", "json")
    two = _score(gold, pred, "--format", "json", "--workers", "2")
    assert one.returncode == two.returncode == 0, two.stderr
    assert json.loads(one.stdout)["documents"] == 3000
    assert two.stdout == one.stdout


def test_bad_workers_value(synthetic: tuple[Path, Path]) -> None:
    gold, pred = synthetic
    bad = _score(gold, pred, "--workers", "-1")
    assert bad.returncode == 2
    assert bad.stdout == ""
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "workers" in lines[0]
    with pytest.raises(ConfigError, match="workers"):
        evaluate(gold, pred, workers=-2)


def test_a_defect_of_the_files_is_the_same_error(tmp_path: Path) -> None:
    """A duplicate gold id found mid-stream stops the pass with one process's error."""
    gold_rows, pred_rows, _ = make_dataset(40, 5)
    gold_rows.append(dict(gold_rows[3]))
    gold, pred = write_dataset(gold_rows, pred_rows, tmp_path)
    with pytest.raises(Exception) as one:
        evaluate(gold, pred)
    with pytest.raises(type(one.value)) as two:
        evaluate(gold, pred, workers=2)
    assert str(two.value) == str(one.value)


def test_workers_are_for_the_local_engine(synthetic: tuple[Path, Path]) -> None:
    gold, pred = synthetic
    bad = _score(gold, pred, "--engine", "spark", "--workers", "2")
    assert bad.returncode == 2
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --workers is for --engine local")


# -- raw line pairs parsed by the workers, and the hand-over to this process -------------------


def line(doc_id: str | int, value: int) -> str:
    items = [{"sku": f"s{value}", "qty": value}, {"sku": "k", "qty": 1}]
    return json.dumps({"id": doc_id, "total": value, "items": items}) + "\n"


def golds(n: int) -> list[str]:
    return [line(f"d{i}", i % 3) for i in range(n)]


def preds(n: int) -> list[str]:
    return [line(f"d{i}", i % 2) for i in range(n)]


Outcome = tuple[str, Any]


def outcome(run: Callable[[], Report]) -> tuple[Outcome, Report | None]:
    try:
        report = run()
    except ExtractMlflowError as exc:
        return (type(exc).__name__, str(exc)), None
    return ("ok", json.dumps(report.to_dict(), ensure_ascii=False, indent=2, default=str)), report


_HANDOVER = re.compile(r"^(\d+) documents parsed by the workers in lockstep")


def parity(
    tmp_path: Path,
    gold_lines: list[str],
    pred_lines: list[str],
    batch: int,
    caplog: pytest.LogCaptureFixture | None = None,
    *,
    gold_bom: bool = False,
    pred_bom: bool = False,
) -> tuple[Outcome, int | None]:
    """The outcome of one process and of two workers on the same files (asserted equal), and
    how many documents the workers joined from raw pairs (None: not logged)."""
    gold = write(tmp_path / "gold.jsonl", gold_lines, gold_bom)
    pred = write(tmp_path / "pred.jsonl", pred_lines, pred_bom)
    one, want = outcome(lambda: evaluate(gold, pred))
    if caplog is not None:
        caplog.clear()
    with caplog.at_level(logging.DEBUG, "extract_mlflow.evaluation.workers") if caplog else _no():
        two, got = outcome(lambda: score_files(gold, pred, Config(), workers=2, batch_size=batch))
    assert two == one
    if want is not None:
        assert got is not None
        assert_workers_same(got, want)
    raw = None
    if caplog is not None:
        found = [m for r in caplog.records if (m := _HANDOVER.match(r.getMessage()))]
        raw = int(found[-1].group(1)) if found else None
    return one, raw


class _no:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *_: object) -> None:
        return None


def test_lockstep_files_are_parsed_by_the_workers(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    result, raw = parity(tmp_path, golds(51), preds(51), 2, caplog)
    assert result[0] == "ok" and json.loads(result[1])["documents"] == 51
    assert raw == 51  # every document, in 26 parts (merged in groups), the last one short


def test_boms_stay_in_step_and_blank_lines_go_to_the_stream(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The workers get runs of plain lines: a batch with a blank line (or one of only spaces)
    is joined here, from its start, as one pass would join it."""
    gold, pred = golds(9), [*preds(9)[:-1], preds(9)[-1].rstrip("\n")]  # no last line end
    result, raw = parity(tmp_path, gold, pred, 2, caplog, gold_bom=True, pred_bom=True)
    assert result[0] == "ok" and raw == 9
    gold.insert(6, "\n")
    pred[2:2] = ["   \n", "\n"]
    pred.append("\n")
    result, raw = parity(tmp_path, gold, pred, 2, caplog, gold_bom=True, pred_bom=True)
    assert result[0] == "ok" and raw == 2
    result, raw = parity(tmp_path, gold, preds(9), 2, caplog)
    assert result[0] == "ok" and raw == 6


@pytest.mark.parametrize(
    ("at", "batch", "raw"),
    [(1, 4, 0), (5, 4, 4), (9, 4, 8), (9, 3, 9)],
    ids=["first-batch", "middle-batch", "last-line", "last-line-own-batch"],
)
def test_files_out_of_step(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, at: int, batch: int, raw: int
) -> None:
    """Prediction line `at` carries another id: the batch holding it is joined here."""
    pred = preds(10)
    pred[at] = line("other", 1)
    result, got = parity(tmp_path, golds(10), pred, batch, caplog)
    assert result[0] == "ok" and "other" in json.loads(result[1])["unknown_ids"]
    assert got == raw


def test_swapped_lines(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    pred = preds(10)
    pred[4], pred[5] = pred[5], pred[4]
    result, raw = parity(tmp_path, golds(10), pred, 2, caplog)
    assert result[0] == "ok" and raw == 4


def test_extra_prediction_lines(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    pred = [*preds(10), line("x1", 1), "not json\n", line("x2", 2)]
    result, raw = parity(tmp_path, golds(10), pred, 3, caplog)
    report = json.loads(result[1])
    assert report["unknown_ids"] == ["x1", "x2"] and len(report["unattributed_lines"]) == 1
    assert raw == 10


def test_missing_prediction_lines(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    result, raw = parity(tmp_path, golds(10), preds(7), 3, caplog)
    assert result[0] == "ok" and raw == 6  # the batch the prediction file ends in: joined here


@pytest.mark.parametrize(
    ("broken", "raw"),
    [('{"id": "d4", "total": \n', 10), ("not json at all\n", 3)],
    ids=["id-recovered", "no-id"],
)
def test_invalid_prediction_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, broken: str, raw: int
) -> None:
    """A line that does not parse is in step when its recovered id is the gold id."""
    pred = preds(10)
    pred[4] = broken
    result, got = parity(tmp_path, golds(10), pred, 3, caplog)
    assert result[0] == "ok" and got == raw
    report = json.loads(result[1])
    assert report["parse_failure_rate"] == pytest.approx(0.1)
    assert len(report["unattributed_lines"]) == (raw < 10)


def test_gold_syntax_error_in_a_later_batch(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    gold = golds(10)
    gold[7] = '{"id": "d7", "total": \n'
    result, raw = parity(tmp_path, gold, preds(10), 3, caplog)
    assert result[0] == "InputError" and ":8: invalid JSON" in result[1]
    assert raw == 6


def test_gold_error_after_a_prediction_defect(tmp_path: Path) -> None:
    """The gold file's defect wins over the prediction file's, wherever each is."""
    gold = golds(10)
    gold[8] = "[1]\n"
    pred = preds(10)
    pred[2] = "garbage\n"
    result, _ = parity(tmp_path, gold, pred, 3)
    assert result[0] == "InputError" and ":9: not a JSON object" in result[1]
    utf16 = tmp_path / "u"
    utf16.mkdir()
    (utf16 / "pred.jsonl").write_bytes(b"\xff\xfe" + "".join(preds(10)).encode("utf-16-le"))
    (utf16 / "gold.jsonl").write_text("".join(gold))
    one, _ = outcome(lambda: evaluate(utf16 / "gold.jsonl", utf16 / "pred.jsonl"))
    two, _ = outcome(
        lambda: score_files(
            utf16 / "gold.jsonl", utf16 / "pred.jsonl", Config(), workers=2, batch_size=3
        )
    )
    assert two == one and ":9: not a JSON object" in one[1]


def test_duplicate_gold_ids_across_batches(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    gold, pred = golds(10), preds(10)
    gold[8], pred[8] = line("d1", 2), line("d1", 2)  # in step, the repeat in a later batch
    result, raw = parity(tmp_path, gold, pred, 3, caplog)
    assert result == (
        "InputError",
        f"{tmp_path / 'gold.jsonl'}:9: duplicate id 'd1' (first on line 2)",
    )
    assert raw == 10


def test_duplicate_prediction_id_after_lockstep(tmp_path: Path) -> None:
    pred = [*preds(10), line("d3", 1)]
    result, _ = parity(tmp_path, golds(10), pred, 4)
    assert result[0] == "InputError" and "duplicate prediction id 'd3'" in result[1]


def test_empty_and_absent_files(tmp_path: Path) -> None:
    assert parity(tmp_path, golds(4), [], 2)[0][0] == "InputError"
    assert parity(tmp_path, [], preds(4), 2)[0][0] == "InputError"
    assert parity(tmp_path, ["\n"], ["\n"], 2)[0][0] == "InputError"


def test_oversized_lines(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A line over the limit is a parse failure of the id at its head; the batch holding it is
    joined here (the workers get runs of plain lines)."""
    pred = preds(6)
    pred[3] = '{"id": "d3", "note": "' + "x" * (MAX_LINE_BYTES + 10) + '"}\n'
    result, raw = parity(tmp_path, golds(6), pred, 2, caplog)
    assert result[0] == "ok" and raw == 2
    assert "over the 16 MiB limit" in result[1]
    gold = golds(6)
    gold[4] = pred[3].replace('"d3"', '"d4"')  # a gold line over the limit: the gold error
    result, raw = parity(tmp_path, gold, preds(6), 2, caplog)
    assert result[0] == "InputError" and ":5: line is " in result[1] and raw == 4


@pytest.mark.slow
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pair=file_pairs(), batch=st.integers(1, 4))
def test_random_file_pairs_in_workers(tmp_path: Path, pair: Any, batch: int) -> None:
    """Random gold and prediction files (gaps, repeats, extra, broken and blank lines, BOMs,
    gold defects): two workers with small batches give one process's report or error."""
    gold_lines, pred_lines, gold_bom, pred_bom = pair
    parity(tmp_path, gold_lines, pred_lines, batch, gold_bom=gold_bom, pred_bom=pred_bom)


def _cli_pair(tmp_path: Path, gold: list[str], pred: list[str]) -> tuple[Any, Any]:
    g = write(tmp_path / "gold.jsonl", gold)
    p = write(tmp_path / "pred.jsonl", pred)
    return _score(g, p, "--format", "json"), _score(g, p, "--format", "json", "--workers", "2")


@pytest.mark.slow
def test_cli_out_of_step_in_a_middle_batch_and_errors(tmp_path: Path) -> None:
    """The CLI with its own batch size (1,000): 2,500 documents out of step at 1,500, then a
    gold syntax error at 2,200: the same JSON, then the same one line and exit 2."""
    gold, pred = golds(2500), preds(2500)
    pred[1500], pred[1501] = pred[1501], pred[1500]
    one, two = _cli_pair(tmp_path, gold, pred)
    assert one.returncode == two.returncode == 0, two.stderr
    assert two.stdout == one.stdout and json.loads(one.stdout)["documents"] == 2500
    gold[2200] = '{"id": \n'
    one, two = _cli_pair(tmp_path, gold, pred)
    assert one.returncode == two.returncode == 2
    assert two.stderr == one.stderr and one.stderr.startswith("error:")
    assert two.stdout == one.stdout == ""


def _start_method_in_a_fresh_process(with_thread: bool) -> str:
    code = (
        "import threading\n"
        "from extract_mlflow.evaluation.workers import start_method\n"
        + (
            "threading.Thread(target=threading.Event().wait, daemon=True).start()\n"
            if with_thread
            else ""
        )
        + "print(start_method())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.mark.skipif(sys.platform != "linux", reason="workers are forked on Linux only")
def test_workers_are_forked_only_while_no_other_thread_runs() -> None:
    assert _start_method_in_a_fresh_process(with_thread=False) == "fork"
    assert _start_method_in_a_fresh_process(with_thread=True) == "spawn"


def test_spawned_workers_equal_one_process(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """With another thread running the workers are spawned (a fresh interpreter each): the
    same outcome as one process, for files in step and for files out of step."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait, daemon=True)
    thread.start()
    try:
        with caplog.at_level(logging.DEBUG, "extract_mlflow.evaluation.workers"):
            in_step, raw = parity(tmp_path / "a", golds(9), preds(9), 2, caplog)
            out_of_step, _ = parity(tmp_path / "b", golds(9), preds(9)[::-1], 2)
        assert in_step[0] == out_of_step[0] == "ok" and raw == 9
        assert "starting 2 worker processes (spawn)" in caplog.messages
    finally:
        stop.set()
        thread.join()


@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("in_step", [True, False])
def test_structure_fields_in_the_last_gold_document(
    tmp_path: Path, workers: int, in_step: bool
) -> None:
    """Structure fields only in the last gold document: the pass needs no guess nor a second
    pass (the config names the structure keys), and gives the report of the loaded rows: in
    one process, with workers in lockstep and out of step."""
    table_doc = (EXAMPLES / "tables" / "gold.jsonl").read_text().splitlines()[0] + "\n"
    preds_ = [*preds(30), table_doc]
    gold = write(tmp_path / "gold.jsonl", [*golds(30), table_doc])
    pred = write(tmp_path / "pred.jsonl", preds_ if in_step else preds_[::-1])
    want = score_files(gold, pred, Config())
    assert want.family("structure") is not None
    assert_compact_same(want, evaluate(gold, pred, stream=False))
    got = score_files(gold, pred, Config(), workers=workers, batch_size=4)
    assert got.to_dict() == want.to_dict()


def test_a_config_error_comes_after_the_files_defect(tmp_path: Path) -> None:
    """An unknown layout profile, with workers: a defect of the files is still reported first."""
    gold = write(tmp_path / "gold.jsonl", [*golds(5), "[1]\n"])
    pred = write(tmp_path / "pred.jsonl", preds(5))
    for workers in (1, 2):
        with pytest.raises(ExtractMlflowError, match=":6: not a JSON object"):
            score_files(gold, pred, Config(), profile="nope", workers=workers)
    write(tmp_path / "gold.jsonl", golds(5))
    with pytest.raises(ConfigError, match="unknown layout profile"):
        score_files(gold, pred, Config(), profile="nope", workers=2)


def test_a_file_changed_while_the_workers_read_it_is_an_error(
    synthetic: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workers read their runs from the files after this process hashed them: a file
    whose identity (inode, size, modification time) differs once they are done fails the
    pass with a clear error instead of a report whose digest is not of the bytes scored."""
    from extract_mlflow.errors import InputError
    from extract_mlflow.evaluation import workers as workers_module

    gold, pred = synthetic
    from extract_mlflow.io.lockstep import file_identity as real

    calls: list[Path] = []

    def moved(path: Path) -> Any:
        calls.append(path)
        found = real(path)
        return found if len(calls) <= 2 or path != pred else (0, 0, 0, 0)

    monkeypatch.setattr(workers_module, "file_identity", moved)
    with pytest.raises(InputError, match="changed while it was being scored"):
        score_files(gold, pred, Config(), workers=2, batch_size=100)
    assert calls[:2] == [gold, pred]


# -- how many workers, and that they end with the process that started them ------------------


def _started(caplog: pytest.LogCaptureFixture) -> list[int]:
    found = (re.match(r"starting (\d+) worker processes", r.getMessage()) for r in caplog.records)
    return [int(m.group(1)) for m in found if m]


@pytest.mark.parametrize(("docs", "batches"), [(3, 1), (9, 3)])
def test_workers_are_capped_at_the_cores_and_the_batches(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, docs: int, batches: int
) -> None:
    gold = write(tmp_path / "gold.jsonl", golds(docs))
    pred = write(tmp_path / "pred.jsonl", preds(docs))
    want = evaluate(gold, pred)
    with caplog.at_level(logging.DEBUG, "extract_mlflow.evaluation.workers"):
        got = score_files(gold, pred, Config(), workers=100_000, batch_size=3)
    assert _started(caplog) == [min(usable_cores(), batches)]
    assert_workers_same(got, want)


def test_cli_says_when_workers_are_capped(tmp_path: Path) -> None:
    gold = write(tmp_path / "gold.jsonl", golds(5))
    pred = write(tmp_path / "pred.jsonl", preds(5))
    many = _score(gold, pred, "--format", "json", "--workers", "100000")
    one = _score(gold, pred, "--format", "json")
    assert many.returncode == one.returncode == 0, many.stderr
    assert many.stdout == one.stdout
    (warning,) = many.stderr.splitlines()
    assert (
        warning.startswith("warning: --workers 100000:") and f"at most {usable_cores()}" in warning
    )


def _children(pid: int) -> list[int]:
    """The live processes whose parent is `pid` (zombies, dead already, left out)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        if int(fields[1]) == pid and fields[0] != "Z":
            out.append(int(stat.parent.name))
    return out


def _alive(pids: list[int]) -> list[int]:
    live = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            live.append(pid)
    return live


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="the workers' parent-death signal is Linux's")
def test_a_killed_score_leaves_no_worker_behind(tmp_path: Path) -> None:
    """SIGKILL of a real `score --workers 2` mid-run: its workers end within seconds (they
    would otherwise run on, or block for ever writing into a pipe nobody reads)."""
    gold, pred = write_dataset(*make_dataset(20_000, 3)[:2], tmp_path)
    command = [sys.executable, "-m", "extract_mlflow", "score", str(gold), str(pred)]
    proc = subprocess.Popen(
        [*command, "--no-log", "--workers", "2", "--out", str(tmp_path / "report.txt")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers: list[int] = []
    try:
        workers = _until(lambda: _children(proc.pid) if len(_children(proc.pid)) == 2 else None)
        assert proc.poll() is None, "the run ended before it could be killed: use a bigger set"
        proc.kill()
        proc.wait(timeout=10)
        assert _until(lambda: not _alive(workers) or None), f"workers left: {_alive(workers)}"
    finally:
        proc.kill()
        for pid in _alive(workers or []):  # a failed run leaves none behind either
            os.kill(pid, signal.SIGKILL)
    assert not (tmp_path / "report.txt").exists()


def _until(probe: Callable[[], Any], timeout: float = 20.0) -> Any:
    """`probe()`'s first truthy value, polled for up to `timeout` seconds (None if none)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.05)
    return None


def test_workers_on_inputs_that_do_not_stream_say_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Rows (and stream=False) are scored in this process whatever `workers` asks: one warning
    line says so, and the report is the one of one process. Two files stream: no warning."""
    gold_rows, pred_rows, _ = make_dataset(12, 3)
    want = evaluate(gold_rows, pred_rows).to_dict()
    gold, pred = write_dataset(gold_rows, pred_rows, tmp_path)
    with caplog.at_level(logging.WARNING, "extract_mlflow.evaluation.evaluate"):
        assert evaluate(gold_rows, pred_rows, workers=2).to_dict() == want
        loaded = evaluate(gold, pred, stream=False).to_dict()
        assert evaluate(gold, pred, workers=2, stream=False).to_dict() == loaded
        said = [r.getMessage() for r in caplog.records]
        assert (
            said
            == [
                "workers=2: inputs that are not two JSONL files (rows, loaded sets, a pipe, a "
                "--source-key or stream=False) are scored in this process"
            ]
            * 2
        )
        caplog.clear()
        evaluate(gold, pred, workers=2)
        assert not caplog.records
