"""memrepo commits from its own index (vcs/staging.py): HEAD's tree plus exactly the writer's paths.

Trusted only while its mark names HEAD: a commit made with git, a failed or killed writer, a
stale lock of a killed git each make the next writer build it again from HEAD.
"""

from __future__ import annotations

import os
import sys

import pytest

from helpers import git, head, memory_text, write_file
from memrepo.errors import GitError
from memrepo.vcs import commit, staging


def _files(repo: str, rev: str = "HEAD") -> list[str]:
    return git(repo, "ls-tree", "-r", "--name-only", rev).stdout.split()


def _own(repo: str) -> str:
    return os.path.join(repo, ".git", staging.NAME)


def test_a_commit_made_with_git_between_two_writes_stays(repo: str) -> None:
    commit.commit_files(repo, {"memory/a.md": memory_text("a")}, "add: a", {"Action": "add"})
    write_file(repo, "memory/by-hand.md", memory_text("by-hand"))
    git(repo, "add", "memory/by-hand.md")
    git(repo, "commit", "-q", "-m", "a person's commit")
    git(repo, "rm", "-q", "memory/a.md")
    git(repo, "commit", "-q", "-m", "a person removes a")
    commit.commit_files(repo, {"memory/b.md": memory_text("b")}, "add: b", {"Action": "add"})
    assert git(repo, "show", "--name-only", "--format=", "HEAD").stdout.split() == ["memory/b.md"]
    assert "memory/by-hand.md" in _files(repo) and "memory/a.md" not in _files(repo)


def test_what_a_rejected_commit_staged_is_not_in_the_next_one(repo: str) -> None:
    with pytest.raises(GitError):
        commit.commit_files(repo, {"memory/good.md": memory_text("good"), "memory/bad.md": memory_text("not-bad")},
                            "rejected", {"Action": "add"})
    assert not os.path.exists(_own(repo) + ".head")
    commit.commit_files(repo, {"memory/c.md": memory_text("c")}, "add: c", {"Action": "add"})
    assert git(repo, "show", "--name-only", "--format=", "HEAD").stdout.split() == ["memory/c.md"]
    assert not {"memory/good.md", "memory/bad.md"} & set(_files(repo))


def test_the_index_is_marked_with_the_commit_it_made(repo: str) -> None:
    sha = commit.commit_files(repo, {"memory/d.md": memory_text("d")}, "add: d", {"Action": "add"})
    with open(_own(repo) + ".head", encoding="ascii") as fh:
        assert fh.read().strip() == sha
    env = {**os.environ, "GIT_INDEX_FILE": _own(repo)}
    import subprocess

    staged = subprocess.run(["git", "diff-index", "--cached", "--name-only", "HEAD"], cwd=repo, env=env,
                            capture_output=True, text=True, check=True).stdout
    assert staged == ""


def test_a_record_commits_no_file_and_leaves_the_users_staging(repo: str) -> None:
    write_file(repo, "notes.txt", "the user's own staged work\n")
    git(repo, "add", "notes.txt")
    before = head(repo)
    sha = commit.record(repo, "review: reject 1", {"Action": "reject"})
    assert git(repo, "rev-parse", f"{sha}^{{tree}}").stdout == git(repo, "rev-parse", f"{before}^{{tree}}").stdout
    assert git(repo, "diff", "--cached", "--name-only").stdout.split() == ["notes.txt"]


def test_a_lock_a_killed_git_left_on_the_index_is_cleared(repo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    commit.commit_files(repo, {"memory/e.md": memory_text("e")}, "add: e", {"Action": "add"})
    with open(_own(repo) + ".lock", "wb") as fh:
        fh.write(b"half an index")
    monkeypatch.setattr(staging, "LOCK_WAIT", 0.2)
    commit.commit_files(repo, {"memory/f.md": memory_text("f")}, "add: f", {"Action": "add"})
    assert git(repo, "show", "--name-only", "--format=", "HEAD").stdout.split() == ["memory/f.md"]
    assert not os.path.exists(_own(repo) + ".lock")


def test_a_damaged_index_is_made_again(repo: str) -> None:
    sha = commit.commit_files(repo, {"memory/g.md": memory_text("g")}, "add: g", {"Action": "add"})
    with open(_own(repo), "wb") as fh:
        fh.write(b"not an index")
    os.remove(_own(repo) + ".head")
    commit.commit_files(repo, {"memory/h.md": memory_text("h")}, "add: h", {"Action": "add"})
    assert git(repo, "rev-parse", "HEAD^").stdout.strip() == sha
    assert {"memory/g.md", "memory/h.md"} <= set(_files(repo))


# -- the hooks' work done by the writer (vcs.commit.Hooks) where memrepo's shims are all git would run --

@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How often the writer's process itself validated and indexed (the shims run in git's children)."""
    from memrepo.store import githooks

    calls = {"pre": 0, "post": 0}
    real_pre, real_post = githooks.pre_commit, githooks.post_hook

    def pre(*args: object, **kwargs: object) -> int:
        calls["pre"] += 1
        return real_pre(*args, **kwargs)  # type: ignore[arg-type]

    def post(*args: object, **kwargs: object) -> int:
        calls["post"] += 1
        return real_post(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(githooks, "pre_commit", pre)
    monkeypatch.setattr(githooks, "post_hook", post)
    monkeypatch.setenv("MEMREPO_PYTHON", sys.executable)
    return calls


def _hooks() -> commit.Hooks:
    from memrepo.store import githooks

    return githooks.in_process()


def test_a_writer_validates_and_indexes_in_its_own_process(repo: str, counted: dict[str, int]) -> None:
    from memrepo.store import cachefacts, index

    sha = commit.commit_files(repo, {"memory/i.md": memory_text("i")}, "add: i", {"Action": "add"}, hooks=_hooks())
    assert counted == {"pre": 1, "post": 1}
    assert index.status(repo)["commit"] == sha and cachefacts.indexed(repo, ["memory/i.md"]) == {"memory/i.md"}


def test_the_writer_s_validation_refuses_as_the_hook_does(repo: str, counted: dict[str, int]) -> None:
    before = head(repo)
    with pytest.raises(GitError, match=r"git commit failed:\n.*memory/bad.md"):
        commit.commit_files(repo, {"memory/bad.md": memory_text("not-bad")}, "add: bad", {"Action": "add"}, hooks=_hooks())
    assert counted["pre"] == 1 and head(repo) == before and not os.path.exists(os.path.join(repo, "memory/bad.md"))


@pytest.mark.parametrize("case", ["another tool's commit-msg hook", "another interpreter"])
def test_anything_but_memrepo_s_own_shims_leaves_the_hooks_to_git(repo: str, counted: dict[str, int], case: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    ran = os.path.join(repo, ".git", "commit-msg-ran")
    if case == "another tool's commit-msg hook":
        write_file(repo, ".git/hooks/commit-msg", f"#!/bin/sh\ntouch '{ran}'\n")
        os.chmod(os.path.join(repo, ".git/hooks/commit-msg"), 0o755)
    else:
        monkeypatch.setenv("MEMREPO_PYTHON", "/usr/bin/python3-that-is-not-this-one")
    with pytest.raises(GitError, match="memory/bad.md"):
        commit.commit_files(repo, {"memory/bad.md": memory_text("not-bad")}, "add: bad", {"Action": "add"}, hooks=_hooks())
    commit.commit_files(repo, {"memory/j.md": memory_text("j")}, "add: j", {"Action": "add"}, hooks=_hooks())
    assert counted == {"pre": 0, "post": 0}  # git's hooks refused the first and indexed the second
    assert os.path.exists(ran) == (case == "another tool's commit-msg hook")


@pytest.mark.parametrize("inline", [True, False], ids=["hooks in the writer", "hooks run by git"])
def test_a_person_s_commit_landing_mid_write_is_never_reverted(repo: str, counted: dict[str, int],
                                                              monkeypatch: pytest.MonkeyPatch, inline: bool) -> None:
    """The index is made from HEAD; a person commits (no memrepo lock) before memrepo's commit lands."""
    real = staging.open_for
    done: list[str] = []

    def open_then_a_person_commits(repo_: str, head_: str | None) -> dict[str, str]:
        env = real(repo_, head_)
        if not done:
            write_file(repo, "memory/theirs.md", memory_text("theirs"))
            git(repo, "add", "memory/theirs.md")
            git(repo, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "a person's commit meanwhile",
                "--", "memory/theirs.md")
            done.append(head(repo))
        return env

    monkeypatch.setattr(staging, "open_for", open_then_a_person_commits)
    sha = commit.commit_files(repo, {"memory/mine.md": memory_text("mine")}, "add: mine", {"Action": "add"},
                              hooks=_hooks() if inline else None)
    assert git(repo, "rev-parse", f"{sha}^").stdout.strip() == done[0]
    assert {"memory/theirs.md", "memory/mine.md"} <= set(_files(repo))
    assert git(repo, "show", "--name-only", "--format=", sha).stdout.split() == ["memory/mine.md"]
