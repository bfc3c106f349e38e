"""The Claude Code hook entry points as real subprocesses: JSON on stdin, context or silence out."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from helpers import IDENTITY, build_template, commit_all, copy_template, write_memory
from memrepo.base import paths
from memrepo.store import index

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN = os.path.join(ROOT, "hooks", "run")
HEAVY = ("git", "frontmatter", "yaml", "click", "detect_secrets")


def hook(name: str, stdin: bytes | str, repo: str | None, **env: str) -> subprocess.CompletedProcess[bytes]:
    environ = dict(os.environ, MEMREPO_PYTHON=sys.executable, **env)
    if repo is not None:
        environ["MEMREPO_DIR"] = repo
    data = stdin.encode("utf-8", "surrogatepass") if isinstance(stdin, str) else stdin
    return subprocess.run(["sh", RUN, name], input=data, capture_output=True, env=environ, timeout=30)


def event(prompt: str, **extra: str) -> str:
    return json.dumps({"session_id": "s-1", "transcript_path": extra.pop("transcript_path", ""), "cwd": extra.pop("cwd", "/tmp"),
                       "hook_event_name": "UserPromptSubmit", "prompt": prompt, **extra})


def _two_memories(repo: str) -> None:
    write_memory(repo, "friday-freeze", class_="rule", title="No production deploys on Friday afternoon",
                 description="After 16:00 on Fridays nothing ships to production without an explicit OK.",
                 topics=["deploy", "release policy"], aliases=["can I ship this now"])
    write_memory(repo, "coffee-order", title="The team orders coffee from the corner roaster",
                 description="Beans come from the corner roaster every Monday.", topics=["coffee"])
    assert commit_all(repo, "memories").returncode == 0


@pytest.fixture(scope="module")
def store_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_template(tmp_path_factory, _two_memories, identity=IDENTITY)


@pytest.fixture
def store(store_template: str, tmp_path: os.PathLike[str]) -> str:
    """The two memories, committed once per module; a copy per test."""
    return copy_template(store_template, tmp_path)


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
    with open(paths.index_db(store), "wb") as fh:
        fh.write(b"this is not a database" * 100)
    proc = hook("user_prompt_submit", event("can I deploy to production on friday?"), store)
    assert proc.returncode == 0 and proc.stdout == b""
    assert len(proc.stderr.splitlines()) == 1


def test_huge_prompt_and_unreadable_transcript_stay_fast_and_open(store: str, tmp_path: str) -> None:
    big = "deploy friday production " + ("lorem ipsum " * 90_000)
    proc = hook("user_prompt_submit", event(big, transcript_path=str(tmp_path)), store)
    assert (proc.returncode, proc.stderr) == (0, b"")
    # The subject words lead the prompt; the megabyte of filler matches nothing and is bounded away.
    assert "(id: friday-freeze)" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]


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
# CPython's _sqlite3 asks for), json/re/typing/datetime and the sqlite3 package; `stat` (two
# modules, ~0.34 M instructions, for a mode test of one bitmask: issue 44).
SLOW = {"os", "functools", "collections", "json", "re", "typing", "datetime", "sqlite3", "__future__",
        "pathlib", "dataclasses", "hashlib", "unicodedata", "stat"}


@pytest.mark.parametrize("bundled", [False, True], ids=["imported", "bundled"])
@pytest.mark.parametrize("follow_up", [False, True])
def test_recall_hook_as_launched_loads_only_what_it_needs(store: str, tmp_path: str, follow_up: bool,
                                                          bundled: bool) -> None:
    # Exactly as hooks/run starts it (python -I -S, its own pycache prefix: no bundle another test
    # wrote is read); -X importtime names every module imported through the import system. A
    # follow-up also reads the previous turn from the transcript. Bundled: the prompt path's modules
    # run from memrepo/base/bundle.py's file, and still import nothing slow.
    transcript = tmp_path / "t.jsonl"
    lines = [{"type": "user", "uuid": "u1", "message": {"role": "user", "content": "is the friday production freeze still on?"}},
             {"type": "assistant", "uuid": "a1", "message": {"id": "m1", "role": "assistant",
                                                              "content": [{"type": "text", "text": "Yes: no deploys after 16:00."}]}}]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    payload = (event("and what about this hotfix release?", transcript_path=str(transcript)) if follow_up
               else event("can I deploy to production on friday afternoon?"))
    env = dict(os.environ, MEMREPO_DIR=store)
    prefix = ["-X", f"pycache_prefix={tmp_path / 'pycache'}"]
    if bundled:
        subprocess.run([sys.executable, "-I", "-S", *prefix, os.path.join(ROOT, "tools", "memrepo", "base", "bundle.py")],
                       check=True, capture_output=True, timeout=60)
    proc = subprocess.run([sys.executable, "-I", "-S", *prefix, "-X", "importtime",
                           os.path.join(ROOT, "hooks", "user_prompt_submit.py")],
                          input=payload.encode(), capture_output=True, env=env, timeout=30)
    assert proc.returncode == 0 and b"friday-freeze" in proc.stdout, proc.stderr
    loaded = {row.rsplit("|", 1)[-1].strip() for row in proc.stderr.decode().splitlines() if row.startswith("import time:")}
    assert "_sqlite3" in loaded  # the prompt reached the index
    if bundled:  # every prompt's modules by hand; the rest through the import system, from the bundle
        from memrepo.base import bundle

        # the import system asks only for the first of the modules a prompt that reaches the cache
        # runs (the bundle runs them all then), and for the previous turn's reader on a follow-up
        imported = {m for m in loaded if m.startswith("memrepo")}
        assert imported == {bundle.MODULES[bundle.TOGETHER]} | ({"memrepo.recall.transcript_tail"} if follow_up else set())
    else:
        assert "memrepo.recall.search" in loaded
        assert ("memrepo.recall.transcript_tail" in loaded) == follow_up
    assert "memrepo.recall.usage" not in loaded  # the Stop hook's judge: the prompt path reads only its noisy ids
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
    os.remove(paths.index_db(store))
    proc = hook("session_start", json.dumps({"hook_event_name": "SessionStart", "source": "startup"}), store)
    assert (proc.returncode, proc.stdout) == (0, b"")
    status = wait_for_bootstrap(store)
    assert status["state"] == "done", status
    assert index.status(store)["count"] == 2


def test_session_start_on_first_use_creates_the_default_repository(tmp_path: str) -> None:
    target = str(tmp_path / "fresh")
    start = json.dumps({"hook_event_name": "SessionStart", "source": "startup"})
    proc = hook("session_start", start, target)
    assert proc.returncode == 0
    # The first session says it is setting up (issue 39: 16 s of silence on a first session) ...
    said = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert said.startswith("memrepo is setting itself up on this machine (its first session)")
    status = wait_for_bootstrap(target)
    assert status["state"] == "done", status
    assert os.path.isdir(os.path.join(target, ".git")) and os.path.isdir(os.path.join(target, "memory"))
    # ... the next one that it is ready, once.
    proc = hook("session_start", start, target)
    assert json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"].startswith("memrepo is set up:")
    assert hook("session_start", start, target).stdout == b""


STAND_ASIDE = {"user_prompt_submit": "UserPromptSubmit", "stop": "Stop", "pre_compact": "PreCompact",
               "session_end": "SessionEnd"}


@pytest.mark.parametrize("name", sorted(STAND_ASIDE))
def test_hooks_stand_aside_inside_memrepos_own_model_call(store: str, name: str, tmp_path: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # The model command is `claude -p` with these hooks: recalling into the capture prompt or
    # capturing the capture session would loop (and spend the user's quota).
    transcript = str(tmp_path / "s-pass.jsonl")
    shutil.copy(os.path.join(ROOT, "tests", "data", "capture", "refute-part1.jsonl"), transcript)
    payload = {"session_id": "s-pass", "transcript_path": transcript, "cwd": "/tmp", "hook_event_name": STAND_ASIDE[name],
               "prompt": "it's friday 17:00, can I still ship this hotfix to production?", "reason": "other", "trigger": "auto"}
    jobs_dir = os.path.join(store, "index", "jobs")
    if name != "user_prompt_submit":
        # Without MEMREPO_PASS this very payload queues a capture (the worker is not started here).
        from memrepo.worker import jobs

        monkeypatch.setenv("MEMREPO_DIR", store)
        monkeypatch.setattr(jobs, "spawn_worker", lambda repo: 0)
        jobs.on_capture_event(dict(payload), STAND_ASIDE[name])
        assert os.listdir(jobs_dir) != []
        shutil.rmtree(jobs_dir)
    fake_model = f"{sys.executable} {os.path.join(ROOT, 'tests', 'fake', 'fakemodel.py')}"
    proc = hook(name, json.dumps(payload), store, MEMREPO_PASS="capture", MEMREPO_MODEL_CMD=fake_model)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert not os.path.exists(jobs_dir)


# Six notes that all answer one prompt, among notes about other things (so their words are rare).
ROLLBACK = {f"rollback-{i}": dict(title=f"Rollback plan {i}", description=f"How a deploy is rolled back, part {i}.",
                                  topics=["deploy", "rollback"], aliases=["rollback plan"]) for i in range(6)}
OFFICE = {f"office-{w}": dict(title=f"The office {w}", description=f"Where the {w} are.", topics=[w])
          for w in "coffee tabs lunch parking printer badges wifi plants music desks chairs snacks holidays payroll".split()}
ROLLBACK_PROMPT = "what is our deploy rollback plan?"


def _rollback_store(repo: str, pad: str = "") -> str:
    for mid, fields in dict(ROLLBACK, **OFFICE).items():
        fields = dict(fields)
        if mid.startswith("rollback-") and pad:
            fields["title"] += " " + pad
            fields["description"] += " " + pad
        write_memory(repo, mid, **fields)
    # Padded notes break the length rules of validation: committed past the pre-commit hook, indexed all the same.
    assert commit_all(repo, "memories", *(["--no-verify"] if pad else [])).returncode == 0
    return repo


def _context(proc: subprocess.CompletedProcess[bytes]) -> str:
    assert (proc.returncode, proc.stderr) == (0, b""), proc.stderr
    out = json.loads(proc.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    return str(out["hookSpecificOutput"]["additionalContext"])


def test_at_most_three_memories_are_injected(repo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from memrepo.recall import decide

    _rollback_store(repo)
    # All six clear every floor: only the cap keeps three of them out.
    monkeypatch.setattr(decide, "MAX_RESULTS", 10)
    assert sorted(h.id for h in decide.decide(repo, ROLLBACK_PROMPT).hits) == sorted(ROLLBACK)
    monkeypatch.undo()
    ctx = _context(hook("user_prompt_submit", event(ROLLBACK_PROMPT), repo))
    injected = re.findall(r"\(id: ([a-z0-9-]+)\)$", ctx, re.M)
    assert len(injected) == 3 and set(injected) <= set(ROLLBACK), ctx
    assert ctx.startswith("memrepo recalled 3 notes ")
    log = [json.loads(line) for line in open(os.path.join(repo, "index", "recall-log.jsonl"), encoding="utf-8")]
    assert [e["id"] for e in log[-1]["injected"]] == injected


# Claude Code replaces an additionalContext over 10,000 characters by a 2,000-character preview;
# memrepo cuts its own at 9,000 (DESIGN.md, Recall 4: well under the cap).
CONTEXT_CAP = 9_000


def test_hook_output_stays_under_the_context_cap(repo: str) -> None:
    from memrepo.recall import decide

    _rollback_store(repo, pad="ü" * 4_000)
    whole = decide.format_context(decide.decide(repo, ROLLBACK_PROMPT).hits)
    assert len(whole) > 10_000  # three huge notes: over Claude Code's own cap before the cut
    ctx = _context(hook("user_prompt_submit", event(ROLLBACK_PROMPT), repo))
    assert len(ctx) <= CONTEXT_CAP
    # Whole lines of the whole, the cut marked on a line of its own, the fence still closed (issue 15).
    tail = "\n…\n</memrepo-memories>"
    assert ctx.endswith(tail) and whole.startswith(ctx[: -len(tail)] + "\n"), ctx[-200:]
    assert ctx.count("<memrepo-memories>") == 1 and ctx.count("</memrepo-memories>") == 1


@pytest.mark.parametrize("text, expected", [
    ("", None),
    ("one line", "one line"),
    ("x" * CONTEXT_CAP, "x" * CONTEXT_CAP),
    ("x" * (CONTEXT_CAP + 1), "x" * (CONTEXT_CAP - 1) + "…"),
    ("é🚀" * 30_000, ("é🚀" * 30_000)[: CONTEXT_CAP - 1] + "…"),
], ids=["empty", "short", "at-cap", "one-over", "huge-unicode"])
def test_emit_context_caps_and_marks_the_cut(capsys: pytest.CaptureFixture[str], text: str, expected: str | None) -> None:
    from memrepo.claude import hookio

    hookio.emit_context("UserPromptSubmit", text)
    out = capsys.readouterr().out
    if expected is None:
        assert out == ""
    else:
        assert json.loads(out) == {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": expected}}
