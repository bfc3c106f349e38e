"""The daily sweep compares your memory with each team's and the projects' (issue 41, part 4):
every conflict is a proposal on your review branch naming both sources, none is applied, a pair
is proposed once, and a model that fails or answers badly is a failure in the summary.

Real repositories: the personal one, a team's clone of a bare remote, a code repository with
`.memrepo/memory/` (the fixtures of test_sources.py); `memrepo sweep` run as the CLI runs it; the
fake model's answers written before each sweep."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import pytest
from click.testing import CliRunner

from helpers import commit_all, git, head, write_memory
from memrepo.cli.main import cli
from memrepo.passes.curate import review
from test_sources import _dirs, code, me, team  # noqa: F401 — fixtures

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAKE = os.path.join(ROOT, "tests", "fake", "fakemodel.py")
SPACES = ['"id": "my-spaces"', '"id": "team-tabs"']
CHECKOUT = ['"id": "my-checkout-live"', '"id": "shop-checkout-flag"']
STANDS = {"relation": "unrelated", "winner": "none", "confidence": 0.9, "scope": "partial", "reason": "different subjects"}


def contradicts(winner: str) -> dict[str, Any]:
    return {"relation": "contradicts", "winner": winner, "confidence": 0.9, "scope": "full",
            "reason": "they cannot both hold"}


def cli_run(repo: str, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, ["--repo", repo, *args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture
def model(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Write the fake model's rules (before a sweep): the curator's pairs by their ids; enrichment
    and the verifier answer validly with nothing to add."""
    rules, log = tmp_path / "rules.json", tmp_path / "model.jsonl"
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE}")
    monkeypatch.setenv("FAKE_MODEL_RULES", str(rules))
    monkeypatch.setenv("FAKE_MODEL_LOG", str(log))
    monkeypatch.setenv("FAKE_MODEL_DEFAULT", json.dumps(STANDS))

    def write(*pairs: dict[str, Any]) -> None:
        rules.write_text(json.dumps([*pairs, {"contains": "list up to 8 aliases", "reply": {"memories": []}},
                                     {"contains": "list the checkable claims", "reply": {"claims": []}}]))

    write.asked = lambda: [json.loads(line)["prompt"] for line in log.read_text().splitlines()] if log.exists() else []  # type: ignore[attr-defined]
    return write


@pytest.fixture
def mine(me: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    """This machine, with a memory that contradicts the project's too; the sweep runs outside the
    code repository: its project is known from the cache `memrepo sources --refresh` built."""
    write_memory(me, "my-checkout-live", class_="project", title="The checkout redesign is live for every shopper",
                 description="The newcart flag was removed: the redesigned checkout page is on for everyone.",
                 topics=["checkout", "feature flag"])
    assert commit_all(me, "mine too").returncode == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    return me


def files(*roots: str) -> dict[str, str]:
    """Every memory file of these folders, as they are on disk."""
    out = {}
    for root in roots:
        for dirpath, _, names in os.walk(root):
            out.update({os.path.join(dirpath, n): open(os.path.join(dirpath, n)).read() for n in names if n.endswith(".md")})
    return out


def test_the_sweep_proposes_each_conflict_across_sources_naming_both_and_applies_none(
        mine: str, team: tuple[str, str], code: str, model: Any) -> None:
    bare, _ = team
    clone = os.path.join(os.environ["XDG_DATA_HOME"], "memrepo", "teams", "acme")
    model({"contains": SPACES, "reply": contradicts("team-tabs")},  # the team's note would win: mine gives way
          {"contains": CHECKOUT, "reply": contradicts("my-checkout-live")})  # mine would win: the project's gives way
    before = files(os.path.join(mine, "memory"), os.path.join(clone, "memory"), os.path.join(code, ".memrepo"))
    team_head, remote_refs = head(clone), git(bare, "for-each-ref").stdout
    out = cli_run(mine, "sweep")
    assert "across sources (team acme, project shop): 2 conflicts proposed for review, 0 failed" in out
    assert files(os.path.join(mine, "memory"), os.path.join(clone, "memory"), os.path.join(code, ".memrepo")) == before
    assert head(clone) == team_head and git(bare, "for-each-ref").stdout == remote_refs
    assert git(code, "status", "--porcelain").stdout == ""
    summary = json.load(open(os.path.join(mine, "index", "sweep.json")))
    assert summary["across"]["proposed"] == 2 and summary["across"]["failed"] == 0

    listed = cli_run(mine, "review")
    assert "retire my-checkout-live" not in listed
    found = {p["trailers"]["Id"]: p for p in review.proposals(mine)}
    assert sorted(found) == ["my-spaces", "shop-checkout-flag"]
    shown = cli_run(mine, "review", "show", found["my-spaces"]["id"])
    assert "my-spaces (personal, would give way)" in shown and "team-tabs (team acme, would stay)" in shown
    assert "indented with tabs" in shown and "four spaces" in shown
    shown = cli_run(mine, "review", "show", found["shop-checkout-flag"]["id"])
    assert "shop-checkout-flag (project shop, would give way)" in shown and "my-checkout-live (personal, would stay)" in shown
    assert "changes: none in your memory" in shown and "LaunchDarkly" in shown
    # A warning keeps doctor's exit 0; its other checks (this machine's Claude Code wiring) are not this test's.
    doctor = CliRunner().invoke(cli, ["--repo", mine, "doctor"], catch_exceptions=False).output
    assert "warn conflicts across sources: 2 conflicts between your memory and a team's or a project's await review" in doctor
    assert "FAIL private files" not in doctor


def test_a_pair_is_proposed_once_and_a_reject_is_remembered(mine: str, code: str, model: Any) -> None:
    model({"contains": SPACES, "reply": contradicts("team-tabs")}, {"contains": CHECKOUT, "reply": contradicts("my-checkout-live")})
    cli_run(mine, "sweep")
    asked = len(model.asked())
    found = {p["trailers"]["Id"]: p["id"] for p in review.proposals(mine)}
    cli_run(mine, "review", "reject", found["my-spaces"], "--reason", "I keep my spaces")
    out = cli_run(mine, "sweep")
    assert "0 conflicts proposed for review, 0 failed, 2 not asked again" in out
    assert not [p for p in model.asked()[asked:] if "You curate a memory store" in p]
    assert sorted(p["trailers"]["Id"] for p in review.proposals(mine)) == ["shop-checkout-flag"]
    assert "status: retired" not in open(os.path.join(mine, "memory", "my-spaces.md")).read()
    for branch in review.branches(mine):  # the reject commit alone still remembers the pair
        git(mine, "branch", "-D", branch)
    cli_run(mine, "sweep")
    assert [p["trailers"]["Id"] for p in review.proposals(mine)] == ["shop-checkout-flag"]


def test_a_verdict_that_leaves_both_standing_is_not_asked_again(mine: str, model: Any) -> None:
    model()  # every pair: unrelated
    out = cli_run(mine, "sweep")
    assert "0 conflicts proposed for review, 0 failed, 0 not asked again" in out
    asked = len(model.asked())
    assert "0 conflicts proposed for review, 0 failed, 2 not asked again" in cli_run(mine, "sweep")
    assert not [p for p in model.asked()[asked:] if "You curate a memory store" in p]
    assert review.proposals(mine) == []


def test_accepting_a_conflict_where_the_project_gives_way_proposes_it_there(mine: str, code: str, model: Any,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    model({"contains": CHECKOUT, "reply": contradicts("my-checkout-live")})
    cli_run(mine, "sweep")
    (p,) = review.proposals(mine)
    monkeypatch.chdir(code)
    out = cli_run(mine, "review", "accept", p["id"])
    assert "proposed there: " in out and "shop-checkout-flag.md; git -C" in out
    assert "status: retired" in open(os.path.join(code, ".memrepo", "memory", "shop-checkout-flag.md")).read()
    assert git(code, "status", "--porcelain").stdout.strip() == "M .memrepo/memory/shop-checkout-flag.md"
    assert review.proposals(mine) == []


def test_accepting_a_conflict_where_the_team_gives_way_proposes_it_to_the_team(mine: str, team: tuple[str, str],
                                                                              model: Any) -> None:
    bare, _ = team
    model({"contains": SPACES, "reply": contradicts("my-spaces")})
    out = cli_run(mine, "sweep")
    assert git(bare, "for-each-ref", "refs/heads/memrepo").stdout == ""  # the sweep sends nothing to the team
    (p,) = review.proposals(mine)
    assert "team acme retires team-tabs for your my-spaces" in p["subject"] and "1 conflict proposed" in out
    assert "proposed there: memrepo/forget/team-tabs" in cli_run(mine, "review", "accept", p["id"])
    assert "status: retired" in git(bare, "show", "memrepo/forget/team-tabs:memory/team-tabs.md").stdout
    assert "status: retired" not in git(bare, "show", "main:memory/team-tabs.md").stdout
    assert review.proposals(mine) == [] and "0 conflicts proposed" in cli_run(mine, "sweep")


@pytest.mark.parametrize("answer", [
    {"reply": {**contradicts("team-tabs"), "confidence": 1.7}},  # valid JSON, out of its schema
    {"reply": {**contradicts("someone-else")}},  # a winner that is neither memory
    {"reply_text": "These two notes clearly contradict each other; I would keep the team's."},  # prose
    {"sleep": 30},  # no answer before the model timeout
    {"exit": 1},  # the model command fails
], ids=["out-of-schema", "unknown-winner", "prose", "timeout", "command-fails"])
def test_a_failed_or_invalid_model_answer_is_a_failure_in_the_summary_never_a_change(
        mine: str, model: Any, monkeypatch: pytest.MonkeyPatch, answer: dict[str, Any]) -> None:
    monkeypatch.setenv("MEMREPO_MODEL_TIMEOUT", "2")
    model({"contains": SPACES, **answer})
    start = head(mine)
    out = cli_run(mine, "sweep")
    assert "0 conflicts proposed for review, 1 failed" in out
    assert "failed: personal: my-spaces / team acme: team-tabs: " in out
    assert review.proposals(mine) == [] and head(mine) == start
    summary = json.load(open(os.path.join(mine, "index", "sweep.json")))
    assert summary["across"]["failed"] == 1 and summary["across"]["proposed"] == 0
    monkeypatch.delenv("MEMREPO_MODEL_TIMEOUT")  # 2 s is for the answer that never comes, not for a loaded machine
    model({"contains": SPACES, "reply": contradicts("team-tabs")})  # a failed pair is asked again
    assert "1 conflict proposed for review" in cli_run(mine, "sweep")


def test_without_a_model_the_sweep_says_it_skipped_the_pass(mine: str, model: Any) -> None:
    model()
    out = cli_run(mine, "sweep", "--no-model")
    assert "across sources (team acme, project shop): not run: no model (--no-model)" in out
    assert "2 related pair(s) wait" in out
    assert model.asked() == [] and review.proposals(mine) == []


def test_review_push_opens_no_pull_request_where_another_sources_memory_gives_way(
        mine: str, code: str, team: tuple[str, str], model: Any, tmp_path: Any) -> None:
    model({"contains": SPACES, "reply": contradicts("my-spaces")},  # the team's memory gives way
          {"contains": CHECKOUT, "reply": contradicts("shop-checkout-flag")})  # yours gives way
    cli_run(mine, "sweep")
    theirs, yours = sorted(review.proposals(mine), key=lambda p: p["trailers"]["Source"] == "personal")
    assert theirs["trailers"]["Source"] == "team acme" and yours["trailers"]["Source"] == "personal"
    remote = tmp_path / "personal.git"
    git(str(tmp_path), "init", "-q", "--bare", str(remote))
    git(mine, "remote", "add", "origin", str(remote))
    git(mine, "push", "-q", "origin", "HEAD")
    out = cli_run(mine, "review", "push", "--json")
    report = json.loads(out)
    assert [u[0] for u in report["unpushed"]] == [theirs["id"]]
    assert "another source's" in report["unpushed"][0][1] and "review accept" in report["unpushed"][0][1]
    assert not any(theirs["id"] in line for line in report["manual"])
    assert any(yours["id"] in line for line in report["manual"])  # yours gives way: a pull request as ever
