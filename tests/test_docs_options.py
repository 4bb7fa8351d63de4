"""A newcomer finds every option and every config key in the documentation site (docs/):

- every option of every command (``extract-mlflow <command> --help``) is named, in backticks,
  in that command's section of docs/cli.md;
- every key of every config model (the scoring config, its sections, the sections of the
  registered metric families, and the ``[[gate]]`` tables of a gates file) is named, in
  backticks, in its section of docs/config.md;
- the site builds with ``mkdocs build --strict`` (into a temporary folder, never the repo).

Commands are walked from the CLI and config models from the models' own fields, so a new
option, key or section fails here until it is documented.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from pydantic import BaseModel

from extract_mlflow.cli import main
from extract_mlflow.config import Config, FieldRule, LayoutProfile
from extract_mlflow.families import FAMILIES
from extract_mlflow.gates import Gate

ROOT = Path(__file__).resolve().parents[1]
CLI_PAGE = ROOT / "docs" / "cli.md"
CONFIG_PAGE = ROOT / "docs" / "config.md"


def walk(
    command: click.Command, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], click.Command]]:
    """(argv words, command) for the command and every visible command under it."""
    found = [(path, command)]
    if isinstance(command, click.Group):
        ctx = click.Context(command, info_name="extract-mlflow")
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                found += walk(sub, (*path, name))
    return found


def sections(text: str, level: str) -> dict[str, str]:
    """Heading text → body, for the headings of one level (``###``) of a markdown page; a
    body runs to the next heading of that level or higher."""
    found: dict[str, str] = {}
    parts = re.split(rf"^({level} .*)$", text, flags=re.MULTILINE)
    for heading, body in zip(parts[1::2], parts[2::2], strict=True):
        stop = re.search(rf"^#{{1,{len(level) - 1}}} ", body, flags=re.MULTILINE)
        found[heading[len(level) + 1 :].strip()] = body[: stop.start()] if stop else body
    return found


def named(text: str) -> set[str]:
    """Every backticked span of a markdown text."""
    return set(re.findall(r"`([^`\n]+)`", text))


COMMANDS = walk(main)
IDS = [" ".join(("extract-mlflow", *path)) for path, _ in COMMANDS]


def test_the_section_splitter() -> None:
    text = "# A\n## B\n### `x`\nx1 `--a`\n### `y`\ny1\n## C\nc1\n"
    assert sections(text, "###") == {"`x`": "\nx1 `--a`\n", "`y`": "\ny1\n"}
    assert named("a `--a` b `c d`") == {"--a", "c d"}


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=IDS)
def test_every_option_is_in_the_command_reference(
    path: tuple[str, ...], command: click.Command
) -> None:
    heading = "`" + " ".join(("extract-mlflow", *path)) + "`"
    found = sections(CLI_PAGE.read_text(encoding="utf-8"), "###")
    assert heading in found, f"docs/cli.md has no section {heading}"
    options = [
        opt
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden
        for opt in param.opts
        if opt.startswith("--")
    ]
    missing = sorted(set(options) - named(found[heading]))
    assert missing == [], f"docs/cli.md, {heading}, does not name {missing}"


def _model(annotation: object) -> type[BaseModel] | None:
    """The pydantic model a field holds (itself, or the values of a dict of models)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    args: tuple[object, ...] = getattr(annotation, "__args__", ())
    if getattr(annotation, "__origin__", None) is dict and len(args) == 2:
        return _model(args[-1])
    return None


def config_models() -> list[tuple[str, type[BaseModel]]]:
    """(docs/config.md heading, model whose keys that section must name): the config, every
    model reachable from its fields, every registered family's section, and the gate."""
    headings: dict[type[BaseModel], str] = {
        Config: "Top level",
        FieldRule: '`[fields."<path>"]`',
        LayoutProfile: "`[layout]`",  # the [layout.profiles.<topic>] table of that section
        Gate: "Gates file: `[[gate]]`",
    }
    found: list[tuple[str, type[BaseModel]]] = []
    todo: list[tuple[str, type[BaseModel]]] = [("", Config), ("", Gate)]
    todo += [(family.name, family.section) for family in FAMILIES]
    seen: set[type[BaseModel]] = set()
    while todo:
        name, model = todo.pop(0)
        if model in seen:
            continue
        seen.add(model)
        found.append((headings.get(model, f"`[{name}]`"), model))
        for key, info in model.model_fields.items():
            inner = _model(info.annotation)
            if inner is not None:
                todo.append((key, inner))
    return found


def test_the_model_walk_finds_every_section() -> None:
    models = dict(config_models())
    assert {
        "Top level",
        '`[fields."<path>"]`',
        "`[layout]`",
        "`[fidelity]`",
        "`[structure]`",
        "`[statistics]`",
        "`[text_accuracy]`",
        "Gates file: `[[gate]]`",
    } <= set(models)
    assert LayoutProfile in {model for _, model in config_models()}


def test_every_config_key_is_in_the_config_reference() -> None:
    found = sections(CONFIG_PAGE.read_text(encoding="utf-8"), "###")
    missing: list[str] = []
    for heading, model in config_models():
        assert heading in found, f"docs/config.md has no section {heading}"
        keys = named(found[heading])
        missing += [f"{heading}: {key}" for key in model.model_fields if key not in keys]
    assert missing == [], f"docs/config.md does not name: {missing}"


@pytest.mark.slow
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="mkdocs-material comes with the dev extras")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "site" / "config" / "index.html").exists()
