"""`score-iterations --no-log` on examples/iterations: the results folder (every file, running
maxima, the best prompt, the feedback), the progress lines, the baseline row, the scoring
options of `score`, and bad inputs (exit 2, one line). No tracking server is involved."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from extract_mlflow import evaluate, feedback_text
from extract_mlflow.cli import main
from extract_mlflow.io.outputs import RESULTS_MARKER
from extract_mlflow.views.iteration_files import NO_TOKENS

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "iterations"
INVOICES = EXAMPLE.parent / "invoices"
CONFIG = str(EXAMPLE / "config.toml")
ITERATIONS = ("iter_1", "iter_2", "iter_3")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def example_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "loop"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("results"))
    return folder


def score(pred: Path, **options: object) -> dict[str, float]:
    """The metrics of one prediction file, scored directly (the reference)."""
    return evaluate(EXAMPLE / "gold.jsonl", pred, CONFIG, **options).metrics()  # type: ignore[arg-type]


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """The example scored once with its baseline: (results folder, stdout, stderr)."""
    folder = example_copy(tmp_path_factory.mktemp("iterations"))
    code, out, err = cli(
        "score-iterations", str(folder), "--config", CONFIG,
        "--baseline", str(folder / "baseline.jsonl"), "--no-log", "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    return folder / "results", out, err


@pytest.mark.slow
def test_the_results_folder_holds_every_file(run: tuple[Path, str, str]) -> None:
    results, out, _ = run
    files = {p.relative_to(results).as_posix() for p in results.rglob("*") if p.is_file()}
    assert files == {
        RESULTS_MARKER, "metrics.csv", "metrics.tex", "summary.md", "diagnostics.json",
        "best_prompt.txt", "trend.png", "trend.pdf", "tokens.png", "tokens.pdf",
        *(f"prompts/iter_{n}.txt" for n in (1, 2, 3)),
        *(f"feedback/iter_{n}.md" for n in (1, 2, 3)),
    }  # fmt: skip
    for name in ("trend", "tokens"):
        assert (results / f"{name}.png").read_bytes().startswith(PNG_MAGIC)
        assert (results / f"{name}.pdf").read_bytes().startswith(b"%PDF")
    data = json.loads(out)  # stdout is the JSON alone: no progress line in it
    assert data["best_iteration"] == "iter_2" and data["run_id"] is None
    assert data["results"] == str(results)


def test_metrics_csv_rows_and_running_maxima(run: tuple[Path, str, str]) -> None:
    rows = read_csv(run[0] / "metrics.csv")
    assert list(rows[0]) == [
        "iteration", "f1", "f1_best", "precision", "recall", "groundedness", "hallucination",
        "layout_score", "composite", "composite_best", "tokens_per_doc",
    ]  # fmt: skip
    assert [r["iteration"] for r in rows] == ["baseline", *ITERATIONS]
    for row, name in zip(rows[1:], ITERATIONS, strict=True):
        expected = score(EXAMPLE / name / "pred.jsonl")
        for column in ("f1", "precision", "recall", "layout_score", "composite"):
            assert float(row[column]) == pytest.approx(expected[column]), (name, column)
        assert float(row["tokens_per_doc"]) == pytest.approx(expected["tokens_per_doc"])
        assert row["groundedness"] == row["hallucination"] == ""  # no sources: undefined
    for key in ("f1", "composite"):
        values = [float(r[key]) for r in rows[1:]]
        best = [float(r[f"{key}_best"]) for r in rows[1:]]
        assert best == [max(values[: i + 1]) for i in range(len(values))]
        assert best[-1] > values[-1]  # the last iteration is not the best
    assert rows[0]["f1_best"] == rows[0]["composite_best"] == ""  # the baseline is a reference


def test_best_prompt_prompts_and_feedback(run: tuple[Path, str, str]) -> None:
    results = run[0]
    best = (EXAMPLE / "iter_2" / "prompt.txt").read_text(encoding="utf-8")
    assert (results / "best_prompt.txt").read_text(encoding="utf-8") == best
    for n, name in enumerate(ITERATIONS, 1):
        prompt = (EXAMPLE / name / "prompt.txt").read_text(encoding="utf-8")
        assert (results / "prompts" / f"iter_{n}.txt").read_text(encoding="utf-8") == prompt
        report = evaluate(EXAMPLE / "gold.jsonl", EXAMPLE / name / "pred.jsonl", CONFIG)
        feedback = (results / "feedback" / f"iter_{n}.md").read_text(encoding="utf-8")
        assert feedback == feedback_text(report)


def test_summary_and_diagnostics_of_best_and_last(run: tuple[Path, str, str]) -> None:
    results = run[0]
    diagnostics = json.loads((results / "diagnostics.json").read_text(encoding="utf-8"))
    assert diagnostics["iterations"] == list(ITERATIONS)
    assert (diagnostics["best"]["iteration"], diagnostics["last"]["iteration"]) == (
        "iter_2",
        "iter_3",
    )
    last = score(EXAMPLE / "iter_3" / "pred.jsonl")
    assert diagnostics["last"]["metrics"]["f1"] == pytest.approx(last["f1"])
    assert diagnostics["last"]["layout"]["documents"]["kin-01"]["rows_pred"] == 2
    summary = (results / "summary.md").read_text(encoding="utf-8")
    assert "## Best iteration: iter_2" in summary and "## Last iteration: iter_3" in summary
    assert summary.index("## Best iteration") < summary.index("## Last iteration")
    last_part = summary[summary.index("## Last iteration") :]
    assert "missing sections: Conclusions (4 document(s))" in last_part
    assert "Recall by field, worst first" in last_part and "Mismatch examples" in last_part
    assert "| kin-01 | 4/5 |" in last_part  # rows extracted vs gold and layout, per page
    assert "| **iter_2** |" in summary and "| baseline |" in summary


def test_progress_lines_per_document_and_iteration(run: tuple[Path, str, str]) -> None:
    lines = run[2].splitlines()
    for name in ITERATIONS:
        docs = [line for line in lines if line.startswith(f"[{name}] kin-")]
        assert len(docs) == 10, docs
        (agg,) = [line for line in lines if line.startswith(f"[{name}] AGG ")]
        metrics = score(EXAMPLE / name / "pred.jsonl")
        assert f"F1={metrics['f1']:.4f} P={metrics['precision']:.4f}" in agg
        assert (
            f"composite={metrics['composite']:.4f} tok/doc={metrics['tokens_per_doc']:.0f}" in agg
        )
    best_f1 = score(EXAMPLE / "iter_2" / "pred.jsonl")["f1"]
    assert lines[-2].endswith(f"| best F1={best_f1:.4f} composite={best_f1:.4f}"), lines[-2]
    (base,) = [line for line in lines if line.startswith("[baseline] AGG ")]
    assert "tok/doc=n/a" in base and "| best" not in base


def test_the_baseline_is_the_reference_row(run: tuple[Path, str, str]) -> None:
    results, out, _ = run
    (base,) = [r for r in read_csv(results / "metrics.csv") if r["iteration"] == "baseline"]
    expected = score(EXAMPLE / "baseline.jsonl")
    assert float(base["f1"]) == pytest.approx(expected["f1"])
    assert float(base["composite"]) == pytest.approx(expected["composite"])
    assert base["tokens_per_doc"] == ""  # hand-written: no usage
    tex = (results / "metrics.tex").read_text(encoding="utf-8")
    assert r"\emph{baseline} & 0.929" in tex and "baseline F1}" in tex
    assert json.loads(out)["baseline"]["f1"] == pytest.approx(expected["f1"])


def test_without_usage_tokens_plots_are_left_out_with_a_note(tmp_path: Path) -> None:
    folder = example_copy(tmp_path)
    for name in ITERATIONS:
        pred = folder / name / "pred.jsonl"
        docs = [json.loads(line) for line in pred.read_text(encoding="utf-8").splitlines()]
        pred.write_text(
            "".join(json.dumps({k: v for k, v in d.items() if k != "usage"}) + "\n" for d in docs)
        )
    stale = folder / "results"
    stale.mkdir()
    (stale / RESULTS_MARKER).touch()
    (stale / "tokens.png").write_bytes(PNG_MAGIC)  # from an earlier run that had usage
    code, _, err = cli("score-iterations", str(folder), "--config", CONFIG, "--no-log")
    assert code == 0, err
    assert not (stale / "tokens.png").exists() and not (stale / "tokens.pdf").exists()
    assert NO_TOKENS in (stale / "summary.md").read_text(encoding="utf-8")
    assert all(r["tokens_per_doc"] == "" for r in read_csv(stale / "metrics.csv"))


def test_scoring_options_of_score_are_taken(tmp_path: Path) -> None:
    folder = tmp_path / "invoices"
    for name, pred in (("1", "pred_baseline.jsonl"), ("2", "pred_improved.jsonl")):
        (folder / name).mkdir(parents=True)
        shutil.copy(INVOICES / pred, folder / name / "pred.jsonl")
    results = tmp_path / "out"
    code, _, err = cli(
        "score-iterations", str(folder), "--gold", str(INVOICES / "gold.jsonl"),
        "--config", str(INVOICES / "config.toml"), "--sources", str(INVOICES / "sources"),
        "--results", str(results), "--no-log",
    )  # fmt: skip
    assert code == 0, err
    rows = read_csv(results / "metrics.csv")
    for row, pred in zip(rows, ("pred_baseline.jsonl", "pred_improved.jsonl"), strict=True):
        expected = evaluate(
            INVOICES / "gold.jsonl", INVOICES / pred, INVOICES / "config.toml",
            sources=INVOICES / "sources",
        ).metrics()  # fmt: skip
        assert float(row["groundedness"]) == pytest.approx(expected["groundedness"])
        assert float(row["hallucination"]) == pytest.approx(expected["hallucination_rate"])
        assert row["layout_score"] == row["composite"] == row["composite_best"] == ""
    assert not (results / "best_prompt.txt").exists()  # no prompt.txt: no best prompt
    assert not (folder / "results").exists()  # --results chose the folder


def test_metrics_tex_compiles(run: tuple[Path, str, str], tmp_path: Path) -> None:
    pdflatex = shutil.which("pdflatex")
    if pdflatex is None:
        pytest.skip("pdflatex is not installed")
    shutil.copy(run[0] / "metrics.tex", tmp_path / "metrics.tex")
    done = subprocess.run(
        [pdflatex, "-interaction=nonstopmode", "-halt-on-error", "metrics.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert (tmp_path / "metrics.pdf").read_bytes().startswith(b"%PDF")


# -- bad inputs: exit 2 and one line -------------------------------------------------------------
def one_error(tmp_path: Path, *args: str) -> str:
    code, out, err = cli("score-iterations", *args, "--no-log")
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, (out, err)
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def test_missing_folder(tmp_path: Path) -> None:
    assert "not a directory" in one_error(tmp_path, str(tmp_path / "nope"))


def test_iteration_without_predictions(tmp_path: Path) -> None:
    folder = example_copy(tmp_path)
    (folder / "iter_2" / "pred.jsonl").unlink()
    line = one_error(tmp_path, str(folder), "--config", CONFIG)
    assert "iter_2" in line and "no pred.jsonl" in line
    assert not (folder / "results").exists()  # checked before anything is written


def test_unreadable_prompt(tmp_path: Path) -> None:
    folder = example_copy(tmp_path)
    (folder / "iter_3" / "prompt.txt").write_bytes(b"caf\xe9 latin-1\n")
    line = one_error(tmp_path, str(folder), "--config", CONFIG)
    assert "iter_3" in line and "prompt" in line


def test_no_gold_and_missing_baseline(tmp_path: Path) -> None:
    folder = example_copy(tmp_path)
    missing = str(folder / "nothing.jsonl")
    assert "prediction file not found" in one_error(
        tmp_path, str(folder), "--config", CONFIG, "--baseline", missing
    )
    (folder / "gold.jsonl").unlink()
    assert "no gold" in one_error(tmp_path, str(folder), "--config", CONFIG)


def test_every_scoring_option_reaches_the_evaluation(tmp_path: Path) -> None:
    """--source-key, --approvals, --text-key, --profile and --slice-by: each iteration's
    diagnostics equal `evaluate` given the same options."""
    folder = example_copy(tmp_path)
    approvals = tmp_path / "approvals.csv"
    approvals.write_text("id,path\nkin-01,title\n", encoding="utf-8")
    options = {
        "source_key": "title",
        "approvals": approvals,
        "text_key": "output",
        "profile": "kinetics",
        "slice_by": ["topic"],
    }
    code, _, err = cli(
        "score-iterations", str(folder), "--config", CONFIG, "--no-log",
        "--source-key", "title", "--approvals", str(approvals), "--text-key", "output",
        "--profile", "kinetics", "--slice-by", "topic",
    )  # fmt: skip
    assert code == 0, err
    diagnostics = json.loads((folder / "results" / "diagnostics.json").read_text("utf-8"))
    expected = evaluate(folder / "gold.jsonl", folder / "iter_3" / "pred.jsonl", CONFIG, **options)  # type: ignore[arg-type]
    assert diagnostics["last"]["fidelity"] is not None  # --source-key: text fidelity ran
    assert diagnostics["last"]["fidelity"] == json.loads(json.dumps(expected.to_dict()["fidelity"]))
    assert diagnostics["last"]["metrics"] == pytest.approx(expected.metrics())
    code, _, err = cli(
        "score-iterations", str(folder), "--config", CONFIG, "--no-log", "--profile", "nope"
    )
    assert code == 2 and err.startswith("error: "), err  # the option is not dropped


def test_iteration_names_cannot_be_formulas_in_metrics_csv(tmp_path: Path) -> None:
    """A spreadsheet opening metrics.csv reads a cell starting with = + - @ as a formula: such
    an iteration name gets a leading quote (OWASP's CSV injection advice); scores stay
    numbers."""
    folder = example_copy(tmp_path)
    names = ["=HYPERLINK(1)", "+1", "@SUM(A1)"]
    for old, new in zip(ITERATIONS, names, strict=True):
        (folder / old).rename(folder / new)
    code, _, err = cli("score-iterations", str(folder), "--config", CONFIG, "--no-log")
    assert code == 0, err
    rows = read_csv(folder / "results" / "metrics.csv")
    assert sorted(r["iteration"] for r in rows) == sorted("'" + n for n in names)
    assert all(float(r["f1"]) > 0 for r in rows)
