"""Run the real Claude Code CLI (pinned, see package.json here) against the fake Messages API.

Pytest fixtures (import them into a test module, e.g.
``from e2e.harness import claude_bin, fake_api``):

* ``claude_bin`` (session): path of the pinned ``claude`` binary, installed once (reused by later
  runs) by ``install_claude.sh`` into ``CLI_CACHE``: the ``MEMREPO_TEST_CACHE`` that
  tests/conftest.py resolved from the real environment at session start
  (``${MEMREPO_TEST_CACHE:-${XDG_CACHE_HOME:-~/.cache}/memrepo-tests}``), never a test's fake HOME.
  Skips only when npm is missing or the registry cannot be reached; any other install failure
  fails the test. With ``MEMREPO_E2E_REQUIRE=1`` (CI) it never skips.
* ``fake_api`` (function): a started :class:`~e2e.fakeapi.FakeMessagesAPI`.

Functions:

* ``run_claude(prompt, *, plugin_dir, cwd, env_extra, fake_api, ...) -> (CompletedProcess,
  requests)``: one ``claude -p`` run in a hermetic environment.
* ``context_text(requests) -> str``: every text the model received in the main conversation.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from .fakeapi import FakeMessagesAPI, RecordedRequest

CLAUDE_VERSION = "2.1.332"
E2E_DIR = Path(__file__).resolve().parent
INSTALL_SCRIPT = E2E_DIR / "install_cli.sh"
# Read at import (collection, before any test fakes HOME); None outside pytest, where
# install_cli.sh resolves the same default from the environment it runs in.
CLI_CACHE = os.environ.get("MEMREPO_TEST_CACHE") or None
INSTALL_TIMEOUT = 1200  # seconds; a cold install downloads ~100 MB per CLI
DEFAULT_TIMEOUT = 60  # seconds for one claude -p run
DUMMY_API_KEY = "sk-ant-test-dummy"

# install_cli.sh exit codes that mean "this machine cannot get the CLI", not "broken".
_EXIT_NO_NPM = 2
_EXIT_OFFLINE = 3

# The only variables of the caller's environment passed to claude (and so to hooks). Everything
# else -- ANTHROPIC_*, CLAUDE*, MEMREPO_*, proxies, a developer's own settings -- stays out.
# Home folders whose cleanup left something behind: SessionStart's detached compile (issue 44)
# may still have been writing under plugins/data; removed again when the test process exits.
_LEFT_BEHIND: list[str] = []


def _still_used(paths: list[str]) -> bool:
    """Whether a process still runs with one of `paths` in its arguments or environment (the
    detached compile a hook started: its pycache prefix is under the run's plugin data folder)."""
    marks = [p.encode() for p in paths]
    for pid in os.listdir("/proc") if os.path.isdir("/proc") else []:
        for part in ("cmdline", "environ"):
            try:
                with open(f"/proc/{pid}/{part}", "rb") as fh:
                    text = fh.read()
            except OSError:
                continue
            if any(m in text for m in marks):
                return True
    return False


@atexit.register
def _remove_left_behind() -> None:
    deadline = time.monotonic() + 30
    while _LEFT_BEHIND and _still_used(_LEFT_BEHIND) and time.monotonic() < deadline:
        time.sleep(0.2)
    for path in _LEFT_BEHIND:
        shutil.rmtree(path, ignore_errors=True)


_PASSTHROUGH_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "SYSTEMROOT")

# A fixed git identity, so git commands in hooks and in test setup work in a bare HOME.
GIT_IDENTITY_ENV = {
    "GIT_AUTHOR_NAME": "memrepo e2e",
    "GIT_AUTHOR_EMAIL": "e2e@memrepo.invalid",
    "GIT_COMMITTER_NAME": "memrepo e2e",
    "GIT_COMMITTER_EMAIL": "e2e@memrepo.invalid",
}


# --------------------------------------------------------------------------------------------
# The CLI binary


@functools.lru_cache(maxsize=None)
def install(name: str) -> tuple[str | None, str]:
    """Run `install_cli.sh NAME` (claude, codex or gemini) once per process: (binary path, "")
    or (None, reason).

    The reason starts with "skip:" when the machine simply cannot get the CLI (no npm, no
    registry) and with "fail:" otherwise.
    """
    if shutil.which("bash") is None:
        return None, "skip: bash not found; cannot run tests/e2e/install_cli.sh"
    try:
        proc = subprocess.run(
            ["bash", str(INSTALL_SCRIPT), name],
            env={**os.environ, **({"MEMREPO_TEST_CACHE": CLI_CACHE} if CLI_CACHE else {})},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return None, f"fail: install_cli.sh {name} did not finish in {INSTALL_TIMEOUT} s"
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    reason = lines[-1] if lines else f"install_cli.sh {name} exited {proc.returncode}"
    if proc.returncode in (_EXIT_NO_NPM, _EXIT_OFFLINE):
        return None, f"skip: {reason}"
    if proc.returncode != 0:
        return None, f"fail: {reason}\n{proc.stderr[-4000:]}"
    path = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    if not path or not os.access(path, os.X_OK):
        return None, f"fail: install_cli.sh {name} printed no usable binary path ({proc.stdout!r})"
    return path, ""


def install_claude() -> tuple[str | None, str]:
    """The pinned Claude Code CLI (tests/e2e/package.json), as `install`."""
    return install("claude")


def binary(name: str, label: str) -> str:
    """The pinned CLI's path, or skip (no npm or registry) / fail (MEMREPO_E2E_REQUIRE=1, or broken)."""
    path, reason = install(name)
    if path is not None:
        return path
    kind, _, why = reason.partition(": ")
    if kind == "skip" and os.environ.get("MEMREPO_E2E_REQUIRE") != "1":
        pytest.skip(f"{label} unavailable: {why}")
    pytest.fail(f"{label} could not be installed: {why}", pytrace=False)


@pytest.fixture(scope="session")
def claude_bin() -> str:
    """Path of the pinned Claude Code binary (installed on first use)."""
    return binary("claude", f"Claude Code CLI {CLAUDE_VERSION}")


@pytest.fixture
def fake_api() -> Iterator[FakeMessagesAPI]:
    """A fake Messages API on 127.0.0.1:<free port>, stopped after the test."""
    with FakeMessagesAPI() as api:
        yield api


# --------------------------------------------------------------------------------------------
# Running claude


def claude_env(
    fake_api: FakeMessagesAPI, home: Path, config_dir: Path, env_extra: Mapping[str, str] | None
) -> dict[str, str]:
    """The environment of one claude run: hermetic, offline but for the fake API."""
    env = {k: os.environ[k] for k in _PASSTHROUGH_ENV if k in os.environ}
    interp_bin = os.path.dirname(sys.executable)
    env["PATH"] = os.pathsep.join([interp_bin, env.get("PATH") or os.defpath])
    env.update(GIT_IDENTITY_ENV)
    env.update(
        {
            "HOME": str(home),
            "CLAUDE_CONFIG_DIR": str(config_dir),
            "ANTHROPIC_API_KEY": DUMMY_API_KEY,
            "ANTHROPIC_BASE_URL": fake_api.base_url,
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
    )
    if env_extra:
        env.update(env_extra)
    return env


def _signal(pid: int, sig: int, *, group: bool = False) -> None:
    try:
        if group:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _children_map() -> dict[int, list[int]]:
    """ppid -> pids, from /proc (Linux); empty where /proc is not available."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return children
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode(errors="replace")
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    return children


def _kill_tree(pid: int) -> None:
    """SIGKILL ``pid``, its process group and every descendant.

    Claude Code starts hooks in process groups of their own, so killing its group alone
    would leave a hanging hook behind. Everything found is stopped first (SIGSTOP) so
    nothing can fork while the tree is collected, then killed.
    """
    found: list[int] = [pid]
    _signal(pid, signal.SIGSTOP)
    for _ in range(10):
        children = _children_map()
        new = [c for p in found for c in children.get(p, []) if c not in found]
        if not new:
            break
        for c in new:
            _signal(c, signal.SIGSTOP)
        found.extend(new)
    _signal(pid, signal.SIGKILL, group=True)
    for p in found:
        _signal(p, signal.SIGKILL)
        _signal(p, signal.SIGCONT)  # lets a stopped, killed process die at once


def run_claude(
    prompt: str,
    *,
    plugin_dir: str | os.PathLike[str] | None,
    cwd: str | os.PathLike[str],
    env_extra: Mapping[str, str] | None = None,
    fake_api: FakeMessagesAPI,
    claude_bin: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    extra_args: Sequence[str] = (),
    home: str | os.PathLike[str] | None = None,
) -> tuple[subprocess.CompletedProcess[str], list[RecordedRequest]]:
    """Run ``claude -p <prompt> --plugin-dir <plugin_dir> --output-format json`` once.

    HOME and CLAUDE_CONFIG_DIR are fresh temporary directories (removed afterwards) unless
    ``home`` is given, in which case HOME=<home>/home and CLAUDE_CONFIG_DIR=<home>/claude-config
    are created and kept for the test to inspect (transcripts land under the latter).
    The process runs in its own session; on timeout it, its process group and all its
    descendants (hooks run in groups of their own) are killed and ``subprocess.TimeoutExpired``
    propagates (its ``requests`` attribute holds what the fake API received). After a normal exit, whatever is left in its process group is killed; a process
    that detached itself on purpose (setsid) is not touched.

    Returns the finished process (text stdout/stderr) and the requests the fake API received
    during this run, oldest first.
    """
    if claude_bin is None:
        claude_bin, reason = install_claude()
        if claude_bin is None:
            raise RuntimeError(f"Claude Code CLI unavailable: {reason}")
    cmd = [claude_bin, "-p", prompt, "--output-format", "json"]
    if plugin_dir is not None:
        cmd += ["--plugin-dir", os.fspath(plugin_dir)]
    cmd += list(extra_args)

    tmp: tempfile.TemporaryDirectory[str] | None = None
    if home is None:
        # SessionStart's detached compile (issue 44) may still write under plugins/data as it goes
        tmp = tempfile.TemporaryDirectory(prefix="cc-e2e-", ignore_cleanup_errors=True)
        base = Path(tmp.name)
    else:
        base = Path(home)
    home_dir, config_dir = base / "home", base / "claude-config"
    home_dir.mkdir(parents=True, exist_ok=True)
    config_dir.mkdir(parents=True, exist_ok=True)
    env = claude_env(fake_api, home_dir, config_dir, env_extra)

    seen = len(fake_api.requests)
    try:
        proc = _run_tree(cmd, cwd, env, timeout)
    except subprocess.TimeoutExpired as exc:
        exc.requests = fake_api.requests[seen:]  # type: ignore[attr-defined]
        raise
    finally:
        if tmp is not None:
            tmp.cleanup()
            if os.path.exists(tmp.name):
                _LEFT_BEHIND.append(tmp.name)
    return proc, fake_api.requests[seen:]


def result_json(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The ``--output-format json`` result object printed by claude -p."""
    text = proc.stdout.strip()
    try:
        obj = json.loads(text.splitlines()[-1] if text else "")
    except (ValueError, IndexError) as e:
        raise AssertionError(
            f"claude printed no JSON result (rc={proc.returncode})\n"
            f"stdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-2000:]}"
        ) from e
    assert isinstance(obj, dict), obj
    return obj


# --------------------------------------------------------------------------------------------
# What the model saw


def main_conversation(requests: Sequence[RecordedRequest]) -> list[RecordedRequest]:
    """The model calls of the main conversation.

    Claude Code 2.1.332 sends the main conversation with its tool list; side calls it may make
    (titles, summaries) carry no tools. When no call has tools, every model call counts.
    """
    calls = [r for r in requests if r.is_messages and isinstance(r.body, dict)]
    main = [r for r in calls if r.body.get("tools")]
    return main or calls


def _texts(content: Any) -> Iterator[str]:
    """Text of a message ``content`` / ``system`` value: a string or a list of blocks."""
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, str):
                yield block
            elif isinstance(block, dict):
                if isinstance(block.get("text"), str):
                    yield block["text"]
                if "content" in block:  # tool_result blocks nest their content
                    yield from _texts(block["content"])


def context_blocks(requests: Sequence[RecordedRequest]) -> list[str]:
    """Every text block the model received in the main conversation, in order."""
    blocks: list[str] = []
    for req in main_conversation(requests):
        body = req.body
        blocks.extend(_texts(body.get("system")))
        for msg in body.get("messages") or []:
            if isinstance(msg, dict):
                blocks.extend(_texts(msg.get("content")))
    return blocks


def context_text(requests: Sequence[RecordedRequest]) -> str:
    """All text the model received in the main conversation: system + messages, text blocks.

    Hook output arrives as text blocks of a ``system``-role message after the user's prompt
    (e.g. "UserPromptSubmit hook additional context: ..."), so it is included.
    """
    return "\n".join(context_blocks(requests))


# Claude Code 2.1.332 renders hook output inside the system-role message that follows the prompt,
# in ONE text block together with other sections, paragraphs joined by blank lines:
#   "SessionStart:startup hook success: <stdout>\n\n# Environment\n...skills...\n\n"
#   "UserPromptSubmit hook additional context: <text>\n\nToday's date is 2026-11-29."
# A hook segment starts at one of these labels and runs until the next label or the next
# section Claude Code itself adds (the boundaries below).
_HOOK_LABEL = re.compile(r"^[A-Za-z]+(?::[A-Za-z_]+)? hook (?:additional context|success): ")
_SECTION_STARTS = ("# Environment", "Today's date is", "<system-reminder>")


def hook_segments(requests: Sequence[RecordedRequest]) -> list[str]:
    """The hook-output segments (SessionStart / UserPromptSubmit ...) the model received, each
    starting with Claude Code's label, e.g. "UserPromptSubmit hook additional context: ..."."""
    segments: list[str] = []
    for block in context_blocks(requests):
        current: list[str] | None = None
        for para in block.split("\n\n"):
            if _HOOK_LABEL.match(para):
                if current is not None:
                    segments.append("\n\n".join(current))
                current = [para]
            elif current is not None and para.startswith(_SECTION_STARTS):
                segments.append("\n\n".join(current))
                current = None
            elif current is not None:
                current.append(para)
        if current is not None:
            segments.append("\n\n".join(current))
    return segments


def hook_context_text(requests: Sequence[RecordedRequest], event: str | None = None) -> str:
    """The text of the hook-output segments, optionally only those of one ``event``
    (e.g. "UserPromptSubmit"), joined by newlines."""
    return "\n".join(
        seg
        for seg in hook_segments(requests)
        if event is None or seg.startswith((f"{event} ", f"{event}:"))
    )


# --------------------------------------------------------------------------------------------
# Other claude subcommands (plugin validate / marketplace add / install ...)


def run_claude_command(
    args: Sequence[str],
    *,
    home: str | os.PathLike[str],
    cwd: str | os.PathLike[str],
    fake_api: FakeMessagesAPI,
    claude_bin: str | None = None,
    env_extra: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> subprocess.CompletedProcess[str]:
    """Run ``claude <args...>`` (e.g. ``plugin install x@y``) in the same hermetic environment
    as :func:`run_claude` with ``home=``: HOME=<home>/home, CLAUDE_CONFIG_DIR=<home>/claude-config
    (created, kept). On timeout the whole process tree is killed and
    ``subprocess.TimeoutExpired`` propagates."""
    if claude_bin is None:
        claude_bin, reason = install_claude()
        if claude_bin is None:
            raise RuntimeError(f"Claude Code CLI unavailable: {reason}")
    cmd = [claude_bin, *args]
    base = Path(home)
    home_dir, config_dir = base / "home", base / "claude-config"
    home_dir.mkdir(parents=True, exist_ok=True)
    config_dir.mkdir(parents=True, exist_ok=True)
    env = claude_env(fake_api, home_dir, config_dir, env_extra)
    return _run_tree(cmd, cwd, env, timeout)


def _run_tree(cmd: list[str], cwd: Any, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    """Run cmd in its own process group; on timeout (or any error) kill its whole tree.

    Raises subprocess.TimeoutExpired with whatever output there was. Whatever claude leaves in
    its own process group is killed too; a worker that detached itself with setsid is not.
    """
    proc = subprocess.Popen(cmd, cwd=os.fspath(cwd), env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_tree(proc.pid)
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:  # a stray process still holds the pipes
            out, err = "", ""
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
            proc.wait()
        raise subprocess.TimeoutExpired(cmd, timeout, output=out, stderr=err) from None
    finally:
        if proc.poll() is None:  # an exception other than the timeout
            _kill_tree(proc.pid)
            proc.wait()
        else:
            _signal(proc.pid, signal.SIGKILL, group=True)
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)
