"""The one way memrepo commits: write files, stage exactly them, commit them; or change nothing.

`commit_files` holds the repository lock (`vcs.lock`), writes every file atomically, stages
exactly those paths and commits them with `git commit -F - --pathspec-from-file=<file>`: the
message goes on stdin and the paths in a NUL-separated file (any length, any number: a bulk pass
commits thousands of paths, more than one command line holds), and whatever else the user has
staged stays staged and out of the commit. A trailer whose value is a list is repeated, one
line per item (a bulk pass records one `Memrepo-Decision` per memory).
The repository's own hooks run on that commit: pre-commit validates what memrepo wrote like
anything else, post-commit indexes it, exactly once. On any failure (a pre-commit rejection,
an exception, ^C) every path is put back byte for byte and nothing stays staged for it; a
`kill -9` that leaves no chance to do so is undone by the next writer (`vcs.journal`).

`transaction` + `commit_staged` are the same steps for a writer that lets git change the files
(`git revert --no-commit`, `git cherry-pick --no-commit`), and `record` is the commit that changes
no file (a review's reject, an undo whose run cancelled out): hooks and indexing as for any other.

Plumbing on purpose, each in one place: `store.sync` makes its merge commits with `commit-tree`
(it validates the merged tree before HEAD moves), and review branches are written with
`commit-tree` and a compare-and-swap `update-ref` (`passes/curate/review.py` and `publish.py`):
neither touches the user's working tree, index or current branch.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from memrepo.errors import Deferred, GitError
from memrepo.vcs import gitcmd, journal, lock, trailers as trailer_text
from memrepo.vcs.journal import FROM_STDIN as _FROM_STDIN, Snapshot, nul as _nul, read, restore, write_atomic as _write

# What a person may be in the middle of, by the file git keeps for it (in the worktree's git dir).
_IN_PROGRESS = (("MERGE_HEAD", "a merge"), ("rebase-merge", "a rebase"), ("rebase-apply", "a rebase or `git am`"),
                ("CHERRY_PICK_HEAD", "a cherry-pick"), ("REVERT_HEAD", "a revert"))


class OperationInProgress(Deferred, GitError):
    """A merge, rebase, cherry-pick or revert is under way: memrepo writes nothing into it."""


def in_progress(repo: str) -> str | None:
    """What git operation is under way in `repo` ("a merge", ...), or None."""
    args = [a for name, _ in _IN_PROGRESS for a in ("--git-path", name)]
    rc, out, _ = gitcmd.run_git("rev-parse", *args, cwd=repo)
    if rc != 0:
        return None
    found = out.decode("utf-8", "surrogateescape").splitlines()
    for (_, what), rel in zip(_IN_PROGRESS, found):
        if os.path.lexists(os.path.join(repo, rel)):
            return what
    return None


def refuse_in_progress(repo: str) -> None:
    """Raise OperationInProgress when a person is in the middle of a git operation in `repo`."""
    what = in_progress(repo)
    if what:
        # A background sweep once staged a verifier stamp into a person's merge commit.
        raise OperationInProgress(f"{what} is in progress in {repo}; memrepo writes nothing until it is finished",
                                  hint="finish it or abort it (`git status` says how), then run the command again")


def _put(repo: str, rel: str, data: str | bytes | None, old: tuple[bytes, int] | None) -> None:
    path = os.path.join(repo, rel)
    if data is None:
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)
        return
    _write(path, data.encode("utf-8") if isinstance(data, str) else data, old[1] if old else None)


@contextlib.contextmanager
def _pathspec_file(repo: str, rels: list[str]) -> Iterator[str]:
    """A NUL-separated file of `rels` in the git dir, for a git command whose stdin is taken."""
    rc, out, err = gitcmd.run_git("rev-parse", "--git-path", f"memrepo-pathspec-{os.getpid()}", cwd=repo)
    if rc != 0:
        raise GitError(f"{repo} is not a git repository: {err.decode('utf-8', 'replace').strip()}",
                       hint=f"run `memrepo init {repo}`")
    where = os.path.join(repo, out.decode("utf-8", "surrogateescape").strip())
    _write(where, _nul(rels))
    try:
        yield where
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(where)


@contextlib.contextmanager
def transaction(repo: str, rels: list[str], wait: float = lock.WAIT,
                after: Mapping[str, bytes | None] | None = None) -> Iterator[None]:
    """Hold the repository lock; if the block raises before its commit lands, restore `rels`.

    First undoes what a writer killed mid-commit left behind, then journals `rels` (and `after`,
    what the block will write, when known) so that the next writer can undo this one.
    """
    with lock.held(repo, wait):
        journal.recover(repo)
        refuse_in_progress(repo)
        before: Snapshot = {rel: read(repo, rel) for rel in rels}
        head = gitcmd.head(repo)
        record = journal.write(repo, head, before, after)
        try:
            yield
        except BaseException:
            # A commit that landed (^C just after it) is history now: leave its files be.
            if gitcmd.head(repo) == head:
                restore(repo, before, head)
            journal.drop(record)  # kept when the restore itself failed: the next writer retries it
            raise
        journal.drop(record)


def _stage(repo: str, rels: list[str]) -> None:
    present = [r for r in rels if os.path.lexists(os.path.join(repo, r))]
    gone = [r for r in rels if r not in present]
    for args, paths in ((["add"], present), (["rm", "--cached", "-q", "--ignore-unmatch"], gone)):
        if paths:
            rc, out, err = gitcmd.run_git_writing(*args, *_FROM_STDIN, cwd=repo, input=_nul(paths))
            if rc != 0:
                raise GitError(f"git {args[0]} failed: {(err or out).decode('utf-8', 'replace').strip()}",
                               hint="check the repository with `git status` and `memrepo doctor`")


def commit_staged(repo: str, rels: list[str], subject: str, trailers: dict[str, Any], body: str = "") -> str:
    """Commit `rels` as the working tree holds them (call inside `transaction`); returns the sha.

    Raises GitError with git's and the hooks' output when the commit is refused.
    """
    msg = message(subject, trailers, body).encode("utf-8")
    with _pathspec_file(repo, rels) as listed:
        rc, out, err = gitcmd.run_git_writing("commit", "-q", "-F", "-", f"--pathspec-from-file={listed}",
                                              "--pathspec-file-nul", cwd=repo, input=msg)
    if rc != 0:
        detail = "\n".join(s for s in (err.decode("utf-8", "replace").strip(), out.decode("utf-8", "replace").strip()) if s)
        raise GitError(f"git commit failed:\n{detail}", hint="fix the problems above, then run the command again")
    return gitcmd.head(repo) or ""


def record(repo: str, subject: str, trailers: dict[str, Any], body: str = "", *, wait: float = lock.WAIT) -> str:
    """A commit that changes no file, on HEAD; returns its sha.

    `git commit --allow-empty --only` with no path: the repository's hooks run as for any commit
    (post-commit records the new HEAD in the cache, issue 40: the plumbing this replaced left the
    cache looking stale until a caller remembered to reindex), and whatever the user has staged
    stays staged and out of it.
    """
    with lock.held(repo, wait):
        refuse_in_progress(repo)
        msg = message(subject, trailers, body).encode("utf-8")
        rc, out, err = gitcmd.run_git_writing("commit", "-q", "--allow-empty", "--only", "-F", "-", cwd=repo, input=msg)
        if rc != 0:
            detail = (err or out).decode("utf-8", "replace").strip()
            raise GitError(f"git commit failed:\n{detail}", hint="fix the problems above, then run the command again")
        return gitcmd.head(repo) or ""


def message(subject: str, trailers: dict[str, Any], body: str = "") -> str:
    """The commit message (`trailers.message`, the one builder)."""
    return trailer_text.message(subject, trailers, body)


def commit_files(repo: str, files: Mapping[str, str | bytes | None], subject: str, trailers: dict[str, Any],
                 body: str = "", *, wait: float = lock.WAIT) -> str:
    """Write `files` ({repo-relative path: text, bytes, or None to delete}) and commit exactly them.

    Returns the new commit's sha. On any failure every path is put back byte for byte (a new
    file removed) and nothing stays staged for it, then the exception propagates.
    """
    with lock.held(repo, wait):
        # Deleting what never existed is no change, and git would reject it as an unknown path.
        rels = sorted(rel for rel, data in files.items()
                      if data is not None or os.path.lexists(os.path.join(repo, rel)) or _tracked(repo, rel))
        after = {rel: None if files[rel] is None else _as_bytes(files[rel]) for rel in rels}  # type: ignore[arg-type]
        with transaction(repo, rels, after=after):
            for rel in rels:
                _put(repo, rel, files[rel], read(repo, rel))
            _stage(repo, rels)
            return commit_staged(repo, rels, subject, trailers, body)


def commit_paths(repo: str, rels: list[str], subject: str, trailers: dict[str, Any], body: str = "",
                 *, wait: float = lock.WAIT) -> str:
    """Commit files another step already wrote (e.g. `memrepo init`'s layout); nothing stays staged on failure."""
    rels = sorted(rels)
    with transaction(repo, rels, wait):
        _stage(repo, rels)
        return commit_staged(repo, rels, subject, trailers, body)


def _tracked(repo: str, rel: str) -> bool:
    rc, out, _ = gitcmd.run_git("ls-files", "-z", "--", rel, cwd=repo)
    return rc == 0 and bool(out)


def _as_bytes(data: str | bytes) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


def commit_if_unchanged(repo: str, files: Mapping[str, str | bytes | None], expect: Mapping[str, str | bytes | None],
                        subject: str | Callable[[list[str]], str],
                        trailers: dict[str, Any] | Callable[[list[str]], dict[str, Any]],
                        body: str | Callable[[], str] = "",
                        *, wait: float = lock.WAIT) -> tuple[str, list[str]]:
    """Commit the files that still hold what the writer read; leave the others alone.

    A pass reads a memory, waits on a model or a probe, then writes: a person's commit in between
    must not be reverted by the pass's stale copy. Under the lock, each path's bytes are compared
    with `expect` (what was read; None: it did not exist). Returns (sha, or "" when nothing was
    left to commit; the paths skipped because they changed). `subject` and `trailers` may be
    functions of the paths about to be committed, and `body` a function called after them, for
    messages that count or list what was kept.
    """
    with lock.held(repo, wait):
        stale = sorted(rel for rel in files if _changed_since(repo, rel, expect.get(rel)))
        keep = {rel: data for rel, data in files.items() if rel not in stale}
        if not keep:
            return "", stale
        text = subject(sorted(keep)) if callable(subject) else subject
        found = trailers(sorted(keep)) if callable(trailers) else trailers
        return commit_files(repo, keep, text, found, body() if callable(body) else body, wait=wait), stale


def _changed_since(repo: str, rel: str, seen: str | bytes | None) -> bool:
    now = read(repo, rel)
    return (now is not None) if seen is None else (now is None or now[0] != _as_bytes(seen))

