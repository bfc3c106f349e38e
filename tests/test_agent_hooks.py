"""Codex CLI and Gemini CLI hooks at the contract level: the entry points as real subprocesses,
fed the stdin the real CLIs sent (tests/fixtures/codex, tests/fixtures/gemini, recorded from
codex-cli 0.171.0 and gemini-cli 0.61.0), with a real memory repository behind them.

The real CLIs drive the same entry points end to end in test_e2e_agents.py.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import commit_all, write_memory
from test_hook import SLOW
from memrepo.base import bundle, paths
from memrepo.agents.codex import install as codex_install, tail as codex_tail
from memrepo.agents.gemini import handlers as gemini_handlers, install as gemini_install, tail as gemini_tail
from memrepo.format import transcript
from memrepo.worker import jobs

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CODEX_ROLLOUT = FIXTURES / "codex" / "rollout-sample.jsonl"
GEMINI_CHAT = FIXTURES / "gemini" / "session-2026-12-02T02-27-cd51b046.jsonl"
INSTALLS = {"codex": codex_install, "gemini": gemini_install}


def fixture(agent: str, name: str, **fields: object) -> bytes:
    data = json.loads((FIXTURES / agent / f"{name}.json").read_text(encoding="utf-8"))
    data.update(fields)
    return json.dumps(data).encode()


def command(agent: str, event: str) -> list[str]:
    """What `memrepo install codex|gemini` registers: this interpreter, -I -S, the entry script."""
    return shlex.split(INSTALLS[agent].command(sys.executable, event))


def run(agent: str, event: str, stdin: bytes, repo: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    environ = dict(os.environ, MEMREPO_DIR=repo, **env)
    return subprocess.run(command(agent, event), input=stdin, capture_output=True, env=environ, timeout=60)


@pytest.fixture
def store(repo: str) -> str:
    write_memory(repo, "build-command", class_="fact", title="The build and test command is make check",
                 description="Run `make check` from the repository root; it builds and runs the tests.",
                 topics=["build", "tests"], aliases=["how do I run the tests"])
    write_memory(repo, "coffee-order", title="The team orders coffee from the corner roaster",
                 description="Beans come from the corner roaster every Monday.", topics=["coffee"])
    assert commit_all(repo, "memories").returncode == 0
    return repo


def log_lines(repo: str) -> list[dict]:
    path = os.path.join(repo, "index", "recall-log.jsonl")
    return [json.loads(line) for line in open(path, encoding="utf-8")] if os.path.exists(path) else []


# -- recall ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("agent, event, name, hook_event", [
    ("codex", "UserPromptSubmit", "user_prompt_submit", "UserPromptSubmit"),
    ("gemini", "BeforeAgent", "before_agent", "BeforeAgent"),
])
def test_an_answerable_prompt_gets_the_memory_and_nothing_else(store: str, agent: str, event: str, name: str, hook_event: str) -> None:
    proc = run(agent, event, fixture(agent, name, prompt="how do we run the tests here?", transcript_path=""), store)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    out = json.loads(proc.stdout)
    # Codex drops the whole output of a hook that prints an unknown top-level key (CODEX-NOTES.md §4).
    assert list(out) == ["hookSpecificOutput"]
    assert out["hookSpecificOutput"]["hookEventName"] == hook_event
    assert "(id: build-command)" in out["hookSpecificOutput"]["additionalContext"]
    assert "coffee-order" not in out["hookSpecificOutput"]["additionalContext"]
    entry = log_lines(store)[-1]
    assert entry["agent"] == agent and entry["injected"][0]["id"] == "build-command"
    assert entry["session"] == json.loads(fixture(agent, name))["session_id"]


@pytest.mark.parametrize("agent, event, name", [("codex", "UserPromptSubmit", "user_prompt_submit"),
                                                 ("gemini", "BeforeAgent", "before_agent")])
@pytest.mark.parametrize("prompt", ["ok, go ahead", "thanks!"])
def test_a_conversational_prompt_prints_nothing(store: str, agent: str, event: str, name: str, prompt: str) -> None:
    proc = run(agent, event, fixture(agent, name, prompt=prompt, transcript_path=""), store)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert log_lines(store)[-1]["silent"] == "conversational" and log_lines(store)[-1]["agent"] == agent


@pytest.mark.parametrize("agent, event", [("codex", "UserPromptSubmit"), ("gemini", "BeforeAgent"),
                                          ("codex", "SessionStart"), ("gemini", "SessionEnd")])
@pytest.mark.parametrize("stdin", [b"{not json", b"[1]", b"", bytes(range(256)) * 8])
def test_bad_stdin_fails_open(store: str, agent: str, event: str, stdin: bytes) -> None:
    """Exit 0 and no stdout whatever comes in: Codex blocks the prompt on exit 2, Gemini warns on 1."""
    proc = run(agent, event, stdin, store)
    assert proc.returncode == 0 and proc.stdout == b""


@pytest.mark.parametrize("agent, event, name", [("codex", "UserPromptSubmit", "user_prompt_submit"),
                                                 ("gemini", "BeforeAgent", "before_agent")])
def test_no_index_fails_open(repo: str, agent: str, event: str, name: str) -> None:
    shutil.rmtree(os.path.join(repo, "index"), ignore_errors=True)
    proc = run(agent, event, fixture(agent, name, prompt="how do we run the tests?", transcript_path=""), repo)
    assert proc.returncode == 0 and proc.stdout == b"" and b"memrepo" in proc.stderr


@pytest.mark.parametrize("agent, event, name", [("codex", "UserPromptSubmit", "user_prompt_submit"),
                                                 ("gemini", "BeforeAgent", "before_agent")])
def test_a_cache_lost_mid_session_is_said_once_and_logged(store: str, agent: str, event: str, name: str) -> None:
    """The cache removed while the agent runs: the hook's stderr reaches no one (Codex prints
    "Completed", Gemini nothing), so the agent is told once a session, each silent prompt is in
    the recall log (the walk of h30)."""
    db = paths.index_db(store)
    for f in (db, db + "-wal", db + "-shm"):
        if os.path.exists(f):
            os.remove(f)
    stdin = fixture(agent, name, prompt="how do we run the tests here?", transcript_path="")
    first = run(agent, event, stdin, store)
    assert first.returncode == 0, first.stderr
    said = json.loads(first.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "memrepo recalled nothing" in said and "`memrepo index --rebuild`" in said
    second = run(agent, event, stdin, store)
    assert (second.returncode, second.stdout) == (0, b"")  # once a session, not on every prompt
    assert [e["silent"] for e in log_lines(store)] == ["no-cache", "no-cache"]
    assert log_lines(store)[-1]["agent"] == agent
    subprocess.run([sys.executable, "-m", "memrepo", "--repo", store, "index", "--rebuild"], check=True, capture_output=True)
    other = run(agent, event, fixture(agent, name, prompt="how do we run the tests here?", transcript_path="",
                                      session_id="another-session"), store)
    assert "(id: build-command)" in json.loads(other.stdout)["hookSpecificOutput"]["additionalContext"]


def test_an_unknown_event_is_ignored(store: str) -> None:
    for agent in INSTALLS:
        proc = run(agent, "PermissionRequest", b"{}", store)
        assert proc.returncode == 0 and proc.stdout == b"" and b"unknown hook event" in proc.stderr


def test_gemini_reads_the_prompt_without_another_hook_s_session_context(store: str) -> None:
    """Gemini glues SessionStart context to the front of the prompt (GEMINI-NOTES.md §4): the
    recorded BeforeAgent stdin starts with such a block; only the user's words are the query."""
    glued = "<hook_context>how do I run the tests? build test make check</hook_context>\n\nok, go ahead"
    proc = run("gemini", "BeforeAgent", fixture("gemini", "before_agent", prompt=glued, transcript_path=""), store)
    assert (proc.returncode, proc.stdout) == (0, b"")
    assert log_lines(store)[-1]["silent"] == "conversational"
    assert gemini_handlers.own_prompt(glued) == "ok, go ahead"
    assert gemini_handlers.own_prompt("<hook_context>unclosed") == "<hook_context>unclosed"


# -- session start ----------------------------------------------------------------------------------


def _with_profile(repo: str) -> None:
    with open(os.path.join(repo, "profile.md"), "a", encoding="utf-8") as fh:
        fh.write("\n- Answer in British English.\n")
    assert commit_all(repo, "profile").returncode == 0


def test_codex_session_start_injects_the_profile_and_notes_the_session(store: str) -> None:
    _with_profile(store)
    proc = run("codex", "SessionStart", fixture("codex", "session_start"), store)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart" and "British English" in out["additionalContext"]
    starts = [json.loads(line) for line in open(os.path.join(store, "index", "session-starts.jsonl"), encoding="utf-8")]
    assert starts[-1]["agent"] == "codex" and starts[-1]["source"] == "startup"


def test_gemini_session_start_adds_no_context_and_the_first_prompt_brings_the_profile(store: str) -> None:
    """Gemini -p glues SessionStart context to the prompt and drops that prompt on --resume: the
    profile comes with the session's first prompt instead, once."""
    _with_profile(store)
    proc = run("gemini", "SessionStart", fixture("gemini", "session_start"), store)
    assert (proc.returncode, proc.stdout) == (0, b""), proc.stderr
    starts = [json.loads(line) for line in open(os.path.join(store, "index", "session-starts.jsonl"), encoding="utf-8")]
    assert starts[-1]["agent"] == "gemini"
    first = run("gemini", "BeforeAgent", fixture("gemini", "before_agent", prompt="ok, go ahead", transcript_path=""), store)
    context = json.loads(first.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "British English" in context and "build-command" not in context
    again = run("gemini", "BeforeAgent", fixture("gemini", "before_agent", prompt="how do we run the tests here?",
                                                 transcript_path=""), store)
    context = json.loads(again.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "British English" not in context and "(id: build-command)" in context
    other = run("gemini", "BeforeAgent", fixture("gemini", "before_agent", session_id="another", prompt="ok, go ahead",
                                                 transcript_path=""), store)
    assert other.stdout == b""  # another session's first prompt: its own SessionStart left nothing


# -- capture ----------------------------------------------------------------------------------------


def _queued(repo: str) -> dict:
    names = [n for n in os.listdir(jobs.jobs_dir(repo)) if n.startswith("capture-") and n.endswith(".json")]
    assert len(names) == 1, names
    return json.loads(open(os.path.join(jobs.jobs_dir(repo), names[0]), encoding="utf-8").read())


@pytest.mark.parametrize("agent, event, name, source", [
    ("codex", "Stop", "stop", CODEX_ROLLOUT),
    ("codex", "SessionEnd", "session_end", CODEX_ROLLOUT),
    ("codex", "PreCompact", "pre_compact", CODEX_ROLLOUT),
    ("gemini", "AfterAgent", "after_agent", GEMINI_CHAT),
    ("gemini", "SessionEnd", "session_end", GEMINI_CHAT),
])
def test_the_session_events_queue_a_capture_of_the_agent_s_transcript(store: str, tmp_path: Path, agent: str, event: str,
                                                                       name: str, source: Path) -> None:
    path = tmp_path / source.name
    shutil.copy(source, path)
    # A model command that never answers keeps the worker from committing anything here.
    proc = run(agent, event, fixture(agent, name, transcript_path=str(path)), store, MEMREPO_MODEL_CMD="false")
    assert (proc.returncode, proc.stdout) == (0, b""), proc.stderr
    job = _queued(store)
    assert job["agent"] == agent and job["transcript"] == str(path) and job["event"] == event


def test_gemini_pre_compress_is_not_a_capture(store: str) -> None:
    """PreCompress fires before every model call (GEMINI-NOTES.md §2): not registered, not handled."""
    from memrepo.agents.gemini import install

    assert "PreCompress" not in install.EVENTS and "PreCompress" not in gemini_handlers.HANDLERS


def test_the_turn_end_judges_usage_from_the_agent_s_reply_field(store: str, tmp_path: Path) -> None:
    """Codex's Stop has `last_assistant_message`, Gemini's AfterAgent `prompt_response`."""
    for agent, event, name, prompt_event, prompt_name, reply_field in (
            ("codex", "Stop", "stop", "UserPromptSubmit", "user_prompt_submit", "last_assistant_message"),
            ("gemini", "AfterAgent", "after_agent", "BeforeAgent", "before_agent", "prompt_response")):
        assert run(agent, prompt_event, fixture(agent, prompt_name, prompt="how do we run the tests here?", transcript_path=""),
                   store).stdout
        reply = "Use `make check` from the repository root: it builds and runs the tests."
        proc = run(agent, event, fixture(agent, name, transcript_path="", **{reply_field: reply}), store)
        assert proc.returncode == 0, proc.stderr
        verdicts = [json.loads(line) for line in open(os.path.join(store, "index", "recall-usage.jsonl"), encoding="utf-8")]
        assert verdicts[-1]["session"] == json.loads(fixture(agent, name))["session_id"], verdicts[-1]
        assert verdicts[-1]["used"] == ["build-command"], verdicts[-1]


# -- the transcript readers ---------------------------------------------------------------------------


def test_codex_rollout_reads_as_turns_without_hook_context() -> None:
    turns = list(transcript.read(str(CODEX_ROLLOUT)))
    assert [(t.role, t.kind) for t in turns] == [("user", "prompt"), ("assistant", "reply"), ("tool", "tool_result"),
                                                  ("assistant", "reply"), ("user", "prompt"), ("assistant", "reply")]
    assert turns[0].text == "Please check the notes and tell me the build command."
    assert turns[1].tools[0].name == "exec_command" and turns[1].tools[0].command == "ls"
    assert turns[2].tool_use_ids == [turns[1].tools[0].id]
    assert turns[0].session_id == "01a23495-37c5-7c32-8c84-08e28f845458" and turns[0].cwd == "/home/user/project"
    text = "\n".join(t.text for t in turns)
    assert "memrepo:" not in text and "environment_context" not in text and "skills_instructions" not in text
    assert [t.text for t in transcript.read(str(CODEX_ROLLOUT), start_line=turns[3].last_line)] == \
        ["How do I run the tests?", "Run `make test` from the repository root."]


def test_gemini_session_reads_as_turns_without_hook_context() -> None:
    turns = list(transcript.read(str(GEMINI_CHAT)))
    assert [(t.role, t.kind) for t in turns] == [("user", "prompt"), ("assistant", "reply"), ("tool", "tool_result"),
                                                  ("assistant", "reply"), ("user", "prompt"), ("assistant", "reply")]
    assert turns[0].text == "Run the tests for me"
    assert turns[1].tools[0].name == "run_shell_command" and "all 3 tests passed" in turns[1].tools[0].command
    assert "all 3 tests passed" in turns[2].text and "untrusted_context" not in turns[2].text
    text = "\n".join(t.text for t in turns)
    assert "hook_context" not in text and "memrepo" not in text and "session_context" not in text
    assert turns[0].session_id == "cd51b046-5b94-4134-bdfa-9ab118f6c1e2"


def test_claude_transcripts_still_read_as_before() -> None:
    path = FIXTURES / "claude-code"
    sample = next(p for p in sorted(path.iterdir()) if p.suffix == ".jsonl")
    with open(sample, "rb") as fh:
        assert transcript.sniff(fh) == "claude"
    assert list(transcript.read(str(sample))), sample


def test_the_previous_turn_of_each_agent_s_transcript() -> None:
    assert codex_tail.previous_turn(str(CODEX_ROLLOUT), "and the linter?") == \
        "How do I run the tests?\nRun `make test` from the repository root."
    assert gemini_tail.previous_turn(str(GEMINI_CHAT), "and the linter?") == \
        "Thanks. What did you run?\nDone: all 3 tests passed."
    assert codex_tail.previous_turn("/no/such/file", "x") == "" and gemini_tail.previous_turn(str(FIXTURES), "x") == ""


HEAVY = ("git", "frontmatter", "yaml", "click", "detect_secrets")


@pytest.mark.parametrize("agent, event, name, transcript", [
    ("codex", "UserPromptSubmit", "user_prompt_submit", CODEX_ROLLOUT),
    ("gemini", "BeforeAgent", "before_agent", GEMINI_CHAT),
])
def test_the_prompt_hook_loads_no_heavy_module(store: str, agent: str, event: str, name: str, transcript: Path) -> None:
    """As installed (`python -I -S …/entry.py`), a follow-up reading the agent's transcript included."""
    stdin = fixture(agent, name, prompt="and how do we run the tests with it?", transcript_path=str(transcript))
    cmd = command(agent, event)
    proc = subprocess.run([cmd[0], "-X", "importtime", *cmd[1:]], input=stdin,
                          capture_output=True, env=dict(os.environ, MEMREPO_DIR=store), timeout=60)
    assert proc.returncode == 0 and b"build-command" in proc.stdout, proc.stderr[-2000:]
    loaded = {row.rsplit("|", 1)[-1].strip() for row in proc.stderr.decode().splitlines() if row.startswith("import time:")}
    # the first module of those a prompt that reaches the cache runs: the bundle runs the others by hand
    assert {bundle.MODULES[bundle.TOGETHER], f"memrepo.agents.{agent}.tail"} <= loaded
    assert sorted(m for m in loaded if m.split(".")[0] in HEAVY) == []
    # nor what Claude Code's prompt hook keeps out for its cost (Gemini's custom commands loaded
    # `os` and `re` on every prompt: 1.25x a bare start, issue 44)
    assert sorted(m for m in loaded if m in SLOW) == []


@pytest.mark.parametrize("agent, event, name, transcript", [
    ("codex", "UserPromptSubmit", "user_prompt_submit", CODEX_ROLLOUT),
    ("gemini", "BeforeAgent", "before_agent", GEMINI_CHAT),
])
def test_a_prompt_that_stands_alone_never_loads_the_transcript_reader(store: str, agent: str, event: str, name: str,
                                                                       transcript: Path) -> None:
    """The previous turn is read only for a follow-up that leans on it (0.5 M instructions a prompt), as
    Claude Code's hook does."""
    stdin = fixture(agent, name, prompt="which build and test command runs the whole suite of this repository before a release?",
                    transcript_path=str(transcript))
    cmd = command(agent, event)
    proc = subprocess.run([cmd[0], "-X", "importtime", *cmd[1:]], input=stdin,
                          capture_output=True, env=dict(os.environ, MEMREPO_DIR=store), timeout=60)
    assert proc.returncode == 0 and b"build-command" in proc.stdout, proc.stderr[-2000:]
    loaded = {row.rsplit("|", 1)[-1].strip() for row in proc.stderr.decode().splitlines() if row.startswith("import time:")}
    assert bundle.MODULES[bundle.TOGETHER] in loaded
    assert {f"memrepo.agents.{agent}.tail", "memrepo.recall.transcript_tail"} & loaded == set()


def test_the_codex_plugin_hook_runs_through_hooks_run(store: str) -> None:
    """The Codex plugin's command (hooks/codex.json): `sh hooks/run codex EVENT`, python -I -S, tools/ on the path."""
    run_sh = Path(__file__).resolve().parent.parent / "hooks" / "run"
    stdin = fixture("codex", "user_prompt_submit", prompt="how do we run the tests here?", transcript_path=str(CODEX_ROLLOUT))
    proc = subprocess.run(["sh", str(run_sh), "codex", "UserPromptSubmit"], input=stdin,
                          capture_output=True, env=dict(os.environ, MEMREPO_DIR=store, MEMREPO_PYTHON=sys.executable),
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "(id: build-command)" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert log_lines(store)[-1]["agent"] == "codex"
