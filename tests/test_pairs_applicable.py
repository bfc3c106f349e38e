"""Only pairs a verdict could move are put to the model (issue 16, defect 8): a project's name
as an entity relates nothing, and capture never compares a memory with another project's."""

from __future__ import annotations

import json
import os
import sys

from helpers import ROOT, commit_all, write_memory
from memrepo.passes import capture
from memrepo.passes.curate import curator as curate

sys.path.insert(0, os.path.join(ROOT, "tests", "data", "capture"))
from ccbuild import Session  # noqa: E402

FAKE = os.path.join(ROOT, "tests", "fake", "fakemodel.py")
UNRELATED = {"relation": "unrelated", "winner": "none", "confidence": 0.9, "scope": "partial", "reason": "Different subjects."}


def fake(tmp_path, monkeypatch, rules: list[dict]) -> str:
    log = tmp_path / "calls.jsonl"
    (tmp_path / "rules.json").write_text(json.dumps(rules))
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE}")
    monkeypatch.setenv("FAKE_MODEL_RULES", str(tmp_path / "rules.json"))
    monkeypatch.setenv("FAKE_MODEL_LOG", str(log))
    monkeypatch.setenv("FAKE_MODEL_DEFAULT", json.dumps(UNRELATED))
    return str(log)


def prompts(log: str, needle: str) -> list[str]:
    return [p for p in (json.loads(line)["prompt"] for line in open(log)) if needle in p] if os.path.exists(log) else []


def test_the_project_name_as_an_entity_pairs_nothing(repo: str, tmp_path, monkeypatch) -> None:
    log = fake(tmp_path, monkeypatch, [])
    for mid, topics, title, text in (
            ("shop-tabs", ["formatting"], "Tabs for indentation", "Python files are indented with tabs."),
            ("shop-deploys", ["deploy"], "Deploys need a green pipeline", "Merge only after CI passed."),
            ("shop-db-port", ["database"], "Postgres listens on 5433", "Not the default port.")):
        write_memory(repo, mid, project="shop", entities=["shop"], topics=topics, title=title, description=text, body=text + "\n")
    assert commit_all(repo, "three shop memories").returncode == 0
    report = curate.run(repo)
    assert report.model_calls == 0 and prompts(log, "You curate a memory store") == []


def test_a_named_subject_other_than_the_project_still_pairs(repo: str, tmp_path, monkeypatch) -> None:
    log = fake(tmp_path, monkeypatch, [])
    for mid in ("shop-stripe-webhooks", "shop-stripe-keys"):
        write_memory(repo, mid, project="shop", entities=["shop", "stripe"], topics=["payments"], title=f"About {mid}")
    assert commit_all(repo, "two stripe memories").returncode == 0
    assert curate.run(repo).model_calls == 1 and len(prompts(log, "You curate a memory store")) == 1


def test_capture_does_not_compare_with_another_projects_memories(repo: str, tmp_path, monkeypatch) -> None:
    blog = tmp_path / "blog"
    write_memory(repo, "blog-deploys-on-friday", project="blog", class_="rule", title="Deploys are allowed on Friday",
                 description="The blog deploys any day, Fridays included.", topics=["deploy", "friday"])
    assert commit_all(repo, "blog rule").returncode == 0
    item = {"class": "rule", "title": "No deploys on Friday", "description": "The shop never deploys on a Friday.",
            "topics": ["deploy", "friday"], "entities": [], "tech": [], "body": "The user said: no deploys on Fridays.",
            "evidence": ["t1"], "scope": "project"}
    log = fake(tmp_path, monkeypatch, [{"contains": "Session turns", "reply": {"memories": [item], "refuted": []}}])
    s = Session("0c0c0000-0000-4000-8000-000000000001", cwd="/nonexistent/src/shop")
    s.user("Rule for the shop: we never deploy on a Friday.")
    report = capture.capture(repo, s.write(str(tmp_path / "s.jsonl")))
    assert report.added == ["no-deploys-friday"]
    assert prompts(log, "You curate a memory store") == []  # the blog's rule is not the shop's
    assert not blog.exists()
