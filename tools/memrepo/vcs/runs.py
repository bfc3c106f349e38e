"""Runs of the offline passes: their ids, reading them back from commit trailers, and undo.

A run id is the UTC start time plus the pass (`2026-11-29T18-40-02-curate`); every commit a
run makes carries `Memrepo-Run: <id>`. `undo` reverts all of a run's commits reachable from
HEAD, newest first, in ONE commit (`Memrepo-Action: undo`, `Memrepo-Undoes: <run>`) made
through `git commit`, so the pre-commit hook validates the restored files and post-commit
reindexes them once. The undo commit belongs to its own run (`...-undo`), so undoing an undo
is possible and `undo --last` skips runs that are undos or already undone.
"""

from __future__ import annotations

import re
import time
from typing import Any

from memrepo.vcs import commit, gitcmd, lock, trailers
from memrepo.errors import MemrepoError

RUN_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-[a-z][a-z0-9-]*$")


class UndoError(MemrepoError):
    """A run cannot be undone as asked."""


def new_run_id(pass_name: str, now: float | None = None) -> str:
    """A run id: UTC time to the second, then the pass name (e.g. `2026-11-29T18-40-02-curate`)."""
    stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime(time.time() if now is None else now))
    return f"{stamp}-{pass_name}"


def fresh_run_id(repo: str, pass_name: str) -> str:
    """A run id no commit or review branch of `repo` uses yet (waits for the next second if needed)."""
    while True:
        run_id = new_run_id(pass_name)
        rc, _, _ = gitcmd.run_git("rev-parse", "--verify", "-q", f"refs/heads/memrepo/review/{run_id}", cwd=repo)
        if rc != 0 and not commits_of(repo, run_id):
            return run_id
        time.sleep(0.2)


def log(repo: str, rev: str = "HEAD", grep: str | None = None, limit: int = 10000) -> list[dict[str, Any]]:
    """Commits reachable from `rev` with `Memrepo-*` trailers, newest first (optionally grepped, fixed string)."""
    return trailers.read(repo, rev, grep, limit)


def commits_of(repo: str, run_id: str) -> list[dict[str, Any]]:
    """The commits of one run reachable from HEAD, newest first."""
    return [e for e in log(repo, grep=f"{trailers.PREFIX}Run: {run_id}") if e["trailers"].get("Run") == run_id]


def list_runs(repo: str, limit: int = 20) -> list[dict[str, Any]]:
    """Runs reachable from HEAD, newest first: {run, date, decisions: [...], undone_by}."""
    runs: dict[str, dict[str, Any]] = {}
    undone: dict[str, str] = {}
    for e in log(repo):
        t = e["trailers"]
        if t.get("Undoes"):
            undone.setdefault(t["Undoes"], t.get("Run", e["commit"]))
        run = t.get("Run")
        if not run:
            continue
        entry = runs.setdefault(run, {"run": run, "date": e["date"], "decisions": [], "undone_by": None})
        entry["decisions"].append({"commit": e["commit"], "subject": e["subject"], "action": t.get("Action", "?"),
                                   "confidence": t.get("Confidence"), "reason": t.get("Reason")})
    for run, entry in runs.items():
        entry["undone_by"] = undone.get(run)
    return list(runs.values())[:limit]


def last_run(repo: str) -> str:
    """The newest run that is not an undo and has not been undone."""
    for entry in list_runs(repo, limit=10000):
        if entry["undone_by"] is None and not any(d["action"] == "undo" for d in entry["decisions"]):
            return str(entry["run"])
    raise UndoError("no run to undo", hint="`memrepo log --runs` lists the runs and what undid them")


def _check_clean(repo: str, files: list[str]) -> None:
    rc, out, _ = gitcmd.run_git("diff", "--cached", "--name-only", "-z", cwd=repo)
    if gitcmd.split_z(out):
        raise UndoError("the git index has staged changes, so undo cannot commit only its own",
                        hint="commit or unstage them (`git restore --staged .`), then run undo again")
    rc, out, _ = gitcmd.run_git("status", "--porcelain", "-z", "--", *files, cwd=repo)
    dirty = [p[3:] for p in gitcmd.split_z(out)]
    if dirty:
        raise UndoError(f"uncommitted changes in files the run touched: {', '.join(dirty)}",
                        hint="commit or discard them, then run undo again")


def _files_of(repo: str, shas: list[str]) -> list[str]:
    files: set[str] = set()
    for sha in shas:
        rc, out, _ = gitcmd.run_git("diff-tree", "--no-commit-id", "--root", "-r", "--name-only", "-z", sha, cwd=repo)
        files.update(gitcmd.split_z(out))
    return sorted(files)


def undo(repo: str, run_id: str) -> list[str]:
    """Revert every commit of `run_id` (newest first) in one `Memrepo-Action: undo` commit.

    Returns [sha of the undo commit], or [] when the run made only commits without changes
    (e.g. recorded rejections). Raises UndoError when the run is unknown or already undone.
    """
    if not RUN_RE.match(run_id):
        raise UndoError(f"{run_id!r} is not a run id", hint="run ids look like 2026-11-29T18-40-02-curate; see `memrepo log --runs`")
    commits = commits_of(repo, run_id)
    if not commits:
        raise UndoError(f"no commits of run {run_id} on this branch", hint="`memrepo log --runs` lists the runs")
    done = [e for e in log(repo, grep=f"{trailers.PREFIX}Undoes: {run_id}") if e["trailers"].get("Undoes") == run_id]
    if done:
        raise UndoError(f"run {run_id} was already undone by {done[0]['commit'][:12]}",
                        hint=f"undo that instead: `memrepo undo {done[0]['trailers'].get('Run', '')}`")
    shas = [e["commit"] for e in commits]
    files = _files_of(repo, shas)
    if not files:
        return []
    with lock.held(repo):
        _check_clean(repo, files)
        with commit.transaction(repo, files):
            try:
                rc, _, err = gitcmd.run_git("revert", "--no-commit", "--no-edit", *shas, cwd=repo)
                if rc != 0:
                    raise UndoError(f"git revert of run {run_id} failed: {err.decode('utf-8', 'replace').strip()}",
                                    hint="later commits changed the same files; revert the run's commits by hand with `git revert`")
            finally:
                # Forget the sequencer state, keep what the revert wrote: the transaction commits or restores it.
                gitcmd.run_git("revert", "--quit", cwd=repo)
            subject = f"undo: run {run_id} ({len(shas)} commit{'s' * (len(shas) != 1)})"
            body = "Reverts, newest first:\n" + "\n".join(f"  {s}" for s in shas)
            found = {"Action": "undo", "Run": fresh_run_id(repo, "undo"), "Undoes": run_id}
            return [commit.commit_staged(repo, files, subject, found, body)]
