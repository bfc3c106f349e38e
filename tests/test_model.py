"""The model runner against the fake model command: answers, schema checks, ledger, failures."""

from __future__ import annotations

import json
import os
import sys

import pytest

from memrepo.passes import model

FAKE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake", "fakemodel.py")
VERDICT = {"type": "object", "additionalProperties": False, "required": ["winner", "confidence"],
           "properties": {"winner": {"type": "string"}, "confidence": {"type": "number", "minimum": 0, "maximum": 1}}}


@pytest.fixture
def fake(tmp_path, monkeypatch: pytest.MonkeyPatch):
    rules = tmp_path / "rules.json"
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE}")
    monkeypatch.setenv("FAKE_MODEL_RULES", str(rules))
    monkeypatch.setenv("FAKE_MODEL_LOG", str(log))

    def set_rules(*items: dict) -> None:
        rules.write_text(json.dumps(list(items)))

    set_rules()
    return set_rules


def rejects(repo: str) -> list[dict]:
    path = os.path.join(repo, "index", model.REJECTS)
    return [json.loads(line) for line in open(path)] if os.path.exists(path) else []


def test_valid_answer_and_ledger(repo: str, fake) -> None:
    fake({"contains": "which wins", "reply": {"winner": "b", "confidence": 0.9}})
    assert model.ask_json(repo, "curate", "which wins?", VERDICT) == {"winner": "b", "confidence": 0.9}
    (entry,) = model.ledger(repo)
    assert entry["pass"] == "curate" and entry["ok"] is True and entry["input_tokens"] == len("[memrepo background pass: curate]\nwhich wins?") // 4
    assert isinstance(entry["ms"], int)


def test_fenced_json_is_extracted_not_repaired(repo: str, fake) -> None:
    fake({"contains": "q", "reply_text": "```json\n{\"winner\": \"a\", \"confidence\": 0.8}\n```"})
    assert model.ask_json(repo, "curate", "q", VERDICT) == {"winner": "a", "confidence": 0.8}


@pytest.mark.parametrize("reply_text, error", [
    ("{\"winner\": \"a\", \"confidence\": \"high\"}", "$.confidence: expected number, got str"),
    ("{\"winner\": \"a\"}", "$: missing 'confidence'"),
    ("{\"winner\": \"a\", \"confidence\": 0.9, \"extra\": 1}", "$: unexpected key 'extra'"),
    ("{\"winner\": \"a\", \"confidence\": 1.7}", "$.confidence: above 1"),
    ("Sure! Here is the JSON: {\"winner\": \"a\"}", "not JSON"),
    ("{\"winner\": \"a\", \"confidence\": 0.9", "not JSON"),
])
def test_invalid_answers_are_dropped_and_logged(repo: str, fake, reply_text: str, error: str) -> None:
    fake({"contains": "q", "reply_text": reply_text})
    assert model.ask_json(repo, "curate", "q", VERDICT) is None
    (logged,) = rejects(repo)
    assert logged["pass"] == "curate" and any(e.startswith(error) for e in logged["errors"])


def test_secrets_in_rejected_answers_are_redacted(repo: str, fake) -> None:
    token = "ghp_" + "a1B2" * 9
    fake({"contains": "q", "reply_text": f"not json {token}"})
    assert model.ask_json(repo, "curate", "q", VERDICT) is None
    assert token not in json.dumps(rejects(repo))


def test_failures_raise_model_error(repo: str, fake, monkeypatch: pytest.MonkeyPatch) -> None:
    fake({"contains": "boom", "exit": 3})
    with pytest.raises(model.ModelError, match="exited 3"):
        model.call(repo, "curate", "boom")
    monkeypatch.setenv("MEMREPO_MODEL_CMD", "/nonexistent/model-cmd")
    with pytest.raises(model.ModelError, match="not found"):
        model.call(repo, "curate", "x")
    assert [(e["ok"], e["error"]) for e in model.ledger(repo)] == [(False, "exit 3"), (False, "not found")]


def test_command_precedence(repo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMREPO_MODEL_CMD", raising=False)
    assert model.command(repo) == ["claude", "-p", "--model", "haiku", "--output-format", "json"]
    with open(os.path.join(repo, "memrepo.json"), "w") as fh:
        json.dump({"model_cmd": "shared-model"}, fh)
    assert model.command(repo) == ["claude", "-p", "--model", "haiku", "--output-format", "json"]  # committed: ignored
    with open(os.path.join(repo, "index", "local.json"), "w") as fh:
        json.dump({"model_cmd": "my-model --fast"}, fh)
    assert model.command(repo) == ["my-model", "--fast"]
    monkeypatch.setenv("MEMREPO_MODEL_CMD", "other")
    assert model.command(repo) == ["other"]


def test_the_model_command_knows_it_runs_for_a_pass(repo: str, fake, tmp_path) -> None:
    # memrepo's own hooks inside a `claude -p` model session read this and stand aside.
    fake({"contains": "q", "reply": {"winner": "a", "confidence": 0.9}})
    model.ask_json(repo, "capture", "q", VERDICT)
    (call,) = [json.loads(line) for line in open(tmp_path / "calls.jsonl")]
    assert call["memrepo_pass"] == "capture"
