"""A capture as the worker runs it: the job's handler and the by-hand `memrepo capture` under the worker lock."""

from __future__ import annotations

import os
from typing import Any

from memrepo.errors import Deferred, MemrepoError
from memrepo.passes import capture
from memrepo.passes.capture_plan import CaptureReport
from memrepo.vcs import commit
from memrepo.worker import queue


MAX_PARTS = 12  # parts of a transcript (one model call each, up to 60,000 characters) a capture job reads at a time


def run_job(repo: str, job: dict[str, Any]) -> dict[str, Any]:
    """The worker's handler for a capture job (a transcript deleted since is nothing to retry)."""
    if not os.path.isfile(str(job.get("transcript"))):
        queue.log(repo, f"capture {job.get('session')}: transcript {job.get('transcript')} is gone; nothing to do")
        return {"skipped": "no transcript"}
    commit.refuse_in_progress(repo)  # before the model runs: the job waits, its attempts untouched
    report = capture.capture(repo, str(job["transcript"]), str(job.get("session") or "") or None, str(job.get("cwd") or ""),
                             max_parts=MAX_PARTS)
    for line in report.log:
        queue.log(repo, line)
    queue.log(repo, f"capture {report.session}: {report.turns} turns, added {report.added}, "
                   f"refuted {[r['id'] for r in report.refuted]}, dropped {len(report.dropped)}"
                   + (f", sent to review like forgotten memories {[r['id'] for r in report.held]}" if report.held else ""))
    if report.more:
        # A long transcript is read a budget at a time: the other queued captures go first, and
        # its model calls are spread over worker runs instead of holding the worker for hours.
        raise Deferred(f"capture {report.session}: read to line {report.last_line} of {job['transcript']} ({MAX_PARTS} "
                       "model calls, this job's budget); the rest at the next worker run")
    return report.as_dict()


def capture_locked(repo: str, path: str, session: str | None = None, wait: float = 300.0) -> CaptureReport:
    """`memrepo capture`: one capture by hand, waiting for a running worker to finish first."""
    with queue.lock(repo, wait=wait) as got:
        if not got:
            raise MemrepoError("a memrepo worker has held the lock for over five minutes",
                               hint="look at index/jobs/worker.log, then run the command again")
        commit.refuse_in_progress(repo)  # before the model runs, as a job does: its calls were spent, then refused (h31)
        try:
            return capture.capture(repo, path, session)
        except capture.Pending as exc:
            # Not a job: no sweep retries it (the hint said one would).
            raise capture.Pending(str(exc), hint=f"run `memrepo capture {path}` again; the turns before it are kept") from None
