"""What `memrepo doctor` checks for Codex CLI and Gemini CLI: only where memrepo's hooks are
installed (`memrepo install codex|gemini`), and only by reading their files, never changing them.

- Codex: the interpreter each hook runs exists, each hook (the plugin's too) has the trust
  entry Codex needs to run it (without one, `codex exec` skips the hook silently;
  CODEX-NOTES.md §3), and memrepo is not wired in twice (the plugin and hooks.json).
- Gemini: the interpreter exists, `hooksConfig.enabled` is not false (it turns off every hook),
  and memrepo is not wired in twice (the extension and the settings hooks).
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import Any

from memrepo.agents.codex import install as codex, trust
from memrepo.agents.gemini import install as gemini
from memrepo.claude.install import _is_ours, load_json
from memrepo.errors import MemrepoError
from memrepo.store.doctor import Check


def _interpreter(command: str) -> str:
    return command.split(" ", 1)[0]


def _missing(handlers: list[dict[str, Any]]) -> list[str]:
    return sorted({_interpreter(str(h.get("command", ""))) for h in handlers
                   if not os.access(_interpreter(str(h.get("command", ""))), os.X_OK)})


def _handlers(hooks: Any, marks: tuple[str, ...]) -> list[tuple[str, int, int, dict[str, Any]]]:
    out = []
    for event, groups in hooks.items() if isinstance(hooks, dict) else []:
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            for h, handler in enumerate(group.get("hooks", []) if isinstance(group, dict) else []):
                if isinstance(handler, dict) and _is_ours(handler, marks):
                    out.append((event, g, h, handler))
    return out


def _trusted(config: str) -> dict[str, Any] | None:
    """`hooks.state` of Codex's config.toml ({} when there is none), or None when it cannot be read here."""
    data = _config(config)
    if data is None:
        return None
    hooks = data.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    return state if isinstance(state, dict) else {}


def _config(config: str) -> dict[str, Any] | None:
    """Codex's config.toml as a table ({} when there is none), or None when it cannot be read here."""
    if not os.path.exists(config):
        return {}
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            with open(config, "rb") as fh:
                return tomllib.load(fh)
        except (OSError, tomllib.TOMLDecodeError):
            return None
    return None  # Python 3.10: no TOML parser in the standard library


def codex_plugin() -> str:
    """The marketplace of the memrepo Codex plugin when config.toml enables it, else ""."""
    plugins = (_config(codex.config_path()) or {}).get("plugins")
    for key, entry in plugins.items() if isinstance(plugins, dict) else []:
        if key.split("@", 1)[0] == "memrepo" and "@" in key and isinstance(entry, dict) and entry.get("enabled") is True:
            return key.split("@", 1)[1]
    return ""


def codex_plugin_checks(marketplace: str, hooked: bool) -> list[Check]:
    if hooked:
        return [Check("codex hooks", False, f"memrepo is wired into Codex twice: the plugin memrepo@{marketplace} and the "
                      f"hooks in {codex.hooks_path()}, so every recalled memory is injected twice",
                      "keep one: `memrepo uninstall codex` (then `memrepo install codex --plugin`), or "
                      f"`codex plugin remove memrepo@{marketplace}`")]
    state = _trusted(codex.config_path())
    try:
        entries = codex.plugin_entries(marketplace)
    except MemrepoError:
        entries = []
    if state is None or not entries:
        return [Check("codex hooks", True, f"the plugin memrepo@{marketplace}; whether Codex trusts its hooks cannot be "
                      "read here", warn=True)]
    untrusted = [key for key, digest in entries
                 if not isinstance(state.get(key), dict) or state[key].get("trusted_hash") != digest]
    if untrusted:
        return [Check("codex hooks", False, f"{len(untrusted)} of the {len(entries)} hooks of the plugin memrepo@{marketplace} "
                      "are not trusted: Codex skips an untrusted hook without a word",
                      f"`memrepo install codex --plugin --marketplace {marketplace}` (or trust them in Codex's /hooks screen)")]
    return [Check("codex hooks", True, f"the plugin memrepo@{marketplace}, its {len(entries)} hooks trusted")]


def codex_checks() -> list[Check]:
    path = codex.hooks_path()
    try:
        ours = _handlers(load_json(path).get("hooks"), codex.MARKS)
    except MemrepoError as exc:
        return [Check("codex hooks", False, str(exc), "fix the file by hand, then `memrepo install codex`")]
    marketplace = codex_plugin()
    if marketplace:
        return codex_plugin_checks(marketplace, bool(ours))
    if not ours:
        return []
    missing = _missing([h for *_, h in ours])
    if missing:
        return [Check("codex hooks", False, f"memrepo's hooks in {path} run {missing[0]}, which does not exist: every "
                      "hook fails, and Codex recalls nothing", "`memrepo install codex` rewrites them with this interpreter")]
    state = _trusted(codex.config_path())
    if state is None:
        return [Check("codex hooks", True, f"memrepo's hooks in {path}; their trust in {codex.config_path()} "
                      "could not be read here", warn=True)]
    untrusted = [event for event, g, h, handler in ours
                 if not isinstance(state.get(trust.state_key(path, event, g, h)), dict)
                 or state[trust.state_key(path, event, g, h)].get("trusted_hash") != trust.trusted_hash(event, None, handler)]
    if untrusted:
        return [Check("codex hooks", False, f"{len(untrusted)} of memrepo's {len(ours)} hooks in {path} are not trusted "
                      f"({', '.join(untrusted)}): Codex skips an untrusted hook without a word",
                      "`memrepo install codex` writes their trust again (or trust them in Codex's /hooks screen)")]
    return [Check("codex hooks", True, f"{len(ours)} memrepo hooks in {path}, trusted in {codex.config_path()}")]


def gemini_extension() -> str:
    """The folder of memrepo's Gemini CLI extension when it is installed, else ""."""
    folder = os.path.join(gemini.gemini_home(), "extensions", "memrepo")
    return folder if os.path.isfile(os.path.join(folder, "gemini-extension.json")) else ""


def gemini_checks() -> list[Check]:
    path = gemini.settings_path()
    try:
        ours = _handlers(gemini.read_settings(path).get("hooks"), gemini.MARKS)  # comments allowed, as Gemini reads it
    except MemrepoError as exc:
        return [Check("gemini hooks", False, str(exc), "fix the file by hand, then `memrepo install gemini`")]
    extension = gemini_extension()
    if extension and ours:
        return [Check("gemini hooks", False, f"memrepo is wired into Gemini CLI twice: the extension in {extension} and "
                      f"the hooks in {path}, so every recalled memory is injected twice",
                      "keep one: `memrepo uninstall gemini` (keep the extension), or `gemini extensions uninstall memrepo`")]
    if extension:
        if shutil.which("memrepo-hook") is None:
            return [Check("gemini hooks", False, f"the memrepo extension in {extension} runs `memrepo-hook`, which is not "
                          "on PATH: every hook fails, and Gemini CLI recalls nothing",
                          "install memrepo where PATH finds it (`pipx install memrepo`), or use `memrepo install gemini`")]
        return [Check("gemini hooks", True, f"the memrepo extension in {extension}")]
    if not ours:
        return []
    missing = _missing([h for *_, h in ours])
    if missing:
        return [Check("gemini hooks", False, f"memrepo's hooks in {path} run {missing[0]}, which does not exist: every "
                      "hook fails, and Gemini CLI recalls nothing", "`memrepo install gemini` rewrites them with this interpreter")]
    off = gemini.disabled_reason()
    if off:
        return [Check("gemini hooks", False, off, "remove `hooksConfig.enabled: false` from that file")]
    return [Check("gemini hooks", True, f"{len(ours)} memrepo hooks in {path}")]


def checks() -> list[Check]:
    """The Codex CLI and Gemini CLI checks (none for an agent memrepo is not installed in)."""
    return [*codex_checks(), *gemini_checks()]
