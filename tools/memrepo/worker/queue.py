"""The job queue under `index/jobs/` (stdlib only: the capture hooks import it): job files, the
worker lock, claims, retries and failures. `worker.jobs` is the worker that drains it.

- One worker per repository: it holds `index/jobs/.lock` (`vcs.lock.wait_for`); a second worker
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

import os
import time

from memrepo.errors import Deferred
from memrepo.base import _fast, paths
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
MAX_LOG_BYTES = 1024 * 1024


def jobs_dir(repo: str) -> str:
    return os.path.join(paths.index_dir(repo), JOBS_DIR)


_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def safe_name(name: str) -> str:
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
    key = job["kind"] + ("-" + safe_name(str(job["session"])) if job.get("session") else "")
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
            locking.release(self.fd)
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


def last_sweep(repo: str) -> dict[str, Any] | None:
    """What `memrepo sweep` recorded last (index/sweep.json), or None."""
    return _read_json(os.path.join(paths.index_dir(repo), SWEEP_STATE))
