"""A secret said in prose never reaches the model or the store (issue 16, defect 9), and the
capture prompt tells the model never to copy one."""

from __future__ import annotations

import json
import os
import sys

from helpers import ROOT, git
from memrepo.passes import capture

sys.path.insert(0, os.path.join(ROOT, "tests", "data", "capture"))
from ccbuild import Session  # noqa: E402

FAKE = os.path.join(ROOT, "tests", "fake", "fakemodel.py")
PASSWORD = "S3cr3tPa55" + "w0rdX9q"
STRIPE = "sk_test_" + "4eC39HqLyjWDarjtT1zdp7dc"


def _model_finding_nothing(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    """The fake capture model, answering every session with no memory; returns its call log."""
    log = tmp_path / "calls.jsonl"
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"contains": "Session turns", "reply": {"memories": [], "refuted": []}}]))
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE}")
    monkeypatch.setenv("FAKE_MODEL_RULES", str(rules))
    monkeypatch.setenv("FAKE_MODEL_LOG", str(log))
    return log


def test_a_password_in_an_assistant_message_is_redacted_before_the_model(repo: str, tmp_path, monkeypatch) -> None:
    log = _model_finding_nothing(tmp_path, monkeypatch)
    s = Session("5ec2e700-0000-4000-8000-000000000001", cwd=str(tmp_path))
    s.user("Set up the staging database user for the billing service.")
    s.say(f"Done: I created the user `billing` with password {PASSWORD} and put the Stripe key {STRIPE} in .env.")
    capture.capture(repo, s.write(str(tmp_path / "s.jsonl")))
    (sent,) = [json.loads(line)["prompt"] for line in log.read_text().splitlines()]
    assert PASSWORD not in sent and STRIPE not in sent
    assert "[REDACTED:" in sent and "Never copy a secret" in sent
    assert PASSWORD not in git(repo, "log", "-p", "--all").stdout


def test_no_secret_of_the_corpus_reaches_the_model_or_the_store(repo: str, tmp_path, monkeypatch) -> None:
    # Issue 38, part 4: every provider format of tests/data/secrets/ in four contexts.
    from secrets_corpus import cases

    corpus = cases()
    log = _model_finding_nothing(tmp_path, monkeypatch)
    s = Session("5ec2e700-0000-4000-8000-000000000002", cwd=str(tmp_path))
    for case in corpus:
        s.user(f"Keep this for the staging deploy: {case.text}")
        s.say(f"Done, it is in the env file now:\n{case.text}")
    capture.capture(repo, s.write(str(tmp_path / "s.jsonl")))
    sent = "".join(json.loads(line)["prompt"] for line in log.read_text().splitlines())
    assert "[REDACTED:" in sent
    assert [c.name for c in corpus if c.secret in sent] == []
    history = git(repo, "log", "-p", "--all").stdout
    assert [c.name for c in corpus if c.secret in history] == []
