"""The capture pass with the fake model: evidence, refutation, dedup, review routing, and no leaks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from helpers import commit_all, git, head, write_memory
from memrepo.passes import capture
from memrepo.format import notes
from memrepo.base import paths
from memrepo.recall import decide as recall
from memrepo.vcs import runs
from memrepo.cli.main import cli
from memrepo.errors import MemrepoError

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "capture")
FAKE = os.path.join(HERE, "fake", "fakemodel.py")
FAKE_KEY = "sk-ant-api03-" + "Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lz"
PRIVATE = "Tr0ub4dor-and-3"
SESSION = "7c0ffee0-1111-4222-8333-444455556666"
HYPOTHESIS = "staging-502s-come-nginx-proxy-timeout"
CONFIRMED = "staging-502s-came-gunicorn-worker"
RULE = "run-make-check-before-pushing-staging"


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch, tmp_path: str) -> str:
    log = os.path.join(str(tmp_path), "model-log.jsonl")
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE}")
    monkeypatch.setenv("FAKE_MODEL_RULES", os.path.join(DATA, "refute-rules.json"))
    monkeypatch.setenv("FAKE_MODEL_LOG", log)
    return log


def prompts(log: str) -> list[str]:
    if not os.path.exists(log):
        return []
    return [json.loads(line)["prompt"] for line in open(log, encoding="utf-8")]


def session_file(tmp_path: str, parts: int) -> str:
    path = os.path.join(str(tmp_path), f"{SESSION}.jsonl")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(open(os.path.join(DATA, "refute-part1.jsonl"), encoding="utf-8").read())
        if parts > 1:
            fh.write(open(os.path.join(DATA, "refute-part2.jsonl"), encoding="utf-8").read().replace("@@FAKE_KEY@@", FAKE_KEY))
    return path


def status(repo: str, note_id: str) -> tuple[str, str | None]:
    note = notes.read(paths.note_path(repo, note_id))
    return note.get("status") or "active", note.get("superseded_by")


def test_hypothesis_then_refutation_ends_superseded_and_confirmed_live(repo: str, fake_model: str, tmp_path: str) -> None:
    path = session_file(tmp_path, 1)
    first = capture.capture(repo, path)
    assert first.added == [HYPOTHESIS, RULE]
    assert first.dropped == [{"title": "The build takes four minutes", "reason": "evidence not in the transcript part: ['t99']"}]
    with open(path, "a", encoding="utf-8") as fh:  # the session goes on, then the next hook fires
        fh.write(open(os.path.join(DATA, "refute-part2.jsonl"), encoding="utf-8").read().replace("@@FAKE_KEY@@", FAKE_KEY))
    second = capture.capture(repo, path)
    assert second.added == [CONFIRMED]
    assert [(r["id"], r["action"], r["by"]) for r in second.refuted] == [(HYPOTHESIS, "supersede", CONFIRMED)]
    assert status(repo, HYPOTHESIS) == ("superseded", CONFIRMED)
    assert status(repo, CONFIRMED) == ("active", None) and status(repo, RULE) == ("active", None)
    live = notes.read(paths.note_path(repo, CONFIRMED))
    assert (live.get("source"), live.get("session")) == ("capture", SESSION)
    assert live.get("aliases") == ["bad gateway on staging", "why does the staging release hang"]
    # The earlier captures were shown to the model so it could refute them.
    assert f"[{HYPOTHESIS}] (fact) Staging 502s come from the nginx proxy timeout" in prompts(fake_model)[-3]
    actions = [(e["trailers"]["Action"], e["trailers"].get("Id")) for e in runs.log(repo)]
    assert actions == [("supersede", HYPOTHESIS), ("capture", None), ("capture", None), ("init", None)]
    refute_commit = runs.log(repo)[0]["trailers"]
    assert refute_commit["Run"] == second.run_id and refute_commit["Session"] == SESSION and refute_commit["Refuted"] == "yes"
    # The session's folder (/home/user/shop) is not on this machine: its memories are still the shop's.
    assert (live.get("project"), notes.read(paths.note_path(repo, RULE)).get("project")) == ("shop", "shop")
    d = recall.decide(repo, "why does the staging deploy return a 502?", project="shop")
    assert [h.id for h in d.hits][:1] == [CONFIRMED]


def test_private_text_and_api_key_never_reach_the_model_or_any_file(repo: str, fake_model: str, tmp_path: str) -> None:
    path = session_file(tmp_path, 2)
    capture.capture(repo, path)
    sent = "\n".join(prompts(fake_model))
    assert "gunicorn --timeout 120" in sent and "[REDACTED:anthropic-key]" in sent
    assert FAKE_KEY not in sent and PRIVATE not in sent and "staging admin password" not in sent
    leaks = []
    for root, _, files in os.walk(repo):
        for name in files:
            data = open(os.path.join(root, name), "rb").read()
            leaks += [name for needle in (FAKE_KEY, PRIVATE) if needle.encode() in data]
    history = git(repo, "log", "-p", "--all").stdout
    assert leaks == [] and FAKE_KEY not in history and PRIVATE not in history


def test_an_already_captured_range_does_nothing(repo: str, fake_model: str, tmp_path: str) -> None:
    path = session_file(tmp_path, 1)
    capture.capture(repo, path)
    calls, before = len(prompts(fake_model)), head(repo)
    again = capture.capture(repo, path)
    assert (again.turns, again.model_calls, again.added, len(prompts(fake_model)), head(repo)) == (0, 0, [], calls, before)
    assert capture.load_state(repo)[SESSION]["line"] == 5


def test_a_rewritten_transcript_is_read_again_but_deduplicated(repo: str, fake_model: str, tmp_path: str) -> None:
    path = session_file(tmp_path, 1)
    capture.capture(repo, path)
    lines = open(path, encoding="utf-8").read().splitlines(True)
    last = json.loads(lines[4])
    last["uuid"] = "00000000-0000-4000-8000-00000000beef"
    lines[4] = json.dumps(last) + "\n"
    with open(path, "w", encoding="utf-8") as fh:  # line 5 is no longer the line last captured
        fh.write("".join(lines))
    again = capture.capture(repo, path)
    assert again.added == []
    assert sorted(d["reason"].split(" (")[0] for d in again.dropped if "title" in d) == [
        f"duplicate of {RULE}", f"duplicate of {HYPOTHESIS}", "evidence not in the transcript part: ['t99']"]


RULE_ITEM = {"class": "rule", "title": "Run make check before pushing to staging",
             "description": "In the shop repository, always run `make check` before pushing to staging.",
             "topics": ["staging", "checks"], "entities": ["shop"], "tech": ["make"],
             "body": "The user asked for `make check` before every push to staging.", "evidence": ["t2"],
             "scope": "project"}


def test_a_rejected_answer_leaves_the_turns_pending_and_a_later_answer_captures_them(
        repo: str, monkeypatch: pytest.MonkeyPatch, tmp_path: str) -> None:
    """Issue 16: one bad `scope` value (an honest small model's slip) once lost a rule the user stated."""
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE}")
    rules = os.path.join(str(tmp_path), "rules.json")
    slip = dict(RULE_ITEM, scope="repository")
    json.dump([{"contains": "Session turns", "reply": {"memories": [slip], "refuted": []}}], open(rules, "w"))
    monkeypatch.setenv("FAKE_MODEL_RULES", rules)
    path = session_file(tmp_path, 1)
    with pytest.raises(MemrepoError, match="was invalid .*those turns stay pending"):
        capture.capture(repo, path)
    rejects = [json.loads(line) for line in open(os.path.join(repo, "index", "model-rejects.jsonl"), encoding="utf-8")]
    assert rejects[-1]["pass"] == "capture"
    assert capture.start_line(repo, SESSION, path, []) == 0  # nothing marked as read
    json.dump([{"contains": "Session turns", "reply": {"memories": [RULE_ITEM], "refuted": []}}], open(rules, "w"))
    again = capture.capture(repo, path)
    assert again.added == [RULE]


def _store_with(repo: str, **fields: object) -> None:
    # The same finding as the session's hypothesis, in other words: a "duplicates" verdict is honest.
    write_memory(repo, "staging-timeouts", title="Staging deploy timeouts", class_="fact",
                 description="Staging deploys time out when the build is slow.", topics=["staging", "deploy", "timeout"],
                 entities=["shop staging"], body="The staging deploy fails with a 502: the nginx proxy_read_timeout "
                 "(60s) is shorter than the build step.\n", **fields)
    assert commit_all(repo, "store").returncode == 0


@pytest.mark.parametrize("verdict, expect_added, expect_status", [
    ({"relation": "duplicates", "winner": "staging-timeouts", "confidence": 0.9, "scope": "full", "reason": "Same."},
     [RULE], ("active", None)),
    ({"relation": "refines", "winner": "candidate", "confidence": 0.9, "scope": "full", "reason": "Newer and fuller."},
     [HYPOTHESIS, RULE], ("superseded", HYPOTHESIS)),
    ({"relation": "refines", "winner": "candidate", "confidence": 0.6, "scope": "full", "reason": "Maybe."},
     [HYPOTHESIS, RULE], ("active", None)),
])
def test_dedup_against_the_store_goes_through_the_guards(repo: str, fake_model: str, monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: str, verdict: dict, expect_added: list[str],
                                                         expect_status: tuple[str, str | None]) -> None:
    _store_with(repo)
    rules = json.load(open(os.path.join(DATA, "refute-rules.json"), encoding="utf-8"))
    rules.insert(0, {"contains": ["You curate a memory store", "Staging deploy timeouts", "nginx"], "reply": verdict})
    path = os.path.join(str(tmp_path), "rules.json")
    json.dump(rules, open(path, "w"))
    monkeypatch.setenv("FAKE_MODEL_RULES", path)
    report = capture.capture(repo, session_file(tmp_path, 1))
    assert report.added == expect_added
    assert status(repo, "staging-timeouts") == expect_status


def test_same_title_is_a_duplicate_without_asking(repo: str, fake_model: str, tmp_path: str) -> None:
    write_memory(repo, "make-check", title="Run make check before pushing to staging", class_="rule",
                 description="make check first.", topics=["staging"])
    assert commit_all(repo, "store").returncode == 0
    report = capture.capture(repo, session_file(tmp_path, 1))
    assert report.added == [HYPOTHESIS]
    assert {"title": "Run make check before pushing to staging", "reason": "duplicate of make-check (same title)"} in report.dropped


def test_capture_review_routes_everything_to_a_review_branch(repo: str, fake_model: str, tmp_path: str) -> None:
    with open(os.path.join(repo, "memrepo.json"), "w") as fh:
        json.dump({"capture_review": True}, fh)
    before = head(repo)
    report = capture.capture(repo, session_file(tmp_path, 1))
    assert head(repo) == before and not os.path.exists(paths.note_path(repo, HYPOTHESIS))
    assert report.review_branch == f"memrepo/review/{report.run_id}"
    files = git(repo, "show", "--name-only", "--format=", report.review_branch).stdout.split()
    assert files == [f"memory/{RULE}.md", f"memory/{HYPOTHESIS}.md"]
    assert "Memrepo-Action: capture" in git(repo, "log", "-1", "--format=%B", report.review_branch).stdout


def test_capture_command(repo: str, fake_model: str, tmp_path: str) -> None:
    result = CliRunner().invoke(cli, ["--repo", repo, "capture", session_file(tmp_path, 1)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].endswith(": 3 new turns, 2 model calls")
    assert lines[1:] == [f"  added {HYPOTHESIS}", f"  added {RULE}",
                         "  dropped The build takes four minutes: evidence not in the transcript part: ['t99']"]
    missing = CliRunner().invoke(cli, ["--repo", repo, "capture", os.path.join(str(tmp_path), "nope.jsonl")])
    assert missing.exit_code == 2


def test_a_refutation_whose_replacement_is_not_in_the_answer_changes_nothing(repo: str, fake_model: str, tmp_path: str,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A refutation pointing past the answer's memories ("replacement": 7 of 1) is an answer at
    odds with itself: it is dropped and reported, and the memory it names stays as it was (it
    was retired, as if the model had named no replacement)."""
    path = session_file(tmp_path, 1)
    assert HYPOTHESIS in capture.capture(repo, path).added
    rules = json.load(open(os.path.join(DATA, "refute-rules.json"), encoding="utf-8"))
    for rule in rules:
        for item in (rule.get("reply") or {}).get("refuted", []) if isinstance(rule.get("reply"), dict) else []:
            item["replacement"] = 7
    bad = os.path.join(str(tmp_path), "bad-replacement.json")
    json.dump(rules, open(bad, "w", encoding="utf-8"))
    monkeypatch.setenv("FAKE_MODEL_RULES", bad)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(open(os.path.join(DATA, "refute-part2.jsonl"), encoding="utf-8").read().replace("@@FAKE_KEY@@", FAKE_KEY))
    second = capture.capture(repo, path)
    assert second.refuted == []
    assert {"refuted": HYPOTHESIS, "reason": "replacement 7 is not among the answer's 1 memories"} in second.dropped
    assert status(repo, HYPOTHESIS) == ("active", None)
