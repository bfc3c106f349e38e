"""End to end: the real Codex CLI and Gemini CLI (pinned in tests/e2e/agents/) with the hooks
`memrepo install codex|gemini` wrote, against fake model APIs on 127.0.0.1 that speak each
CLI's wire protocol (OpenAI Responses over SSE; Gemini streamGenerateContent over SSE).

What the fake API received is what the model would have seen: the memory for an answerable
prompt, no memrepo text for a conversational one. One memory captured from a Claude Code
session (the real CLI with the plugin) is recalled in a Codex session and a Gemini session on
the same repository, and each agent's own session end captures its transcript.

The CLIs are installed once into a cache outside the repo (tests/e2e/install_cli.sh); the
tests skip when npm or its registry is unavailable, and fail instead under MEMREPO_E2E_REQUIRE=1.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from e2e import agents  # noqa: E402
from e2e.fake_gemini import FakeGeminiAPI, request_text  # noqa: E402
from e2e.fake_openai import FakeOpenAIAPI, input_text  # noqa: E402
from e2e.fakeapi import FakeMessagesAPI  # noqa: E402
from e2e.harness import run_claude  # noqa: E402

pytestmark = pytest.mark.e2e

REPO_ROOT = Path(__file__).resolve().parent.parent
CAPTURE_MODEL = REPO_ROOT / "tests" / "fake" / "capture_model.py"
FENCE = "recalled"  # "memrepo recalled N notes …": the first line of every injected block

MEMORIES = {
    "billing-webhook-secret-rotation": """\
        ---
        id: billing-webhook-secret-rotation
        class: rule
        title: Rotate the billing webhook secret through the vault, never by hand
        description: The Stripe webhook signing secret for billing is rotated with `vault write billing/webhook rotate=true`; editing the env file breaks signature checks.
        topics: [billing, webhook, secret rotation]
        entities: [billing service, Stripe]
        tech: [vault]
        source: user
        created: 2026-10-04
        updated: 2026-10-04
        ---
        The billing service checks Stripe signatures against the secret in vault.
        """,
    "lunch-rota": """\
        ---
        id: lunch-rota
        class: fact
        title: The office lunch rota is pinned in the kitchen
        description: Who orders lunch each Thursday is on the sheet by the kitchen door.
        topics: [lunch]
        source: user
        created: 2026-09-01
        updated: 2026-09-01
        ---
        Thursdays only.
        """,
}
PROFILE_LINE = "Answers in British English, please."
ANSWERABLE = "how do I rotate the billing webhook secret for Stripe?"
CONVERSATIONAL = "thanks, that's all for now"


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> None:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"{cmd}: {proc.stdout}\n{proc.stderr}"


@pytest.fixture
def memory_repo(tmp_path: Path) -> Path:
    """A repository made by `memrepo init`, holding MEMORIES, committed and indexed."""
    env = agents.AgentHome(tmp_path / "setup").env()
    (tmp_path / "setup" / "home").mkdir(parents=True)
    repo = tmp_path / "store"
    _run([sys.executable, "-m", "memrepo", "init", str(repo)], tmp_path, env)
    for mem_id, text in MEMORIES.items():
        (repo / "memory" / f"{mem_id}.md").write_text(textwrap.dedent(text), encoding="utf-8")
    (repo / "profile.md").write_text(f"- {PROFILE_LINE}\n", encoding="utf-8")
    _run(["git", "-C", str(repo), "add", "-A"], tmp_path, env)
    _run(["git", "-C", str(repo), "commit", "-q", "-m", "e2e: memories"], tmp_path, env)
    _run([sys.executable, "-m", "memrepo", "--repo", str(repo), "index", "--rebuild"], tmp_path, env)
    return repo


def _project(tmp_path: Path, name: str) -> Path:
    cwd = tmp_path / name
    cwd.mkdir()
    (cwd / "README.md").write_text("a project\n")
    return cwd


def _log(repo: Path) -> list[dict]:
    path = repo / "index" / "recall-log.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _wait_for_commit(repo: Path, grep: str, timeout: float = 120.0) -> str:
    deadline = time.time() + timeout
    while time.time() < deadline:
        out = subprocess.run(["git", "-C", str(repo), "log", "--format=%H %s", "--all"], capture_output=True, text=True).stdout
        hits = [line for line in out.splitlines() if grep in line]
        if hits:
            return hits[0]
        time.sleep(0.5)
    worker = repo / "index" / "jobs" / "worker.log"
    raise AssertionError(f"no commit matching {grep!r} in {timeout} s; worker.log:\n"
                         f"{worker.read_text() if worker.exists() else '(none)'}")


def _memory_files(repo: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in (repo / "memory").glob("*.md")}


# -- Codex CLI ----------------------------------------------------------------------------------------


def test_codex_recalls_for_an_answerable_prompt_and_says_nothing_for_a_conversational_one(tmp_path: Path,
                                                                                          memory_repo: Path) -> None:
    with FakeOpenAIAPI("Use the vault command from the note.") as api:
        home = agents.codex_home(tmp_path / "codex", api.base_url)
        env = {"MEMREPO_DIR": str(memory_repo)}
        agents.memrepo(agents.codex_env(home, env), "install", "codex")
        cwd = _project(tmp_path, "webshop")

        proc = agents.run_codex(home, ANSWERABLE, cwd, env_extra=env)
        assert proc.returncode == 0, (proc.stdout, proc.stderr[-3000:])
        asked = [r for r in api.requests if r.is_responses]
        assert asked and all(r.route == "/v1/responses" for r in api.requests)
        seen = "\n".join(input_text(r.body) for r in asked)
        assert ANSWERABLE in seen
        assert "(id: billing-webhook-secret-rotation)" in seen and FENCE in seen
        assert "lunch-rota" not in seen
        # As Codex shows hook context: a developer message of its own, not part of the prompt;
        # the profile (SessionStart) before the prompt, the recalled memory after it.
        items = asked[0].body["input"]
        at = {key: next(n for n, i in enumerate(items) if key in json.dumps(i)) for key in (FENCE, PROFILE_LINE, ANSWERABLE)}
        assert at[PROFILE_LINE] < at[ANSWERABLE] < at[FENCE], at
        assert items[at[FENCE]].get("role") == "developer" and items[at[PROFILE_LINE]].get("role") == "developer"

        api.clear()
        proc = agents.run_codex(home, CONVERSATIONAL, cwd, env_extra=env)
        assert proc.returncode == 0, (proc.stdout, proc.stderr[-3000:])
        seen = "\n".join(input_text(r.body) for r in api.requests if r.is_responses)
        assert CONVERSATIONAL in seen and PROFILE_LINE in seen  # the profile is always on; recall is not
        assert FENCE not in seen and "billing-webhook" not in seen and "<memrepo-memories>" not in seen

    decisions = [e for e in _log(memory_repo) if e.get("agent") == "codex"]
    # Not vacuous: the installed hook ran (without --dangerously-bypass-hook-trust) for both prompts.
    assert [bool(e["injected"]) for e in decisions] == [True, False], decisions
    assert decisions[1]["silent"] == "conversational"


def test_codex_runs_no_memrepo_hook_without_the_trust_install_wrote(tmp_path: Path, memory_repo: Path) -> None:
    """The trust entries are what make Codex run the hooks: without them it skips them silently."""
    with FakeOpenAIAPI() as api:
        home = agents.codex_home(tmp_path / "codex", api.base_url)
        env = {"MEMREPO_DIR": str(memory_repo)}
        agents.memrepo(agents.codex_env(home, env), "install", "codex")
        config = home.home / ".codex" / "config.toml"
        config.write_text(config.read_text().replace('trusted_hash = "sha256:', 'trusted_hash = "sha256:0'))
        proc = agents.run_codex(home, ANSWERABLE, _project(tmp_path, "webshop"), env_extra=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert FENCE not in "\n".join(input_text(r.body) for r in api.requests)
    assert not [e for e in _log(memory_repo) if e.get("agent") == "codex"]


# -- Gemini CLI ---------------------------------------------------------------------------------------


def test_gemini_recalls_for_an_answerable_prompt_and_says_nothing_for_a_conversational_one(tmp_path: Path,
                                                                                           memory_repo: Path) -> None:
    with FakeGeminiAPI("Use the vault command from the note.") as api:
        home = agents.gemini_home(tmp_path / "gemini")
        env = {"MEMREPO_DIR": str(memory_repo)}
        agents.memrepo(agents.gemini_env(home, api.base_url, env), "install", "gemini")
        cwd = _project(tmp_path, "webshop")

        proc = agents.run_gemini(home, ANSWERABLE, cwd, api.base_url, env_extra=env)
        assert proc.returncode == 0, (proc.stdout, proc.stderr[-3000:])
        main = [r for r in api.requests if r.is_main]
        assert main
        seen = "\n".join(request_text(r.body) for r in main)
        assert ANSWERABLE in seen
        assert "(id: billing-webhook-secret-rotation)" in seen and FENCE in seen
        assert "lunch-rota" not in seen
        # As Gemini shows BeforeAgent context: a <hook_context> part after the prompt, same message.
        last_user = [c for c in main[0].body["contents"] if c.get("role") == "user"][-1]
        texts = [p.get("text", "") for p in last_user["parts"]]
        at = next(i for i, t in enumerate(texts) if ANSWERABLE in t)
        assert texts[-1].startswith("<hook_context>") and FENCE in texts[-1] and at < len(texts) - 1, texts
        # The profile comes with the session's first prompt (Gemini's SessionStart context would
        # be glued onto the prompt itself), once.
        assert PROFILE_LINE in texts[-1] and seen.count(PROFILE_LINE) == sum(1 for r in main if PROFILE_LINE in request_text(r.body))

        api.clear()
        proc = agents.run_gemini(home, CONVERSATIONAL, cwd, api.base_url, env_extra=env)
        assert proc.returncode == 0, (proc.stdout, proc.stderr[-3000:])
        seen = "\n".join(request_text(r.body) for r in api.requests)
        assert CONVERSATIONAL in seen
        assert FENCE not in seen and "billing-webhook" not in seen
        parts = [p.get("text", "") for r in api.requests for c in r.body.get("contents", []) for p in c.get("parts", [])]
        hook_parts = [p for p in parts if p.startswith("<hook_context>")]
        assert hook_parts and all(PROFILE_LINE in p and FENCE not in p for p in hook_parts)  # the profile, no recall

    decisions = [e for e in _log(memory_repo) if e.get("agent") == "gemini"]
    assert [bool(e["injected"]) for e in decisions] == [True, False], decisions


# -- one memory, three agents ---------------------------------------------------------------------------


FACT = "the payments staging database listens on port 6543, not 5432"
QUESTION = "which port does the payments staging database listen on?"


def test_a_memory_captured_in_claude_code_is_recalled_in_codex_and_gemini(tmp_path: Path, memory_repo: Path) -> None:
    env = {"MEMREPO_DIR": str(memory_repo), "MEMREPO_MODEL_CMD": f"{sys.executable} {CAPTURE_MODEL}",
           "FAKE_MODEL_LOG": str(tmp_path / "model.jsonl")}
    with FakeMessagesAPI("Noted.") as api:
        proc, _ = run_claude(f"Remember that {FACT}.", plugin_dir=REPO_ROOT, cwd=_project(tmp_path, "payments"),
                             env_extra=env, fake_api=api, home=tmp_path / "claude")
    assert proc.returncode == 0, (proc.stdout, proc.stderr[-3000:])
    commit = _wait_for_commit(memory_repo, "capture")
    captured = [text for text in _memory_files(memory_repo).values() if "6543" in text]
    assert len(captured) == 1 and "source: capture" in captured[0], commit

    with FakeOpenAIAPI("Port 6543.") as api:
        home = agents.codex_home(tmp_path / "codex", api.base_url)
        agents.memrepo(agents.codex_env(home, env), "install", "codex")
        proc = agents.run_codex(home, QUESTION, _project(tmp_path, "payments-codex"), env_extra=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        codex_seen = "\n".join(input_text(r.body) for r in api.requests)
    with FakeGeminiAPI("Port 6543.") as api:
        home = agents.gemini_home(tmp_path / "gemini")
        agents.memrepo(agents.gemini_env(home, api.base_url, env), "install", "gemini")
        proc = agents.run_gemini(home, QUESTION, _project(tmp_path, "payments-gemini"), api.base_url, env_extra=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        gemini_seen = "\n".join(request_text(r.body) for r in api.requests)
    for seen in (codex_seen, gemini_seen):
        assert FENCE in seen and "6543" in seen and "port 6543, not 5432" in seen.lower()
    assert {e.get("agent", "claude") for e in _log(memory_repo)} >= {"claude", "codex", "gemini"}


# -- each agent's own capture ----------------------------------------------------------------------------


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_an_agent_s_session_end_captures_its_transcript(tmp_path: Path, memory_repo: Path, agent: str) -> None:
    fact = f"the {agent} build cache lives in /var/cache/{agent}-builds"
    env = {"MEMREPO_DIR": str(memory_repo), "MEMREPO_MODEL_CMD": f"{sys.executable} {CAPTURE_MODEL}",
           "FAKE_MODEL_LOG": str(tmp_path / "model.jsonl")}
    cwd = _project(tmp_path, "builds")
    if agent == "codex":
        with FakeOpenAIAPI("Noted.") as api:
            home = agents.codex_home(tmp_path / "codex", api.base_url)
            agents.memrepo(agents.codex_env(home, env), "install", "codex")
            proc = agents.run_codex(home, f"Remember that {fact}.", cwd, env_extra=env)
    else:
        with FakeGeminiAPI("Noted.") as api:
            home = agents.gemini_home(tmp_path / "gemini")
            agents.memrepo(agents.gemini_env(home, api.base_url, env), "install", "gemini")
            proc = agents.run_gemini(home, f"Remember that {fact}.", cwd, api.base_url, env_extra=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    _wait_for_commit(memory_repo, "capture")
    captured = [text for text in _memory_files(memory_repo).values() if f"/var/cache/{agent}-builds" in text]
    assert len(captured) == 1, _memory_files(memory_repo).keys()
    prompts = [json.loads(line)["prompt"] for line in (tmp_path / "model.jsonl").read_text().splitlines()]
    capture_prompts = [p for p in prompts if "You write long-term memories" in p]
    # The model saw the session's turns, not memrepo's own context or the CLI's scaffolding.
    assert capture_prompts and f"Remember that {fact}." in capture_prompts[0]
    assert FENCE not in capture_prompts[0] and "environment_context" not in capture_prompts[0]
    assert "session_context" not in capture_prompts[0]



# -- the Gemini extension ------------------------------------------------------------------------------


def test_the_gemini_extension_recalls_like_the_settings_install(tmp_path: Path, memory_repo: Path) -> None:
    """gemini-extension/ copied into the extensions folder, as `gemini extensions install` does (the
    command itself reaches for play.googleapis.com, GEMINI-NOTES.md §1): its hooks run `memrepo-hook`."""
    import shutil

    with FakeGeminiAPI("Use the vault command from the note.") as api:
        home = agents.gemini_home(tmp_path / "gemini")
        shutil.copytree(REPO_ROOT / "gemini-extension", home.home / ".gemini" / "extensions" / "memrepo")
        env = {"MEMREPO_DIR": str(memory_repo)}
        proc = agents.run_gemini(home, ANSWERABLE, _project(tmp_path, "webshop"), api.base_url, env_extra=env)
        assert proc.returncode == 0, (proc.stdout, proc.stderr[-3000:])
        seen = "\n".join(request_text(r.body) for r in api.requests if r.is_main)
    assert "(id: billing-webhook-secret-rotation)" in seen and PROFILE_LINE in seen
    assert [bool(e["injected"]) for e in _log(memory_repo) if e.get("agent") == "gemini"] == [True]


# -- the Codex plugin ---------------------------------------------------------------------------------


def _unshare_works() -> str:
    """Why a network namespace cannot be made here ("" when it can)."""
    import shutil

    if not (shutil.which("unshare") and shutil.which("ip")):
        return "unshare or ip (util-linux, iproute2) not found"
    proc = subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, text=True, timeout=30)
    return "" if proc.returncode == 0 else f"unshare -n failed: {proc.stderr.strip()[:200]}"


def test_the_codex_plugin_recalls_once_its_hooks_are_trusted(tmp_path: Path, memory_repo: Path) -> None:
    """The repository is also a Codex plugin (`.codex-plugin/plugin.json`, hooks in hooks/codex.json).
    Plugins need Codex's plugins feature, which reaches for github.com at start: the run happens in
    a network namespace with loopback only (tests/e2e/codex_plugin_netns.py)."""
    import os
    import shutil

    why = _unshare_works()
    if why:
        if os.environ.get("MEMREPO_E2E_REQUIRE") == "1":
            pytest.fail(f"cannot run the Codex plugin test offline: {why}", pytrace=False)
        pytest.skip(why)
    codex = agents.binary("codex")
    src = tmp_path / "memrepo-plugin"  # what a user adds as a marketplace: the checkout, without build output
    shutil.copytree(REPO_ROOT, src, ignore=shutil.ignore_patterns(".git", ".venv", "__pycache__", "node_modules", "*.egg-info"))
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"codex": codex, "plugin_src": str(src), "memory_repo": str(memory_repo),
                                "root": str(tmp_path / "codex"), "prompts": [ANSWERABLE, CONVERSATIONAL]}))
    out = tmp_path / "out.json"
    env = agents.AgentHome(tmp_path / "codex").env()
    driver = REPO_ROOT / "tests" / "e2e" / "codex_plugin_netns.py"
    proc = subprocess.run(["unshare", "-n", "sh", "-c", f'ip link set lo up && exec "{sys.executable}" "{driver}" "{spec}" "{out}"'],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and out.exists(), proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert [s["rc"] for s in result["steps"]] == [0] * 5, result["steps"]
    answerable, conversational = result["seen"]
    assert "(id: billing-webhook-secret-rotation)" in answerable and PROFILE_LINE in answerable
    assert FENCE not in conversational and PROFILE_LINE in conversational
    assert [bool(e["injected"]) for e in _log(memory_repo) if e.get("agent") == "codex"] == [True, False]
