"""End-to-end: the everyday loop inside a real Claude Code session, through the plugin.

The pinned Claude Code CLI runs with ``--plugin-dir`` on a copy of this repository against the
fake Messages API (tests/e2e). The fake answers chosen prompts with a scripted ``Bash`` tool
call — what a model does when an injected block says "`memrepo show <id>`" or a slash command
says "run `memrepo add …`" — and the CLI runs it for real. The test then asserts on what the
fake received back (the tool's output) and on the memory repository.

The Bash tool gets a PATH without any installed `memrepo`: only the plugin's ``bin/`` can
provide the command. The scripted replies are hand-written, not a model's: the CLI, the hooks,
the slash commands, the launcher and the memory repository are what is under test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from e2e.harness import (  # noqa: E402,F401  (claude_bin, fake_api are fixtures)
    claude_bin,
    context_text,
    fake_api,
    hook_context_text,
    result_json,
    run_claude,
)
from test_e2e_claude import MEMORIES, _run, _setup_env  # noqa: E402
from test_e2e_plugin_install import _copy_tracked  # noqa: E402

pytestmark = pytest.mark.e2e

TIMEOUT = 90
ALLOW = ["--allowedTools", "Bash"]


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    return _copy_tracked(tmp_path / "plugin")


@pytest.fixture
def memories(tmp_path: Path) -> Path:
    home = tmp_path / "setup-home"
    home.mkdir()
    env = _setup_env(home)
    repo = tmp_path / "memories"
    _run([sys.executable, "-m", "memrepo", "init", str(repo)], cwd=tmp_path, env=env)
    for mem_id, text in MEMORIES.items():
        (repo / "memory" / f"{mem_id}.md").write_text(textwrap.dedent(text), encoding="utf-8")
    _run(["git", "-C", str(repo), "add", "-A"], cwd=tmp_path, env=env)
    _run(["git", "-C", str(repo), "commit", "-q", "-m", "e2e: memories"], cwd=tmp_path, env=env)
    return repo


def _env(repo: Path) -> dict[str, str]:
    """MEMREPO_PYTHON gives the launcher and the hooks an interpreter with memrepo's dependencies;
    PATH holds no `memrepo` of its own (the test venv's bin/ is left out)."""
    venv_bin = os.path.dirname(sys.executable)
    path = os.pathsep.join(p for p in os.environ.get("PATH", os.defpath).split(os.pathsep)
                           if p and os.path.realpath(p) != os.path.realpath(venv_bin)
                           and not os.path.exists(os.path.join(p, "memrepo")))
    return {"MEMREPO_DIR": str(repo), "MEMREPO_PYTHON": sys.executable, "PATH": path}


def _tool_results(reqs: list) -> str:
    """The text of every tool result the CLI sent back to the model."""
    out = []
    for r in reqs:
        for msg in (r.body or {}).get("messages") or [] if isinstance(r.body, dict) else []:
            for block in msg.get("content") if isinstance(msg.get("content"), list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    content = block.get("content")
                    if isinstance(content, list):
                        out += [b.get("text", "") for b in content if isinstance(b, dict)]
                    elif isinstance(content, str):
                        out.append(content)
    return "\n".join(out)


def _claude(prompt: str, plugin: Path, repo: Path, cwd: Path, fake_api, claude_bin: str):
    proc, reqs = run_claude(prompt, plugin_dir=plugin, cwd=cwd, env_extra=_env(repo), fake_api=fake_api,
                            claude_bin=claude_bin, timeout=TIMEOUT, extra_args=ALLOW)
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-2000:])
    assert result_json(proc).get("is_error") is False, proc.stdout[-2000:]
    return reqs


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, timeout=30).stdout


def test_the_injected_memrepo_show_works_through_the_plugins_bin(tmp_path: Path, plugin: Path, memories: Path,
                                                                 claude_bin: str, fake_api) -> None:
    prompt = "it's friday 17:00, can I still ship this hotfix to production?"
    fake_api.script_bash(prompt, "command -v memrepo; memrepo show deploy-freeze-friday")
    cwd = tmp_path / "project"
    cwd.mkdir()
    reqs = _claude(prompt, plugin, memories, cwd, fake_api, claude_bin)
    # The recalled block names the command ...
    injected = hook_context_text(reqs, "UserPromptSubmit")
    assert "deploy-freeze-friday" in injected and "`memrepo show <id>`" in injected
    # ... and the model's call to it ran the plugin's launcher and printed the whole memory.
    out = _tool_results(reqs)
    assert f"{plugin}/bin/memrepo" in out, out
    assert "title: Production deploys are frozen on Fridays after 16:00" in out, out
    assert "Hotfixes included: anything that" in out and "History:" in out, out


def test_remember_then_forget_from_inside_a_session(tmp_path: Path, plugin: Path, memories: Path,
                                                   claude_bin: str, fake_api) -> None:
    cwd = tmp_path / "project"
    cwd.mkdir()
    add = ('memrepo add --source user --class fact --title "The VPN gateway restarts at noon" '
           '-d "The office VPN gateway restarts every day at 12:00; reconnect after 12:05" '
           '--topic vpn --alias "vpn keeps dropping" --body "Ops schedule, since November."')
    # /memrepo:remember expands into the plugin's command text; the model then runs memrepo add.
    fake_api.script_bash("Save one memory with memrepo", add)
    reqs = _claude("/memrepo:remember the office VPN gateway restarts every day at noon", plugin, memories, cwd,
                   fake_api, claude_bin)
    assert "the office VPN gateway restarts every day at noon" in context_text(reqs)
    out = _tool_results(reqs)
    assert f"Added vpn-gateway-restarts-noon to {memories} (" in out, out
    assert (memories / "memory" / "vpn-gateway-restarts-noon.md").is_file()
    assert _git(memories, "log", "-1", "--format=%s").strip() == "add: vpn-gateway-restarts-noon"
    assert _git(memories, "status", "--porcelain") == ""

    # The loop, not the decision's margin, is what this shows: a prompt the decision answers with
    # room (p 0.81). "why does the vpn keep dropping at lunch?" sits at its threshold (0.69 under
    # 0.72 since the refit of issue 36's priors; 0.73 before), as docs/recall.md says of short
    # prompts on everyday words.
    ask = "my vpn dropped again at noon, what's going on?"
    reqs = _claude(ask, plugin, memories, cwd, fake_api, claude_bin)
    assert "vpn-gateway-restarts-noon" in hook_context_text(reqs, "UserPromptSubmit")

    fake_api.script_bash("Forget a memory with memrepo",
                         'memrepo forget vpn-gateway-restarts-noon --reason "ops moved the restart to 03:00"')
    reqs = _claude("/memrepo:forget vpn-gateway-restarts-noon", plugin, memories, cwd, fake_api, claude_bin)
    out = _tool_results(reqs)
    assert "Retired vpn-gateway-restarts-noon (" in out, out
    text = (memories / "memory" / "vpn-gateway-restarts-noon.md").read_text()
    assert "status: retired\n" in text and "retired_reason: ops moved the restart to 03:00\n" in text
    assert _git(memories, "log", "-1", "--format=%s").strip() == "retire: vpn-gateway-restarts-noon"

    reqs = _claude(ask, plugin, memories, cwd, fake_api, claude_bin)
    assert "vpn-gateway-restarts-noon" not in context_text(reqs)
    log = [json.loads(line) for line in (memories / "index" / "recall-log.jsonl").read_text().splitlines()]
    assert log[-1]["injected"] == []
    assert any(i["id"] == "vpn-gateway-restarts-noon" for e in log[:-1] for i in e["injected"])
