"""The one trailer builder and reader (issue 40): a repeated key keeps every value, a value with a
separator git uses stays whole, and a path's history holds commits without trailers too."""

from __future__ import annotations

from helpers import commit_all, git, write_memory
from memrepo.vcs import gitops, runs, trailers


def test_a_repeated_key_keeps_every_value_and_the_message_round_trips(repo: str) -> None:
    write_memory(repo, "a")
    write_memory(repo, "b")
    lines = [runs.decision_line("verify", "a", "ok"), runs.decision_line("verify", "b", "x|y: z")]
    text = trailers.message("verify: restamp 2 memories", {"Action": "verify", "Run": "R-1", "Decision": lines})
    assert text.endswith("Memrepo-Action: verify\nMemrepo-Run: R-1\nMemrepo-Decision: verify a: ok\n"
                         "Memrepo-Decision: verify b: x|y: z\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-F", "-", input=text)
    [entry] = trailers.read(repo, grep="Memrepo-Run: R-1")
    assert entry["every"]["Decision"] == lines
    assert entry["trailers"] == {"Action": "verify", "Run": "R-1", "Decision": lines[0]}
    assert entry["subject"] == "verify: restamp 2 memories" and entry["author"]
    found = runs.decisions(repo, run_id="R-1")[entry["commit"]]
    assert [(d["id"], d["reason"]) for d in found] == [("a", "ok"), ("b", "x|y: z")]


def test_a_files_history_holds_commits_without_trailers(repo: str) -> None:
    write_memory(repo, "a", title="First")
    assert commit_all(repo, "a person's commit").returncode == 0
    write_memory(repo, "a", title="Second")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "edit: a\n\nMemrepo-Action: edit\nMemrepo-Run: R-2\n")
    rows = gitops.history(repo, "memory/a.md")
    assert [r["subject"] for r in rows] == ["edit: a", "a person's commit"]
    assert [c["trailers"] for c in gitops.changes(repo, "memory/a.md")] == [{"Action": "edit", "Run": "R-2"}, {}]
