"""The Claude Code plugin's own files and its virtual environments, one per plugin version (stdlib only).

Claude Code installs each plugin version in a directory of its own (`${CLAUDE_PLUGIN_ROOT}`)
and keeps `${CLAUDE_PLUGIN_DATA}` across updates. A venv made for one version must not serve
the next one (it holds the old code), and two versions running side by side in two terminals
must not take turns rebuilding one shared venv: so each version gets `venv-<version>` under
the data directory, made once by the bootstrap worker. `bin/memrepo` and `hooks/run` find it.
"""

from __future__ import annotations

import json
import os
import re

MANIFEST = os.path.join(".claude-plugin", "plugin.json")
MAX_MANIFEST_BYTES = 64 * 1024
OLD_VENV = "venv"  # the single venv of plugin 0.1.0 (no version in its name)


def root() -> str | None:
    """The plugin's install directory while a plugin hook or its `bin/` runs, else None."""
    value = os.environ.get("CLAUDE_PLUGIN_ROOT")
    return value if value and os.path.isdir(value) else None


def data_dir() -> str | None:
    value = os.environ.get("CLAUDE_PLUGIN_DATA")
    return value or None


def version(plugin_root: str) -> str | None:
    """The `version` of the plugin's manifest, or None when it has none or cannot be read."""
    try:
        with open(os.path.join(plugin_root, MANIFEST), "rb") as fh:
            data = json.loads(fh.read(MAX_MANIFEST_BYTES).decode("utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get("version") if isinstance(data, dict) else None
    return value if isinstance(value, str) and value.strip() else None


def venv_name(plugin_version: str | None) -> str:
    """`venv-<version>` (characters outside [A-Za-z0-9._-] become `-`); plain `venv` without a version."""
    if not plugin_version:
        return OLD_VENV
    return "venv-" + re.sub(r"[^A-Za-z0-9._-]", "-", plugin_version)[:64]


def venv_dir(data: str, plugin_root: str | None) -> str:
    return os.path.join(data, venv_name(version(plugin_root) if plugin_root else None))


def venv_python(venv: str) -> str:
    return os.path.join(venv, "bin", "python")


READY = "memrepo-ready"  # written into a venv once memrepo is installed in it


def is_ready(venv: str) -> bool:
    return os.path.exists(os.path.join(venv, READY)) and os.path.exists(venv_python(venv))


def mark_ready(venv: str, plugin_version: str | None) -> None:
    with open(os.path.join(venv, READY), "w", encoding="utf-8") as fh:
        fh.write((plugin_version or "") + "\n")


def other_venvs(data: str, current: str) -> list[str]:
    """Venvs of other plugin versions under `data` (what an upgrade leaves behind)."""
    try:
        names = sorted(os.listdir(data))
    except OSError:
        return []
    return [os.path.join(data, n) for n in names
            if (n == OLD_VENV or n.startswith("venv-")) and os.path.join(data, n) != current
            and os.path.exists(venv_python(os.path.join(data, n)))]


def inside(python: str, venvs: set[str]) -> bool:
    """Whether `python` is the interpreter of one of `venvs` (real paths): it lives in its bin/."""
    where = os.path.dirname(os.path.dirname(os.path.abspath(python)))
    return os.path.realpath(where) in venvs


def upgrade_pending() -> str | None:
    """Why the bootstrap must run for this plugin version, or None.

    Only an upgrade counts: another version's venv exists and this version's does not. A
    machine that never needed a venv (memrepo installed with pip) never gets one this way.
    """
    data, here = data_dir(), root()
    if data is None or here is None or os.environ.get("MEMREPO_PYTHON"):
        return None
    current = venv_dir(data, here)
    if os.path.exists(venv_python(current)):
        return None
    if not other_venvs(data, current):
        return None
    return f"plugin {version(here) or '(no version)'} has no venv yet ({os.path.basename(current)})"
