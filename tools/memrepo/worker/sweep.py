"""The daily sweep: pending captures, enrichment, the curator, the verifier (and sync, opt-in), as one run.

`memrepo sweep` (or a sweep job the SessionStart hook queues when the last sweep is over a day
old) holds the worker lock, so it never races a capture worker. Every commit it makes carries
the same `Memrepo-Run: <time>-sweep`, so `memrepo undo <run>` reverts a whole sweep. Running
it twice in a row changes nothing the second time: captures resume where they stopped,
enrichment skips memories already asked about, and the curator and verifier only commit what
changed. With `{"sync": {"auto": true}}` in this machine's `index/local.json` it ends with
`memrepo sync`; a sync that stops (a conflict) is one line in the report's errors, never a failed
sweep. Last it rewrites the commit-graph with changed-path filters, so a memory's history stays
fast (issue 22); a failure there too is one line in the errors. The outcome goes to `index/sweep.json` (what `stats` and SessionStart read).
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from typing import Any

from memrepo.progress import Progress, silent
from memrepo.passes import capture, enrich, model
from memrepo.worker import queue
from memrepo.base import paths
from memrepo.recall import usage
from memrepo.vcs import commit, gitops, runs
from memrepo.store import cachefacts, config, memories as store, private, sync
from memrepo.errors import MemrepoError

PASS = "sweep"
LOCK_WAIT = 600.0


def run(repo: str, use_model: bool = True, progress: Progress = silent, cwd: str | None = None) -> dict[str, Any]:
    """Run a sweep now (waiting up to LOCK_WAIT seconds for a running worker)."""
    store.require_repo(repo)
    with queue.lock(repo, wait=LOCK_WAIT) as got:
        if not got:
            raise MemrepoError("a memrepo worker has held the lock for over ten minutes",
                               hint="look at index/jobs/worker.log, then run `memrepo sweep` again")
        queue.recover(repo)
        return run_locked(repo, use_model=use_model, progress=progress, cwd=cwd)


def _step(report: dict[str, Any], name: str, fn: Any) -> None:
    try:
        report[name] = fn()
    except (MemrepoError, OSError) as exc:
        report["errors"].append(f"{name}: {exc}")


def run_locked(repo: str, use_model: bool = True, run_id: str | None = None, progress: Progress = silent,
               cwd: str | None = None) -> dict[str, Any]:
    """The sweep's steps; the caller holds the worker lock (and has requeued crashed jobs). `cwd`
    adds its checkout's project memory to those the curator across sources compares with."""
    run_id = run_id or runs.fresh_run_id(repo, PASS)
    report: dict[str, Any] = {"run_id": run_id, "started": time.time(), "errors": []}
    model.Tally.reset()
    # No model: which memories recall injected often and the replies never used (ranked lower).
    _step(report, "noisy", lambda: usage.write_noisy(repo))
    if config.recall_only(repo):
        report.update(skipped=f"recall-only mode is on ({config.ENV_RECALL_ONLY} or `recall_only` in the settings): "
                              "no pass runs", captures=[], finished=time.time())
        return report
    busy = commit.in_progress(repo)
    if busy:
        # Nothing is drained or written into a person's merge, rebase, cherry-pick or revert.
        # Not saved as the last sweep: it stays due and runs once the operation is finished.
        report.update(skipped=f"{busy} is in progress; the sweep runs again once it is finished",
                      captures=[], finished=time.time())
        return report

    queued = len(queue.pending(repo)) if use_model else 0
    done: list[int] = [0]

    def one_capture(r: str, job: dict[str, Any]) -> dict[str, Any]:
        progress("sweep: capture jobs", done[0], max(queued, done[0] + 1))
        done[0] += 1
        return capture.capture(r, str(job["transcript"]), job.get("session"), str(job.get("cwd") or ""), run_id=run_id).as_dict()

    report["captures"] = queue.drain(repo, one_capture, kinds=("capture",)) if use_model else []
    if queued:
        progress("sweep: capture jobs", done[0], done[0])
    if use_model:
        _step(report, "enrich", lambda: enrich.run(repo, run_id=run_id, progress=progress))
    from memrepo.passes.curate import across, curator as curate
    from memrepo.passes.verify import verifier as verify

    _step(report, "curate", lambda: curate.run(repo, use_model=use_model, run_id=run_id, progress=progress).as_dict())
    # Your memory against each team's and the projects': every conflict a proposal, none applied (issue 41).
    _step(report, "across", lambda: across.run(repo, cwd, run_id=run_id, use_model=use_model, local=True).as_dict())
    _step(report, "verify", lambda: _verify_summary(verify.run(repo, use_model=use_model, run_id=run_id, progress=progress)))
    if sync.auto_enabled(repo):
        # A conflict stops sync with the repository unchanged and a rescue ref; the sweep goes on.
        _step(report, "sync", lambda: sync.sync(repo).as_dict())
    # Keeps `memrepo show` and the history pages fast as commits pile up (issue 22); fails open.
    _step(report, "commit_graph", lambda: gitops.write_commit_graph(repo))
    report["model_calls"] = {name: dict(row) for name, row in sorted(model.Tally.by_pass.items())}
    if model.Tally.failed and not model.Tally.ok:
        report["model_failed"] = f"every model call failed ({model.Tally.failed}): {model.Tally.last_error}"
    report["finished"] = time.time()
    _save(repo, report)
    return report


def _verify_summary(report: Any) -> dict[str, Any]:
    data = report.as_dict()
    results = data.pop("memories", [])
    data["checked"] = len(results)
    data["changed"] = [r.get("id") for r in results if r.get("changed")]
    return dict(data)


def _save(repo: str, report: dict[str, Any]) -> None:
    path = os.path.join(paths.index_dir(repo), queue.SWEEP_STATE)
    summary = {"run_id": report["run_id"], "started": report["started"], "finished": report["finished"],
               "captures": len(report["captures"]), "errors": report["errors"],
               "enriched": sorted((report.get("enrich") or {}).get("enriched", {})),
               "across": across_summary(report.get("across"))}
    tmp = f"{path}.tmp-{os.getpid()}"
    # 0600 whatever the umask of the process that runs the sweep: index/ is the owner's alone
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, private.FILE_MODE), "w", encoding="utf-8") as fh:
        json.dump(summary, fh, indent=1)
    os.replace(tmp, path)


def across_summary(done: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the curator across sources did in a sweep, in counts: proposed, failed, waiting."""
    if done is None:
        return None
    return {"proposed": len(done["conflicts"]), "failed": len(done["failed"]), "asked": done["model_calls"],
            "waiting": done["waiting"], "sources": len(done["sources"]), "not_run": done["not_run"]}


# Per pass in `stats`: calls, failed, how many reported their usage and how many were estimated,
# then the reported tokens, the estimated ones (characters / 4) and the time.
TOKEN_ROW = ("calls", "failed", "reported_calls", "estimated_calls", *model.USAGE_KEYS,
             "est_input_tokens", "est_output_tokens", "ms")


def stats(repo: str) -> dict[str, Any]:
    """Counts per class and status, the last sweep, queued jobs, model calls and tokens per pass, and
    the precision of recall's injections (`memrepo.recall.usage`)."""
    memories = store.list_memories(repo)
    per_pass: dict[str, dict[str, int]] = {}
    for entry in model.ledger(repo):
        row = per_pass.setdefault(str(entry.get("pass", "?")), dict.fromkeys(TOKEN_ROW, 0))
        row["calls"] += 1
        row["failed"] += 0 if entry.get("ok") else 1
        row["reported_calls"] += any(k in entry for k in model.USAGE_KEYS)
        row["estimated_calls"] += "est_input_tokens" in entry  # a call that never answered is neither
        for key in TOKEN_ROW[4:]:
            value = entry.get(key)
            row[key] += value if isinstance(value, int) and not isinstance(value, bool) else 0
    failures = [{k: e.get(k) for k in ("t", "pass", "error")} for e in model.ledger(repo) if not e.get("ok")][-5:]
    return {"memories": len(memories), "model_failures": failures,
            "by_class": dict(sorted(Counter(m["class"] for m in memories).items())),
            "by_status": dict(sorted(Counter(m["status"] or "active" for m in memories).items())),
            "last_sweep": queue.last_sweep(repo), "jobs": queue.counts(repo),
            "captured_sessions": len(capture.load_state(repo)), "model": dict(sorted(per_pass.items())),
            "recall": usage.summary(repo),
            "not_indexed": [{"path": path, "problem": problem} for path, problem in cachefacts.skipped(repo)]}
