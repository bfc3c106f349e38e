"""The rollback journal of a commit in progress: a `kill -9` mid-commit is undone by the next writer.

`commit.transaction` writes the journal (the old bytes and mode of every path it may touch,
and a digest of what it is about to write) before it changes anything, and drops it once the
commit has landed or its files are restored. A process killed in between cannot restore
anything itself, so whoever takes the repository lock next calls `recover`: each path that
still holds exactly what the dead writer wrote, and whose commit did not land, gets its old
bytes and its index entry back. A path someone changed since is left alone.

The journal lives in the worktree's git dir (`git rev-parse --git-path`), never in the tree.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import sys
import time
from collections.abc import Mapping

from memrepo.base import _fast
from memrepo.errors import GitError
from memrepo.vcs import gitcmd

NAME = "memrepo-commit-journal.json"
gitcmd.ask_together(NAME)
GIT_WAIT = 30.0  # seconds recovery waits for an orphaned `git commit` to let go of the index
MAX_BYTES = 256 * 1024 * 1024  # a journal is ours, but bounded all the same

Snapshot = Mapping[str, "tuple[bytes, int] | None"]  # path -> (bytes, mode), or None: it did not exist


def digest(data: bytes | None) -> str | None:
    # hashlib's digest without OpenSSL's 10 M instructions in every lock hold (issue 44)
    return None if data is None else _fast.sha256_hex(data)


def path(repo: str) -> str:
    found = gitcmd.git_paths(repo, NAME)
    if found is None:
        raise GitError(f"{repo} is not a git repository", hint=f"run `memrepo init {repo}`")
    return found[0]


def write(repo: str, head: str | None, before: Snapshot, after: Mapping[str, bytes | None] | None = None) -> str:
    """Record what a commit is about to change; `after` (path -> new bytes, None: deleted) when known."""
    where = path(repo)
    entries = {rel: None if old is None else {"mode": old[1], "data": base64.b64encode(old[0]).decode("ascii")}
               for rel, old in before.items()}
    record = {"pid": os.getpid(), "head": head, "before": entries,
              "after": None if after is None else {rel: digest(data) for rel, data in after.items()}}
    tmp = f"{where}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(record, fh)
    os.replace(tmp, where)
    return where


def drop(where: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(where)


def _load(where: str) -> dict | None:  # type: ignore[type-arg]
    try:
        if os.path.getsize(where) > MAX_BYTES:
            raise GitError(f"{where} is larger than any journal memrepo writes",
                           hint=f"look at it, then remove it: `rm {where}`")
        with open(where, encoding="utf-8") as fh:
            record = json.load(fh)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        # A journal cut short was never acted on: the writer dies before it changes a file.
        print(f"memrepo: ignoring an unreadable commit journal ({exc})", file=sys.stderr)
        drop(where)
        return None
    return record if isinstance(record, dict) and isinstance(record.get("before"), dict) else None


def pending(repo: str) -> list[str] | None:
    """The paths of an interrupted commit's journal (read-only, for `doctor`), or None when there is none."""
    where = path(repo)
    if not os.path.exists(where):
        return None
    try:
        with open(where, encoding="utf-8") as fh:
            return sorted(json.load(fh).get("before") or {})
    except (OSError, ValueError, AttributeError):
        return []


def _wait_for_index(repo: str) -> None:
    """An orphaned `git commit` of the dead writer may still be running: let it finish first."""
    rc, out, _ = gitcmd.run_git("rev-parse", "--git-path", "index.lock", cwd=repo)
    lock = os.path.join(repo, out.decode("utf-8", "surrogateescape").strip()) if rc == 0 else ""
    deadline = time.monotonic() + GIT_WAIT
    while lock and os.path.exists(lock):
        if time.monotonic() >= deadline:
            raise GitError(f"{lock} has existed for {GIT_WAIT:.0f} s, so an interrupted memrepo commit cannot be checked",
                           hint=f"if no git process is running in {repo}, `memrepo --repo {repo} recover` removes it")
        time.sleep(0.05)


CHUNK = 500  # paths per git command line: thousands of them must not reach the argument-length limit


def _head_blobs(repo: str, rels: list[str]) -> dict[str, str]:
    blobs = {}
    for i in range(0, len(rels), CHUNK):
        rc, out, _ = gitcmd.run_git("ls-tree", "-z", "HEAD", "--", *rels[i:i + CHUNK], cwd=repo)
        for entry in gitcmd.split_z(out) if rc == 0 else []:
            meta, _, rel = entry.partition("\t")
            blobs[rel] = meta.split()[2]
    return blobs


def _worktree_blobs(repo: str, rels: list[str]) -> dict[str, str]:
    present = [r for r in rels if os.path.isfile(os.path.join(repo, r))]
    if not present:
        return {}
    rc, out, _ = gitcmd.run_git("hash-object", "--stdin-paths", cwd=repo, input="".join(f"{r}\n" for r in present).encode("utf-8"))
    return dict(zip(present, out.decode().split())) if rc == 0 else {}


# -- the writer's file and index primitives: what a commit writes, and how it is put back --

def read(repo: str, rel: str) -> tuple[bytes, int] | None:
    """A path's bytes and mode, or None when it does not exist."""
    path = os.path.join(repo, rel)
    try:
        with open(path, "rb") as fh:
            return fh.read(), os.fstat(fh.fileno()).st_mode & 0o7777
    except FileNotFoundError:
        return None


def write_atomic(path: str, data: bytes, mode: int | None = None) -> None:
    """Write `path` atomically (a temporary file renamed over it), keeping `mode` when given."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.tmp-memrepo-{os.getpid()}"
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def restore(repo: str, before: Snapshot, head: str | None) -> None:
    """Every path as it was: its old bytes and mode, or gone; its index entry back to HEAD's."""
    for rel, old in before.items():
        if old is None:
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(repo, rel))
        else:
            write_atomic(os.path.join(repo, rel), old[0], old[1])
    rels = sorted(before)
    if not rels:
        return  # an empty pathspec is the whole index, and the user's staged changes are not ours
    if head:
        gitcmd.run_git("reset", "-q", *FROM_STDIN, cwd=repo, input=nul(rels))
    else:
        gitcmd.run_git("rm", "--cached", "-q", "--ignore-unmatch", *FROM_STDIN, cwd=repo, input=nul(rels))


# Paths go to git on stdin or in a file, never on the command line: 2,500 dead-path stamps once
# hit the argument-length limit (issue 22).
FROM_STDIN = ("--pathspec-from-file=-", "--pathspec-file-nul")


def nul(rels: list[str]) -> bytes:
    """Paths as git reads them from a --pathspec-file-nul: each followed by a NUL."""
    return b"".join(r.encode("utf-8", "surrogateescape") + b"\0" for r in rels)


def recover(repo: str) -> list[str]:
    """Undo what a writer that died mid-commit left (call holding the repository lock).

    Returns the paths put back (empty when there was nothing to undo).
    """
    where = path(repo)
    record = _load(where)
    if record is None:
        return []
    _wait_for_index(repo)
    before = {rel: None if e is None else (base64.b64decode(e["data"]), int(e["mode"]))
              for rel, e in record["before"].items()}
    after = record.get("after") or {}
    rels = sorted(before)
    committed, worktree = _head_blobs(repo, rels), _worktree_blobs(repo, rels)
    undo = {}
    for rel in rels:
        found = read(repo, rel)
        now = found[0] if found else None
        old = before[rel]
        if now == (old[0] if old else None):
            continue  # never written, or already back
        if rel in after and digest(now) != after[rel]:
            continue  # someone changed it since the writer died: theirs now
        if committed.get(rel) == worktree.get(rel):
            continue  # the commit landed (the file matches HEAD): the new state stands
        undo[rel] = old
    for rel in rels:  # a temp file of the dead writer's atomic write
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(repo, f"{rel}.tmp-memrepo-{record.get('pid')}"))
    if undo:
        restore(repo, undo, gitcmd.head(repo))
        print(f"memrepo: a commit interrupted in pid {record.get('pid')} was rolled back: {', '.join(sorted(undo))}",
              file=sys.stderr)
    drop(where)
    return sorted(undo)
