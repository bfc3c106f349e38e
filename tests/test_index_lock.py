"""Another git holding the index lock: a person's `git status` in a terminal, an editor polling the
repository, a second memrepo command's read. memrepo's reads never take the lock, and its
writes wait for another git's lock instead of failing (a CI run once lost an add to it).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from helpers import commit_all, git, write_memory
from memrepo.errors import GitError
from memrepo.store import faults
from memrepo.vcs import commit, gitcmd, status


def hold_index_lock(repo: str, seconds: float) -> threading.Thread:
    """Create `.git/index.lock` as git does (exclusively) and remove it after `seconds`."""
    where = os.path.join(repo, ".git", "index.lock")
    fd = os.open(where, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.close(fd)

    def release() -> None:
        time.sleep(seconds)
        os.remove(where)

    thread = threading.Thread(target=release)
    thread.start()
    return thread


def test_an_add_waits_for_another_gits_index_lock(repo: str) -> None:
    held = hold_index_lock(repo, 1.0)
    try:
        proc = subprocess.run([sys.executable, "-m", "memrepo", "--repo", repo, "add", "--class", "fact",
                               "--title", "Deploys happen on Tuesdays", "-d", "The release train leaves on Tuesdays."],
                              capture_output=True, text=True, timeout=120)
    finally:
        held.join()
    assert proc.returncode == 0, proc.stderr
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == "add: deploys-happen-tuesdays"
    assert git(repo, "status", "--porcelain").stdout == ""


def test_a_lock_that_stays_is_reported_as_git_reports_it(repo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gitcmd, "INDEX_BUSY_WAIT", 0.3)
    write_memory(repo, "deploy-window", title="Deploys happen on Tuesdays")
    held = hold_index_lock(repo, 1.5)
    try:
        started = time.monotonic()
        calls = _counting(monkeypatch)
        with pytest.raises(GitError, match="index.lock"):
            commit._stage(repo, ["memory/deploy-window.md"])
        assert time.monotonic() - started >= 0.3  # it waited before giving up
        assert [c[0] for c in calls].count("update-index") > 1  # and tried staging again while it waited
    finally:
        held.join()


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """Record every git command `run_git_writing` starts."""
    calls: list[tuple[str, ...]] = []
    real = gitcmd.run_git

    def run_git(*args: str, **kw):  # type: ignore[no-untyped-def]
        calls.append(args)
        return real(*args, **kw)

    monkeypatch.setattr(gitcmd, "run_git", run_git)
    return calls


def test_another_failure_of_git_is_not_retried(repo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    rc, _, err = gitcmd.run_git_writing("add", "--", "no/such/file.md", cwd=repo, wait=30)
    assert rc != 0 and not gitcmd.index_busy(err)
    assert len(calls) == 1  # tried once: only another git's index lock is waited for


def _index_stat(repo: str) -> tuple[int, int]:
    st = os.stat(os.path.join(repo, ".git", "index"))
    return st.st_mtime_ns, st.st_ino


@pytest.mark.parametrize("read", [lambda r: status.dirty_paths(r, "memory"), faults.uncommitted,
                                  lambda r: status.dirty_ids(r, "memory")])
def test_reading_what_changed_never_rewrites_the_index(repo: str, read) -> None:  # type: ignore[no-untyped-def]
    # git status refreshes stale stat data in the index and writes it back under index.lock,
    # which makes a concurrent writer's `git add` fail; memrepo's reads ask for no optional lock.
    write_memory(repo, "deploy-window", title="Deploys happen on Tuesdays")
    assert commit_all(repo, "seed").returncode == 0
    path = os.path.join(repo, "memory", "deploy-window.md")
    time.sleep(0.01)
    os.utime(path, ns=(time.time_ns() + 5_000_000_000,) * 2)  # same content, new stat data
    before = _index_stat(repo)
    read(repo)
    assert _index_stat(repo) == before
