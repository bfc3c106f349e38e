"""What names point at: a revision's commit, the branch HEAD names, the refs under a prefix,
the repository's top level and the files git keeps for it."""

from __future__ import annotations

import os

from memrepo.vcs import gitcmd


def _text(out: bytes) -> str:
    return out.decode("utf-8", "surrogateescape").strip()


def resolve(repo: str, rev: str, env: dict[str, str] | None = None) -> str | None:
    """The object `rev` names (`HEAD^1`, `refs/heads/x^{commit}`, `sha^{tree}`), or None."""
    rc, out, _ = gitcmd.run_git("rev-parse", "--verify", "-q", rev, cwd=repo, env=env)
    return _text(out) or None if rc == 0 else None


def toplevel(cwd: str) -> str | None:
    """The top of the work tree `cwd` is in, or None outside one."""
    rc, out, _ = gitcmd.run_git("rev-parse", "--show-toplevel", cwd=cwd)
    return _text(out) or None if rc == 0 else None


def git_path(repo: str, name: str) -> str:
    """Where git keeps `name` for this work tree (`index`, `index.lock`, `sequencer`), or ""."""
    rc, out, _ = gitcmd.run_git("rev-parse", "--git-path", name, cwd=repo)
    return os.path.join(repo, _text(out)) if rc == 0 else ""


def current_branch(repo: str, env: dict[str, str] | None = None) -> str | None:
    """The branch HEAD names, born or not; None on a detached HEAD."""
    rc, out, _ = gitcmd.run_git("symbolic-ref", "--quiet", "--short", "HEAD", cwd=repo, env=env)
    return _text(out) or None if rc == 0 else None


def symbolic(repo: str, ref: str, env: dict[str, str] | None = None) -> str | None:
    """The full ref a symbolic ref (`refs/remotes/origin/HEAD`) points at, or None."""
    rc, out, _ = gitcmd.run_git("symbolic-ref", "--quiet", ref, cwd=repo, env=env)
    return _text(out) or None if rc == 0 else None


def names(repo: str, *patterns: str, short: bool = False, env: dict[str, str] | None = None) -> list[str] | None:
    """The refs matching `patterns` (`refs/heads/x/`, `refs/remotes/*/x*`) in ref order, full or
    `short`; None when git failed."""
    fmt = "%(refname:short)" if short else "%(refname)"
    rc, out, _ = gitcmd.run_git("for-each-ref", f"--format={fmt}", "--sort=refname", *patterns, cwd=repo, env=env)
    return [line for line in _text(out).splitlines() if line] if rc == 0 else None


def tips(repo: str) -> list[str]:
    """The commits every local and remote-tracking branch points at, each once."""
    rc, out, _ = gitcmd.run_git("for-each-ref", "--format=%(objectname)", "refs/heads", "refs/remotes", cwd=repo)
    return sorted(set(out.decode().split())) if rc == 0 else []


def remotes(repo: str, env: dict[str, str] | None = None) -> list[str]:
    """The names of the repository's remotes."""
    rc, out, _ = gitcmd.run_git("remote", cwd=repo, env=env)
    return _text(out).split() if rc == 0 else []


def remote_url(repo: str, remote: str, env: dict[str, str] | None = None) -> str | None:
    """The URL `remote` fetches from, or None when there is no such remote."""
    rc, out, _ = gitcmd.run_git("remote", "get-url", remote, cwd=repo, env=env)
    return _text(out) if rc == 0 else None
