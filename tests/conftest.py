"""Shared fixtures: every test runs with its own HOME, git identity and memory repository."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from helpers import IDENTITY, ROOT, build_template, cli_cache_dir, copy_template  # noqa: E402,F401  (ROOT kept importable from here)

_session = pytest.MonkeyPatch()


def pytest_configure(config: pytest.Config) -> None:
    """The session runs as on a fresh machine, whatever the developer's HOME holds.

    The agent CLIs' cache is resolved first, from the real environment (cli_cache_dir), and
    exported as MEMREPO_TEST_CACHE to every install; then HOME and the XDG folders point at an
    empty folder and no git identity is inherited. What escapes the per-test isolation below
    (a module fixture, a `monkeypatch.undo()`) meets that empty HOME, as it would on CI.
    """
    if os.environ.get("MEMREPO_SKIP_E2E", "") not in ("", "0") and os.environ.get("MEMREPO_E2E_REQUIRE") == "1":
        # Here, not at collection: under pytest-xdist only the workers collect, and their errors
        # would read as a crashed worker.
        raise pytest.UsageError("MEMREPO_SKIP_E2E and MEMREPO_E2E_REQUIRE=1 contradict each other: unset one")
    _session.setenv("MEMREPO_TEST_CACHE", cli_cache_dir(os.environ))
    home = tempfile.mkdtemp(prefix="memrepo-tests-home-")
    _session.setenv("HOME", home)
    for key in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        _session.delenv(key, raising=False)
    for key in [k for k in os.environ if k.startswith("GIT_")] + ["EMAIL"]:
        _session.delenv(key, raising=False)


def pytest_unconfigure(config: pytest.Config) -> None:
    home = os.environ.get("HOME", "")
    _session.undo()
    if os.path.basename(home).startswith("memrepo-tests-home-"):  # the one pytest_configure made
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> str:
    """No test reads or writes the real ~/.memrepo, ~/.gitconfig or Claude settings.

    Returns the fake HOME. MEMREPO_DIR points at a path inside it that does not exist yet.
    """
    home = str(tmp_path_factory.mktemp("home"))
    for key in list(os.environ):
        # Inherited GIT_DIR/GIT_INDEX_FILE (tests run from a git hook) would aim git at another repo.
        if key.startswith(("CLAUDE_", "GIT_")) or key in ("MEMREPO_MODEL_CMD", "MEMREPO_PYTHON", "MEMREPO_DIR"):
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", home)
    monkeypatch.setenv("XDG_CONFIG_HOME", os.path.join(home, ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for key, value in IDENTITY.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("MEMREPO_DIR", os.path.join(home, "memrepo-default"))
    # A command's output must not depend on how busy the machine is: its progress line appears
    # only after seconds of work (test_curate_command failed once in four on a loaded machine).
    # The tests of the progress line set it themselves.
    monkeypatch.setenv("MEMREPO_PROGRESS_AFTER", "3600")
    # Nor on the terminal the suite runs in: widths come from COLUMNS, else the terminal, else
    # 120 columns (`review show`'s side by side); an xdist worker has COLUMNS=80, a developer's
    # terminal any width.
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("LINES", "24")
    return home


@pytest.fixture(scope="session")
def repo_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The repository `memrepo init` makes, made once per session (with the tests' git identity)."""
    return build_template(tmp_path_factory, identity=IDENTITY)


@pytest.fixture
def repo(repo_template: str, tmp_path: os.PathLike[str]) -> str:
    """A memory repository made by `memrepo init` (real git, hook shims in .git/hooks, merge
    driver, first commit, index): a private copy of the session's `repo_template` (init ~1 s,
    a copy a few ms). Tests of init itself call `repoinit.init`."""
    return copy_template(repo_template, tmp_path)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`MEMREPO_SKIP_E2E=1` skips the end-to-end tests (the real Claude Code CLI, ~400 MB on first
    use) for a quick local run; CI sets MEMREPO_E2E_REQUIRE=1, which never skips them."""
    if os.environ.get("MEMREPO_SKIP_E2E", "") in ("", "0"):
        return
    skip = pytest.mark.skip(reason="MEMREPO_SKIP_E2E is set (unset it to run the real Claude Code CLI)")
    for item in items:
        if "e2e" in item.keywords:
            item.add_marker(skip)
