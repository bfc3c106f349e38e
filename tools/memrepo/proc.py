"""The one way memrepo starts a child process: git, the model command, probes, detached workers.

Every child runs in its own process group (a new session), so a timeout or an interrupt kills
the whole group, grandchildren included; output is read bounded, both streams at once, with
the input written in between so no pipe can deadlock. Standard library only, and `subprocess`,
`selectors` and `signal` load inside `run`: the capture hooks import this for `spawn_detached`.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not `typing`: it loads `re`, and the capture hooks import this module
if TYPE_CHECKING:
    from collections.abc import Sequence

MAX_OUTPUT = 64 * 1024 * 1024
_CHUNK = 65536


class Result:
    """What a child did: exit code (negative: killed by that signal), output, and why it ended early."""

    __slots__ = ("returncode", "stdout", "stderr", "timed_out", "truncated")

    def __init__(self, returncode: int, stdout: bytes, stderr: bytes, timed_out: bool, truncated: bool) -> None:
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.timed_out = timed_out
        self.truncated = truncated

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.truncated

    def text(self, stream: str = "stdout") -> str:
        """A stream decoded as UTF-8; bytes that are not UTF-8 become U+FFFD instead of raising."""
        data: bytes = getattr(self, stream)
        return data.decode("utf-8", "replace")

    def __repr__(self) -> str:
        return (f"Result(returncode={self.returncode}, stdout={self.stdout[:60]!r}, stderr={self.stderr[:60]!r}, "
                f"timed_out={self.timed_out}, truncated={self.truncated})")


def _kill_group(pid: int) -> None:
    import signal

    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run(argv: Sequence[str], *, cwd: str | None = None, input: bytes | None = None, env: dict[str, str] | None = None,
        timeout: float | None = None, max_output: int = MAX_OUTPUT) -> Result:
    """Run an argument list (never a shell) to its end, a timeout, or `max_output` bytes on a stream.

    On a timeout or an overflow the child's whole process group is killed (`timed_out` or
    `truncated` says which) and the output read so far is returned. Raises OSError when the
    program cannot be started; an exception here (^C) kills the group before it propagates.
    """
    import selectors
    import subprocess
    import time

    proc = subprocess.Popen(list(argv), cwd=cwd, env=env, start_new_session=True,
                            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = None if timeout is None else time.monotonic() + timeout
    out = {"stdout": bytearray(), "stderr": bytearray()}
    timed_out = truncated = False
    try:
        with selectors.DefaultSelector() as sel:
            assert proc.stdout is not None and proc.stderr is not None
            sel.register(proc.stdout, selectors.EVENT_READ, "stdout")
            sel.register(proc.stderr, selectors.EVENT_READ, "stderr")
            pending = memoryview(input or b"")
            if proc.stdin is not None:
                os.set_blocking(proc.stdin.fileno(), False)
                if pending:
                    sel.register(proc.stdin, selectors.EVENT_WRITE, "stdin")
                else:
                    proc.stdin.close()
            while sel.get_map():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    timed_out = True
                    break
                for key, _ in sel.select(left):
                    if key.data == "stdin":
                        pending = _feed(sel, key.fileobj, pending)  # type: ignore[arg-type]
                        continue
                    chunk = os.read(key.fd, _CHUNK)
                    if not chunk:
                        sel.unregister(key.fileobj)
                        continue
                    buf = out[key.data]
                    room = max_output - len(buf)
                    buf += chunk[:room]
                    truncated = truncated or len(chunk) > room
                if truncated:
                    break
        if timed_out or truncated:
            _kill_group(proc.pid)
        try:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            returncode = proc.wait(left)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc.pid)
            returncode = proc.wait()
    except BaseException:
        _kill_group(proc.pid)
        proc.wait()
        raise
    finally:
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    return Result(returncode, bytes(out["stdout"]), bytes(out["stderr"]), timed_out, truncated)


def _feed(sel: object, stream: object, pending: memoryview) -> memoryview:
    """Write what the child's stdin pipe takes now; close it when all is written or the child stopped reading."""
    fd = stream.fileno()  # type: ignore[attr-defined]
    try:
        written = os.write(fd, pending[:_CHUNK])
    except BlockingIOError:
        return pending
    except BrokenPipeError:
        written = len(pending)
    pending = pending[written:]
    if not pending:
        sel.unregister(stream)  # type: ignore[attr-defined]
        stream.close()  # type: ignore[attr-defined]
    return pending


# `python -m` and `-c` put the working directory first on sys.path: started in a memory
# repository's checkout they would import a committed `memrepo/` package (issue 15).
SAFE_PATH = 'import sys; sys.path[:1] == [""] and sys.path.pop(0)'


def python_main(module: str, *args: str, python: str | None = None) -> list[str]:
    """The argv that runs `module.main(sys.argv[1:])` with `python`, importing nothing from the working directory."""
    code = f"{SAFE_PATH}; from {module} import main; raise SystemExit(main(sys.argv[1:]))"
    # A plugin hook's compiled code lives under its data folder (hooks/run): its workers' too.
    flags = ["-X", f"pycache_prefix={sys.pycache_prefix}"] if sys.pycache_prefix else []
    return [python or sys.executable, *flags, "-c", code, *args]


def spawn_detached(argv: Sequence[str], *, log_path: str, env: dict[str, str] | None = None,
                   cwd: str | None = None) -> int:
    """Start a worker in a new session with no terminal, stdin from /dev/null, stdout and stderr
    appended to `log_path`; returns its pid and never waits for it.

    os.posix_spawn, not subprocess: importing subprocess alone costs ~30 ms on the hook path.
    """
    env = dict(os.environ) if env is None else env
    argv = list(argv)
    if cwd is None:
        actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                   (os.POSIX_SPAWN_OPEN, 1, log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600),
                   (os.POSIX_SPAWN_DUP2, 1, 2)]
        try:
            return os.posix_spawnp(argv[0], argv, env, file_actions=actions, setsid=True)
        except (AttributeError, NotImplementedError, TypeError):
            pass
    import subprocess

    with open(log_path, "ab") as log:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, cwd=cwd,
                                start_new_session=True, close_fds=True).pid
