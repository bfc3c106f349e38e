"""What a captured memory says about itself (issue 16, defect 12): the day the session
established it, a short id, and its project even after the session's folder is gone.

The fake model answers what an honest model would for these turns (written before the pass ran).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from helpers import ROOT
from memrepo.format import notes
from memrepo.passes import capture
from memrepo.base import paths
from memrepo.store import memories as store

sys.path.insert(0, os.path.join(ROOT, "tests", "data", "capture"))
from ccbuild import Session  # noqa: E402

FAKE = os.path.join(ROOT, "tests", "fake", "fakemodel.py")
RULE = {"class": "rule", "title": "Never force-push to the main branch of the shop repository",
        "description": "Force-pushing to main is not allowed in the shop repo.", "topics": ["git", "branches"],
        "entities": ["shop"], "tech": ["git"], "body": "The user said: never force-push to main.", "evidence": ["t1"],
        "scope": "project"}
FACT = {"class": "fact", "title": "Production runs Postgres 16", "description": "The production database is PostgreSQL 16.",
        "topics": ["database", "production"], "entities": [], "tech": ["postgres"], "body": "Prod runs Postgres 16.",
        "evidence": ["t3"], "scope": "project"}


@pytest.fixture
def answer(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"contains": "Session turns", "reply": {"memories": [RULE, FACT], "refuted": []}}]))
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE}")
    monkeypatch.setenv("FAKE_MODEL_RULES", str(rules))


def session(tmp_path, cwd: str) -> str:
    s = Session("abcd0000-0000-4000-8000-000000000001", cwd=cwd)
    s.user("Rule for the shop repo: never force-push to main.", timestamp="2026-11-20T12:00:00.000Z")
    s.assistant({"type": "text", "text": "Understood, no force-pushes to main."})
    s.lines[-1]["timestamp"] = "2026-11-20T12:00:30.000Z"
    s.user("By the way, prod runs Postgres 16 since last week.", timestamp="2026-11-27T12:00:00.000Z")
    return s.write(str(tmp_path / "abcd.jsonl"))


def captured(repo: str) -> dict[str, notes.Note]:
    return {f[:-3]: notes.read(os.path.join(paths.memory_dir(repo), f)) for f in os.listdir(paths.memory_dir(repo)) if f.endswith(".md")}


def test_dated_when_the_session_established_it_with_a_short_id(repo: str, answer, tmp_path) -> None:
    report = capture.capture(repo, session(tmp_path, "/nonexistent/work/shop"))
    assert report.added == ["never-force-push-main-branch-shop", "production-runs-postgres-16"]
    found = captured(repo)
    assert found["never-force-push-main-branch-shop"].get("created") == "2026-11-20"
    assert found["production-runs-postgres-16"].get("created") == "2026-11-27"


def test_a_gone_folder_keeps_its_project(repo: str, answer, tmp_path) -> None:
    report = capture.capture(repo, session(tmp_path, "/nonexistent/work/shop"))
    assert {captured(repo)[i].get("project") for i in report.added} == {"shop"}


def test_a_gone_folder_inside_a_configured_root_is_that_project(repo: str, answer, tmp_path) -> None:
    root = tmp_path / "checkouts" / "shop"
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", "git@github.com:acme/shop.git"], check=True)
    with open(os.path.join(repo, "index", "local.json"), "w") as fh:
        json.dump({"projects": {"shop": str(root)}}, fh)
    # A worktree of the shop under the root, removed before the capture ran.
    report = capture.capture(repo, session(tmp_path, str(root / "worktrees" / "fix-login")))
    assert {captured(repo)[i].get("project") for i in report.added} == {"github.com/acme/shop"}


def test_short_ids() -> None:
    assert store.short_slug("Staging 502s come from the nginx proxy timeout") == "staging-502s-come-nginx-proxy-timeout"
    assert store.short_slug("Use pnpm, not npm, in the web app") == "use-pnpm-not-npm-web-app"
    assert len(store.short_slug("a " + "word " * 40)) <= store.MAX_CAPTURED_ID
