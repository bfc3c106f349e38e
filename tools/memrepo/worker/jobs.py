"""The offline worker and what the capture hooks call (stdlib only: the hooks import it).

A hook writes a small JSON job under `index/jobs/` (`worker.queue`) and starts a detached worker
(`python -m memrepo.worker.jobs REPO`, a new session, stdin from /dev/null, output to
`index/jobs/worker.log`), then returns — SessionEnd gives all its hooks 1.5 s together. The
worker drains the queue, running each job by its kind (`capture_job`, `sweep`); those import the
queue, never this module, so no import runs in a circle.
"""

from __future__ import annotations

import os
import sys
import time

from memrepo.base import paths, projects
from memrepo.worker.queue import (MAX_ATTEMPTS, RETRY_DELAY, SWEEP_STATE, WORKER_LOG, counts, drain, enqueue, failed_jobs,  # noqa: F401
                                  jobs_dir, last_sweep, lock, log, pending, recover, retry_failed, safe_name)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

STOP_INTERVAL = 300.0  # Stop fires after every reply: capture from it at most this often per session
SWEEP_EVERY = 24 * 3600.0
SWEEP_REQUEST_COOLDOWN = 3600.0


def dispatch(repo: str, job: dict[str, Any]) -> Any:
    """Run one job in this (full) interpreter."""
    if job.get("kind") == "capture":
        from memrepo.worker import capture_job

        return capture_job.run_job(repo, job)
    if job.get("kind") == "sweep":
        from memrepo.worker import sweep

        return sweep.run_locked(repo)
    raise ValueError(f"unknown job kind {job.get('kind')!r}")


def work(repo: str, handler: Callable[[str, dict[str, Any]], Any] = dispatch) -> int:
    """The worker: drain the queue under the lock, then look again after letting go. Returns jobs run."""
    done = 0
    while True:
        with lock(repo) as got:
            if not got:
                log(repo, "another worker holds the lock; leaving the queue to it")
                return done
            recover(repo)
            done += len(drain(repo, handler))
        if not pending(repo):
            return done


def spawn_worker(repo: str) -> int:
    """Start a detached worker for `repo` (a new session, no terminal); returns its pid."""
    from memrepo import proc

    os.makedirs(jobs_dir(repo), exist_ok=True)
    tools = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=tools + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return proc.spawn_detached(proc.python_main("memrepo.worker.jobs", repo),
                               log_path=os.path.join(jobs_dir(repo), WORKER_LOG), env=env)


# -- the capture hooks -------------------------------------------------------------------------


def _throttled(repo: str, session: str) -> bool:
    """True when a Stop of this session already queued a capture less than STOP_INTERVAL ago."""
    marker = os.path.join(jobs_dir(repo), f".stop-{safe_name(session)}")
    try:
        if time.time() - os.path.getmtime(marker) < STOP_INTERVAL:
            return True
    except OSError:
        pass
    os.makedirs(jobs_dir(repo), exist_ok=True)
    with open(marker, "w") as fh:
        fh.write(str(int(time.time())))
    return False


def on_capture_event(event: dict[str, Any], name: str = "", agent: str = "", turn_end: str = "Stop") -> str:
    """Stop / PreCompact / SessionEnd: queue a capture of the session and start a worker. Prints nothing.

    `turn_end` is the agent's event after every reply (Claude Code's and Codex CLI's Stop, Gemini
    CLI's AfterAgent): it queues a capture at most every STOP_INTERVAL per session. One that
    comes sooner leaves a job that waits out the interval (`after`), so the last turns of an
    agent with no session-end event (Codex CLI) are captured by the next worker, not lost.
    """
    repo = paths.memory_repo()
    transcript = event.get("transcript_path")
    session = str(event.get("session_id") or "")
    if not transcript or not session or not os.path.isfile(str(transcript)) or projects.git_dir(repo) is None:
        return ""
    name = str(event.get("hook_event_name") or name)
    if paths.recall_only(repo):
        return ""
    job = {"kind": "capture", "session": session, "transcript": str(transcript),
           "cwd": str(event.get("cwd") or ""), "event": name}
    if agent:
        job["agent"] = agent
    if name == turn_end and _throttled(repo, session):
        if not _queued(repo, job):
            enqueue(repo, {**job, "after": time.time() + STOP_INTERVAL})
        return ""
    enqueue(repo, job)
    spawn_worker(repo)
    return ""


def _queued(repo: str, job: dict[str, Any]) -> bool:
    """True when this session already has a capture waiting to run (a later one would only delay it)."""
    return os.path.exists(os.path.join(jobs_dir(repo), f"capture-{safe_name(str(job['session']))}.json"))


def on_stop(event: dict[str, Any]) -> str:
    return on_capture_event(event, "Stop")


def on_pre_compact(event: dict[str, Any]) -> str:
    return on_capture_event(event, "PreCompact")


def on_session_end(event: dict[str, Any]) -> str:
    return on_capture_event(event, "SessionEnd")


# -- the daily sweep ---------------------------------------------------------------------------


def sweep_due(repo: str, now: float | None = None) -> bool:
    """True when the last sweep is over a day old (or never ran) and none was requested lately."""
    now = time.time() if now is None else now
    if paths.recall_only(repo):
        return False
    last = last_sweep(repo) or {}
    if now - float(last.get("finished", 0)) < SWEEP_EVERY:
        return False
    try:
        return now - os.path.getmtime(os.path.join(jobs_dir(repo), ".sweep-requested")) >= SWEEP_REQUEST_COOLDOWN
    except OSError:
        return True


def request_sweep(repo: str) -> int:
    """Queue a sweep and start a worker; returns the worker's pid."""
    enqueue(repo, {"kind": "sweep"})
    with open(os.path.join(jobs_dir(repo), ".sweep-requested"), "w") as fh:
        fh.write(str(int(time.time())))
    return spawn_worker(repo)


def main(argv: list[str]) -> int:
    """`python -m memrepo.worker.jobs REPO`: the detached worker; moves to an interpreter with memrepo's dependencies."""
    repo = os.path.abspath(argv[0]) if argv else paths.memory_repo()
    import importlib.util

    from memrepo.store import private

    private.restrict()

    if not all(importlib.util.find_spec(name) for name in ("click", "yaml", "frontmatter")):
        from memrepo.worker import bootstrap

        py = bootstrap.find_python(repo)
        if not py or os.path.realpath(py) == os.path.realpath(sys.executable):
            log(repo, "no Python with memrepo's dependencies; jobs stay queued (run `memrepo doctor`)")
            return 1
        from memrepo import proc

        os.execv(py, proc.python_main("memrepo.worker.jobs", repo, python=py))
    os.nice(10)  # after the session's own work, never before it
    log(repo, "worker started")
    try:
        n = work(repo)
    except Exception as exc:  # noqa: BLE001 — detached: report to the log, nobody else listens
        log(repo, f"worker crashed: {type(exc).__name__}: {exc}")
        return 1
    log(repo, f"worker finished ({n} job(s))")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))


def checks(repo: str) -> list[Any]:
    """`memrepo doctor`'s line about background jobs that gave up."""
    from memrepo.store.doctor import Check

    failed = failed_jobs(repo)
    if not failed:
        return [Check("background jobs", True, "none failed")]
    last = failed[-1]
    return [Check("background jobs", False, f"{len(failed)} background job{'s' * (len(failed) != 1)} gave up after "
                  f"{MAX_ATTEMPTS} attempts (what they would have captured is not in memory yet); the latest: "
                  f"{last['kind']} {last['name']}: {last['last_error'] or 'no error recorded'}",
                  "fix the cause named above (often the model command), then `memrepo sweep --retry-failed`")]
