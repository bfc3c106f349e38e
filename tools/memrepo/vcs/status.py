"""What git says of a work tree: uncommitted paths, and the branches a repository has."""

from __future__ import annotations

from memrepo.vcs import gitcmd


def dirty_paths(repo: str, *under: str) -> set[str] | None:
    """Repository-relative paths below the `under` pathspecs with uncommitted changes (untracked
    included); None when git could not say.

    Reads `git status --porcelain=v1 -z`: a rename or copy entry is followed by its origin path
    as an entry of its own, and both count as changed.
    """
    rc, out, _ = gitcmd.run_git("--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all", "--", *under,
                                cwd=repo, env=gitcmd.no_git_env())
    if rc != 0:
        return None
    found: set[str] = set()
    entries = gitcmd.split_z(out)
    i = 0
    while i < len(entries):
        entry = entries[i]
        found.add(entry[3:])
        if entry[:1] in "RC" or entry[1:2] in "RC":
            i += 1
            if i < len(entries):
                found.add(entries[i])
        i += 1
    return found


def dirty_ids(repo: str, memory_dir: str) -> set[str]:
    """Ids of memory files (`<memory_dir>/<id>.md`) with uncommitted changes; a pass leaves them to their author."""
    prefix = memory_dir.rstrip("/") + "/"
    return {p[len(prefix):-3] for p in dirty_paths(repo, memory_dir) or set()
            if p.startswith(prefix) and p.endswith(".md") and "/" not in p[len(prefix):]}


def branch_exists(where: str, branch: str, timeout: float) -> bool | None:
    """Whether the repository at `where` has `branch`, locally or on any remote; None when git could not say."""
    rc, out, _ = gitcmd.run_git("-C", where, "for-each-ref", "--format=%(refname)", f"refs/heads/{branch}",
                                f"refs/remotes/*/{branch}", cwd=where, env=gitcmd.no_git_env(), timeout=timeout)
    return bool(out.strip()) if rc == 0 else None


def _porcelain(repo: str, *under: str, ignored: bool = True) -> list[str] | None:
    rc, out, _ = gitcmd.run_git("--no-optional-locks", "status", "--porcelain", "-z", "--untracked-files=all",
                                *(() if ignored else ("--ignored=no",)), "--", *under, cwd=repo)
    return gitcmd.split_z(out) if rc == 0 else None


def clean(repo: str, *under: str) -> bool:
    """True when git sees nothing below `under` that HEAD does not hold: no change, no new file.

    One `git status` (git's own stat cache, in C; no lock taken), not a Python scan of N files."""
    return _porcelain(repo, *under, ignored=False) == []


def uncommitted(repo: str, *under: str) -> tuple[list[str], list[str]]:
    """(staged paths, changed or new but unstaged paths) below `under`; ([], []) when git could not say."""
    staged: list[str] = []
    unstaged: list[str] = []
    for entry in _porcelain(repo, *under) or []:
        if len(entry) < 4 or entry[2] != " ":
            continue  # the second path of a rename
        code, rel = entry[:2], entry[3:]
        (staged if code[0] not in " ?" else unstaged).append(rel)
    return staged, unstaged


def tracked(repo: str, *pathspecs: str) -> list[str] | None:
    """The tracked paths below `pathspecs`; None when git could not say."""
    rc, out, _ = gitcmd.run_git("ls-files", "-z", "--", *pathspecs, cwd=repo)
    return gitcmd.split_z(out) if rc == 0 else None
