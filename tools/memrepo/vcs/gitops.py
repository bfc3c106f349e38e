"""Git operations for the CLI and the offline passes (the only module that imports GitPython).

Commits go through the git CLI (`repo.git.commit`), so the repository's own hooks run:
pre-commit validates what memrepo writes like anything else, and post-commit indexes it,
exactly once.
"""

from __future__ import annotations

import os
from typing import Any

import git

from memrepo.errors import GitError, RepoNotFound

TRAILER_PREFIX = "Memrepo-"


def open_repo(path: str) -> git.Repo:
    """The git repository at `path` (not a parent), or RepoNotFound with the fix."""
    if not os.path.isdir(os.path.join(path, ".git")) and not os.path.isfile(os.path.join(path, ".git")):
        raise RepoNotFound(f"{path} is not a memory repository (no .git)", hint=f"run `memrepo init {path}`")
    return git.Repo(path)


def message(subject: str, trailers: dict[str, Any], body: str = "") -> str:
    """A commit message: subject, optional body, then `Memrepo-*` trailers."""
    parts = [subject.strip()]
    if body.strip():
        parts.append(body.strip())
    lines = [f"{TRAILER_PREFIX}{k}: {str(v).splitlines()[0] if str(v) else ''}" for k, v in trailers.items()]
    if lines:
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def commit(path: str, files: list[str], subject: str, trailers: dict[str, Any], body: str = "") -> str:
    """Stage `files` (paths relative to the repo) and commit them; returns the new commit's sha."""
    with open_repo(path) as repo:
        try:
            repo.git.add("--", *files)
            repo.git.commit("-q", "-m", message(subject, trailers, body), "--", *files)
        except git.GitCommandError as exc:
            detail = (exc.stderr or exc.stdout or "").strip().replace("stderr: ", "").strip("'\n ")
            raise GitError(f"git commit failed:\n{detail}", hint="fix the problems above, then run the command again") from None
        return str(repo.head.commit.hexsha)


def history(path: str, rel: str, limit: int = 20) -> list[dict[str, str]]:
    """Commits that touched one file, newest first."""
    with open_repo(path) as repo:
        try:
            out = repo.git.log(f"-n{limit}", "--follow", "--format=%H%x1f%aI%x1f%an%x1f%s", "--", rel)
        except git.GitCommandError:
            return []
    rows = []
    for line in out.splitlines():
        sha, date, author, subject = line.split("\x1f", 3)
        rows.append({"commit": sha, "date": date, "author": author, "subject": subject})
    return rows


def trailer_log(path: str, limit: int = 50) -> list[dict[str, Any]]:
    """Commits carrying `Memrepo-*` trailers, newest first, with the trailers parsed."""
    with open_repo(path) as repo:
        try:
            out = repo.git.log(f"-n{limit}", "--extended-regexp", f"--grep=^{TRAILER_PREFIX}[A-Za-z]+: ",
                               "--format=%H%x1f%aI%x1f%s%x1f%(trailers:unfold,only)%x1e")
        except git.GitCommandError:
            return []
    entries = []
    for record in out.split("\x1e"):
        record = record.strip("\n")
        if not record:
            continue
        sha, date, subject, trailers = record.split("\x1f", 3)
        found = {}
        for line in trailers.splitlines():
            key, _, value = line.partition(":")
            if key.startswith(TRAILER_PREFIX):
                found[key[len(TRAILER_PREFIX):]] = value.strip()
        if found:
            entries.append({"commit": sha, "date": date, "subject": subject, "trailers": found})
    return entries[:limit]


def config_get(path: str, key: str) -> str | None:
    with open_repo(path) as repo:
        try:
            return str(repo.git.config("--local", "--get", key))
        except git.GitCommandError:
            return None


def config_set(path: str, key: str, value: str) -> None:
    with open_repo(path) as repo:
        repo.git.config("--local", key, value)


def init_repo(path: str) -> bool:
    """`git init` the directory when it is no repository yet; returns True when it did."""
    if os.path.exists(os.path.join(path, ".git")):
        return False
    os.makedirs(path, exist_ok=True)
    git.Repo.init(path, initial_branch="main")
    return True


def has_identity(path: str) -> bool:
    with open_repo(path) as repo:
        try:
            repo.git.var("GIT_COMMITTER_IDENT")
            return True
        except git.GitCommandError:
            return False
