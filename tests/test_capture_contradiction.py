"""A new capture that contradicts a memory but fails a guard goes to review (issue 16, defect 4),
the way the curator sends a tension: not a second active memory nobody hears about.

The fake model's answers are what an honest model says for these prompts, written before the pass ran.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from helpers import ROOT, commit_all, write_memory
from memrepo.format import notes
from memrepo.passes import capture
from memrepo.passes.curate import review
from memrepo.base import paths

sys.path.insert(0, os.path.join(ROOT, "tests", "data", "capture"))
from ccbuild import Session  # noqa: E402

FAKE = os.path.join(ROOT, "tests", "fake", "fakemodel.py")
NEW = {"class": "preference", "title": "Commit subjects are plain imperative sentences",
       "description": "Write commit subjects as plain imperative sentences, without type prefixes.",
       "topics": ["git", "commits", "style"], "entities": [], "tech": ["git"],
       "body": "The user asked for plain imperative commit subjects from now on, no `feat:`/`fix:` prefixes.",
       "evidence": ["t1"], "scope": "global"}


@pytest.fixture
def answers(tmp_path, monkeypatch: pytest.MonkeyPatch):
    rules = tmp_path / "rules.json"
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE}")
    monkeypatch.setenv("FAKE_MODEL_RULES", str(rules))

    def set_verdict(confidence: float, winner: str = "candidate") -> None:
        rules.write_text(json.dumps([
            {"contains": "Session turns", "reply": {"memories": [NEW], "refuted": []}},
            {"contains": "You curate a memory store", "reply": {
                "relation": "contradicts", "winner": winner, "confidence": confidence, "scope": "full",
                "reason": "The user replaced the Conventional Commits convention with plain imperative subjects."}},
        ]))
    return set_verdict


def setup(repo: str, tmp_path) -> str:
    write_memory(repo, "conventional-commits", class_="preference", title="Commit messages follow Conventional Commits",
                 description="Commit subjects start with a type prefix such as feat: or fix:.", topics=["git", "commits"],
                 body="Use `feat:`, `fix:`, `chore:` prefixes on every commit subject.")
    assert commit_all(repo, "old preference").returncode == 0
    s = Session("c0ffee00-0000-4000-8000-000000000004", cwd=str(tmp_path))
    s.user("From now on, write commit subjects as plain imperative sentences, no feat:/fix: prefixes.")
    s.say("Got it: plain imperative subjects, no type prefixes.")
    return s.write(str(tmp_path / "s.jsonl"))


def status(repo: str, note_id: str) -> str:
    return notes.read(paths.note_path(repo, note_id)).get("status") or "active"


def test_a_held_back_contradiction_is_proposed_for_review(repo: str, answers, tmp_path) -> None:
    answers(0.85)  # one shared topic (commits; git is a technology): the "two shared" guard holds it back
    report = capture.capture(repo, setup(repo, tmp_path))
    (new_id,) = report.added
    assert report.superseded == [] and status(repo, "conventional-commits") == "active"
    (sent,) = report.review
    assert (sent["id"], sent["by"], sent["relation"]) == ("conventional-commits", new_id, "contradicts")
    assert any("shared" in f for f in sent["guards_failed"])
    (proposal,) = review.proposals(repo)
    assert (proposal["trailers"]["Id"], proposal["trailers"]["Winner"]) == ("conventional-commits", new_id)
    assert frozenset(("conventional-commits", new_id)) in review.pairs_seen(repo)  # the curator won't ask again


def test_when_the_old_memory_wins_the_new_one_is_proposed_as_the_loser(repo: str, answers, tmp_path) -> None:
    answers(0.9, winner="conventional-commits")
    report = capture.capture(repo, setup(repo, tmp_path))
    (new_id,) = report.added
    (sent,) = report.review
    assert (sent["id"], sent["by"]) == (new_id, "conventional-commits")
    assert status(repo, new_id) == "active" and status(repo, "conventional-commits") == "active"


def test_a_verdict_that_calls_for_nothing_is_a_line_in_the_report(repo: str, answers, tmp_path) -> None:
    answers(0.3)  # the model itself is unsure: no tension worth a person's time
    report = capture.capture(repo, setup(repo, tmp_path))
    assert report.review == [] and len(report.added) == 1
    assert report.left_alone == [{"title": NEW["title"], "other": "conventional-commits", "relation": "contradicts",
                                  "reason": "confidence 0.30 < 0.5"}]
