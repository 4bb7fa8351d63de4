"""Every command documents itself: a help text per command, a help text per option, every
argument named in its command's help, and every command mentioned in the README.

Commands are found by walking `extract_mlflow.cli.main` recursively, so new commands (and
groups of commands) are covered without touching this file.
"""

from __future__ import annotations

from pathlib import Path

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
