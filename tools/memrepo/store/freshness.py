"""Is the index cache fresh (stdlib only: SessionStart and `doctor` ask)? Read from files alone,
with no git process: the session path starts none.
"""

from __future__ import annotations

import os

from memrepo.store import index


def _head_sha(repo: str) -> str | None:
    """HEAD's commit read from .git files (no git process on the session path)."""
    gitdir = os.path.join(repo, ".git")
    try:
        with open(os.path.join(gitdir, "HEAD"), encoding="utf-8") as fh:
            head = fh.read().strip()
        if not head.startswith("ref: "):
            return head
        ref = head[5:]
        ref_path = os.path.join(gitdir, ref)
        if os.path.exists(ref_path):
            with open(ref_path, encoding="utf-8") as fh:
                return fh.read().strip()
        with open(os.path.join(gitdir, "packed-refs"), encoding="utf-8") as fh:
            for line in fh:
                if line.rstrip().endswith(" " + ref):
                    return line.split()[0]
    except OSError:
        return None
    return None


def needs_refresh(repo: str) -> str | None:
    """Why the cache must be refreshed, or None when it is fresh."""
    if not os.path.isdir(os.path.join(repo, ".git")):
        return "no memory repository"
    info = index.status(repo)
    if not info["exists"]:
        return "index missing"
    if not info["schema_ok"]:
        return f"index schema {info['schema']} (want {index.SCHEMA_VERSION}) or unreadable"
    if info["stale_marker"]:
        return "index marked stale"
    if info.get("changed_files"):
        return f"{len(info['changed_files'])} memory files changed since indexing"
    head = _head_sha(repo)
    if head and info["commit"] and head != info["commit"]:
        return "index is behind HEAD"
    return None
