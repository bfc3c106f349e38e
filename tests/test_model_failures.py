"""Issue 37: a prose or invalid answer is a failed call, and a command that reports no usage
gets an estimate labelled as one. Real CLI commands against tests/fake/fakemodel.py, whose
answers are written here before the passes run on them: an apology where JSON was asked for
is what a cautious model does say."""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner

from helpers import commit_all, head, write_memory
from memrepo.cli.main import cli
from memrepo.passes import model
from memrepo.vcs import trailers

from test_enrich import FAKE

APOLOGY = "Sorry, I cannot help with that."


@pytest.fixture
def store(repo: str, monkeypatch: pytest.MonkeyPatch) -> str:
    write_memory(repo, "widgets", title="Widget service runbook", description="How the widget service restarts",
                 topics=["widgets"], body="Restart with `make restart`.\n")
    assert commit_all(repo, "m").returncode == 0
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE}")
    monkeypatch.delenv("FAKE_MODEL_RULES", raising=False)
    return repo


def _stats(repo: str) -> dict:
    out = CliRunner().invoke(cli, ["--repo", repo, "stats", "--json"], catch_exceptions=False)
    return json.loads(out.output)  # type: ignore[no-any-return]


def test_an_apology_instead_of_json_fails_enrich_and_counts_as_a_failed_call(store: str,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_MODEL_DEFAULT", APOLOGY)
    before = head(store)
    result = CliRunner().invoke(cli, ["--repo", store, "enrich"])
    assert result.exit_code == 1, result.output
    assert "enrich: 1 of 1 model call failed (last: the model's answer is not valid" in result.output
    assert "no model call answered, so nothing was learned from the model" in result.output
    assert "not answered, asked again next run: widgets" in result.output
    assert "no new aliases" not in result.output  # not a quiet day: nobody answered
    assert head(store) == before
    row = _stats(store)["model"]["enrich"]
    assert (row["calls"], row["failed"]) == (1, 1)
    assert _stats(store)["model_failures"][-1]["error"].startswith("invalid answer (not JSON")
    [entry] = model.ledger(store)
    assert entry["ok"] is False and "est_input_tokens" not in entry and entry["input_tokens"] > 0


def test_a_valid_answer_is_not_a_failure(store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_MODEL_DEFAULT", json.dumps({"memories": [{"id": "widgets", "aliases": ["bounce the widget box"]}]}))
    result = CliRunner().invoke(cli, ["--repo", store, "enrich"])
    assert result.exit_code == 0, result.output
    assert "widgets: bounce the widget box" in result.output and "failed" not in result.output
    assert _stats(store)["model"]["enrich"]["failed"] == 0


def test_tokens_are_reported_as_the_command_gave_them_and_estimated_only_when_it_gave_none(
        store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    answer = json.dumps({"memories": [{"id": "widgets", "aliases": ["bounce the widget box"]}]})
    monkeypatch.setenv("FAKE_MODEL_DEFAULT", answer)
    monkeypatch.setenv("FAKE_MODEL_USAGE", json.dumps({"input_tokens": 7, "output_tokens": 11,
                                                       "cache_read_input_tokens": 900,
                                                       "cache_creation_input_tokens": 100}))
    assert CliRunner().invoke(cli, ["--repo", store, "enrich"]).exit_code == 0
    write_memory(store, "gadgets", title="Gadget deploys", description="How gadgets deploy", topics=["gadgets"])
    assert commit_all(store, "m2").returncode == 0
    monkeypatch.delenv("FAKE_MODEL_USAGE")
    monkeypatch.setenv("FAKE_MODEL_PLAIN", "1")
    monkeypatch.setenv("FAKE_MODEL_DEFAULT", json.dumps({"memories": [{"id": "gadgets", "aliases": ["ship a gadget"]}]}))
    assert CliRunner().invoke(cli, ["--repo", store, "enrich"]).exit_code == 0
    reported, estimated = model.ledger(store)
    assert {k: reported[k] for k in model.USAGE_KEYS} == {"input_tokens": 7, "output_tokens": 11,
                                                         "cache_creation_input_tokens": 100,
                                                         "cache_read_input_tokens": 900}
    assert "est_input_tokens" not in reported and not any(k in estimated for k in model.USAGE_KEYS)
    assert estimated["est_output_tokens"] == -(-len(json.dumps({"memories": [{"id": "gadgets", "aliases": ["ship a gadget"]}]})) // 4)
    row = _stats(store)["model"]["enrich"]
    assert (row["reported_calls"], row["estimated_calls"], row["input_tokens"]) == (1, 1, 7)
    text = CliRunner().invoke(cli, ["--repo", store, "stats"], catch_exceptions=False).output
    line = next(x for x in text.splitlines() if x.startswith("model enrich:"))
    assert "7 in (+1,000 cache) / 11 out tokens, as the command reported for 1 call" in line
    assert f"≈{estimated['est_input_tokens']:,} in / ≈{estimated['est_output_tokens']:,} out tokens estimated " \
           "(characters / 4) for 1 call whose command reports no usage" in line


def test_verify_against_a_failing_model_exits_1_and_commits_nothing(store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} -c 'raise SystemExit(3)'")
    before = head(store)
    result = CliRunner().invoke(cli, ["--repo", store, "verify"])
    assert result.exit_code == 1, result.output
    assert "skip widgets: left as it was: the model command failed (the model command exited 3" in result.output
    assert "verify: no model call answered" in result.output
    assert head(store) == before


def test_a_verify_commit_says_which_memories_the_model_was_heard_for(store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    write_memory(store, "second", title="Second runbook", description="Another", body="See `missing/file.py`.\n")
    assert commit_all(store, "second").returncode == 0
    monkeypatch.setenv("FAKE_MODEL_DEFAULT", json.dumps({"claims": []}))
    result = CliRunner().invoke(cli, ["--repo", store, "verify"])
    assert result.exit_code == 0, result.output
    entry = trailers.read(store, limit=1)[0]
    assert entry["commit"] == head(store)
    assert entry["trailers"]["Model"] == "verify heard for 2 memories"
