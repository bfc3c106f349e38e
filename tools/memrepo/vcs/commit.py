"""The one way memrepo commits: write files, stage exactly them, commit them; or change nothing.

`commit_files` holds the repository lock (`vcs.lock`), writes every file atomically, stages
exactly those paths (paths on stdin, any number: a bulk pass commits thousands) into the real
index and into memrepo's own index (`vcs.staging`: HEAD's tree and nothing else), and commits
that one with `git commit -F -`, the message on stdin. Whatever else the user has staged stays
staged and out of the commit; git writes no temporary index of every entry, as a pathspec
commit did (issue 44: 1.04 s of a 1.71 s add at 100,000 memories). A trailer whose value is a
list is repeated, one line per item (a bulk pass records one `Memrepo-Decision` per memory).
The repository's own hooks run on that commit: pre-commit validates what memrepo wrote like
anything else, post-commit indexes it, exactly once. On any failure (a pre-commit rejection,
an exception, ^C) every path is put back byte for byte and nothing stays staged for it; a
`kill -9` that leaves no chance to do so is undone by the next writer (`vcs.journal`).

`chain.commit_chain` takes these steps once for many writers' changes, a commit each (the group
commit, `vcs.group`: writers that find the lock held leave their change to its holder).

`transaction` + `commit_staged` are the same steps for a writer that lets git change the files
(`git revert --no-commit`, `git cherry-pick --no-commit`), and `record` is the commit that changes
no file (a review's reject, an undo whose run cancelled out): hooks and indexing as for any other.

Where memrepo's own pre-commit and post-commit shims are all `git commit` would run, a writer
that passes `Hooks` does their work itself and commits with `commit-tree` and a compare-and-swap
`update-ref` (`_commit_inline`); either way the commit's parent is the HEAD memrepo's index was
made from, or the commit is tried again on the new HEAD.

Plumbing on purpose, each in one place: `store.sync` makes its merge commits with `commit-tree`
(it validates the merged tree before HEAD moves), and review branches are written with
`commit-tree` and a compare-and-swap `update-ref` (`passes/curate/review.py` and `publish.py`):
neither touches the user's working tree, index or current branch.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from memrepo.errors import Deferred, GitError
from memrepo.vcs import gitcmd, hookwire, journal, lock, staging, trailers as trailer_text
from memrepo.vcs.change import Hooks
from memrepo.vcs.journal import Snapshot, nul as _nul, read, restore, write_atomic as _write

# What a person may be in the middle of, by the file git keeps for it (in the worktree's git dir).
_IN_PROGRESS = (("MERGE_HEAD", "a merge"), ("rebase-merge", "a rebase"), ("rebase-apply", "a rebase or `git am`"),
                ("CHERRY_PICK_HEAD", "a cherry-pick"), ("REVERT_HEAD", "a revert"))
gitcmd.ask_together(*(name for name, _ in _IN_PROGRESS))


class OperationInProgress(Deferred, GitError):
    """A merge, rebase, cherry-pick or revert is under way: memrepo writes nothing into it."""


def in_progress(repo: str) -> str | None:
    """What git operation is under way in `repo` ("a merge", ...), or None."""
    found = gitcmd.git_paths(repo, *(name for name, _ in _IN_PROGRESS))
    for (_, what), place in zip(_IN_PROGRESS, found or ()):
        if os.path.lexists(place):
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
def transaction(repo: str, rels: list[str], wait: float = lock.WAIT,
                after: Mapping[str, bytes | None] | None = None) -> Iterator[str | None]:
    """Hold the repository lock; if the block raises before its commit lands, restore `rels`.

    First undoes what a writer killed mid-commit left behind, then journals `rels` (and `after`,
    what the block will write, when known) so that the next writer can undo this one. Yields the
    commit HEAD was when the journal was written (None: no commit yet).
    """
    with lock.held(repo, wait):
        journal.recover(repo)
        refuse_in_progress(repo)
        before: Snapshot = {rel: read(repo, rel) for rel in rels}
        head = gitcmd.head(repo)
        record = journal.write(repo, head, before, after)
        try:
            yield head
        except BaseException:
            if gitcmd.head(repo) == head:
                restore(repo, before, head)
            else:
                # HEAD moved: this commit landed (^C just after it: its files are history now), or
                # only a person's did (the compare-and-swap failed, then so did the next try):
                # each path judged as the next writer would judge it, put back unless HEAD holds it.
                journal.recover(repo)
            journal.drop(record)  # kept when the restore itself failed: the next writer retries it
            raise
        journal.drop(record)


def _stage(repo: str, rels: list[str], env: dict[str, str] | None = None) -> None:
    """Stage `rels` as the working tree holds them, a gone one removed: into the real index, or
    the one `env` names. `update-index` takes the paths as they are; `git add` matched them as
    pathspecs against a walk of their whole folder (84 ms of a one-file add at 100,000, issue 44)."""
    if rels:
        rc, out, err = gitcmd.run_git_writing("update-index", "--add", "--remove", "-z", "--stdin", cwd=repo,
                                              input=_nul(rels), env=env)
        if rc != 0:
            raise GitError(f"git update-index failed: {(err or out).decode('utf-8', 'replace').strip()}",
                           hint="check the repository with `git status` and `memrepo doctor`")


def commit_staged(repo: str, rels: list[str], subject: str, trailers: dict[str, Any], body: str = "",
                  hooks: Hooks | None = None) -> str:
    """Commit `rels` as the working tree holds them (call inside `transaction`); returns the sha.

    The commit's parent is the HEAD memrepo's index was made from, or it is not made: a person's
    commit landing meanwhile (they take no memrepo lock) must not be reverted by an index that
    predates it. Raises GitError with git's and the hooks' output when the commit is refused.
    """
    msg = message(subject, trailers, body).encode("utf-8")
    for _ in range(HEAD_MOVED_TRIES):
        base = gitcmd.head(repo)
        env = staging.open_for(repo, base)
        _stage(repo, rels, env)
        inline = hooks if hooks is not None and hookwire.only_ours(repo) else None
        if inline is not None:
            sha = _commit_inline(repo, inline, env, base, msg, subject)
        else:
            sha = _commit_with_git(repo, {**env, EXPECT_HEAD: base or ""}, msg)
        if sha:
            staging.landed(repo, sha)
            if inline is not None:
                inline.post_commit(repo, rels, base, sha)
            return sha
    raise GitError("HEAD kept moving while memrepo committed (another git is committing in this repository)",
                   hint="run the command again once the other commits are done")


HEAD_MOVED_TRIES = 3
EXPECT_HEAD = "MEMREPO_EXPECT_HEAD"  # for the pre-commit shim: refuse when HEAD is no longer this


def _commit_with_git(repo: str, env: dict[str, str], msg: bytes, *extra: str) -> str:
    """`git commit` of memrepo's index through the repository's hooks; "" when HEAD moved first."""
    rc, out, err = gitcmd.run_git_writing("commit", "-q", *extra, "-F", "-", cwd=repo, input=msg, env=env)
    if rc != 0:
        if HEAD_MOVED.encode() in err:
            return ""
        _refuse_without_identity(err)
        detail = "\n".join(s for s in (err.decode("utf-8", "replace").strip(), out.decode("utf-8", "replace").strip()) if s)
        raise GitError(f"git commit failed:\n{detail}", hint="fix the problems above, then run the command again")
    return gitcmd.head(repo) or ""


# What git says when it does not know who commits (no user.name/email, or user.useConfigOnly).
_NO_IDENTITY = (b"Please tell me who you are", b"empty ident name", b"no email was given", b"no name was given")


def _refuse_without_identity(err: bytes) -> None:
    """The error `memrepo init` gives when git cannot name the committer: git's own message asks
    for `git config` and says nothing of memrepo, and a hint to read `git status` was wrong."""
    if any(said in err for said in _NO_IDENTITY):
        raise GitError("git has no user name/email here, so memrepo cannot commit",
                       hint='run `git config --global user.name "You"` and `git config --global user.email you@example.com`')


HEAD_MOVED = "memrepo: HEAD moved since memrepo staged its commit"


def _commit_inline(repo: str, hooks: Hooks, env: dict[str, str], base: str | None, msg: bytes, subject: str) -> str:
    """The hooks' work here, then the commit as git makes it, its ref moved only from `base`
    (compare-and-swap); "" when HEAD moved first."""
    _validate(repo, hooks, {**env, EXPECT_HEAD: base or ""})
    sha = tree_commit(repo, env, base, msg)
    rc, _, err = gitcmd.run_git("update-ref", "-m", f"commit: {subject}", "HEAD", sha, base or "0" * len(sha), cwd=repo)
    return sha if rc == 0 else ""


def tree_commit(repo: str, env: dict[str, str], parent: str | None, msg: bytes) -> str:
    """A commit of the index `env` names on `parent` (None: a root commit); no ref moves."""
    rc, out, err = gitcmd.run_git("write-tree", cwd=repo, env=env)
    if rc == 0:
        rc, out, err = gitcmd.run_git("commit-tree", out.decode().strip(), *(("-p", parent) if parent else ()), "-F", "-",
                                      cwd=repo, input=msg)
    if rc != 0:
        _refuse_without_identity(err)
        raise GitError(f"git commit failed:\n{err.decode('utf-8', 'replace').strip()}",
                       hint="check the repository with `git status` and `memrepo doctor`")
    return out.decode().strip()


CHAIN_REF = "refs/memrepo/group-commit"  # fast-import's branch while a chain is made; never written


def chain_commits(repo: str, parent: str | None, commits: list[tuple[bytes, dict[str, bytes | None]]]) -> list[str]:
    """Commits on `parent`, each on the one before: (message, {path: new bytes, or None: deleted});
    their shas, no ref moved. One `git fast-import` for them all: write-tree and commit-tree per
    commit wrote a 10,000-entry folder's tree each time, loose (0.035 s of CPU a commit; ten
    commits here: 0.12 s, issue 44)."""
    ident = {}
    for who in ("AUTHOR", "COMMITTER"):
        rc, out, err = gitcmd.run_git("var", f"GIT_{who}_IDENT", cwd=repo)
        if rc != 0:
            _refuse_without_identity(err)
            raise GitError(f"git var failed: {err.decode('utf-8', 'replace').strip()}", hint="set user.name and user.email")
        ident[who] = out.strip()
    stream = [b"feature done\n"]
    for n, (msg, files) in enumerate(commits, 1):
        stream += [b"commit " + CHAIN_REF.encode() + b"\nmark :%d\n" % n, b"author " + ident["AUTHOR"] + b"\n",
                   b"committer " + ident["COMMITTER"] + b"\n", b"data %d\n" % len(msg), msg, b"\n"]
        if n == 1 and parent:
            stream.append(f"from {parent}\n".encode())
        for rel, data in sorted(files.items()):
            quoted = _fast_import_path(rel)
            if data is None:
                stream.append(b"D " + quoted + b"\n")
                continue
            mode = b"100755" if os.access(os.path.join(repo, rel), os.X_OK) else b"100644"
            stream += [b"M " + mode + b" inline " + quoted + b"\n", b"data %d\n" % len(data), data, b"\n"]
    # `reset` without `from` at the end: fast-import writes no ref for the branch, so no `update-ref
    # -d` runs after it (a git process of every hold, issue 44).
    stream += [b"get-mark :%d\n" % n for n in range(1, len(commits) + 1)]
    stream += [b"reset " + CHAIN_REF.encode() + b"\n\n", b"done\n"]
    # Its pack kept as it is (deltas between the chain's trees): exploding it into loose objects,
    # as fast-import does below 100 objects, tripled its CPU at 10,000 memories.
    rc, out, err = gitcmd.run_git("-c", "fastimport.unpackLimit=0", "fast-import", "--quiet", "--force", cwd=repo,
                                  input=b"".join(stream))
    shas = out.decode().split()
    if rc != 0 or len(shas) != len(commits):
        raise GitError(f"git fast-import failed:\n{err.decode('utf-8', 'replace').strip()}",
                       hint="check the repository with `git status` and `memrepo doctor`")
    return shas


def _fast_import_path(rel: str) -> bytes:
    """A path as fast-import reads it: C-quoted when it needs to be."""
    raw = rel.encode("utf-8", "surrogateescape")
    if not any(c in raw for c in (b'"', b"\\", b"\n")) and not raw.startswith(b'"'):
        return raw
    return b'"' + raw.replace(b"\\", b"\\\\").replace(b'"', b'\\"').replace(b"\n", b"\\n") + b'"'


def _validate(repo: str, hooks: Hooks, env: dict[str, str]) -> None:
    """pre-commit's validation of memrepo's index; its problems become the GitError git would raise."""
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        rc = hooks.pre_commit(repo, env)
    if rc != 0:
        raise GitError(f"git commit failed:\n{said.getvalue().strip()}", hint="fix the problems above, then run the command again")


def record(repo: str, subject: str, trailers: dict[str, Any], body: str = "", *, wait: float = lock.WAIT) -> str:
    """A commit that changes no file, on HEAD; returns its sha.

    `git commit --allow-empty` of memrepo's own index (`vcs.staging`, HEAD's tree): the
    repository's hooks run as for any commit (post-commit records the new HEAD in the cache,
    issue 40: the plumbing this replaced left the cache looking stale until a caller remembered
    to reindex), and whatever the user has staged stays staged and out of it.
    """
    with lock.held(repo, wait):
        refuse_in_progress(repo)
        msg = message(subject, trailers, body).encode("utf-8")
        for _ in range(HEAD_MOVED_TRIES):
            base = gitcmd.head(repo)
            env = staging.open_for(repo, base)
            sha = _commit_with_git(repo, {**env, EXPECT_HEAD: base or ""}, msg, "--allow-empty")
            if sha:
                staging.landed(repo, sha)
                return sha
        raise GitError("HEAD kept moving while memrepo committed (another git is committing in this repository)",
                       hint="run the command again once the other commits are done")


def message(subject: str, trailers: dict[str, Any], body: str = "") -> str:
    """The commit message (`trailers.message`, the one builder)."""
    return trailer_text.message(subject, trailers, body)


def commit_files(repo: str, files: Mapping[str, str | bytes | None], subject: str, trailers: dict[str, Any],
                 body: str = "", *, wait: float = lock.WAIT, hooks: Hooks | None = None) -> str:
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
            return commit_staged(repo, rels, subject, trailers, body, hooks)


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
                        *, wait: float = lock.WAIT, hooks: Hooks | None = None) -> tuple[str, list[str]]:
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
        return commit_files(repo, keep, text, found, body() if callable(body) else body, wait=wait, hooks=hooks), stale


def _changed_since(repo: str, rel: str, seen: str | bytes | None) -> bool:
    now = read(repo, rel)
    return (now is not None) if seen is None else (now is None or now[0] != _as_bytes(seen))


