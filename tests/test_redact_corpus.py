"""The labeled secrets corpus (tests/data/secrets/) through every detector and the write path
(issue 38, part 4): each provider format in prose, `KEY=value`, YAML and JSON is redacted, and
ordinary technical text is left alone."""

from __future__ import annotations

import os
import sys

import pytest
from click.testing import CliRunner

from helpers import ROOT, git
from memrepo.cli.main import cli
from memrepo.format import catalogue, notes, redact
from memrepo.passes import capture
from memrepo.recall import secretish
from memrepo.store import sessions
from secrets_corpus import Case, cases, negatives

sys.path.insert(0, os.path.join(ROOT, "tests", "data", "capture"))
from ccbuild import Session  # noqa: E402

CASES = cases()
NEGATIVES = negatives()


def test_the_corpus_holds_every_format_in_four_contexts() -> None:
    assert len(CASES) == 4 * len({c.fmt for c in CASES}) >= 4 * 38
    assert len(NEGATIVES) >= 30


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_every_secret_of_the_corpus_is_redacted(case: Case) -> None:
    assert case.secret not in catalogue.redact(case.text)
    assert catalogue.find_secrets(case.text)
    # The stdlib catalogue alone finds it too, so the prompt path's pre-check (which knows
    # only that one) says yes to it.
    assert case.secret not in redact.redact(case.text)
    assert secretish.may_hold_secret(case.text)


@pytest.mark.parametrize("text", NEGATIVES)
def test_ordinary_technical_text_is_no_secret(text: str) -> None:
    assert catalogue.find_secrets(text) == []
    assert catalogue.redact(text) == text


@pytest.mark.parametrize(("text", "kept"), [
    ('db_pass = "hunter2x"', 'db_pass = "'),
    ('api_key = "Short1"', 'api_key = "'),
])
def test_the_library_catalogue_adds_what_the_stdlib_one_misses(text: str, kept: str) -> None:
    assert redact.redact(text) == text
    assert catalogue.redact(text).startswith(kept + "[REDACTED:secret-keyword]")


def test_memrepo_add_refuses_what_only_the_library_catalogue_finds(repo: str) -> None:
    result = CliRunner().invoke(cli, ["--repo", repo, "add", "--class", "fact", "--title", "Billing database",
                                      "-d", "How the billing service logs in", "--body", 'db_pass = "hunter2x"'])
    assert result.exit_code == 1 and "looks like a secret (secret-keyword" in result.output
    assert "hunter2x" not in git(repo, "log", "-p", "--all").stdout


def test_memrepo_add_commits_no_secret_of_the_corpus(repo: str) -> None:
    runner = CliRunner()
    for i, case in enumerate(CASES):
        result = runner.invoke(cli, ["--repo", repo, "add", "--class", "fact", "--title", f"Staging access {i}",
                                     "-d", "How the staging service reaches its provider", "--body", case.text])
        assert result.exit_code == 1 and "looks like a secret" in result.output, (case.name, result.output)
    history = git(repo, "log", "-p", "--all").stdout
    assert [c.name for c in CASES if c.secret in history] == []


def test_capture_keeps_no_secret_of_the_corpus_in_a_memory() -> None:
    for case in CASES:
        item = {"title": "Staging access", "description": case.text.splitlines()[0][:200], "class": "fact",
                "topics": ["staging"], "entities": [case.text.splitlines()[0][:80]], "tech": [], "scope": "global",
                "body": case.text}
        text = notes.serialize(capture.to_note(item, "s-1", None))
        assert case.secret not in text, case.name


def test_the_transcript_store_holds_no_secret_of_the_corpus(repo: str, tmp_path: str) -> None:
    s = Session("5ec2e700-0000-4000-8000-0000000000c0")
    for case in CASES:
        s.user(f"Remember this for staging: {case.text}")
        s.say(f"Noted; I put it in the env file:\n{case.text}")
    sessions.index(repo, s.write(os.path.join(str(tmp_path), "corpus.jsonl")))
    stored = b""
    for suffix in ("", "-wal"):
        if os.path.exists(sessions.db_path(repo) + suffix):
            with open(sessions.db_path(repo) + suffix, "rb") as fh:
                stored += fh.read()
    assert len(sessions.turns_of(repo, s.session_id)) == 2 * len(CASES)
    assert [c.name for c in CASES if c.secret.encode() in stored] == []


def test_the_library_never_sends_a_secret_to_its_provider() -> None:
    from detect_secrets.settings import get_settings

    assert catalogue.find_secrets('db_pass = "hunter2x"')
    assert catalogue.VERIFY not in get_settings().filters
