"""The git plumbing of `memrepo sync`: fetch without force, merge in memory, push without force.

Nothing here rewrites history: a fetch that would move a remote-tracking branch backwards (the
server's branch was force-pushed) is refused, a merge is computed with `git merge-tree` before
anything in the working tree changes, and a push is a plain fast-forward push.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field

from memrepo.errors import GitError
from memrepo.vcs import gitcmd

RESCUE_PREFIX = "refs/memrepo/rescue/"


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace").strip()


def git_ok(repo: str, *args: str, what: str, hint: str, env: dict[str, str] | None = None,
           input: bytes | None = None) -> str:
    """Run git; its stdout, or GitError naming `what` failed with git's own words and `hint`.
    A command another git's index lock refused is tried again for a while (`run_git_writing`)."""
    rc, out, err = gitcmd.run_git_writing(*args, cwd=repo, env=env, input=input)
    if rc != 0:
        raise GitError(f"{what} failed: {_text(err) or _text(out)}", hint=hint)
    return out.decode("utf-8", "surrogateescape").strip()


@dataclass
class Target:
    """Where sync pulls from and pushes to."""

    remote: str
    branch: str  # the local branch
    remote_branch: str

    @property
    def tracking(self) -> str:
        return f"refs/remotes/{self.remote}/{self.remote_branch}"

    @property
    def label(self) -> str:
        return f"{self.remote}/{self.remote_branch}"


def _config(repo: str, key: str) -> str | None:
    rc, out, _ = gitcmd.run_git("config", "--get", key, cwd=repo)
    return out.decode().strip() or None if rc == 0 else None


def target(repo: str, remote: str | None = None) -> Target:
    """The current branch, its upstream remote (else `remote`, else `origin`), and the branch there."""
    rc, out, _ = gitcmd.run_git("symbolic-ref", "--quiet", "--short", "HEAD", cwd=repo)
    branch = out.decode().strip()
    if rc != 0 or not branch:
        raise GitError(f"{repo} is not on a branch (detached HEAD), so there is nothing to sync",
                       hint=f"check out the branch to share: `git -C {repo} checkout main`")
    name = remote or _config(repo, f"branch.{branch}.remote") or "origin"
    remotes = git_ok(repo, "remote", what="git remote", hint="check the repository with `memrepo doctor`").split()
    if name not in remotes:
        raise GitError(f"{repo} has no remote {name!r} to sync with",
                       hint=f"add one: `git -C {repo} remote add {name} <url>` (a bare repository your machines can reach)")
    merge = _config(repo, f"branch.{branch}.merge") if not remote or remote == _config(repo, f"branch.{branch}.remote") else None
    remote_branch = merge[len("refs/heads/"):] if merge and merge.startswith("refs/heads/") else branch
    return Target(name, branch, remote_branch)


def fetch(repo: str, t: Target) -> str | None:
    """Fetch the remote branch into its tracking ref (never forced); its commit, or None when it has none yet."""
    rc, out, _ = gitcmd.run_git("ls-remote", "--heads", t.remote, f"refs/heads/{t.remote_branch}", cwd=repo)
    if rc != 0:
        git_ok(repo, "ls-remote", "--heads", t.remote, what=f"reaching {t.remote}",
               hint=f"check the remote's URL (`git -C {repo} remote -v`) and your network, then run `memrepo sync` again")
    if not out.strip():
        return None
    rc, out, err = gitcmd.run_git("fetch", "--no-progress", "--no-tags", "--no-write-fetch-head", t.remote,
                                  f"refs/heads/{t.remote_branch}:{t.tracking}", cwd=repo)
    if rc != 0:
        if b"non-fast-forward" in err or b"rejected" in err:
            raise GitError(
                f"{t.label} was rewritten on the server (force-pushed): it no longer contains what this clone "
                f"fetched before, so memrepo will not merge it; nothing here changed",
                hint=f"compare them with `git -C {repo} fetch {t.remote} {t.remote_branch} && git -C {repo} log --oneline "
                     f"--left-right {t.tracking}...FETCH_HEAD`; restore the server with `git -C {repo} push {t.remote} "
                     f"{t.tracking}:refs/heads/{t.remote_branch}` if the rewrite was a mistake")
        raise GitError(f"fetching {t.label} failed: {_text(err)}",
                       hint=f"check `git -C {repo} remote -v` and your network, then run `memrepo sync` again")
    return git_ok(repo, "rev-parse", "--verify", t.tracking, what="reading the fetched branch", hint="run `memrepo sync` again")


REVIEW_PREFIX = "memrepo/review/"


def fetch_review(repo: str, t: Target) -> bool:
    """Fetch the remote's review branches into `refs/remotes/<remote>/memrepo/review/*`, so
    `memrepo review` lists the proposals a teammate pushed; False when that failed (sync goes on:
    a proposal list is not worth stopping a sync for)."""
    spec = f"+refs/heads/{REVIEW_PREFIX}*:refs/remotes/{t.remote}/{REVIEW_PREFIX}*"
    rc, _, _ = gitcmd.run_git("fetch", "--no-progress", "--no-tags", "--no-write-fetch-head", "--prune", t.remote, spec, cwd=repo)
    return rc == 0


def fetch_heads(repo: str, t: Target) -> list[str]:
    """The remote's other branches (not the review ones), fetched into their tracking refs so their
    trees can be read; names only, [] when the remote cannot be listed."""
    rc, out, _ = gitcmd.run_git("ls-remote", "--heads", t.remote, cwd=repo)
    if rc != 0:
        return []
    names = [line.split("\t", 1)[1][len("refs/heads/"):] for line in out.decode("utf-8", "surrogateescape").splitlines()
             if "\trefs/heads/" in line]
    names = [n for n in names if not n.startswith(REVIEW_PREFIX) and n != t.remote_branch]
    if names:
        specs = [f"+refs/heads/{n}:refs/remotes/{t.remote}/{n}" for n in names]
        gitcmd.run_git("fetch", "--no-progress", "--no-tags", "--no-write-fetch-head", t.remote, *specs, cwd=repo)
    return names


def is_ancestor(repo: str, older: str, newer: str) -> bool:
    rc, _, _ = gitcmd.run_git("merge-base", "--is-ancestor", older, newer, cwd=repo)
    return rc == 0


def merge_base(repo: str, a: str, b: str) -> str | None:
    rc, out, _ = gitcmd.run_git("merge-base", a, b, cwd=repo)
    return out.decode().strip() or None if rc == 0 else None


def count(repo: str, spec: str) -> int:
    return int(git_ok(repo, "rev-list", "--count", spec, what="counting commits", hint="run `memrepo sync` again") or 0)


@dataclass
class Merged:
    """A merge computed without touching the working tree."""

    tree: str | None  # None when it conflicts
    conflicts: list[str] = field(default_factory=list)
    messages: str = ""


def merge_tree(repo: str, ours: str, theirs: str) -> Merged:
    """`git merge-tree --write-tree`: the merged tree (custom merge drivers apply), or its conflicts."""
    rc, out, err = gitcmd.run_git("merge-tree", "--write-tree", "--name-only", "--no-messages", ours, theirs, cwd=repo)
    if rc not in (0, 1):
        if b"unrelated histories" in err:
            raise GitError("the remote's history shares no commit with this one, so memrepo will not merge them",
                           hint="this clone and the remote hold different memory repositories: check `git remote -v`")
        raise GitError(f"git merge-tree failed: {_text(err)}", hint="git 2.38 or newer is needed for `memrepo sync`")
    lines = out.decode("utf-8", "surrogateescape").split("\n")
    if rc == 0:
        return Merged(lines[0].strip())
    conflicts = sorted({line for line in lines[1:] if line.strip()})
    _, detail, _ = gitcmd.run_git("merge-tree", "--write-tree", "--name-only", ours, theirs, cwd=repo)
    return Merged(None, conflicts, detail.decode("utf-8", "replace").split("\n\n", 1)[-1].strip())


def rescue(repo: str, sha: str) -> str:
    """Keep `sha` under refs/memrepo/rescue/<UTC time> (a ref no sync, gc or push touches).

    A sha already kept keeps its ref: sync from cron meeting one conflict every half hour makes one.
    """
    rc, out, _ = gitcmd.run_git("for-each-ref", "--format=%(refname)", "--points-at", sha, RESCUE_PREFIX, cwd=repo)
    kept = out.decode("utf-8", "surrogateescape").split() if rc == 0 else []
    if kept:
        return sorted(kept)[0]
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    ref, n = RESCUE_PREFIX + stamp, 1
    while gitcmd.run_git("rev-parse", "--verify", "-q", ref, cwd=repo)[0] == 0:
        n += 1
        ref = f"{RESCUE_PREFIX}{stamp}-{n}"
    git_ok(repo, "update-ref", ref, sha, what="saving the rescue ref", hint="run `memrepo sync` again")
    return ref


def commit_tree(repo: str, tree: str, parents: list[str], message: str) -> str:
    args = ["commit-tree", tree]
    for p in parents:
        args += ["-p", p]
    return git_ok(repo, *args, "-F", "-", what="writing the merge commit", hint="run `memrepo sync` again",
                  input=message.encode("utf-8"))


def push(repo: str, t: Target) -> bool:
    """Push HEAD to the remote branch as a fast-forward; False when the remote moved meanwhile."""
    rc, out, err = gitcmd.run_git("push", "--quiet", "--porcelain", t.remote, f"HEAD:refs/heads/{t.remote_branch}", cwd=repo)
    if rc == 0:
        gitcmd.run_git("update-ref", t.tracking, "HEAD", cwd=repo)
        if _config(repo, f"branch.{t.branch}.remote") is None:  # the first push: the next sync knows where it syncs
            gitcmd.run_git("branch", "-q", f"--set-upstream-to={t.remote}/{t.remote_branch}", t.branch, cwd=repo)
        return True
    text = _text(out) + "\n" + _text(err)
    if "[rejected]" in text or "non-fast-forward" in text or "fetch first" in text:
        return False
    raise GitError(f"pushing to {t.label} failed: {text.strip()}",
                   hint=f"check that you may push to {t.remote} (`git -C {repo} push --dry-run`), then run `memrepo sync` again")


def temp_index_env(repo: str, tree: str) -> tuple[dict[str, str], str]:
    """An environment whose GIT_INDEX_FILE holds `tree`, for validating a tree as pre-commit would."""
    gitdir = git_ok(repo, "rev-parse", "--absolute-git-dir", what="finding the git dir", hint="run `memrepo doctor`")
    where = os.path.join(gitdir, f"memrepo-sync-index-{os.getpid()}")
    env = dict(os.environ, GIT_INDEX_FILE=where)
    git_ok(repo, "read-tree", tree, env=env, what="reading the merged tree", hint="run `memrepo sync` again")
    return env, where


_REMOTE_HINT = "check the remote with `git remote -v` and the repository with `memrepo doctor`"


def remote_heads(repo: str, remote: str, *patterns: str) -> set[str]:
    """The branches `remote` has now among `patterns` (asks the remote: `git ls-remote --heads`)."""
    out = git_ok(repo, "ls-remote", "--heads", remote, *patterns, what="git ls-remote", hint=_REMOTE_HINT)
    return {line.split("\t", 1)[1][len("refs/heads/"):] for line in out.splitlines() if "\t" in line}


def fetch_branch(repo: str, remote: str, branch: str, ref: str) -> str:
    """Fetch `remote`'s `branch` into `ref` (forced: a ref nothing else reads); its commit."""
    git_ok(repo, "fetch", "-q", "--no-tags", "--no-write-fetch-head", remote, f"+refs/heads/{branch}:{ref}",
           what="git fetch", hint=_REMOTE_HINT)
    return git_ok(repo, "rev-parse", "--verify", ref, what="git rev-parse", hint=_REMOTE_HINT)


def push_ref(repo: str, remote: str, src: str, dst: str) -> None:
    """Push `src` (a commit or a ref) to `remote`'s `dst` without force."""
    git_ok(repo, "push", "-q", remote, f"{src}:{dst}", what="git push", hint=_REMOTE_HINT)


def fetch_tracking(repo: str, remote: str, branch: str, hint: str = _REMOTE_HINT) -> str:
    """Fetch `remote`'s `branch` into its remote-tracking ref; the commit it names now."""
    ref = f"refs/remotes/{remote}/{branch}"
    git_ok(repo, "fetch", "-q", "--no-tags", remote, f"refs/heads/{branch}:{ref}", what="git fetch", hint=hint)
    return git_ok(repo, "rev-parse", "--verify", ref, what="git rev-parse", hint=hint)


def push_leased(repo: str, remote: str, sha: str, branch: str, hint: str = _REMOTE_HINT) -> None:
    """Push `sha` to `remote`'s `branch`, replacing it only when it is what this clone last saw
    (`--force-with-lease`: a proposal branch memrepo owns, pushed again)."""
    git_ok(repo, "push", "-q", "--force-with-lease", remote, f"{sha}:refs/heads/{branch}", what="git push", hint=hint)

def tree_of(repo: str, rev: str) -> str:
    """The tree of commit `rev`."""
    return git_ok(repo, "rev-parse", f"{rev}^{{tree}}", what="reading the remote tree", hint="run sync again")


def fast_forward(repo: str, target: str) -> None:
    """Move the current branch, the index and the working tree to `target`, a descendant of HEAD."""
    git_ok(repo, "merge", "--ff-only", "--quiet", target, what="updating the working tree",
           hint="move the files git names out of the way, then run `memrepo sync` again (nothing was merged)")


def diff_names(repo: str, base: str, tip: str, folder: str, diff_filter: str, what: str) -> list[str]:
    """The paths below `folder` that `tip` changes against `base`, of git's `diff_filter` letters."""
    out = git_ok(repo, "diff", "--name-only", "-z", f"--diff-filter={diff_filter}", base, tip, "--", folder,
                 what=what, hint="run sync again")
    return [p for p in out.split("\0") if p]


def added_blobs(repo: str, base: str, tip: str, folder: str) -> dict[str, str]:
    """{path: blob id} of the files below `folder` that `tip` adds against `base`."""
    out = git_ok(repo, "diff", "--raw", "--no-renames", "--diff-filter=A", "-z", base, tip, "--", folder,
                 what="listing added memories", hint="run sync again")
    fields = out.split("\0")
    return {rel: meta.split()[3] for meta, rel in zip(fields[0::2], fields[1::2])}
