"""`--workers N`: the files read in byte ranges by worker processes, scored and merged, give
the report of one process, field by field (JSON text, metrics, intervals, counts frame,
documents), and the same error for defective files, wherever the ranges are cut (the tests cut
tiny ranges: one line each, or a few)."""

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
from support.compact import assert_compact_same
from support.stream import file_pairs, write

from extract_mlflow.config import Config
from extract_mlflow.config_file import load_config
from extract_mlflow.core.runtime import usable_cores
from extract_mlflow.errors import ConfigError, ExtractMlflowError
from extract_mlflow.evaluation.accumulator import Extras
from extract_mlflow.evaluation.evaluate import evaluate, score_files
from extract_mlflow.io.lines import MAX_LINE_BYTES
from extract_mlflow.io.sources import load_sources
from extract_mlflow.report import Report

ROOT = Path(__file__).resolve().parents[2]
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
    got = score_files(args[0], args[1], config, extras=extras, workers=2, range_bytes=2)
    assert len(want.documents) > 4
    if with_sources:
        assert want.family("fidelity") is not None and got.family("fidelity") == want.family(
            "fidelity"
        )
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


@pytest.mark.slow
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


# -- files in and out of gold order, with defects, in ranges of a few lines ---------------------


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


def parity(
    tmp_path: Path,
    gold_lines: list[str],
    pred_lines: list[str],
    size: int,
    *,
    gold_bom: bool = False,
    pred_bom: bool = False,
) -> Outcome:
    """The outcome of one process and of two workers reading ranges of at least `size` bytes
    of the same files (asserted equal)."""
    gold = write(tmp_path / "gold.jsonl", gold_lines, gold_bom)
    pred = write(tmp_path / "pred.jsonl", pred_lines, pred_bom)
    one, want = outcome(lambda: evaluate(gold, pred))
    two, got = outcome(lambda: score_files(gold, pred, Config(), workers=2, range_bytes=size))
    assert two == one
    if want is not None:
        assert got is not None
        assert_workers_same(got, want)
    return one


def test_files_in_gold_order(tmp_path: Path) -> None:
    result = parity(tmp_path, golds(51), preds(51), 2)
    assert result[0] == "ok" and json.loads(result[1])["documents"] == 51


@pytest.mark.slow
def test_boms_and_blank_lines(tmp_path: Path) -> None:
    """Byte order marks, a last line without a line end, blank lines (or lines of spaces)
    wherever the ranges are cut: the documents' positions and line numbers are one pass's."""
    gold, pred = golds(9), [*preds(9)[:-1], preds(9)[-1].rstrip("\n")]  # no last line end
    for size in (1, 2, 150, 400, 10_000):
        result = parity(tmp_path, gold, pred, size, gold_bom=True, pred_bom=True)
        assert result[0] == "ok"
    gold.insert(6, "\n")
    gold.insert(0, " \n")
    pred[2:2] = ["   \n", "\n"]
    pred.append("\n")
    for size in (1, 2, 150, 400, 10_000):
        assert parity(tmp_path, gold, pred, size, gold_bom=True, pred_bom=True)[0] == "ok"
        assert parity(tmp_path, gold, preds(9), size)[0] == "ok"


@pytest.mark.parametrize("at", [0, 1, 5, 9])
@pytest.mark.parametrize("size", [1, 300])
def test_files_out_of_step(tmp_path: Path, at: int, size: int) -> None:
    """Prediction line `at` carries another id."""
    pred = preds(10)
    pred[at] = line("other", 1)
    result = parity(tmp_path, golds(10), pred, size)
    assert result[0] == "ok" and "other" in json.loads(result[1])["unknown_ids"]


def test_swapped_and_reversed_lines(tmp_path: Path) -> None:
    pred = preds(10)
    pred[4], pred[5] = pred[5], pred[4]
    assert parity(tmp_path, golds(10), pred, 2)[0] == "ok"
    assert parity(tmp_path, golds(10), preds(10)[::-1], 300)[0] == "ok"


def test_extra_prediction_lines(tmp_path: Path) -> None:
    pred = [*preds(10), line("x1", 1), "not json\n", line("x2", 2)]
    result = parity(tmp_path, golds(10), pred, 3)
    report = json.loads(result[1])
    assert report["unknown_ids"] == ["x1", "x2"] and len(report["unattributed_lines"]) == 1


def test_many_unattributed_lines(tmp_path: Path) -> None:
    """More unattributed lines than are kept, over several ranges: the first ones kept, all
    counted."""
    pred = [*preds(10), *(f"garbage {k}\n" for k in range(1500))]
    result = parity(tmp_path, golds(10), pred, 2000)
    report = json.loads(result[1])
    assert report["unattributed_lines"][0].startswith("line 11:")


def test_missing_prediction_lines(tmp_path: Path) -> None:
    assert parity(tmp_path, golds(10), preds(7), 3)[0] == "ok"


@pytest.mark.parametrize(
    ("broken", "attributed"),
    [('{"id": "d4", "total": \n', True), ("not json at all\n", False)],
    ids=["id-recovered", "no-id"],
)
def test_invalid_prediction_line(tmp_path: Path, broken: str, attributed: bool) -> None:
    """A line that does not parse is a parse failure of the id recovered from its text."""
    pred = preds(10)
    pred[4] = broken
    result = parity(tmp_path, golds(10), pred, 3)
    assert result[0] == "ok"
    report = json.loads(result[1])
    assert report["parse_failure_rate"] == pytest.approx(0.1)
    assert len(report["unattributed_lines"]) == (not attributed)


def test_gold_syntax_error_in_a_later_range(tmp_path: Path) -> None:
    gold = golds(10)
    gold[7] = '{"id": "d7", "total": \n'
    result = parity(tmp_path, gold, preds(10), 3)
    assert result[0] == "InputError" and ":8: invalid JSON" in result[1]


def test_gold_error_after_a_prediction_defect(tmp_path: Path) -> None:
    """The gold file's defect wins over the prediction file's, wherever each is."""
    gold = golds(10)
    gold[8] = "[1]\n"
    pred = preds(10)
    pred[2] = "garbage\n"
    result = parity(tmp_path, gold, pred, 3)
    assert result[0] == "InputError" and ":9: not a JSON object" in result[1]
    utf16 = tmp_path / "u"
    utf16.mkdir()
    (utf16 / "pred.jsonl").write_bytes(b"\xff\xfe" + "".join(preds(10)).encode("utf-16-le"))
    (utf16 / "gold.jsonl").write_text("".join(gold))
    one, _ = outcome(lambda: evaluate(utf16 / "gold.jsonl", utf16 / "pred.jsonl"))
    two, _ = outcome(
        lambda: score_files(
            utf16 / "gold.jsonl", utf16 / "pred.jsonl", Config(), workers=2, range_bytes=3
        )
    )
    assert two == one and ":9: not a JSON object" in one[1]
    (utf16 / "gold.jsonl").write_text("".join(golds(10)))
    one, _ = outcome(lambda: evaluate(utf16 / "gold.jsonl", utf16 / "pred.jsonl"))
    two, _ = outcome(
        lambda: score_files(
            utf16 / "gold.jsonl", utf16 / "pred.jsonl", Config(), workers=2, range_bytes=3
        )
    )
    assert two == one and "UTF-16" in one[1]


def test_duplicate_gold_ids_across_ranges(tmp_path: Path) -> None:
    gold, pred = golds(10), preds(10)
    gold[8], pred[8] = line("d1", 2), line("d1", 2)  # in step, the repeat in a later range
    result = parity(tmp_path, gold, pred, 3)
    assert result == (
        "InputError",
        f"{tmp_path / 'gold.jsonl'}:9: duplicate id 'd1' (first on line 2)",
    )
    gold[9] = "[1]\n"  # a later defect: the repeat before it is the error
    assert parity(tmp_path, gold, pred, 3) == result


def test_duplicate_prediction_ids(tmp_path: Path) -> None:
    pred = [*preds(10), line("d3", 1)]
    result = parity(tmp_path, golds(10), pred, 4)
    assert result[0] == "InputError" and "duplicate prediction id 'd3'" in result[1]
    pred = [line("d3", 1), *preds(10)]
    result = parity(tmp_path, golds(10), pred, 4)
    assert result[0] == "InputError" and ":5: duplicate prediction id 'd3'" in result[1]


def test_empty_and_absent_files(tmp_path: Path) -> None:
    assert parity(tmp_path, golds(4), [], 2)[0] == "InputError"
    assert parity(tmp_path, [], preds(4), 2)[0] == "InputError"
    assert parity(tmp_path, ["\n"], ["\n"], 2)[0] == "InputError"
    assert parity(tmp_path, ["\n"], preds(4), 2)[0] == "InputError"
    gold = write(tmp_path / "gold.jsonl", golds(4))
    for g, p in ((gold, tmp_path / "none.jsonl"), (tmp_path / "none.jsonl", gold)):
        one, _ = outcome(lambda: evaluate(g, p))  # noqa: B023 (called at once)
        two, _ = outcome(lambda: score_files(g, p, Config(), workers=2))  # noqa: B023
        assert two == one and one[0] == "InputError"


@pytest.mark.slow
def test_oversized_lines(tmp_path: Path) -> None:
    """A prediction line over the limit is a parse failure of the id at its head (the rest of
    the file is then one range); a gold line over the limit is the gold file's error."""
    pred = preds(6)
    pred[3] = '{"id": "d3", "note": "' + "x" * (MAX_LINE_BYTES + 10) + '"}\n'
    result = parity(tmp_path, golds(6), pred, 2)
    assert result[0] == "ok"
    assert "over the 16 MiB limit" in result[1]
    gold = golds(6)
    gold[4] = pred[3].replace('"d3"', '"d4"')  # a gold line over the limit: the gold error
    result = parity(tmp_path, gold, preds(6), 2)
    assert result[0] == "InputError" and ":5: line is " in result[1]


@pytest.mark.slow
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pair=file_pairs(), size=st.integers(1, 400))
def test_random_file_pairs_in_workers(tmp_path: Path, pair: Any, size: int) -> None:
    """Random gold and prediction files (gaps, repeats, extra, broken and blank lines, BOMs,
    gold defects): two workers reading ranges cut anywhere give one process's report or
    error."""
    gold_lines, pred_lines, gold_bom, pred_bom = pair
    parity(tmp_path, gold_lines, pred_lines, size, gold_bom=gold_bom, pred_bom=pred_bom)


def _cli_pair(tmp_path: Path, gold: list[str], pred: list[str]) -> tuple[Any, Any]:
    g = write(tmp_path / "gold.jsonl", gold)
    p = write(tmp_path / "pred.jsonl", pred)
    return _score(g, p, "--format", "json"), _score(g, p, "--format", "json", "--workers", "2")


@pytest.mark.slow
def test_cli_out_of_step_in_the_middle_and_errors(tmp_path: Path) -> None:
    """The CLI with its own range size: 2,500 documents out of step at 1,500, then a
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


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="workers are forked on Linux only")
def test_workers_are_forked_only_while_no_other_thread_runs() -> None:
    assert _start_method_in_a_fresh_process(with_thread=False) == "fork"
    assert _start_method_in_a_fresh_process(with_thread=True) == "spawn"


@pytest.mark.slow
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
            in_step = parity(tmp_path / "a", golds(9), preds(9), 2)
            out_of_step = parity(tmp_path / "b", golds(9), preds(9)[::-1], 2)
        assert in_step[0] == out_of_step[0] == "ok"
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
    one process, and with workers on files in and out of gold order."""
    table_doc = (EXAMPLES / "tables" / "gold.jsonl").read_text().splitlines()[0] + "\n"
    preds_ = [*preds(30), table_doc]
    gold = write(tmp_path / "gold.jsonl", [*golds(30), table_doc])
    pred = write(tmp_path / "pred.jsonl", preds_ if in_step else preds_[::-1])
    want = score_files(gold, pred, Config())
    assert want.family("structure") is not None
    assert_compact_same(want, evaluate(gold, pred, stream=False))
    got = score_files(gold, pred, Config(), workers=workers, range_bytes=400)
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


@pytest.mark.slow
def test_a_file_changed_while_the_workers_read_it_is_an_error(
    synthetic: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workers read their ranges from the files after this process hashed them: a file
    whose identity (inode, size, modification time) differs once they are done fails the
    pass with a clear error instead of a report whose digest is not of the bytes scored."""
    from extract_mlflow.errors import InputError
    from extract_mlflow.evaluation import workers as workers_module

    gold, pred = synthetic
    from extract_mlflow.io.ranges import file_identity as real

    calls: list[Path] = []

    def moved(path: Path) -> Any:
        calls.append(path)
        found = real(path)
        return found if len(calls) <= 2 or path != pred else (0, 0, 0, 0)

    monkeypatch.setattr(workers_module, "file_identity", moved)
    with pytest.raises(InputError, match="changed while it was being scored"):
        score_files(gold, pred, Config(), workers=2, range_bytes=10_000)
    assert calls[:2] == [gold, pred]


# -- how many workers, and that they end with the process that started them ------------------


def _started(caplog: pytest.LogCaptureFixture) -> list[int]:
    found = (re.match(r"starting (\d+) worker processes", r.getMessage()) for r in caplog.records)
    return [int(m.group(1)) for m in found if m]


@pytest.mark.parametrize(("docs", "size", "ranges"), [(3, 10_000, 1), (9, 1, 9)])
def test_workers_are_capped_at_the_cores_and_the_ranges(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, docs: int, size: int, ranges: int
) -> None:
    gold = write(tmp_path / "gold.jsonl", golds(docs))
    pred = write(tmp_path / "pred.jsonl", preds(docs))
    want = evaluate(gold, pred)
    with caplog.at_level(logging.DEBUG, "extract_mlflow.evaluation.workers"):
        got = score_files(gold, pred, Config(), workers=100_000, range_bytes=size)
    assert _started(caplog) == [min(usable_cores(), ranges)]
    assert_workers_same(got, want)


@pytest.mark.slow
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
        proc.wait(timeout=60)
        assert _until(lambda: not _alive(workers) or None), f"workers left: {_alive(workers)}"
    finally:
        proc.kill()
        for pid in _alive(workers or []):  # a failed run leaves none behind either
            os.kill(pid, signal.SIGKILL)
    assert not (tmp_path / "report.txt").exists()


def _until(probe: Callable[[], Any], timeout: float = 120.0) -> Any:
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
