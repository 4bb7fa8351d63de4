"""No command loses a file of the user's (#28 item 2): an output that is an input is refused
(exit 2, one line, the input untouched), a report is written whole, and a results folder is
only written into when it is new, empty or one written so before."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from extract_mlflow.cli import main
from extract_mlflow.io.outputs import RESULTS_MARKER, write_atomic

ROOT = Path(__file__).resolve().parents[2]
INVOICES = ROOT / "examples" / "invoices"
ITERATIONS = ROOT / "examples" / "iterations"


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "extract_mlflow", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def cli(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def refused(code: int, stdout: str, stderr: str, path: str | Path) -> None:
    """Exit 2, nothing on stdout, one error line naming `path`."""
    assert code == 2, stderr
    assert stdout == ""
    (line,) = stderr.splitlines()
    assert line.startswith("error: ") and str(path) in line


@pytest.fixture
def invoices(tmp_path: Path) -> Path:
    folder = tmp_path / "invoices"
    shutil.copytree(INVOICES, folder)
    return folder


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def test_score_out_onto_the_gold_file_is_refused(invoices: Path) -> None:
    gold, pred = invoices / "gold.jsonl", invoices / "pred_baseline.jsonl"
    link = invoices / "report.txt"
    link.symlink_to(gold.name)
    before = snapshot(invoices)
    for out in (gold, link, pred):
        done = run("score", gold, pred, "--no-log", "--out", out)
        refused(done.returncode, done.stdout, done.stderr, out)
    assert snapshot(invoices) == before


def test_diff_out_onto_a_prediction_file_is_refused(invoices: Path) -> None:
    gold, a, b = (
        invoices / n for n in ("gold.jsonl", "pred_baseline.jsonl", "pred_improved.jsonl")
    )
    config = invoices / "config.toml"
    before = snapshot(invoices)
    done = run("diff", gold, a, b, "--out", b)
    refused(done.returncode, done.stdout, done.stderr, b)
    refused(*cli("diff", gold, a, b, "--config", config, "--out", config), config)
    assert snapshot(invoices) == before


def test_an_existing_file_inside_an_input_folder_is_refused(invoices: Path) -> None:
    gold, pred = invoices / "gold.jsonl", invoices / "pred_baseline.jsonl"
    source = next((invoices / "sources").iterdir())
    before = snapshot(invoices)
    code, out, err = cli(
        "score", gold, pred, "--sources", invoices / "sources", "--no-log", "--out", source
    )
    refused(code, out, err, source)
    assert snapshot(invoices) == before
    new = invoices / "sources" / "report.txt"  # a new file there overwrites nothing
    code, _, err = cli(
        "score", gold, pred, "--sources", invoices / "sources", "--no-log", "--out", new
    )
    assert code == 0, err
    assert new.read_text(encoding="utf-8").startswith("documents")


def test_a_report_replaces_a_file_whole_and_keeps_its_mode(invoices: Path, tmp_path: Path) -> None:
    gold, pred = invoices / "gold.jsonl", invoices / "pred_baseline.jsonl"
    out = tmp_path / "report.json"
    out.write_text("old report, longer than nothing\n" * 1000, encoding="utf-8")
    out.chmod(0o640)
    elsewhere = tmp_path / "link.json"
    elsewhere.symlink_to(out)
    code, stdout, err = cli("score", gold, pred, "--no-log", "--format", "json", "--out", elsewhere)
    assert code == 0, err
    assert stdout == "" and out.read_text(encoding="utf-8").startswith("{")
    assert elsewhere.is_symlink()  # written through, as a shell redirection would
    assert stat.S_IMODE(out.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["invoices", "link.json", "report.json"]
    code, _, err = cli("score", gold, pred, "--no-log", "--out", os.devnull)  # not replaced
    assert code == 0, err
    assert Path(os.devnull).is_char_device()


def test_a_failed_write_leaves_the_earlier_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "summary.md"
    out.write_text("earlier", encoding="utf-8")

    def full_disk(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space"):
        write_atomic(out, "later " * 10_000)
    assert out.read_text(encoding="utf-8") == "earlier"
    assert [p.name for p in tmp_path.iterdir()] == ["summary.md"]  # no temporary file left


@pytest.fixture
def loop(tmp_path: Path) -> Path:
    folder = tmp_path / "loop"
    shutil.copytree(ITERATIONS, folder, ignore=shutil.ignore_patterns("results"))
    return folder


def iterations(folder: Path, *args: str | Path) -> tuple[int, str, str]:
    return cli("score-iterations", folder, "--config", folder / "config.toml", "--no-log", *args)


def test_results_into_a_user_folder_are_refused(loop: Path, tmp_path: Path) -> None:
    user = tmp_path / "notes"
    user.mkdir()
    (user / "metrics.csv").write_text("mine\n", encoding="utf-8")
    (user / "prompts").mkdir()
    (user / "prompts" / "iter_1.txt").write_text("my prompt\n", encoding="utf-8")
    before_user, before_loop = snapshot(user), snapshot(loop)
    for folder in (user, loop, loop / "iter_1"):
        refused(*iterations(loop, "--results", folder), folder)
    assert snapshot(user) == before_user and snapshot(loop) == before_loop
    refused(*iterations(loop, "--out", loop / "iter_1" / "pred.jsonl"), "pred.jsonl")
    assert snapshot(loop) == before_loop


@pytest.mark.slow
def test_a_results_folder_of_ours_is_rewritten(loop: Path, tmp_path: Path) -> None:
    results = tmp_path / "empty"
    results.mkdir()
    code, _, err = iterations(loop, "--results", results)
    assert code == 0, err
    assert (results / RESULTS_MARKER).is_file() and (results / "feedback" / "iter_3.md").is_file()
    (results / "feedback" / "iter_9.md").write_text("stale", encoding="utf-8")
    code, _, err = iterations(loop, "--results", results, "--out", results / "report.txt")
    assert code == 0, err
    assert not (results / "feedback" / "iter_9.md").exists()  # ours: cleaned
    assert (results / "report.txt").read_text(encoding="utf-8").strip()
    code, _, err = iterations(loop)  # the default FOLDER/results, twice
    assert code == 0, err
    code, _, err = iterations(loop)
    assert code == 0, err
    assert (loop / "results" / RESULTS_MARKER).is_file()
