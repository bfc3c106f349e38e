"""SessionStart (stdlib only): return at once; start a detached refresh when the cache needs one.

On first use (no memory repository yet, or no interpreter with memrepo's dependencies) the
detached worker in `memrepo.worker.bootstrap` creates the repository and a virtual environment under
`${CLAUDE_PLUGIN_DATA}`. The recall hook itself never touches git and never builds an index.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from memrepo import proc
from memrepo.recall import paths
from memrepo.passes import profile
from memrepo.store import freshness
from memrepo.worker import plugin_venv

if TYPE_CHECKING:
    from typing import Any

SPAWN_COOLDOWN = 120  # seconds: ten terminals opening at once start one refresh, not ten


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
    os.makedirs(paths.index_dir(repo), exist_ok=True)
    if not _cooldown_ok(os.path.join(paths.index_dir(repo), ".refresh-spawned")):
        return False
    tools = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=tools + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc.spawn_detached(proc.python_main("memrepo.worker.bootstrap", repo, reason),
                        log_path=os.path.join(paths.index_dir(repo), "bootstrap.log"), env=env)
    return True


def always_on_text(repo: str) -> str:
    """Everything memrepo injects at session start (today: the profile); `doctor` measures this."""
    return profile.context(repo)


def on_session_start(event: dict[str, Any]) -> str:
    """Start a refresh when needed, and inject the profile (every source: startup, resume, clear, compact)."""
    repo = paths.memory_repo()
    reason = plugin_venv.upgrade_pending() or freshness.needs_refresh(repo)
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
