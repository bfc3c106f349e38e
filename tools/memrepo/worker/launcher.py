"""`bin/memrepo` (stdlib only, run as a script): memrepo's CLI on the plugin's venv, or why not yet.

Claude Code puts the plugin's `bin/` on the Bash tool's PATH, so the `memrepo show <id>` that
every injected block names works inside the session. The CLI needs PyYAML and click, which live
in the venv the bootstrap worker makes for this plugin version; while that is still being made,
this says so (exit 75, "try again") instead of failing with an import error.
"""

from __future__ import annotations

import glob
import os
import sys
import time

TOOLS = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if TOOLS not in sys.path:
    sys.path.insert(0, TOOLS)

from memrepo.base import paths  # noqa: E402
from memrepo.worker import plugin_venv  # noqa: E402

EX_TEMPFAIL = 75  # sysexits: try again later
SETUP_STATES = ("started", "creating-venv", "installing")
SETUP_PATIENCE = 20 * 60  # seconds after which a setup that never reported again is not "running"
CLI = 'import sys; sys.path[:1] == [""] and sys.path.pop(0); from memrepo.cli.main import main; raise SystemExit(main())'


def _config_home() -> str:
    return os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")


def data_dirs() -> list[str]:
    """`${CLAUDE_PLUGIN_DATA}` when set, else the plugin data folders named after memrepo."""
    data = plugin_venv.data_dir()
    if data:
        return [data]
    return sorted(glob.glob(os.path.join(_config_home(), "plugins", "data", "memrepo*")))


def plugin_root() -> str:
    return plugin_venv.root() or os.path.dirname(TOOLS)


def _recorded(repo: str) -> str | None:
    """The interpreter `memrepo init` recorded for the memory repository (it has the dependencies)."""
    try:
        with open(os.path.join(repo, ".git", "memrepo-python"), encoding="utf-8") as fh:
            return fh.readline().strip() or None
    except OSError:
        return None


def candidates(repo: str) -> list[str]:
    """Interpreters that can run the CLI, best first: MEMREPO_PYTHON, this plugin version's ready
    venv, the interpreter `memrepo init` recorded."""
    found = [os.environ.get("MEMREPO_PYTHON") or ""]
    stale: set[str] = set()
    for data in data_dirs():
        venv = plugin_venv.venv_dir(data, plugin_root())
        if plugin_venv.is_ready(venv):
            found.append(plugin_venv.venv_python(venv))
        stale.update(os.path.realpath(v) for v in plugin_venv.other_venvs(data, venv))
    recorded = _recorded(repo)
    if recorded and not plugin_venv.inside(recorded, stale):  # an older plugin's init may have recorded its venv
        found.append(recorded)
    return [py for py in found if py and os.access(py, os.X_OK)]


def _repo_from(argv: list[str]) -> str:
    for i, arg in enumerate(argv):
        if arg == "--repo" and i + 1 < len(argv):
            return paths.memory_repo(argv[i + 1])
        if arg.startswith("--repo="):
            return paths.memory_repo(arg.split("=", 1)[1])
    return paths.memory_repo()


def setup_status(repo: str) -> dict[str, object] | None:
    import json

    try:
        with open(os.path.join(paths.index_dir(repo), "bootstrap.json"), "rb") as fh:
            data = json.loads(fh.read(64 * 1024).decode("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _age(at: object) -> float | None:
    import calendar

    try:
        return time.time() - calendar.timegm(time.strptime(str(at), "%Y-%m-%dT%H:%M:%SZ"))
    except (ValueError, OverflowError):
        return None


def why_not(repo: str) -> tuple[int, str]:
    """(exit code, message) when no interpreter can run the CLI."""
    status = setup_status(repo) or {}
    state, at = status.get("state"), status.get("at")
    log = os.path.join(paths.index_dir(repo), "bootstrap.log")
    age = _age(at)
    if state in SETUP_STATES and age is not None and age < SETUP_PATIENCE:
        return EX_TEMPFAIL, (f"memrepo is still being set up in the background (step: {state}, since {at}); "
                             f"try again in a minute. Progress: {log}")
    if state == "failed":
        return 1, (f"memrepo's background setup failed: {status.get('error')}\n"
                   f"fix: see {log}; `pip install memrepo` (or set MEMREPO_PYTHON to a python that has it), "
                   "then start a new session")
    return 1, ("memrepo has no interpreter with its dependencies yet: start a new Claude Code session (its "
               "SessionStart hook sets one up under ${CLAUDE_PLUGIN_DATA}), or `pip install memrepo`, "
               "or set MEMREPO_PYTHON")


LAUNCHER_MARK = b"# memrepo's command line inside Claude Code"


def installed_cli() -> str | None:
    """A `memrepo` on PATH that is a real install (pip's console script), not a plugin's launcher."""
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        path = os.path.join(folder or ".", "memrepo")
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            continue
        try:
            with open(path, "rb") as fh:
                head = fh.read(512)
        except OSError:
            continue
        if LAUNCHER_MARK not in head:
            return path
    return None


def main(argv: list[str]) -> int:
    repo = _repo_from(argv)
    for py in candidates(repo):
        os.execv(py, [py, "-I", "-c", CLI, *argv])
    other = installed_cli()
    if other is not None:
        os.execv(other, [other, *argv])
    code, message = why_not(repo)
    sys.stderr.write(message + "\n")
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
