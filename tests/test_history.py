"""History that stays fast (issue 22): a memory's history is a path-limited `git log` without
--follow, and `memrepo init` and the sweep write a commit-graph with changed-path filters."""

from __future__ import annotations

import glob
import os
from typing import Any

import pytest

from helpers import git, head, memory_text
from memrepo.errors import GitError
from memrepo.store import memories, repoinit
from memrepo.vcs import commit, gitcmd, gitops
from memrepo.worker import sweep


def _graph_files(repo: str) -> list[str]:
    info = os.path.join(repo, ".git", "objects", "info")
    return glob.glob(os.path.join(info, "commit-graph")) + glob.glob(os.path.join(info, "commit-graphs", "*.graph"))


def _has_changed_paths(repo: str) -> bool:
    """A commit-graph file lists its chunks up front; BIDX/BDAT are the changed-path Bloom filters."""
    return any(b"BDAT" in open(f, "rb").read(256) for f in _graph_files(repo))


def test_a_renamed_memory_s_history_starts_at_its_new_id(repo: str) -> None:
    """`memrepo sync` renames a colliding memory to a NEW id; the old path then holds another memory."""
    mine = memory_text("deploy-notes", body="Our deploy notes.\n")
    first = commit.commit_files(repo, {"memory/deploy-notes.md": mine}, "add deploy-notes", {"Action": "add"})
    renamed = mine.replace("id: deploy-notes", "id: deploy-notes-2")
    rename = commit.commit_files(repo, {"memory/deploy-notes.md": None, "memory/deploy-notes-2.md": renamed},
                                 "sync: rename deploy-notes → deploy-notes-2", {"Action": "rename", "Remote": "abc"})
    theirs = commit.commit_files(repo, {"memory/deploy-notes.md": memory_text("deploy-notes", body="Theirs.\n")},
                                 "add their deploy-notes", {"Action": "add"})
    assert [c["commit"] for c in gitops.history(repo, "memory/deploy-notes-2.md")] == [rename]
    assert [c["commit"] for c in gitops.history(repo, "memory/deploy-notes.md")] == [theirs, rename, first]
    assert memories.show(repo, "deploy-notes-2")["history"][0]["subject"] == "sync: rename deploy-notes → deploy-notes-2"


def test_changes_carry_each_commit_s_own_trailers_and_diff(repo: str) -> None:
    rel = "memory/cdn.md"
    added = commit.commit_files(repo, {rel: memory_text("cdn")}, "add cdn", {"Action": "add", "Run": "r1", "Id": "cdn"})
    with open(os.path.join(repo, rel), "a", encoding="utf-8") as fh:
        fh.write("Edited by hand.\n")
    git(repo, "commit", "-q", "-m", "hand edit", "--", rel)
    found = gitops.changes(repo, rel)
    assert [(c["subject"], c["trailers"]) for c in found] == [
        ("hand edit", {}), ("add cdn", {"Action": "add", "Run": "r1", "Id": "cdn"})]
    assert found[1]["commit"] == added
    assert "+Edited by hand." in found[0]["diff"]
    assert [sorted(c) for c in gitops.history(repo, rel)] == [["author", "commit", "date", "subject"]] * 2


def test_init_turns_the_commit_graph_on_with_changed_paths(tmp_path: Any) -> None:
    path = str(tmp_path / "mem")
    report = repoinit.init(path)
    assert report["commit_graph"] == "written (1 commit)"
    assert git(path, "config", "--get", "core.commitGraph").stdout.strip() == "true"
    assert git(path, "config", "--get", "fetch.writeCommitGraph").stdout.strip() == "true"
    assert _has_changed_paths(path)
    git(path, "commit-graph", "verify")


def test_init_fails_open_when_the_commit_graph_cannot_be_written(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    real = gitcmd.run_git

    def run_git(*args: str, **kwargs: Any) -> tuple[int, bytes, bytes]:
        if args[:1] == ("commit-graph",):
            return 128, b"", b"fatal: no space left"
        return real(*args, **kwargs)

    monkeypatch.setattr(gitcmd, "run_git", run_git)
    path = str(tmp_path / "mem")
    report = repoinit.init(path)
    assert report["commit"] == head(path)
    assert report["commit_graph"] == "not written: git commit-graph write failed: fatal: no space left"


def test_the_sweep_refreshes_the_commit_graph(repo: str) -> None:
    for f in _graph_files(repo):
        os.remove(f)
    commit.commit_files(repo, {"memory/one.md": memory_text("one")}, "add one", {"Action": "add"})
    report = sweep.run(repo, use_model=False)
    assert report["errors"] == []
    assert report["commit_graph"] == {"commits": int(git(repo, "rev-list", "--count", "--all").stdout)}
    assert _has_changed_paths(repo)


def test_a_failed_commit_graph_is_one_line_in_the_sweep(repo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(path: str, timeout: float = 0) -> dict[str, Any]:
        raise GitError("git commit-graph write failed: fatal: disk quota exceeded")

    monkeypatch.setattr(gitops, "write_commit_graph", fail)
    report = sweep.run(repo, use_model=False)
    assert report["errors"] == ["commit_graph: git commit-graph write failed: fatal: disk quota exceeded"]
    assert "curate" in report and "verify" in report and "finished" in report


def _in_graph(repo: str, sha: str) -> bool:
    """Whether a commit-graph file (or layer) lists the commit (its OID lookup chunk holds raw ids)."""
    return any(bytes.fromhex(sha) in open(f, "rb").read() for f in _graph_files(repo))


def _graph_mark(repo: str) -> str:
    with open(os.path.join(repo, ".git", gitops.GRAPH_MARK), encoding="ascii") as fh:
        return fh.read().strip()


def _wait_for_graph(repo: str, sha: str) -> None:
    import time

    deadline = time.monotonic() + 120  # a detached git: how long it takes is not what is tested
    while not (_in_graph(repo, sha) and not glob.glob(os.path.join(repo, ".git", "objects", "info", "commit-graphs", "*.lock"))):
        assert time.monotonic() < deadline, "no commit-graph layer came to hold HEAD"
        time.sleep(0.05)


@pytest.mark.parametrize("in_process", [False, True], ids=["git runs the hooks", "the writer does their work"])
def test_commits_beyond_the_graph_start_a_new_layer_after_a_few(repo: str, in_process: bool) -> None:
    from memrepo.store import githooks

    hooks = githooks.in_process() if in_process else None  # it counts the commit it made without git
    start = _graph_mark(repo)  # init wrote the graph and marked the commit it started at
    assert start == head(repo)
    shas = [commit.commit_files(repo, {f"memory/g{i}.md": memory_text(f"g{i}")}, f"add g{i}", {"Action": "add"}, hooks=hooks)
            for i in range(gitops.GRAPH_SLACK)]
    assert _graph_mark(repo) == start and not any(_in_graph(repo, s) for s in shas)
    last = commit.commit_files(repo, {"memory/g9.md": memory_text("g9")}, "add g9", {"Action": "add"}, hooks=hooks)
    assert _graph_mark(repo) == last
    _wait_for_graph(repo, last)
    assert all(_in_graph(repo, s) for s in shas) and _has_changed_paths(repo)
    git(repo, "commit-graph", "verify")


def test_a_layer_waits_while_a_writer_s_change_is_queued_and_comes_with_the_last_commit(repo: str) -> None:
    """Ten writers at once: the holder that commits while another change waits in the group
    commit's queue leaves the layer to the holder that commits it (issue 44)."""
    from memrepo.store import githooks
    from memrepo.vcs import group

    hooks = githooks.in_process()
    start = _graph_mark(repo)
    waiting = group.Entry.put(group.folder(repo), group.Change({"memory/q.md": memory_text("q")}, {"memory/q.md": None},
                                                               "add: q", {"Action": "add"}))
    assert waiting is not None and group.queued(repo)
    try:
        shas = [commit.commit_files(repo, {f"memory/g{i}.md": memory_text(f"g{i}")}, f"add g{i}", {"Action": "add"},
                                   hooks=hooks) for i in range(gitops.GRAPH_SLACK + 2)]
        assert _graph_mark(repo) == start  # beyond the slack, but a change waits: its holder writes the layer
    finally:
        waiting.close()
    assert not group.queued(repo)
    last = commit.commit_files(repo, {"memory/g9.md": memory_text("g9")}, "add g9", {"Action": "add"}, hooks=hooks)
    assert _graph_mark(repo) == last
    _wait_for_graph(repo, last)
    assert all(_in_graph(repo, s) for s in shas)


def test_a_queued_change_defers_the_layer_only_so_far(repo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from memrepo.vcs import group

    monkeypatch.setattr(gitops, "GRAPH_DEFER", gitops.GRAPH_SLACK + 1)
    waiting = group.Entry.put(group.folder(repo), group.Change({"memory/q.md": memory_text("q")}, {"memory/q.md": None},
                                                               "add: q", {"Action": "add"}))
    assert waiting is not None
    try:
        from memrepo.store import githooks

        start = _graph_mark(repo)
        for i in range(gitops.GRAPH_DEFER + 1):
            assert _graph_mark(repo) == start
            last = commit.commit_files(repo, {f"memory/g{i}.md": memory_text(f"g{i}")}, f"add g{i}", {"Action": "add"},
                                       hooks=githooks.in_process())
        assert _graph_mark(repo) == last  # more than GRAPH_DEFER commits outside: written, queue or not
    finally:
        waiting.close()


def test_a_person_s_commits_count_too_and_no_mark_means_write(repo: str) -> None:
    for i in range(gitops.GRAPH_SLACK + 1):
        git(repo, "commit", "-q", "--allow-empty", "-m", f"a person's commit {i}")
    _wait_for_graph(repo, head(repo))
    assert _graph_mark(repo) == head(repo)
    os.remove(os.path.join(repo, ".git", gitops.GRAPH_MARK))
    git(repo, "commit", "-q", "--allow-empty", "-m", "one more")
    _wait_for_graph(repo, head(repo))
