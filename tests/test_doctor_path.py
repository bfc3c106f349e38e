"""`memrepo doctor` sees the whole path: setup in progress, Claude Code's wiring, the plugin venv,
the model command, background jobs, a repository without a commit. Each finding provoked for real."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from helpers import commit_all, write_memory
from memrepo.cli.main import cli
from memrepo.base import paths
from memrepo.worker import jobs, plugin_venv, queue

MODEL = f"{sys.executable} -c pass"


@pytest.fixture(autouse=True)
def claude_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "claude-config"
    home.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    monkeypatch.setenv("MEMREPO_MODEL_CMD", MODEL)
    monkeypatch.delenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", raising=False)
    monkeypatch.chdir(tmp_path)
    return home


@pytest.fixture
def store(repo: str) -> str:
    write_memory(repo, "vpn-drops", title="The office VPN drops at noon")
    assert commit_all(repo, "one").returncode == 0
    return repo


def doctor(repo: str) -> tuple[int, dict[str, dict[str, object]], str]:
    result: Result = CliRunner().invoke(cli, ["--repo", repo, "doctor", "--json"], catch_exceptions=False)
    checks = json.loads(result.stdout)
    text = CliRunner().invoke(cli, ["--repo", repo, "doctor"], catch_exceptions=False).stdout
    return result.exit_code, {c["name"]: c for c in checks}, text


def settings(home: Path, data: dict[str, object]) -> Path:
    path = home / "settings.json"
    path.write_text(json.dumps(data, indent=2))
    return path


def test_setup_in_progress_is_said_with_its_step_not_failed(tmp_path: Path) -> None:
    repo = str(tmp_path / "not-yet")
    os.makedirs(paths.index_dir(repo))
    at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    Path(paths.index_dir(repo), "bootstrap.json").write_text(json.dumps({"state": "installing", "at": at}))
    code, checks, text = doctor(repo)
    assert code == 0 and "repository" not in checks
    assert checks["background setup"]["warn"] and checks["background setup"]["detail"] == f"in progress: step `installing` since {at}"
    assert "fix: memrepo init" not in text
    # A setup that stopped reporting long ago is not "in progress": the repository is missing.
    Path(paths.index_dir(repo), "bootstrap.json").write_text(json.dumps({"state": "installing", "at": "2026-01-01T00:00:00Z"}))
    code, checks, text = doctor(repo)
    assert code == 1 and f"fix: memrepo init {repo}" in text


def test_plugin_and_settings_hooks_both_active_fail_naming_the_duplicate(store: str, claude_home: Path) -> None:
    # Installed first, the plugin enabled later: `install claude` refuses beside an enabled plugin.
    assert CliRunner().invoke(cli, ["install", "claude"], catch_exceptions=False).exit_code == 0
    settings(claude_home, {**json.loads((claude_home / "settings.json").read_text()), "enabledPlugins": {"memrepo@memrepo": True}})
    before = (claude_home / "settings.json").read_bytes()
    code, checks, text = doctor(store)
    assert code == 1
    wiring = checks["claude wiring"]
    assert not wiring["ok"] and "memrepo is wired in twice: the plugin memrepo@memrepo is enabled" in str(wiring["detail"])
    assert "every recalled memory is injected twice" in str(wiring["detail"])
    assert "`memrepo uninstall claude`" in str(wiring["fix"]) and "claude plugin disable memrepo@memrepo" in str(wiring["fix"])
    assert (claude_home / "settings.json").read_bytes() == before  # doctor changes nothing
    assert CliRunner().invoke(cli, ["uninstall", "claude"], catch_exceptions=False).exit_code == 0
    code, checks, _ = doctor(store)
    assert code == 0 and checks["claude wiring"]["detail"].startswith("the plugin memrepo@memrepo (enabled in ")


def test_a_settings_hook_whose_interpreter_is_gone_fails(store: str) -> None:
    from memrepo.claude import install

    install.install(python="/nowhere/venv/bin/python")
    code, checks, _ = doctor(store)
    assert code == 1 and not checks["claude hooks"]["ok"]
    assert "run /nowhere/venv/bin/python, which does not exist" in str(checks["claude hooks"]["detail"])
    assert CliRunner().invoke(cli, ["install", "claude"], catch_exceptions=False).exit_code == 0  # the fix it names
    code, checks, _ = doctor(store)
    assert code == 0 and "claude hooks" not in checks
    assert checks["claude wiring"]["detail"].startswith("memrepo's hooks in ")


def test_a_missing_model_command_is_named(store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMREPO_MODEL_CMD", "/nowhere/bin/model --json")
    code, checks, _ = doctor(store)
    model = checks["model command"]
    assert code == 0 and model["warn"]  # recall needs no model
    assert "`/nowhere/bin/model` (of the model command `/nowhere/bin/model --json`) is not installed" in str(model["detail"])
    assert "MEMREPO_MODEL_CMD" in str(model["fix"])


def test_background_jobs_that_gave_up_fail_until_retried(store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(queue, "RETRY_DELAY", 0.0)
    jobs.enqueue(store, {"kind": "capture", "session": "s-1", "transcript": "/nowhere.jsonl"})

    def broken(repo: str, job: dict[str, object]) -> None:
        raise RuntimeError("the model command exited 1")

    for _ in range(jobs.MAX_ATTEMPTS):
        jobs.drain(store, broken)
    code, checks, _ = doctor(store)
    assert code == 1 and not checks["background jobs"]["ok"]
    assert "1 background job gave up after 3 attempts" in str(checks["background jobs"]["detail"])
    assert "RuntimeError: the model command exited 1" in str(checks["background jobs"]["detail"])
    assert "memrepo sweep --retry-failed" in str(checks["background jobs"]["fix"])
    assert jobs.retry_failed(store) and jobs.failed_jobs(store) == []
    assert jobs.counts(store)["queued"] == 1
    assert doctor(store)[1]["background jobs"]["ok"]


def test_a_repository_without_a_commit_fails_and_init_fixes_it(tmp_path: Path) -> None:
    repo = str(tmp_path / "bare-start")
    subprocess.run(["git", "init", "-q", repo], check=True)
    os.makedirs(paths.memory_dir(repo))
    code, checks, text = doctor(repo)
    assert code == 1 and not checks["first commit"]["ok"] and f"memrepo init {repo}" in str(checks["first commit"]["fix"])
    assert CliRunner().invoke(cli, ["init", repo], catch_exceptions=False).exit_code == 0
    assert "first commit" not in doctor(repo)[1]


def _installed(home: Path, version: str) -> Path:
    (home / "plugins").mkdir(exist_ok=True)
    (home / "plugins" / "installed_plugins.json").write_text(json.dumps({"version": 2, "plugins": {
        "memrepo@memrepo": [{"scope": "user", "installPath": str(home / "plugins" / "cache" / version), "version": version}]}}))
    data = home / "plugins" / "data" / "memrepo-memrepo"
    data.mkdir(parents=True, exist_ok=True)
    return data


def _venv(data: Path, version: str) -> None:
    venv = data / plugin_venv.venv_name(version)
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    plugin_venv.mark_ready(str(venv), version)


def test_a_plugin_upgrade_without_its_venv_and_old_venvs_are_named(store: str, claude_home: Path) -> None:
    data = _installed(claude_home, "0.2.0")
    _venv(data, "0.1.0")
    _, checks, _ = doctor(store)
    venv = checks["plugin venv"]
    assert venv["warn"] and "memrepo@memrepo 0.2.0 has no venv yet; the one there (venv-0.1.0) holds another" in str(venv["detail"])
    assert "start a Claude Code session" in str(venv["fix"])
    _venv(data, "0.2.0")
    code, checks, _ = doctor(store)
    assert code == 0 and checks["plugin venv"]["detail"] == f"memrepo@memrepo 0.2.0: {data / 'venv-0.2.0'}"
    assert checks["old plugin venvs"]["warn"] and f"rm -rf {data / 'venv-0.1.0'}" in str(checks["old plugin venvs"]["fix"])


def test_auto_memory_is_reported_on_or_off_and_never_changed(store: str, claude_home: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    assert doctor(store)[1]["claude auto memory"]["detail"].startswith("on (Claude Code's default)")
    path = settings(claude_home, {"autoMemoryEnabled": False})
    before = path.read_bytes()
    assert doctor(store)[1]["claude auto memory"]["detail"] == f"off (autoMemoryEnabled: false in {path})"
    assert path.read_bytes() == before
    settings(claude_home, {})
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")
    assert doctor(store)[1]["claude auto memory"]["detail"] == "off (CLAUDE_CODE_DISABLE_AUTO_MEMORY is set)"


def test_settings_hooks_without_memrepo_on_path_are_named(store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert CliRunner().invoke(cli, ["install", "claude"], catch_exceptions=False).exit_code == 0
    monkeypatch.setenv("PATH", os.path.dirname(shutil.which("git") or "/usr/bin/git"))
    _, checks, _ = doctor(store)
    assert checks["memrepo on PATH"]["warn"] and "`memrepo show <id>`" in str(checks["memrepo on PATH"]["detail"])
    monkeypatch.setenv("PATH", os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]]))
    assert "memrepo on PATH" not in doctor(store)[1]


RUN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hooks", "run")
SPOTTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "claude-code", "spotter-short-2.1.38.jsonl")


def _hook(repo: str, name: str, event: dict[str, object]) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, MEMREPO_PYTHON=sys.executable, MEMREPO_DIR=repo)
    return subprocess.run(["sh", RUN, name], input=json.dumps(event).encode(), capture_output=True, env=env,
                          timeout=60, check=True)


def test_sessions_whose_prompt_hook_never_fired_are_named_and_the_fallback_helps(store: str, tmp_path: Path) -> None:
    transcript = shutil.copy(SPOTTER, tmp_path / "s.jsonl")  # a real session with prompts a person typed
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    start = {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(tmp_path)}
    # Like the VS Code extension: SessionStart fires, UserPromptSubmit never does.
    for n in range(2):
        _hook(store, "session_start", {**start, "session_id": f"vscode-{n}", "transcript_path": str(transcript)})
    _hook(store, "session_start", {**start, "session_id": "opened-and-closed", "transcript_path": str(empty)})
    code, checks, _ = doctor(store)
    hook = checks["prompt hook"]
    assert code == 0 and hook["warn"], hook
    assert str(hook["detail"]).startswith("2 of the last 2 sessions with prompts made no recall decision (e.g. vscode-1)")
    assert '"prompt_fallback": true' in str(hook["fix"])
    # The fallback: the session start tells the agent to recall by hand.
    assert "memrepo recall" not in _hook(store, "session_start", {**start, "session_id": "x"}).stdout.decode()
    Path(paths.index_dir(store), "local.json").write_text(json.dumps({"prompt_fallback": True}))
    out = _hook(store, "session_start", {**start, "session_id": "y"}).stdout.decode()
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert 'Before acting on a task, run `memrepo recall "<the task in a few words>"` and weigh what it prints' in context
    assert doctor(store)[1]["prompt hook"]["detail"].endswith("the session-start fallback is on")


def test_a_prompt_hook_that_fires_is_ok(store: str, tmp_path: Path) -> None:
    transcript = shutil.copy(SPOTTER, tmp_path / "s.jsonl")
    for n in range(3):
        session = f"cli-{n}"
        _hook(store, "session_start", {"hook_event_name": "SessionStart", "source": "startup", "cwd": str(tmp_path),
                                        "session_id": session, "transcript_path": str(transcript)})
        _hook(store, "user_prompt_submit", {"hook_event_name": "UserPromptSubmit", "session_id": session, "cwd": str(tmp_path),
                                            "transcript_path": str(transcript), "prompt": "why does the vpn drop at noon?"})
    hook = doctor(store)[1]["prompt hook"]
    assert hook["ok"] and not hook["warn"] and hook["detail"] == "fired in 3 of the last 3 sessions with prompts"
