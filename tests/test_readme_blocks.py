"""Docs that run: every ```python and ```console block of README.md, of the documentation pages
(docs/*.md, the mkdocs site) and of examples/*/README.md is executed, and a console block's shown
output is compared with what the command prints (modulo white space; a line ``...`` stands for
any number of lines).

Blocks run in a temporary copy of the repository's ``examples/`` (the working directory), with
``MLFLOW_TRACKING_URI`` on a temporary SQLite store, so nothing is written into the repository.

The comment on the line before a block (blank lines aside) can say how it runs:

- ``<!-- not run: REASON -->``: illustrative only (placeholders such as ``<id>``); the reason
  is required and the test lists every such block;
- ``<!-- run with server after: extract-mlflow ARGS -->``: the block needs a tracking server;
  it runs against the session's ``mlflow_server`` after the command (and is marked slow).

Other fence languages are never executed; :data:`NOT_EXECUTED` says why for each, and a block
of a language it does not know fails the test (no silent skip).
"""

from __future__ import annotations

import re
import shlex
import shutil
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from extract_mlflow.cli import main

ROOT = Path(__file__).resolve().parents[1]
PAGES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted((ROOT / "examples").glob("*/README.md")),
]

NOT_EXECUTED = {
    "bash": "installation and shell commands with side effects (pip install, a local store)",
    "toml": "configuration excerpts: parsed as TOML (test_toml_blocks_parse), not run",
    "yaml": "a CI excerpt; tests/integration/test_ci_example.py runs examples/ci.yml",
    "": "a file tree with no command",
}
OWN_TEST = {
    # console blocks another test already runs and compares (the same rule: modulo white space)
    "examples/tables/README.md": "tests/structure/test_examples_tables.py runs its console blocks",
}
FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w-]*)[ \t]*$")
MARKER = re.compile(
    r"^\s*<!--\s*(?P<kind>not run|run with server after):\s*(?P<text>.*?)\s*-->\s*$"
)


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository
    line: int  # of the opening fence, 1-based
    lang: str
    body: str
    marker: str | None  # "not run" or "run with server after"
    marker_text: str

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of one markdown page, with the marker comment before each."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, start = m["indent"], i
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1
        before = start - 1
        while before >= 0 and not lines[before].strip():
            before -= 1
        marker = MARKER.match(lines[before]) if before >= 0 else None
        found.append(
            Block(
                page=page.relative_to(ROOT).as_posix(),
                line=start + 1,
                lang=m["lang"],
                body="\n".join(body),
                marker=marker["kind"] if marker else None,
                marker_text=marker["text"] if marker else "",
            )
        )
    return found


ALL = [b for page in PAGES for b in blocks(page)]
RUN = [b for b in ALL if b.lang in ("python", "console") and b.marker is None]
SERVER = [b for b in ALL if b.marker == "run with server after"]
MARKED = [b for b in ALL if b.marker == "not run"]


def test_every_block_is_accounted_for() -> None:
    """Each block is run, run elsewhere, marked not run with a reason, or of a language that is
    never executed for a stated reason."""
    unknown = [b.id for b in ALL if b.lang not in ("python", "console", *NOT_EXECUTED)]
    assert unknown == [], f"blocks of a language this test does not know: {unknown}"
    # blocks that run, counted when the reference moved from README.md into docs/: lower these
    # only when a block is removed on purpose (a block moved to another page still counts)
    assert len(RUN) >= 12, f"only {len(RUN)} blocks run: was one dropped?"
    assert len(SERVER) >= 1, f"only {len(SERVER)} server blocks run: was one dropped?"
    assert {b.lang for b in RUN} == {"python", "console"}
    hidden = [
        b.id
        for b in ALL
        if b.lang == ""
        and any(x.lstrip().startswith(("$ ", "extract-mlflow")) for x in b.body.splitlines())
    ]
    assert hidden == [], f"commands in blocks with no language (make them console): {hidden}"


def test_not_run_markers_carry_reasons() -> None:
    for b in MARKED:
        assert len(b.marker_text.split()) >= 3, f"{b.id}: `not run` needs a reason"
        assert b.lang in ("python", "console"), f"{b.id}: only python/console blocks run"
    listed = "\n".join(f"{b.id} ({b.lang}): {b.marker_text}" for b in MARKED)
    print(f"blocks not run:\n{listed}")


def test_the_marker_parser_sees_markers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = tmp_path / "README.md"
    page.write_text(
        "intro\n\n<!-- not run: shows a placeholder id -->\n\n```console\n$ x <id>\n```\n"
        "\n  ```python\n  x = 1\n  ```\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    first, second = blocks(page)
    assert (first.lang, first.marker, first.marker_text) == (
        "console",
        "not run",
        "shows a placeholder id",
    )
    assert (second.lang, second.marker, second.body) == ("python", None, "x = 1")


def test_toml_blocks_parse() -> None:
    toml = [b for b in ALL if b.lang == "toml"]
    assert toml
    for b in toml:
        tomllib.loads(b.body)


# -- console blocks ------------------------------------------------------------------------


def commands(block: str) -> list[tuple[str, str]]:
    """(command line, shown output) of each ``$ `` line of a console block (``\\`` joins
    continued lines)."""
    out: list[tuple[str, str]] = []
    lines = block.splitlines()
    i = 0
    while i < len(lines):
        assert lines[i].startswith("$ "), f"expected a `$ ` command, got {lines[i]!r}"
        command = lines[i][2:]
        while command.endswith("\\"):
            i += 1
            command = command[:-1] + " " + lines[i].strip()
        i += 1
        shown = []
        while i < len(lines) and not lines[i].startswith("$ "):
            shown.append(lines[i])
            i += 1
        out.append((command, "\n".join(shown)))
    return out


def squeeze(line: str) -> str:
    return " ".join(line.split())


def matches(shown: str, printed: str) -> bool:
    """Whether the printed text is the shown one modulo white space, where a shown line
    ``...`` stands for any number of printed lines."""
    want = [squeeze(x) for x in shown.splitlines() if x.strip()]
    got = [squeeze(x) for x in printed.splitlines() if x.strip()]

    def at(w: int, g: int) -> bool:
        if w == len(want):
            return g == len(got)
        if want[w] == "...":
            return any(at(w + 1, k) for k in range(g, len(got) + 1))
        return g < len(got) and got[g] == want[w] and at(w + 1, g + 1)

    return at(0, 0)


def test_matches_is_strict() -> None:
    assert matches("a  b\n...\nz", "a b\nc\nd\nz")
    assert matches("a\n...", "a\nb")
    assert not matches("a\nz", "a\nb\nz")
    assert not matches("a", "a\nb")
    assert not matches("a\n...\ny", "a\nb\nz")


def run_command(command: str) -> str:
    argv = shlex.split(command)
    assert argv[0] == "extract-mlflow", f"console blocks run extract-mlflow, not {argv[0]!r}"
    result = CliRunner().invoke(main, argv[1:], catch_exceptions=False)
    assert result.exit_code == 0, f"`{command}` exited {result.exit_code}:\n{result.output}"
    return result.output


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temporary working directory holding a copy of examples/, with a temporary store."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path / 'mlflow.db'}")
    yield tmp_path


def run_block(block: Block) -> None:
    if block.lang == "python":
        namespace: dict[str, Any] = {"__name__": "__readme__"}
        exec(compile(block.body, block.id, "exec"), namespace)
        return
    for command, shown in commands(block.body):
        printed = run_command(command)
        assert matches(shown, printed), f"{block.id}: `{command}` now prints:\n{printed}"


@pytest.mark.parametrize("block", RUN, ids=[b.id for b in RUN])
def test_block_runs(block: Block, workdir: Path) -> None:
    if block.lang == "console" and block.page in OWN_TEST:
        pytest.skip(OWN_TEST[block.page])
    run_block(block)


@pytest.mark.slow
@pytest.mark.parametrize("block", SERVER, ids=[b.id for b in SERVER])
def test_server_block_runs(
    block: Block, workdir: Path, mlflow_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MLFLOW_TRACKING_URI", mlflow_server.uri)
    run_command(block.marker_text)
    run_block(block)
