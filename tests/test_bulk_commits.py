"""Bulk work in bulk (issue 22): the curator's deterministic pass is one commit per run, and
every decision in it still reads back, undoes and stays undone; no path list meets a command line."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest
from click.testing import CliRunner

from helpers import commit_all, git, head, memory_text, write_file, write_memory
from memrepo.cli.main import cli
from memrepo.passes.curate import curator as curate
from memrepo.format import notes
from memrepo.vcs import commit, gitcmd, runs, trailers
from test_curate import snapshot

N = 12


@pytest.fixture
def stale_store(repo: str, tmp_path: Any) -> str:
    """N memories of project `shop`, each citing a file missing under the shop's root."""
    root = tmp_path / "shop"
    root.mkdir()
    write_file(repo, "index/local.json", json.dumps({"projects": {"shop": {"root": str(root)}}}))
    for i in range(N):
        write_memory(repo, f"note-{i:02d}", project="shop", body=f"The job lives in `src/job{i}.py`.\n")
    assert commit_all(repo, "memories").returncode == 0
    return str(root)


def _count(repo: str) -> int:
    return int(git(repo, "rev-list", "--count", "HEAD").stdout)


def test_the_deterministic_pass_is_one_commit_with_a_decision_per_memory(repo: str, stale_store: str) -> None:
    before = _count(repo)
    report = curate.run(repo, use_model=False)
    assert _count(repo) == before + 1
    assert [d["ids"][0] for d in report.applied] == [f"note-{i:02d}" for i in range(N)]
    assert {d["commit"] for d in report.applied} == {head(repo)}
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == f"curator: {N} decisions ({N} dead paths)"
    assert git(repo, "show", "--name-only", "--format=", "HEAD").stdout.split() == [f"memory/note-{i:02d}.md" for i in range(N)]
    # git itself parses every decision as a trailer
    parsed = git(repo, "interpret-trailers", "--parse", input=git(repo, "log", "-1", "--format=%B").stdout).stdout
    assert [line for line in parsed.splitlines() if line.startswith("Memrepo-Decision: ")] == [
        f"Memrepo-Decision: stamp note-{i:02d}: cites src/job{i}.py (shop), missing from the project's checkout"
        for i in range(N)]
    (run,) = [r for r in runs.list_runs(repo) if r["run"] == report.run_id]
    assert [(d["action"], d["subject"], d["commit"]) for d in run["decisions"]] == [
        ("stamp", f"stamp note-{i:02d}", head(repo)) for i in range(N)]
    out = CliRunner().invoke(cli, ["--repo", repo, "log", "--runs"], catch_exceptions=False).output
    assert out.splitlines()[0] == f"{report.run_id}  {N} decisions"


def test_undo_reverts_the_run_and_each_decision_stays_undone(repo: str, stale_store: str) -> None:
    before = snapshot(repo)
    report = curate.run(repo, use_model=False)
    (undo_sha,) = runs.undo(repo, report.run_id)
    assert snapshot(repo) == before
    assert git(repo, "log", "-1", "--format=%s", undo_sha).stdout.strip() == f"undo: run {report.run_id} (1 commit)"
    undo_run = runs.list_runs(repo)[0]["run"]
    assert runs.undone_decisions(repo) == {("stamp", f"note-{i:02d}", ""): undo_run for i in range(N)}
    again = curate.run(repo, use_model=False)
    assert again.applied == []
    assert [(d["ids"][0], d["reason"]) for d in again.skipped] == [
        (f"note-{i:02d}", f"undone by run {undo_run}; not applied again") for i in range(N)]
    assert snapshot(repo) == before


def test_an_undone_single_decision_commit_still_counts(repo: str, stale_store: str) -> None:
    """Runs from before issue 22 carry their one decision in Action/Id/Winner trailers."""
    rel = "memory/note-03.md"
    old = notes.read(os.path.join(repo, rel))
    stamped = notes.Note({**old.meta, "verification": {"status": "unverified", "checked": "2026-01-01",
                                                       "failed": ["path_exists: src/job3.py"]}}, old.body)
    run_id = "2026-01-01T00-00-00-curate"
    commit.commit_files(repo, {rel: notes.serialize(stamped)}, "curator: note-03 cites missing src/job3.py",
                        {"Action": "stamp", "Run": run_id, "Confidence": "1.00", "Reason": "cites src/job3.py", "Id": "note-03"})
    runs.undo(repo, run_id)
    undo_run = runs.list_runs(repo)[0]["run"]
    assert runs.undone_decisions(repo) == {("stamp", "note-03", ""): undo_run}
    report = curate.run(repo, use_model=False)
    assert [d["ids"][0] for d in report.skipped] == ["note-03"]
    assert len(report.applied) == N - 1


def test_a_file_changed_since_it_was_read_is_left_out_and_the_rest_commit(repo: str, stale_store: str,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    real = curate.commit_if_unchanged
    person = memory_text("note-05", project="shop", body="Moved: the job lives in `jobs/five.py` now.\n")

    def meanwhile(*args: Any, **kwargs: Any) -> Any:
        write_file(repo, "memory/note-05.md", person)  # a person's commit lands while the pass works
        git(repo, "commit", "-q", "-m", "move job five", "--", "memory/note-05.md")
        return real(*args, **kwargs)

    monkeypatch.setattr(curate, "commit_if_unchanged", meanwhile)
    report = curate.run(repo, use_model=False)
    assert [(d["ids"][0], d["reason"]) for d in report.skipped] == [
        ("note-05", "memory/note-05.md changed since the curator read it; left as it is")]
    assert sorted(d["ids"][0] for d in report.applied) == [f"note-{i:02d}" for i in range(N) if i != 5]
    assert open(os.path.join(repo, "memory", "note-05.md"), encoding="utf-8").read() == person
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == f"curator: {N - 1} decisions ({N - 1} dead paths)"
    assert "note-05" not in git(repo, "log", "-1", "--format=%B").stdout
    assert git(repo, "status", "--porcelain").stdout == ""


def test_a_refused_bulk_commit_changes_nothing_and_says_why(repo: str, stale_store: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    before, tip = snapshot(repo), head(repo)
    real = gitcmd.run_git

    def run_git(*args: str, **kwargs: Any) -> tuple[int, bytes, bytes]:
        if args and args[0] == "commit":
            return 1, b"", b"pre-commit: refused"
        return real(*args, **kwargs)

    monkeypatch.setattr(gitcmd, "run_git", run_git)
    report = curate.run(repo, use_model=False)
    monkeypatch.undo()
    assert report.applied == [] and len(report.skipped) == N
    assert {d["reason"].split("\n")[0] for d in report.skipped} == {"git refused the commit: git commit failed:"}
    assert (snapshot(repo), head(repo)) == (before, tip)
    assert git(repo, "status", "--porcelain").stdout == ""


def test_list_trailers_are_repeated_lines_after_the_others() -> None:
    text = commit.message("subject", {"Action": "tidy", "Run": "r", "Decision": ["a x: one", "b y: two\nmore"]})
    assert text == "subject\n\nMemrepo-Action: tidy\nMemrepo-Run: r\nMemrepo-Decision: a x: one\nMemrepo-Decision: b y: two\n"
    assert commit.message("s", {"Decision": ["a x: one"]}, "body") == "s\n\nbody\n\nMemrepo-Decision: a x: one\n"
    assert commit.message("s", {"Action": "add"}) == trailers.message("s", {"Action": "add"})


def test_no_path_goes_on_a_command_line(repo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Thousands of paths in one commit, and not one of them in any git argv (the argument-length limit)."""
    files = {f"notes/n{i:04d}.txt": f"{i}\n" for i in range(3000)}
    argvs: list[tuple[str, ...]] = []
    real = gitcmd.run_git

    def spy(*args: str, **kwargs: Any) -> tuple[int, bytes, bytes]:
        argvs.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(gitcmd, "run_git", spy)
    sha = commit.commit_files(repo, files, "3000 files", {"Action": "add"})
    monkeypatch.undo()
    assert [a for argv in argvs for a in argv if a.startswith("notes/")] == []
    assert len(git(repo, "show", "--name-only", "--format=", sha).stdout.split()) == 3000
    assert git(repo, "status", "--porcelain").stdout == ""


def test_a_failed_commit_of_many_paths_is_restored_and_unstaged(repo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    write_file(repo, "notes.txt", "the user's own staged work\n")
    git(repo, "add", "notes.txt")
    tip = head(repo)
    real = gitcmd.run_git

    def run_git(*args: str, **kwargs: Any) -> tuple[int, bytes, bytes]:
        if args and args[0] == "commit":
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(gitcmd, "run_git", run_git)
    with pytest.raises(KeyboardInterrupt):
        commit.commit_files(repo, {f"notes/n{i}.txt": "x\n" for i in range(500)}, "many", {"Action": "add"})
    monkeypatch.undo()
    assert head(repo) == tip
    assert os.listdir(os.path.join(repo, "notes")) == []  # every new file gone
    assert git(repo, "diff", "--cached", "--name-only").stdout.split() == ["notes.txt"]
    assert not [n for n in os.listdir(os.path.join(repo, ".git")) if n.startswith("memrepo-pathspec-")]


def test_undo_of_a_large_run_reads_no_path_from_a_command_line(repo: str, stale_store: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    report = curate.run(repo, use_model=False)
    argvs: list[tuple[str, ...]] = []
    real = gitcmd.run_git

    def spy(*args: str, **kwargs: Any) -> tuple[int, bytes, bytes]:
        argvs.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(gitcmd, "run_git", spy)
    runs.undo(repo, report.run_id)
    monkeypatch.undo()
    assert [a for argv in argvs for a in argv if a.startswith("memory/")] == []
    assert sum(1 for argv in argvs if argv[0] == "cat-file") == 1
    assert subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout == ""
