"""vcs.status: what git says of uncommitted memory files and of branches (real repositories)."""

from __future__ import annotations

from helpers import commit_all, git, write_memory

from memrepo.vcs import status


def test_modified_untracked_and_both_sides_of_a_rename_are_dirty(repo: str) -> None:
    for name in ("kept", "edited", "moved"):
        write_memory(repo, name)
    commit_all(repo)
    write_memory(repo, "edited", description="Changed by hand.")
    write_memory(repo, "fresh")
    git(repo, "mv", "memory/moved.md", "memory/renamed.md")
    assert status.dirty_paths(repo, "memory") == {"memory/edited.md", "memory/fresh.md",
                                                  "memory/renamed.md", "memory/moved.md"}
    assert status.dirty_ids(repo, "memory") == {"edited", "fresh", "renamed", "moved"}


def test_a_clean_tree_has_nothing_dirty_and_a_non_repository_says_so(repo: str, tmp_path) -> None:
    write_memory(repo, "kept")
    commit_all(repo)
    assert status.dirty_ids(repo, "memory") == set()
    outside = tmp_path / "plain"
    outside.mkdir()
    assert status.dirty_paths(str(outside), "memory") is None
    assert status.dirty_ids(str(outside), "memory") == set()


def test_branch_exists_locally_and_on_a_remote(repo: str) -> None:
    write_memory(repo, "kept")
    commit_all(repo)
    git(repo, "branch", "feature/login")
    git(repo, "update-ref", "refs/remotes/origin/release-2", "HEAD")
    assert status.branch_exists(repo, "feature/login", timeout=30) is True
    assert status.branch_exists(repo, "release-2", timeout=30) is True
    assert status.branch_exists(repo, "nope", timeout=30) is False
