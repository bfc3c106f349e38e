"""Is the index cache fresh? SessionStart and `doctor` ask, so it costs at most one git process:
the files say what changed, and `git rev-parse HEAD` (not `.git/HEAD` read by hand: a linked
worktree or a submodule has a `.git` file, refs may be packed or in a reftable) says whether
the index is behind.
"""

from __future__ import annotations


from memrepo.base import projects
from memrepo.store import index
from memrepo.vcs import gitcmd

HEAD_TIMEOUT = 10.0  # a local rev-parse; SessionStart must not wait on a wedged git for long


def _head_sha(repo: str) -> str | None:
    """HEAD's commit, or None without commits or without git."""
    return gitcmd.head(repo, env=gitcmd.no_git_env(), timeout=HEAD_TIMEOUT)


def needs_refresh(repo: str) -> str | None:
    """Why the cache must be refreshed, or None when it is fresh."""
    if projects.git_dir(repo) is None:
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
