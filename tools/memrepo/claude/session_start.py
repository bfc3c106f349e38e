"""SessionStart (stdlib only): return at once; start a detached refresh when the cache needs one.

On first use (no memory repository yet, or no interpreter with memrepo's dependencies) the
detached worker in `memrepo.worker.bootstrap` creates the repository and a virtual environment under
`${CLAUDE_PLUGIN_DATA}`. The recall hook itself never touches git and never builds an index.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import TYPE_CHECKING

from memrepo.store import index
from memrepo.recall import paths
from memrepo.passes import profile

if TYPE_CHECKING:
    from typing import Any

SPAWN_COOLDOWN = 120  # seconds: ten terminals opening at once start one refresh, not ten


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


def _cooldown_ok(marker: str) -> bool:
    try:
        if time.time() - os.path.getmtime(marker) < SPAWN_COOLDOWN:
            return False
    except OSError:
        pass
    try:
        with open(marker, "w") as fh:
            fh.write(str(int(time.time())))
    except OSError:
        return False
    return True


def spawn_bootstrap(repo: str, reason: str) -> bool:
    """Start `python -m memrepo.worker.bootstrap` detached from this process group; True if started."""
    import subprocess

    os.makedirs(paths.index_dir(repo), exist_ok=True)
    if not _cooldown_ok(os.path.join(paths.index_dir(repo), ".refresh-spawned")):
        return False
    tools = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=tools + os.pathsep + os.environ.get("PYTHONPATH", ""))
    log = open(os.path.join(paths.index_dir(repo), "bootstrap.log"), "ab")
    with log:
        subprocess.Popen([sys.executable, "-m", "memrepo.worker.bootstrap", repo, reason], stdin=subprocess.DEVNULL,
                         stdout=log, stderr=log, env=env, start_new_session=True, close_fds=True)
    return True


def always_on_text(repo: str) -> str:
    """Everything memrepo injects at session start (today: the profile); `doctor` measures this."""
    return profile.context(repo)


def on_session_start(event: dict[str, Any]) -> str:
    """Start a refresh when needed, and inject the profile (every source: startup, resume, clear, compact)."""
    repo = paths.memory_repo()
    reason = needs_refresh(repo)
    if reason:
        spawn_bootstrap(repo, reason)
    else:
        _maybe_sweep(repo)
    return always_on_text(repo)


def _maybe_sweep(repo: str) -> None:
    """Queue the daily sweep in the detached worker when the last one is over a day old."""
    from memrepo.worker import jobs

    if jobs.sweep_due(repo):
        jobs.request_sweep(repo)


def bootstrap_status(repo: str) -> dict[str, Any] | None:
    """The detached worker's last report (for `doctor`)."""
    try:
        with open(os.path.join(paths.index_dir(repo), "bootstrap.json"), encoding="utf-8") as fh:
            return dict(json.load(fh))
    except (OSError, ValueError):
        return None
