"""End-to-end: memrepo's own model call through the real Claude Code CLI (pinned) against the
fake Messages API on 127.0.0.1 (issue 16, defect 10).

A background pass runs the default model command, `claude -p --model haiku`, found on PATH. The
fake API receives exactly what the model would see: memrepo's prompt and system prompt, none of
Claude Code's own system prompt, tool definitions, CLAUDE.md files or hooks, and the call leaves
no session file under the projects folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from e2e.harness import GIT_IDENTITY_ENV, claude_bin, claude_env, fake_api  # noqa: E402,F401  (fixtures)

pytestmark = pytest.mark.e2e

TIMEOUT = 120
# Claude Code's own system prompt and tools, as `claude -p --model haiku` sends them (2.1.332).
CLAUDE_CODE_PROMPT_MARKS = ("You are an agent working with the user", "# Doing tasks", "IMPORTANT: Assist with")
MEMORY = """\
---
id: release-checklist
class: reference
title: Release checklist for the shop
description: Steps before tagging a release of the shop.
source: user
created: 2026-11-02
---
Run the migrations check, bump the version in pyproject.toml, then tag.
"""


def _memrepo(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memrepo", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)


@pytest.fixture
def setup(tmp_path: Path, claude_bin: str, fake_api):  # noqa: F811
    home, config_dir, work = tmp_path / "home", tmp_path / "claude-config", tmp_path / "work"
    for d in (home, config_dir, work):
        d.mkdir()
    # The user's own Claude Code setup, which must stay out of memrepo's call.
    (config_dir / "CLAUDE.md").write_text("USER-CLAUDE-MD: always answer in French.\n")
    (work / "CLAUDE.md").write_text("PROJECT-CLAUDE-MD: run the linter first.\n")
    hooks = {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": f"echo USER-HOOK-RAN > {tmp_path}/hook-ran"}]}]}
    (config_dir / "settings.json").write_text(json.dumps({"hooks": hooks, "env": {"MEMREPO_E2E_LOGIN": "kept"}}))
    env = claude_env(fake_api, home, config_dir, None)
    env["PATH"] = os.pathsep.join([os.path.dirname(claude_bin), env["PATH"]])  # the default command finds `claude`
    env["MEMREPO_DIR"] = str(tmp_path / "memories")
    env.pop("MEMREPO_MODEL_CMD", None)
    env.update(GIT_IDENTITY_ENV)
    assert _memrepo(env, work, "init", str(tmp_path / "memories")).returncode == 0
    (tmp_path / "memories" / "memory" / "release-checklist.md").write_text(MEMORY)
    subprocess.run(["git", "-C", str(tmp_path / "memories"), "add", "-A"], check=True, env=env)
    done = subprocess.run(["git", "-C", str(tmp_path / "memories"), "commit", "-qm", "add"], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return env, work, config_dir, tmp_path


def test_a_background_call_carries_only_memrepos_prompt(setup, fake_api) -> None:  # noqa: F811
    env, work, config_dir, tmp_path = setup
    fake_api.reply_text = json.dumps({"memories": [{"id": "release-checklist",
                                                    "aliases": ["ship a new build", "publish the package to pypi"]}]})
    done = _memrepo(env, work, "enrich")
    assert done.returncode == 0, (done.stdout, done.stderr)
    calls = [r for r in fake_api.requests if r.is_messages]
    assert calls, "the model command never reached the fake API"
    first = calls[0].body
    system = json.dumps(first.get("system"))
    text = json.dumps(first.get("messages"))
    assert "background helper of memrepo" in system
    assert "[memrepo background pass: enrich]" in text and "release-checklist" in text
    assert not any(mark in system + text for mark in CLAUDE_CODE_PROMPT_MARKS)
    assert "USER-CLAUDE-MD" not in calls[0].raw_body and "PROJECT-CLAUDE-MD" not in calls[0].raw_body
    # No built-in tool: the one tool is the CLI's StructuredOutput for the pass's --json-schema.
    assert [t["name"] for t in first.get("tools") or [] if not t.get("defer_loading")] == ["StructuredOutput"]
    print(f"\nbackground call: {len(calls[0].raw_body)} characters in the first request "
          f"(`claude -p --model haiku` alone sent 52,178 with the same fake API)")
    assert len(calls[0].raw_body) < 10_000
    assert not (tmp_path / "hook-ran").exists(), "the user's own hook ran inside memrepo's model call"
    assert not list(config_dir.rglob("*.jsonl")), "the model call left a session file behind"
    # The pass used the answer: the memory has the aliases now.
    note = (tmp_path / "memories" / "memory" / "release-checklist.md").read_text()
    idx = tmp_path / "memories" / "index"
    assert "publish the package to pypi" in note, (done.stdout, [p.read_text() for p in idx.glob("model-*.jsonl")])
