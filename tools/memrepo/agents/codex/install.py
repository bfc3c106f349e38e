"""`memrepo install codex` / `uninstall codex`: memrepo's hooks in Codex CLI's user hooks.json.

Writes `$CODEX_HOME/hooks.json` (default ~/.codex) the way `memrepo install claude` writes
Claude Code's settings: idempotent, every hook that is not memrepo's kept as it was, the old
file saved as hooks.json.bak. Codex runs a user hook only once it is trusted, so the trust
entries of memrepo's own hooks (`trust.py`) go into `$CODEX_HOME/config.toml`, in one block
between marker comments; the rest of that file is never rewritten (config.toml.bak keeps the
previous one), and the result is checked to parse before it is written.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from typing import Any

from memrepo.agents.codex import trust
from memrepo.claude.install import _is_ours, hooks_object, load_json, save_json, save_text, strip_ours, uninstall_from
from memrepo.errors import MemrepoError

MARK = "memrepo.agents.codex.entry"  # the `-m` form earlier installs wrote; still recognized
SCRIPT_MARK = "/memrepo/agents/codex/entry.py"  # the script the hooks run, by path
MARKS = (SCRIPT_MARK, MARK)
# event -> timeout in seconds (SessionEnd: Codex allows at most 3; the hook only queues a job)
EVENTS = {"SessionStart": 10, "UserPromptSubmit": 10, "Stop": 10, "PreCompact": 10, "SessionEnd": 3}
BEGIN = "# >>> memrepo: trust for memrepo's hooks in hooks.json (memrepo install codex; uninstall removes it)"
END = "# <<< memrepo"
PLUGIN_BEGIN = "# >>> memrepo: trust for the memrepo plugin's hooks (memrepo install codex --plugin; uninstall removes it)"
PLUGIN_HOOKS = "hooks/codex.json"  # relative to the plugin root, as `.codex-plugin/plugin.json` names it


def codex_home() -> str:
    """Codex CLI's configuration directory: `CODEX_HOME`, else ~/.codex."""
    return os.path.abspath(os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex"))


def hooks_path() -> str:
    return os.path.join(codex_home(), "hooks.json")


def config_path() -> str:
    return os.path.join(codex_home(), "config.toml")


def command(python: str, event: str) -> str:
    """The hook command: the entry script by path under `-I -S` (no `site`, ~10 ms less per prompt
    than `-m`, which needs site-packages on the path; the script puts its own package there)."""
    return shlex.join([python, "-I", "-S", os.path.join(os.path.dirname(os.path.abspath(__file__)), "entry.py"), event])


def _ours(handler: Any) -> bool:
    return _is_ours(handler, MARKS)


def our_keys(path: str, hooks: dict[str, Any]) -> list[str]:
    """The state keys of memrepo's handlers in a hooks.json object, wherever they sit."""
    keys = []
    for event, groups in hooks.items():
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            handlers = group.get("hooks", []) if isinstance(group, dict) else []
            keys += [trust.state_key(path, event, g, h) for h, handler in enumerate(handlers) if _ours(handler)]
    return keys


def _table_key(line: str) -> str | None:
    """The key of a `[hooks.state."<key>"]` header line, else None."""
    s = line.strip()
    if not (s.startswith("[hooks.state.") and s.endswith("]")) or s.startswith("[["):
        return None
    quoted = s[len("[hooks.state."):-1].strip()
    try:
        key = json.loads(quoted) if quoted.startswith('"') else quoted.strip("'")
    except ValueError:
        return None
    return key if isinstance(key, str) else None


def without_trust(text: str, keys: set[str], begin: str = BEGIN) -> str:
    """config.toml text without memrepo's block (the one `begin` opens) and without any table
    for one of `keys`."""
    out: list[str] = []
    skipping = False
    in_block = False
    for line in text.splitlines(keepends=True):
        s = line.strip()
        if s == begin:
            in_block = True
            continue
        if in_block:
            if s == END:
                in_block = False
            continue
        if s.startswith("["):
            skipping = _table_key(line) in keys
        if not skipping:
            out.append(line)
    return "".join(out)


def _tidy(text: str) -> str:
    """The text ending in exactly one newline (none when empty): the blank line memrepo put
    before its block does not pile up."""
    return text.rstrip("\n") + "\n" if text.strip() else ""


def _trust_block(entries: list[tuple[str, str]], begin: str = BEGIN) -> str:
    lines = [begin]
    for key, digest in entries:
        lines += [f"[hooks.state.{json.dumps(key, ensure_ascii=False)}]", f"trusted_hash = {json.dumps(digest)}"]
    return "\n".join(lines + [END]) + "\n"


def _check_toml(path: str, text: str) -> None:
    """Refuse to write `text` unless it parses (Python 3.11+; 3.10 has no TOML parser, and the
    block memrepo adds is plain TOML)."""
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise MemrepoError(f"{path} would not be valid TOML after adding memrepo's trust entries ({exc}); "
                               "nothing was changed",
                               hint="fix the file by hand (or move it away), then run the command again") from None


def _read(path: str) -> str:
    if not os.path.exists(path):
        return ""
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def install(python: str | None = None) -> tuple[str, bool]:
    """Add memrepo's hooks (this interpreter) and their trust; returns (hooks.json path, changed)."""
    path, cfg = hooks_path(), config_path()
    data = load_json(path)
    before = json.dumps(data, sort_keys=True)
    hooks = hooks_object(path, data)
    old = set(our_keys(path, hooks))
    strip_ours(hooks, MARKS)
    py = python or sys.executable
    entries = []
    for event, timeout in EVENTS.items():
        handler = {"type": "command", "command": command(py, event), "timeout": timeout}
        groups = hooks.setdefault(event, [])
        groups.append({"hooks": [handler]})
        entries.append((trust.state_key(path, event, len(groups) - 1), trust.trusted_hash(event, None, handler)))
    config_before = _read(cfg)
    kept = without_trust(config_before, old | {k for k, _ in entries})
    config_after = (_tidy(kept) + "\n" if kept.strip() else "") + _trust_block(entries)
    _check_toml(cfg, config_after)
    changed = json.dumps(data, sort_keys=True) != before or config_after != config_before
    if json.dumps(data, sort_keys=True) != before:
        save_json(path, data)
    if config_after != config_before:
        save_text(cfg, config_after)
    return path, changed


def plugin_root() -> str:
    """The memrepo plugin's root next to this package (a checkout: `tools/memrepo` two levels
    down), or "" when this memrepo was installed without the plugin's files."""
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
    return root if os.path.isfile(os.path.join(root, ".codex-plugin", "plugin.json")) else ""


def plugin_entries(marketplace: str, root: str | None = None) -> list[tuple[str, str]]:
    """(state key, trusted hash) of each hook of the memrepo plugin installed from `marketplace`."""
    root = plugin_root() if root is None else root
    if not root:
        raise MemrepoError("the memrepo Codex plugin's files are not next to this memrepo (it was installed without them)",
                           hint="trust the plugin's hooks in Codex's /hooks screen, or run this from a memrepo checkout")
    hooks = hooks_object(PLUGIN_HOOKS, load_json(os.path.join(root, PLUGIN_HOOKS)))
    source = f"memrepo@{marketplace}:{PLUGIN_HOOKS}"
    return [(trust.state_key(source, event, g, h), trust.trusted_hash(event, group.get("matcher"), handler))
            for event, groups in hooks.items() for g, group in enumerate(groups)
            for h, handler in enumerate(group.get("hooks", []))]


def trust_plugin(marketplace: str = "memrepo") -> tuple[str, bool]:
    """Trust the hooks of the memrepo plugin (`codex plugin add memrepo@<marketplace>`): Codex
    runs a plugin's hooks only once they are trusted, like a user's. Returns (config path, changed)."""
    cfg = config_path()
    entries = plugin_entries(marketplace)
    before = _read(cfg)
    kept = without_trust(before, {k for k, _ in entries}, PLUGIN_BEGIN)
    after = (_tidy(kept) + "\n" if kept.strip() else "") + _trust_block(entries, PLUGIN_BEGIN)
    _check_toml(cfg, after)
    if after != before:
        save_text(cfg, after)
    return cfg, after != before


def uninstall() -> tuple[str, bool]:
    """Remove memrepo's hooks and their trust entries, nothing else; returns (hooks.json path, changed)."""
    path, cfg = hooks_path(), config_path()
    hooks = load_json(path).get("hooks")
    old = set(our_keys(path, hooks)) if isinstance(hooks, dict) else set()
    changed = uninstall_from(path, MARKS)
    config_before = _read(cfg)
    config_after = without_trust(without_trust(config_before, old), set(), PLUGIN_BEGIN)
    if config_after != config_before:
        config_after = _tidy(config_after)
        _check_toml(cfg, config_after)
        save_text(cfg, config_after)
        changed = True
    return path, changed


def installed() -> list[str]:
    """The events memrepo's hooks are registered for in hooks.json (for `doctor`)."""
    try:
        hooks = load_json(hooks_path()).get("hooks")
    except MemrepoError:
        return []
    return sorted({k.split(":")[-3] for k in our_keys(hooks_path(), hooks)}) if isinstance(hooks, dict) else []
