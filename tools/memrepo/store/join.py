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

from memrepo.errors import MemrepoError
from memrepo.base import paths
from memrepo.vcs import clone, gitcmd, refs, remote as rem, trees

# Preferred, in this order, when the remote holds memory on several branches and its HEAD names none of them.
USUAL_BRANCHES = ("main", "master")


def current_branch(repo: str) -> str | None:
    """The branch HEAD names, born or not; None on a detached HEAD."""
    return refs.current_branch(repo, env=gitcmd.no_git_env())


def default_remote(repo: str) -> str | None:
    """`origin`, else the only remote; None when there is none (or several and no origin)."""
    names = refs.remotes(repo, env=gitcmd.no_git_env())
    if "origin" in names:
        return "origin"
    return names[0] if len(names) == 1 else None


def remote_branches(repo: str, remote: str) -> list[str]:
    """The remote's branches as last fetched, without its HEAD and memrepo's review branches."""
    prefix = f"refs/remotes/{remote}/"
    names = [ref[len(prefix):] for ref in refs.names(repo, prefix, env=gitcmd.no_git_env()) or []]
    return sorted(n for n in names if n != "HEAD" and not n.startswith(rem.REVIEW_PREFIX))


def memory_count(repo: str, rev: str) -> int:
    """How many memory files the tree of `rev` holds (0 for a layout alone, -1 when it has no memory/)."""
    names = trees.names(repo, rev, paths.MEMORY_DIR, env=gitcmd.no_git_env())
    return -1 if names is None else sum(1 for name in names if name.endswith(".md"))


def _remote_head(repo: str, remote: str) -> str | None:
    out = refs.symbolic(repo, f"refs/remotes/{remote}/HEAD", env=gitcmd.no_git_env()) or ""
    prefix = f"refs/remotes/{remote}/"
    return out[len(prefix):] if out.startswith(prefix) else None


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
            clone.checkout_tracking(repo, target, tracking)
            return Adopted(remote, target, memory_count(repo, tracking))
        return None  # already on it; sync fast-forwards
    rescue = None
    local = refs.resolve(repo, f"refs/heads/{target}", env=gitcmd.no_git_env())
    if local and not rem.is_ancestor(repo, local, tracking):
        if memory_count(repo, local) > 0:
            raise MemrepoError(f"this clone has its own branch {target!r} with memories that {remote}/{target} does not have",
                               hint=f"merge them: `git -C {repo} checkout {target} && memrepo sync`")
        rescue = rem.rescue(repo, local)
    if ours is not None and not related and here == target:
        rescue = rescue or rem.rescue(repo, ours)
    clone.checkout_tracking(repo, target, tracking)
    left = here if ours is not None and here != target else None
    return Adopted(remote, target, memory_count(repo, tracking), left=left, rescue=rescue)


def clone_or_attach(url: str, root: str) -> str:
    """Make `root` a clone of `url` (cloned when absent or empty, else its `origin` checked and
    fetched); returns what was done, for the report. Raises with the fix when `root` is in the way."""
    if not os.path.exists(root) or (os.path.isdir(root) and not os.listdir(root)):
        os.makedirs(os.path.dirname(root) or ".", exist_ok=True)
        clone.clone(url, root)
        return f"cloned {url}"
    if not os.path.exists(os.path.join(root, ".git")):
        raise MemrepoError(f"{root} exists and is not a git repository, so memrepo will not clone into it",
                           hint="name another directory (`memrepo init --from URL DIRECTORY`), or move it away")
    current = refs.remote_url(root, "origin", env=gitcmd.no_git_env())
    if current is None:
        clone.add_origin(root, url)
        did = f"added origin {url}"
    elif current != url:
        raise MemrepoError(f"{root} already syncs with {current}, not {url}",
                           hint=f"to switch, run `git -C {root} remote set-url origin {url}` first")
    else:
        did = f"fetched {url}"
    clone.fetch_origin(root, url)
    return did
