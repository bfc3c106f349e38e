"""Joining memory that already lives on a remote: a second machine, or a teammate.

`git clone` of a bare repository whose HEAD names a branch nobody pushed (`master`, while the
team's memory is on `main`, or the other way round) leaves an unborn branch beside the
remote-tracking branch that holds the memory. A fresh layout committed there would be a second,
unrelated history, and `memrepo sync` would push it to the team as a second branch (issue 37).

So `memrepo init` first looks at what the remote already holds (`choose`) and, when this clone
holds no memory of its own, checks out that branch tracking the remote's (`adopt`) instead of
starting a history. A clone that holds memories is never switched: its memories are merged by
`memrepo sync`, or sync says why it cannot. `memrepo init --from URL` is the one command for both
(`clone_or_attach` first).

Only remote-tracking refs are read here (what the last clone or fetch brought); the network is
touched by `clone_or_attach` and by sync alone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from memrepo.errors import GitError, MemrepoError
from memrepo.recall import paths
from memrepo.vcs import gitcmd, remote as rem

# Preferred, in this order, when the remote holds memory on several branches and its HEAD names none of them.
USUAL_BRANCHES = ("main", "master")


def _git(repo: str, *args: str) -> tuple[int, str]:
    rc, out, _ = gitcmd.run_git(*args, cwd=repo, env=gitcmd.no_git_env())
    return rc, out.decode("utf-8", "surrogateescape").strip()


def current_branch(repo: str) -> str | None:
    """The branch HEAD names, born or not; None on a detached HEAD."""
    rc, out = _git(repo, "symbolic-ref", "--quiet", "--short", "HEAD")
    return out if rc == 0 and out else None


def default_remote(repo: str) -> str | None:
    """`origin`, else the only remote; None when there is none (or several and no origin)."""
    rc, out = _git(repo, "remote")
    names = out.split() if rc == 0 else []
    if "origin" in names:
        return "origin"
    return names[0] if len(names) == 1 else None


def remote_branches(repo: str, remote: str) -> list[str]:
    """The remote's branches as last fetched, without its HEAD and memrepo's review branches."""
    prefix = f"refs/remotes/{remote}/"
    rc, out = _git(repo, "for-each-ref", "--format=%(refname)", prefix)
    names = [ref[len(prefix):] for ref in out.split()] if rc == 0 else []
    return sorted(n for n in names if n != "HEAD" and not n.startswith(rem.REVIEW_PREFIX))


def memory_count(repo: str, rev: str) -> int:
    """How many memory files the tree of `rev` holds (0 for a layout alone, -1 when it has no memory/)."""
    rc, out = _git(repo, "ls-tree", "--name-only", f"{rev}:{paths.MEMORY_DIR}")
    if rc != 0:
        return -1
    return sum(1 for name in out.split("\n") if name.endswith(".md"))


def _remote_head(repo: str, remote: str) -> str | None:
    rc, out = _git(repo, "symbolic-ref", "--quiet", f"refs/remotes/{remote}/HEAD")
    prefix = f"refs/remotes/{remote}/"
    return out[len(prefix):] if rc == 0 and out.startswith(prefix) else None


def memory_branches(repo: str, remote: str) -> dict[str, int]:
    """The remote's branches that hold a memory layout, with their number of memories."""
    found = {}
    for name in remote_branches(repo, remote):
        n = memory_count(repo, f"refs/remotes/{remote}/{name}")
        if n >= 0:
            found[name] = n
    return found


def choose(repo: str, remote: str, branch: str | None = None) -> str | None:
    """The remote's branch that holds the team's memory; None when the remote holds none yet.

    Branches with memories come before branches with a layout alone (a machine that forked the
    memory with an empty layout must not win); among them the remote's HEAD, then the only one,
    then `main`, then `master`. Several and none of those: a MemrepoError that names them.
    """
    found = memory_branches(repo, remote)
    if branch is not None:
        if branch not in found:
            held = ", ".join(sorted(found)) or "none"
            raise MemrepoError(f"{remote} has no memory on a branch {branch!r} (branches with memory: {held})",
                               hint="leave out --branch, or name one of those")
        return branch
    populated = [b for b, n in found.items() if n > 0] or list(found)
    if not populated:
        return None
    head = _remote_head(repo, remote)
    if head in populated:
        return head
    if len(populated) == 1:
        return populated[0]
    for name in USUAL_BRANCHES:
        if name in populated:
            return name
    raise MemrepoError(f"{remote} holds memory on several branches ({', '.join(sorted(populated))}), and its HEAD "
                       "names none of them", hint="say which one: `memrepo init --from URL --branch NAME`")


@dataclass
class Adopted:
    remote: str
    branch: str
    memories: int
    left: str | None = None  # the branch this clone was on, when it had commits and was left as it was
    rescue: str | None = None  # where those commits are kept when the branch itself was moved


def adopt(repo: str, branch: str | None = None) -> Adopted | None:
    """Check out the remote's memory branch when this clone holds no memory of its own.

    None when there is nothing to adopt: no remote, a remote without memory, a clone that holds
    memories (sync merges those), or a clone already on the remote's branch and not ahead of it
    in a way that matters (sync fast-forwards). Never loses a commit: a local branch that is
    moved is kept under refs/memrepo/rescue/ first.
    """
    remote = default_remote(repo)
    if remote is None:
        return None
    target = choose(repo, remote, branch)
    if target is None:
        return None
    tracking = f"refs/remotes/{remote}/{target}"
    ours = gitcmd.head(repo, env=gitcmd.no_git_env())
    if ours is not None and memory_count(repo, ours) > 0:
        return None
    here = current_branch(repo)
    related = ours is not None and rem.is_ancestor(repo, ours, tracking)
    if here == target and (ours is None or related):
        if ours is None:
            _checkout(repo, target, tracking)
            return Adopted(remote, target, memory_count(repo, tracking))
        return None  # already on it; sync fast-forwards
    rescue = None
    rc, local = _git(repo, "rev-parse", "--verify", "-q", f"refs/heads/{target}")
    if rc == 0 and local and not rem.is_ancestor(repo, local, tracking):
        if memory_count(repo, local) > 0:
            raise MemrepoError(f"this clone has its own branch {target!r} with memories that {remote}/{target} does not have",
                               hint=f"merge them: `git -C {repo} checkout {target} && memrepo sync`")
        rescue = rem.rescue(repo, local)
    if ours is not None and not related and here == target:
        rescue = rescue or rem.rescue(repo, ours)
    _checkout(repo, target, tracking)
    left = here if ours is not None and here != target else None
    return Adopted(remote, target, memory_count(repo, tracking), left=left, rescue=rescue)


def _checkout(repo: str, branch: str, tracking: str) -> None:
    rc, _, err = gitcmd.run_git("checkout", "-q", "-B", branch, tracking, cwd=repo, env=gitcmd.no_git_env())
    if rc != 0:
        raise GitError(f"checking out {tracking} failed: {err.decode('utf-8', 'replace').strip()}",
                       hint=f"move the files git names out of {repo}, then run `memrepo init` again (nothing was committed)")
    remote = tracking.split("/")[2]
    gitcmd.run_git("branch", "-q", f"--set-upstream-to={remote}/{branch}", branch, cwd=repo, env=gitcmd.no_git_env())


def clone_or_attach(url: str, root: str) -> str:
    """Make `root` a clone of `url` (cloned when absent or empty, else its `origin` checked and
    fetched); returns what was done, for the report. Raises with the fix when `root` is in the way."""
    if not os.path.exists(root) or (os.path.isdir(root) and not os.listdir(root)):
        os.makedirs(os.path.dirname(root) or ".", exist_ok=True)
        rc, _, err = gitcmd.run_git("clone", "-q", "--origin", "origin", "--", url, root,
                                    cwd=os.path.dirname(root) or ".", env=gitcmd.no_git_env())
        if rc != 0:
            text = err.decode("utf-8", "replace").strip()
            raise GitError(f"git clone {url} failed: {text}",
                           hint="check the URL and that you may read it (`git ls-remote URL`), then run it again")
        return f"cloned {url}"
    if not os.path.exists(os.path.join(root, ".git")):
        raise MemrepoError(f"{root} exists and is not a git repository, so memrepo will not clone into it",
                           hint="name another directory (`memrepo init --from URL DIRECTORY`), or move it away")
    rc, current = _git(root, "remote", "get-url", "origin")
    if rc != 0:
        rc, _, err = gitcmd.run_git("remote", "add", "origin", url, cwd=root, env=gitcmd.no_git_env())
        if rc != 0:
            raise GitError(f"git remote add origin {url} failed: {err.decode('utf-8', 'replace').strip()}",
                           hint=f"check `git -C {root} remote -v`")
        did = f"added origin {url}"
    elif current != url:
        raise MemrepoError(f"{root} already syncs with {current}, not {url}",
                           hint=f"to switch, run `git -C {root} remote set-url origin {url}` first")
    else:
        did = f"fetched {url}"
    # Not forced: a branch rewritten on the server stops here as it stops sync (`remote.fetch`).
    rc, _, err = gitcmd.run_git("fetch", "-q", "--no-tags", "origin", "refs/heads/*:refs/remotes/origin/*",
                                cwd=root, env=gitcmd.no_git_env())
    if rc != 0:
        raise GitError(f"fetching {url} failed: {err.decode('utf-8', 'replace').strip()}",
                       hint="check the URL and your network, then run it again")
    return did
