"""A person's edit, retire and forget: one commit each, validated, undoable, and they stick."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys

import pytest
from click.testing import CliRunner, Result

from helpers import ROOT, commit_all, git, head, write_file, write_memory
from memrepo.cli.main import cli
from memrepo.format import notes
from memrepo.importers import claude_code
from memrepo.passes import capture
from memrepo.base import paths
from memrepo.vcs import runs

RUN = os.path.join(ROOT, "hooks", "run")
CC_DIR = os.path.join(ROOT, "tests", "data", "importers", "claude-code", "projects", "-home-ann-src-tallybird", "memory")
CAPTURE_DATA = os.path.join(ROOT, "tests", "data", "capture")
FAKE = os.path.join(ROOT, "tests", "fake", "fakemodel.py")
FREEZE = "friday-freeze"
PROMPT = "it's friday 17:00, can I still ship this hotfix to production?"


def invoke(repo: str, *args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["--repo", repo, *args], input=input, catch_exceptions=False)


def trailers(repo: str, rev: str = "HEAD") -> dict[str, str]:
    out = git(repo, "log", "-n1", "--format=%(trailers:unfold,only)", rev).stdout
    return dict(line.split(": ", 1) for line in out.strip().splitlines())


def text(repo: str, note_id: str) -> str:
    with open(paths.note_path(repo, note_id), encoding="utf-8") as fh:
        return fh.read()


def recalled(repo: str, prompt: str = PROMPT) -> str:
    """What the real UserPromptSubmit hook injects for `prompt` (a subprocess, JSON on stdin)."""
    stdin = json.dumps({"session_id": "s-1", "transcript_path": "", "cwd": "/tmp", "hook_event_name": "UserPromptSubmit",
                        "prompt": prompt})
    env = dict(os.environ, MEMREPO_PYTHON=sys.executable, MEMREPO_DIR=repo)
    return subprocess.run(["sh", RUN, "user_prompt_submit"], input=stdin.encode(), capture_output=True, env=env,
                          timeout=30, check=True).stdout.decode()


@pytest.fixture
def store(repo: str) -> str:
    write_memory(repo, FREEZE, class_="rule", title="No production deploys on Friday afternoon",
                 description="After 16:00 on Fridays nothing ships to production without an explicit OK.",
                 topics=["deploy", "release policy"], aliases=["can I ship this now"])
    assert commit_all(repo, "memories").returncode == 0
    return repo


def editor(tmp_path: os.PathLike[str], monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    path = write_file(str(tmp_path), "editor.sh", "#!/bin/sh\n" + script)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    monkeypatch.setenv("EDITOR", path)
    monkeypatch.delenv("VISUAL", raising=False)


def test_edit_in_the_editor_commits_one_run_that_undo_reverts(store: str, tmp_path: os.PathLike[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    before = text(store, FREEZE)
    editor(tmp_path, monkeypatch, "sed -i 's/16:00/15:00/' \"$1\"\n")
    result = invoke(store, "edit", FREEZE)
    assert result.exit_code == 0, result.output
    after = notes.read(paths.note_path(store, FREEZE))
    assert "15:00" in str(after.get("description")) and after.get("updated") == notes.today()
    t = trailers(store)
    assert (t["Memrepo-Action"], t["Memrepo-Id"]) == ("edit", FREEZE) and t["Memrepo-Run"].endswith(tuple("0123456789abcdef"))
    assert f"`memrepo undo {t['Memrepo-Run']}` reverts it" in result.stdout
    assert git(store, "status", "--porcelain").stdout == ""
    assert invoke(store, "undo", "--last").exit_code == 0
    assert text(store, FREEZE) == before


def test_an_invalid_edit_commits_nothing_and_keeps_the_text(store: str, tmp_path: os.PathLike[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    sha, before = head(store), text(store, FREEZE)
    editor(tmp_path, monkeypatch, "sed -i 's/^class: rule/class: wish/' \"$1\"\n")
    result = invoke(store, "edit", FREEZE)
    assert result.exit_code == 1
    assert "unknown class 'wish'" in result.stderr
    draft = re.search(r"Your text is kept in (\S+);", result.stderr).group(1)  # type: ignore[union-attr]
    assert "class: wish" in open(draft, encoding="utf-8").read()
    assert (head(store), text(store, FREEZE)) == (sha, before)
    # Fixed and passed back, it commits.
    write_file(os.path.dirname(draft), os.path.basename(draft), open(draft, encoding="utf-8").read().replace("wish", "fact"))
    assert invoke(store, "edit", FREEZE, "--from", draft).exit_code == 0
    assert notes.read(paths.note_path(store, FREEZE)).get("class") == "fact"


def test_an_edit_cannot_change_the_id(store: str, tmp_path: os.PathLike[str]) -> None:
    draft = write_file(str(tmp_path), "new.md", text(store, FREEZE).replace(f"id: {FREEZE}", "id: another-id"))
    result = invoke(store, "edit", FREEZE, "--from", draft)
    assert result.exit_code == 1 and "the id changed from 'friday-freeze' to 'another-id'" in result.stderr


def test_an_edit_over_a_change_made_meanwhile_writes_nothing(store: str, tmp_path: os.PathLike[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # While the editor is open, another terminal commits a change to the same memory.
    editor(tmp_path, monkeypatch, f"""sed -i 's/16:00/15:00/' "$1"
cd {store} && sed -i 's/explicit OK/explicit OK from ops/' memory/{FREEZE}.md && git commit -qam 'other terminal'
""")
    result = invoke(store, "edit", FREEZE)
    assert result.exit_code == 1 and "changed while you were editing it" in result.stderr
    assert git(store, "log", "-1", "--format=%s").stdout.strip() == "other terminal"
    assert "explicit OK from ops" in text(store, FREEZE) and "16:00" in text(store, FREEZE)


def test_retire_keeps_the_file_and_recall_never_injects_it_again(store: str) -> None:
    assert FREEZE in recalled(store)
    result = invoke(store, "retire", FREEZE, "--reason", "the freeze was lifted in December")
    assert result.exit_code == 0, result.output
    note = notes.read(paths.note_path(store, FREEZE))
    assert (note.get("status"), note.get("retired_reason")) == ("retired", "the freeze was lifted in December")
    t = trailers(store)
    assert (t["Memrepo-Action"], t["Memrepo-Id"], t["Memrepo-By"], t["Memrepo-Reason"]) == (
        "retire", FREEZE, "user", "the freeze was lifted in December")
    assert recalled(store) == ""
    again = invoke(store, "retire", FREEZE, "--reason", "twice")
    assert again.exit_code == 1 and "already retired" in again.stderr
    # Undo brings it back, and recall with it.
    assert invoke(store, "undo", t["Memrepo-Run"]).exit_code == 0
    assert notes.read(paths.note_path(store, FREEZE)).get("status") is None
    assert FREEZE in recalled(store)


def test_retire_needs_a_reason_and_forget_gives_one(store: str) -> None:
    assert invoke(store, "retire", FREEZE).exit_code == 2  # click: missing --reason
    result = invoke(store, "forget", FREEZE)
    assert result.exit_code == 0
    assert notes.read(paths.note_path(store, FREEZE)).get("retired_reason") == "forgotten at the user's request"
    assert invoke(store, "forget", "no-such-memory").exit_code == 1


def test_retire_of_a_superseded_memory_drops_its_successor_link(store: str) -> None:
    write_memory(store, "old-freeze", status="superseded", superseded_by=FREEZE)
    commit_all(store, "old")
    assert invoke(store, "retire", "old-freeze", "-r", "wrong all along").exit_code == 0
    note = notes.read(paths.note_path(store, "old-freeze"))
    assert (note.get("status"), note.get("superseded_by")) == ("retired", None)


def test_undo_takes_back_an_add(store: str) -> None:
    result = invoke(store, "add", "--class", "fact", "--title", "The VPN drops at noon", "-d", "Reconnect after 12:00")
    run = re.search(r"`memrepo undo (\S+)`", result.stdout).group(1)  # type: ignore[union-attr]
    assert os.path.exists(paths.note_path(store, "vpn-drops-noon"))
    assert runs.last_run(store) == run
    assert invoke(store, "undo", "--last").exit_code == 0
    assert not os.path.exists(paths.note_path(store, "vpn-drops-noon"))


def test_a_retired_import_stays_retired_through_a_reimport(repo: str) -> None:
    first = claude_code.run(repo, [CC_DIR])
    assert "cc-feedback-testing-90666a" in first.added
    assert invoke(repo, "forget", "cc-feedback-testing-90666a").exit_code == 0
    sha = head(repo)
    second = claude_code.run(repo, [CC_DIR])
    assert (second.added, second.commit, head(repo)) == ([], None, sha)
    assert notes.read(paths.note_path(repo, "cc-feedback-testing-90666a")).get("status") == "retired"


def test_an_import_that_repeats_a_forgotten_memory_elsewhere_is_skipped_and_says_why(repo: str,
                                                                                    tmp_path: os.PathLike[str]) -> None:
    import shutil

    assert "cc-feedback-testing-90666a" in claude_code.run(repo, [CC_DIR]).added
    assert invoke(repo, "forget", "cc-feedback-testing-90666a", "--reason", "we mock the database now").exit_code == 0
    # The same auto-memory under another project: new ids, the same words.
    other = os.path.join(str(tmp_path), "projects", "-home-ann-src-otherbird", "memory")
    shutil.copytree(CC_DIR, other)
    report = claude_code.run(repo, [other])
    assert report.added and not any(i.startswith("cc-feedback-testing") for i in report.added), report.added
    [why] = [y for w, y in report.skipped if w.startswith("cc-feedback-testing")]
    assert why.startswith("says what cc-feedback-testing-90666a said, which a person retired (we mock the database now)")
    assert "memrepo undo" in why
    body = git(repo, "log", "-n1", "--format=%B").stdout
    assert "skipped: cc-feedback-testing" in body


def test_a_retired_capture_is_not_captured_again_from_a_later_session(repo: str, tmp_path: os.PathLike[str],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE}")
    monkeypatch.setenv("FAKE_MODEL_RULES", os.path.join(CAPTURE_DATA, "refute-rules.json"))
    part = open(os.path.join(CAPTURE_DATA, "refute-part1.jsonl"), encoding="utf-8").read()
    first = write_file(str(tmp_path), "7c0ffee0-1111-4222-8333-444455556666.jsonl", part)
    rule = "run-make-check-before-pushing-staging"
    assert rule in capture.capture(repo, first).added
    assert invoke(repo, "forget", rule, "--reason", "we stopped running make check").exit_code == 0
    # A later session says the same thing again: the honest model extracts the same rule.
    later = write_file(str(tmp_path), "8d1ffee0-1111-4222-8333-444455556666.jsonl",
                       part.replace("7c0ffee0-1111-4222-8333-444455556666", "8d1ffee0-1111-4222-8333-444455556666"))
    report = capture.capture(repo, later)
    assert not any(i.startswith("run-make-check") for i in report.added), report.added
    assert any(f"a person retired {rule}" in d["reason"] for d in report.dropped), report.dropped
    assert notes.read(paths.note_path(repo, rule)).get("status") == "retired"


LATER_SESSION = "9e2ffee0-1111-4222-8333-444455556666"
LATER_TURN = "Reminder for the shop repo: nothing goes to staging until `make check` has passed locally."
PARAPHRASE = {"class": "rule", "title": "Staging pushes wait for a passing make check",
              "description": "In the shop repository nothing is pushed to staging before `make check` passes locally.",
              "topics": ["staging", "checks"], "entities": ["shop"], "tech": ["make"],
              "body": "The user said nothing goes to staging until `make check` has passed.", "evidence": ["t1"],
              "scope": "global"}  # global: recall from any folder would inject it


def _later_session(tmp_path: os.PathLike[str], text: str = LATER_TURN) -> str:
    line = {"type": "user", "cwd": "/home/user/shop", "sessionId": LATER_SESSION, "uuid": "u-1",
            "timestamp": "2026-12-01T09:00:00.000Z", "message": {"role": "user", "content": text}}
    return write_file(str(tmp_path), f"{LATER_SESSION}.jsonl", json.dumps(line) + "\n")


def _forgotten_then(repo: str, tmp_path: os.PathLike[str], monkeypatch: pytest.MonkeyPatch,
                    memory: dict[str, object], verdict: dict[str, object]) -> "capture.CaptureReport":
    """Capture the make-check rule, forget it, then capture a later session whose honest answer is
    `memory` and whose verdict about the pair (the candidate beside the forgotten rule) is `verdict`."""
    rules = json.load(open(os.path.join(CAPTURE_DATA, "refute-rules.json"), encoding="utf-8"))
    rules = [{"contains": ["Session turns (new since the last capture)", LATER_TURN[:40]],
              "reply": {"memories": [memory], "refuted": []}},
             {"contains": ["You curate a memory store", str(memory["title"]), "Run make check before pushing to staging"],
              **verdict}] + rules
    rules_path = write_file(str(tmp_path), "rules.json", json.dumps(rules))
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE}")
    monkeypatch.setenv("FAKE_MODEL_RULES", rules_path)
    part = open(os.path.join(CAPTURE_DATA, "refute-part1.jsonl"), encoding="utf-8").read()
    rule = "run-make-check-before-pushing-staging"
    assert rule in capture.capture(repo, write_file(str(tmp_path), "7c0ffee0-1111-4222-8333-444455556666.jsonl", part)).added
    assert invoke(repo, "forget", rule, "--reason", "we stopped running make check").exit_code == 0
    return capture.capture(repo, _later_session(tmp_path))


STAGING_PROMPT = "do staging pushes wait for a passing make check?"


@pytest.mark.parametrize("relation, reason", [
    ("duplicates", "Both say make check must pass before a push to staging."),
    ("refines", "The same rule, adding that make check runs locally."),
])
def test_a_paraphrase_of_a_forgotten_rule_goes_to_review_not_into_recall(repo: str, tmp_path: os.PathLike[str],
                                                                        monkeypatch: pytest.MonkeyPatch,
                                                                        relation: str, reason: str) -> None:
    verdict = {"reply": {"relation": relation, "winner": "candidate", "confidence": 0.9, "scope": "full", "reason": reason}}
    report = _forgotten_then(repo, tmp_path, monkeypatch, PARAPHRASE, verdict)
    assert report.added == [], report.added
    [held] = report.held
    assert held["resembles"] == "run-make-check-before-pushing-staging"
    assert (f"{relation} of run-make-check-before-pushing-staging, which a person retired (we stopped running make check)"
            in held["reason"])
    new_id = held["id"]
    assert not os.path.exists(paths.note_path(repo, new_id))  # not in the store, so never injected
    assert new_id not in recalled(repo, STAGING_PROMPT) and "passing make check" not in recalled(repo, STAGING_PROMPT)
    listed = invoke(repo, "review")
    assert listed.exit_code == 0 and new_id in listed.output
    proposal = held["commit"][:7]
    shown = invoke(repo, "review", "show", proposal)
    assert shown.exit_code == 0, shown.output
    assert f"adds {new_id}, like run-make-check-before-pushing-staging, which a person retired" in shown.output
    assert "WARNING" not in shown.output
    flat = " ".join(shown.output.replace("|", " ").split())
    assert "run-make-check-before-pushing-staging (a person retired it" in flat and "(would be added)" in flat
    # The person decides: accepting it brings it into the store (and so into recall).
    sha = head(repo)
    accepted = invoke(repo, "review", "accept", proposal)
    assert accepted.exit_code == 0, accepted.output
    assert head(repo) != sha and notes.read(paths.note_path(repo, new_id)).get("status", "active") == "active"
    assert new_id in recalled(repo, STAGING_PROMPT)


def test_a_capture_not_checked_against_a_forgotten_rule_waits_for_review(repo: str, tmp_path: os.PathLike[str],
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # The model answers the pair in prose: no verdict (a model that fails outright fails the capture,
    # and its turns stay pending).
    report = _forgotten_then(repo, tmp_path, monkeypatch, PARAPHRASE, {"reply_text": "Sorry, I cannot compare these."})
    assert report.added == []
    [held] = report.held
    assert "not checked against run-make-check-before-pushing-staging" in held["reason"]
    assert not os.path.exists(paths.note_path(repo, held["id"]))
    # The proposal says which model calls its run heard: the capture's own, and the failed verdict.
    assert trailers(repo, held["commit"])["Memrepo-Model"] == "capture 1 answered, 1 failed"


def test_a_capture_that_contradicts_a_forgotten_rule_is_a_new_memory(repo: str, tmp_path: os.PathLike[str],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    opposite = dict(PARAPHRASE, title="Staging pushes no longer wait for make check",
                    description="In the shop repository pushes to staging go out without running `make check` first.",
                    body="The user said make check is no longer needed before staging.")
    contradicts = {"reply": {"relation": "contradicts", "winner": "candidate", "confidence": 0.9, "scope": "full",
                             "reason": "The new rule drops the make check the old one required."}}
    report = _forgotten_then(repo, tmp_path, monkeypatch, opposite, contradicts)
    assert report.held == []
    [added] = report.added
    assert notes.read(paths.note_path(repo, added)).get("status", "active") == "active"
    # Its commit says what the run heard: the extraction and the verdict, then the aliases.
    assert trailers(repo, report.commits[0])["Memrepo-Model"] == "capture 2 answered; enrich 1 answered"
