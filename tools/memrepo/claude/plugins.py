"""Which memrepo plugins Claude Code's settings enable: what `memrepo doctor` reports and what
`memrepo install claude` refuses to install beside (two copies would inject every memory twice)."""

from __future__ import annotations

import json
from typing import Any

PLUGIN = "memrepo"
MAX_SETTINGS_BYTES = 1024 * 1024


def read_json(path: str) -> Any:
    """A settings file's JSON (at most MAX_SETTINGS_BYTES of it), or None when unreadable."""
    try:
        with open(path, "rb") as fh:
            return json.loads(fh.read(MAX_SETTINGS_BYTES).decode("utf-8"))
    except (OSError, ValueError):
        return None


def enabled_plugins(files: list[str]) -> dict[str, str]:
    """memrepo plugin ids (`memrepo@<marketplace>`) enabled in `files` -> the file that enables it."""
    found: dict[str, str] = {}
    for path in files:
        data = read_json(path)
        plugins = data.get("enabledPlugins") if isinstance(data, dict) else None
        for key, on in (plugins.items() if isinstance(plugins, dict) else []):
            if isinstance(key, str) and key.split("@", 1)[0] == PLUGIN and on is True:
                found.setdefault(key, path)
    return found
