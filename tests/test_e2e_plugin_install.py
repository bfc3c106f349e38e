"""End-to-end: memrepo installs as a Claude Code plugin the way a user installs it.

The real pinned Claude Code CLI (tests/e2e/package.json) runs against the fake Messages API on
127.0.0.1 (see test_e2e_claude.py). Unlike there, the plugin is not loaded with --plugin-dir:

1. ``claude plugin validate <repo root>`` accepts the manifests;
2. ``claude plugin marketplace add <copy of the repo>`` + ``claude plugin install
   memrepo@memrepo`` (HOME and CLAUDE_CONFIG_DIR in temp dirs, offline), then a plain
   ``claude -p`` recalls from MEMREPO_DIR through the installed plugin's hooks;
3. a SessionStart from that install with MEMREPO_DIR not yet existing starts the detached
   bootstrap, which creates the memory repository (no-install path: MEMREPO_PYTHON has
   memrepo's dependencies) or reports a clear failure (venv path, pip kept offline).

The repository is copied from ``git ls-files`` into a temp dir, so nothing in the checkout
changes (bytecode, caches, plugin state).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from e2e.harness import (  # noqa: E402,F401  (claude_bin, fake_api are fixtures)
    claude_bin,
    context_text,
    fake_api,
    hook_context_text,
    result_json,
    run_claude,
    run_claude_command,
)
from test_e2e_claude import MEMORIES, memory_repo  # noqa: E402,F401  (memory_repo is a fixture)

pytestmark = pytest.mark.e2e

REPO_ROOT = Path(__file__).resolve().parent.parent  # the plugin and its marketplace
PLUGIN_ID = "memrepo@memrepo"
CLI_TIMEOUT = 60  # seconds for one claude invocation
BOOTSTRAP_WAIT = 60  # seconds the detached bootstrap may take after claude returns


def _log(msg: str) -> None:
    """Timings and CLI observations; shown with ``pytest -s`` (or in the failure report)."""
    print(f"[plugin-install e2e] {msg}")


def _ok(proc: subprocess.CompletedProcess[str]) -> str:
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, (
        f"{' '.join(map(str, proc.args[1:]))} exited {proc.returncode}\n"
        f"stdout: {proc.stdout[-3000:]}\nstderr: {proc.stderr[-3000:]}"
    )
    return out


def _copy_tracked(dest: Path) -> Path:
    """Copy the work-tree version of every tracked file into ``dest`` (what a clone holds)."""
    files = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "ls-files", "-z"],
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = REPO_ROOT / rel
        if not src.is_file():  # deleted in the work tree, or a submodule
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
    assert (dest / ".claude-plugin" / "marketplace.json").is_file()
    assert not list(dest.rglob("__pycache__")), "the copy must start without bytecode"
    return dest


# --------------------------------------------------------------------------------------------
# 1. validate


def test_plugin_validate_repo_root(tmp_path: Path, claude_bin: str, fake_api) -> None:
    t0 = time.monotonic()
    proc = run_claude_command(
        ["plugin", "validate", str(REPO_ROOT)],
        home=tmp_path,
        cwd=tmp_path,
        fake_api=fake_api,
        claude_bin=claude_bin,
        timeout=CLI_TIMEOUT,
    )
    out = _ok(proc)
    _log(f"plugin validate <root>: rc={proc.returncode} in {time.monotonic() - t0:.2f} s")
    assert "Validation passed" in out, out
    assert "Validation failed" not in out, out
    # Both hooks are seen, through the marketplace entry's "./" source.
    assert "UserPromptSubmit" in out and "SessionStart" in out, out
    warnings = [ln.strip() for ln in out.splitlines() if ln.strip().startswith("❯")]
    _log("validate <root> lines: " + " | ".join(warnings))

    # The plugin manifest on its own, too.
    proc = run_claude_command(
        ["plugin", "validate", str(REPO_ROOT / ".claude-plugin" / "plugin.json")],
        home=tmp_path,
        cwd=tmp_path,
        fake_api=fake_api,
        claude_bin=claude_bin,
        timeout=CLI_TIMEOUT,
    )
    out = _ok(proc)
    assert "Validation passed" in out, out
    assert "Validating plugin manifest" in out, out


# --------------------------------------------------------------------------------------------
# 2. marketplace add + install, then a plain claude -p


@dataclass
class Install:
    base: Path  # run_claude(home=base): HOME=base/home, CLAUDE_CONFIG_DIR=base/claude-config
    source: Path  # the marketplace directory (a copy of the repository)
    install_path: Path  # where installed_plugins.json says the plugin lives
    config_dir: Path
    data_dir: Path  # expected ${CLAUDE_PLUGIN_DATA}

    def plugin_roots(self) -> list[Path]:
        return [self.source, self.install_path]


@pytest.fixture
def installed(tmp_path: Path, claude_bin: str, fake_api) -> Install:
    """memrepo added as a directory marketplace and installed at user scope, the user's way."""
    source = _copy_tracked(tmp_path / "memrepo-src")
    base = tmp_path / "user"
    common = dict(home=base, cwd=tmp_path, fake_api=fake_api, claude_bin=claude_bin, timeout=CLI_TIMEOUT)

    t0 = time.monotonic()
    proc = run_claude_command(["plugin", "marketplace", "add", str(source)], **common)
    out = _ok(proc)
    t1 = time.monotonic()
    assert "Successfully added marketplace: memrepo" in out, out
    proc = run_claude_command(["plugin", "install", PLUGIN_ID], **common)
    out = _ok(proc)
    t2 = time.monotonic()
    assert f"Successfully installed plugin: {PLUGIN_ID}" in out, out
    _log(f"marketplace add {t1 - t0:.2f} s, install {t2 - t1:.2f} s")

    config_dir = base / "claude-config"
    settings = json.loads((config_dir / "settings.json").read_text())
    assert settings["enabledPlugins"][PLUGIN_ID] is True, settings
    assert settings["extraKnownMarketplaces"]["memrepo"]["source"] == {
        "source": "directory",
        "path": str(source),
    }, settings
    installed_json = json.loads((config_dir / "plugins" / "installed_plugins.json").read_text())
    entries = installed_json["plugins"][PLUGIN_ID]
    assert len(entries) == 1 and entries[0]["version"] == "0.1.0", installed_json
    install_path = Path(entries[0]["installPath"])
    assert (install_path / "hooks" / "hooks.json").is_file(), install_path

    proc = run_claude_command(["plugin", "list"], **common)
    out = _ok(proc)
    assert PLUGIN_ID in out and "enabled" in out, out
    return Install(
        base=base,
        source=source,
        install_path=install_path,
        config_dir=config_dir,
        data_dir=config_dir / "plugins" / "data" / "memrepo-memrepo",
    )


def _bare_python() -> str | None:
    """A Python 3.10+ that cannot import memrepo nor its dependencies, or None.

    Running the hooks with it proves they find memrepo in ``${CLAUDE_PLUGIN_ROOT}/tools`` of the
    installed copy (the test venv has memrepo installed in editable mode from this checkout).
    """
    for cand in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if not os.access(cand, os.X_OK):
            continue
        probe = "import sys; assert sys.version_info >= (3, 10)\ntry:\n import memrepo\nexcept ImportError:\n pass\nelse:\n raise SystemExit(1)\ntry:\n import git\nexcept ImportError:\n raise SystemExit(0)\nraise SystemExit(1)"
        try:
            if subprocess.run([cand, "-I", "-c", probe], capture_output=True, timeout=30).returncode == 0:
                return cand
        except (OSError, subprocess.TimeoutExpired):
            continue
    return None


def _project(tmp_path: Path) -> Path:
    cwd = tmp_path / "project"
    cwd.mkdir(exist_ok=True)
    return cwd


def _bytecode_roots(inst: Install) -> list[Path]:
    """The plugin roots memrepo was compiled from: next to the code, or under the prefix hooks/run
    gives the interpreter, ${CLAUDE_PLUGIN_DATA}/pycache/<root> (issue 44)."""
    def compiled(root: Path) -> bool:
        prefixed = [inst.data_dir / "pycache" / str(r).lstrip("/") / "tools" / "memrepo" for r in (root, root.resolve())]
        return (root / "tools" / "memrepo" / "__pycache__").is_dir() or any(p.is_dir() for p in prefixed)

    return [r for r in inst.plugin_roots() if compiled(r)]


def test_installed_plugin_recalls_without_plugin_dir(
    tmp_path: Path, installed: Install, memory_repo: Path, claude_bin: str, fake_api
) -> None:
    env = {"MEMREPO_DIR": str(memory_repo)}
    bare = _bare_python()
    if bare:
        env["MEMREPO_PYTHON"] = bare
    _log(f"hook interpreter: {bare or 'python3 on PATH (test venv)'}")
    cwd = _project(tmp_path)

    t0 = time.monotonic()
    proc, reqs = run_claude(
        "it's friday 17:00, can I still ship this hotfix to production?",
        plugin_dir=None,
        cwd=cwd,
        env_extra=env,
        fake_api=fake_api,
        claude_bin=claude_bin,
        home=installed.base,
        timeout=CLI_TIMEOUT,
    )
    _log(f"claude -p (answerable) {time.monotonic() - t0:.2f} s")
    assert "--plugin-dir" not in proc.args
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert result_json(proc).get("is_error") is False
    prompt_ctx = hook_context_text(reqs, "UserPromptSubmit")
    assert "deploy-freeze-friday" in prompt_ctx, (
        "the installed plugin's recall did not reach the model; hook output seen:\n"
        + hook_context_text(reqs)
    )
    assert "staging-postgres-port" not in context_text(reqs)

    # The hooks ran from the installed plugin and imported memrepo from its tools/ directory
    # (the interpreter writes bytecode for what it imported, under ${CLAUDE_PLUGIN_DATA}/pycache).
    roots = _bytecode_roots(installed)
    _log(f"memrepo imported from: {[str(r) for r in roots]}")
    if bare:
        assert roots, (
            "no compiled tools/memrepo of the installed plugin: the hook did not import "
            f"memrepo from ${{CLAUDE_PLUGIN_ROOT}}/tools (roots {installed.plugin_roots()})"
        )

    log = memory_repo / "index" / "recall-log.jsonl"
    before = log.read_text().count("\n") if log.exists() else 0
    t0 = time.monotonic()
    proc, reqs = run_claude(
        "ok, go ahead",
        plugin_dir=None,
        cwd=cwd,
        env_extra=env,
        fake_api=fake_api,
        claude_bin=claude_bin,
        home=installed.base,
        timeout=CLI_TIMEOUT,
    )
    _log(f"claude -p (conversational) {time.monotonic() - t0:.2f} s")
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert result_json(proc).get("is_error") is False
    text = context_text(reqs)
    assert "ok, go ahead" in text
    for mem_id in MEMORIES:
        assert mem_id not in text, f"{mem_id} reached the model on a conversational prompt"
    assert "memrepo" not in hook_context_text(reqs, "UserPromptSubmit").lower()
    after = log.read_text().count("\n") if log.exists() else 0
    assert after > before, f"the installed plugin's recall hook logged nothing to {log}"


# --------------------------------------------------------------------------------------------
# 3. first SessionStart: the detached bootstrap creates the memory repository


def _bootstrap_pids(repo: Path) -> list[int]:
    """PIDs of `python -m memrepo.worker.bootstrap <repo> ...` processes (Linux /proc)."""
    pids = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return pids
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if b"memrepo.worker.bootstrap" in argv and os.fsencode(str(repo)) in argv:
            pids.append(int(entry))
    return pids


def _wait_bootstrap(repo: Path, timeout: float) -> tuple[dict | None, float]:
    """Wait until bootstrap.json says done/failed and the worker has exited."""
    status_file = repo / "index" / "bootstrap.json"
    t0 = time.monotonic()
    status = None
    while time.monotonic() - t0 < timeout:
        try:
            status = json.loads(status_file.read_text())
        except (OSError, ValueError):
            status = None
        if status and status.get("state") in ("done", "failed") and not _bootstrap_pids(repo):
            break
        time.sleep(0.25)
    return status, time.monotonic() - t0


@pytest.fixture
def no_stray_bootstrap(tmp_path: Path):
    """Kill (by pid) any bootstrap worker for a repo under tmp_path still running at teardown."""
    repos: list[Path] = []
    yield repos
    for repo in repos:
        for pid in _bootstrap_pids(repo):
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _session_start(installed: Install, repo: Path, env: dict[str, str], tmp_path: Path,
                   claude_bin: str, fake_api) -> tuple[dict | None, float, float]:
    assert not repo.exists()
    t0 = time.monotonic()
    proc, _ = run_claude(
        "hello",
        plugin_dir=None,
        cwd=_project(tmp_path),
        env_extra={"MEMREPO_DIR": str(repo), **env},
        fake_api=fake_api,
        claude_bin=claude_bin,
        home=installed.base,
        timeout=CLI_TIMEOUT,
    )
    t_claude = time.monotonic() - t0
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert result_json(proc).get("is_error") is False
    status, t_boot = _wait_bootstrap(repo, BOOTSTRAP_WAIT)
    log = repo / "index" / "bootstrap.log"
    _log(f"claude -p returned in {t_claude:.2f} s; bootstrap finished {t_boot:.2f} s later: {status}")
    if log.exists():
        _log("bootstrap.log:\n" + log.read_text()[-3000:])
    assert status is not None, f"no {repo}/index/bootstrap.json within {BOOTSTRAP_WAIT} s"
    assert not _bootstrap_pids(repo), f"bootstrap still running after {BOOTSTRAP_WAIT} s: {status}"
    return status, t_claude, t_boot


def test_first_session_bootstraps_memory_repo(
    tmp_path: Path, installed: Install, claude_bin: str, fake_api, no_stray_bootstrap
) -> None:
    """No-install path: MEMREPO_PYTHON has memrepo's dependencies (this interpreter)."""
    repo = tmp_path / "not-yet" / "memories"
    no_stray_bootstrap.append(repo)
    status, _, _ = _session_start(
        installed, repo, {"MEMREPO_PYTHON": sys.executable}, tmp_path, claude_bin, fake_api
    )
    assert status["state"] == "done", status
    assert status["reason"] == "no memory repository", status
    assert status["python"] == sys.executable, status
    assert (repo / ".git").is_dir()
    assert (repo / "memory").is_dir()
    assert (repo / "index" / "bootstrap.json").is_file()
    head = subprocess.run(
        ["git", "-C", str(repo), "log", "--oneline", "-1"], capture_output=True, text=True, timeout=30
    )
    assert head.returncode == 0 and head.stdout.strip(), head
    # Nothing was installed: no venv under ${CLAUDE_PLUGIN_DATA}.
    assert not list(installed.data_dir.glob("venv*")) if installed.data_dir.exists() else True


def test_first_session_without_deps_reports_clear_failure_offline(
    tmp_path: Path, installed: Install, claude_bin: str, fake_api, no_stray_bootstrap
) -> None:
    """Venv path: the hook interpreter lacks memrepo's dependencies, so the bootstrap makes
    ${CLAUDE_PLUGIN_DATA}/venv-<version> and pip-installs the plugin root into it. pip is kept off the
    network (PIP_NO_INDEX), so the build dependencies cannot be fetched: the bootstrap must
    finish with state "failed" and a readable pip error, not hang or crash silently."""
    bare = _bare_python()
    if bare is None:
        pytest.skip("no system python3 without memrepo's dependencies")
    repo = tmp_path / "not-yet" / "memories"
    no_stray_bootstrap.append(repo)
    env = {
        "MEMREPO_PYTHON": bare,
        "PIP_NO_INDEX": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_CONFIG_FILE": os.devnull,
    }
    status, _, _ = _session_start(installed, repo, env, tmp_path, claude_bin, fake_api)
    reports = [json.loads(ln) for ln in (repo / "index" / "bootstrap.log").read_text().splitlines()
               if ln.startswith("{")]
    states = [r["state"] for r in reports]
    installing = [r for r in reports if r["state"] == "installing"]
    if status["state"] == "done":  # pip found everything locally after all
        assert (repo / ".git").is_dir()
        return
    assert status["state"] == "failed", status
    assert status["error"], status
    assert "started" in states and "creating-venv" in states, states
    # The venv goes to ${CLAUDE_PLUGIN_DATA}, the source is ${CLAUDE_PLUGIN_ROOT}: both resolved
    # from the installed plugin.
    venv = [r for r in reports if r["state"] == "creating-venv"][0]["venv"]
    assert Path(venv) == installed.data_dir / "venv-0.1.0", venv  # one venv per plugin version
    assert installing, states
    assert Path(installing[0]["source"]) in installed.plugin_roots(), installing
    assert status["error"].startswith("pip install failed"), status
    assert not (repo / ".git").exists()
    # The cause (pip cannot fetch the build backend offline) is in the error `memrepo doctor` shows.
    assert any(w in status["error"] for w in ("No matching distribution", "setuptools", "Could not find")), status


def test_doctor_names_the_plugin_and_settings_hooks_both_installed(
    tmp_path: Path, installed: Install, memory_repo: Path
) -> None:
    """The plugin installed by the real CLI, then `memrepo install claude` into the same config:
    Claude Code would run both and inject every memory twice, so doctor exits 1 naming it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "MEMREPO_"))}
    env.update(HOME=str(installed.base / "home"), CLAUDE_CONFIG_DIR=str(installed.config_dir),
               MEMREPO_DIR=str(memory_repo))

    def memrepo(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "memrepo", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)

    before = memrepo("doctor", "--json")
    wiring = {c["name"]: c for c in json.loads(before.stdout)}["claude wiring"]
    assert wiring["ok"] and wiring["detail"].startswith(f"the plugin {PLUGIN_ID} (enabled in "), wiring
    refused = memrepo("install", "claude")  # beside an enabled plugin: refused, naming how to proceed
    assert refused.returncode == 1 and f"claude plugin disable {PLUGIN_ID}" in refused.stderr, refused.stderr
    # As `claude plugin disable`, `memrepo install claude`, `claude plugin enable` would leave it:
    settings_file = installed.config_dir / "settings.json"
    enabled = json.loads(settings_file.read_text())
    settings_file.write_text(json.dumps({**enabled, "enabledPlugins": {**enabled["enabledPlugins"], PLUGIN_ID: False}}))
    assert memrepo("install", "claude").returncode == 0
    settings_file.write_text(json.dumps({**json.loads(settings_file.read_text()), "enabledPlugins": enabled["enabledPlugins"]}))
    after = memrepo("doctor")
    assert after.returncode == 1, after.stdout
    line = next(ln for ln in after.stdout.splitlines() if ln.startswith("FAIL claude wiring:"))
    assert f"the plugin {PLUGIN_ID} is enabled" in line and "every recalled memory is injected twice" in line, line
    assert memrepo("uninstall", "claude").returncode == 0  # the first fix it names
    assert {c["name"]: c for c in json.loads(memrepo("doctor", "--json").stdout)}["claude wiring"]["ok"]
