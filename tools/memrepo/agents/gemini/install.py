"""`memrepo install gemini` / `uninstall gemini`: memrepo's hooks in Gemini CLI's user settings.json.

Gemini CLI keeps its settings in `$GEMINI_CLI_HOME/.gemini/settings.json` (default
~/.gemini/settings.json); its `hooks` object has the shape Claude Code's has, with timeouts in
milliseconds. Idempotent, every other hook and setting kept, and given back by uninstall as it
was found (`claude.configfile`). User-level hooks run without a trust prompt (GEMINI-NOTES.md §2).
Gemini CLI allows comments in settings.json; memrepo does not rewrite such a file (the comments
would be lost) and prints the block to paste instead.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from typing import Any

from memrepo.claude import configfile
from memrepo.claude.install import dump_json, has_ours, hooks_object, parse_json, strip_ours, uninstall_from
from memrepo.errors import MemrepoError
from memrepo.worker import precompile

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


def hooks_block(python: str) -> dict[str, Any]:
    """memrepo's handlers, one group per event, as they go into the `hooks` object."""
    return {event: [{"hooks": [{"type": "command", "name": f"memrepo-{event}", "command": command(python, event),
                                "timeout": TIMEOUT_MS}]}] for event in EVENTS}


def install(python: str | None = None) -> tuple[str, bool]:
    """Add memrepo's hooks (exec'd with this interpreter); returns (settings path, changed)."""
    path = settings_path()
    block = hooks_block(python or sys.executable)
    data = read_settings(path)
    if _commented(path):
        raise _by_hand(path, f"add memrepo's hooks to its \"hooks\" object by hand:\n{json.dumps({'hooks': block}, indent=2)}")
    before = repr(data)
    hooks = hooks_object(path, data)
    had_ours = strip_ours(hooks, MARKS)
    for event, groups in block.items():
        hooks.setdefault(event, []).extend(groups)
    changed = repr(data) != before
    if changed:
        configfile.write(path, dump_json(data), clean=not had_ours)
    precompile.compile_for(python or sys.executable)  # the first prompt finds compiled code (issue 44)
    return path, changed


def uninstall() -> tuple[str, bool]:
    """Remove memrepo's hooks and nothing else; returns (settings path, changed)."""
    path = settings_path()
    if _commented(path):
        if has_ours(read_settings(path).get("hooks"), MARKS):
            raise _by_hand(path, "remove the handlers named memrepo-* from its \"hooks\" object by hand")
        return path, False
    return path, uninstall_from(path, MARKS)


def read_settings(path: str) -> dict[str, Any]:
    """settings.json as Gemini CLI reads it, comments allowed ({} when missing): for reading only."""
    text = configfile.read_text(path)
    if text is None:
        return {}
    bare = without_comments(text)
    return parse_json(path, bare if bare != text and _parses(bare) else text)


def _commented(path: str) -> bool:
    text = configfile.read_text(path) or ""
    return without_comments(text) != text


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _by_hand(path: str, hint: str) -> MemrepoError:
    return MemrepoError(f"{path} has comments (Gemini CLI allows them) and memrepo will not rewrite it, which would "
                        "drop them; nothing was changed", hint=hint)


def without_comments(text: str) -> str:
    """`text` without its `//` and `/* */` comments (those outside strings)."""
    out, i, quoted = [], 0, False
    while i < len(text):
        c = text[i]
        if quoted:
            out.append(text[i:i + 2] if c == "\\" else c)
            i += 2 if c == "\\" else 1
            quoted = c != '"'
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = len(text) if end < 0 else end + 2
        else:
            out.append(c)
            quoted = c == '"'
            i += 1
    return "".join(out)


def disabled_reason() -> str:
    """Why Gemini CLI would not run the hooks even though they are installed, or "" (for `doctor`)."""
    try:
        data = read_settings(settings_path())
    except MemrepoError as exc:
        return str(exc)
    config = data.get("hooksConfig")
    if isinstance(config, dict) and config.get("enabled") is False:
        return f"hooksConfig.enabled is false in {settings_path()}: Gemini CLI runs no hook at all"
    return ""


def written(python: str | None = None) -> list[str]:
    """What `install` puts in settings.json, one `Event: command` line per hook."""
    return [f"{event}: {command(python or sys.executable, event)}" for event in EVENTS]
