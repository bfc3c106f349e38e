"""Every command and subcommand explains itself under `--help`."""

from __future__ import annotations

import os

import click
import pytest
from click.testing import CliRunner

from memrepo.cli.main import cli


def _walk(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    found: list[tuple[tuple[str, ...], click.Command]] = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        found.append((path + (name,), command))
        if isinstance(command, click.Group):
            found.extend(_walk(command, path + (name,)))
    return found


COMMANDS = _walk(cli)


def test_the_command_set() -> None:
    # a new command must be added here on purpose (and to README.md)
    assert {" ".join(p) for p, _ in COMMANDS} >= {
        "init", "add", "show", "list", "search", "index", "doctor", "log", "fmt", "recall", "install", "uninstall"}


@pytest.mark.parametrize("path", [(), *(p for p, _ in COMMANDS)], ids=lambda p: " ".join(p) or "memrepo")
def test_help(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(cli, [*path, "--help"], catch_exceptions=False)
    assert result.exit_code == 0
    command = dict(COMMANDS).get(path, cli)
    assert (command.help or "").strip(), f"`memrepo {' '.join(path)}` has no help text"
    assert result.stdout.startswith(f"Usage: {' '.join(('cli',) + path)} ")
    first = command.help.strip().splitlines()[0].strip()  # type: ignore[union-attr]
    assert first.split()[0] in result.stdout
    for param in command.params:
        if isinstance(param, click.Option) and not param.hidden:
            assert (param.help or "").strip(), f"`memrepo {' '.join(path)} {param.opts[0]}` has no help text"


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=lambda p: " ".join(p))
def test_short_help_shows_in_the_listing(path: tuple[str, ...]) -> None:
    parent = [*path[:-1], "--help"]
    listing = CliRunner().invoke(cli, parent, catch_exceptions=False).stdout
    assert f"  {path[-1]} " in listing


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=lambda p: " ".join(p))
def test_every_command_is_in_the_readme(path: tuple[str, ...]) -> None:
    # sqlite-utils' docs test: a command nobody can find in the README does not exist for users.
    assert f"memrepo {' '.join(path)}" in README, f"`memrepo {' '.join(path)}` is not documented in README.md"


def test_readme_quickstart_has_exactly_two_commands() -> None:
    quickstart = README.split("## Quickstart", 1)[1].split("\n## ", 1)[0].split("### ", 1)[0]
    blocks = quickstart.split("```sh\n")[1:]
    commands = [b.split("```", 1)[0].strip() for b in blocks]
    assert len(commands) == 2 and all("\n" not in c for c in commands), commands
    assert commands[1].endswith(".venv/bin/python -m pytest")
    ci = open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8").read()
    assert commands[1] in ci, "the CI script must run the README's test command"
