"""Skill drafts: the model writes, the structural gate admits or rejects (kept, committed), a person promotes."""

from __future__ import annotations

import json
import os
import sys

import pytest
import yaml
from click.testing import CliRunner

from helpers import ROOT, git
from memrepo.passes import model
from memrepo.vcs import runs
from memrepo.store import sessions
from memrepo.passes.skills import drafts as skills
from memrepo.cli.main import cli

DATA = os.path.join(ROOT, "tests", "data", "skills")
TRANSCRIPTS = os.path.join(DATA, "transcripts")
FAKE = os.path.join(ROOT, "tests", "fake", "fakemodel.py")
STEPS = ["alembic revision", "Edit <path>", "alembic upgrade head", "pytest <path>"]
THREE = ["aaaa1111-0000-4000-8000-000000000001", "aaaa2222-0000-4000-8000-000000000002",
         "aaaa3333-0000-4000-8000-000000000003"]
with open(os.path.join(DATA, "drafts-rules.json"), encoding="utf-8") as _fh:
    RULES = json.load(_fh)


@pytest.fixture
def shop(repo: str, tmp_path: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The memory repo with the test transcripts indexed, a `shop` project root, and the fake model."""
    root = os.path.join(str(tmp_path), "shop")
    for rel in ("migrations/versions/1a2b_add_users.py", "tests/test_users.py", "alembic.ini"):
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        open(os.path.join(root, rel), "w").close()
    with open(os.path.join(repo, "index", "local.json"), "w", encoding="utf-8") as fh:
        json.dump({"projects": {"shop": {"root": root}}}, fh)
    rules = os.path.join(str(tmp_path), "rules.json")
    valid = next(r for r in RULES if r["case"] == "valid")
    with open(rules, "w", encoding="utf-8") as fh:
        json.dump([*RULES, {**valid, "contains": "Procedure id: a88cd348"}], fh)
    monkeypatch.setenv("FAKE_MODEL_RULES", rules)
    monkeypatch.setenv("FAKE_MODEL_LOG", os.path.join(str(tmp_path), "model.jsonl"))
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE}")
    sessions.index(repo, TRANSCRIPTS)
    return repo


@pytest.mark.parametrize("cid, n_sessions, admitted, reasons", [
    ("shadow01", 3, False, ["name 'review' shadows a built-in command or skill"]),
    ("savetime", 3, False, ["names no concrete failure it prevents (only 'Saves time')"]),
    ("seenonce", 1, False, ["seen in 1 session(s); at least 3 needed"]),
    ("badpaths", 3, False, ["cites paths that do not exist: scripts/reset_db.sh, /opt/shop/bin/rebuild-schema"]),
    ("oversize", 3, False, ["longer than one page (83 lines, 4985 characters; at most 60 and 3000)"]),
    ("valid001", 3, True, []),
])
def test_the_gate_admits_only_the_valid_draft(shop: str, cid: str, n_sessions: int, admitted: bool, reasons: list[str]) -> None:
    candidate = {"id": cid, "steps": STEPS, "sessions": THREE[:n_sessions]}
    answer = model.ask_json(shop, "skill", skills.prompt(shop, candidate), skills.SCHEMA)
    assert answer is not None
    run_id = runs.new_run_id("skill")
    outcome = skills.write_draft(shop, candidate, answer, run_id)
    assert (outcome["admitted"], outcome["reasons"]) == (admitted, reasons)
    folder = "skills/drafts" if admitted else "skills/rejected"
    assert outcome["path"] == f"{folder}/{answer['name']}/SKILL.md"
    trailers = runs.commits_of(shop, run_id)[0]["trailers"]
    assert (trailers["Action"], trailers["Run"], trailers.get("Reason")) == (
        "skill-draft" if admitted else "skill-reject", run_id, "; ".join(reasons) or None)
    assert git(shop, "status", "--porcelain", "--", "skills").stdout == ""
    record = json.load(open(os.path.join(shop, folder, answer["name"], "draft.json")))
    assert (record["reasons"], record["sessions"]) == (reasons, THREE[:n_sessions])


def test_draft_writes_claude_code_skill_format_from_real_turns(shop: str, tmp_path: str) -> None:
    result = CliRunner().invoke(cli, ["--repo", shop, "skills", "draft", "1"], catch_exceptions=False)
    assert (result.exit_code, result.stdout) == (0, "drafted alembic-new-table\n")
    text = open(os.path.join(shop, "skills/drafts/alembic-new-table/SKILL.md"), encoding="utf-8").read()
    assert text.startswith("---\nname: alembic-new-table\ndescription: 'Add a table to the shop database: "
                           "revision, review, upgrade, then test.'\n---\n\n# Add a table with an alembic migration\n")
    prompt = json.loads(open(os.path.join(str(tmp_path), "model.jsonl")).readline())["prompt"]
    for sid in THREE:  # the real turns of every evidence session, not a summary
        assert f"## session {sid}" in prompt
    assert "$ alembic revision --autogenerate --message \"add orders\"" in prompt
    assert "[user] add a invoices table" in prompt
    assert "docker" not in prompt


NASTY = [
    r"Run C:\tools\new.bat, then \n is not a newline",
    "When: the build fails # not a comment",
    '"quoted" at the start and \'single\' later',
    "- a leading dash, like a list item",
    "line one\nline two\r\n\tand a tab",
    "[not a list], {not: a map} & *not an alias",
    "? a key indicator | and > folded % and @ and `tick`",
    "yes",
    "null",
    "12:30",
    "a bell \x07 and a NEL \x85 and an emoji \U0001F600",
    "---",
    "...",
]


@pytest.mark.parametrize("description", NASTY)
def test_a_description_the_model_wrote_comes_back_from_skill_md_unchanged(shop: str, description: str) -> None:
    """Issue 38, part 10: the front matter goes through the YAML emitter, not an f-string."""
    valid = next(r for r in RULES if r["case"] == "valid")["reply"]
    candidate = {"id": "valid001", "steps": STEPS, "sessions": THREE}
    skills.write_draft(shop, candidate, {**valid, "description": description}, runs.new_run_id("skill"))
    text = git(shop, "show", "HEAD:skills/drafts/alembic-new-table/SKILL.md").stdout
    head, body = text[len("---\n"):].split("\n---\n", 1)
    assert yaml.safe_load(head) == {"name": "alembic-new-table", "description": " ".join(description.split())}
    assert body == "\n" + valid["body"].strip() + "\n"


def test_invalid_model_answer_is_dropped_not_written(shop: str, tmp_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = os.path.join(str(tmp_path), "bad.json")
    with open(rules, "w") as fh:
        json.dump([{"contains": "Procedure id", "reply": {"name": "x", "body": "y", "extra": 1}}], fh)
    monkeypatch.setenv("FAKE_MODEL_RULES", rules)
    head = git(shop, "rev-parse", "HEAD").stdout
    assert skills.draft(shop, [1]) == [{"name": None, "procedure": "a88cd348", "admitted": False,
                                        "reasons": ["the model's answer was invalid"]}]
    assert git(shop, "rev-parse", "HEAD").stdout == head and not os.path.exists(os.path.join(shop, "skills"))


def test_unknown_candidate_number(shop: str) -> None:
    result = CliRunner().invoke(cli, ["--repo", shop, "skills", "draft", "7"])
    assert result.exit_code == 1
    assert "no candidate numbered [7]" in result.output and "memrepo skills detect" in result.output


def test_list_show_and_human_promotion(shop: str, isolated_env: str, tmp_path: str) -> None:
    runner = CliRunner()
    skills.draft(shop, [1])
    assert runs.log(shop, limit=1)[0]["trailers"]["Model"] == "skill 1 answered"  # the draft came from the model
    skills.write_draft(shop, {"id": "shadow01", "steps": STEPS, "sessions": THREE}, RULES[0]["reply"], runs.new_run_id("skill"))
    home_skills = os.path.join(isolated_env, ".claude", "skills")
    assert not os.path.exists(home_skills)  # drafting never writes where Claude Code loads skills
    out = runner.invoke(cli, ["--repo", shop, "skills", "list"], catch_exceptions=False).stdout
    assert out == ("draft    alembic-new-table (3 sessions)\n"
                   "rejected review (3 sessions): name 'review' shadows a built-in command or skill\n")
    shown = runner.invoke(cli, ["--repo", shop, "skills", "show", "review"], catch_exceptions=False).stdout
    assert shown.startswith("---\nname: review\n") and shown.endswith("rejected: name 'review' shadows a built-in command or skill\n")
    refused = runner.invoke(cli, ["--repo", shop, "skills", "promote", "review"])
    assert refused.exit_code == 1 and "rejected drafts are never promoted" in refused.output
    out = runner.invoke(cli, ["--repo", shop, "skills", "promote", "alembic-new-table"], catch_exceptions=False).stdout
    dest = os.path.join(home_skills, "alembic-new-table", "SKILL.md")
    assert out == f"promoted alembic-new-table to {dest}\n"
    assert open(dest).read() == open(os.path.join(shop, "skills/drafts/alembic-new-table/SKILL.md")).read()
    last = runs.log(shop, limit=1)[0]
    # The shared history says where it went without this machine's layout (issue 37).
    assert (last["subject"], last["trailers"]["Action"], last["trailers"]["Target"]) == (
        "skills: promote alembic-new-table", "skill-promote", "~/.claude/skills/alembic-new-table/SKILL.md")
    project = os.path.join(str(tmp_path), "proj")
    os.makedirs(project)
    with open(os.path.join(shop, "index", "local.json")) as fh:
        local = json.load(fh)
    local["projects"]["proj"] = project  # project roots are this machine's settings (issue 38)
    with open(os.path.join(shop, "index", "local.json"), "w") as fh:
        json.dump(local, fh)
    runner.invoke(cli, ["--repo", shop, "skills", "promote", "alembic-new-table", "--project", project], catch_exceptions=False)
    assert os.path.isfile(os.path.join(project, ".claude", "skills", "alembic-new-table", "SKILL.md"))
    assert runs.log(shop, limit=1)[0]["trailers"]["Target"] == "proj:.claude/skills/alembic-new-table/SKILL.md"
    shared = git(shop, "log", "-2", "--format=%B", "-p").stdout
    assert str(tmp_path) not in shared and isolated_env not in shared
    assert "promoted" in runner.invoke(cli, ["--repo", shop, "skills", "list"], catch_exceptions=False).stdout


@pytest.mark.parametrize("text, paths", [
    ("run `make test` in `src/app/` then see docs/setup.md", ["src/app/", "docs/setup.md"]),
    ("`pytest tests/test_<name>.py` and https://example.com/a/b", []),
    ("`~/bin/tool --x` and ./scripts/run.sh", ["~/bin/tool", "./scripts/run.sh"]),
])
def test_cited_paths(text: str, paths: list[str]) -> None:
    assert skills.cited_paths(text) == paths
