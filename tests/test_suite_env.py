"""The suite's own environment: a fresh machine's HOME, one agent CLI cache outside it, and the
template repository `repo` copies."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import subprocess
from pathlib import Path

import pytest

from helpers import IDENTITY, ROOT, cli_cache_dir, commit_all, git, head, write_memory

from memrepo.base import paths

INSTALL_CLI = os.path.join(ROOT, "tests", "e2e", "install_cli.sh")


def _inside(path: str, folder: str) -> bool:
    return os.path.commonpath([os.path.realpath(path), os.path.realpath(folder)]) == os.path.realpath(folder)


def test_the_cli_cache_is_resolved_from_the_real_environment_outside_every_fake_home(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 39: install_cli.sh ran under a test's fake HOME and installed ~900 MB into pytest's
    temporary folder on every run; the cache is resolved once, before any HOME is faked."""
    cache = os.environ.get("MEMREPO_TEST_CACHE", "")
    test_home = os.environ["HOME"]
    monkeypatch.undo()
    session_home = os.environ["HOME"]
    assert os.path.isabs(cache)
    assert not _inside(cache, test_home) and not _inside(cache, session_home)
    assert os.environ["MEMREPO_TEST_CACHE"] == cache  # what every install is handed


def test_cli_cache_dir_takes_the_variable_then_xdg_then_home() -> None:
    assert cli_cache_dir({"MEMREPO_TEST_CACHE": "/c/x", "XDG_CACHE_HOME": "/x", "HOME": "/h"}) == "/c/x"
    assert cli_cache_dir({"MEMREPO_TEST_CACHE": "", "XDG_CACHE_HOME": "/x", "HOME": "/h"}) == "/x/memrepo-tests"
    assert cli_cache_dir({"HOME": "/h"}) == "/h/.cache/memrepo-tests"


def test_undoing_the_per_test_environment_leaves_a_fresh_machine(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    """Issue 39: a test's `monkeypatch.undo()` fell back to the developer's HOME and git identity,
    so it passed here and failed on a machine without one ("Author identity unknown")."""
    monkeypatch.undo()
    assert not [k for k in os.environ if k.startswith("GIT_")]
    assert not os.path.exists(os.path.join(os.environ["HOME"], ".gitconfig"))
    got = subprocess.run(["git", "config", "--global", "--get", "user.name"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert (got.returncode, got.stdout) == (1, "")


def _fake_node_tools(bin_dir: Path, log: Path, slow: bool = False) -> None:
    """`npm ci` that records each call and installs a `gemini` answering the pinned version;
    `slow`: the install lasts until a second installer has surely started (one second)."""
    version = subprocess.run(["sed", "-n", 's|.*"@google/gemini-cli": "\\([^"]*\\)".*|\\1|p',
                              os.path.join(ROOT, "tests", "e2e", "agents", "gemini", "package.json")],
                             capture_output=True, text=True, check=True).stdout.strip()
    scripts = {
        "node": "#!/bin/sh\nexit 0\n",
        "npm": (f"#!/bin/sh\necho \"$@\" >> '{log}'\n{'sleep 1' if slow else ''}\nmkdir -p node_modules/.bin\n"
                f"printf '#!/bin/sh\\necho {version}\\n' > node_modules/.bin/gemini\n"
                "chmod +x node_modules/.bin/gemini\n"),
    }
    bin_dir.mkdir()
    for name, text in scripts.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(stat.S_IRWXU)


def test_install_cli_installs_into_the_cache_once_and_reuses_it(tmp_path: Path) -> None:
    log, cache = tmp_path / "npm.log", tmp_path / "cache"
    _fake_node_tools(tmp_path / "bin", log)
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
           "MEMREPO_TEST_CACHE": str(cache)}
    first = subprocess.run(["bash", INSTALL_CLI, "gemini"], env=env, capture_output=True, text=True)
    second = subprocess.run(["bash", INSTALL_CLI, "gemini"], env=env, capture_output=True, text=True)
    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    assert first.stdout == second.stdout and _inside(first.stdout.strip(), str(cache))
    assert log.read_text().splitlines() == ["ci --no-audit --no-fund --loglevel=error"]
    assert "installing" in first.stderr and second.stderr == ""


def test_two_installs_at_once_run_npm_once_and_print_the_same_binary(tmp_path: Path) -> None:
    """Issue 39: under pytest-xdist each worker runs install_cli.sh for the CLIs its tests need,
    often at the same moment; the second waits on the cache's lock and finds the first's install."""
    log, cache = tmp_path / "npm.log", tmp_path / "cache"
    _fake_node_tools(tmp_path / "bin", log, slow=True)
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
           "MEMREPO_TEST_CACHE": str(cache)}
    procs = [subprocess.Popen(["bash", INSTALL_CLI, "gemini"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert outs[0][0] == outs[1][0] and _inside(outs[0][0].strip(), str(cache))
    assert log.read_text().splitlines() == ["ci --no-audit --no-fund --loglevel=error"]
    assert sorted("installing" in err for _, err in outs) == [False, True]


def _files_naming(root: str, text: str) -> list[str]:
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != "objects"]
        for name in files:
            with open(os.path.join(folder, name), "rb") as fh:
                if text.encode() in fh.read():
                    found.append(os.path.relpath(os.path.join(folder, name), root))
    return found


def test_a_repo_copied_from_the_template_commits_through_hooks_of_its_own(repo: str, repo_template: str) -> None:
    """Issue 39: `repo` is a copy of one `memrepo init` per session; the copy's hooks validate and
    index the copy, and nothing in it points back at the template."""
    before = head(repo_template)
    assert head(repo) == before and repo != repo_template
    assert _files_naming(repo, repo_template) == []
    write_memory(repo, "bad", title="")
    assert commit_all(repo).returncode == 1  # the copy's pre-commit hook refuses it
    write_memory(repo, "bad", title="In the copy")
    assert commit_all(repo).returncode == 0
    with contextlib.closing(sqlite3.connect(f"file:{paths.index_db(repo)}?mode=ro", uri=True)) as db:
        assert [row[0] for row in db.execute("SELECT id FROM memories")] == ["bad"]  # its post-commit hook
    assert head(repo_template) == before and git(repo_template, "status", "--porcelain").stdout == ""
    author = git(repo, "log", "--format=%an <%ae>", "--reverse").stdout.splitlines()[0]
    assert author == f"{IDENTITY['GIT_AUTHOR_NAME']} <{IDENTITY['GIT_AUTHOR_EMAIL']}>"
