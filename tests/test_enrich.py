"""Enrichment: aliases from the fake model, copies of the memory's own words dropped, recall measured."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time

import pytest
from click.testing import CliRunner

from helpers import commit_all, head, write_memory
from memrepo.passes import enrich
from memrepo.evaluation import evaluate
from memrepo.format import notes
from memrepo.base import paths
from memrepo.vcs import runs
from memrepo.cli.main import cli

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "capture", "enrich")
FAKE = os.path.join(HERE, "fake", "fakemodel.py")
TODAY = time.mktime((2026, 11, 29, 0, 0, 0, 0, 0, -1))


@pytest.fixture
def model_rules(monkeypatch: pytest.MonkeyPatch, tmp_path: str) -> str:
    log = os.path.join(str(tmp_path), "model.jsonl")
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE}")
    monkeypatch.setenv("FAKE_MODEL_RULES", os.path.join(DATA, "aliases-rules.json"))
    monkeypatch.setenv("FAKE_MODEL_LOG", log)
    return log


def labeled_store(repo: str) -> str:
    for name in os.listdir(os.path.join(DATA, "memory")):
        shutil.copy(os.path.join(DATA, "memory", name), os.path.join(repo, "memory", name))
    assert commit_all(repo, "labeled set").returncode == 0
    return repo


@pytest.mark.parametrize("word, expected", [("deploys", "deploy"), ("deploying", "deploy"), ("deployed", "deploy"),
                                            ("queries", "query"), ("approvals", "approval"), ("tabs", "tab"), ("is", "is")])
def test_stem(word: str, expected: str) -> None:
    assert enrich.stem(word) == expected


def test_aliases_that_copy_own_words_are_dropped() -> None:
    note = notes.new_note(id="friday-deploy-freeze", title="No production deploys on Friday afternoon", class_="rule",
                          source="user", description="After 16:00 on Fridays nothing ships to production.",
                          topics=["release policy"], aliases=["ship it friday"], body="Ask the lead first.\n")
    kept, dropped = enrich.filter_aliases(note, [
        "production deploys on Friday", "Friday afternoon deploying", "the release policy", "ship it Friday",
        "push the hotfix live before the weekend", "am I about to break prod?", "the", "ask the lead"])
    assert kept == ["push the hotfix live before the weekend", "am I about to break prod?"]
    assert dropped == ["production deploys on Friday", "Friday afternoon deploying", "the release policy", "ship it Friday",
                       "the", "ask the lead"]


def test_recall_before_and_after_enrichment(repo: str, model_rules: str) -> None:
    labeled_store(repo)
    prompts = os.path.join(DATA, "prompts.jsonl")
    before = evaluate.run(prompts, repo=repo, today=TODAY)["summary"]
    report = enrich.run(repo)
    after = evaluate.run(prompts, repo=repo, today=TODAY)["summary"]
    # Before, a prompt shares at most one word with its memory, which the decision reads as weak
    # evidence (at most two of the eight hit); the aliases bring every one.
    assert before["hit@2"] <= 0.25 and after["hit@2"] == 1.0
    assert before["hit@1"] <= 0.25 and after["hit@1"] == 1.0
    assert report["model_calls"] == 1 and len(report["enriched"]) == 8
    assert report["dropped"]["tabs-in-makefiles"] == ["tabs in Makefiles"]
    note = notes.read(paths.note_path(repo, "tabs-in-makefiles"))
    assert note.get("aliases") == ["missing separator error", "build recipe indentation"]
    (entry,) = [e for e in runs.log(repo) if e["trailers"].get("Action") == "enrich"]
    assert entry["trailers"] == {"Action": "enrich", "Run": report["run_id"], "Count": "8", "Model": "enrich 1 answered"}


def test_copies_alone_change_nothing(repo: str, model_rules: str, monkeypatch: pytest.MonkeyPatch, tmp_path: str) -> None:
    labeled_store(repo)
    unenriched = evaluate.run(os.path.join(DATA, "prompts.jsonl"), repo=repo, today=TODAY)["summary"]["hit@2"]
    rules = json.load(open(os.path.join(DATA, "aliases-rules.json")))
    for item in rules[0]["reply"]["memories"]:
        note = notes.read(paths.note_path(repo, item["id"]))
        item["aliases"] = [str(note.get("title")), " ".join(str(note.get("description")).split()[:4])]
    path = os.path.join(str(tmp_path), "copies.json")
    json.dump(rules, open(path, "w"))
    monkeypatch.setenv("FAKE_MODEL_RULES", path)
    before = head(repo)
    report = enrich.run(repo)
    assert report["enriched"] == {} and head(repo) == before
    assert sum(len(v) for v in report["dropped"].values()) == 16
    assert evaluate.run(os.path.join(DATA, "prompts.jsonl"), repo=repo, today=TODAY)["summary"]["hit@2"] == unenriched


def test_enrichment_is_idempotent_and_skips_uncommitted_files(repo: str, model_rules: str) -> None:
    labeled_store(repo)
    with open(paths.note_path(repo, "oncall-escalation"), "a", encoding="utf-8") as fh:
        fh.write("An edit in progress.\n")
    first = enrich.run(repo)
    assert first["skipped_dirty"] == ["oncall-escalation"] and "oncall-escalation" not in first["enriched"]
    calls = len(open(model_rules).readlines())
    second = enrich.run(repo)
    assert second["asked"] == [] and second["skipped_dirty"] == ["oncall-escalation"]
    assert len(open(model_rules).readlines()) == calls  # nothing left to ask about


def test_enrich_command_for_named_ids(repo: str, model_rules: str) -> None:
    labeled_store(repo)
    result = CliRunner().invoke(cli, ["--repo", repo, "enrich", "vpn-split-tunnel"], catch_exceptions=False)
    assert result.exit_code == 0
    # The scripted answer holds every labeled memory; asked about one, the rest are reported, not applied.
    assert result.output == ("vpn-split-tunnel: container image downloads freeze, working from home slow pulls\n"
                             "the model answered for ids it was not asked about, ignored: friday-deploy-freeze, "
                             "pgbouncer-transaction-mode, oncall-escalation, tabs-in-makefiles, invoice-pdfgen, "
                             "staging-db-refresh, two-approvals-rule\n")
    bad = CliRunner().invoke(cli, ["--repo", repo, "enrich", "no-such-id"])
    assert bad.exit_code == 1 and "no memory with id 'no-such-id'" in bad.output


def test_enriched_memory_is_not_asked_again_until_it_changes(repo: str, model_rules: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    write_memory(repo, "plain", title="Plain memory about widgets", topics=["widgets"])
    assert commit_all(repo, "m").returncode == 0
    assert [n.id for n in enrich.needs_enrichment(repo)] == ["plain"]
    monkeypatch.delenv("FAKE_MODEL_RULES")  # the scripted answer is about other memories
    monkeypatch.setenv("FAKE_MODEL_DEFAULT", '{"memories": []}')  # an honest "nothing to add"
    enrich.run(repo)  # no aliases, but it was asked and answered
    assert enrich.needs_enrichment(repo) == []
    write_memory(repo, "plain", title="Plain memory about gadgets", topics=["gadgets"])
    assert [n.id for n in enrich.needs_enrichment(repo)] == ["plain"]


def test_a_rejected_answer_leaves_the_memory_pending_a_bounded_number_of_times(repo: str, model_rules: str,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 16: an answer that fails the schema (here one extra key a small model adds) is not "asked"."""
    write_memory(repo, "plain", title="Plain memory about widgets", topics=["widgets"])
    assert commit_all(repo, "m").returncode == 0
    monkeypatch.delenv("FAKE_MODEL_RULES")
    monkeypatch.setenv("FAKE_MODEL_DEFAULT", json.dumps(
        {"memories": [{"id": "plain", "aliases": ["widget notes"], "confidence": 0.8}]}))
    first = enrich.run(repo)
    assert (first["enriched"], first["pending"], first["gave_up"]) == ({}, ["plain"], [])
    assert [n.id for n in enrich.needs_enrichment(repo)] == ["plain"]  # asked again next time
    assert enrich.run(repo)["pending"] == ["plain"]
    third = enrich.run(repo)
    assert (third["pending"], third["gave_up"]) == ([], ["plain"])  # three rejections: left alone
    assert enrich.needs_enrichment(repo) == []
    write_memory(repo, "plain", title="Plain memory about gadgets", topics=["gadgets"])
    assert [n.id for n in enrich.needs_enrichment(repo)] == ["plain"]  # a new wording asks again


def test_a_hand_formatted_memory_gets_its_aliases(repo: str, monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """Keys in a person's own order (and a quoted date) are not "changed since read" (issue 16)."""
    text = ("---\ntitle: Release checklist for the shop\nid: release-checklist\nclass: reference\n"
            "created: '2026-11-02'\nsource: user\ndescription: Steps before tagging a release of the shop.\n---\n"
            "Run the migrations check, bump the version in pyproject.toml, then tag.\n")
    open(os.path.join(repo, "memory", "release-checklist.md"), "w", encoding="utf-8").write(text)
    assert commit_all(repo, "by hand").returncode == 0
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"contains": "release-checklist", "reply": {"memories": [
        {"id": "release-checklist", "aliases": ["ship a new build", "publish the package to pypi"]}]}}]))
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE}")
    monkeypatch.setenv("FAKE_MODEL_RULES", str(rules))
    report = enrich.run(repo)
    assert report["enriched"] == {"release-checklist": ["ship a new build", "publish the package to pypi"]}, report
    assert "commit" in report
