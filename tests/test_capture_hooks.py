"""Stop / PreCompact / SessionEnd hooks: a job file and a detached worker, one worker at a time, retries."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from helpers import git, head
from memrepo.passes import capture
from memrepo.claude import install as claudeinstall
from memrepo.worker import jobs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN = os.path.join(ROOT, "hooks", "run")
DATA = os.path.join(ROOT, "tests", "data", "capture")
FAKE = os.path.join(ROOT, "tests", "fake", "fakemodel.py")
HEAVY = ("git", "frontmatter", "yaml", "click", "detect_secrets")
EVENTS = {"stop": "Stop", "pre_compact": "PreCompact", "session_end": "SessionEnd"}


def transcript(tmp_path: str, session: str) -> str:
    path = os.path.join(str(tmp_path), f"{session}.jsonl")
    shutil.copy(os.path.join(DATA, "refute-part1.jsonl"), path)
    return path


def event(name: str, session: str, path: str) -> bytes:
    return json.dumps({"session_id": session, "transcript_path": path, "cwd": "/home/user/shop",
                       "hook_event_name": EVENTS[name], "reason": "other", "trigger": "auto"}).encode()


def hook_env(repo: str, model_cmd: str | None = None) -> dict[str, str]:
    return dict(os.environ, MEMREPO_DIR=repo, MEMREPO_PYTHON=sys.executable,
                MEMREPO_MODEL_CMD=model_cmd or f"{sys.executable} {FAKE}", FAKE_MODEL_RULES=os.path.join(DATA, "refute-rules.json"))


def run_hook(name: str, payload: bytes, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["sh", RUN, name], input=payload, capture_output=True, env=env, timeout=30)


def wait_for(check: object, timeout: float = 90.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError("timed out")


def worker_log(repo: str) -> list[str]:
    path = os.path.join(repo, "index", "jobs", "worker.log")
    return open(path, encoding="utf-8").read().splitlines() if os.path.exists(path) else []


def captured(repo: str, *sessions: str) -> bool:
    state = capture.load_state(repo)
    return all(s in state for s in sessions) and not any(n.endswith((".json", ".running")) for n in os.listdir(jobs.jobs_dir(repo)))


@pytest.mark.parametrize("name", sorted(EVENTS))
def test_capture_hooks_load_no_heavy_module(repo: str, name: str, tmp_path: str) -> None:
    dump = os.path.join(str(tmp_path), "modules.json")
    # exec, not runpy: runpy itself imports `re`.
    code = ("import sys\n"
            "try:\n    exec(compile(open(sys.argv[1]).read(), sys.argv[1], 'exec'), {'__name__': '__main__', '__file__': sys.argv[1]})\n"
            "except SystemExit:\n    pass\n"
            "mods = sorted(sys.modules)\nimport json\n"
            f"json.dump(mods, open({dump!r}, 'w'))\n")
    path = transcript(tmp_path, "s-heavy")
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", code, os.path.join(ROOT, "hooks", name + ".py")],
                          input=event(name, "s-heavy", path), capture_output=True, env=hook_env(repo), timeout=30)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    loaded = set(json.load(open(dump)))
    assert "memrepo.worker.jobs" in loaded
    assert sorted(m for m in loaded if m.split(".")[0] in HEAVY + ("subprocess", "json", "re")) == []
    wait_for(lambda: captured(repo, "s-heavy"))


def gated_model(tmp_path: str) -> tuple[str, str]:
    """A model command that waits for a gate file before answering, and the gate's path.

    A hook or handler that returns while the gate is shut has not waited for the model: that
    is the check, with no clock in it (SessionEnd gives all its hooks 1.5 s; see issue 13, item 6).
    Held shut for some 20 s, the model gives up and leaves a `gave-up` file: only a hook that
    waits for it gets that far, and then fails instead of hanging.
    """
    gate, gave_up = os.path.join(str(tmp_path), "gate"), os.path.join(str(tmp_path), "gave-up")
    loop = (f"exec 2>/dev/null; i=0; while [ ! -e {gate} ]; do i=$((i+1)); "
            f"if [ $i -gt 400 ]; then touch {gave_up}; exit 1; fi; sleep 0.05; done; exec {sys.executable} {FAKE}")
    return f"sh -c '{loop}'", gate


def held(gate: str) -> bool:
    return not os.path.exists(os.path.join(os.path.dirname(gate), "gave-up"))


def queued(repo: str, session: str) -> bool:
    names = os.listdir(jobs.jobs_dir(repo)) if os.path.isdir(jobs.jobs_dir(repo)) else []
    return bool({f"capture-{session}.json", f"capture-{session}.json.running"} & set(names))


def test_session_end_returns_at_once_and_the_worker_commits_afterwards(repo: str, tmp_path: str) -> None:
    path = transcript(tmp_path, "s-end")
    before = head(repo)
    model_cmd, gate = gated_model(tmp_path)
    proc = run_hook("session_end", event("session_end", "s-end", path), hook_env(repo, model_cmd))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert held(gate) and queued(repo, "s-end") and not captured(repo, "s-end")  # returned while the model is held
    assert head(repo) == before  # the hook itself commits nothing
    open(gate, "w").close()
    wait_for(lambda: captured(repo, "s-end"))
    log = git(repo, "log", "-1", "--format=%s%n%b").stdout
    assert log.startswith("capture: 2 memories from session s-end") and "Memrepo-Action: capture" in log
    assert any(line.endswith("done capture-s-end.json") for line in worker_log(repo))


def test_the_handler_returns_before_the_model_runs(repo: str, tmp_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    model_cmd, gate = gated_model(tmp_path)
    monkeypatch.setenv("MEMREPO_DIR", repo)
    monkeypatch.setenv("MEMREPO_MODEL_CMD", model_cmd)
    monkeypatch.setenv("FAKE_MODEL_RULES", os.path.join(DATA, "refute-rules.json"))
    path = transcript(tmp_path, "s-fast")
    assert jobs.on_pre_compact(json.loads(event("pre_compact", "s-fast", path))) == ""
    assert held(gate) and queued(repo, "s-fast") and not captured(repo, "s-fast")
    open(gate, "w").close()
    wait_for(lambda: captured(repo, "s-fast"))


def test_stop_is_throttled_per_session(repo: str, tmp_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMREPO_DIR", repo)
    spawned: list[str] = []
    monkeypatch.setattr(jobs, "spawn_worker", lambda r: spawned.append(r) or 0)
    path = transcript(tmp_path, "s-stop")
    for _ in range(3):
        jobs.on_stop(json.loads(event("stop", "s-stop", path)))
    jobs.on_stop(json.loads(event("stop", "s-other", path)))
    jobs.on_session_end(json.loads(event("session_end", "s-stop", path)))  # never throttled
    assert spawned == [repo, repo, repo]
    assert sorted(os.listdir(jobs.jobs_dir(repo))) == [".stop-s-other", ".stop-s-stop", "capture-s-other.json", "capture-s-stop.json"]
    assert json.load(open(os.path.join(jobs.jobs_dir(repo), "capture-s-stop.json")))["event"] == "SessionEnd"


def test_a_throttled_stop_leaves_a_capture_that_waits_out_the_interval(repo: str, tmp_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Codex CLI has no SessionEnd: the turns after the last unthrottled Stop must still be captured."""
    monkeypatch.setenv("MEMREPO_DIR", repo)
    monkeypatch.setattr(jobs, "spawn_worker", lambda r: 0)
    path = transcript(tmp_path, "s-tail")
    jobs.on_stop(json.loads(event("stop", "s-tail", path)))
    job_path = os.path.join(jobs.jobs_dir(repo), "capture-s-tail.json")
    assert "after" not in json.load(open(job_path))
    os.remove(job_path)  # the worker ran it
    before = time.time()
    jobs.on_stop(json.loads(event("stop", "s-tail", path)))  # throttled: a job that waits
    waiting = json.load(open(job_path))
    assert waiting["after"] >= before + jobs.STOP_INTERVAL
    assert jobs.pending(repo) == [] and jobs.pending(repo, now=waiting["after"] + 1) == [job_path]
    jobs.on_stop(json.loads(event("stop", "s-tail", path)))  # a later one does not push it back
    assert json.load(open(job_path))["after"] == waiting["after"]
    jobs.on_session_end(json.loads(event("session_end", "s-tail", path)))  # a session end runs it now
    assert "after" not in json.load(open(job_path)) and jobs.pending(repo) == [job_path]


@pytest.mark.parametrize("payload", [{}, {"session_id": "x", "transcript_path": "/no/such/file.jsonl"}])
def test_nothing_to_capture_queues_nothing(repo: str, monkeypatch: pytest.MonkeyPatch, payload: dict) -> None:
    monkeypatch.setenv("MEMREPO_DIR", repo)
    assert jobs.on_session_end(payload) == ""
    assert not os.path.exists(jobs.jobs_dir(repo))


def test_two_hooks_racing_run_one_worker(repo: str, tmp_path: str) -> None:
    slow = f"sh -c 'sleep 1; exec {sys.executable} {FAKE}'"
    env = hook_env(repo, slow)
    a, b = transcript(tmp_path, "s-a"), transcript(tmp_path, "s-b")
    procs = [subprocess.Popen(["sh", RUN, "pre_compact"], stdin=subprocess.PIPE, env=env),
             subprocess.Popen(["sh", RUN, "session_end"], stdin=subprocess.PIPE, env=env)]
    for proc, payload in zip(procs, (event("pre_compact", "s-a", a), event("session_end", "s-b", b))):
        proc.communicate(payload, timeout=30)
    wait_for(lambda: captured(repo, "s-a", "s-b"))
    log = worker_log(repo)
    started = [line.split("[")[1].split("]")[0] for line in log if line.endswith("worker started")]
    done = {line.split("[")[1].split("]")[0] for line in log if " done capture-" in line}
    assert len(started) == 2 and len(done) == 1
    assert sum("another worker holds the lock" in line for line in log) == 1
    subjects = git(repo, "log", "--format=%s").stdout.splitlines()
    # Both sessions hold the same turns: whichever ran second found only duplicates and committed nothing.
    assert len([s for s in subjects if s.startswith("capture:")]) == 1


def test_a_killed_worker_s_job_is_retried(repo: str, tmp_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = transcript(tmp_path, "s-kill")
    proc = run_hook("session_end", event("session_end", "s-kill", path), hook_env(repo, "sleep 120"))
    assert proc.returncode == 0
    running = os.path.join(jobs.jobs_dir(repo), "capture-s-kill.json.running")
    wait_for(lambda: os.path.exists(running) and "worker" in (json.load(open(running)) if os.path.getsize(running) else {}))
    pid = json.load(open(running))["worker"]
    os.killpg(pid, signal.SIGKILL)  # the worker leads its own session: this ends it and its `sleep`

    def gone() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False

    wait_for(gone)
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE}")
    monkeypatch.setenv("FAKE_MODEL_RULES", os.path.join(DATA, "refute-rules.json"))
    assert jobs.work(repo) == 1
    log = worker_log(repo)
    assert any(line.endswith("requeued capture-s-kill.json left running by a dead worker") for line in log)
    assert captured(repo, "s-kill")
    assert git(repo, "log", "-1", "--format=%s").stdout.startswith("capture: 2 memories from session s-kill")


def test_a_failing_job_waits_then_gives_up(repo: str) -> None:
    jobs.enqueue(repo, {"kind": "capture", "session": "s-bad", "transcript": "/x"})

    def boom(r: str, job: dict) -> None:
        raise RuntimeError("model down")

    for attempt in range(1, jobs.MAX_ATTEMPTS + 1):
        with jobs.lock(repo) as got:
            assert got
            assert jobs.drain(repo, boom) == []
        assert jobs.pending(repo) == []  # not before RETRY_DELAY
        ready = jobs.pending(repo, now=time.time() + jobs.RETRY_DELAY + 1)
        if attempt < jobs.MAX_ATTEMPTS:
            assert json.load(open(ready[0]))["attempts"] == attempt
            queued = json.load(open(ready[0]))
            queued["not_before"] = 0
            json.dump(queued, open(ready[0], "w"))
        else:
            assert ready == []
    failed = json.load(open(os.path.join(jobs.jobs_dir(repo), "failed", "capture-s-bad.json")))
    assert (failed["attempts"], failed["last_error"]) == (3, "RuntimeError: model down")
    assert jobs.counts(repo) == {"queued": 0, "running": 0, "failed": 1}


def test_the_lock_admits_one_holder(repo: str) -> None:
    with jobs.lock(repo) as first:
        with jobs.lock(repo, wait=0.3) as second:
            assert (first, second) == (True, False)
    with jobs.lock(repo) as again:
        assert again


def test_plugin_and_settings_register_the_capture_hooks(tmp_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    hooks = json.load(open(os.path.join(ROOT, "hooks", "hooks.json")))["hooks"]
    for event_name, script in (("Stop", "stop"), ("PreCompact", "pre_compact"), ("SessionEnd", "session_end")):
        (group,) = hooks[event_name]
        assert group["hooks"][0]["command"] == "sh"
        assert group["hooks"][0]["args"] == ["${CLAUDE_PLUGIN_ROOT}/hooks/run", script]
        assert os.path.exists(os.path.join(ROOT, "hooks", script + ".py"))
    assert hooks["PreCompact"][0]["matcher"] == "manual|auto" and "matcher" not in hooks["Stop"][0]
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path))
    path, _ = claudeinstall.install("/usr/bin/python3")
    settings = json.load(open(path))["hooks"]
    assert settings["PreCompact"] == [{"matcher": "manual|auto", "hooks": [
        {"type": "command", "command": "/usr/bin/python3", "args": ["-I", "-S", claudeinstall.ENTRY, "PreCompact"], "timeout": 10}]}]
    assert {"Stop", "SessionEnd"} <= set(settings)


def test_install_claude_entry_queues_a_capture(repo: str, tmp_path: str) -> None:
    path = transcript(tmp_path, "s-entry")
    proc = subprocess.run([sys.executable, "-I", "-m", "memrepo.claude.entry", "SessionEnd"], input=event("session_end", "s-entry", path),
                          capture_output=True, env=dict(hook_env(repo), PYTHONPATH=os.path.join(ROOT, "tools")), timeout=30, cwd=os.path.join(ROOT, "tools"))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    wait_for(lambda: captured(repo, "s-entry"))


def test_a_new_request_keeps_the_failures_of_the_job_it_replaces(repo: str) -> None:
    """Issue 16: `enqueue` reset a failing capture to attempt 0, so every throttled Stop retried it forever."""
    job = {"kind": "capture", "session": "s-again", "transcript": "/x"}
    path = jobs.enqueue(repo, job)

    def boom(r: str, j: dict) -> None:
        raise RuntimeError("model down")

    for attempt in range(1, jobs.MAX_ATTEMPTS + 1):
        with jobs.lock(repo) as got:
            assert got
            jobs.drain(repo, boom)
        if attempt < jobs.MAX_ATTEMPTS:
            before = json.load(open(path))
            jobs.enqueue(repo, dict(job, transcript="/x-grown"))  # the next Stop of the same session
            after = json.load(open(path))
            assert (after["attempts"], after["not_before"], after["transcript"]) == (attempt, before["not_before"], "/x-grown")
            after["not_before"] = 0
            json.dump(after, open(path, "w"))
    failed = os.path.join(jobs.jobs_dir(repo), "failed", "capture-s-again.json")
    assert json.load(open(failed))["attempts"] == jobs.MAX_ATTEMPTS
    assert jobs.enqueue(repo, dict(job, transcript="/x-latest")) == failed  # gave up: no new pending job
    assert jobs.pending(repo, now=time.time() + 10 * jobs.RETRY_DELAY) == []
    assert json.load(open(failed))["transcript"] == "/x-latest"  # kept for a run by hand


def test_a_failure_while_a_newer_request_waits_is_counted_on_it(repo: str) -> None:
    job = {"kind": "capture", "session": "s-race", "transcript": "/x"}
    path = jobs.enqueue(repo, job)

    def fail_after_a_new_stop(r: str, j: dict) -> None:
        jobs.enqueue(repo, dict(job, transcript="/x-newer"))  # a Stop fires while the worker runs
        raise RuntimeError("model down")

    with jobs.lock(repo) as got:
        assert got
        jobs.drain(repo, fail_after_a_new_stop)
    queued = json.load(open(path))
    assert (queued["transcript"], queued["attempts"], queued["last_error"]) == ("/x-newer", 1, "RuntimeError: model down")


def long_transcript(tmp_path: str, session: str, turns: int) -> str:
    """A Claude Code session of `turns` user/assistant pairs of ~6,000 characters each."""
    path = os.path.join(str(tmp_path), f"{session}.jsonl")
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(turns):
            for role in ("user", "assistant"):
                text = f"{role} turn {i} of a long session: " + " ".join(f"word{i}x{j}" for j in range(600))
                content = text if role == "user" else [{"type": "text", "text": text}]
                fh.write(json.dumps({"type": role, "uuid": f"{session}-{i}-{role}", "sessionId": session,
                                     "cwd": "/home/user/shop", "timestamp": "2026-11-29T18:00:01.000Z",
                                     "message": {"role": role, "id": f"msg-{i}", "content": content}}) + "\n")
    return path


def test_a_long_transcript_is_captured_a_budget_at_a_time_behind_the_other_jobs(
        repo: str, tmp_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A capture job makes at most capture_job.MAX_PARTS model calls, then goes back to the queue
    where it stopped: a huge transcript never holds the worker (and the other sessions' captures)
    for hours of model calls, and nothing of it is skipped (issue 16's mark)."""
    from memrepo.worker import capture_job

    long = long_transcript(tmp_path, "s-long", 120)  # ~1.5 M characters: about 25 parts
    short = transcript(tmp_path, "s-short")
    calls = os.path.join(str(tmp_path), "calls.jsonl")
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE}")
    monkeypatch.setenv("FAKE_MODEL_DEFAULT", '{"memories": [], "refuted": []}')
    monkeypatch.setenv("FAKE_MODEL_LOG", calls)
    jobs.enqueue(repo, {"kind": "capture", "session": "s-long", "transcript": long, "cwd": "/home/user/shop"})
    time.sleep(0.01)
    jobs.enqueue(repo, {"kind": "capture", "session": "s-short", "transcript": short, "cwd": "/home/user/shop"})
    assert jobs.work(repo) == 1  # the short session's job; the long one went back to the queue
    first = capture.load_state(repo)["s-long"]
    assert len(open(calls).read().splitlines()) == capture_job.MAX_PARTS + 1  # its budget, and the short one's call
    assert "s-short" in capture.load_state(repo)
    assert any("capture s-long: read to line" in line and "the rest at the next worker run" in line for line in worker_log(repo))
    waiting = json.load(open(os.path.join(jobs.jobs_dir(repo), "capture-s-long.json")))
    assert waiting["attempts"] == 0 and "last_error" not in waiting  # deferred, not failed
    rounds = 1
    while os.path.exists(os.path.join(jobs.jobs_dir(repo), "capture-s-long.json")):
        waiting = json.load(open(os.path.join(jobs.jobs_dir(repo), "capture-s-long.json")))
        waiting["not_before"] = 0
        json.dump(waiting, open(os.path.join(jobs.jobs_dir(repo), "capture-s-long.json"), "w"))
        jobs.work(repo)
        rounds += 1
        assert rounds < 10
    assert rounds >= 3
    assert capture.load_state(repo)["s-long"] != first
    prompts = [json.loads(line)["prompt"] for line in open(calls)]
    for i in range(120):  # every turn reached the model exactly once
        for role in ("user", "assistant"):
            assert sum(f"{role} turn {i} of a long session" in p for p in prompts) == 1, (role, i)
