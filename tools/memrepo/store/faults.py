"""States a crash, a kill or a full disk leaves, named for `memrepo doctor` with a fix that works.

Each check here looks at one kind of leftover (issue 15): a git operation left half done, a
stale `.git/index.lock`, changes a pass staged or wrote but never committed, an `index/`
that is missing its `.gitignore`, is a file, or cannot be written, a folder in the cache
file's place, a repository that refuses writes (issue 38). The fixes they name are
commands that repair exactly that state (`memrepo recover`, `memrepo index`, a git abort).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
from typing import Any, Callable

from memrepo.base import paths
from memrepo.vcs import commit, lock, refs, status

STALE_AFTER = 10.0  # seconds: git holds index.lock for one command; ten seconds idle is a dead one
MIN_FREE = 1024 * 1024  # bytes: below this the next index write fails

# What git keeps for an operation under way, and the command that backs out of it.
ABORTS = {"a merge": "git merge --abort", "a rebase": "git rebase --abort", "a rebase or `git am`": "git rebase --abort",
          "a cherry-pick": "git cherry-pick --abort", "a revert": "git revert --abort"}


def _memrepo_writing(repo: str) -> bool:
    """True while a memrepo writer holds the repository lock (its git may hold index.lock)."""
    return lock.is_held(repo)


def stale_index_lock(repo: str, holding: bool = False) -> str:
    """The path of `.git/index.lock` when it was left by a dead git, else "". `holding`: the
    caller holds the repository lock, so no memrepo writer's git can be running."""
    where = refs.git_path(repo, "index.lock")
    try:
        age = time.time() - os.stat(where).st_mtime
    except OSError:
        return ""
    return where if age >= STALE_AFTER and (holding or not _memrepo_writing(repo)) else ""


def clear_stale_index_lock(repo: str) -> str:
    """Remove a stale `.git/index.lock` (call holding the repository lock); returns its path or ""."""
    where = stale_index_lock(repo, holding=True)
    if where:
        with contextlib.suppress(FileNotFoundError):
            os.remove(where)
    return where


def operation(repo: str) -> tuple[str, str] | None:
    """(what is under way, the command that aborts it), or None; an interrupted sequence counts."""
    what = commit.in_progress(repo)
    if what:
        return what, ABORTS.get(what, "git status")
    if os.path.isdir(refs.git_path(repo, "sequencer")):
        return "a revert or cherry-pick sequence", "git revert --abort (or git cherry-pick --abort)"
    return None


def uncommitted(repo: str) -> tuple[list[str], list[str]]:
    """(staged paths, changed but unstaged paths) among what memrepo writes: memory/ and profile.md."""
    staged, unstaged = status.uncommitted(repo, paths.MEMORY_DIR, paths.PROFILE_FILE)
    return staged, [rel for rel in unstaged if rel.endswith(".md") or rel == paths.PROFILE_FILE]


def index_layout(repo: str) -> list[tuple[str, str]]:
    """(problem, fix) for each way `index/` is not what memrepo needs."""
    top = paths.index_dir(repo)
    again = f"memrepo --repo {repo} index"
    if os.path.lexists(top) and not os.path.isdir(top):
        return [("index is a file, not a folder, so the cache cannot be written",
                 f"{again} (it moves the file aside as index.moved-aside-<time> and builds the cache)")]
    found = []
    if not os.path.exists(os.path.join(top, ".gitignore")):
        found.append(("index/.gitignore is missing, so `git add -A` would commit the cache and the recall log",
                      f"{again} (it writes the file back)"))
    tracked = [p for p in status.tracked(repo, paths.INDEX_DIR) or []
               if p not in (f"{paths.INDEX_DIR}/.gitignore", f"{paths.INDEX_DIR}/README.md")]
    if tracked:
        shown = ", ".join(tracked[:3]) + (", …" if len(tracked) > 3 else "")
        found.append((f"the cache is committed ({shown}): every clone would get this machine's recall log",
                      f"git -C {repo} rm -r --cached -q {' '.join(tracked[:3])}{' …' if len(tracked) > 3 else ''}, then commit"))
    if os.path.isdir(top):
        exc = probe_write(top)
        if exc is not None:
            found.append((f"index/ cannot be written ({exc.strerror})", writable_fix(repo, exc)))
        elif (_free(top) or MIN_FREE) < MIN_FREE:
            found.append(("the disk holding index/ is full", f"free some space, then run `{again}`"))
    return found


FULL = (errno.ENOSPC, errno.EDQUOT)
REFUSED = (errno.EACCES, errno.EPERM, errno.EROFS)
DISK = FULL + REFUSED + (errno.EFBIG, errno.EIO)


def probe_write(folder: str) -> OSError | None:
    """Create and remove one file in `folder`: the error a write there meets, or None."""
    probe = os.path.join(folder, f".memrepo-write-probe-{os.getpid()}")
    try:
        with open(probe, "wb") as fh:
            fh.write(b"x")
        os.remove(probe)
    except OSError as exc:
        return exc
    return None


def _free(folder: str) -> int | None:
    with contextlib.suppress(OSError):
        st = os.statvfs(folder)
        return st.f_bavail * st.f_frsize
    return None


def disk_fix(folder: str, exc: BaseException | None) -> tuple[str, str, bool]:
    """(why writes in `folder` fail, the fix, whether the fix is a command) for a write that
    failed with `exc`.

    SQLite says "disk I/O error" for several causes and carries no errno, so a write of our own
    asks the folder. The fix is a command where one exists: root writes through any mode, so a
    refusal it meets is an immutable flag (EPERM) or a read-only mount (EROFS), not a mode bit.
    """
    code = getattr(exc, "errno", None)
    if not isinstance(exc, OSError) or code not in DISK:
        probed = probe_write(folder) if os.path.isdir(folder) else None
        code = probed.errno if probed is not None else None
    text = f"{getattr(exc, 'strerror', '') or ''} {exc}".lower()
    free = _free(folder if os.path.isdir(folder) else os.path.dirname(folder))
    if code in FULL or "space" in text or "full" in text or (free is not None and free < MIN_FREE):
        return "the disk is full", f"free some space on the disk holding {folder}", False
    if code == errno.EFBIG:
        return "a file size limit stops the write (`ulimit -f` shows it)", \
            f"raise the file size limit (`ulimit -f unlimited`) or free some space on the disk holding {folder}", False
    if code == errno.EROFS or "read-only file system" in text:
        return "the file system is mounted read-only", f"remount the file system holding {folder} read-write", False
    if code == errno.EPERM:
        return "it is marked immutable or append-only (`lsattr -d` shows it)", f"chattr -i -a {folder}", True
    if code == errno.EACCES:
        return "this user may not write there", f"chmod -R u+rwX {folder}", True
    return "writes there fail", f"check the disk holding {folder} (it may be full, read-only or failing)", False


def writable_fix(repo: str, exc: BaseException) -> str:
    """The fix for an index write that failed with `exc`, ending in the command that rebuilds."""
    _, fix, command = disk_fix(paths.index_dir(repo), exc)
    again = f"memrepo --repo {repo} index"
    return f"{fix} && {again}" if command else f"{fix}, then run `{again}`"


def cache_in_place(repo: str) -> str:
    """What occupies the cache file's place when it is not a file ("a folder", "a link"…), else ""."""
    try:
        mode = os.lstat(paths.index_db(repo)).st_mode
    except OSError:
        return ""
    if stat.S_ISREG(mode):
        return ""
    return "a folder" if stat.S_ISDIR(mode) else "a symbolic link" if stat.S_ISLNK(mode) else "not a regular file"


def repository_writable(repo: str) -> list[tuple[str, str]]:
    """(problem, fix) for each folder a memory write needs that refuses writes: memory/, the git
    directory and its object store (issue 38: `add` on a read-only repository ended in a traceback)."""
    found = []
    for folder in (paths.memory_dir(repo), refs.git_path(repo, "."), refs.git_path(repo, "objects")):
        folder = os.path.normpath(folder) if folder else ""
        if not folder or not os.path.isdir(folder):
            continue
        exc = probe_write(folder)
        if exc is None and (_free(folder) or MIN_FREE) >= MIN_FREE:
            continue
        why, fix, _ = disk_fix(folder, exc)
        rel = os.path.relpath(folder, repo)
        said = f"cannot be written ({exc.strerror})" if exc else f"has under {MIN_FREE // 1024} KiB free"
        found.append((f"{rel}/ {said}: {why}, so no memory can be added or changed", fix))
    return found


def checks(repo: str, make: Callable[..., Any]) -> list[Any]:
    """The fault checks as doctor Checks (`make` is doctor's Check class)."""
    out = []
    op = operation(repo)
    if op:
        what, abort = op
        # An abort puts files back without a hook: the cache then re-reads them.
        out.append(make("git operation", False, f"{what} was left unfinished in {repo} (memrepo writes nothing meanwhile)",
                        f"git -C {repo} {abort[4:].split(' (', 1)[0]} && memrepo --repo {repo} index "
                        f"(or finish it: `git status` says how)"))
    held = stale_index_lock(repo)
    if held:
        out.append(make("git index lock", False, f"{held} was left by a git that is no longer running, so every commit fails",
                        f"memrepo --repo {repo} recover"))
    staged, unstaged = uncommitted(repo)
    if staged:
        out.append(make("uncommitted changes", False, f"staged but in no commit: {', '.join(staged[:5])}"
                        + (", …" if len(staged) > 5 else ""),
                        f"commit them (`git -C {repo} commit`), or unstage them (`git -C {repo} restore --staged {' '.join(staged[:5])}`)"))
    if unstaged:
        out.append(make("uncommitted changes", True, f"changed but not committed: {', '.join(unstaged[:5])}"
                        + (", …" if len(unstaged) > 5 else ""),
                        f"commit them (`git -C {repo} add memory && git -C {repo} commit`), or put them back with "
                        f"`git -C {repo} checkout -- <file>`", warn=True))
    for problem, fix in repository_writable(repo):
        out.append(make("repository writable", False, problem, fix))
    for problem, fix in index_layout(repo):
        out.append(make("index folder", False, problem, fix))
    return out
