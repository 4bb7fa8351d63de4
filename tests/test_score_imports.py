"""`score --no-log` imports only what scoring needs: the gate, text-fidelity, structure, process
pool and tracking-probe modules load only when their option or input asks for them (every module
is a fixed cost of each command). Each check runs the CLI in a fresh interpreter and reads
`sys.modules` afterwards; a positive control per family shows the names are the real ones."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
INVOICES, PAPERS = EXAMPLES / "invoices", EXAMPLES / "papers"
GOLD, PRED = str(INVOICES / "gold.jsonl"), str(INVOICES / "pred_improved.jsonl")

GATES = ("extract_mlflow.gate_checks", "extract_mlflow.gates")
FIDELITY = (
    "extract_mlflow.fidelity.score",
    "extract_mlflow.fidelity.grounding",
    "extract_mlflow.fidelity.canaries",
    "extract_mlflow.fidelity.tokens",
)
PAGES = ("extract_mlflow.pages",)
STRUCTURE = ("extract_mlflow.structure.score", "extract_mlflow.structure.teds")
POOL = ("concurrent.futures.process",)
TRACKING = ("mlflow", "urllib.request", "extract_mlflow.tracking.log")
LIBRARIES = ("pandas", "scipy", "matplotlib")  # numpy.ma may load: numpy.percentile needs it
OTHER_COMMANDS = ("extract_mlflow.cli_diff", "extract_mlflow.cli_loop")
HEAVY = (*GATES, *FIDELITY, *STRUCTURE, *PAGES, *POOL, *TRACKING, *LIBRARIES)
"""what a plain `score --format json --no-log` of field-only documents never imports"""

_PROBE = """
import json, sys
from extract_mlflow.cli import main
try:
    main({args!r}, standalone_mode=False)
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def run_cli(args: list[str]) -> tuple[str, set[str]]:
    """What `extract-mlflow ARGS` prints, and the modules it imported (a fresh interpreter)."""
    code = _PROBE.format(args=args)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout, set(json.loads(done.stderr.strip().splitlines()[-1]))


def loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return [n for n in names if n in modules]


UNITS = ("pint", "scipy")
"""pint converts quantities, and imports scipy when it is installed (pint.compat): loaded by
the invoices without a config, whose `storage_temp` ("4 °C" against "277.15 K") is inferred a
quantity; never by documents without measurements"""


@pytest.mark.slow
def test_score_no_log_imports_only_what_scoring_needs(tmp_path: Path) -> None:
    out, modules = run_cli(["score", GOLD, PRED, "--format", "json", "--no-log"])
    report = json.loads(out)
    assert report["documents"] > 0 and report["gates"] == {"passed": True, "failures": []}
    assert "extract_mlflow.fields.scorer" in modules  # it did score
    assert report["inferred_types"]["storage_temp"] == "quantity"
    assert loaded(modules, (*HEAVY, *OTHER_COMMANDS)) == ["scipy"] and "pint" in modules
    gold, pred = tmp_path / "gold.jsonl", tmp_path / "pred.jsonl"
    gold.write_text('{"id": "a", "total": 1, "vendor": "Acme", "due": "2026-01-05"}\n')
    pred.write_text('{"id": "a", "total": "1.00", "vendor": "ACME", "due": "05.01.2026"}\n')
    out, modules = run_cli(["score", str(gold), str(pred), "--format", "json", "--no-log"])
    assert json.loads(out)["micro"]["tp"] == 1
    assert loaded(modules, (*HEAVY, *OTHER_COMMANDS, *UNITS)) == []


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["table", "md"])
def test_the_table_and_markdown_views_import_no_optional_family(fmt: str) -> None:
    out, modules = run_cli(["score", GOLD, PRED, "--format", fmt, "--no-log"])
    assert "line_items[].qty" in out
    assert loaded(modules, HEAVY) == ["scipy"] and "pint" in modules  # see UNITS


@pytest.mark.slow
def test_a_gate_option_loads_the_gate_modules() -> None:
    out, modules = run_cli(["score", GOLD, PRED, "--format", "json", "--no-log", "--min-f1", "1"])
    assert json.loads(out)["gates"]["passed"] is False  # the improved run is not perfect
    assert loaded(modules, GATES) == list(GATES)
    assert loaded(modules, (*FIDELITY, *STRUCTURE, *POOL, *TRACKING)) == []


@pytest.mark.slow
def test_sources_load_text_fidelity() -> None:
    args = ["score", GOLD, PRED, "--sources", str(INVOICES / "sources"), "--no-log"]
    out, modules = run_cli([*args, "--format", "json"])
    assert json.loads(out)["fidelity"] is not None
    assert loaded(modules, FIDELITY) == list(FIDELITY)
    assert loaded(modules, (*GATES, *STRUCTURE)) == []


@pytest.mark.slow
def test_structure_fields_load_the_structure_scorers(tmp_path: Path) -> None:
    table = "<table><tr><td>a</td><td>b</td></tr></table>"
    gold, pred = tmp_path / "gold.jsonl", tmp_path / "pred.jsonl"
    gold.write_text(json.dumps({"id": "d1", "total": 1, "tables": [table]}) + "\n")
    pred.write_text(json.dumps({"id": "d1", "total": 1, "tables": [table]}) + "\n")
    out, modules = run_cli(["score", str(gold), str(pred), "--format", "json", "--no-log"])
    assert json.loads(out)["structure"] is not None
    assert loaded(modules, STRUCTURE) == list(STRUCTURE)


@pytest.mark.slow
def test_pages_load_the_page_parser() -> None:
    gold, pred = str(PAPERS / "gold.jsonl"), str(PAPERS / "pred_complete.jsonl")
    args = ["score", gold, pred, "--config", str(PAPERS / "config.toml"), "--no-log"]
    out, modules = run_cli([*args, "--format", "json"])
    assert json.loads(out)["layout"]["layout_score"] == 1.0
    assert loaded(modules, PAGES) == list(PAGES)
    assert loaded(modules, (*GATES, *FIDELITY, *STRUCTURE)) == []


@pytest.mark.parametrize("args", [["--help"], ["score", "--help"]])
def test_help_imports_no_scoring_family(args: list[str]) -> None:
    out, modules = run_cli(args)
    assert "Usage:" in out
    assert loaded(modules, (*HEAVY, "numpy", "pydantic")) == []
    listed = ["diff", "hints", "score-iterations"] if args == ["--help"] else []
    assert [c for c in listed if f"\n  {c} " in out] == listed  # --help lists every command


def test_importing_evaluate_loads_no_optional_family() -> None:
    code = (
        "import json, sys, extract_mlflow.evaluation.evaluate\nprint(json.dumps(list(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    modules = set(json.loads(done.stdout))
    assert "extract_mlflow.evaluation.accumulator" in modules
    assert loaded(modules, (*GATES, *FIDELITY, *STRUCTURE, *POOL, *TRACKING)) == []
