"""Every command documents itself: a help text per command, a help text per option, every
argument named in its command's help, and every command mentioned in the README. The reference
pages (README.md, docs/*.md) name every metric key the code logs, stay inside the repository,
and every repository file they name exists (tests/test_docs_options.py checks options and config
keys).

Commands are found by walking `extract_mlflow.cli.main` recursively, so new commands (and
groups of commands) are covered without touching this file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from extract_mlflow.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"


def walk(
    command: click.Command, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], click.Command]]:
    """(argv words, command) for the command and everything under it, groups included."""
    found = [(path, command)]
    if isinstance(command, click.Group):
        ctx = click.Context(command, info_name=path[-1] if path else "extract-mlflow")
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                found += walk(sub, (*path, name))
    return found


def doc_problems(command: click.Command) -> list[str]:
    """What is undocumented about one command (empty when all is documented)."""
    problems = []
    help_text = (command.help or "").strip()
    if not help_text:
        problems.append("the command has no help text")
    for param in command.params:
        if isinstance(param, click.Option):
            if not param.hidden and not (param.help or "").strip():
                problems.append(f"option {param.opts[0]} has no help")
        elif isinstance(param, click.Argument):
            name = param.human_readable_name.upper()
            if name not in help_text:
                problems.append(f"argument {name} is not described in the command's help")
    return problems


COMMANDS = walk(main)
IDS = [" ".join(("extract-mlflow", *path)) for path, _ in COMMANDS]


def test_the_walk_finds_the_commands() -> None:
    names = {path[-1] for path, _ in COMMANDS if path}
    assert "score" in names


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=IDS)
def test_command_is_documented(path: tuple[str, ...], command: click.Command) -> None:
    assert doc_problems(command) == []


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=IDS)
def test_help_renders_every_option(path: tuple[str, ...], command: click.Command) -> None:
    result = CliRunner().invoke(main, [*path, "--help"])
    assert result.exit_code == 0, result.output
    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden:
            assert param.opts[0] in result.stdout, param.opts[0]
            assert (param.help or "").split()[0] in result.stdout, param.opts[0]
        elif isinstance(param, click.Argument):
            assert param.human_readable_name.upper() in result.stdout


def test_the_checker_catches_missing_help() -> None:
    @click.command()
    @click.argument("thing")
    @click.option("--flag", is_flag=True)
    def bare(thing: str, flag: bool) -> None:
        pass

    problems = doc_problems(bare)
    assert "the command has no help text" in problems
    assert "option --flag has no help" in problems
    assert "argument THING is not described in the command's help" in problems


def test_readme_mentions_every_command() -> None:
    if not README.exists():
        pytest.skip("README.md does not exist yet")
    text = README.read_text(encoding="utf-8")
    missing = [" ".join(path) for path, _ in COMMANDS if path and path[-1] not in text]
    assert missing == [], f"README.md does not mention: {', '.join(missing)}"


# -- the reference pages under docs/ -----------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
EXAMPLES = ROOT / "examples"
_SLICE = re.compile(r"^(?P<metric>[a-z0-9_]+?)_by_[^/]+/.+$", re.DOTALL)


def _structure_rows(n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Gold and predicted lines with every structure family (and a slice attribute)."""
    table = "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>"
    gold = [
        {
            "id": str(i),
            "layout": "two column" if i % 2 else "single",
            "tables": [table],
            "blocks": ["t", "p1", "p2"],
            "regions": {"q": "New York"},
            "boundaries": [1, 5],
            "v": "a",
        }
        for i in range(n)
    ]
    pred = [
        {
            "id": str(i),
            "tables": [table.replace("2", "3")],
            "blocks": ["t", "p2", "p1"],
            "regions": {"q": "new york"},
            "boundaries": [1, 6 + i],
            "v": "a",
        }
        for i in range(n)
    ]
    return gold, pred


def logged_keys() -> set[str]:
    """Every metric key the code logs on the examples, plus the structure and per-field
    families spelled out by the code's own constants."""
    from extract_mlflow import evaluate
    from extract_mlflow.core.keys import FIELD_METRICS
    from extract_mlflow.structure.score import METRICS

    invoices, papers = EXAMPLES / "invoices", EXAMPLES / "papers"
    gold, pred = _structure_rows(4)
    reports = [
        evaluate(
            invoices / "gold.jsonl",
            invoices / "pred_baseline.jsonl",
            config=invoices / "config.toml",
            sources=invoices / "sources",
            slice_by=["currency"],
            canaries=["Note to AI => PO-2026-0315"],
        ),
        evaluate(
            papers / "gold.jsonl", papers / "pred_complete.jsonl", config=papers / "config.toml"
        ),
        evaluate(gold, pred, slice_by=["layout"]),
        evaluate(gold, pred, config={"structure": {"teds": "normalized"}}),
    ]
    keys = {k for r in reports for k in r.metrics()}
    keys |= {f"{m}{s}" for m in METRICS for s in ("", "_ci_low", "_ci_high")}
    keys |= {f"{m}/x" for m in FIELD_METRICS}
    return keys


def doc_form(key: str) -> list[str]:
    """How docs/keys.md must name a key: verbatim, or by its family for per-field and
    per-slice keys (``field_f1/<suffix>``; ``<metric>_by_<attribute>/<value>`` and the
    metric itself)."""
    slice_ = _SLICE.match(key)
    if slice_ is not None:
        return ["<metric>_by_<attribute>/<value>", slice_.group("metric")]
    if "/" in key:
        return [key.split("/", 1)[0] + "/<suffix>"]
    return [key]


def doc_gaps(keys: set[str], text: str) -> list[str]:
    """The keys whose form is not mentioned (in backticks) in `text`."""
    named = set(re.findall(r"`([^`\n]+)`", text))
    return sorted(k for k in keys if any(form not in named for form in doc_form(k)))


KEYS = logged_keys()


def test_the_harvest_covers_every_family() -> None:
    """The examples really produce every family, so the check below has something to check."""
    wanted = {
        "f1",
        "macro_f1",
        "parse_failure_rate",
        "f1_ci_low",
        "f1_by_currency/EUR",
        "field_f1/line_items.qty",
        "field_bleu_proxy/line_items.description",
        "bleu_proxy",
        "ngram_p4",
        "groundedness",
        "injection_obeyed_rate",
        "layout_score",
        "composite",
        "tokens_per_doc",
        "latency_p95_ms",
        "teds",
        "teds_normalized_ci_high",
        "kendall_tau_by_layout/single",
        "anls",
        "boundary_f1",
    }
    assert wanted - KEYS == set()


def test_keys_md_names_every_metric_key() -> None:
    text = (DOCS / "keys.md").read_text(encoding="utf-8")
    assert doc_gaps(KEYS, text) == [], "docs/keys.md does not name these metric keys"


def test_the_key_checker_catches_a_missing_key() -> None:
    text = "`f1`, `field_f1/<suffix>`, `<metric>_by_<attribute>/<value>`"
    assert doc_gaps({"f1", "field_f1/a.b", "f1_by_x/y"}, text) == []
    assert doc_gaps({"recall", "field_recall/a", "teds_by_x/y"}, text) == [
        "field_recall/a",
        "recall",
        "teds_by_x/y",
    ]


REFERENCE = ["README.md", *(f"docs/{p.name}" for p in sorted(DOCS.glob("*.md")))]


@pytest.mark.parametrize("name", REFERENCE)
def test_docs_stay_inside_the_repository(name: str) -> None:
    """No reference to files outside the repository, and every relative link resolves."""
    path = ROOT / name
    text = path.read_text(encoding="utf-8")
    for outside in ("DESIGN.md", "../shared", "/work/"):
        assert outside not in text, f"{name} refers to {outside!r} outside the repository"
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (path.parent / target).exists(), f"{name}: broken link {target}"


_REPO_PATH = re.compile(r"^(?:examples|benchmarks|tests|docs|extract_mlflow|\.ci)/[\w./*<>-]*$")


@pytest.mark.parametrize("name", REFERENCE)
def test_repository_paths_named_in_the_docs_exist(name: str) -> None:
    """A file of the repository named in backticks (`examples/ci.yml`, `tests/test_merge.py`;
    the site cannot link outside docs/, so the pages name such files) exists; a glob matches."""
    text = (ROOT / name).read_text(encoding="utf-8")
    spans = {s.split()[0] for s in re.findall(r"`([^`\n]+)`", text) if s.strip()}
    paths = sorted(s.rstrip(".,:;") for s in spans if _REPO_PATH.match(s) and "<" not in s)
    missing = [p for p in paths if not any(ROOT.glob(p))]
    assert missing == [], f"{name} names files that do not exist: {missing}"
