"""End-to-end: the real Claude Code CLI (pinned in tests/e2e/package.json) against a fake
Messages API on 127.0.0.1, with plugins loaded through --plugin-dir.

The CLI is installed once into a cache outside the repo by tests/e2e/install_claude.sh; the
tests skip when npm or the registry is unavailable (MEMREPO_E2E_REQUIRE=1 turns that into a
failure). Nothing leaves the machine: ANTHROPIC_BASE_URL points at the fake API and
CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 stops everything else.
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

from e2e.fakeapi import DEFAULT_REPLY, FakeMessagesAPI  # noqa: E402
from e2e.harness import (  # noqa: E402,F401  (claude_bin, fake_api are fixtures)
    GIT_IDENTITY_ENV,
    claude_bin,
    context_text,
    fake_api,
    hook_context_text,
    result_json,
    run_claude,
)

pytestmark = pytest.mark.e2e

REPO_ROOT = Path(__file__).resolve().parent.parent  # the memrepo plugin is the repo root
SETUP_TIMEOUT = 60


# --------------------------------------------------------------------------------------------
# a. the harness itself, with a throwaway plugin


def _make_plugin(root: Path, name: str, hook_stdout: str) -> Path:
    """A plugin with one exec-form UserPromptSubmit hook that prints ``hook_stdout`` and
    saves its stdin to <root>/ran.json (so a test can tell the hook really ran)."""
    (root / ".claude-plugin").mkdir(parents=True)
    (root / "hooks").mkdir()
    (root / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": name, "version": "0.0.1", "description": "e2e harness probe"})
    )
    (root / "hooks" / "hooks.json").write_text(
        json.dumps(
            {
                "hooks": {
                    "UserPromptSubmit": [
                        {
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": sys.executable,
                                    "args": ["${CLAUDE_PLUGIN_ROOT}/hooks/h.py"],
                                    "timeout": 20,
                                }
                            ]
                        }
                    ]
                }
            }
        )
    )
    (root / "hooks" / "h.py").write_text(
        textwrap.dedent(
            f"""\
            import os, sys
            data = sys.stdin.read()
            root = os.environ["CLAUDE_PLUGIN_ROOT"]
            with open(os.path.join(root, "ran.json"), "w") as f:
                f.write(data)
            sys.stdout.write({hook_stdout!r})
            """
        )
    )
    return root


def test_harness_plugin_hook_reaches_model(
    tmp_path: Path, claude_bin: str, fake_api
) -> None:
    marker = "MARKER-1234"
    loud = _make_plugin(
        tmp_path / "loud",
        "e2e-loud",
        json.dumps(
            {
                "hookSpecificOutput": {
                    "hookEventName": "UserPromptSubmit",
                    "additionalContext": marker,
                }
            }
        ),
    )
    quiet = _make_plugin(tmp_path / "quiet", "e2e-quiet", "")
    cwd = tmp_path / "project"
    cwd.mkdir()
    prompt = "what is the answer to the harness question?"

    proc, reqs = run_claude(
        prompt, plugin_dir=loud, cwd=cwd, env_extra={}, fake_api=fake_api, claude_bin=claude_bin
    )
    result = result_json(proc)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert result.get("is_error") is False, result
    assert result.get("result") == DEFAULT_REPLY
    stdin = json.loads((loud / "ran.json").read_text())
    assert stdin["hook_event_name"] == "UserPromptSubmit"
    assert stdin["prompt"] == prompt

    calls = [r for r in reqs if r.is_messages]
    assert calls, f"no /v1/messages request; got {[(r.method, r.path) for r in reqs]}"
    assert all("x-api-key" not in r.headers and "authorization" not in r.headers for r in reqs)
    text = context_text(reqs)
    assert prompt in text
    assert f"UserPromptSubmit hook additional context: {marker}" in text
    assert hook_context_text(reqs, "UserPromptSubmit") == (
        f"UserPromptSubmit hook additional context: {marker}"
    )

    proc, reqs = run_claude(
        prompt, plugin_dir=quiet, cwd=cwd, env_extra={}, fake_api=fake_api, claude_bin=claude_bin
    )
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert result_json(proc).get("result") == DEFAULT_REPLY
    assert (quiet / "ran.json").exists(), "the quiet plugin's hook did not run"
    text = context_text(reqs)
    assert prompt in text
    assert marker not in text
    assert hook_context_text(reqs) == ""


# --------------------------------------------------------------------------------------------
# b. the real memrepo plugin (the repository root) recalls into the model's context

MEMORIES = {
    "deploy-freeze-friday": """\
        ---
        id: deploy-freeze-friday
        title: Production deploys are frozen on Fridays after 16:00
        description: No deploys or hotfixes ship to production on Fridays after 16:00; they wait until Monday.
        class: rule
        source: user
        created: '2026-11-02'
        topics:
        - deploy
        - production
        - release freeze
        - hotfix
        entities:
        - production
        aliases:
        - ship on friday
        - friday release
        ---
        Deploys to production are frozen on Fridays after 16:00. Hotfixes included: anything that
        misses the window ships on Monday morning, after the on-call lead has signed off.
        """,
    "staging-postgres-port": """\
        ---
        id: staging-postgres-port
        title: The staging Postgres listens on port 6543
        description: Staging's Postgres runs behind PgBouncer on port 6543, not the default 5432.
        class: fact
        source: user
        created: '2026-10-14'
        topics:
        - database
        - staging
        entities:
        - staging
        tech:
        - Postgres
        - PgBouncer
        ---
        The staging database is reached through PgBouncer on port 6543. Port 5432 is closed to
        clients; connection strings that use it time out.
        """,
    "prefers-small-commits": """\
        ---
        id: prefers-small-commits
        title: Keep commits small and focused
        description: The user prefers one logical change per commit, with a short imperative subject line.
        class: preference
        source: user
        created: '2026-09-30'
        topics:
        - git
        - commits
        ---
        One logical change per commit; subject line in the imperative, under 72 characters.
        """,
}


def _setup_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMREPO_", "GIT_"))}
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
    env["HOME"] = str(home)
    env.update(GIT_IDENTITY_ENV)
    return env


def _run(cmd: list[str], *, cwd: Path, env: dict[str, str]) -> None:
    proc = subprocess.run(
        cmd,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=SETUP_TIMEOUT,
    )
    assert proc.returncode == 0, (
        f"{' '.join(cmd)} exited {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}"
    )


@pytest.fixture(scope="module")
def memory_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A memory repository made by `memrepo init`, holding MEMORIES, committed and indexed."""
    base = tmp_path_factory.mktemp("memrepo-e2e")
    home = base / "home"
    home.mkdir()
    env = _setup_env(home)
    repo = base / "memories"
    py = sys.executable
    _run([py, "-m", "memrepo", "init", str(repo)], cwd=base, env=env)
    for mem_id, text in MEMORIES.items():
        (repo / "memory" / f"{mem_id}.md").write_text(textwrap.dedent(text), encoding="utf-8")
    _run(["git", "-C", str(repo), "add", "-A"], cwd=base, env=env)
    _run(["git", "-C", str(repo), "commit", "-q", "-m", "e2e: add test memories"], cwd=base, env=env)
    _run([py, "-m", "memrepo", "--repo", str(repo), "index", "--rebuild"], cwd=base, env=env)
    return repo


def _project(tmp_path: Path) -> Path:
    cwd = tmp_path / "project"
    cwd.mkdir()
    return cwd


def test_recall_reaches_model(
    tmp_path: Path, memory_repo: Path, claude_bin: str, fake_api
) -> None:
    proc, reqs = run_claude(
        "it's friday 17:00, can I still ship this hotfix to production?",
        plugin_dir=REPO_ROOT,
        cwd=_project(tmp_path),
        env_extra={"MEMREPO_DIR": str(memory_repo)},
        fake_api=fake_api,
        claude_bin=claude_bin,
    )
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert result_json(proc).get("is_error") is False
    text = context_text(reqs)
    assert "deploy-freeze-friday" in text, (
        "memrepo's recall did not reach the model; hook output seen:\n" + hook_context_text(reqs)
    )
    # It got there through a hook, and the unrelated memory stayed out.
    assert "deploy-freeze-friday" in hook_context_text(reqs, "UserPromptSubmit")
    assert "staging-postgres-port" not in text


def test_conversational_prompt_gets_no_memory(
    tmp_path: Path, memory_repo: Path, claude_bin: str, fake_api
) -> None:
    log = memory_repo / "index" / "recall-log.jsonl"
    before = log.read_text().count("\n") if log.exists() else 0
    proc, reqs = run_claude(
        "ok, go ahead",
        plugin_dir=REPO_ROOT,
        cwd=_project(tmp_path),
        env_extra={"MEMREPO_DIR": str(memory_repo)},
        fake_api=fake_api,
        claude_bin=claude_bin,
    )
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert result_json(proc).get("is_error") is False
    text = context_text(reqs)
    assert "ok, go ahead" in text
    for mem_id in MEMORIES:
        assert mem_id not in text, f"{mem_id} reached the model on a conversational prompt"
    prompt_hooks = hook_context_text(reqs, "UserPromptSubmit")
    assert "memrepo" not in prompt_hooks.lower(), prompt_hooks
    # Not vacuous: the recall hook ran and logged its decision (silence) -- DESIGN.md, Recall 5.
    after = log.read_text().count("\n") if log.exists() else 0
    assert after > before, f"the recall hook logged nothing to {log}: did it run?"


def _verdicts(repo: Path) -> list[dict]:
    path = repo / "index" / "recall-usage.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.parametrize("reply, used", [
    # What an honest model answers with the note in its context, and what it answers ignoring it.
    ("No: production deploys are frozen on Fridays after 16:00, hotfixes included. It ships on Monday "
     "morning, once the on-call lead has signed off.", True),
    ("Yes, you can still ship the hotfix to production now; run the usual deploy and watch the error rate.", False),
])
def test_the_stop_hook_judges_whether_the_reply_used_the_memory(
    tmp_path: Path, memory_repo: Path, claude_bin: str, reply: str, used: bool
) -> None:
    before = len(_verdicts(memory_repo))
    with FakeMessagesAPI(reply) as api:
        proc, reqs = run_claude(
            "it's friday 17:00, can I still ship this hotfix to production?",
            plugin_dir=REPO_ROOT,
            cwd=_project(tmp_path),
            env_extra={"MEMREPO_DIR": str(memory_repo)},
            fake_api=api,
            claude_bin=claude_bin,
        )
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert "deploy-freeze-friday" in hook_context_text(reqs, "UserPromptSubmit")
    new = _verdicts(memory_repo)[before:]
    assert [v["by"] for v in new] == ["reply"], new
    assert ("deploy-freeze-friday" in new[0]["used"]) is used
    assert ("deploy-freeze-friday" in new[0]["unused"]) is not used


# --------------------------------------------------------------------------------------------
# the fake API on its own (no CLI needed)


def test_fake_api_protocol(fake_api) -> None:
    import urllib.error
    import urllib.request

    def post(path: str, body: dict, key: str = "sk-ant-test-dummy") -> tuple[int, str, str]:
        req = urllib.request.Request(
            fake_api.base_url + path,
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json", "x-api-key": key},
            method="POST",
        )
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status, resp.headers["content-type"], resp.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.headers["content-type"], e.read().decode()

    msgs = [{"role": "user", "content": "hi"}]
    status, ctype, text = post("/v1/messages", {"model": "m", "max_tokens": 5, "messages": msgs})
    assert (status, ctype) == (200, "application/json")
    message = json.loads(text)
    assert message["content"] == [{"type": "text", "text": DEFAULT_REPLY}]
    assert message["stop_reason"] == "end_turn"

    body = {"model": "m", "max_tokens": 5, "messages": msgs, "stream": True}
    status, ctype, text = post("/v1/messages?beta=true", body)
    assert status == 200 and ctype.startswith("text/event-stream")
    events = [ln.split(": ", 1)[1] for ln in text.splitlines() if ln.startswith("event: ")]
    assert events == [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    assert DEFAULT_REPLY in text

    status, _, text = post("/v1/messages/count_tokens?beta=true", {"model": "m", "messages": msgs})
    assert status == 200 and json.loads(text)["input_tokens"] > 0
    status, _, _ = post("/v1/other", {})
    assert status == 404

    reqs = fake_api.requests
    assert [r.route for r in reqs] == [
        "/v1/messages",
        "/v1/messages",
        "/v1/messages/count_tokens",
        "/v1/other",
    ]
    assert [r.is_messages for r in reqs] == [True, True, False, False]
    assert reqs[1].path == "/v1/messages?beta=true" and reqs[1].body["stream"] is True
    assert all("x-api-key" not in r.headers for r in reqs)
    assert context_text(reqs) == "hi\nhi"
