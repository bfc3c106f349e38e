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
from memrepo.base import paths
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


def spawn_sources_refresh(repo: str, cwd: str | None) -> bool:
    """Refresh the team and project caches off the prompt path (issue 41), when there are any.

    Detached, so the session starts at once; the prompt hook reads each cache as it stands."""
    from memrepo.recall import sources

    if len(sources.found(repo, cwd, all_known=True)) < 2 or not os.path.isdir(paths.index_dir(repo)):
        return False
    if not _cooldown_ok(os.path.join(paths.index_dir(repo), ".sources-refresh-spawned")):
        return False
    tools = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=tools + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc.spawn_detached(proc.python_main("memrepo.worker.sources_refresh", repo, cwd or ""),
                        log_path=os.path.join(paths.index_dir(repo), "sources-refresh.log"), env=env)
    return True


def _precompile(repo: str) -> None:
    """Compile the prompt path in the background when this interpreter finds it uncompiled (a new
    install or plugin version), so the first prompt does not pay for it (issue 44)."""
    from memrepo.worker import precompile

    try:
        os.makedirs(paths.index_dir(repo), exist_ok=True)
        precompile.spawn_if_needed(os.path.join(paths.index_dir(repo), "precompile.log"))
    except OSError:
        pass


def always_on_text(repo: str) -> str:
    """Everything memrepo injects at session start (today: the profile); `doctor` measures this."""
    return profile.context(repo)


def on_session_start(event: dict[str, Any], agent: str = "") -> str:
    """Start a refresh when needed, and inject the profile (every source: startup, resume, clear, compact).

    Codex CLI and Gemini CLI call it too, with their name (`agent`) for the session log.
    """
    repo = paths.memory_repo()
    reason = plugin_venv.upgrade_pending() or freshness.needs_refresh(repo)
    _precompile(repo)
    if reason:
        spawn_bootstrap(repo, reason)
    else:
        _maybe_sweep(repo)
    cwd = event.get("cwd")
    spawn_sources_refresh(repo, cwd if isinstance(cwd, str) else None)
    _note_start(repo, event, agent)
    parts = [_setup_news(repo, first=reason == FIRST_USE), always_on_text(repo), FALLBACK if _fallback_on(repo) else "",
             double_wiring() if not agent else ""]
    return "\n\n".join(p for p in parts if p)


# A first session waits on the repository and, for the plugin, a virtual environment (16 s
# measured, issue 39): say so, and say once when it is ready, so nobody wonders why nothing is recalled.
FIRST_USE = "no memory repository"
SETTING_UP = ("memrepo is setting itself up on this machine (its first session): the memory repository and its "
              "tools are being prepared in the background, which takes under a minute. Memories are recalled from "
              "the next prompt after that; `memrepo doctor` shows the progress. Tell the user so if they ask.")
READY = ("memrepo is set up: before each prompt it now recalls the memories that bear on it (at most three, none "
         "when nothing fits). `memrepo add` stores one; /memrepo:remember asks you to.")
SETUP_FAILED = "memrepo could not set itself up on this machine; `memrepo doctor` says why and how to fix it."
_ANNOUNCED = ".first-session"


def _setup_news(repo: str, first: bool) -> str:
    """The setting-up line on a first session, the ready (or failed) line once on a later one."""
    marker = os.path.join(paths.index_dir(repo), _ANNOUNCED)
    if first:
        try:
            os.makedirs(paths.index_dir(repo), exist_ok=True)
            open(marker, "w").close()
        except OSError:
            pass
        return SETTING_UP
    if not os.path.exists(marker):
        return ""
    import json

    try:
        with open(os.path.join(paths.index_dir(repo), "bootstrap.json"), encoding="utf-8") as fh:
            state = json.load(fh).get("state")
    except (OSError, ValueError, AttributeError):
        return ""
    if state not in ("done", "failed"):
        return SETTING_UP
    try:
        os.remove(marker)
    except OSError:
        return ""
    return READY if state == "done" else SETUP_FAILED


def double_wiring() -> str:
    """A warning when this is the plugin's hook and memrepo's hooks are in the user's settings.json
    too (`memrepo install claude`): Claude Code runs both, and every memory is injected twice."""
    if not os.environ.get("CLAUDE_PLUGIN_ROOT"):
        return ""
    import json

    from memrepo.claude import install

    home = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    path = os.path.join(home, "settings.json")
    try:
        with open(path, "rb") as fh:
            hooks = json.loads(fh.read(1024 * 1024)).get("hooks")
    except (OSError, ValueError, AttributeError):
        return ""
    if not install.has_ours(hooks):
        return ""
    return (f"memrepo: the memrepo plugin and memrepo's hooks in {path} (from `memrepo install claude`) both run, "
            "so every recalled memory arrives twice. Tell the user: `memrepo uninstall claude` keeps the plugin alone.")


# Where Claude Code's prompt hook does not fire (its VS Code extension has open reports), the
# session start is the only way in: `prompt_fallback: true` in index/local.json adds this line.
FALLBACK = ("memrepo: the prompt hook may not run in this client, so memories are not recalled on their own. "
            "Before acting on a task, run `memrepo recall \"<the task in a few words>\"` and weigh what it prints "
            "(it prints nothing when no memory bears on it).")


def _fallback_on(repo: str) -> bool:
    from memrepo.store import config

    try:
        return config.local(repo).get("prompt_fallback") is True  # this machine's client, not the team's
    except Exception:  # noqa: BLE001 — unreadable settings: no fallback, never a failing hook
        return False


def _note_start(repo: str, event: dict[str, Any], agent: str = "") -> None:
    session, transcript = event.get("session_id"), event.get("transcript_path")
    if not (isinstance(session, str) and session and os.path.isdir(paths.index_dir(repo))):
        return
    from memrepo.recall import log

    try:
        log.log_session_start(repo, session, transcript if isinstance(transcript, str) else "",
                              str(event.get("source") or ""), agent)
    except OSError:
        pass


def _maybe_sweep(repo: str) -> None:
    """Queue the daily sweep in the detached worker when the last one is over a day old."""
    from memrepo.worker import jobs

    if jobs.sweep_due(repo):
        jobs.request_sweep(repo)
