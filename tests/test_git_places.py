"""Where a repository keeps a file is asked of git once per process (`vcs.gitcmd.git_paths`), and a
writer's own commit hands its hooks' work the commit and parent it made (issue 44: a one-file add
started 31 gits, eleven of them to ask where a file lives, four to ask what HEAD is)."""

from __future__ import annotations

import os
import subprocess

import pytest

from helpers import git, head, memory_text
from memrepo.store import githooks
from memrepo.vcs import commit, gitcmd

NAMES = (gitcmd.COMMON_DIR, "index", "MERGE_HEAD", "memrepo-index", "memrepo-commit-journal.json")


def asked_of_git(repo: str, *names: str) -> list[str]:
    args = [a for n in names for a in ((n,) if n == gitcmd.COMMON_DIR else ("--git-path", n))]
    out = git(repo, "rev-parse", *args).stdout.splitlines()
    return [os.path.join(repo, p) for p in out]


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """Nothing remembered; every git `rev-parse` this process starts, recorded."""
    monkeypatch.setattr(gitcmd, "_places", {})
    asked: list[tuple[str, ...]] = []
    run = gitcmd.run_git

    def record(*args: str, **kw: object) -> tuple[int, bytes, bytes]:
        if args[:1] == ("rev-parse",):
            asked.append(args)
        return run(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(gitcmd, "run_git", record)
    return asked


def test_the_answers_are_git_s_in_a_checkout_and_in_a_linked_worktree(repo: str, tmp_path, fresh) -> None:
    assert gitcmd.git_paths(repo, *NAMES) == asked_of_git(repo, *NAMES)
    other = os.path.join(str(tmp_path), "other")
    git(repo, "worktree", "add", "-q", "-b", "side", other)
    mine = gitcmd.git_paths(other, *NAMES)
    assert mine == asked_of_git(other, *NAMES)
    assert os.path.realpath(mine[0]) == os.path.realpath(os.path.join(repo, ".git"))  # shared
    assert os.path.realpath(mine[1]) != os.path.realpath(os.path.join(repo, ".git", "index"))  # its own


def test_each_place_is_asked_once_and_a_writer_s_together(repo: str, fresh) -> None:
    commit.commit_files(repo, {"memory/a.md": memory_text("a")}, "add a", {"Action": "add"})
    first = [a for a in fresh if "--git-path" in a or gitcmd.COMMON_DIR in a]
    assert len(first) == 1  # the lock's common dir, the journal, the in-progress files, memrepo's index
    fresh.clear()
    commit.commit_files(repo, {"memory/b.md": memory_text("b")}, "add b", {"Action": "add"})
    assert [a for a in fresh if "--git-path" in a or gitcmd.COMMON_DIR in a] == []


def test_the_index_git_index_file_names_is_another_answer(repo: str, tmp_path, fresh, monkeypatch) -> None:
    mine = gitcmd.git_paths(repo, "index")
    monkeypatch.setenv("GIT_INDEX_FILE", os.path.join(str(tmp_path), "elsewhere"))
    assert gitcmd.git_paths(repo, "index") == asked_of_git(repo, "index") != mine


def test_hooks_follow_core_hookspath_every_time(repo: str, fresh) -> None:
    before = gitcmd.git_paths(repo, "hooks")
    git(repo, "config", "core.hooksPath", "/dev/null")
    assert gitcmd.git_paths(repo, "hooks") == asked_of_git(repo, "hooks") != before


def test_a_folder_that_is_no_repository_yet_is_asked_again(tmp_path, fresh) -> None:
    folder = str(tmp_path)
    assert gitcmd.git_paths(folder, gitcmd.COMMON_DIR) is None
    subprocess.run(["git", "init", "-q", folder], check=True)
    assert gitcmd.git_paths(folder, gitcmd.COMMON_DIR) == asked_of_git(folder, gitcmd.COMMON_DIR)


def test_the_in_process_hooks_ask_git_nothing_about_head(repo: str, fresh) -> None:
    from memrepo.vcs import hookwire

    assert hookwire.only_ours(repo)  # the writer does the hooks' work itself, in this process
    parent = head(repo)
    sha = commit.commit_files(repo, {"memory/c.md": memory_text("c")}, "add c", {"Action": "add"},
                              hooks=githooks.in_process())
    heads = [a for a in fresh if a[-1] in ("HEAD", "HEAD^1")]
    assert heads == [("rev-parse", "--verify", "-q", "HEAD")] * 2  # the lock's HEAD, and the one the index is made from
    assert git(repo, "rev-parse", "HEAD^").stdout.strip() == parent and sha == head(repo)
    from memrepo.store import index

    assert index.status(repo)["commit"] == sha and index.status(repo)["count"] >= 1


def test_pre_commit_asks_git_one_diff_and_reads_by_blob_id_when_the_cache_holds_head(repo: str, fresh, monkeypatch) -> None:
    diffs: list[tuple[str, ...]] = []
    run = gitcmd.run_git

    def record(*args: str, **kw: object) -> tuple[int, bytes, bytes]:
        if args[:1] in (("diff",), ("diff-index",)):
            diffs.append(args)
        if args[:1] == ("cat-file",) and b":memory/" in (kw.get("input") or b""):  # type: ignore[operator]
            diffs.append(("cat-file by path",))
        return run(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(gitcmd, "run_git", record)
    commit.commit_files(repo, {"memory/d.md": memory_text("d")}, "add d", {"Action": "add"}, hooks=githooks.in_process())
    assert [a[0] for a in diffs] == ["diff-index"]  # and the staged memory read by its blob id, no index read for it
    bad = memory_text("e").replace("class: fact", "class: rumour")
    with pytest.raises(Exception, match="class"):
        commit.commit_files(repo, {"memory/e.md": bad}, "add e", {"Action": "add"}, hooks=githooks.in_process())


@pytest.mark.parametrize("extra", [0, 70_000], ids=["a few paths", "more than a command line holds"])
def test_the_blob_ids_of_a_commit_s_paths_however_many(repo: str, extra: int) -> None:
    from memrepo.vcs import trees

    commit.commit_files(repo, {"memory/f.md": memory_text("f"), "notes/g.md": "g\n"}, "add f and g", {"Action": "add"})
    asked = ["memory/f.md", "notes/g.md", "memory/gone.md"] + [f"memory/not-there-{i:05d}-{'x' * 24}.md" for i in range(extra)]
    found = trees.blob_ids(repo, "HEAD", asked)
    assert found == {rel: git(repo, "rev-parse", f"HEAD:{rel}").stdout.strip() for rel in ("memory/f.md", "notes/g.md")}
