"""Runs of the offline passes: their ids, reading them back from commit trailers, and undo.

A run id is the UTC start time plus the pass (`2026-11-29T18-40-02-curate`); every commit a
run makes carries `Memrepo-Run: <id>`. `undo` reverts all of a run's commits reachable from
HEAD, newest first, in ONE commit (`Memrepo-Action: undo`, `Memrepo-Undoes: <run>`) made
through `git commit`, so the pre-commit hook validates the restored files and post-commit
reindexes them once. The undo commit belongs to its own run (`...-undo`), so undoing an undo
is possible and `undo --last` skips runs that are undos or already undone.

A commit records its decision in `Memrepo-Action`/`-Id`/`-Winner` trailers, or, when one commit
carries many (the curator's deterministic pass commits once per run: issue 22), in one
`Memrepo-Decision: <action> <id>[ by <winner>]: <reason>` trailer per decision. Both read back
the same way: `list_runs` shows every decision, `undone_decisions` sees each one.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from typing import Any

from memrepo.vcs import gitcmd, lock, trailers
from memrepo.errors import GitError, MemrepoError

RUN_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-[a-z][a-z0-9-]*$")
DECISION = "Decision"
_DECISION_RE = re.compile(r"^([a-z][a-z0-9-]*) ([a-z0-9-]+)(?: by ([a-z0-9-]+))?: (.*)$")


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


def change_run_id(action: str, note_id: str) -> str:
    """A run of one person's change (an add, an edit, a retire): its own id even when ten
    terminals act on one memory in the same second."""
    return new_run_id(f"{action}-{os.urandom(3).hex()}")  # random, not a hash: hashlib loads OpenSSL (issue 44)


def decision_line(action: str, note_id: str, reason: str, winner: str | None = None) -> str:
    """One decision of a commit that carries many: the value of a `Memrepo-Decision` trailer."""
    return f"{action} {note_id}" + (f" by {winner}" if winner else "") + f": {' '.join(reason.split())}"


def parse_decision(value: str) -> dict[str, str] | None:
    """{action, id, winner, reason} of a `Memrepo-Decision` value; None when it is not one."""
    m = _DECISION_RE.match(value.strip())
    if not m:
        return None
    return {"action": m.group(1), "id": m.group(2), "winner": m.group(3) or "", "reason": m.group(4)}


def decisions(repo: str, rev: str = "HEAD", run_id: str | None = None) -> dict[str, list[dict[str, str]]]:
    """sha -> the `Memrepo-Decision`s of each commit reachable from `rev` that has some (of one run, if given)."""
    runs = (f"{trailers.PREFIX}Run: {run_id}",) if run_id else ()
    found: dict[str, list[dict[str, str]]] = {}
    for e in trailers.log(repo, rev, grep=f"{trailers.PREFIX}{DECISION}: ", grep_all=runs):
        parsed = [d for d in map(parse_decision, e["every"].get(DECISION, [])) if d]
        if parsed:
            found[e["commit"]] = parsed
    return found


def _decisions_of(entry: dict[str, Any], lines: dict[str, list[dict[str, str]]]) -> list[dict[str, str]]:
    """The decisions one commit records: its `Memrepo-Decision`s, else its own Action/Id/Winner."""
    t = entry["trailers"]
    if entry["commit"] in lines:
        return lines[entry["commit"]]
    return [{"action": t.get("Action", "?"), "id": t.get("Id", ""), "winner": t.get("Winner", ""),
             "reason": t.get("Reason") or ""}]


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
    lines = decisions(repo)
    for e in log(repo):
        t = e["trailers"]
        if t.get("Undoes"):
            undone.setdefault(t["Undoes"], t.get("Run", e["commit"]))
        run = t.get("Run")
        if not run:
            continue
        entry = runs.setdefault(run, {"run": run, "date": e["date"], "decisions": [], "undone_by": None})
        if e["commit"] not in lines:
            entry["decisions"].append({"commit": e["commit"], "subject": e["subject"], "action": t.get("Action", "?"),
                                       "confidence": t.get("Confidence"), "reason": t.get("Reason")})
            continue
        for d in lines[e["commit"]]:
            subject = f"{d['action']} {d['id']}" + (f" by {d['winner']}" if d["winner"] else "")
            entry["decisions"].append({"commit": e["commit"], "subject": subject, "action": d["action"],
                                       "confidence": t.get("Confidence"), "reason": d["reason"]})
    for run, entry in runs.items():
        entry["undone_by"] = undone.get(run)
    return list(runs.values())[:limit]


def undone_runs(repo: str) -> dict[str, str]:
    """Runs that stand undone, each with the undo run that undid it; an undone undo restores its run."""
    undid: dict[str, str] = {}
    for e in log(repo, grep=f"{trailers.PREFIX}Undoes: "):
        t = e["trailers"]
        if t.get("Undoes") and t.get("Run"):
            undid.setdefault(t["Undoes"], t["Run"])

    def stands(run: str, depth: int = 0) -> bool:
        undo = undid.get(run)
        return undo is not None and (depth > 50 or not stands(undo, depth + 1))

    return {run: undo for run, undo in undid.items() if stands(run)}


def undone_decisions(repo: str) -> dict[tuple[str, str, str], str]:
    """(action, id, winner) of every commit of an undone run -> the run that undid it.

    A pass reads this before it decides: what a person undid is not decided again (issue 16).
    The proposals of an undone run (on its review branch) count too.
    """
    found: dict[tuple[str, str, str], str] = {}
    for run, undo in undone_runs(repo).items():
        entries = commits_of(repo, run)
        lines = decisions(repo, run_id=run) if entries else {}
        rc, _, _ = gitcmd.run_git("rev-parse", "--verify", "-q", f"refs/heads/memrepo/review/{run}", cwd=repo)
        if rc == 0:
            entries += [e for e in log(repo, rev=f"HEAD..memrepo/review/{run}") if e["trailers"].get("Run") == run]
        for e in entries:
            for d in _decisions_of(e, lines):
                if d["id"]:
                    found.setdefault((d["action"], d["id"], d["winner"]), undo)
    return found


def last_run(repo: str) -> str:
    """The newest run that is not an undo and has not been undone."""
    for entry in list_runs(repo, limit=10000):
        if entry["undone_by"] is None and not any(d["action"] == "undo" for d in entry["decisions"]):
            return str(entry["run"])
    raise UndoError("no run to undo", hint="`memrepo log --runs` lists the runs and what undid them")


def _check_clean(repo: str, files: list[str]) -> None:
    from memrepo.vcs import commit

    commit.refuse_in_progress(repo)  # a merge's staged files are not the person's to unstage
    rc, out, _ = gitcmd.run_git("diff", "--cached", "--name-only", "-z", cwd=repo)
    if gitcmd.split_z(out):
        raise UndoError("the git index has staged changes, so undo cannot commit only its own",
                        hint="commit or unstage them (`git restore --staged .`), then run undo again")
    # No pathspec: a run may touch thousands of files, more than a command line holds (issue 22).
    touched = set(files)
    rc, out, _ = gitcmd.run_git("--no-optional-locks", "status", "--porcelain", "-z", cwd=repo)
    dirty = sorted({p[3:] for p in gitcmd.split_z(out) if p[3:] in touched})
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

    Returns [sha of the undo commit]; a run whose commits changed no file (recorded rejections)
    gets an empty undo commit that records it. Raises UndoError when the run is unknown or
    already undone.
    """
    if not RUN_RE.match(run_id):
        raise UndoError(f"{run_id!r} is not a run id", hint="run ids look like 2026-11-29T18-40-02-curate; see `memrepo log --runs`")
    commits = commits_of(repo, run_id)
    proposed = gitcmd.run_git("rev-parse", "--verify", "-q", f"refs/heads/memrepo/review/{run_id}", cwd=repo)[0] == 0
    if not commits and not proposed:
        raise UndoError(f"no commits of run {run_id} on this branch", hint="`memrepo log --runs` lists the runs")
    done = [e for e in log(repo, grep=f"{trailers.PREFIX}Undoes: {run_id}") if e["trailers"].get("Undoes") == run_id]
    if done:
        raise UndoError(f"run {run_id} was already undone by {done[0]['commit'][:12]}",
                        hint=f"undo that instead: `memrepo undo {done[0]['trailers'].get('Run', '')}`")
    shas = [e["commit"] for e in commits]
    files = _files_of(repo, shas)
    if not files:
        # Nothing to revert (only proposals, or recorded rejections): an empty commit still
        # records the undo, which closes the run's proposals and keeps its decisions from coming
        # back, or reopens the proposals its rejections closed.
        return [_record_undo(repo, run_id)] if proposed or commits else []
    with lock.held(repo):
        _check_clean(repo, files)
        # The revert is built in a temporary index: the work tree, the real index and git's
        # sequencer are untouched until one journaled commit writes it, so a kill -9 at any
        # moment leaves either nothing or what `commit_files`' journal rolls back (issue 15).
        contents = _reverted(repo, shas, files, run_id)
        if contents is None:  # the run's commits cancel out (a file made and removed): nothing to write
            return [_record_undo(repo, run_id, "its commits cancel out")]
        subject = f"undo: run {run_id} ({len(shas)} commit{'s' * (len(shas) != 1)})"
        body = "Reverts, newest first:\n" + "\n".join(f"  {s}" for s in shas)
        found = {"Action": "undo", "Run": fresh_run_id(repo, "undo"), "Undoes": run_id}
        from memrepo.vcs import commit

        return [commit.commit_files(repo, contents, subject, found, body)]


def _reverted(repo: str, shas: list[str], files: list[str], run_id: str) -> dict[str, bytes | None] | None:
    """Each of `files` as HEAD would hold it with `shas` reverted (None: deleted); UndoError on a
    clash; None when that is what HEAD holds already."""
    rc, out, _ = gitcmd.run_git("rev-parse", "--git-dir", cwd=repo)
    git_dir = os.path.join(repo, out.decode("utf-8", "surrogateescape").strip())
    for name in os.listdir(git_dir):  # left by an undo that was killed: nothing refers to it
        if name.startswith(TEMP_INDEX) and not _alive(name[len(TEMP_INDEX):]):
            with contextlib.suppress(OSError):
                os.remove(os.path.join(git_dir, name))
    tmp = os.path.join(git_dir, f"{TEMP_INDEX}{os.getpid()}")
    env = dict(os.environ, GIT_INDEX_FILE=tmp)
    try:
        _git_ok(repo, env, "read-tree", "HEAD")
        before = _staged(repo, env, set(files))
        for sha in shas:
            _, patch, _ = gitcmd.run_git("diff-tree", "-p", "--binary", "--full-index", "--root", "--no-commit-id",
                                         sha, cwd=repo)
            if not patch.strip():
                continue
            rc, _, err = gitcmd.run_git("apply", "--cached", "-R", "--binary", "-", cwd=repo, env=env, input=patch)
            if rc != 0:
                raise UndoError(f"git could not revert run {run_id}: {err.decode('utf-8', 'replace').strip()}",
                                hint="later commits changed the same files; revert the run's commits by hand with `git revert`")
        blobs = _staged(repo, env, set(files))
        if blobs == before:
            return None
        data = _blobs(repo, sorted(set(blobs.values())))
        return {rel: data[blobs[rel]] if rel in blobs else None for rel in files}
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp + ".lock")


def _staged(repo: str, env: dict[str, str], touched: set[str]) -> dict[str, str]:
    """{path: blob id} of the `touched` paths in the index `env` names (absent: not there)."""
    _, out, _ = gitcmd.run_git("ls-files", "-s", "-z", cwd=repo, env=env)
    return {e.split("\t", 1)[1]: e.split()[1] for e in gitcmd.split_z(out)
            if "\t" in e and e.split("\t", 1)[1] in touched}


def _blobs(repo: str, shas: list[str]) -> dict[str, bytes]:
    """The bytes of each blob, read by one `git cat-file --batch` (not one git per file)."""
    if not shas:
        return {}
    rc, out, err = gitcmd.run_git("cat-file", "--batch", cwd=repo, input="".join(f"{s}\n" for s in shas).encode())
    if rc != 0:
        raise UndoError(f"git cat-file failed: {err.decode('utf-8', 'replace').strip()}")
    found: dict[str, bytes] = {}
    pos = 0
    for sha in shas:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        if len(header) != 3 or header[0].decode() != sha:
            raise UndoError(f"git cat-file could not read blob {sha}")
        size = int(header[2])
        found[sha] = out[end + 1:end + 1 + size]
        pos = end + 1 + size + 1
    return found


def _record_undo(repo: str, run_id: str, why: str = "its review decisions") -> str:
    """An empty `Memrepo-Action: undo` commit on HEAD (the work tree and index untouched)."""
    found = {"Action": "undo", "Run": fresh_run_id(repo, "undo"), "Undoes": run_id}
    try:
        from memrepo.vcs import commit

        return commit.record(repo, f"undo: run {run_id} ({why})", found)
    except GitError as exc:
        raise UndoError(str(exc), hint=exc.hint) from None


TEMP_INDEX = "memrepo-undo-index-"


def _alive(pid: str) -> bool:
    try:
        os.kill(int(pid), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


def _git_ok(repo: str, env: dict[str, str], *args: str) -> bytes:
    rc, out, err = gitcmd.run_git(*args, cwd=repo, env=env)
    if rc != 0:
        raise UndoError(f"git {args[0]} failed: {err.decode('utf-8', 'replace').strip()}")
    return out
