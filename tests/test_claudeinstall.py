"""`memrepo install claude` / `uninstall claude` against a settings.json with other people's hooks."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from click.testing import CliRunner

from memrepo.claude import install as claudeinstall
from memrepo.cli.main import cli

THEIRS = {
    "model": "opus",
    "hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "/usr/local/bin/their-hook"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
}


def settings(home: str) -> dict:
    return json.load(open(os.path.join(home, ".claude", "settings.json"), encoding="utf-8"))


def write_settings(home: str, data: dict) -> None:
    os.makedirs(os.path.join(home, ".claude"), exist_ok=True)
    json.dump(data, open(os.path.join(home, ".claude", "settings.json"), "w"))


def test_install_is_idempotent_and_keeps_other_hooks(isolated_env: str) -> None:
    write_settings(isolated_env, THEIRS)
    first = CliRunner().invoke(cli, ["install", "claude"], catch_exceptions=False)
    assert first.exit_code == 0 and "installed memrepo hooks in" in first.output
    after = settings(isolated_env)
    again = CliRunner().invoke(cli, ["install", "claude"], catch_exceptions=False)
    assert "already installed in" in again.output
    assert settings(isolated_env) == after
    ups = after["hooks"]["UserPromptSubmit"]
    assert ups[0] == THEIRS["hooks"]["UserPromptSubmit"][0]
    assert ups[1]["hooks"][0] == {"type": "command", "command": sys.executable,
                                  "args": ["-I", "-S", claudeinstall.ENTRY, "UserPromptSubmit"], "timeout": 10}
    assert after["hooks"]["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"
    assert after["hooks"]["Stop"][0] == THEIRS["hooks"]["Stop"][0] and after["model"] == "opus"
    assert after["hooks"]["Stop"][1]["hooks"][0]["args"] == ["-I", "-S", claudeinstall.ENTRY, "Stop"]
    assert not os.path.exists(os.path.join(isolated_env, ".claude", "settings.json.bak"))


def test_uninstall_removes_only_memrepo(isolated_env: str) -> None:
    write_settings(isolated_env, THEIRS)
    CliRunner().invoke(cli, ["install", "claude"], catch_exceptions=False)
    out = CliRunner().invoke(cli, ["uninstall", "claude"], catch_exceptions=False)
    assert out.exit_code == 0 and "removed memrepo hooks from" in out.output
    assert settings(isolated_env) == THEIRS
    out = CliRunner().invoke(cli, ["uninstall", "claude"], catch_exceptions=False)
    assert "no memrepo hooks in" in out.output


def test_install_into_missing_settings_and_refuses_broken_json(isolated_env: str) -> None:
    assert CliRunner().invoke(cli, ["install", "claude"], catch_exceptions=False).exit_code == 0
    assert set(settings(isolated_env)["hooks"]) == {"UserPromptSubmit", "SessionStart", "Stop", "PreCompact", "SessionEnd"}
    path = os.path.join(isolated_env, ".claude", "settings.json")
    open(path, "w").write("{broken")
    result = CliRunner().invoke(cli, ["install", "claude"], catch_exceptions=False)
    assert result.exit_code == 1
    assert "is not valid JSON" in result.output and "fix the file by hand" in result.output
    assert open(path).read() == "{broken"


@pytest.mark.parametrize("old", ["memrepo.hookio", "memrepo.claude.hookio", "memrepo.claude.entry"])
def test_install_replaces_the_entries_of_earlier_versions(isolated_env: str, old: str) -> None:
    stale = {"hooks": [{"type": "command", "command": "/usr/bin/python3", "args": ["-I", "-m", old, "UserPromptSubmit"]}]}
    write_settings(isolated_env, {"hooks": {"UserPromptSubmit": [THEIRS["hooks"]["UserPromptSubmit"][0], stale]}})
    assert CliRunner().invoke(cli, ["install", "claude"], catch_exceptions=False).exit_code == 0
    ups = settings(isolated_env)["hooks"]["UserPromptSubmit"]
    assert [h["hooks"][0].get("args", [None])[1:3] for h in ups] == [[], ["-S", claudeinstall.ENTRY]]


def test_the_installed_command_runs_the_hook_without_site_or_sh(isolated_env: str) -> None:
    """The interpreter and its flags go straight into the settings (issue 44): the hook runs by path."""
    assert CliRunner().invoke(cli, ["install", "claude"], catch_exceptions=False).exit_code == 0
    handler = settings(isolated_env)["hooks"]["SessionEnd"][0]["hooks"][0]
    proc = subprocess.run([handler["command"], *handler["args"][:-1], "NoSuchEvent"], input=b"{}", capture_output=True,
                          cwd=isolated_env, timeout=30)
    assert handler["args"][:2] == ["-I", "-S"] and (proc.returncode, proc.stdout) == (0, b"")
    assert b"unknown hook event 'NoSuchEvent'" in proc.stderr


@pytest.mark.parametrize("module", ["memrepo.claude.entry", "memrepo.hookio"])
def test_entry_modules_fail_open_on_an_unknown_event(module: str) -> None:
    tools = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools")
    proc = subprocess.run([sys.executable, "-I", "-m", module, "NoSuchEvent"], input=b"{}", capture_output=True,
                          cwd=tools, timeout=30)
    assert (proc.returncode, proc.stdout) == (0, b"")
    assert b"unknown hook event 'NoSuchEvent'" in proc.stderr


def test_install_refuses_beside_an_enabled_memrepo_plugin(isolated_env: str) -> None:
    """Both would run: every recalled memory injected twice (issue 39)."""
    write_settings(isolated_env, {**THEIRS, "enabledPlugins": {"memrepo@memrepo": True, "other@x": True}})
    path = os.path.join(isolated_env, ".claude", "settings.json")
    before = open(path, "rb").read()
    result = CliRunner().invoke(cli, ["install", "claude"], catch_exceptions=False)
    assert result.exit_code == 1
    assert f"the memrepo plugin memrepo@memrepo is enabled in {path}" in result.output
    assert "`claude plugin disable memrepo@memrepo`" in result.output and "nothing was changed" in result.output
    assert open(path, "rb").read() == before and sorted(os.listdir(os.path.dirname(path))) == ["settings.json"]
    write_settings(isolated_env, {**THEIRS, "enabledPlugins": {"memrepo@memrepo": False}})  # disabled: fine
    assert CliRunner().invoke(cli, ["install", "claude"], catch_exceptions=False).exit_code == 0


def _plugin_session_start(repo: str, home: str) -> str:
    """The context the plugin's SessionStart hook injects (run as Claude Code runs a plugin hook)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, MEMREPO_PYTHON=sys.executable, MEMREPO_DIR=repo, CLAUDE_PLUGIN_ROOT=root, HOME=home)
    proc = subprocess.run(["sh", os.path.join(root, "hooks", "run"), "session_start"], capture_output=True, env=env,
                          input=json.dumps({"hook_event_name": "SessionStart", "source": "startup"}).encode(), timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"] if proc.stdout else ""


def test_the_plugin_s_session_start_warns_beside_a_settings_install(isolated_env: str, repo: str) -> None:
    assert "memrepo uninstall claude" not in _plugin_session_start(repo, isolated_env)
    assert CliRunner().invoke(cli, ["install", "claude"], catch_exceptions=False).exit_code == 0
    path = os.path.join(isolated_env, ".claude", "settings.json")
    warning = _plugin_session_start(repo, isolated_env)
    assert f"memrepo's hooks in {path} (from `memrepo install claude`) both run" in warning
    assert "`memrepo uninstall claude`" in warning
