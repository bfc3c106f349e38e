"""The one process runner: process groups killed on timeout, bounded reads, bytes that are not UTF-8."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import pytest

from memrepo import proc
from memrepo.passes import model


def _script(tmp_path: Any, name: str, body: str) -> str:
    path = os.path.join(str(tmp_path), name)
    with open(path, "w") as fh:
        fh.write(f"#!{sys.executable}\n{body}")
    os.chmod(path, 0o755)
    return path


# A child that starts a grandchild (which sleeps, holding no pipe of ours), writes its pid, then hangs.
FORKER = """import os, subprocess, sys, time
sys.stdin.read()
g = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
with open(os.environ["PID_FILE"], "w") as fh:
    fh.write(str(g.pid))
time.sleep(300)
"""


def _gone(pid: int) -> bool:
    """True when `pid` no longer runs (a zombie awaiting its reaper counts as gone)."""
    for _ in range(100):  # the kill is sent before run() returns; init may take a moment to reap
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().split(") ")[1].startswith("Z"):
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def test_timeout_kills_the_whole_group(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    pid_file = os.path.join(str(tmp_path), "grandchild.pid")
    monkeypatch.setenv("PID_FILE", pid_file)
    res = proc.run([_script(tmp_path, "forker", FORKER)], input=b"go", timeout=2)
    assert (res.timed_out, res.truncated) == (True, False)
    with open(pid_file) as fh:
        grandchild = int(fh.read())
    assert _gone(grandchild)


def test_output_is_bounded_and_the_child_stopped(tmp_path: Any) -> None:
    # 1 MB, then it hangs: only the bound stops it before the timeout.
    loud = _script(tmp_path, "loud", "import sys, time\nsys.stdout.write('x' * 1_000_000)\nsys.stdout.flush()\ntime.sleep(300)\n")
    res = proc.run([loud], max_output=100_000, timeout=30)
    assert (len(res.stdout), res.truncated, res.timed_out) == (100_000, True, False)
    assert res.returncode < 0  # killed


def test_output_exactly_at_the_bound_is_whole(tmp_path: Any) -> None:
    exact = _script(tmp_path, "exact", "import sys\nsys.stdout.write('y' * 1000)\n")
    res = proc.run([exact], max_output=1000, timeout=60)
    assert (res.returncode, len(res.stdout), res.truncated) == (0, 1000, False)


def test_large_input_and_both_streams_do_not_deadlock(tmp_path: Any) -> None:
    echo = _script(tmp_path, "echo", "import sys\ndata = sys.stdin.buffer.read()\n"
                                     "sys.stderr.buffer.write(data)\nsys.stdout.buffer.write(data[::-1])\n")
    data = os.urandom(3 * 1024 * 1024)
    res = proc.run([echo], input=data, timeout=60)
    assert (res.returncode, res.stderr == data, res.stdout == data[::-1]) == (0, True, True)


def test_a_missing_program_raises_oserror() -> None:
    with pytest.raises(FileNotFoundError):
        proc.run(["memrepo-no-such-command-4f1c"])


def test_model_timeout_leaves_no_grandchild(repo: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    pid_file = os.path.join(str(tmp_path), "grandchild.pid")
    monkeypatch.setenv("PID_FILE", pid_file)
    monkeypatch.setenv("MEMREPO_MODEL_CMD", _script(tmp_path, "model", FORKER))
    with pytest.raises(model.ModelError, match="timed out"):
        model.call(repo, "curate", "q", timeout=2)
    with open(pid_file) as fh:
        assert _gone(int(fh.read()))
    assert [(e["ok"], e["error"]) for e in model.ledger(repo)] == [(False, "timeout")]


def test_model_output_that_is_not_utf8_does_not_crash(repo: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = _script(tmp_path, "model", "import sys\nsys.stdin.read()\nsys.stdout.buffer.write(b'caf\\xe9 \\xff ok')\n")
    monkeypatch.setenv("MEMREPO_MODEL_CMD", bad)
    assert model.call(repo, "curate", "q") == "caf\ufffd \ufffd ok"


def test_spawn_detached_runs_in_its_own_session(tmp_path: Any) -> None:
    out = os.path.join(str(tmp_path), "out")
    log = os.path.join(str(tmp_path), "log")
    code = f"import os; open({out!r}, 'w').write(str(os.getsid(0) == os.getpid())); print('logged')"
    pid = proc.spawn_detached([sys.executable, "-c", code], log_path=log)
    os.waitpid(pid, 0)
    with open(out) as fh, open(log) as lf:
        assert (fh.read(), lf.read()) == ("True", "logged\n")
