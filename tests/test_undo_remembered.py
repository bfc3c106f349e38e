"""What a person undid or removed stays undone (issue 16, defect 5): the next curate or sweep
does not make the same decision again, the undone run's proposals close, and a re-import does
not bring back a memory someone deleted.

The curator's verdicts are the labeled pairs' honest answers (tests/bench/curate_pairs).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from helpers import commit_all, git, write_memory
from memrepo.cli.main import cli
from memrepo.format import notes
from memrepo.importers import claude_code
from memrepo.passes.curate import curator as curate, review
from memrepo.base import paths
from memrepo.vcs import runs
from test_curate import fake, ids, store  # noqa: F401  (fixture)
from test_importers import CC_DIR, _memory_ids


def curate_calls(tmp_path) -> int:
    log = tmp_path / "calls.jsonl"
    return sum("You curate a memory store" in json.loads(line)["prompt"] for line in log.read_text().splitlines()) if log.exists() else 0


def status(repo: str, note_id: str) -> str:
    return notes.read(paths.note_path(repo, note_id)).get("status") or "active"


def test_an_undone_supersession_is_not_applied_again(repo: str, fake, tmp_path) -> None:  # noqa: F811
    store(repo, "p01")
    fake("p01")
    old, new = ids("p01")
    first = curate.run(repo)
    assert [d["loser"] for d in first.applied] == [old]
    runs.undo(repo, first.run_id)
    assert status(repo, old) == "active"
    asked = curate_calls(tmp_path)
    again = curate.run(repo)
    assert again.applied == [] and status(repo, old) == "active"
    assert curate_calls(tmp_path) == asked  # the pair is not even asked about again


def test_undoing_a_run_closes_its_proposals(repo: str, fake, tmp_path) -> None:  # noqa: F811
    store(repo, "p13")
    fake("p13")
    first = curate.run(repo)
    assert len(first.review) == 1 and len(review.proposals(repo)) == 1
    result = CliRunner().invoke(cli, ["--repo", repo, "undo", first.run_id], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert review.proposals(repo) == []
    assert [p["state"] for p in review.proposals(repo, include_closed=True)] == ["undone"]
    assert git(repo, "status", "--porcelain").stdout == ""
    again = curate.run(repo)
    assert again.review == [] and again.applied == []
    with pytest.raises(runs.UndoError, match="already undone"):
        runs.undo(repo, first.run_id)


def test_an_undone_duplicate_merge_is_not_redone(repo: str) -> None:
    body = "Deploys to production wait for the green CI run on main; no exceptions on Fridays."
    write_memory(repo, "deploy-waits-for-ci", title="Deploys wait for CI", body=body, created="2026-10-01")
    write_memory(repo, "wait-for-ci-before-deploy", title="Wait for CI before deploying", body=body, created="2026-11-01")
    assert commit_all(repo, "two copies").returncode == 0
    first = curate.run(repo, use_model=False)
    (merged,) = [d for d in first.applied if d["kind"] == "duplicate"]
    runs.undo(repo, first.run_id)
    again = curate.run(repo, use_model=False)
    assert [d for d in again.applied if d["kind"] == "duplicate"] == []
    assert any("undone by run" in d["reason"] for d in again.skipped)
    assert {status(repo, "deploy-waits-for-ci"), status(repo, "wait-for-ci-before-deploy")} == {"active"}


def test_an_undone_undo_lets_the_decision_stand_again(repo: str, fake) -> None:  # noqa: F811
    store(repo, "p01")
    fake("p01")
    first = curate.run(repo)
    runs.undo(repo, first.run_id)
    runs.undo(repo, runs.list_runs(repo)[0]["run"])  # the undo itself, undone: the supersession is back
    assert runs.undone_decisions(repo) == {}


def test_a_reimport_does_not_bring_back_what_a_person_deleted(repo: str) -> None:
    first = claude_code.run(repo, [CC_DIR])
    gone = first.added[0]
    git(repo, "rm", "-q", f"memory/{gone}.md")
    git(repo, "commit", "-q", "-m", f"remove {gone}: wrong")
    again = claude_code.run(repo, [CC_DIR])
    assert again.added == [] and gone not in _memory_ids(repo)
    assert [w for w, _ in again.skipped if w == gone] == [gone]
