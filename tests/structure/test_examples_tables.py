"""examples/tables/README.md states what the code computes on the structure example: its
commands' output, every page's scores, hand-worked TEDS values and the slice tables. Each test
reads the README and fails when it and the code disagree; the table scores are also checked
against the independent reference in ``teds_reference``."""

from __future__ import annotations

import ast
import json
import operator
import re
import shlex
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support import teds_reference as ref

from extract_mlflow import evaluate
from extract_mlflow.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "tables"
README = (EXAMPLE / "README.md").read_text(encoding="utf-8")
MODELS = {"weak": "pred_weak.jsonl", "better": "pred_better.jsonl"}
SLICES = ("layout", "source", "dpi")
LABELS = {
    "TEDS-S": "teds_s",
    "TEDS": "teds",
    "header": "header_association",
    "ROAcc": "reading_order",
    "tau": "kendall_tau",
    "ANLS": "anls",
    "boundary F1": "boundary_f1",
}


def rows(name: str) -> dict[str, dict[str, Any]]:
    """The lines of one of the example's JSONL files, by id."""
    lines = (EXAMPLE / name).read_text(encoding="utf-8").splitlines()
    return {row["id"]: row for row in map(json.loads, lines)}


def fenced(lang: str) -> list[str]:
    """The bodies of the README's code blocks of one language."""
    return re.findall(rf"^```{lang}\n(.*?)^```$", README, re.MULTILINE | re.DOTALL)


def commands(block: str) -> list[tuple[list[str], str]]:
    """(argv after `extract-mlflow`, shown output) of each `$ ` command of a console block."""
    out: list[tuple[list[str], str]] = []
    lines = block.splitlines()
    i = 0
    while i < len(lines):
        assert lines[i].startswith("$ "), f"expected a command, got {lines[i]!r}"
        command = lines[i][2:]
        while command.endswith("\\"):
            i += 1
            command = command[:-1] + lines[i]
        i += 1
        shown = []
        while i < len(lines) and not lines[i].startswith("$ "):
            shown.append(lines[i])
            i += 1
        argv = shlex.split(command)
        assert argv[0] == "extract-mlflow"
        out.append((argv[1:], "\n".join(shown)))
    return out


def run_cli(argv: list[str]) -> str:
    result = CliRunner().invoke(main, argv, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def squeeze(text: str) -> str:
    return " ".join(text.split())


def report(model: str) -> Any:
    return evaluate(
        EXAMPLE / "gold.jsonl",
        EXAMPLE / MODELS[model],
        config=EXAMPLE / "config.toml",
        slice_by=SLICES,
    )


@pytest.fixture(scope="module")
def reports() -> dict[str, Any]:
    return {model: report(model) for model in MODELS}


def per_document(rep: Any) -> dict[str, Any]:
    return {doc.id: doc for doc in rep.family("structure").documents}


# -- the commands ---------------------------------------------------------------------------


CONSOLE = [c for block in fenced("console") for c in commands(block)]


def test_the_readme_shows_both_commands() -> None:
    shown = {argv[2] for argv, _ in CONSOLE}
    assert shown == {f"examples/tables/{name}" for name in MODELS.values()}


@pytest.mark.parametrize(("argv", "shown"), CONSOLE, ids=[a[2] for a, _ in CONSOLE])
def test_console_output_is_what_the_command_prints(
    argv: list[str], shown: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    printed = run_cli(argv)
    assert squeeze(printed) == squeeze(shown), f"the command now prints:\n{printed}"


# -- page by page ---------------------------------------------------------------------------

PAGE = re.compile(
    r"^- \*\*`(?P<id>[\w-]+)`\*\*.*? weak: (?P<weak>.*?) · better: (?P<better>.*?)\.$"
)
VALUE = re.compile(r"(TEDS-S|TEDS|header|ROAcc|tau|ANLS|boundary F1) (\d\.\d{3})")


def stated_pages() -> dict[str, dict[str, dict[str, str]]]:
    """page id → model → metric → the value the README states."""
    pages: dict[str, dict[str, dict[str, str]]] = {}
    for line in README.splitlines():
        match = PAGE.match(line)
        if match:
            pages[match["id"]] = {
                model: {LABELS[k]: v for k, v in VALUE.findall(match[model])} for model in MODELS
            }
    return pages


def test_every_page_is_described() -> None:
    assert sorted(stated_pages()) == sorted(rows("gold.jsonl"))


@pytest.mark.parametrize("model", MODELS)
def test_page_scores_are_the_reports(model: str, reports: dict[str, Any]) -> None:
    docs = per_document(reports[model])
    for page, stated in stated_pages().items():
        values = docs[page].values()
        computed = {k: f"{values[k]:.3f}" for k in LABELS.values() if k in values}
        assert stated[model] == computed, page


# -- hand checks ----------------------------------------------------------------------------

HAND = re.compile(
    r"^- `(?P<id>[\w-]+)`, (?P<model>weak|better), gold table (?P<table>\d+): "
    r"TED = (?P<ted>[^,]+), size = max\((?P<gold>\d+), (?P<pred>\d+)\) = (?P<size>\d+), "
    r"TEDS = 1 − (?P<expr>.+) = (?P<value>\d\.\d{3})\.$",
    re.MULTILINE,
)
_OPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def exact(expression: str) -> Fraction:
    """The value of an arithmetic expression of integers, + − × / and parentheses."""

    def walk(node: ast.AST) -> Fraction:
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return Fraction(_OPS[type(node.op)](walk(node.left), walk(node.right)))
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return Fraction(node.value)
        raise ValueError(f"not arithmetic: {expression!r}")

    return walk(ast.parse(expression.replace("−", "-"), mode="eval").body)


HAND_CHECKS = list(HAND.finditer(README))


def test_the_readme_has_hand_checks() -> None:
    assert len(HAND_CHECKS) >= 2


@pytest.mark.parametrize("check", HAND_CHECKS, ids=[f"{m['id']}-{m['model']}" for m in HAND_CHECKS])
def test_hand_check_matches_the_code(check: re.Match[str], reports: dict[str, Any]) -> None:
    ted, size = exact(check["ted"]), int(check["size"])
    assert size == max(int(check["gold"]), int(check["pred"]))
    assert exact(check["expr"]) == ted / size
    assert f"{float(1 - ted / size):.3f}" == check["value"]
    tables = per_document(reports[check["model"]])[check["id"]].tables
    (slot,) = [t for t in tables if t.gold == int(check["table"])]
    assert (slot.gold_nodes, slot.pred_nodes) == (int(check["gold"]), int(check["pred"]))
    assert slot.teds == pytest.approx(float(1 - ted / size), abs=1e-12)


# -- against the reference implementation ---------------------------------------------------


def test_every_html_table_pair_equals_the_reference(reports: dict[str, Any]) -> None:
    """Each pair the code scores, against lxml + apted on the official definition (the
    Markdown tables are left out: the reference reads HTML)."""
    gold, checked = rows("gold.jsonl"), 0
    for model, file in MODELS.items():
        pred = rows(file)
        for page, doc in per_document(reports[model]).items():
            for t in doc.tables or []:
                if t.gold is None or t.pred is None:
                    continue
                g, p = gold[page]["tables"][t.gold], pred[page]["tables"][t.pred]
                if not g.startswith("<table"):
                    continue
                assert t.teds == pytest.approx(ref.official_teds(g, p), abs=1e-9), page
                s = ref.official_teds(g, p, structure_only=True)
                assert t.teds_s == pytest.approx(s, abs=1e-9), page
                checked += 1
    assert checked == 13


# -- slices ---------------------------------------------------------------------------------


def slice_tables() -> list[tuple[str, list[str]]]:
    """(model, lines) of each markdown table in the README's Slices section, the model being
    the last prediction file named before it."""
    section = README.split("## Slices", 1)[1].split("\n## ", 1)[0]
    out: list[tuple[str, list[str]]] = []
    model, table = "", []
    for line in [*section.splitlines(), ""]:
        for name, file in MODELS.items():
            if f"`{file}`" in line:
                model = name
        if line.startswith("|"):
            table.append(line)
        elif table:
            out.append((model, table))
            table = []
    return out


def test_slice_tables_are_in_the_markdown_report(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    tables = slice_tables()
    assert {model for model, _ in tables} == set(MODELS)
    assert {t[0].split("|")[1].strip() for _, t in tables} == set(SLICES)
    markdown = {}
    for model, file in MODELS.items():
        argv = ["score", "examples/tables/gold.jsonl", f"examples/tables/{file}"]
        argv += ["--config", "examples/tables/config.toml", "--no-log", "--format", "md"]
        argv += [x for s in SLICES for x in ("--slice-by", s)]
        markdown[model] = run_cli(argv)
    for model, table in tables:
        assert "\n".join(table) in markdown[model], table[0]


# -- logged to MLflow -----------------------------------------------------------------------


@pytest.mark.slow
def test_the_logging_command_logs_robustness_png(mlflow_env: Path, local_store: str) -> None:
    (block,) = [b for b in fenced("bash") if "extract-mlflow score" in b]
    argv = shlex.split(block.replace("\\\n", " "))[1:]
    argv = [str(ROOT / a) if a.startswith("examples/") else a for a in argv]
    argv[argv.index("--tracking-uri") + 1] = local_store
    run_cli(argv)

    from mlflow.tracking import MlflowClient

    client = MlflowClient(local_store)
    experiment = client.get_experiment_by_name(argv[argv.index("--experiment") + 1])
    assert experiment is not None
    (run,) = client.search_runs([experiment.experiment_id])
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id, "eval")}
    assert "eval/robustness.png" in artifacts
    cell = r"(\d\.\d{3}) \((\d\.\d{3})–(\d\.\d{3})\)"
    stated = re.search(rf"^\| 150 \| 2 \| {cell} \|", README, re.MULTILINE)
    assert stated is not None  # the weak model's first dpi row: teds at 150 dpi, its interval
    metrics = run.data.metrics
    assert f"{metrics['teds_by_dpi/150']:.3f}" == stated[1]
    assert f"{metrics['teds_ci_low_by_dpi/150']:.3f}" == stated[2]
    assert f"{metrics['teds_ci_high_by_dpi/150']:.3f}" == stated[3]
