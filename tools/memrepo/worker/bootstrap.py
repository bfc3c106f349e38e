"""Detached first-use and refresh worker (stdlib only until it has an interpreter with memrepo).

`python -m memrepo.worker.bootstrap REPO REASON`: finds or prepares a Python that has memrepo's
dependencies (a virtual environment under `${CLAUDE_PLUGIN_DATA}` installed from the plugin
root), creates the memory repository if missing, and refreshes its index. Progress and failures
go to `index/bootstrap.json`, which `memrepo doctor` shows.
"""

from __future__ import annotations

import json
import os
import sys
import time

from memrepo import proc
from memrepo.base import paths, projects
from memrepo.vcs import gitcmd, hookwire
from memrepo.worker import plugin_venv

PIP_TIMEOUT = 900


def _report(repo: str, state: str, **extra: object) -> None:
    entry = {"state": state, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **extra}
    os.makedirs(paths.index_dir(repo), exist_ok=True)
    tmp = os.path.join(paths.index_dir(repo), f".bootstrap.json.{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(entry, fh)
    os.replace(tmp, os.path.join(paths.index_dir(repo), "bootstrap.json"))
    print(json.dumps(entry), flush=True)


def _memrepo(python: str, *args: str) -> list[str]:
    """`memrepo ARGS` with `python`, importing nothing from the working directory (a memory
    repository's tracked `memrepo/` folder would otherwise shadow the package: issue 15)."""
    return [python, "-c", f"{proc.SAFE_PATH}; from memrepo.cli.main import main; raise SystemExit(main())", *args]


def _has_deps(python: str) -> bool:
    try:
        return proc.run([python, "-c", f"{proc.SAFE_PATH}; import yaml, frontmatter, click, memrepo.cli.main"], timeout=60).ok
    except OSError:
        return False


def _run(argv: list[str], what: str, timeout: float) -> proc.Result:
    """Run a setup step to its end; RuntimeError with the lines of stderr that say what went wrong."""
    try:
        res = proc.run(argv, timeout=timeout)
    except OSError as exc:
        raise RuntimeError(f"{what} could not start: {exc}") from None
    if res.timed_out:
        raise RuntimeError(f"{what} did not finish in {timeout:.0f}s")
    if res.returncode != 0:
        raise RuntimeError(f"{what} failed: {_cause(res.text('stderr'))}")
    return res


def _recorded(repo: str) -> str | None:
    """The interpreter `memrepo init` recorded in the common git dir (a worktree's `.git` is a file)."""
    common = gitcmd.common_dir(repo, env=gitcmd.no_git_env(), timeout=60) if projects.git_dir(repo) else None
    if common is None:
        return None
    try:
        with open(os.path.join(common, hookwire.PYTHON_RECORD), encoding="utf-8") as fh:
            return fh.readline().strip() or None
    except OSError:
        return None


def find_python(repo: str) -> str | None:
    """An interpreter that can run the whole of memrepo, without installing anything.

    Under the plugin, this version's own venv comes first, and another version's venv is never
    taken (it holds that version's code), however it was found: recorded by an older `init`, or
    the interpreter this worker runs on.
    """
    data = os.environ.get("CLAUDE_PLUGIN_DATA")
    candidates = [os.environ.get("MEMREPO_PYTHON"), _recorded(repo), sys.executable]
    stale: set[str] = set()
    if data:
        current = plugin_venv.venv_dir(data, plugin_venv.root())
        candidates.insert(0, plugin_venv.venv_python(current))
        stale = {os.path.realpath(v) for v in plugin_venv.other_venvs(data, current)}
    for py in candidates:
        if not py or not os.path.exists(py) or plugin_venv.inside(py, stale):
            continue
        if _has_deps(py):
            return py
    return None


def _cause(stderr: str) -> str:
    """The lines of a tool's stderr that say what went wrong (pip's `ERROR:` lines), else its last line."""
    lines = [line.strip() for line in (stderr or "").splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR:")]
    return " ".join(errors[-2:]) if errors else (lines[-1] if lines else "no output")


def prepare_venv(repo: str) -> str:
    """Create `${CLAUDE_PLUGIN_DATA}/venv-<plugin version>` and install memrepo from the plugin root into it."""
    data = os.environ.get("CLAUDE_PLUGIN_DATA")
    root = os.environ.get("CLAUDE_PLUGIN_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    if not data:
        raise RuntimeError("no interpreter with memrepo's dependencies; run `pip install memrepo` (or the repository with `pip install .`)")
    venv = plugin_venv.venv_dir(data, root)
    _report(repo, "creating-venv", venv=venv)
    try:
        _run([sys.executable, "-I", "-m", "venv", venv], "python -m venv", 300)  # -I: nothing from the cwd
    except RuntimeError as exc:
        raise RuntimeError(f"{exc} (on Debian/Ubuntu: apt install python3-venv)") from None
    py = os.path.join(venv, "bin", "python")
    _report(repo, "installing", venv=venv, source=root)
    _run([py, "-I", "-m", "pip", "install", "--quiet", root], "pip install", PIP_TIMEOUT)
    plugin_venv.mark_ready(venv, plugin_venv.version(root))
    return py


def main(argv: list[str]) -> int:
    repo = argv[0] if argv else paths.memory_repo()
    reason = argv[1] if len(argv) > 1 else "refresh"
    from memrepo.store import private

    private.restrict()
    try:
        _report(repo, "started", reason=reason)
        py = find_python(repo) or prepare_venv(repo)
        if projects.git_dir(repo) is None:
            _report(repo, "init", python=py)
            _run(_memrepo(py, "init", repo), "memrepo init", 300)
        _report(repo, "indexing", python=py)
        _run(_memrepo(py, "--repo", repo, "index"), "memrepo index", 1800)
        _report(repo, "done", reason=reason, python=py)
    except Exception as exc:  # noqa: BLE001 — a detached worker reports, it has nobody to raise to
        _report(repo, "failed", reason=reason, error=str(exc))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
