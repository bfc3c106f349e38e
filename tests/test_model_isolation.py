"""The model command runs with memrepo's prompt alone (issue 16, defect 10): what a `claude -p`
command is given, a timeout setting, recall-only mode, and memrepo's own sessions kept out of
the transcript index.

A stand-in `claude` (a script by that name) records the arguments and stdin it gets and
answers in `claude -p --output-format json`'s envelope.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest
from click.testing import CliRunner

from helpers import ROOT
from memrepo.cli.main import cli
from memrepo.format import transcript
from memrepo.passes import enrich, model, modelcmd
from memrepo.passes.curate import curator
from memrepo.passes.skills import drafts
from memrepo.passes.verify import claims
from memrepo.passes import capture
from memrepo.store import sessions
from memrepo.worker import jobs

sys.path.insert(0, os.path.join(ROOT, "tests", "data", "capture"))
from ccbuild import Session  # noqa: E402

SCHEMA = {"type": "object", "additionalProperties": False, "required": ["ok"], "properties": {"ok": {"type": "boolean"}}}
STAND_IN = """#!{python}
import json, os, sys, time
prompt = sys.stdin.read()
args = sys.argv[1:]
settings = None
if "--settings" in args:
    path = args[args.index("--settings") + 1]
    settings = {{"path": path, "mode": oct(os.stat(path).st_mode & 0o777), "text": open(path).read()}}
with open(os.environ["STAND_IN_LOG"], "a") as fh:
    fh.write(json.dumps({{"argv": args, "stdin": prompt, "settings": settings}}) + "\\n")
time.sleep(float(os.environ.get("STAND_IN_SLEEP", "0")))
for flag in os.environ.get("STAND_IN_UNKNOWN", "").split():
    if flag in args:
        sys.stderr.write(f"error: unknown option '{{flag}}'\\n")
        raise SystemExit(1)
envelope = {{"type": "result", "is_error": False, "result": os.environ.get("STAND_IN_TEXT", '{{"ok": true}}')}}
if os.environ.get("STAND_IN_STRUCTURED"):
    envelope["structured_output"] = json.loads(os.environ["STAND_IN_STRUCTURED"])
print(json.dumps(envelope))
"""


@pytest.fixture
def claude(tmp_path, monkeypatch: pytest.MonkeyPatch):
    """A stand-in named `claude`; returns a function giving the calls it received."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in ("claude", "other-model"):
        path = folder / name
        path.write_text(STAND_IN.format(python=sys.executable))
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    log = tmp_path / "stand-in.jsonl"
    monkeypatch.setenv("STAND_IN_LOG", str(log))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{folder / 'claude'} -p --model haiku --output-format json")

    def calls() -> list[dict]:
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    calls.folder = folder  # type: ignore[attr-defined]
    return calls


def _flag(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def test_a_claude_command_gets_memrepos_prompt_only(repo: str, claude) -> None:
    assert model.ask_json(repo, "curate", "which is newer?", SCHEMA) == {"ok": True}
    (call,) = claude()
    argv = call["argv"]
    assert _flag(argv, "--system-prompt") == modelcmd.SYSTEM_PROMPT
    assert _flag(argv, "--tools") == "" and _flag(argv, "--setting-sources") == ""
    for flag in ("--no-session-persistence", "--strict-mcp-config", "--disable-slash-commands"):
        assert flag in argv
    assert json.loads(_flag(argv, "--json-schema") or "null") == SCHEMA
    assert argv.count("--output-format") == 1 and "--settings" not in argv  # no login settings to carry
    assert call["stdin"] == "[memrepo background pass: curate]\nwhich is newer?"


def test_the_users_own_flags_win(repo: str, claude, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{claude.folder / 'claude'} --print --setting-sources user --tools Read")
    model.call(repo, "enrich", "q")
    (call,) = claude()
    argv = call["argv"]
    assert _flag(argv, "--setting-sources") == "user" and _flag(argv, "--tools") == "Read"
    assert argv.count("--tools") == 1 and "--settings" not in argv and "--json-schema" not in argv


def test_only_the_login_keys_of_the_users_settings_come_along(repo: str, claude, tmp_path) -> None:
    config = tmp_path / "claude-config"
    config.mkdir()
    (config / "settings.json").write_text(json.dumps({
        "apiKeyHelper": "~/bin/get-key", "env": {"ANTHROPIC_BASE_URL": "https://proxy.internal"},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "other-tool capture"}]}]},
        "enabledPlugins": {"other@market": True}}))
    model.call(repo, "enrich", "q")
    (call,) = claude()
    # In a private file, not on the command line (the process list shows argv to every local user).
    assert json.loads(call["settings"]["text"]) == {
        "apiKeyHelper": "~/bin/get-key", "env": {"ANTHROPIC_BASE_URL": "https://proxy.internal"}}
    assert call["settings"]["mode"] == "0o600" and "proxy.internal" not in " ".join(call["argv"])
    assert os.path.dirname(call["settings"]["path"]) == os.path.join(repo, "index")
    assert not os.path.exists(call["settings"]["path"])  # removed after the call


def test_another_command_gets_the_prompt_and_nothing_else(repo: str, claude, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{claude.folder / 'other-model'} -p --fast")
    model.ask_json(repo, "curate", "q", SCHEMA)
    assert [c["argv"] for c in claude()] == [["-p", "--fast"]]


def test_the_clis_structured_output_is_the_answer(repo: str, claude, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STAND_IN_TEXT", "Here you go.")
    monkeypatch.setenv("STAND_IN_STRUCTURED", json.dumps({"ok": False}))
    assert model.ask_json(repo, "curate", "q", SCHEMA) == {"ok": False}


def test_the_model_timeout_is_a_setting(repo: str, claude, monkeypatch: pytest.MonkeyPatch) -> None:
    with open(os.path.join(repo, "index", "local.json"), "w") as fh:
        json.dump({"model_timeout": 1}, fh)
    monkeypatch.setenv("STAND_IN_SLEEP", "30")
    with pytest.raises(model.ModelError, match="timed out after 1s"):
        model.call(repo, "curate", "q")
    monkeypatch.setenv("MEMREPO_MODEL_TIMEOUT", "soon")
    with pytest.raises(model.ModelError, match="'soon' is not a number of seconds") as err:
        model.call(repo, "curate", "q")
    assert "MEMREPO_MODEL_TIMEOUT" in err.value.hint


def test_recall_only_mode_runs_no_model_call(repo: str, claude, monkeypatch: pytest.MonkeyPatch) -> None:
    with open(os.path.join(repo, "memrepo.json"), "w") as fh:
        json.dump({"recall_only": True}, fh)
    with pytest.raises(model.RecallOnly, match="recall-only mode is on"):
        model.call(repo, "curate", "q")
    assert claude() == [] and model.ledger(repo) == []
    result = CliRunner().invoke(cli, ["--repo", repo, "sweep"])
    assert result.exit_code == 0 and "recall-only mode is on" in result.output, result.output
    checked = CliRunner().invoke(cli, ["--repo", repo, "doctor"])
    assert "ok  background passes: off: recall-only mode" in checked.output, checked.output
    monkeypatch.setenv("MEMREPO_RECALL_ONLY", "0")  # the environment wins over the settings
    model.call(repo, "curate", "q")
    assert len(claude()) == 1


def test_recall_only_hooks_queue_nothing(repo: str, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s1.jsonl"
    session = Session("dddd0000-0000-4000-8000-000000000001")
    session.user("remember: deploys wait for CI")
    session.write(str(path))
    payload = json.dumps({"session_id": "s1", "transcript_path": str(path), "cwd": str(tmp_path),
                          "hook_event_name": "Stop"}).encode()
    env = dict(os.environ, MEMREPO_DIR=repo, MEMREPO_RECALL_ONLY="1", MEMREPO_MODEL_CMD="/nonexistent/model")
    done = subprocess.run(["sh", os.path.join(ROOT, "hooks", "run"), "stop"], input=payload, capture_output=True, env=env, timeout=30)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert jobs.pending(repo) == [] and not os.path.exists(os.path.join(jobs.jobs_dir(repo), ".stop-s1"))
    assert jobs.sweep_due(repo)
    monkeypatch.setenv("MEMREPO_RECALL_ONLY", "1")
    assert not jobs.sweep_due(repo)  # so SessionStart queues no sweep either
    env.pop("MEMREPO_RECALL_ONLY")
    subprocess.run(["sh", os.path.join(ROOT, "hooks", "run"), "stop"], input=payload, capture_output=True, env=env, timeout=30)
    assert os.path.isfile(os.path.join(jobs.jobs_dir(repo), ".stop-s1"))  # the hook did its work this time


def test_memrepos_own_sessions_are_not_indexed(repo: str, tmp_path) -> None:
    own = Session("eeee0000-0000-4000-8000-000000000001")
    own.user("[memrepo background pass: capture]\nYou write long-term memories ... the deploy freeze")
    own.assistant({"type": "text", "text": "{\"memories\": []}"}, msg_id="msg_1")
    legacy = Session("eeee0000-0000-4000-8000-000000000002")
    legacy.user(enrich.PROMPT.format(memories="id: deploy-freeze"))
    mine = Session("eeee0000-0000-4000-8000-000000000003")
    mine.user("why is the deploy freeze on fridays?")
    for s in (own, legacy, mine):
        s.write(str(tmp_path / f"{s.session_id}.jsonl"))
    report = sessions.index(repo, str(tmp_path))
    assert (report.files, report.own, report.turns) == (3, 2, 1)
    assert [r["session"] for r in sessions.search(repo, "deploy freeze")] == [mine.session_id]
    assert sessions.index(repo, str(tmp_path)).unchanged == 3


def test_every_pass_prompt_is_recognised_as_memrepos_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sessions from before the mark start with a pass prompt's first words: keep the list true."""
    from memrepo.format.notes import Note

    note = Note({"id": "a", "title": "t", "description": "d", "class": "fact"}, "body")
    monkeypatch.setattr(drafts, "_evidence", lambda repo, candidate: "")
    prompts = [capture.PROMPT, enrich.PROMPT, curator.prompt(note, note), claims.prompt(note, {}),
               drafts.prompt("", {"id": "p1", "steps": ["run it"], "sessions": ["s1", "s2"]})]
    assert all(transcript.is_memrepo_prompt(p) for p in prompts)
    assert not transcript.is_memrepo_prompt("You write tests for the importer")


def test_an_older_claude_without_a_flag_is_asked_again_without_it(repo: str, claude, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(modelcmd, "unsupported", set())
    monkeypatch.setenv("STAND_IN_UNKNOWN", "--disable-slash-commands --setting-sources")
    assert model.ask_json(repo, "curate", "q", SCHEMA) == {"ok": True}
    calls = claude()
    assert len(calls) == 3 and "--disable-slash-commands" not in calls[-1]["argv"] and "--setting-sources" not in calls[-1]["argv"]
    assert "--no-session-persistence" in calls[-1]["argv"] and [e["ok"] for e in model.ledger(repo)] == [True]
    model.call(repo, "curate", "q")  # this process no longer adds them: one call
    assert len(claude()) == 4


def test_a_flag_the_user_wrote_is_never_taken_away(repo: str, claude, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(modelcmd, "unsupported", set())
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{claude.folder / 'claude'} -p --disable-slash-commands")
    monkeypatch.setenv("STAND_IN_UNKNOWN", "--disable-slash-commands")
    with pytest.raises(model.ModelError, match="unknown option '--disable-slash-commands'"):
        model.call(repo, "curate", "q")
    assert len(claude()) == 1
