"""Repository-level git operations for the CLI and the passes: open, init, identity, history.

Plain git through `gitcmd.run_git` (memrepo has no GitPython: see the README, "Plain git").
Commits are `vcs.commit`'s; trailers are `vcs.trailers`'.
"""

from __future__ import annotations

import os
from typing import Any

from memrepo.errors import GitError, RepoNotFound
from memrepo.vcs import gitcmd


def open_repo(path: str) -> str:
    """`path` when it is a git repository itself (not inside one), else RepoNotFound with the fix."""
    if not os.path.lexists(os.path.join(path, ".git")):
        raise RepoNotFound(f"{path} is not a memory repository (no .git)", hint=f"run `memrepo init {path}`")
    return path


def init_repo(path: str) -> bool:
    """`git init` the directory (branch `main`) when it is no repository yet; returns True when it did."""
    if os.path.exists(os.path.join(path, ".git")):
        return False
    os.makedirs(path, exist_ok=True)
    rc, _, err = gitcmd.run_git("-c", "init.defaultBranch=main", "init", "-q", path, cwd=path, env=gitcmd.no_git_env())
    if rc != 0:
        raise GitError(f"git init {path} failed: {err.decode('utf-8', 'replace').strip()}",
                       hint="check that the directory is writable")
    return True


def has_identity(path: str) -> bool:
    """True when git here knows who commits (user.name/email or GIT_COMMITTER_*)."""
    return gitcmd.run_git("var", "GIT_COMMITTER_IDENT", cwd=open_repo(path))[0] == 0


def history(path: str, rel: str, limit: int = 20) -> list[dict[str, str]]:
    """Commits that touched one file, newest first."""
    rc, out, _ = gitcmd.run_git("log", "-z", f"-n{limit}", "--follow", "--format=%H%x1f%aI%x1f%an%x1f%s", "--", rel,
                                cwd=open_repo(path))
    if rc != 0:
        return []
    rows = []
    for record in out.decode("utf-8", "replace").split("\0"):
        if record.strip():
            sha, date, author, subject = record.strip("\n").split("\x1f", 3)
            rows.append({"commit": sha, "date": date, "author": author, "subject": subject})
    return rows


MAX_DIFF_CHARS = 20000


def changes(path: str, rel: str, limit: int = 30) -> list[dict[str, Any]]:
    """Each commit that touched one file, newest first, with its `Memrepo-*` trailers and the
    file's diff in that commit (cut at MAX_DIFF_CHARS): what `memrepo serve` shows as a memory's history."""
    from memrepo.vcs import trailers

    rows: list[dict[str, Any]] = []
    for entry in history(path, rel, limit):
        sha = entry["commit"]
        found = trailers.read(path, rev=sha, limit=1)
        rc, out, _ = gitcmd.run_git("show", "--format=", "--patch", "--no-color", "--no-ext-diff", sha, "--", rel,
                                    cwd=open_repo(path))
        diff = out.decode("utf-8", "replace") if rc == 0 else ""
        if len(diff) > MAX_DIFF_CHARS:
            diff = diff[:MAX_DIFF_CHARS] + "\n[… diff cut]"
        rows.append({**entry, "trailers": found[0]["trailers"] if found and found[0]["commit"] == sha else {},
                     "diff": diff})
    return rows
