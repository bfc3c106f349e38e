"""The repository lock every memrepo commit holds: one writer at a time across processes.

An `fcntl.flock` on `memrepo-commit.lock` in the git common directory (shared by every
worktree of the repository), so a worker's capture, a curator run and a person's `memrepo add`
never interleave their writes, staging and commits. The holder writes its pid and command
line into the file, which is what a process that gives up waiting reports.

Waiters are served in the order they arrived: each one that cannot take the lock at once
queues a file in `memrepo-commit.lock.queue/` (named by its arrival time) and holds an flock on
it while it waits; only the oldest live waiter tries the lock. A queue file nobody holds
belongs to a process that died, and is dropped. Without the queue, ten writers polling one
flock left an unlucky one waiting 31 s for a 0.7 s commit (tests/bench/bench_writes.py).

memrepo's three locks wait through one primitive here, `wait_for`: this commit lock, the index
lock (`store.index.lock`, `index/.lock`) and the job worker's (`worker.jobs`, `index/jobs/.lock`).
`is_held` asks whether a writer holds the commit lock without waiting (doctor's stale-lock check).
The order is fixed: the commit lock, then the index lock — a commit's post-commit hook updates
the cache in a child that takes the index lock while the committer still holds the commit lock —
and never the reverse: an index writer never commits.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator

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
    found = gitcmd.git_paths(repo, gitcmd.COMMON_DIR)
    if found is None:
        raise GitError(f"{repo} is not a git repository", hint=f"run `memrepo init {repo}`")
    return os.path.join(found[0], NAME)


def _try(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def wait_for(fd: int, wait: float, poll: float = _POLL) -> bool:
    """Take an exclusive flock on `fd`, trying every `poll` seconds for at most `wait` seconds;
    False when it did not come free in time."""
    deadline = time.monotonic() + wait
    while not _try(fd):
        if time.monotonic() >= deadline:
            return False
        time.sleep(poll)
    return True


def release(fd: int) -> None:
    """Give up the flock `wait_for` took on `fd` (closing `fd` gives it up too)."""
    fcntl.flock(fd, fcntl.LOCK_UN)


def is_held(repo: str) -> bool:
    """Whether some process holds `repo`'s commit lock now (asked, never waited for)."""
    try:
        fd = os.open(path(repo), os.O_RDWR | os.O_CREAT, 0o600)
    except (OSError, GitError):
        return False
    try:
        if not _try(fd):
            return True
    finally:
        os.close(fd)  # closing drops the flock this may have taken
    return False


def _alive(entry: str) -> bool:
    """Whether a live waiter holds this queue file (a dead one's flock went with it)."""
    try:
        fd = os.open(entry, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def _ahead(queue: str, name: str | None = None) -> bool:
    """Whether a live waiter queued before `name` (None: any live waiter at all); drops dead ones."""
    try:
        entries = sorted(os.listdir(queue))
    except FileNotFoundError:
        return False
    for entry in entries:
        if name is not None and entry >= name:
            return False
        if entry.startswith(".") or not _alive(os.path.join(queue, entry)):
            if not entry.startswith("."):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(os.path.join(queue, entry))
            continue
        return True
    return False


@contextlib.contextmanager
def _in_line(queue: str) -> Iterator[str]:
    """A place in the queue for the block: its file exists, flocked, under its final name."""
    os.makedirs(queue, exist_ok=True)
    name = f"{time.time_ns():020d}-{os.getpid()}-{threading.get_ident()}"
    tmp = os.path.join(queue, "." + name)  # flocked before it is visible, so nobody takes it for dead
    fd = os.open(tmp, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.rename(tmp, os.path.join(queue, name))
        try:
            yield name
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(queue, name))
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
        os.close(fd)


def hold_file(where: str) -> int:
    """Open (or make) `where` and hold an exclusive flock on it until the descriptor returned is
    closed: a sign, for `alive`, that this process still waits on it (a group commit's entry)."""
    fd = os.open(where, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def alive(where: str) -> bool:
    """Whether a live process holds `where` (`hold_file`; a dead one's flock went with it)."""
    return _alive(where)


def pause(wake: int | None, poll: float = _POLL) -> bool:
    """Sleep `poll` seconds, or less when `wake` (a FIFO's read end, non-blocking) is written to:
    a group commit's holder wakes its waiter when it has written the waiter's answer (issue 44:
    the answer lay unread half a poll on average). False once the FIFO's writer has come and
    gone with nothing left to read, which it reports from then on: only sleeping is left."""
    if wake is None:
        time.sleep(poll)
        return True
    import select

    if select.select([wake], [], [], poll)[0]:
        try:
            return bool(os.read(wake, 64))
        except BlockingIOError:
            pass
    return True


def _holder(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 4096).decode("utf-8", "replace").strip()
    return text or "a process that wrote no pid"


def _wait_in_line(repo: str, where: str, fd: int, deadline: float, waiting: Callable[[], bool] | None,
                  wake: Callable[[], int | None] | None = None) -> bool:
    """Wait in the queue until the lock is this process's turn and taken (True), or `waiting` says
    to stop (False); LockTimeout at `deadline`. Between tries it sleeps a poll, or until `wake`'s
    descriptor is written to (`pause`)."""
    queue = where + ".queue"
    with _in_line(queue) as name:
        while True:
            # Asked before the lock is tried: a group commit's waiter whose change the holder
            # committed is done, and taking the lock its holder just freed would only make the
            # next writer wait (and load what a holder needs, issue 44).
            if waiting is not None and waiting():
                return False
            if not _ahead(queue, name) and _try(fd):
                return True
            if time.monotonic() >= deadline:
                raise LockTimeout(f"another memrepo process holds the commit lock of {repo} ({_holder(fd)})",
                                  hint=f"wait for it to finish, or if that pid is gone, run the command again ({where})")
            if not pause(wake() if wake is not None else None, _POLL):
                wake = None


@contextlib.contextmanager
def held(repo: str, wait: float = WAIT, *, waiting: Callable[[], bool] | None = None,
         wake: Callable[[], int | None] | None = None) -> Iterator[bool]:
    """Hold the repository lock for the block, waiting at most `wait` seconds for it; yields True.

    `waiting`, when given, is called once per poll while this process waits its turn (the first
    call says it has to wait at all): when it returns True the wait ends and the block runs
    without the lock, told so by False (a group commit's waiter whose change a holder committed).
    `wake`, when given, names a descriptor whose input ends a poll early (`pause`).
    """
    where = path(repo)
    key = (where, threading.get_ident())
    if _held.get(key):
        _held[key] += 1
        try:
            yield True
        finally:
            _held[key] -= 1
        return
    fd = os.open(where, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + wait
        queue = where + ".queue"
        if (_ahead(queue) or not _try(fd)) and not _wait_in_line(repo, where, fd, deadline, waiting, wake):
            yield False  # `waiting` ended the wait: the lock was never taken
            return
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}: {' '.join(sys.argv)}\n".encode("utf-8", "replace"), 0)
        _held[key] = 1
        try:
            yield True
        finally:
            del _held[key]
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # closing the descriptor releases the flock
