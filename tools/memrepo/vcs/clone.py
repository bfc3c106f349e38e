"""Getting a repository from a remote: clone it, or attach an existing one to it and fetch, and
check out a branch that tracks the remote's. For `memrepo init --from URL` (`store.join`).

Every call runs without the GIT_* variables a hook inherits (`gitcmd.no_git_env`): `init` may
run from inside another repository's hook, and these commands touch a different repository.
"""

from __future__ import annotations

import os

from memrepo.errors import GitError
from memrepo.vcs import gitcmd


def _git(cwd: str, *args: str) -> tuple[int, str]:
    rc, _, err = gitcmd.run_git(*args, cwd=cwd, env=gitcmd.no_git_env())
    return rc, err.decode("utf-8", "replace").strip()


def clone(url: str, root: str) -> None:
    """`git clone` `url` into `root` as remote `origin`."""
    rc, err = _git(os.path.dirname(root) or ".", "clone", "-q", "--origin", "origin", "--", url, root)
    if rc != 0:
        raise GitError(f"git clone {url} failed: {err}",
                       hint="check the URL and that you may read it (`git ls-remote URL`), then run it again")


def add_origin(root: str, url: str) -> None:
    rc, err = _git(root, "remote", "add", "origin", url)
    if rc != 0:
        raise GitError(f"git remote add origin {url} failed: {err}", hint=f"check `git -C {root} remote -v`")


def fetch_origin(root: str, url: str) -> None:
    """Fetch every branch of `origin` into its remote-tracking branches. Not forced: a branch
    rewritten on the server stops here as it stops sync (`remote.fetch`)."""
    rc, err = _git(root, "fetch", "-q", "--no-tags", "origin", "refs/heads/*:refs/remotes/origin/*")
    if rc != 0:
        raise GitError(f"fetching {url} failed: {err}", hint="check the URL and your network, then run it again")


def checkout_tracking(repo: str, branch: str, tracking: str) -> None:
    """Point `branch` at `tracking` (`refs/remotes/<remote>/<branch>`), check it out, and make it track it."""
    rc, err = _git(repo, "checkout", "-q", "-B", branch, tracking)
    if rc != 0:
        raise GitError(f"checking out {tracking} failed: {err}",
                       hint=f"move the files git names out of {repo}, then run `memrepo init` again (nothing was committed)")
    remote = tracking.split("/")[2]
    _git(repo, "branch", "-q", f"--set-upstream-to={remote}/{branch}", branch)
