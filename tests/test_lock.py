"""The repository lock serves waiters in arrival order, and a waiter killed in line blocks nobody."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from typing import Any

import pytest

from memrepo.vcs import lock

# Takes the lock, appends its name to the log, then holds the lock until `<name>.release` exists.
CHILD = textwrap.dedent("""
    import os, sys, time
    from memrepo.vcs import lock
    repo, name, log = sys.argv[1:4]
    with lock.held(repo, wait=300):
        with open(log, "a") as fh:
            fh.write(name + "\\n")
        while not os.path.exists(os.path.join(os.path.dirname(log), name + ".release")):
            time.sleep(0.01)
""")


def until(predicate: Any, what: str) -> None:
    """Poll for a state another process reaches; a hang guard, not a speed check."""
    for _ in range(6000):
        if predicate():
            return
        time.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


def queued(repo: str) -> list[str]:
    queue = lock.path(repo) + ".queue"
    return [e for e in os.listdir(queue) if not e.startswith(".")] if os.path.isdir(queue) else []


_STARTED: list[subprocess.Popen[bytes]] = []


@pytest.fixture(autouse=True)
def no_child_left() -> Iterator[None]:
    """A test that fails mid-way leaves children waiting for a release file forever: end them."""
    yield
    while _STARTED:
        proc = _STARTED.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)


def start(repo: str, name: str, log: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-c", CHILD, repo, name, log])
    _STARTED.append(proc)
    return proc


def release(log: str, name: str) -> None:
    open(os.path.join(os.path.dirname(log), name + ".release"), "w").close()


def logged(log: str) -> list[str]:
    return open(log).read().split() if os.path.exists(log) else []


def test_waiters_take_the_lock_in_the_order_they_arrived(repo: str, tmp_path: Any) -> None:
    log = str(tmp_path / "order.log")
    holder = start(repo, "holder", log)
    until(lambda: logged(log) == ["holder"], "the holder took the lock")
    waiters = []
    for n, name in enumerate(["first", "second", "third", "fourth"], start=1):
        waiters.append(start(repo, name, log))
        until(lambda n=n: len(queued(repo)) == n, f"{name} queued")  # type: ignore[misc]
    for name in ["holder", "first", "second", "third"]:
        release(log, name)
        if name != "third":
            until(lambda k=len(logged(log)): len(logged(log)) == k + 1, f"the next after {name}")  # type: ignore[misc]
    until(lambda: len(logged(log)) == 5, "all took it")
    release(log, "fourth")
    for proc in [holder, *waiters]:
        assert proc.wait(timeout=60) == 0
    assert logged(log) == ["holder", "first", "second", "third", "fourth"]
    assert queued(repo) == []


def test_a_waiter_killed_in_line_blocks_nobody(repo: str, tmp_path: Any) -> None:
    log = str(tmp_path / "order.log")
    holder = start(repo, "holder", log)
    until(lambda: logged(log) == ["holder"], "the holder took the lock")
    doomed = start(repo, "doomed", log)
    until(lambda: len(queued(repo)) == 1, "doomed queued")
    later = start(repo, "later", log)
    until(lambda: len(queued(repo)) == 2, "later queued")
    os.kill(doomed.pid, signal.SIGKILL)
    doomed.wait(timeout=60)
    release(log, "holder")
    until(lambda: logged(log) == ["holder", "later"], "later took the lock past the dead waiter's queue file")
    release(log, "later")
    assert holder.wait(timeout=60) == 0 and later.wait(timeout=60) == 0
    assert queued(repo) == []


def test_is_held_answers_without_waiting(repo: str) -> None:
    """Issue 40: doctor's stale-lock check asks through the lock module, not its own flock."""
    assert lock.is_held(repo) is False
    with lock.held(repo):
        child = subprocess.run([sys.executable, "-c", "import sys; from memrepo.vcs import lock; "
                                "print(lock.is_held(sys.argv[1]))", repo], capture_output=True, text=True, check=True)
        assert child.stdout.strip() == "True"
    assert lock.is_held(repo) is False
