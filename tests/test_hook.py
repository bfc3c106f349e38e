"""The Claude Code hook entry points as real subprocesses: JSON on stdin, context or silence out."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from helpers import commit_all, write_memory
from memrepo.store import index

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN = os.path.join(ROOT, "hooks", "run")
HEAVY = ("git", "frontmatter", "yaml", "click")


def hook(name: str, stdin: bytes | str, repo: str | None, **env: str) -> subprocess.CompletedProcess[bytes]:
    environ = dict(os.environ, MEMREPO_PYTHON=sys.executable, **env)
    if repo is not None:
        environ["MEMREPO_DIR"] = repo
    data = stdin.encode("utf-8", "surrogatepass") if isinstance(stdin, str) else stdin
    return subprocess.run(["sh", RUN, name], input=data, capture_output=True, env=environ, timeout=30)


def event(prompt: str, **extra: str) -> str:
    return json.dumps({"session_id": "s-1", "transcript_path": extra.pop("transcript_path", ""), "cwd": extra.pop("cwd", "/tmp"),
                       "hook_event_name": "UserPromptSubmit", "prompt": prompt, **extra})


@pytest.fixture
def store(repo: str) -> str:
    write_memory(repo, "friday-freeze", class_="rule", title="No production deploys on Friday afternoon",
                 description="After 16:00 on Fridays nothing ships to production without an explicit OK.",
                 topics=["deploy", "release policy"], aliases=["can I ship this now"])
    write_memory(repo, "coffee-order", title="The team orders coffee from the corner roaster",
                 description="Beans come from the corner roaster every Monday.", topics=["coffee"])
    assert commit_all(repo, "memories").returncode == 0
    return repo


def test_answerable_prompt_injects_the_memory(store: str) -> None:
    proc = hook("user_prompt_submit", event("it's friday 17:00, can I still ship this hotfix to production?"), store)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    ctx = out["hookSpecificOutput"]
    assert ctx["hookEventName"] == "UserPromptSubmit"
    assert "(id: friday-freeze)" in ctx["additionalContext"]
    assert "coffee-order" not in ctx["additionalContext"]
    assert proc.stderr == b""
    log = [json.loads(line) for line in open(os.path.join(store, "index", "recall-log.jsonl"), encoding="utf-8")]
    assert log[-1]["injected"][0]["id"] == "friday-freeze" and log[-1]["session"] == "s-1"


@pytest.mark.parametrize("prompt", ["ok, go ahead", "thanks, that worked 🙏", "pode seguir"])
def test_conversational_prompt_prints_nothing(store: str, prompt: str) -> None:
    proc = hook("user_prompt_submit", event(prompt), store)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    log = [json.loads(line) for line in open(os.path.join(store, "index", "recall-log.jsonl"), encoding="utf-8")]
    assert log[-1]["silent"] == "conversational" and log[-1]["injected"] == []


def _garbage() -> bytes:
    return bytes(range(256)) * 64


@pytest.mark.parametrize("name, stdin", [
    ("malformed json", b"{not json"),
    ("json array", b"[1, 2]"),
    ("binary garbage", _garbage()),
    ("prompt not a string", json.dumps({"prompt": 42}).encode()),
    ("empty stdin", b""),
])
def test_bad_stdin_fails_open(store: str, name: str, stdin: bytes) -> None:
    proc = hook("user_prompt_submit", stdin, store)
    assert proc.returncode == 0 and proc.stdout == b""
    assert len(proc.stderr.decode().strip().splitlines()) == 1
    assert proc.stderr.startswith(b"memrepo UserPromptSubmit:")


def test_missing_repository_fails_open(tmp_path: str) -> None:
    proc = hook("user_prompt_submit", event("deploy on friday?"), str(tmp_path / "nowhere"))
    assert proc.returncode == 0 and proc.stdout == b""
    assert b"no index" in proc.stderr and len(proc.stderr.splitlines()) == 1


def test_corrupt_index_fails_open(store: str) -> None:
    with open(os.path.join(store, "index", "memrepo.sqlite3"), "wb") as fh:
        fh.write(b"this is not a database" * 100)
    proc = hook("user_prompt_submit", event("can I deploy to production on friday?"), store)
    assert proc.returncode == 0 and proc.stdout == b""
    assert len(proc.stderr.splitlines()) == 1


def test_huge_prompt_and_unreadable_transcript_stay_fast_and_open(store: str, tmp_path: str) -> None:
    big = "deploy friday production " + ("lorem ipsum " * 90_000)
    proc = hook("user_prompt_submit", event(big, transcript_path=str(tmp_path)), store)
    assert proc.returncode == 0
    assert proc.stdout == b"" or b"friday-freeze" in proc.stdout


def test_previous_turn_from_the_transcript_sharpens_the_query(store: str, tmp_path: str) -> None:
    transcript = tmp_path / "t.jsonl"
    lines = [
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "is the friday production freeze still on?"}},
        {"type": "assistant", "uuid": "a1", "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "Yes: no deploys after 16:00."}]}},
    ]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    proc = hook("user_prompt_submit", event("and what about this hotfix release?", transcript_path=str(transcript)), store)
    assert b"friday-freeze" in proc.stdout
    assert hook("user_prompt_submit", event("ok do it", transcript_path=str(transcript)), store).stdout == b""


def test_session_start_hook_loads_no_heavy_module(store: str, tmp_path: str) -> None:
    # Run the entry script in a fresh interpreter and list what it imported. (The recall hook
    # ends with os._exit, so it is checked through -X importtime below.)
    dump = tmp_path / "modules.json"
    code = ("import runpy, sys, json\n"
            "try:\n    runpy.run_path(sys.argv[1], run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            f"json.dump(sorted(sys.modules), open({str(dump)!r}, 'w'))\n")
    payload = json.dumps({"hook_event_name": "SessionStart", "source": "startup"}).encode()
    env = dict(os.environ, MEMREPO_DIR=store)
    proc = subprocess.run([sys.executable, "-I", "-c", code, os.path.join(ROOT, "hooks", "session_start.py")],
                          input=payload, capture_output=True, env=env, timeout=30)
    assert proc.returncode == 0, proc.stderr
    loaded = set(json.load(open(dump)))
    assert "memrepo.claude.session_start" in loaded
    assert sorted(m for m in loaded if m.split(".")[0] in HEAVY) == []


# Modules whose import is a measurable share of the hook's budget (issue 3: <= 1.5x a bare
# interpreter start): `os` (~1 ms with collections.abc), functools + collections (~3 ms, which
# CPython's _sqlite3 asks for), json/re/typing/datetime and the sqlite3 package.
SLOW = {"os", "functools", "collections", "json", "re", "typing", "datetime", "sqlite3", "__future__",
        "pathlib", "dataclasses", "hashlib", "unicodedata"}


@pytest.mark.parametrize("follow_up", [False, True])
def test_recall_hook_as_launched_loads_only_what_it_needs(store: str, tmp_path: str, follow_up: bool) -> None:
    # Exactly as hooks/run starts it (python -I -S); -X importtime names every module imported.
    # A follow-up also reads the previous turn from the transcript.
    transcript = tmp_path / "t.jsonl"
    lines = [{"type": "user", "uuid": "u1", "message": {"role": "user", "content": "is the friday production freeze still on?"}},
             {"type": "assistant", "uuid": "a1", "message": {"id": "m1", "role": "assistant",
                                                              "content": [{"type": "text", "text": "Yes: no deploys after 16:00."}]}}]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    payload = (event("and what about this hotfix release?", transcript_path=str(transcript)) if follow_up
               else event("can I deploy to production on friday afternoon?"))
    env = dict(os.environ, MEMREPO_DIR=store)
    proc = subprocess.run([sys.executable, "-I", "-S", "-X", "importtime", os.path.join(ROOT, "hooks", "user_prompt_submit.py")],
                          input=payload.encode(), capture_output=True, env=env, timeout=30)
    assert proc.returncode == 0 and b"friday-freeze" in proc.stdout, proc.stderr
    loaded = {row.rsplit("|", 1)[-1].strip() for row in proc.stderr.decode().splitlines() if row.startswith("import time:")}
    assert {"memrepo.recall.search", "_sqlite3"} <= loaded  # the prompt reached the index
    assert ("memrepo.recall.transcript_tail" in loaded) == follow_up
    assert sorted(m for m in loaded if m in SLOW or m.split(".")[0] in HEAVY) == []


def test_install_claude_command_entry_behaves_like_the_plugin_hook(store: str) -> None:
    env = dict(os.environ, MEMREPO_DIR=store)
    proc = subprocess.run([sys.executable, "-I", "-m", "memrepo.claude.entry", "UserPromptSubmit"],
                          input=event("can I ship this hotfix to production on friday?").encode(), capture_output=True, env=env, timeout=30)
    assert b"friday-freeze" in proc.stdout and proc.returncode == 0


def wait_for_bootstrap(repo: str, seconds: float = 90) -> dict:
    """The detached worker's last report, once it is done or failed (or when time runs out)."""
    import time

    status_file = os.path.join(repo, "index", "bootstrap.json")
    deadline = time.time() + seconds
    while time.time() < deadline:
        if os.path.exists(status_file) and json.load(open(status_file)).get("state") in ("done", "failed"):
            break
        time.sleep(0.2)
    return dict(json.load(open(status_file))) if os.path.exists(status_file) else {"state": "missing"}


def test_session_start_returns_at_once_and_refreshes_in_the_background(store: str) -> None:
    os.remove(os.path.join(store, "index", "memrepo.sqlite3"))
    proc = hook("session_start", json.dumps({"hook_event_name": "SessionStart", "source": "startup"}), store)
    assert (proc.returncode, proc.stdout) == (0, b"")
    status = wait_for_bootstrap(store)
    assert status["state"] == "done", status
    assert index.status(store)["count"] == 2


def test_session_start_on_first_use_creates_the_default_repository(tmp_path: str) -> None:
    target = str(tmp_path / "fresh")
    proc = hook("session_start", json.dumps({"hook_event_name": "SessionStart", "source": "startup"}), target)
    assert (proc.returncode, proc.stdout) == (0, b"")
    status = wait_for_bootstrap(target)
    assert status["state"] == "done", status
    assert os.path.isdir(os.path.join(target, ".git")) and os.path.isdir(os.path.join(target, "memory"))


@pytest.mark.parametrize("name, payload", [
    ("user_prompt_submit", event("it's friday 17:00, can I still ship this hotfix to production?")),
    ("stop", json.dumps({"hook_event_name": "Stop", "session_id": "s-1", "transcript_path": "/nonexistent.jsonl"})),
    ("session_end", json.dumps({"hook_event_name": "SessionEnd", "session_id": "s-1", "transcript_path": "/nonexistent.jsonl"})),
])
def test_hooks_stand_aside_inside_memrepos_own_model_call(store: str, name: str, payload: str) -> None:
    # The model command is `claude -p` with these hooks: recalling into the capture prompt or
    # capturing the capture session would loop (and spend the user's quota).
    proc = hook(name, payload, store, MEMREPO_PASS="capture")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert not os.path.exists(os.path.join(store, "index", "jobs")) or not os.listdir(os.path.join(store, "index", "jobs"))
