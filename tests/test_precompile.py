"""No cold first prompt (issue 44): the package is compiled where the hooks' interpreter looks
for it, by SessionStart under the plugin (into a folder the user owns, so a read-only plugin
folder still gets compiled code) and by `memrepo install` for the interpreter it writes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from helpers import ROOT
from memrepo.base import bundle
from memrepo.cli.main import cli
from memrepo.worker import precompile


def _pycs(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*.pyc")}


def _plugin_copy(tmp_path: Path) -> Path:
    plugin = tmp_path / "plugin"
    shutil.copytree(os.path.join(ROOT, "hooks"), plugin / "hooks")
    shutil.copytree(os.path.join(ROOT, "tools", "memrepo"), plugin / "tools" / "memrepo",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return plugin


def test_a_read_only_plugin_folder_runs_the_hook_on_code_compiled_ahead(tmp_path: Path, repo: str) -> None:
    plugin = _plugin_copy(tmp_path)
    data = tmp_path / "plugin-data"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "MEMREPO_DIR": repo, "MEMREPO_PYTHON": sys.executable,
           "CLAUDE_PLUGIN_ROOT": str(plugin), "CLAUDE_PLUGIN_DATA": str(data)}
    start = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "session_id": "s1"}).encode()
    started = subprocess.run(["sh", str(plugin / "hooks" / "run"), "session_start"], input=start, env=env,
                             capture_output=True, timeout=60)
    assert started.returncode == 0, started.stderr
    cache = data / "pycache"
    decide = cache / str(plugin).lstrip("/") / "tools" / "memrepo" / "recall"
    deadline = time.monotonic() + 120
    ours = cache / str(plugin).lstrip("/")
    while time.monotonic() < deadline and len(_pycs(ours)) < len(list((plugin / "tools").rglob("*.py"))):
        time.sleep(0.2)  # the compile runs detached
    assert any(name.startswith("decide.") for name in os.listdir(decide))
    for path in plugin.rglob("*"):
        path.chmod(path.stat().st_mode & ~0o222)  # read-only, as a system-wide install would be
    compiled = _pycs(ours)
    prompt = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "how do we deploy the shop service?",
                         "cwd": str(tmp_path), "session_id": "s1"}).encode()
    ran = subprocess.run(["sh", str(plugin / "hooks" / "run"), "user_prompt_submit"], input=prompt, env=env,
                         capture_output=True, timeout=60)
    assert (ran.returncode, ran.stderr) == (0, b"")
    assert _pycs(ours) == compiled  # the hook compiled none of memrepo: every module it imported was ready
    assert not list(plugin.rglob("__pycache__"))  # and nothing was written into the plugin folder


def test_session_start_compiles_only_when_the_prompt_path_is_not_current(tmp_path: Path) -> None:
    package = tmp_path / "memrepo"
    shutil.copytree(os.path.join(ROOT, "tools", "memrepo"), package, ignore=shutil.ignore_patterns("__pycache__"))
    assert not precompile.current(str(package))
    assert subprocess.run(precompile.argv(package=str(package))).returncode == 0
    assert precompile.current(str(package))
    assert precompile.spawn_if_needed(str(tmp_path / "log"), str(package)) is True  # the bundle is missing
    assert subprocess.run(precompile.bundle_argv(package=str(package))).returncode == 0
    assert precompile.spawn_if_needed(str(tmp_path / "log"), str(package)) is False
    os.utime(package / precompile.MARKER, (time.time() + 10, time.time() + 10))  # an upgrade changed the source
    assert not precompile.current(str(package))


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_install_compiles_the_package_for_the_interpreter_it_writes(isolated_env: str, tmp_path: Path,
                                                                     monkeypatch: object, agent: str) -> None:
    package = tmp_path / "site" / "memrepo"
    shutil.copytree(os.path.join(ROOT, "tools", "memrepo"), package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(precompile, "PACKAGE", str(package))  # type: ignore[attr-defined]
    monkeypatch.setattr(precompile.compile_for, "__defaults__", (str(package),))  # type: ignore[attr-defined]
    result = CliRunner().invoke(cli, ["install", agent], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    sources = [p for p in package.rglob("*.py")]
    tag = sys.implementation.cache_tag
    missing = [str(p) for p in sources if not (p.parent / "__pycache__" / f"{p.stem}.{tag}.pyc").exists()]
    assert missing == []
    tools = str(package.parent)  # and the prompt path's bundle, where that agent's prompt hook reads it
    assert bundle.current(bundle.path(tools), tools)


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_an_agent_s_session_start_writes_the_prompt_path_s_bundle(tmp_path: Path, repo: str, agent: str) -> None:
    """Codex's and Gemini's SessionStart, as `memrepo install` registers it, compiles ahead like
    Claude Code's: a new version's first prompt reads the bundle, not the import system."""
    tools = _plugin_copy(tmp_path) / "tools"
    env = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], "MEMREPO_DIR": repo}
    start = json.dumps({"hook_event_name": "SessionStart", "source": "startup", "session_id": "s1", "cwd": str(tmp_path)})
    ran = subprocess.run([sys.executable, "-I", "-S", str(tools / "memrepo" / "agents" / agent / "entry.py"), "SessionStart"],
                         input=start.encode(), env=env, capture_output=True, timeout=60)
    assert (ran.returncode, ran.stderr) == (0, b"")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not bundle.current(bundle.path(str(tools)), str(tools)):
        time.sleep(0.2)  # written by a detached process
    assert bundle.current(bundle.path(str(tools)), str(tools))
