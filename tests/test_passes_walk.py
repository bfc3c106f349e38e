"""h31: a user's walk through the offline passes from the CLI, against tests/fake/fakemodel.py.

Each fake answer is written here before the pass runs on it, as a model would answer: empty,
a crash with its message on stderr, or a valid verdict. Each test is a finding of the walk
that failed before its fix.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from click.testing import CliRunner

from helpers import commit_all, git, head, write_memory
from memrepo.cli.main import cli

from test_enrich import FAKE
from test_model_failures import store  # noqa: F401 -- the fixture: one memory, the fake model, no rules yet


def _run(repo: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--repo", repo, *args])
    return result.exit_code, result.output


def test_enrich_that_gives_up_on_an_unanswered_memory_does_not_say_it_has_no_new_aliases(
        store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_MODEL_DEFAULT", "")  # an empty answer, three times
    for _ in range(2):
        code, out = _run(store, "enrich")
        assert code == 1 and "not answered, asked again next run: widgets" in out
    code, out = _run(store, "enrich")
    assert code == 1
    assert "no new aliases" not in out  # it said so: as if the model had answered
    assert "not answered 3 times, not asked again until its text changes (`memrepo enrich ID` asks now): widgets" in out


def test_enrich_of_a_memory_with_uncommitted_edits_says_it_left_it_alone(store: str) -> None:
    with open(f"{store}/memory/widgets.md", "a", encoding="utf-8") as fh:
        fh.write("Edited by hand.\n")
    before = head(store)
    code, out = _run(store, "enrich", "widgets")
    assert code == 0 and head(store) == before
    assert "nothing to enrich" not in out  # it said only that
    assert "left alone, uncommitted edits (commit them, then enrich): widgets" in out


def test_verify_whose_model_command_fails_midway_exits_1_naming_what_it_left(
        store: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    write_memory(store, "alpha", title="Alpha notes", description="Alpha is documented", body="Alpha.\n")
    assert commit_all(store, "alpha").returncode == 0
    rules = os.path.join(str(tmp_path), "rules.json")
    with open(rules, "w", encoding="utf-8") as fh:
        json.dump([{"contains": "Memory id: widgets", "exit": 2},  # the fake says "fake model failure" on stderr
                   {"contains": "Memory id: alpha", "reply": {"claims": [], "not_claims": []}}], fh)
    monkeypatch.setenv("FAKE_MODEL_RULES", rules)
    code, out = _run(store, "verify")
    assert "skip widgets: left as it was: the model command failed (the model command exited 2: fake model failure)" in out
    assert code == 1, out  # it exited 0: one memory checked, the other never read, as a success
    assert "Error: verify: the model command failed, so 1 memory was left as it was" in out
    assert "then run `memrepo verify` again" in out


def test_verify_commit_subject_counts_the_stamps_it_writes(store: str) -> None:
    write_memory(store, "alpha", title="Alpha notes", description="Alpha is documented", project="shop",
                 verification={"status": "unverified", "checked": "2026-11-20", "failed": ["path_exists: gone.py (shop)"]})
    write_memory(store, "beta", title="Beta notes", description="Beta is documented", body="See `src/beta.py`.\n")
    assert commit_all(store, "two").returncode == 0
    code, out = _run(store, "verify", "--no-model")
    assert code == 0, out
    assert "unverified alpha" in out and "unchecked  beta" in out
    subject = git(store, "log", "-1", "--format=%s").stdout.strip()
    assert subject == "verify: restamp 1 memory (0 unverified, 0 verified)"  # was "(1 unverified...)": alpha's old stamp


PART1 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "capture", "refute-part1.jsonl")


def _rules(tmp_path: Any, monkeypatch: pytest.MonkeyPatch, rules: list[dict[str, Any]]) -> None:
    path = os.path.join(str(tmp_path), "rules.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(rules, fh)
    monkeypatch.setenv("FAKE_MODEL_RULES", path)


def test_capture_by_hand_whose_answer_is_empty_names_the_command_to_run_again(
        store: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _rules(tmp_path, monkeypatch, [{"contains": "Session turns", "reply_text": ""}])
    code, out = _run(store, "capture", PART1)
    assert code == 1 and "was invalid (logged to index/model-rejects.jsonl); those turns stay pending" in out
    assert "the next sweep tries again" not in out  # no job exists for a capture by hand
    assert f"hint: run `memrepo capture {PART1}` again" in out


def test_capture_whose_model_command_crashes_says_how_to_fix_it(
        store: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _rules(tmp_path, monkeypatch, [{"contains": "Session turns", "exit": 1}])
    code, out = _run(store, "capture", PART1)
    assert code == 1 and "Error: the model command exited 1: fake model failure\n" in out
    assert "hint: run the model command (MEMREPO_MODEL_CMD, or `model_cmd` in index/local.json) by hand" in out


def test_capture_names_its_failed_verdict_calls(store: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    memory = {"class": "fact", "title": "Widget service restarts with make restart",
              "description": "The widget service restarts with make restart.", "topics": ["widgets", "restart"],
              "entities": [], "tech": [], "body": "Widget service: `make restart`.", "evidence": ["t2"], "scope": "global"}
    # The capture answer is valid; the verdict on its neighbour `widgets` is `{}`, which no verdict is.
    _rules(tmp_path, monkeypatch, [{"contains": "Session turns", "reply": {"memories": [memory], "refuted": []}},
                                   {"contains": "pass: enrich", "reply": {"memories": []}}])
    code, out = _run(store, "capture", PART1)
    assert code == 0, out
    assert "capture: 1 of 3 model calls failed (last: the model's answer is not valid ($: missing 'relation')" in out, out
    # it said "3 model calls" and nothing else


@pytest.mark.parametrize("args", [["curate"], ["verify"], ["enrich"]])
def test_a_pass_that_would_ask_the_model_stops_in_recall_only_mode(store: str, monkeypatch: pytest.MonkeyPatch,
                                                                    args: list[str]) -> None:
    monkeypatch.setenv("MEMREPO_RECALL_ONLY", "1")
    before = head(store)
    code, out = _run(store, *args)
    assert code == 1 and head(store) == before
    # curate ran, reported "1 model calls" and exited 0; verify printed a skip line per memory first
    assert out.startswith("Error: recall-only mode is on: memrepo runs no model call\n"), out


def _mid_merge(repo: str) -> None:
    git(repo, "checkout", "-q", "-b", "side")
    write_memory(repo, "widgets", title="Widget service runbook, side", description="How the widget service restarts")
    commit_all(repo, "side")
    git(repo, "checkout", "-q", "main")
    write_memory(repo, "widgets", title="Widget service runbook, main", description="How the widget service restarts")
    commit_all(repo, "main")
    assert git(repo, "merge", "side", check=False).returncode == 1  # a conflict in widgets.md


@pytest.mark.parametrize("args", [["curate"], ["verify"], ["enrich", "widgets"], ["capture", PART1]])
def test_a_pass_run_by_hand_mid_merge_stops_before_the_model(store: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch,
                                                              args: list[str]) -> None:
    log = os.path.join(str(tmp_path), "calls.jsonl")
    monkeypatch.setenv("FAKE_MODEL_LOG", log)
    _mid_merge(store)
    code, out = _run(store, *args)
    assert code == 1
    # enrich said to take the "hand edit" back with `git checkout`; the others asked the model first
    assert "Error: a merge is in progress in" in out and "memrepo writes nothing until it is finished" in out, out
    assert not os.path.exists(log)
