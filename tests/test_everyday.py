"""Everyday polish: which repository a command uses, empty states, bad input named with its line."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from helpers import IDENTITY, ROOT, build_template, commit_all, write_memory
from memrepo.cli.main import cli
from memrepo.store import repoinit

FIXTURE = os.path.join(ROOT, "tests", "fixtures", "claude-code", "spotter-short-2.1.38.jsonl")


def invoke(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def _where(title: str) -> Callable[[str], None]:
    def setup(repo: str) -> None:
        write_memory(repo, "where", title=title)
        assert commit_all(repo).returncode == 0
    return setup


@pytest.fixture(scope="module")
def two_templates(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """The two repositories `two` copies, each made by init and one commit once per module."""
    return (build_template(tmp_path_factory, _where("Lives in the first"), identity=IDENTITY),
            build_template(tmp_path_factory, _where("Lives in the second"), identity=IDENTITY))


@pytest.fixture
def two(two_templates: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """The default repository and a second clone-like repository; MEMREPO_DIR names the first."""
    first, second = str(tmp_path / "first"), str(tmp_path / "second")
    for template, repo in zip(two_templates, (first, second)):
        shutil.copytree(template, repo, symlinks=True)
    monkeypatch.setenv("MEMREPO_DIR", first)
    return first, second


def test_a_commands_own_repo_wins_over_the_global_one(two: tuple[str, str]) -> None:
    first, second = two
    assert "Lives in the second" in invoke("show", "where", "--repo", second).stdout
    assert "Lives in the second" in invoke("--repo", first, "show", "where", "--repo", second).stdout
    assert "Lives in the first" in invoke("show", "where").stdout
    assert "0 open proposals" in invoke("review", "--repo", second).stderr
    added = invoke("add", "--repo", second, "--class", "fact", "--title", "Second only", "-d", "x")
    assert added.stdout.startswith(f"Added second-only to {second} (")


def test_a_second_clones_directory_is_named_not_silently_used(two: tuple[str, str], tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = two
    monkeypatch.delenv("MEMREPO_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the default ~/.memrepo
    default = os.path.join(str(tmp_path / "home"), ".memrepo")
    repoinit.init(default)
    monkeypatch.chdir(os.path.join(second, "memory"))
    result = invoke("list")
    assert result.exit_code == 0 and "where" not in result.stdout  # the default repository, empty
    assert (f"memrepo: using the memory repository at {default}, not the one this directory is in ({second}); "
            f"pass --repo {second}") in result.stderr
    quiet = invoke("list", "--repo", second)
    assert "where" in quiet.stdout and "not the one this directory is in" not in quiet.stderr


def test_empty_states_say_so_and_a_bad_class_is_an_error(two: tuple[str, str]) -> None:
    first, _ = two
    assert "no skill drafts yet" in invoke("skills", "list").stderr
    assert invoke("list", "--status", "retired").stderr == "0 memories matching status retired\n"
    bad = invoke("list", "--class", "nope")
    assert bad.exit_code == 2 and "'nope' is not one of 'rule', 'preference'" in bad.stderr
    assert "no open proposals to reject" in invoke("review", "reject", "--all").stderr
    assert "no runs yet: each capture, curate" in invoke("log", "--runs").stderr


def test_eval_names_the_store_and_a_bad_line_by_its_number(two: tuple[str, str], tmp_path: Path) -> None:
    first, _ = two
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text('{"prompt": "where does it live?", "expect": ["where"]}\n')
    result = invoke("eval", str(prompts))
    assert result.exit_code == 0
    assert f"scoring against the memory repository at {first} (--memory DIR scores a folder instead)" in result.stderr
    prompts.write_text('{"prompt": "where?", "expect": []}\n\n{bad\n')
    result = invoke("eval", str(prompts))
    assert result.exit_code == 1 and f"{prompts}:3: not JSON (" in result.stderr and "Traceback" not in result.output
    prompts.write_text('["not", "an", "object"]\n')
    result = invoke("eval", str(prompts))
    assert result.exit_code == 1 and f"{prompts}:1: not a labeled prompt" in result.stderr


def test_transcripts_index_reads_claude_config_dir(two: tuple[str, str], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "claude-config"
    project = config / "projects" / "-home-ann-src-spotter"
    project.mkdir(parents=True)
    shutil.copy(FIXTURE, project / "0b0f0e4a-1111-4222-8333-444455556666.jsonl")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    result = invoke("transcripts", "index", "--json")
    assert result.exit_code == 0
    assert '"files": 1' in result.stdout and '"turns": 0' not in result.stdout


def test_long_commands_report_progress_on_stderr(two: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    first, _ = two
    for n in range(12):
        write_memory(first, f"note-{n}", title=f"Note {n} about `docs/missing-{n}.md`")
    assert commit_all(first).returncode == 0
    monkeypatch.setenv("MEMREPO_PROGRESS_AFTER", "0")  # (by default: only after two seconds of work)
    result = invoke("verify", "--no-model")
    assert result.exit_code == 0
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("verify: memories checked: ")]
    assert lines[0].startswith("verify: memories checked: 0/13 (") and lines[-1].startswith("verify: memories checked: 13/13 (")
    assert 3 <= len(lines) <= 12  # a line every tenth of the way, not one per memory
    assert "curate: pairs judged" not in invoke("curate", "--no-model").stderr  # no model pass, no pairs
    monkeypatch.setenv("MEMREPO_PROGRESS_AFTER", "600")
    assert "memories checked" not in invoke("verify", "--no-model").stderr
