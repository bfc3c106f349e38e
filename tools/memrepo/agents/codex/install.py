"""`memrepo install codex` / `uninstall codex`: memrepo's hooks in Codex CLI's user hooks.json.

Writes `$CODEX_HOME/hooks.json` (default ~/.codex) the way `memrepo install claude` writes
Claude Code's settings: idempotent, every hook that is not memrepo's kept as it was, and given
back by uninstall as it was found (`claude.configfile`). Codex runs a user hook only once it is
trusted, so the trust entries of memrepo's own hooks (`trust.py`) go into
`$CODEX_HOME/config.toml` as `[hooks.state."<key>"]` tables, edited through a TOML parser that
keeps the rest of the file as the user wrote it (tomlkit): memrepo's entries are found by their
keys, never by lines (a multi-line string may hold anything, issue 38 part 9).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from typing import TYPE_CHECKING, Any, Callable

from memrepo.agents.codex import trust
from memrepo.claude import configfile
from memrepo.claude.install import _is_ours, dump_json, hooks_object, load_json, strip_ours, uninstall_from
from memrepo.errors import MemrepoError
from memrepo.worker import precompile

if TYPE_CHECKING:
    from tomlkit.container import Container
    from tomlkit.toml_document import TOMLDocument

MARK = "memrepo.agents.codex.entry"  # the `-m` form earlier installs wrote; still recognized
SCRIPT_MARK = "/memrepo/agents/codex/entry.py"  # the script the hooks run, by path
MARKS = (SCRIPT_MARK, MARK)
# event -> timeout in seconds (SessionEnd: Codex allows at most 3; the hook only queues a job)
EVENTS = {"SessionStart": 10, "UserPromptSubmit": 10, "Stop": 10, "PreCompact": 10, "SessionEnd": 3}
# The comment lines earlier installs put around their trust tables; removed wherever they are
# comments (inside a string they are the user's text).
LEGACY_MARKERS = (
    "# >>> memrepo: trust for memrepo's hooks in hooks.json (memrepo install codex; uninstall removes it)",
    "# >>> memrepo: trust for the memrepo plugin's hooks (memrepo install codex --plugin; uninstall removes it)",
    "# <<< memrepo",
)
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


def parse_toml(path: str, text: str) -> TOMLDocument:
    """config.toml's text as a document that writes back what it read; refuses a broken one."""
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        return tomlkit.parse(text)
    except ParseError as exc:
        raise MemrepoError(f"{path} is not valid TOML ({exc}); memrepo will not rewrite it, nothing was changed",
                           hint="fix the file by hand (or move it away), then run the command again") from None


def _table(path: str, parent: Any, key: str, create: bool) -> Any:
    """`parent[key]` as a table (a new one when missing and `create`, else None)."""
    if key not in parent:
        if not create:
            return None
        import tomlkit

        parent[key] = tomlkit.table(is_super_table=True)
    found = parent[key]
    if not isinstance(found, dict):
        raise MemrepoError(f"`{key}` in {path} is not a table; memrepo will not rewrite it",
                           hint="fix the file by hand, then run the command again")
    return found


def drop_trust(path: str, doc: TOMLDocument, ours: Callable[[str], bool]) -> bool:
    """Remove the `hooks.state` tables whose key `ours` accepts (and the markers of earlier
    installs); True when something was removed."""
    removed = _drop_markers(doc)
    hooks = _table(path, doc, "hooks", create=False)
    state = _table(path, hooks, "state", create=False) if hooks is not None else None
    if state is None:
        return removed
    notes = []
    for key in [k for k in state if ours(k)]:
        notes += _comments(state[key])
        del state[key]
        removed = True
    if removed and not state:
        del hooks["state"]
        if not hooks:
            del doc["hooks"]
    for note in notes:  # a person's comment below memrepo's table belongs to them, not to the table
        doc.add(note)
    return removed


def _comments(table: Any) -> list[Any]:
    from tomlkit.items import Comment, Table

    return [item for _, item in table.value.body if isinstance(item, Comment)] if isinstance(table, Table) else []


def _drop_markers(container: Container) -> bool:
    from tomlkit.items import Comment, Table, Whitespace

    found = False
    for i, (_, item) in enumerate(container.body):
        if isinstance(item, Comment) and item.trivia.comment.strip() in LEGACY_MARKERS:
            container.body[i] = (None, Whitespace(""))
            found = True
        elif isinstance(item, Table):
            found |= _drop_markers(item.value)
    return found


def add_trust(path: str, doc: TOMLDocument, entries: list[tuple[str, str]]) -> None:
    """A `[hooks.state."<key>"]` table with `trusted_hash` for each entry."""
    import tomlkit
    from tomlkit.items import InlineTable

    state = _table(path, _table(path, doc, "hooks", create=True), "state", create=True)
    for key, digest in entries:
        table = tomlkit.inline_table() if isinstance(state, InlineTable) else tomlkit.table()
        table["trusted_hash"] = digest
        state[key] = table


def _plugin_key(key: str) -> bool:
    """Whether a trust key is one of a memrepo plugin's hooks, from whichever marketplace."""
    return key.startswith("memrepo@") and f":{PLUGIN_HOOKS}:" in key


def _retrust(cfg: str, drop: Callable[[str], bool], entries: list[tuple[str, str]]) -> bool:
    """config.toml with the trust `drop` accepts replaced by `entries`; True when it changed.
    Parsed before anything is written: a broken file stops the install untouched."""
    import tomlkit

    before = configfile.read_text(cfg) or ""
    doc = parse_toml(cfg, before)
    was = doc.unwrap()
    removed = drop_trust(cfg, doc, drop)
    add_trust(cfg, doc, entries)
    if doc.unwrap() == was:  # the same trust already: the file stays as it is
        return False
    configfile.write(cfg, tomlkit.dumps(doc), clean=not removed)
    return True


def install(python: str | None = None) -> tuple[str, bool]:
    """Add memrepo's hooks (this interpreter) and their trust; returns (hooks.json path, changed)."""
    path, cfg = hooks_path(), config_path()
    data = load_json(path)
    before = json.dumps(data, sort_keys=True)
    hooks = hooks_object(path, data)
    old = set(our_keys(path, hooks))
    had_ours = strip_ours(hooks, MARKS)
    py = python or sys.executable
    entries = []
    for event, timeout in EVENTS.items():
        handler = {"type": "command", "command": command(py, event), "timeout": timeout}
        groups = hooks.setdefault(event, [])
        groups.append({"hooks": [handler]})
        entries.append((trust.state_key(path, event, len(groups) - 1), trust.trusted_hash(event, None, handler)))
    keys = old | {k for k, _ in entries}
    changed = _retrust(cfg, keys.__contains__, entries)  # first: a broken config.toml stops it all
    if json.dumps(data, sort_keys=True) != before:
        configfile.write(path, dump_json(data), clean=not had_ours)
        changed = True
    precompile.compile_for(py)  # the first prompt finds compiled code (issue 44)
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
    return cfg, _retrust(cfg, _plugin_key, plugin_entries(marketplace))


def uninstall() -> tuple[str, bool]:
    """Remove memrepo's hooks and their trust entries (the plugin's too), nothing else; each file
    goes back to what install found when nothing else changed it. Returns (hooks.json path, changed)."""
    import tomlkit

    path, cfg = hooks_path(), config_path()
    hooks = load_json(path).get("hooks")
    old = set(our_keys(path, hooks)) if isinstance(hooks, dict) else set()

    def strip(text: str) -> str:
        doc = parse_toml(cfg, text)
        if not drop_trust(cfg, doc, lambda key: key in old or _plugin_key(key)):
            return text
        after = tomlkit.dumps(doc)  # without the blank line install put before its tables
        return after.rstrip("\n") + "\n" if after.strip() else ""

    changed = uninstall_from(path, MARKS)
    return path, configfile.give_back(cfg, strip) or changed  # last: it may remove the folder install made


def installed() -> list[str]:
    """The events memrepo's hooks are registered for in hooks.json (for `doctor`)."""
    try:
        hooks = load_json(hooks_path()).get("hooks")
    except MemrepoError:
        return []
    return sorted({k.split(":")[-3] for k in our_keys(hooks_path(), hooks)}) if isinstance(hooks, dict) else []


def written(python: str | None = None) -> list[str]:
    """What `install` puts in hooks.json, one `Event: command` line per hook."""
    return [f"{event}: {command(python or sys.executable, event)}" for event in EVENTS]
