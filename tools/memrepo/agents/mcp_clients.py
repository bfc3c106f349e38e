"""`memrepo install cursor|vscode|claude-desktop|windsurf`: `memrepo mcp` in an MCP client's own config.

Each client reads its MCP servers from one JSON file of the user's (`CLIENTS`). Install adds one
entry, `memrepo`, running this interpreter's `memrepo mcp` on the chosen memory repository, and
keeps a record beside the file (`<file>.memrepo-backup`: the bytes and mode it had, or that it
did not exist, and a hash of what install wrote). Uninstall puts the file back exactly, bytes
and mode, or deletes the file (and the folders) install created; when the file changed since
install, it removes only the `memrepo` entry and keeps the rest.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
from dataclasses import dataclass
from typing import Any

from memrepo.errors import MemrepoError

NAME = "memrepo"
SUFFIX = ".memrepo-backup"


@dataclass(frozen=True)
class Client:
    """One MCP client: where its user config lives, under which key its servers are, and how an entry looks."""

    name: str
    label: str
    key: str  # "mcpServers", or VS Code's "servers"
    typed: bool = False  # VS Code wants "type": "stdio"


CLIENTS = {
    "cursor": Client("cursor", "Cursor", "mcpServers"),
    "vscode": Client("vscode", "VS Code", "servers", typed=True),
    "claude-desktop": Client("claude-desktop", "Claude Desktop", "mcpServers"),
    "windsurf": Client("windsurf", "Windsurf", "mcpServers"),
}


def _app_support(*parts: str) -> str:
    """The per-user application data folder the Electron clients use on this platform."""
    home = os.path.expanduser("~")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Application Support", *parts)
    if sys.platform == "win32":
        return os.path.join(os.environ.get("APPDATA") or os.path.join(home, "AppData", "Roaming"), *parts)
    return os.path.join(os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config"), *parts)


def _client(name: str) -> Client:
    if name not in CLIENTS:
        raise MemrepoError(f"no MCP client {name!r}", hint=f"use one of: {', '.join(CLIENTS)}")
    return CLIENTS[name]


def config_path(client: str) -> str:
    """The user-level MCP configuration file of `client`, as its documentation names it."""
    home = os.path.expanduser("~")
    if client == "cursor":
        return os.path.join(home, ".cursor", "mcp.json")
    if client == "vscode":
        return _app_support("Code", "User", "mcp.json")
    if client == "claude-desktop":
        return _app_support("Claude", "claude_desktop_config.json")
    if client == "windsurf":
        return os.path.join(home, ".codeium", "windsurf", "mcp_config.json")
    raise MemrepoError(f"no MCP client {client!r}", hint=f"use one of: {', '.join(CLIENTS)}")


def entry(client: Client, repo: str, python: str | None = None) -> dict[str, Any]:
    """The server entry: this interpreter running `memrepo mcp` on `repo` (no shell, no PATH lookup)."""
    out: dict[str, Any] = {"type": "stdio"} if client.typed else {}
    out.update(command=python or sys.executable, args=["-m", "memrepo", "--repo", repo, "mcp"])
    return out


def _parse(path: str, data: bytes | None) -> dict[str, Any]:
    if not data or not data.strip():
        return {}
    try:
        parsed = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise MemrepoError(f"{path} is not plain JSON ({exc}); memrepo will not rewrite it",
                           hint="fix it by hand (comments too: remove them), or add the entry `memrepo mcp` "
                                "prints with --help yourself") from None
    if not isinstance(parsed, dict):
        raise MemrepoError(f"{path} is not a JSON object", hint="fix the file by hand, then run the command again")
    return parsed


def _read(path: str) -> tuple[bytes | None, int | None]:
    try:
        with open(path, "rb") as fh:
            return fh.read(), os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        return None, None


def _write(path: str, data: bytes, mode: int | None) -> None:
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "wb") as fh:
        fh.write(data)
    if mode is not None:
        os.chmod(tmp, mode)
    os.replace(tmp, path)


def _missing_dirs(folder: str) -> list[str]:
    """The folders above a file that do not exist yet, deepest first."""
    out = []
    while folder and not os.path.isdir(folder):
        out.append(folder)
        folder = os.path.dirname(folder)
    return out


def install(name: str, repo: str, python: str | None = None) -> tuple[str, bool]:
    """Add (or refresh) the `memrepo` entry in client `name`'s config; (path, whether it changed)."""
    client = _client(name)
    path = config_path(name)
    old, mode = _read(path)
    data = _parse(path, old)
    servers = data.setdefault(client.key, {})
    if not isinstance(servers, dict):
        raise MemrepoError(f"{path}: `{client.key}` is not a JSON object", hint="fix the file by hand, then run it again")
    want = entry(client, repo, python)
    if servers.get(NAME) == want:
        return path, False
    servers[NAME] = want
    new = (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    record_path = path + SUFFIX
    record = _load_record(record_path)
    if record is None:  # the first install keeps what was there before it
        made = _missing_dirs(os.path.dirname(path))
        record = {"existed": old is not None, "mode": mode, "made_dirs": made,
                  "original": base64.b64encode(old).decode("ascii") if old is not None else None}
        os.makedirs(os.path.dirname(path), exist_ok=True)
    record["written"] = hashlib.sha256(new).hexdigest()
    _write(path, new, mode)
    _write(record_path, (json.dumps(record, indent=1) + "\n").encode("utf-8"), 0o600)
    return path, True


def _load_record(path: str) -> dict[str, Any] | None:
    data, _ = _read(path)
    if data is None:
        return None
    try:
        record = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise MemrepoError(f"{path} (memrepo's record of the file before install) is damaged",
                           hint="delete it; uninstall then removes only the memrepo entry") from None
    return record if isinstance(record, dict) else None


def uninstall(name: str) -> tuple[str, str]:
    """Undo `install` for client `name`: (path, what was done: restored, deleted, entry removed, absent)."""
    client = _client(name)
    path = config_path(name)
    record_path = path + SUFFIX
    record = _load_record(record_path)
    current, mode = _read(path)
    if record is not None and current is not None and hashlib.sha256(current).hexdigest() == record.get("written"):
        if record.get("existed"):
            _write(path, base64.b64decode(record["original"]), record.get("mode"))
            done = "restored"
        else:
            os.remove(path)
            done = "deleted"
        os.remove(record_path)
        if done == "deleted":
            for folder in record.get("made_dirs") or []:
                if os.path.isdir(folder) and not os.listdir(folder):
                    os.rmdir(folder)
        return path, done
    done = _remove_entry(path, client, current, mode)
    if record is not None:
        os.remove(record_path)
    return path, done


def _remove_entry(path: str, client: Client, current: bytes | None, mode: int | None) -> str:
    """The file changed since install (or install left no record): take out only the `memrepo` entry."""
    data = _parse(path, current)
    servers = data.get(client.key)
    if current is None or not isinstance(servers, dict) or NAME not in servers:
        return "absent"
    del servers[NAME]
    _write(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"), mode)
    return "entry removed"
