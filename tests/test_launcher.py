"""The plugin's `bin/memrepo` and its venvs: one per plugin version, a clear word while setup runs, upgrades once."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import ROOT, commit_all, write_memory
from memrepo.claude import session_start
from memrepo.base import paths
from memrepo.store import index
from memrepo.worker import bootstrap, plugin_venv

LAUNCHER = os.path.join(ROOT, "bin", "memrepo")


def plugin_copy(tmp_path: Path, version: str) -> Path:
    """A plugin root of `version`: the manifest, bin/ and tools/ (what Claude Code installs)."""
    root = tmp_path / f"plugin-{version}"
    (root / ".claude-plugin").mkdir(parents=True)
    manifest = json.loads(Path(ROOT, ".claude-plugin", "plugin.json").read_text())
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({**manifest, "version": version}))
    shutil.copytree(Path(ROOT, "bin"), root / "bin")
    shutil.copytree(Path(ROOT, "tools", "memrepo"), root / "tools" / "memrepo",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return root


def fake_venv(data: Path, version: str, ready: bool = True) -> Path:
    """A venv for plugin `version` whose python is this interpreter (which has memrepo)."""
    venv = data / plugin_venv.venv_name(version)
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    if ready:
        plugin_venv.mark_ready(str(venv), version)
    return venv


def bare_env(data: Path, root: Path | None, repo: str) -> dict[str, str]:
    """An environment like the Bash tool's: no MEMREPO_PYTHON, no pip-installed memrepo on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("MEMREPO_PYTHON", "PYTHONPATH")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if p and not os.path.exists(os.path.join(p, "memrepo")))
    env.update(CLAUDE_PLUGIN_DATA=str(data), MEMREPO_DIR=repo)
    if root is not None:
        env["CLAUDE_PLUGIN_ROOT"] = str(root)
    return env


def launch(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", str(root / "bin" / "memrepo"), *args], env=env, capture_output=True, text=True,
                          timeout=60, cwd="/")


def report(repo: str, state: str, **extra: object) -> None:
    os.makedirs(paths.index_dir(repo), exist_ok=True)
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    Path(paths.index_dir(repo), "bootstrap.json").write_text(json.dumps({"state": state, "at": at, **extra}))


@pytest.fixture
def store(repo: str) -> str:
    write_memory(repo, "vpn-drops", title="The office VPN drops at noon", description="Reconnect after 12:00.")
    assert commit_all(repo, "memories").returncode == 0
    return repo


def test_the_launcher_runs_the_cli_on_this_versions_venv(tmp_path: Path, store: str) -> None:
    root = plugin_copy(tmp_path, "0.2.0")
    fake_venv(tmp_path / "data", "0.2.0")
    proc = launch(root, bare_env(tmp_path / "data", root, store), "show", "vpn-drops")
    assert proc.returncode == 0, proc.stderr
    assert "title: The office VPN drops at noon" in proc.stdout and "History:" in proc.stdout


def test_while_setup_runs_the_launcher_says_so_and_asks_to_try_again(tmp_path: Path) -> None:
    repo = str(tmp_path / "mem")
    root = plugin_copy(tmp_path, "0.2.0")
    fake_venv(tmp_path / "data", "0.2.0", ready=False)  # venv made, pip still installing
    report(repo, "installing", venv="…")
    proc = launch(root, bare_env(tmp_path / "data", root, repo), "show", "vpn-drops")
    assert proc.returncode == 75, proc
    assert "still being set up in the background (step: installing, since " in proc.stderr
    assert "try again in a minute" in proc.stderr and "Traceback" not in proc.stderr


def test_after_a_failed_setup_the_launcher_names_the_error_and_the_fix(tmp_path: Path) -> None:
    repo = str(tmp_path / "mem")
    root = plugin_copy(tmp_path, "0.2.0")
    report(repo, "failed", error="pip install failed: ERROR: No matching distribution found for setuptools")
    proc = launch(root, bare_env(tmp_path / "data", root, repo), "--version")
    assert proc.returncode == 1
    assert "background setup failed: pip install failed: ERROR: No matching distribution" in proc.stderr
    assert "pip install memrepo" in proc.stderr


def test_another_versions_venv_is_never_used(tmp_path: Path, store: str) -> None:
    root = plugin_copy(tmp_path, "0.2.0")
    old = fake_venv(tmp_path / "data", "0.1.0")
    # An `init` run by 0.1.0 recorded its venv's python for the repository: not taken either.
    Path(store, ".git", "memrepo-python").write_text(str(old / "bin" / "python") + "\n")
    proc = launch(root, bare_env(tmp_path / "data", root, store), "--version")
    assert proc.returncode == 1 and "no interpreter with its dependencies yet" in proc.stderr


def test_without_plugin_data_the_launcher_finds_the_plugins_data_folder(tmp_path: Path, store: str) -> None:
    root = plugin_copy(tmp_path, "0.2.0")
    config = tmp_path / "claude-config"
    fake_venv(config / "plugins" / "data" / "memrepo-inline", "0.2.0")
    env = bare_env(tmp_path / "unused", root, store)
    del env["CLAUDE_PLUGIN_DATA"], env["CLAUDE_PLUGIN_ROOT"]  # what the Bash tool may not have
    env["CLAUDE_CONFIG_DIR"] = str(config)
    proc = launch(root, env, "show", "vpn-drops")
    assert proc.returncode == 0, proc.stderr


def test_an_upgrade_starts_the_bootstrap_once_for_the_new_version(tmp_path: Path, store: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    old_root, new_root = plugin_copy(tmp_path, "0.1.0"), plugin_copy(tmp_path, "0.2.0")
    fake_venv(data, "0.1.0")
    index.update(store)
    spawned: list[str] = []
    monkeypatch.setattr(session_start, "spawn_bootstrap", lambda repo, reason: spawned.append(reason) or True)
    monkeypatch.setenv("MEMREPO_DIR", store)
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(data))
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(old_root))
    session_start.on_session_start({})
    assert spawned == []  # the cache is fresh and 0.1.0 has its venv
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(new_root))
    session_start.on_session_start({})
    assert spawned == ["plugin 0.2.0 has no venv yet (venv-0.2.0)"]
    # The bootstrap of 0.2.0 does not take 0.1.0's venv, even where init recorded it.
    Path(store, ".git", "memrepo-python").write_text(str(data / "venv-0.1.0" / "bin" / "python") + "\n")
    monkeypatch.setattr(sys, "executable", str(data / "venv-0.1.0" / "bin" / "python"))
    assert bootstrap.find_python(store) is None
    fake_venv(data, "0.2.0")  # what prepare_venv makes
    assert bootstrap.find_python(store) == str(data / "venv-0.2.0" / "bin" / "python")
    spawned.clear()
    for root in (old_root, new_root, old_root):  # two versions side by side: nothing more to do
        monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(root))
        session_start.on_session_start({})
    assert spawned == []


def test_a_cache_of_another_schema_is_left_alone_and_this_one_is_not_rebuilt(store: str) -> None:
    index.update(store)
    other = Path(paths.index_dir(store), f"memrepo-v{paths.SCHEMA_VERSION + 1}.sqlite3")
    other.write_bytes(b"a newer memrepo's cache")
    before = os.stat(paths.index_db(store)).st_ino
    report_ = index.update(store)
    assert other.read_bytes() == b"a newer memrepo's cache"
    assert os.stat(paths.index_db(store)).st_ino == before and not report_.rebuilt
