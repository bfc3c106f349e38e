"""Undo of a run: every commit reverted in one commit, files restored byte for byte, recall sees it."""

from __future__ import annotations

import json
import os
import re

import pytest
from click.testing import CliRunner

from helpers import git, head, write_file
from memrepo.passes.curate import curator as curate
from memrepo.recall import decide as recall
from memrepo.vcs import runs
from memrepo.cli.main import cli
from test_curate import TODAY, fake, snapshot, store  # noqa: F401  (fixture)

QUERY = "git push heroku main to deploy the shop api"
BODY = "The staging database is reset every Sunday night at 23:00 UTC by the ops cron.\n"


def curated(repo: str, fake, tmp_path) -> tuple[dict[str, bytes], list, curate.CurateReport]:  # noqa: F811
    """A store where one run makes four kinds of commit: model supersession, duplicate, stamp, chain repair."""
    root = tmp_path / "shop"
    root.mkdir()
    write_file(repo, "index/local.json", json.dumps({"projects": {"shop": {"root": str(root)}}}))
    store(repo, "p28", "p27", extra={
        "deploy-heroku": dict(title="Deploying the shop API with git push heroku", description="The shop API deploys by pushing main to the heroku remote.",
                              topics=["deploy", "hosting"], entities=["shop-api", "heroku"], created="2025-06-01", body="git push heroku main\n"),
        "deploy-fly": dict(title="The shop API deploys to Fly.io from GitHub Actions", description="Merging to main deploys the shop API to Fly.io; Heroku is gone.",
                           topics=["deploy", "hosting"], entities=["shop-api", "fly.io"], created="2026-03-01", body="flyctl deploy runs on merge.\n"),
        "reset-a": dict(body=BODY, created="2025-01-01"), "reset-b": dict(body=BODY, created="2025-02-01"),
        "shop-entry": dict(project="shop", body="Entry point is `src/app.py`.\n"),
        "old": dict(status="superseded", superseded_by="mid"), "mid": dict(status="superseded", superseded_by="new"), "new": dict(),
    })
    fake({"contains": ['"id": "deploy-heroku"', '"id": "deploy-fly"'],
          "reply": {"relation": "contradicts", "winner": "deploy-fly", "confidence": 0.9, "scope": "full", "reason": "Heroku is gone"}})
    before = snapshot(repo)
    hits = [(h.id, h.labels()) for h in recall.decide(repo, QUERY, today=TODAY).hits]
    report = curate.run(repo)
    assert sorted(d["kind"] for d in report.applied) == ["chain", "dead-path", "duplicate", "model"]
    assert snapshot(repo) != before
    return before, hits, report


def test_undo_restores_every_file_byte_for_byte_and_recall_sees_it(repo: str, fake, tmp_path) -> None:  # noqa: F811
    before, hits, report = curated(repo, fake, tmp_path)
    assert [(h.id, h.labels()) for h in recall.decide(repo, QUERY, today=TODAY).hits] != hits
    (sha,) = runs.undo(repo, report.run_id)
    assert sha == head(repo)
    assert snapshot(repo) == before
    assert git(repo, "status", "--porcelain").stdout == ""
    assert [(h.id, h.labels()) for h in recall.decide(repo, QUERY, today=TODAY).hits] == hits
    message = git(repo, "log", "-1", "--format=%B").stdout
    # the deterministic decisions are one commit, the model's supersession its own (issue 22)
    assert message.startswith(f"undo: run {report.run_id} (2 commits)\n\nReverts, newest first:\n")
    shas = list(dict.fromkeys(d["commit"] for d in reversed(report.applied)))
    assert [line.strip() for line in message.splitlines() if re.fullmatch(r"\s+[0-9a-f]{40}", line)] == shas
    assert "Memrepo-Action: undo\nMemrepo-Run: " in message and message.rstrip("\n").endswith(f"Memrepo-Undoes: {report.run_id}")
    assert git(repo, "log", "--diff-filter=D", "--name-only", "--format=", "--", "memory/").stdout.strip() == ""


def test_undo_last_then_redo(repo: str, fake, tmp_path) -> None:  # noqa: F811
    before, _, report = curated(repo, fake, tmp_path)
    after = snapshot(repo)
    result = CliRunner().invoke(cli, ["--repo", repo, "undo", "--last"], catch_exceptions=False)
    assert (result.exit_code, result.output) == (0, f"Undid run {report.run_id} in {head(repo)[:12]}\n")
    assert snapshot(repo) == before
    result = CliRunner().invoke(cli, ["--repo", repo, "undo", "--last"], catch_exceptions=False)
    assert result.exit_code == 1 and "no run to undo" in result.output
    undo_run = runs.list_runs(repo)[0]["run"]
    assert undo_run.endswith("-undo")
    runs.undo(repo, undo_run)  # undoing the undo brings the run's decisions back
    assert snapshot(repo) == after


@pytest.mark.parametrize("run_id, message", [
    ("not-a-run", "'not-a-run' is not a run id"),
    ("2020-01-01T00-00-00-curate", "no commits of run 2020-01-01T00-00-00-curate on this branch"),
])
def test_undo_of_an_unknown_run(repo: str, run_id: str, message: str) -> None:
    with pytest.raises(runs.UndoError, match=re.escape(message)):
        runs.undo(repo, run_id)


def test_undo_twice_and_undo_over_local_edits_refuse(repo: str, fake, tmp_path) -> None:  # noqa: F811
    _, _, report = curated(repo, fake, tmp_path)
    path = os.path.join(repo, "memory", "deploy-heroku.md")
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("edit in progress\n")
    before_head, before = head(repo), snapshot(repo)
    with pytest.raises(runs.UndoError, match="uncommitted changes in files the run touched: memory/deploy-heroku.md"):
        runs.undo(repo, report.run_id)
    assert (head(repo), snapshot(repo)) == (before_head, before)
    git(repo, "checkout", "--", "memory/deploy-heroku.md")
    runs.undo(repo, report.run_id)
    with pytest.raises(runs.UndoError, match="was already undone by"):
        runs.undo(repo, report.run_id)


def test_log_runs(repo: str, fake, tmp_path) -> None:  # noqa: F811
    _, _, report = curated(repo, fake, tmp_path)
    runs.undo(repo, report.run_id)
    out = CliRunner().invoke(cli, ["--repo", repo, "log", "--runs"], catch_exceptions=False).output
    lines = out.splitlines()
    undo_run = runs.list_runs(repo)[0]["run"]
    assert lines[0] == f"{undo_run}  1 decision"
    assert lines[1].endswith(f"undo       undo: run {report.run_id} (2 commits)")
    assert lines[2] == f"{report.run_id}  4 decisions  (undone by {undo_run})"
    assert lines[3].endswith("supersede  curator: supersede deploy-heroku by deploy-fly [0.90] — Heroku is gone")
    batch = report.applied[0]["commit"]
    assert [line[2:] for line in lines[4:7]] == [
        f"{batch[:12]}  repair     repair old by new [1.00] — mid is itself superseded; new is the live end of the chain",
        f"{batch[:12]}  supersede  supersede reset-b by reset-a [1.00] — same body as reset-a (whitespace aside); the older copy stays",
        f"{batch[:12]}  stamp      stamp shop-entry [1.00] — cites src/app.py (shop), missing from the project's checkout",
    ]
    data = json.loads(CliRunner().invoke(cli, ["--repo", repo, "log", "--runs", "--json"], catch_exceptions=False).output)
    assert [r["run"] for r in data] == [undo_run, report.run_id]


def test_run_ids() -> None:
    assert runs.new_run_id("curate", now=1795977602) == "2026-11-29T18-40-02-curate"
    assert runs.RUN_RE.match(runs.new_run_id("verify"))


def test_an_undo_whose_commit_fails_changes_nothing(repo: str, fake, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    from memrepo.vcs import gitcmd

    _, _, report = curated(repo, fake, tmp_path)
    after, tip = snapshot(repo), head(repo)
    real = gitcmd.run_git

    def run_git(*args: str, **kwargs):
        if args and args[0] == "commit":
            raise KeyboardInterrupt  # ^C while git commits the revert
        return real(*args, **kwargs)

    # A context of its own: monkeypatch.undo() would also undo conftest's HOME and git identity
    # (a machine without a global identity then fails the real undo below).
    with monkeypatch.context() as patch:
        patch.setattr(gitcmd, "run_git", run_git)
        with pytest.raises(KeyboardInterrupt):
            runs.undo(repo, report.run_id)
    assert (snapshot(repo), head(repo)) == (after, tip)
    assert git(repo, "status", "--porcelain").stdout == ""
    assert not os.path.exists(os.path.join(repo, ".git", "sequencer"))
    assert runs.undo(repo, report.run_id) != []  # and it can be undone for real afterwards


def _run_commit(repo: str, rel: str, text: str | None, run_id: str, when: str, monkeypatch: pytest.MonkeyPatch) -> str:
    from memrepo.vcs import commit

    monkeypatch.setenv("GIT_COMMITTER_DATE", when)
    return commit.commit_files(repo, {rel: text}, f"pass: {rel}", {"Action": "edit", "Run": run_id})


def _memory(note_id: str, description: str) -> str:
    return (f"---\nid: {note_id}\ntitle: Memory {note_id}\ndescription: {description}\nclass: fact\nsource: user\n"
            f"created: '2026-01-01'\n---\nBody of {note_id}.\n")


def test_a_run_with_two_commits_on_one_file_is_undone_in_order_after_a_merge(repo: str,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 37: by date, a merge of a clone whose clock stepped back listed the run's older
    commit first and undo failed with "patch does not apply"; history is read child first."""
    run_id, rel = "2026-12-05T10-00-00-skill", "memory/a.md"
    _run_commit(repo, rel, _memory("a", "first"), "2026-12-05T09-00-00-seed", "2026-12-05T09:00:00Z", monkeypatch)
    original = open(os.path.join(repo, rel), "rb").read()
    _run_commit(repo, rel, _memory("a", "second"), run_id, "2026-12-05T10:00:05Z", monkeypatch)
    git(repo, "branch", "teammate")
    _run_commit(repo, rel, _memory("a", "third"), run_id, "2026-12-05T10:00:00Z", monkeypatch)  # the clock stepped back
    git(repo, "checkout", "-q", "teammate")
    _run_commit(repo, "memory/b.md", _memory("b", "theirs"), "2026-12-05T10-00-09-capture", "2026-12-05T10:00:09Z",
                monkeypatch)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-edit", "teammate")
    assert [e["subject"] for e in runs.commits_of(repo, run_id)] == ["pass: memory/a.md"] * 2
    [sha] = runs.undo(repo, run_id)
    assert sha == head(repo)
    assert open(os.path.join(repo, rel), "rb").read() == original
    assert os.path.exists(os.path.join(repo, "memory", "b.md"))  # the teammate's memory stays
    assert git(repo, "status", "--porcelain").stdout == ""


def test_a_run_whose_commits_cancel_out_is_undone_by_an_empty_commit(repo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    run_id = "2026-12-05T10-00-00-skill"
    _run_commit(repo, "memory/n.md", _memory("n", "made"), run_id, "2026-12-05T10:00:00Z", monkeypatch)
    _run_commit(repo, "memory/n.md", None, run_id, "2026-12-05T10:00:01Z", monkeypatch)
    before = git(repo, "rev-parse", "HEAD^{tree}").stdout
    [sha] = runs.undo(repo, run_id)
    assert sha == head(repo) and git(repo, "rev-parse", "HEAD^{tree}").stdout == before
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == f"undo: run {run_id} (its commits cancel out)"
    assert runs.undone_runs(repo) == {run_id: git(repo, "log", "-1", "--format=%(trailers:key=Memrepo-Run,valueonly)").stdout.strip()}


def test_run_ids_are_matched_exactly(repo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    short, longer = "2026-12-05T10-00-00-skill", "2026-12-05T10-00-00-skill-promote"
    _run_commit(repo, "memory/a.md", _memory("a", "from skill"), short, "2026-12-05T10:00:00Z", monkeypatch)
    _run_commit(repo, "memory/b.md", _memory("b", "from promote"), longer, "2026-12-05T10:00:01Z", monkeypatch)
    runs.undo(repo, short)
    assert not os.path.exists(os.path.join(repo, "memory", "a.md"))
    assert os.path.exists(os.path.join(repo, "memory", "b.md"))
    assert set(runs.undone_runs(repo)) == {short}
    assert [e["run"] for e in runs.list_runs(repo) if e["undone_by"]] == [short]
    with pytest.raises(runs.UndoError, match="no commits of run 2026-12-05T10-00-00-ski on this branch"):
        runs.undo(repo, "2026-12-05T10-00-00-ski")
