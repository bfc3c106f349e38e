"""The repository lock every memrepo commit holds: one writer at a time across processes.

An `fcntl.flock` on `memrepo-commit.lock` in the git common directory (shared by every
worktree of the repository), so a worker's capture, a curator run and a person's `memrepo add`
never interleave their writes, staging and commits. The holder writes its pid and command
line into the file, which is what a process that gives up waiting reports.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import threading
import time
from collections.abc import Iterator

from memrepo.errors import GitError
from memrepo.vcs import gitcmd

NAME = "memrepo-commit.lock"
WAIT = 60.0
_POLL = 0.05
_held: dict[tuple[str, int], int] = {}  # (lock path, thread) -> depth: a holder may commit again inside its lock


class LockTimeout(GitError):
    """Another process held the repository lock for longer than the wait allowed."""


def path(repo: str) -> str:
    """The lock file of `repo`, in its git common directory."""
    rc, out, err = gitcmd.run_git("rev-parse", "--git-common-dir", cwd=repo)
    if rc != 0:
        raise GitError(f"{repo} is not a git repository: {err.decode('utf-8', 'replace').strip()}",
                       hint=f"run `memrepo init {repo}`")
    return os.path.join(repo, out.decode("utf-8", "surrogateescape").strip(), NAME)


def _try(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def _holder(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 4096).decode("utf-8", "replace").strip()
    return text or "a process that wrote no pid"


@contextlib.contextmanager
def held(repo: str, wait: float = WAIT) -> Iterator[None]:
    """Hold the repository lock for the block, waiting at most `wait` seconds for it."""
    where = path(repo)
    key = (where, threading.get_ident())
    if _held.get(key):
        _held[key] += 1
        try:
            yield
        finally:
            _held[key] -= 1
        return
    fd = os.open(where, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + wait
        while not _try(fd):
            if time.monotonic() >= deadline:
                raise LockTimeout(f"another memrepo process holds the commit lock of {repo} ({_holder(fd)})",
                                  hint=f"wait for it to finish, or if that pid is gone, run the command again ({where})")
            time.sleep(_POLL)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}: {' '.join(sys.argv)}\n".encode("utf-8", "replace"), 0)
        _held[key] = 1
        try:
            yield
        finally:
            del _held[key]
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # closing the descriptor releases the flock
