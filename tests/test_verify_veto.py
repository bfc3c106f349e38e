"""The model may say a rule-extracted claim is not a claim; the claim is dropped with its reason
(issue 16, defect 6)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import pytest

from helpers import ROOT, commit_all, git, write_file, write_memory
from memrepo.format import notes
from memrepo.passes import model
from memrepo.passes.verify import verifier as verify

FAKE = os.path.join(ROOT, "tests", "fake", "fakemodel.py")
BODY = ("If we ever split the settings, `src/shop/settings/production.py` would hold the production values.\n"
        "Until then everything is in `src/shop/settings.py`.\n")
HYPOTHETICAL = "a hypothetical: the file would exist only if the settings were split"


@pytest.fixture
def shop(repo: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    project = os.path.join(str(tmp_path), "shop")
    write_file(project, "src/shop/settings.py", "DEBUG = False\n")
    git(project, "init", "-q", "-b", "main")
    write_file(repo, "index/local.json", json.dumps({"projects": {"shop": project}}))
    write_memory(repo, "settings-split", title="Settings split", description="Where the settings live", project="shop",
                 body=BODY)
    assert commit_all(repo, "memory").returncode == 0
    log = os.path.join(str(tmp_path), "model.jsonl")
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE}")
    monkeypatch.setenv("FAKE_MODEL_LOG", log)

    def answer(reply: Any) -> str:
        rules = os.path.join(str(tmp_path), "rules.json")
        with open(rules, "w") as fh:
            json.dump([{"contains": "Memory id: settings-split\n", "reply": reply}], fh)
        monkeypatch.setenv("FAKE_MODEL_RULES", rules)
        return log
    return repo, answer


def test_the_model_marks_a_rule_claim_as_not_a_claim(shop: Any) -> None:
    repo, answer = shop
    # What an honest model answers: the first path is a hypothetical; index 7 names nothing.
    log = answer({"claims": [], "not_claims": [{"index": 0, "reason": HYPOTHETICAL},
                                               {"index": 7, "reason": "no such claim"}]})
    report = verify.run(repo, use_model=True, today="2026-11-29")
    result = report.results[0]
    assert [(c["claim"], c["verdict"]) for c in result.claims] == [("path_exists: src/shop/settings.py (shop)", "true")]
    assert [(r.claim, r.reason, r.by) for r in result.refused] == [
        ('path_exists {"path": "src/shop/settings/production.py"}', f"the model says it is not a claim: {HYPOTHETICAL}",
         "text")]
    assert result.status == "verified"
    assert notes.read(os.path.join(repo, "memory", "settings-split.md")).meta["claims"] == [
        {"probe": "path_exists", "args": {"path": "src/shop/settings.py"}, "by": "text"}]
    with open(os.path.join(repo, "index", verify.REFUSED_LOG)) as fh:
        assert [json.loads(line)["reason"] for line in fh] == [f"the model says it is not a claim: {HYPOTHETICAL}"]
    with open(log) as fh:
        prompt = json.loads(fh.readline())["prompt"]
    assert ('  0: path_exists {"path": "src/shop/settings/production.py"}\n'
            '  1: path_exists {"path": "src/shop/settings.py"}\n') in prompt
    assert '"not_claims": [{"index": 0, "reason": "why it is not a claim"}]' in prompt


@pytest.mark.parametrize("not_claims,error", [
    ([{"index": "0", "reason": HYPOTHETICAL}], "$.not_claims[0].index: expected integer, got str"),
    ([{"index": -1, "reason": HYPOTHETICAL}], "$.not_claims[0].index: below 0"),
    ([{"index": 0, "reason": ""}], "$.not_claims[0].reason: shorter than 1"),
    ([{"index": 0, "reason": HYPOTHETICAL, "claim": "x"}], "$.not_claims[0]: unexpected key 'claim'"),
    ({"0": HYPOTHETICAL}, "$.not_claims: expected array, got dict"),
])
def test_a_malformed_veto_vetoes_nothing_and_is_logged(shop: Any, not_claims: Any, error: str) -> None:
    repo, answer = shop
    answer({"claims": [], "not_claims": not_claims})
    result = verify.run(repo, use_model=True, today="2026-11-29").results[0]
    assert result.refused == []
    assert [(c["claim"], c["verdict"]) for c in result.claims] == [
        ("path_exists: src/shop/settings/production.py (shop)", "false"), ("path_exists: src/shop/settings.py (shop)", "true")]
    with open(os.path.join(repo, "index", model.REJECTS)) as fh:
        assert json.loads(fh.readline())["errors"] == [error]


def test_a_veto_holds_when_a_later_run_has_no_model(shop: Any) -> None:
    """A no-model sweep read the vetoed hypothetical path again, found it missing and stamped the
    memory unverified: the text rules alone are no evidence against the model's veto (issue 37)."""
    repo, answer = shop
    answer({"claims": [], "not_claims": [{"index": 0, "reason": HYPOTHETICAL}]})
    assert verify.run(repo, use_model=True, today="2026-11-29").results[0].status == "verified"
    path = os.path.join(repo, "memory", "settings-split.md")
    label = 'path_exists {"path": "src/shop/settings/production.py"}'
    assert notes.read(path).meta["verification"] == {"status": "verified", "checked": "2026-11-29",
                                                     "not_claims": [label]}
    head = git(repo, "rev-parse", "HEAD").stdout
    later = verify.run(repo, use_model=False, today="2026-11-30").results[0]
    assert later.status == "verified"
    assert [(r.claim, r.reason) for r in later.refused] == [
        (label, "a model said in an earlier run that it is not a claim")]
    assert git(repo, "rev-parse", "HEAD").stdout == head  # nothing moved: no commit
    # A model that answers again without the veto lifts it: the path is a claim once more.
    answer({"claims": [], "not_claims": []})
    again = verify.run(repo, use_model=True, today="2026-12-01").results[0]
    assert again.status == "unverified"
    assert "not_claims" not in notes.read(path).meta["verification"]


def test_a_veto_is_kept_when_the_models_answer_is_dropped(shop: Any) -> None:
    repo, answer = shop
    answer({"claims": [], "not_claims": [{"index": 0, "reason": HYPOTHETICAL}]})
    verify.run(repo, use_model=True, today="2026-11-29")
    answer({"claims": "not a list"})  # an invalid answer: no evidence either way
    result = verify.run(repo, use_model=True, today="2026-11-30").results[0]
    assert result.status == "verified"
    meta = notes.read(os.path.join(repo, "memory", "settings-split.md")).meta
    assert meta["verification"]["not_claims"] == ['path_exists {"path": "src/shop/settings/production.py"}']
