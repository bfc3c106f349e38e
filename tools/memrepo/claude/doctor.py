"""What `memrepo doctor` checks on Claude Code's side: how memrepo is wired in, and what it runs on.

Reads Claude Code's own files — the user's `settings.json`, the project's `.claude/settings*.json`,
`plugins/installed_plugins.json` and the plugin's data folder — and never changes them: a
finding names the command that fixes it. Auto memory is reported, never switched off.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

from memrepo.claude import install, plugins
from memrepo.claude.plugins import PLUGIN, enabled_plugins
from memrepo.importers.claude_code import claude_home
from memrepo.store.doctor import Check
from memrepo.worker import plugin_venv

_read = plugins.read_json


def settings_files(cwd: str | None = None) -> list[str]:
    """The settings files Claude Code reads for a session in `cwd`: the user's, then the project's."""
    found = [os.path.join(claude_home(), "settings.json")]
    if cwd:
        from memrepo.base import projects

        top = projects.top_level(cwd) or cwd
        found += [os.path.join(top, ".claude", name) for name in ("settings.json", "settings.local.json")]
    return [p for p in found if os.path.isfile(p)]


def _our_handlers(data: Any) -> list[dict[str, Any]]:
    hooks = data.get("hooks") if isinstance(data, dict) else None
    out = []
    for groups in (hooks.values() if isinstance(hooks, dict) else []):
        for group in groups if isinstance(groups, list) else []:
            for handler in group.get("hooks", []) if isinstance(group, dict) else []:
                if install._is_ours(handler):
                    out.append(handler)
    return out


def installed_plugin() -> list[dict[str, Any]]:
    """The memrepo entries of `plugins/installed_plugins.json`: {id, version, installPath}."""
    data = _read(os.path.join(claude_home(), "plugins", "installed_plugins.json"))
    plugins = data.get("plugins") if isinstance(data, dict) else None
    out = []
    for key, entries in (plugins.items() if isinstance(plugins, dict) else []):
        if not (isinstance(key, str) and key.split("@", 1)[0] == PLUGIN):
            continue
        for entry in entries if isinstance(entries, list) else [entries]:
            if isinstance(entry, dict):
                out.append({"id": key, "version": entry.get("version"), "installPath": entry.get("installPath")})
    return out


def _data_dir(plugin_id: str) -> str:
    """`${CLAUDE_PLUGIN_DATA}` of an installed plugin: the id with characters outside [A-Za-z0-9_-] as `-`."""
    import re

    return os.path.join(claude_home(), "plugins", "data", re.sub(r"[^A-Za-z0-9_-]", "-", plugin_id))


def wiring_checks(cwd: str | None) -> list[Check]:
    """Duplicate wiring (plugin and settings hooks both active) and settings hooks whose interpreter is gone."""
    files = settings_files(cwd)
    ours = {path: _our_handlers(_read(path)) for path in files}
    hooked = [path for path, handlers in ours.items() if handlers]
    plugins = enabled_plugins(files)
    checks: list[Check] = []
    if plugins and hooked:
        plugin, where = next(iter(plugins.items()))
        checks.append(Check("claude wiring", False,
                            f"memrepo is wired in twice: the plugin {plugin} is enabled ({where}) and {hooked[0]} has "
                            "memrepo's hooks, so Claude Code runs both and every recalled memory is injected twice",
                            f"keep one: `memrepo uninstall claude` (keep the plugin), or `claude plugin disable {plugin}` "
                            "(keep the settings hooks)"))
    elif plugins:
        plugin, where = next(iter(plugins.items()))
        checks.append(Check("claude wiring", True, f"the plugin {plugin} (enabled in {where})"))
    elif hooked:
        checks.append(Check("claude wiring", True, f"memrepo's hooks in {hooked[0]}"))
        if shutil.which("memrepo") is None:
            # The plugin brings its bin/; settings hooks rely on the user's PATH.
            checks.append(Check("memrepo on PATH", True, "no `memrepo` on PATH: the `memrepo show <id>` each recalled "
                                "block names cannot run in a session",
                                "put the bin/ folder of the environment memrepo is installed in on PATH "
                                "(or `pipx install memrepo`)", warn=True))
    else:
        checks.append(Check("claude wiring", True, "memrepo is not wired into Claude Code on this machine (no plugin "
                            "enabled, no settings hooks); a session started with `--plugin-dir` is not seen here",
                            "`/plugin install memrepo@<marketplace>` in Claude Code, or `memrepo install claude`", warn=True))
    for path, handlers in ours.items():
        missing = sorted({str(h.get("command")) for h in handlers if not _runs(str(h.get("command", "")))})
        if missing:
            checks.append(Check("claude hooks", False, f"memrepo's hooks in {path} run {missing[0]}, which does not exist "
                                "(a virtual environment removed or moved?): every hook fails, and recall says nothing",
                                "`memrepo install claude` rewrites them with this interpreter"))
    return checks


def _runs(command: str) -> bool:
    if not command:
        return False
    if os.sep in command:
        return os.path.isfile(command) and os.access(command, os.X_OK)
    return shutil.which(command) is not None


def plugin_checks() -> list[Check]:
    """The installed plugin's venv: built for its version, and what older versions left behind."""
    checks: list[Check] = []
    for entry in installed_plugin():
        version, data = entry.get("version"), _data_dir(str(entry["id"]))
        if not isinstance(version, str) or not os.path.isdir(data):
            continue
        current = os.path.join(data, plugin_venv.venv_name(version))
        others = plugin_venv.other_venvs(data, current)
        if plugin_venv.is_ready(current):
            checks.append(Check("plugin venv", True, f"{entry['id']} {version}: {current}"))
        elif others:
            checks.append(Check("plugin venv", True, f"{entry['id']} {version} has no venv yet; the one there "
                                f"({os.path.basename(others[-1])}) holds another version's code and is not used",
                                "start a Claude Code session: its SessionStart hook builds this version's venv once "
                                "(`memrepo doctor` shows the progress)", warn=True))
        if others and plugin_venv.is_ready(current):
            listed = " ".join(others)
            checks.append(Check("old plugin venvs", True, f"{len(others)} venv(s) of older plugin versions: {listed}",
                                f"once no session of those versions is open: rm -rf {listed}", warn=True))
    return checks


def auto_memory_check(cwd: str | None) -> Check:
    """Claude Code's own auto memory (MEMORY.md), on or off: reported, never changed."""
    if os.environ.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "") not in ("", "0", "false"):
        return Check("claude auto memory", True, "off (CLAUDE_CODE_DISABLE_AUTO_MEMORY is set)")
    setting = None
    for path in settings_files(cwd):
        data = _read(path)
        if isinstance(data, dict) and isinstance(data.get("autoMemoryEnabled"), bool):
            setting = (data["autoMemoryEnabled"], path)  # the project's settings come last and win
    if setting is not None and not setting[0]:
        return Check("claude auto memory", True, f"off (autoMemoryEnabled: false in {setting[1]})")
    where = f"autoMemoryEnabled: true in {setting[1]}" if setting else "Claude Code's default"
    return Check("claude auto memory", True, f"on ({where}): Claude Code also loads its own MEMORY.md at session start, "
                 "next to memrepo's recall, and memrepo leaves it so (`memrepo import claude-code` brings its notes "
                 "in; `autoMemoryEnabled: false` in settings turns it off)")


PROMPT_WATCH = 5  # the latest sessions with prompts looked at
PROMPT_SILENT = 2  # of them without a single recall decision: the prompt hook does not fire


def _has_prompt(transcript: str) -> bool:
    """Whether a session's transcript holds a prompt a person typed (read at most a few MB)."""
    from memrepo.format import transcript as tr

    try:
        return any(t.role == "user" and t.kind == "prompt" for t in tr.read(transcript))
    except (OSError, ValueError):
        return False


def prompt_hook_check(repo: str) -> Check | None:
    """Sessions that started and had prompts, yet made no recall decision: UserPromptSubmit does not
    fire there (Claude Code's VS Code extension has open reports of it). None: nothing to say."""
    from memrepo.base import paths
    from memrepo.recall import log

    decided = {str(e.get("session")) for e in log.read_all(repo)}
    starts = log.read_jsonl(paths.session_starts(repo))
    seen, watched, silent = set(), 0, []
    for e in reversed(starts):
        session = str(e.get("session", ""))
        if not session or session in seen:
            continue
        seen.add(session)
        transcript = str(e.get("transcript") or "")
        if not transcript or not _has_prompt(transcript):
            continue  # opened and closed, or a transcript that is gone: nothing to judge
        watched += 1
        if session not in decided:
            silent.append(session)
        if watched >= PROMPT_WATCH:
            break
    if not watched:
        return None
    if len(silent) < PROMPT_SILENT:
        return Check("prompt hook", True, f"fired in {watched - len(silent)} of the last {watched} sessions with prompts")
    from memrepo.store import config

    on = config.local(repo).get("prompt_fallback") is True
    detail = (f"{len(silent)} of the last {watched} sessions with prompts made no recall decision (e.g. {silent[0][:8]}): "
              "the UserPromptSubmit hook does not fire in that client, so nothing is recalled there")
    if on:
        return Check("prompt hook", True, detail + "; the session-start fallback is on")
    return Check("prompt hook", True, detail, 'add "prompt_fallback": true to index/local.json: each session then starts '
                 'with a line telling the agent to run `memrepo recall "<the task>"` before acting', warn=True)


def checks(cwd: str | None = None, repo: str | None = None) -> list[Check]:
    """Every Claude Code check, in the order a person would fix them."""
    found = [*wiring_checks(cwd), *plugin_checks(), auto_memory_check(cwd)]
    watch = prompt_hook_check(repo) if repo and os.path.isdir(os.path.join(repo, "index")) else None
    return found + ([watch] if watch else [])
