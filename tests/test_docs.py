"""Every command and subcommand explains itself under `--help`, and the documentation is current:
the CLI reference, the README's two commands, links, settings and environment variables."""

from __future__ import annotations

import os
import re

import click
import pytest
from click.testing import CliRunner

import cli_reference
from memrepo.cli.main import cli
from memrepo.store import config


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
    # a new command must be added here on purpose (and docs/cli.md written again)
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


def _read(*parts: str) -> str:
    with open(os.path.join(ROOT, *parts), encoding="utf-8") as fh:
        return fh.read()


README = _read("README.md")
DOCS = sorted(["README.md", "CONTRIBUTING.md"] + [os.path.join("docs", n) for n in os.listdir(os.path.join(ROOT, "docs"))
                                                   if n.endswith(".md")])


def test_the_cli_reference_is_current() -> None:
    # docs/cli.md is generated from --help: a changed option or help text must be written there too.
    assert _read("docs", "cli.md") == cli_reference.render(), \
        "docs/cli.md is out of date: run `.venv/bin/python tests/cli_reference.py --write`"


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=lambda p: " ".join(p))
def test_every_command_is_in_the_cli_reference(path: tuple[str, ...]) -> None:
    # sqlite-utils' docs test: a command nobody can find in the documentation does not exist for users.
    assert f"\n## memrepo {' '.join(path)}\n" in _read("docs", "cli.md"), f"`memrepo {' '.join(path)}` is not in docs/cli.md"


def test_readme_quickstart_has_exactly_two_commands() -> None:
    quickstart = README.split("## Quickstart", 1)[1].split("\n## ", 1)[0].split("### ", 1)[0]
    blocks = quickstart.split("```sh\n")[1:]
    commands = [b.split("```", 1)[0].strip() for b in blocks]
    assert len(commands) == 2 and all("\n" not in c for c in commands), commands
    assert commands[0].endswith("memrepo demo"), "the first command runs the main job on the bundled examples"
    assert commands[1].endswith(".venv/bin/python -m pytest")
    ci = _read(".ci", "run")
    assert commands[1] in ci, "the CI script must run the README's test command"


def test_the_readme_is_short() -> None:
    # Issue 39: about 150 lines for the user; the rest lives under docs/.
    assert len(README.splitlines()) <= 180


def _anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation but `-` and `_` dropped, spaces to dashes."""
    found = set()
    for line in text.splitlines():
        if line.startswith("#") and not line.startswith("#!"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


@pytest.mark.parametrize("doc", DOCS)
def test_every_link_in_the_docs_resolves(doc: str) -> None:
    text = _read(doc)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(ROOT, os.path.dirname(doc), path)) if path else os.path.join(ROOT, doc)
        if not os.path.exists(full):
            broken.append(target)
        elif anchor and full.endswith(".md"):
            with open(full, encoding="utf-8") as fh:
                if anchor not in _anchors(fh.read()):
                    broken.append(target)
    assert broken == [], f"{doc}: links to nothing: {broken}"


@pytest.mark.parametrize("doc", DOCS)
def test_the_docs_hold_no_path_of_this_machine(doc: str) -> None:
    text = _read(doc)
    assert ROOT not in text and os.path.expanduser("~") + "/" not in text


def _setting_keys() -> set[str]:
    """Every settings key the library reads, found in the source the way it reads them."""
    keys = set(config.LOCAL_ONLY) | {"recall_only"}
    pattern = re.compile(r'(?:config\.(?:get|local_only)\([^,()]+, |local\([^()]*\)\.get\(|settings\.get\()"([a-z_]+)"')
    for folder, _, files in os.walk(os.path.join(ROOT, "tools", "memrepo")):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8") as fh:
                    keys.update(pattern.findall(fh.read()))
    return keys


def test_every_setting_is_documented() -> None:
    keys = _setting_keys()
    assert {"model_cmd", "model_timeout", "capture_review", "curate", "projects", "sync", "prompt_fallback"} <= keys
    text = _read("docs", "configuration.md")
    assert sorted(k for k in keys if f"`{k}`" not in text) == []


def test_every_environment_variable_is_documented() -> None:
    found: set[str] = set()
    for folder, _, files in os.walk(os.path.join(ROOT, "tools", "memrepo")):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8") as fh:
                    found.update(re.findall(r"\bMEMREPO_[A-Z0-9_]*[A-Z0-9]\b", fh.read()))
    assert {"MEMREPO_DIR", "MEMREPO_RECALL_ONLY", "MEMREPO_MODEL_CMD"} <= found
    text = _read("docs", "configuration.md")
    assert sorted(v for v in found if f"`{v}`" not in text) == []
