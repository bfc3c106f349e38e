"""memrepo's own git index: HEAD's tree, into which a writer stages exactly its paths and commits.

A pathspec commit (`git commit --only <paths>`) keeps a person's staged changes out of memrepo's
commit by building and writing a temporary index of every entry, and then the real one again:
1.04 s of a 1.71 s `memrepo add` at 100,000 memories (issue 44). This index is kept instead, in the
worktree's git dir (`git rev-parse --git-path memrepo-index`), holding HEAD's tree and nothing
else: a writer stages its paths into it and commits it as it is (`GIT_INDEX_FILE`), so the user's
index never enters the commit, git writes one index and its cache-tree rebuilds only the folders
that changed. The repository's hooks run as for any commit, reading this index.

It is trusted only while `memrepo-index.head` names HEAD: a writer removes that mark before it
stages and writes it back once its commit has landed, so anything else (a commit made with git,
a pull, a writer that failed or was killed) leaves the mark stale and the next writer makes the
index again from the real one (`git read-tree -m HEAD` keeps the real index's stat data for
every unchanged entry, so git need not hash 100,000 files to trust them).
"""

from __future__ import annotations

import contextlib
import os
import time

from memrepo.errors import GitError
from memrepo.vcs import gitcmd

NAME = "memrepo-index"
gitcmd.ask_together(NAME, "index")
LOCK_WAIT = 30.0  # seconds an orphaned git gets to let go of memrepo's index (as `journal.GIT_WAIT`)


def _git_paths(repo: str) -> tuple[str, str]:
    """(memrepo's index, the real index), absolute."""
    found = gitcmd.git_paths(repo, NAME, "index")
    if found is None:
        raise GitError(f"{repo} is not a git repository", hint=f"run `memrepo init {repo}`")
    own, real = (os.path.abspath(p) for p in found)
    return own, real


def _read_mark(where: str) -> str | None:
    try:
        with open(where, encoding="ascii") as fh:
            return fh.read().strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def open_for(repo: str, head: str | None) -> dict[str, str]:
    """The environment that makes git use memrepo's index, made to hold exactly `head`'s tree.

    Call holding the repository lock. The mark is gone on return: until `landed`, the index
    may hold staged paths, and no later writer trusts it.
    """
    own, real = _git_paths(repo)
    mark = own + ".head"
    orphaned = _clear_lock(own)
    current = not orphaned and head is not None and _read_mark(mark) == head and os.path.isfile(own)
    with contextlib.suppress(FileNotFoundError):
        os.remove(mark)
    env = {**os.environ, "GIT_INDEX_FILE": own}
    if not current:
        _make(repo, own, real, head)
    return env


def _clear_lock(own: str) -> bool:
    """Remove the lock a killed writer's git left on memrepo's index; True when there was one.

    Only a writer holding the repository lock uses this index, so its lock is an orphan's: a git
    still running after the writer that started it died gets until LOCK_WAIT seconds after the
    lock was made to finish; an older lock goes at once.
    """
    lock = own + ".lock"
    found = False
    while True:
        try:
            made = os.stat(lock).st_mtime
        except FileNotFoundError:
            return found
        found = True
        if time.time() - made >= LOCK_WAIT:
            with contextlib.suppress(FileNotFoundError):
                os.remove(lock)
            return found
        time.sleep(0.05)


def _make(repo: str, own: str, real: str, head: str | None) -> None:
    import shutil  # not at import: a lock hold whose index is current never copies one (issue 44)

    tmp = f"{own}.tmp-{os.getpid()}"
    try:
        with contextlib.suppress(FileNotFoundError):
            shutil.copyfile(real, tmp)
        env = {**os.environ, "GIT_INDEX_FILE": tmp}
        args = ("read-tree", "-m", head) if head else ("read-tree", "--empty")
        rc, out, err = gitcmd.run_git(*args, cwd=repo, env=env)
        if rc != 0 and head:
            # The real index could not be merged (unmerged entries, damage): HEAD's tree alone,
            # without stat data (git hashes the files once to trust them).
            with contextlib.suppress(FileNotFoundError):
                os.remove(tmp)
            rc, out, err = gitcmd.run_git("read-tree", head, cwd=repo, env=env)
        if rc != 0:
            raise GitError(f"git read-tree failed: {(err or out).decode('utf-8', 'replace').strip()}",
                           hint="check the repository with `git status` and `memrepo doctor`")
        os.replace(tmp, own)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)


def landed(repo: str, head: str) -> None:
    """Mark memrepo's index as holding `head`'s tree (its commit just landed from it)."""
    own, _ = _git_paths(repo)
    tmp = f"{own}.head.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="ascii") as fh:
        fh.write(head + "\n")
    os.replace(tmp, own + ".head")
