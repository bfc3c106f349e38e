"""`memrepo install claude` / `uninstall claude`: memrepo's hooks in the user's own settings.json.

For people who prefer settings to the plugin, and refused beside an enabled memrepo plugin
(every memory would be injected twice). Idempotent; entries that are not memrepo's are never
touched; uninstall gives the file back as it was (`configfile`).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from typing import Any

from memrepo.claude import configfile
from memrepo.errors import MemrepoError
from memrepo.worker import precompile

EVENTS = {"UserPromptSubmit": None, "SessionStart": "startup|resume|clear|compact", "Stop": None,
          "PreCompact": "manual|auto", "SessionEnd": None}
MARK = "memrepo.claude.entry"  # the `-m` form installs before issue 44 wrote; still recognized
SCRIPT_MARK = "/memrepo/claude/entry.py"  # the script the hooks run, by path
ENTRY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "entry.py")
# Entry modules of earlier installs: 0.1's `memrepo.hookio`, then `memrepo.claude.hookio` before the
# contract and the dispatcher were split; still recognized and replaced.
OLD_MARKS = ("memrepo.hookio", "memrepo.claude.hookio")


def settings_path() -> str:
    from memrepo.importers.claude_code import claude_home

    return os.path.join(claude_home(), "settings.json")


def load_json(path: str) -> dict[str, Any]:
    """A client's JSON settings file as an object ({} when missing); refuses to touch a broken one."""
    text = configfile.read_text(path)
    return {} if text is None else parse_json(path, text)


def parse_json(path: str, text: str) -> dict[str, Any]:
    """The object a settings file's `text` holds; refuses anything else, naming the file."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise MemrepoError(f"{path} is not valid JSON ({exc}); memrepo will not rewrite it",
                           hint="fix the file by hand, then run the command again") from None
    if not isinstance(data, dict):
        raise MemrepoError(f"{path} is not a JSON object", hint="fix the file by hand, then run the command again")
    return data


def dump_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def hooks_object(path: str, data: dict[str, Any]) -> dict[str, Any]:
    """The `hooks` object of a settings file's `data` (made when missing); refuses any other type."""
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise MemrepoError(f"`hooks` in {path} is not an object", hint="fix the file by hand, then run the command again")
    for event, groups in hooks.items():
        if not isinstance(groups, list):  # the agent refuses it too; install would append to it
            raise MemrepoError(f"`hooks.{event}` in {path} is not a list",
                               hint="fix the file by hand, then run the command again")
    return hooks


def _is_ours(handler: Any, marks: tuple[str, ...] = (SCRIPT_MARK, MARK, *OLD_MARKS)) -> bool:
    """Whether a handler's command names one of `marks`: a word equal to it, or, for a mark that
    starts with "/", a path ending with it (a script path, wherever memrepo is installed)."""
    words = " ".join([str(handler.get("command", ""))] + [str(a) for a in handler.get("args", [])]) if isinstance(handler, dict) else ""
    return any(w == m or (m.startswith("/") and w.endswith(m)) for w in words.split() for m in marks)


def has_ours(hooks: Any, marks: tuple[str, ...] = (SCRIPT_MARK, MARK, *OLD_MARKS)) -> bool:
    """Whether a settings file's `hooks` value holds a handler whose command names one of `marks`."""
    return isinstance(hooks, dict) and any(
        _is_ours(handler, marks) for groups in hooks.values() for group in (groups if isinstance(groups, list) else [])
        for handler in (group.get("hooks", []) if isinstance(group, dict) else []))


def strip_ours(hooks: dict[str, Any], marks: tuple[str, ...] = (SCRIPT_MARK, MARK, *OLD_MARKS)) -> bool:
    """Remove every handler whose command names one of `marks` (an emptied group or event goes
    too; anything else is left as it was); True when something was removed.

    Claude Code's settings, Codex CLI's hooks.json and Gemini CLI's settings share this shape:
    {event: [{"matcher": ..., "hooks": [handler, ...]}, ...]}."""
    changed = False
    for event in list(hooks):
        groups = hooks[event] if isinstance(hooks[event], list) else []
        kept_groups = []
        for group in groups:
            handlers = group.get("hooks", []) if isinstance(group, dict) else []
            kept = [h for h in handlers if not _is_ours(h, marks)]
            changed |= len(kept) != len(handlers)
            if kept or not handlers:
                kept_groups.append(dict(group, hooks=kept) if isinstance(group, dict) else group)
        if kept_groups != groups:
            hooks[event] = kept_groups
        if not hooks[event]:
            del hooks[event]
    return changed


def args(event: str) -> list[str]:
    """The hook's arguments after the interpreter: the entry script by path under `-I -S`, no `sh`
    launcher and no `site` (the interpreter is known here and stays; issue 44)."""
    return ["-I", "-S", ENTRY, event]


def install(python: str | None = None) -> tuple[str, bool]:
    """Add memrepo's hooks (exec form, this interpreter) and compile the package for it; returns
    (settings path, changed)."""
    path = settings_path()
    refuse_beside_plugin(path)
    data = load_json(path)
    before = json.dumps(data, sort_keys=True)
    hooks = hooks_object(path, data)
    had_ours = strip_ours(hooks)
    py = python or sys.executable
    for event, matcher in EVENTS.items():
        group: dict[str, Any] = {"hooks": [{"type": "command", "command": py, "args": args(event), "timeout": 10}]}
        if matcher:
            group = {"matcher": matcher, **group}
        hooks.setdefault(event, []).append(group)
    changed = json.dumps(data, sort_keys=True) != before
    if changed:
        configfile.write(path, dump_json(data), clean=not had_ours)
    precompile.compile_for(py)
    return path, changed


def refuse_beside_plugin(path: str) -> None:
    """Refuse a settings install while the memrepo plugin is enabled: Claude Code would run both."""
    from memrepo.claude import plugins

    enabled = plugins.enabled_plugins([path])
    if enabled:
        plugin = next(iter(enabled))
        raise MemrepoError(f"the memrepo plugin {plugin} is enabled in {path}: hooks installed beside it would inject "
                           "every memory twice; nothing was changed",
                           hint=f"keep the plugin (nothing to do), or run `claude plugin disable {plugin}` "
                                "and then `memrepo install claude` again")


def uninstall() -> tuple[str, bool]:
    """Remove memrepo's hooks and nothing else; returns (settings path, changed)."""
    path = settings_path()
    return path, uninstall_from(path, (SCRIPT_MARK, MARK, *OLD_MARKS))


def uninstall_from(path: str, marks: tuple[str, ...]) -> bool:
    """Give back the JSON file at `path` as install found it, or, when something else changed it
    since, remove the handlers naming `marks` (an emptied `hooks` goes too) and nothing else;
    True when the file changed."""
    def strip(text: str) -> str:
        data = parse_json(path, text)
        hooks = data.get("hooks")
        if not isinstance(hooks, dict) or not strip_ours(hooks, marks):
            return text
        if not hooks:
            del data["hooks"]
        return dump_json(data)

    return configfile.give_back(path, strip)


def written(python: str | None = None) -> list[str]:
    """What `install` puts in the settings file, one `Event: command` line per hook."""
    py = python or sys.executable
    return [f"{event}: {shlex.join([py, *args(event)])}" for event in EVENTS]
