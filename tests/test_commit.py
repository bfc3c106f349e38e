"""The one transactional commit: exactly the files given, through the repository's hooks, or nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from typing import Any

import pytest

from helpers import git, head, memory_text, write_file
from memrepo.errors import GitError
from memrepo.vcs import commit, gitcmd, lock, trailers


def _bytes(repo: str, rel: str) -> bytes | None:
    try:
        with open(os.path.join(repo, rel), "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def _staged(repo: str) -> list[str]:
    return git(repo, "diff", "--cached", "--name-only").stdout.split()


@pytest.fixture
def dirty(repo: str) -> dict[str, Any]:
    """A committed memory `kept` edited (not staged) in the working tree, and a staged unrelated file."""
    write_file(repo, "memory/kept.md", memory_text("kept"))
    commit.commit_files(repo, {"memory/kept.md": memory_text("kept")}, "add kept", {"Action": "add"})
    edited = memory_text("kept", body="Edited by hand, not committed.\r\n").encode()
    write_file(repo, "memory/kept.md", edited)
    write_file(repo, "notes.txt", "the user's own staged work\n")
    git(repo, "add", "notes.txt")
    return {"head": head(repo), "kept": edited}


def test_commits_exactly_the_files_and_leaves_the_rest_staged(repo: str, dirty: dict[str, Any]) -> None:
    sha = commit.commit_files(repo, {"memory/new.md": memory_text("new")}, "add: new", {"Action": "add", "Id": "new"})
    assert sha == head(repo) != dirty["head"]
    assert git(repo, "show", "--name-only", "--format=", sha).stdout.split() == ["memory/new.md"]
    assert _staged(repo) == ["notes.txt"]
    assert _bytes(repo, "memory/kept.md") == dirty["kept"]
    assert trailers.read(repo, limit=1)[0]["trailers"] == {"Action": "add", "Id": "new"}
    # post-commit ran (once, in the hook): the cache already records the new HEAD.
    from memrepo.store import index

    assert index.status(repo)["commit"] == sha


def test_a_pre_commit_rejection_restores_every_file_byte_for_byte(repo: str, dirty: dict[str, Any]) -> None:
    files = {"memory/kept.md": memory_text("kept", title="Changed"), "memory/bad.md": memory_text("not-bad")}
    with pytest.raises(GitError, match="bad.md"):
        commit.commit_files(repo, files, "two files", {"Action": "add"})
    assert head(repo) == dirty["head"]
    assert (_bytes(repo, "memory/kept.md"), _bytes(repo, "memory/bad.md")) == (dirty["kept"], None)
    assert _staged(repo) == ["notes.txt"]


def test_an_interrupt_at_the_commit_step_restores_and_unstages(repo: str, dirty: dict[str, Any],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    real = gitcmd.run_git

    def run_git(*args: str, **kwargs: Any) -> tuple[int, bytes, bytes]:
        if args and args[0] == "commit":
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(gitcmd, "run_git", run_git)
    files = {"memory/kept.md": memory_text("kept", title="Changed"), "memory/fresh.md": memory_text("fresh"),
             "skills/x/draft.json": "{}\n"}
    with pytest.raises(KeyboardInterrupt):
        commit.commit_files(repo, files, "three files", {"Action": "add"})
    assert head(repo) == dirty["head"]
    assert [_bytes(repo, r) for r in files] == [dirty["kept"], None, None]
    assert _staged(repo) == ["notes.txt"]


def test_a_deletion_is_committed_and_restored_on_failure(repo: str, dirty: dict[str, Any]) -> None:
    with pytest.raises(GitError):
        commit.commit_files(repo, {"memory/kept.md": None, "memory/bad.md": memory_text("other")}, "x", {})
    assert _bytes(repo, "memory/kept.md") == dirty["kept"]
    commit.commit_files(repo, {"memory/kept.md": None, "memory/never-was.md": None}, "remove kept", {"Action": "remove"})
    assert git(repo, "show", "--name-status", "--format=", "HEAD").stdout.split() == ["D", "memory/kept.md"]
    assert not os.path.exists(os.path.join(repo, "memory/kept.md"))


def test_a_200_kb_message_is_committed_whole(repo: str) -> None:
    body = "\n".join(f"line {i}: " + "x" * 90 for i in range(2000))
    assert len(body) > 200_000
    commit.commit_files(repo, {"memory/long.md": memory_text("long")}, "long message", {"Action": "add"}, body)
    message = git(repo, "log", "-1", "--format=%B").stdout
    assert message == trailers.message("long message", {"Action": "add"}, body) + "\n"


HOLDER = """import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
os.ftruncate(fd, 0)
os.write(fd, f"pid {os.getpid()}: holder-of-the-lock\\n".encode())
print("ready", flush=True)
sys.stdin.readline()
open(sys.argv[2], "w").close()
"""


@pytest.fixture
def holder(repo: str, tmp_path: Any) -> Any:
    released = os.path.join(str(tmp_path), "released")
    child = subprocess.Popen([sys.executable, "-c", HOLDER, lock.path(repo), released],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline() == "ready\n"
    child.released = released  # type: ignore[attr-defined]
    yield child
    child.kill()
    child.wait()


def test_a_short_wait_names_the_holder(repo: str, holder: Any) -> None:
    before = head(repo)
    with pytest.raises(lock.LockTimeout, match=f"pid {holder.pid}: holder-of-the-lock"):
        commit.commit_files(repo, {"memory/w.md": memory_text("w")}, "add: w", {"Action": "add"}, wait=0.3)
    assert head(repo) == before and _bytes(repo, "memory/w.md") is None


def test_commit_waits_for_the_holder(repo: str, holder: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    tried = threading.Event()
    real_try = lock._try

    def spy(fd: int) -> bool:
        got = real_try(fd)
        if not got:
            tried.set()
        return got

    monkeypatch.setattr(lock, "_try", spy)
    seen: dict[str, Any] = {}
    real_run = gitcmd.run_git

    def run_git(*args: str, **kwargs: Any) -> tuple[int, bytes, bytes]:
        if args and args[0] == "commit":
            seen["released before commit"] = os.path.exists(holder.released)
        return real_run(*args, **kwargs)

    monkeypatch.setattr(gitcmd, "run_git", run_git)
    worker = threading.Thread(target=lambda: seen.update(sha=commit.commit_files(
        repo, {"memory/w.md": memory_text("w")}, "add: w", {"Action": "add"}, wait=120)))
    worker.start()
    assert tried.wait(60), "commit_files never found the lock taken"
    holder.stdin.write("go\n")
    holder.stdin.flush()
    worker.join(120)
    assert seen == {"released before commit": True, "sha": head(repo)}
