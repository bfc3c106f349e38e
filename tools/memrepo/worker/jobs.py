"""Offline work queue (stdlib only: the capture hooks import it): job files, one worker, retries.

A hook writes a small JSON job under `index/jobs/` and starts a detached worker
(`python -m memrepo.worker.jobs REPO`, a new session, stdin from /dev/null, output to
`index/jobs/worker.log`), then returns — SessionEnd gives all its hooks 1.5 s together.

- One worker per repository: it holds `index/jobs/.lock` (fcntl.flock); a second worker
  exits at once. After releasing the lock a worker looks again, so a job enqueued while it
  was finishing is never stranded.
- A claimed job is renamed `<name>.json.running` (attempts + 1, worker pid). Whoever takes
  the lock next finds a `.running` file only if its worker died: the job goes back to the
  queue, and after MAX_ATTEMPTS to `index/jobs/failed/`. A job whose handler raised waits
  RETRY_DELAY seconds before the next attempt.
- One pending job per session (`capture-<session>.json`): the worker reads the transcript
  from where the last capture of that session stopped, so repeated hooks cost nothing.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time

from memrepo.errors import Deferred
from memrepo.base import _fast, paths, projects
from memrepo.vcs import lock as locking

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

JOBS_DIR = "jobs"
LOCK = ".lock"
RUNNING = ".running"
WORKER_LOG = "worker.log"
SWEEP_STATE = "sweep.json"
MAX_ATTEMPTS = 3
RETRY_DELAY = 60.0
STOP_INTERVAL = 300.0  # Stop fires after every reply: capture from it at most this often per session
SWEEP_EVERY = 24 * 3600.0
SWEEP_REQUEST_COOLDOWN = 3600.0
MAX_LOG_BYTES = 1024 * 1024


def jobs_dir(repo: str) -> str:
    return os.path.join(paths.index_dir(repo), JOBS_DIR)


_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def _safe(name: str) -> str:
    """A session id as a file name part (no `re` on the hook path)."""
    return "".join(c if c in _SAFE else "-" for c in name[:100]) or "none"


def log(repo: str, message: str) -> None:
    """One timestamped line in index/jobs/worker.log (best effort)."""
    path = os.path.join(jobs_dir(repo), WORKER_LOG)
    try:
        os.makedirs(jobs_dir(repo), exist_ok=True)
        if os.path.exists(path) and os.path.getsize(path) > MAX_LOG_BYTES:
            os.replace(path, path + ".1")
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} [{os.getpid()}] {message}\n")
    except OSError:
        pass


def _write_json(path: str, data: dict[str, Any]) -> None:
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(_fast.dumps(data))
    os.replace(tmp, path)


def _read_json(path: str) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as fh:
            data = _fast.loads(fh.read())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


FAILURE_KEYS = ("attempts", "last_error", "not_before")


def enqueue(repo: str, job: dict[str, Any]) -> str:
    """Write a job file (`kind` plus its fields) and return its path; one pending file per key.

    A new request for the same key keeps the failures of the one it replaces (their count and
    back-off): a hook firing on every Stop must not reset a failing job to a fresh start. A
    job that gave up stays in failed/ with the newest request's fields (`memrepo stats` counts
    it; `memrepo capture` runs it by hand)."""
    os.makedirs(jobs_dir(repo), exist_ok=True)
    key = job["kind"] + ("-" + _safe(str(job["session"])) if job.get("session") else "")
    path = os.path.join(jobs_dir(repo), key + ".json")
    gave_up = os.path.join(jobs_dir(repo), "failed", key + ".json")
    failed = _read_json(gave_up)
    if failed is not None:
        _write_json(gave_up, {**failed, **job, "requested": time.time()})
        return gave_up
    prior = _read_json(path) or {}
    kept = {k: prior[k] for k in FAILURE_KEYS if k in prior}
    _write_json(path, {**job, "queued": time.time(), "attempts": 0, **kept})
    return path


def pending(repo: str, now: float | None = None) -> list[str]:
    """Paths of queued jobs that may run now, oldest first."""
    now = time.time() if now is None else now
    try:
        names = [n for n in os.listdir(jobs_dir(repo)) if n.endswith(".json") and not n.startswith(".")]
    except OSError:
        return []
    ready = []
    for name in names:
        path = os.path.join(jobs_dir(repo), name)
        job = _read_json(path)
        if job is not None and max(float(job.get("not_before", 0)), float(job.get("after", 0))) <= now:
            ready.append((float(job.get("queued", 0)), path))
    return [p for _, p in sorted(ready)]


def counts(repo: str) -> dict[str, int]:
    """Jobs by state: queued, running (or crashed), failed."""
    d = jobs_dir(repo)
    names = os.listdir(d) if os.path.isdir(d) else []
    failed = os.path.join(d, "failed")
    return {"queued": sum(n.endswith(".json") for n in names), "running": sum(n.endswith(RUNNING) for n in names),
            "failed": len(os.listdir(failed)) if os.path.isdir(failed) else 0}


def failed_jobs(repo: str) -> list[dict[str, Any]]:
    """The jobs that gave up after MAX_ATTEMPTS, oldest first: {name, kind, attempts, last_error}."""
    d = os.path.join(jobs_dir(repo), "failed")
    try:
        names = sorted(n for n in os.listdir(d) if n.endswith(".json"))
    except OSError:
        return []
    out = []
    for name in names:
        job = _read_json(os.path.join(d, name)) or {}
        out.append({"name": name, "kind": job.get("kind", "?"), "attempts": job.get("attempts", "?"),
                    "last_error": str(job.get("last_error", ""))[:300]})
    return out


def retry_failed(repo: str) -> list[str]:
    """Queue the jobs that gave up again, with their attempts reset; returns their names."""
    d = os.path.join(jobs_dir(repo), "failed")
    moved = []
    for entry in failed_jobs(repo):
        src = os.path.join(d, entry["name"])
        job = _read_json(src)
        if job is None:
            continue
        job.update(attempts=0, not_before=0, queued=time.time())
        _write_json(os.path.join(jobs_dir(repo), entry["name"]), job)
        os.remove(src)
        moved.append(entry["name"])
    return moved


class lock:  # noqa: N801 — used as `with jobs.lock(repo) as got:`; a class keeps contextlib off the hook path
    """Hold the worker lock; `as` gives False when another process holds it for longer than `wait` seconds."""

    def __init__(self, repo: str, wait: float = 0.0) -> None:
        self.repo = repo
        self.wait = wait
        self.fd = -1
        self.held = False

    def __enter__(self) -> bool:
        os.makedirs(jobs_dir(self.repo), exist_ok=True)
        self.fd = os.open(os.path.join(jobs_dir(self.repo), LOCK), os.O_RDWR | os.O_CREAT, 0o600)
        self.held = locking.wait_for(self.fd, self.wait, poll=0.1)
        return self.held

    def __exit__(self, *exc: object) -> None:
        if self.held:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def recover(repo: str) -> list[str]:
    """Requeue jobs a dead worker left `.running` (call with the lock held); returns their paths."""
    d = jobs_dir(repo)
    back = []
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if not name.endswith(RUNNING):
            continue
        path = os.path.join(d, name)
        job = _read_json(path) or {}
        target = path[: -len(RUNNING)]
        if int(job.get("attempts", 0)) >= MAX_ATTEMPTS:
            os.makedirs(os.path.join(d, "failed"), exist_ok=True)
            os.replace(path, os.path.join(d, "failed", os.path.basename(target)))
            log(repo, f"gave up on {os.path.basename(target)} after {job.get('attempts')} attempts")
            continue
        if os.path.exists(target):  # a newer request for the same session supersedes the crashed one
            os.remove(path)
        else:
            os.replace(path, target)
        log(repo, f"requeued {os.path.basename(target)} left running by a dead worker")
        back.append(target)
    return back


def _claim(path: str) -> tuple[str, dict[str, Any]] | None:
    running = path + RUNNING
    try:
        os.replace(path, running)
    except OSError:
        return None
    job = _read_json(running) or {}
    job["attempts"] = int(job.get("attempts", 0)) + 1
    job["worker"] = os.getpid()
    _write_json(running, job)
    return running, job


def _settle(repo: str, running: str, job: dict[str, Any], error: str | None) -> None:
    name = os.path.basename(running[: -len(RUNNING)])
    if error is None:
        os.remove(running)
        log(repo, f"done {name}")
        return
    log(repo, f"failed {name} (attempt {job['attempts']}): {error}")
    job.update(last_error=error[:500], not_before=time.time() + RETRY_DELAY)
    target = running[: -len(RUNNING)]
    if job["attempts"] >= MAX_ATTEMPTS:
        os.makedirs(os.path.join(jobs_dir(repo), "failed"), exist_ok=True)
        target = os.path.join(jobs_dir(repo), "failed", name)
    _put_back(running, job, target)


def _defer(repo: str, running: str, job: dict[str, Any], reason: str) -> None:
    """Put a job back for later without counting the attempt (the repository was busy, not the job wrong)."""
    log(repo, f"deferred {os.path.basename(running[: -len(RUNNING)])}: {reason}")
    job.update(attempts=max(0, int(job.get("attempts", 1)) - 1), not_before=time.time() + RETRY_DELAY)
    _put_back(running, job, running[: -len(RUNNING)])


def _put_back(running: str, job: dict[str, Any], target: str) -> None:
    """Move a claimed job to `target` with its new state; when a hook queued it there again
    meanwhile, the newer request stands and takes over this attempt's failure count."""
    if os.path.exists(target):
        newer = _read_json(target)
        if newer is not None and "last_error" in job:
            newer.update({k: job[k] for k in FAILURE_KEYS if k in job})
            _write_json(target, newer)
        os.remove(running)
        return
    _write_json(running, job)
    os.replace(running, target)


def drain(repo: str, handler: Callable[[str, dict[str, Any]], Any], kinds: tuple[str, ...] | None = None) -> list[Any]:
    """Run every ready job (the lock must be held); a job whose handler raises is retried later."""
    results: list[Any] = []
    tried: set[str] = set()
    while True:
        ready = [p for p in pending(repo) if p not in tried]
        ready = [p for p in ready if kinds is None or (_read_json(p) or {}).get("kind") in kinds]
        if not ready:
            return results
        tried.add(ready[0])
        claimed = _claim(ready[0])
        if claimed is None:
            continue
        running, job = claimed
        try:
            results.append(handler(repo, job))
        except Deferred as exc:
            _defer(repo, running, job, str(exc))
            continue
        except Exception as exc:  # noqa: BLE001 — a job's failure is recorded and retried, never fatal
            _settle(repo, running, job, f"{type(exc).__name__}: {exc}")
            continue
        _settle(repo, running, job, None)
        tried.discard(ready[0])


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
    marker = os.path.join(jobs_dir(repo), f".stop-{_safe(session)}")
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
    return os.path.exists(os.path.join(jobs_dir(repo), f"capture-{_safe(str(job['session']))}.json"))


def on_stop(event: dict[str, Any]) -> str:
    return on_capture_event(event, "Stop")


def on_pre_compact(event: dict[str, Any]) -> str:
    return on_capture_event(event, "PreCompact")


def on_session_end(event: dict[str, Any]) -> str:
    return on_capture_event(event, "SessionEnd")


# -- the daily sweep ---------------------------------------------------------------------------


def last_sweep(repo: str) -> dict[str, Any] | None:
    """What `memrepo sweep` recorded last (index/sweep.json), or None."""
    return _read_json(os.path.join(paths.index_dir(repo), SWEEP_STATE))


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
