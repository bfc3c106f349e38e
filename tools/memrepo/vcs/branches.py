"""Commits on branches other than the current one, with plumbing on purpose: review proposals
and their pull request branches.

Each is built in a temporary index (`read-tree`, `update-index` or `apply --cached`,
`write-tree`) and committed with `commit-tree`, and a branch moves only by a compare-and-swap
`update-ref`: the user's working tree, index and current branch are never touched.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from memrepo.errors import GitError
from memrepo.vcs import gitcmd

_HINT = "check the repository with `git status` and `memrepo doctor`"


def _git(repo: str, *args: str, input: bytes | None = None, env: dict[str, str] | None = None, hint: str = _HINT) -> str:
    rc, out, err = gitcmd.run_git(*args, cwd=repo, input=input, env=env)
    if rc != 0:
        raise GitError(f"git {args[0]} failed: {err.decode('utf-8', 'replace').strip()}", hint=hint)
    return out.decode("utf-8", "replace").strip()


@contextmanager
def _scratch_index(repo: str, tree: str) -> Iterator[dict[str, str]]:
    """An environment whose GIT_INDEX_FILE is a temporary index holding `tree`."""
    with tempfile.TemporaryDirectory(prefix="memrepo-branch-") as tmp:
        env = {**os.environ, "GIT_INDEX_FILE": os.path.join(tmp, "index")}
        _git(repo, "read-tree", tree, env=env)
        yield env


def commit_files_on(repo: str, ref: str, parent: str, old: str | None, files: dict[str, str], message: str) -> str:
    """Commit `files` ({repo-relative path: new text}) on top of `parent` and move `ref` there,
    provided it still points at `old` (None: it must not exist yet); returns the new commit."""
    with _scratch_index(repo, parent) as env:
        for rel, text in sorted(files.items()):
            blob = _git(repo, "hash-object", "-w", "--stdin", input=text.encode("utf-8"))
            _git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}", env=env)
        tree = _git(repo, "write-tree", env=env)
    sha = _git(repo, "commit-tree", tree, "-p", parent, "-F", "-", input=message.encode("utf-8"))
    _git(repo, "update-ref", ref, sha, old or "0" * 40)
    return sha


def commit_file(repo: str, parent: str, rel: str, text: str, message: str, hint: str = _HINT) -> str:
    """A commit on `parent` whose tree is `parent`'s with `rel` holding `text`; no ref moves
    (a proposal pushed to a team's remote as it is: `memrepo share`, `forget`)."""
    with _scratch_index(repo, parent) as env:
        blob = _git(repo, "hash-object", "-w", "--stdin", input=text.encode("utf-8"), hint=hint)
        _git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}", env=env, hint=hint)
        tree = _git(repo, "write-tree", env=env, hint=hint)
    return _git(repo, "commit-tree", tree, "-p", parent, "-F", "-", input=message.encode("utf-8"), hint=hint)

def applied_tree(repo: str, sha: str, base: str) -> str | None:
    """The tree of `base` with commit `sha`'s change applied; None when it no longer applies
    there or `base` holds the change already."""
    patch = gitcmd.run_git("diff-tree", "-p", "--binary", "--no-color", "--full-index", f"{sha}^", sha, cwd=repo)[1]
    with _scratch_index(repo, base) as env:
        rc, _, _ = gitcmd.run_git("apply", "--cached", "-", cwd=repo, input=patch, env=env)
        if rc != 0:
            return None
        tree = _git(repo, "write-tree", env=env)
    return None if tree == _git(repo, "rev-parse", f"{base}^{{tree}}") else tree


def commit_tree(repo: str, tree: str, parent: str, message: str, hint: str = _HINT) -> str:
    """A commit of `tree` on `parent` that no branch names yet."""
    return _git(repo, "commit-tree", tree, "-p", parent, "-F", "-", input=message.encode("utf-8"), hint=hint)


def pick(repo: str, sha: str) -> str | None:
    """Apply commit `sha`'s change to the working tree and index, committing nothing (the caller's
    transaction commits or restores it); git's complaint when it does not apply, else None."""
    try:
        rc, _, err = gitcmd.run_git("cherry-pick", "--no-commit", sha, cwd=repo)
        return err.decode("utf-8", "replace").strip() if rc != 0 else None
    finally:
        gitcmd.run_git("cherry-pick", "--quit", cwd=repo)  # keep what it wrote
