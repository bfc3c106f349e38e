"""`memrepo install gemini` / `uninstall gemini`: memrepo's hooks in Gemini CLI's user settings.json.

Gemini CLI keeps its settings in `$GEMINI_CLI_HOME/.gemini/settings.json` (default
~/.gemini/settings.json); its `hooks` object has the shape Claude Code's has, with timeouts in
milliseconds. Idempotent, every other hook and setting kept, the old file saved as
settings.json.bak. User-level hooks run without a trust prompt (GEMINI-NOTES.md §2).
"""

from __future__ import annotations

import os
import shlex
import sys

from memrepo.claude.install import hooks_object, load_json, save_json, strip_ours, uninstall_from
from memrepo.errors import MemrepoError

MARK = "memrepo.agents.gemini.entry"  # the `-m` form earlier installs wrote; still recognized
SCRIPT_MARK = "/memrepo/agents/gemini/entry.py"  # the script the hooks run, by path
MARKS = (SCRIPT_MARK, MARK)
EVENTS = ("SessionStart", "BeforeAgent", "AfterAgent", "SessionEnd")
TIMEOUT_MS = 10000


def gemini_home() -> str:
    """Gemini CLI's configuration directory: `$GEMINI_CLI_HOME/.gemini`, else ~/.gemini."""
    base = os.environ.get("GEMINI_CLI_HOME") or os.path.expanduser("~")
    return os.path.abspath(os.path.join(base, ".gemini"))


def settings_path() -> str:
    return os.path.join(gemini_home(), "settings.json")


def command(python: str, event: str) -> str:
    """The hook command: the entry script by path under `-I -S` (no `site`, ~10 ms less per prompt
    than `-m`, which needs site-packages on the path; the script puts its own package there)."""
    return shlex.join([python, "-I", "-S", os.path.join(os.path.dirname(os.path.abspath(__file__)), "entry.py"), event])


def install(python: str | None = None) -> tuple[str, bool]:
    """Add memrepo's hooks (exec'd with this interpreter); returns (settings path, changed)."""
    path = settings_path()
    data = load_json(path)
    before = repr(data)
    hooks = hooks_object(path, data)
    strip_ours(hooks, MARKS)
    py = python or sys.executable
    for event in EVENTS:
        hooks.setdefault(event, []).append(
            {"hooks": [{"type": "command", "name": f"memrepo-{event}", "command": command(py, event), "timeout": TIMEOUT_MS}]})
    changed = repr(data) != before
    if changed:
        save_json(path, data)
    return path, changed


def uninstall() -> tuple[str, bool]:
    """Remove memrepo's hooks and nothing else; returns (settings path, changed)."""
    path = settings_path()
    return path, uninstall_from(path, MARKS)


def disabled_reason() -> str:
    """Why Gemini CLI would not run the hooks even though they are installed, or "" (for `doctor`)."""
    try:
        data = load_json(settings_path())
    except MemrepoError as exc:
        return str(exc)
    config = data.get("hooksConfig")
    if isinstance(config, dict) and config.get("enabled") is False:
        return f"hooksConfig.enabled is false in {settings_path()}: Gemini CLI runs no hook at all"
    return ""
