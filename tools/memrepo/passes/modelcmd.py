"""The model command's argument list, and how a `claude -p` command is kept to memrepo's prompt.

A plain `claude -p --model haiku` is a whole Claude Code session: its system prompt and tool
definitions (about 13.7k input tokens a call), the user's CLAUDE.md files, their MCP servers,
slash commands and hooks, and a session transcript left under `~/.claude/projects/` that looks
like the user's own work (issue 16). When the command is `claude` in print mode, `isolated` adds
each flag below that the command does not already set:

* `--system-prompt <memrepo's>`: replaces Claude Code's system prompt;
* `--tools ""`: no built-in tools; `--strict-mcp-config`: no MCP servers;
  `--disable-slash-commands`: no skills or commands;
* `--no-session-persistence`: no transcript of the call on disk;
* `--setting-sources ""`: no settings files, so no CLAUDE.md, hooks or plugins; the login keys of
  the user's own settings (`AUTH_KEYS`) are passed back with `--settings <file>`: a 0600 file in
  the private `index/` folder, never the JSON on the command line, which any local user can read
  in the process list (`env` may hold a key). OAuth and the keychain are not settings and keep
  working (`--bare` would drop them);
* `--json-schema <the pass's schema>`: the CLI's structured output; memrepo still validates.

Any other command gets the prompt on stdin and nothing else. An older `claude` that does not
know one of these flags ("error: unknown option '--x'") is asked again without it
(`without_unknown`), and this process stops adding it: memrepo must not stop working on the
version a user happens to have.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

SYSTEM_PROMPT = (
    "You are a background helper of memrepo, a memory for coding agents. The user message is one "
    "task. Answer with the JSON it asks for and nothing else. Never copy a secret (a password, key, "
    "token or credential) into your answer.")
# The settings keys that say how this machine logs in; everything else in a settings file stays out.
AUTH_KEYS = ("apiKeyHelper", "env", "awsAuthRefresh", "awsCredentialExport")
MAX_SETTINGS_BYTES = 1024 * 1024
_PROGRAMS = frozenset({"claude", "claude.exe"})
# The flags `isolated` may add, and whether each takes a value.
ADDED = {"--system-prompt": True, "--tools": True, "--strict-mcp-config": False, "--disable-slash-commands": False,
         "--no-session-persistence": False, "--output-format": True, "--setting-sources": True, "--settings": True,
         "--json-schema": True}
unsupported: set[str] = set()  # flags this machine's `claude` refused, found out in this process
_UNKNOWN = re.compile(r"unknown option '(--[a-z][a-z-]{1,40})'")


def is_claude_print(args: list[str]) -> bool:
    """True for `claude -p …` / `claude --print …` (a path to the binary counts)."""
    return bool(args) and os.path.basename(args[0]) in _PROGRAMS and ("-p" in args or "--print" in args)


def _has(args: list[str], flag: str) -> bool:
    return any(a == flag or a.startswith(flag + "=") for a in args)


def isolated(args: list[str], schema: dict[str, Any] | None = None, settings_file: str | None = None) -> list[str]:
    """`args` with memrepo's isolation flags added when it is a `claude -p` command.

    `settings_file` is where the user's login keys may be written for `--settings` (a private
    path the caller removes after the call); without it they are not passed."""
    if not is_claude_print(args):
        return list(args)
    out = list(args)
    wanted: list[tuple[str, list[str]]] = [
        ("--system-prompt", [SYSTEM_PROMPT]), ("--tools", [""]), ("--strict-mcp-config", []),
        ("--disable-slash-commands", []), ("--no-session-persistence", []), ("--output-format", ["json"]),
    ]
    if not _has(out, "--setting-sources") and not _has(out, "--settings"):
        wanted.append(("--setting-sources", [""]))
        auth = login_settings()
        if auth and settings_file:
            _write_private(settings_file, json.dumps(auth))
            wanted.append(("--settings", [settings_file]))
    if schema is not None:
        wanted.append(("--json-schema", [json.dumps(schema)]))
    for flag, values in wanted:
        if flag in unsupported:
            continue
        if not _has(out, flag) and not (flag == "--system-prompt" and _has(out, "--system-prompt-file")):
            out += [flag, *values]
    return out


def without_unknown(args: list[str], added: list[str], stderr: str) -> list[str] | None:
    """`args` without the one flag memrepo added that the CLI said it does not know, or None.

    `added` is what `isolated` returned beyond the user's own command: a flag the user wrote
    is never removed."""
    found = _UNKNOWN.search(stderr)
    flag = found.group(1) if found else ""
    if flag not in ADDED or flag not in added:
        return None
    unsupported.add(flag)
    i = len(args) - len(added) + added.index(flag)
    return args[:i] + args[i + 1 + int(ADDED[flag]):]


def settings_file() -> str:
    """This machine's Claude Code user settings file (CLAUDE_CONFIG_DIR, else ~/.claude)."""
    base = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return os.path.join(base, "settings.json")


def login_settings() -> dict[str, Any]:
    """The `AUTH_KEYS` of the user's settings; {} when there are none or the file can't be read."""
    try:
        with open(settings_file(), "rb") as fh:
            raw = fh.read(MAX_SETTINGS_BYTES + 1)
        data = json.loads(raw.decode("utf-8")) if len(raw) <= MAX_SETTINGS_BYTES else None
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: data[k] for k in AUTH_KEYS if k in data}


def _write_private(path: str, text: str) -> None:
    """Write `text` to `path`, readable by this user alone (created 0600, never through a link)."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
