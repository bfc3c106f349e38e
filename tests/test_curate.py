"""The curator in real git repositories with the fake model: guards, review, deterministic pass."""

from __future__ import annotations

import json
import os
import re
import sys
import time

import pytest
from click.testing import CliRunner

from helpers import commit_all, git, head, write_file, write_memory
from memrepo.cli.main import cli
from memrepo.passes.curate import curator as curate, guards, review, tidy
from memrepo.passes import model
from memrepo.format import notes
from memrepo.recall import decide as recall
from memrepo.vcs import runs

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench"))
import report_curate  # noqa: E402

PAIRS = {p["name"]: p for p in report_curate.load_pairs()}
TODAY = time.mktime(time.strptime("2026-11-30", "%Y-%m-%d"))


@pytest.fixture
def fake(tmp_path, monkeypatch: pytest.MonkeyPatch):
    """Set the fake model's answers: labeled pairs by name, or raw rules; anything else is unrelated."""
    rules_path = tmp_path / "rules.json"
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {report_curate.FAKE}")
    monkeypatch.setenv("FAKE_MODEL_RULES", str(rules_path))
    monkeypatch.setenv("FAKE_MODEL_LOG", str(tmp_path / "calls.jsonl"))
    monkeypatch.setenv("FAKE_MODEL_DEFAULT", json.dumps(report_curate.UNRELATED))

    def answer(*items: str | dict) -> None:
        rules = [r for item in items for r in (report_curate.rules([PAIRS[item]]) if isinstance(item, str) else [item])]
        rules_path.write_text(json.dumps(rules))

    answer()
    return answer


def store(repo: str, *names: str, extra: dict[str, dict] | None = None) -> None:
    """Commit the memories of labeled pairs `names` (plus `extra` {id: fields})."""
    for name in names:
        for side in ("a", "b"):
            fields = dict(PAIRS[name][side])
            fields["class_"] = fields.pop("class")
            write_memory(repo, fields.pop("id"), **fields)
    for mid, fields in (extra or {}).items():
        write_memory(repo, mid, **fields)
    assert commit_all(repo, "memories").returncode == 0


def snapshot(repo: str) -> dict[str, bytes]:
    mdir = os.path.join(repo, "memory")
    return {n: open(os.path.join(mdir, n), "rb").read() for n in sorted(os.listdir(mdir))}


def ids(name: str) -> tuple[str, str]:
    return PAIRS[name]["a"]["id"], PAIRS[name]["b"]["id"]


def trailers(repo: str, rev: str = "HEAD") -> dict[str, str]:
    out = git(repo, "log", "-1", "--format=%(trailers:unfold,only)", rev).stdout
    return {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in out.splitlines() if line)}


def test_genuine_supersession_is_applied_as_one_commit(repo: str, fake) -> None:
    store(repo, "p01")
    fake("p01")
    old, new = ids("p01")
    before = snapshot(repo)
    report = curate.run(repo)
    (decision,) = report.applied
    assert (decision["loser"], decision["winner"], decision["commit"]) == (old, new, head(repo))
    assert report.review == [] and report.skipped == []
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == f"curator: supersede {old} by {new}"
    assert trailers(repo) == {"Memrepo-Action": "supersede", "Memrepo-Run": report.run_id, "Memrepo-Confidence": "0.92",
                              "Memrepo-Reason": "v2 states the new base URL for every client v1 named",
                              "Memrepo-Id": old, "Memrepo-Winner": new, "Memrepo-Relation": "contradicts",
                              "Memrepo-Scope": "full", "Memrepo-Model": "curate 1 answered"}
    loser = notes.read(os.path.join(repo, "memory", f"{old}.md"))
    assert (loser.get("status"), loser.get("superseded_by")) == ("superseded", new)
    after = snapshot(repo)
    assert after.keys() == before.keys()
    assert [n for n in after if after[n] != before[n]] == [f"{old}.md"]
    assert git(repo, "status", "--porcelain").stdout == ""


def test_a_commit_made_after_a_failed_call_says_so_in_its_model_trailer(repo: str, fake) -> None:
    store(repo, "p01", "p02")
    v1, v2 = ids("p01")
    # The model apologises about one pair instead of judging it: a failed call, counted.
    fake({"contains": [f'"id": "{v1}"', f'"id": "{v2}"'], "reply_text": "Sorry, I cannot compare these two notes."}, "p02")
    report = curate.run(repo)
    (decision,) = report.applied
    assert decision["loser"] == ids("p02")[0]
    asked = [json.loads(line)["prompt"] for line in open(os.environ["FAKE_MODEL_LOG"], encoding="utf-8")]
    failed_first = next(i for i, p in enumerate(asked) if v1 in p) < next(i for i, p in enumerate(asked) if ids("p02")[0] in p)
    assert failed_first  # pairs go in a fixed order: the apology came first here
    assert trailers(repo, decision["commit"])["Memrepo-Model"] == "curate 1 answered, 1 failed"


def test_recall_labels_the_loser_and_ranks_the_winner_first(repo: str, fake) -> None:
    store(repo, "p28", "p09", "p16", "p27", extra={
        "deploy-heroku": dict(title="Deploying the shop API with git push heroku", description="The shop API deploys by pushing main to the heroku remote.",
                              topics=["deploy", "hosting"], entities=["shop-api", "heroku"], created="2025-06-01", body="git push heroku main\n"),
        "deploy-fly": dict(title="The shop API deploys to Fly.io from GitHub Actions", description="Merging to main deploys the shop API to Fly.io; Heroku is gone.",
                           topics=["deploy", "hosting"], entities=["shop-api", "fly.io"], created="2026-03-01", aliases=["ship to production"],
                           body="flyctl deploy runs on merge.\n")})
    fake({"contains": ['"id": "deploy-heroku"', '"id": "deploy-fly"'],
          "reply": {"relation": "contradicts", "winner": "deploy-fly", "confidence": 0.9, "scope": "full", "reason": "Heroku is gone"}})
    query = "git push heroku main to deploy the shop api"
    assert [h.id for h in recall.decide(repo, query, today=TODAY).hits] == ["deploy-heroku", "deploy-fly"]
    assert [d["loser"] for d in curate.run(repo).applied] == ["deploy-heroku"]
    hits = recall.decide(repo, query, today=TODAY).hits
    assert [(h.id, h.labels()) for h in hits] == [("deploy-fly", []), ("deploy-heroku", ["superseded by deploy-fly"])]
    assert "[superseded by deploy-fly] (id: deploy-heroku)" in recall.format_context(hits)


@pytest.mark.parametrize("name, outcome, guard, why", [
    # a permanent permission rule retired on the strength of a reference note about cloud sessions
    ("p13", "review", "class: reference cannot supersede rule", None),
    # a CDN fact about one product killed by another product's launch note (same CDN)
    ("p22", "left alone", "subject overlap: 1 shared topic(s), 0 shared entit(ies); needs 2",
     "different named subjects (no shared entity)"),
    # a pointer/index memory retiring the memory it points to
    ("p23", "left alone", "pointer: p23-deploy-index cites p23-deploy-guide",
     "p23-deploy-index points to p23-deploy-guide: a pointer never replaces what it points to"),
    # six open decisions retired because a newer memory resolved one (the model even says "full")
    ("p14", "review", "scope: p14-open-decisions lists 6 items, p14-event-store-postgres only 0", None),
    ("p21", "review", "scope: partial (the winner does not cover everything the loser claims)", None),
    # issue 16: two products' notes on one CDN (same class, same technology, two shared topics)
    ("p36", "left alone", "subject: different named subjects (no shared entity)", "different named subjects (no shared entity)"),
    # issue 16: the runbook an index note points to "replacing" the index
    ("p37", "left alone", "pointer: p37-runbooks-index points to p37-db-failover-runbook, which does not replace it",
     "p37-runbooks-index points to p37-db-failover-runbook: what a pointer points to does not replace it"),
    # issue 16: two same-class procedures called duplicates
    ("p38", "left alone", "duplicates: the texts share 40% of their words (needs 50%)", "not duplicates: the texts share 40% of their words"),
])
def test_what_an_unguarded_curator_got_wrong_is_never_applied(repo: str, fake, name: str, outcome: str, guard: str,
                                                            why: str | None) -> None:
    store(repo, name)
    fake(name)
    before_head, before = head(repo), snapshot(repo)
    report = curate.run(repo)
    assert report.applied == []
    assert (head(repo), snapshot(repo)) == (before_head, before)
    assert git(repo, "status", "--porcelain").stdout == ""
    loser, winner = ids(name)
    if outcome == "review":
        (d,) = report.review
        assert guard in d["guards_failed"] and (d["loser"], d["winner"]) == (loser, winner)
        branch = review.branch_name(report.run_id)
        assert d["branch"] == branch
        assert git(repo, "rev-list", "--count", f"HEAD..{branch}").stdout.strip() == "1"
        assert git(repo, "diff", "--name-only", f"HEAD...{branch}").stdout.split() == [f"memory/{loser}.md"]
        assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").stdout.strip() == "main"
    else:
        assert review.branches(repo) == []
        verdict = PAIRS[name]["verdict"]
        w, lo = (notes.read(os.path.join(repo, "memory", f"{i}.md")) for i in (winner, loser))
        assert guard in guards.failures(verdict, w, lo) and guards.no_tension(verdict, w, lo) == why
        if guards.never_applies(lo, w):  # no verdict could move it: not even asked (issue 16, defect 8)
            assert report.model_calls == 0 and report.skipped == []
        else:
            (d,) = report.skipped
            assert guard in d["guards_failed"] and d["reason"] == why


@pytest.mark.parametrize("reply, error", [
    ({"reply_text": "Sure! {\"relation\": \"contradicts\""}, "not JSON"),
    ({"reply": {"relation": "contradicts", "winner": "p28-billing-postgres", "confidence": 0.9, "scope": "full", "reason": "x"}},
     "$.winner: 'p28-billing-postgres' is not one of ['p01-api-base-url-v1', 'p01-api-base-url-v2', 'none']"),
    ({"reply": {"relation": "contradicts", "winner": "p01-api-base-url-v2", "confidence": "high", "scope": "full", "reason": "x"}},
     "$.confidence: expected number, got str"),
    ({"reply": {"relation": "contradicts", "winner": "api-base-url-v3", "confidence": 0.9, "scope": "full", "reason": "x"}},
     "$.winner: 'api-base-url-v3' is not one of ['p01-api-base-url-v1', 'p01-api-base-url-v2', 'none']"),
], ids=["malformed", "unknown-id", "confidence-high", "winner-neither"])
def test_invalid_answers_apply_nothing_and_are_logged(repo: str, fake, reply: dict, error: str) -> None:
    store(repo, "p01", "p28")
    a, b = ids("p01")
    fake({"contains": [f'"id": "{a}"', f'"id": "{b}"'], **reply})
    before_head, before = head(repo), snapshot(repo)
    report = curate.run(repo)
    assert (report.applied, report.review) == ([], [])
    assert [d["reason"] for d in report.skipped if d["ids"] == [a, b]] == ["invalid model answer, dropped (logged to index/model-rejects.jsonl)"]
    assert (head(repo), snapshot(repo), review.branches(repo)) == (before_head, before, [])
    with open(os.path.join(repo, "index", model.REJECTS), encoding="utf-8") as fh:
        (entry,) = [json.loads(line) for line in fh]
    assert entry["pass"] == "curate" and error in entry["errors"][0]


@pytest.fixture(scope="module")
def labeled(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The guarded pass on the 35 labeled pairs (see tests/data/curate/README.md), run once."""
    tmp = str(tmp_path_factory.mktemp("labeled-set"))
    result = report_curate.evaluate(tmp)
    repo = os.path.join(tmp, "labeled")
    result["deleted"] = git(repo, "log", "--all", "--diff-filter=D", "--name-only", "--format=", "--", "memory/").stdout
    result["files"] = len(os.listdir(os.path.join(repo, "memory")))
    with open(os.path.join(repo, "index", model.REJECTS), encoding="utf-8") as fh:
        result["rejects"] = [json.loads(line) for line in fh]
    return result


# What must hold on the labeled set, not today's figures: a better curator passes these too.

# Traps the four guards let through today, each with why: the set may only shrink. p29's
# scripted verdict calls two rules that share both their topics "duplicates" at 0.8 with full
# scope, so every guard holds; telling them apart needs a check of what each rule covers
# (the control-half work, not a constant to flip this pair).
KNOWN_GAPS = {"p29": "two rules on different conventions; the model over-reads them as duplicates"}


def test_labeled_set_no_trap_is_applied(labeled: dict) -> None:
    # A near-miss or unrelated pair superseded automatically is the harm the guards exist to stop.
    applied = {r["name"]: r["why"] for r in labeled["rows"] if r["kind"] != "genuine" and r["got"] == "applied"}
    assert {k: v for k, v in applied.items() if KNOWN_GAPS.get(k) != v} == {}
    assert labeled["cross_pairs"]["applied"] == labeled["cross_pairs"]["review"] == 0


def test_labeled_set_every_genuine_supersession_is_applied_or_reviewed(labeled: dict) -> None:
    # A genuine pair is never silently lost, unless the model's answer was invalid: that one is
    # dropped and logged, never fixed up (DESIGN.md, Offline passes).
    invalid = {p["name"] for p in PAIRS.values() if "reply_text" in p}
    rows = [r for r in labeled["rows"] if r["kind"] == "genuine"]
    assert len(rows) >= 10
    assert [r["name"] for r in rows if r["name"] not in invalid and r["got"] not in ("applied", "review")] == []
    assert [r["got"] for r in labeled["rows"] if r["name"] in invalid] == ["left alone"] * len(invalid)
    logged = [e["answer"] for e in labeled["rejects"] if e["pass"] == "curate"]
    assert [name for name in sorted(invalid) if PAIRS[name]["reply_text"] not in logged] == []


def test_labeled_set_nothing_is_deleted(labeled: dict) -> None:
    assert labeled["deleted"].strip() == "" and labeled["files"] == 2 * len(PAIRS) + 1  # + .gitkeep


def test_duplicates_keep_the_oldest_copy(repo: str, fake) -> None:
    body = "The staging database is reset every Sunday night at 23:00 UTC by the ops cron.\n"
    store(repo, extra={
        "reset-b": dict(created="2025-03-01", body=body.replace(" at", "\n  at")),
        "reset-a": dict(created="2025-02-01", body=body),
        "reset-c": dict(created="2025-04-01", body=body, class_="event"),  # another class: no duplicate
        "short-a": dict(created="2025-01-01", body="Ask first.\n"),
        "short-b": dict(created="2025-01-02", body="Ask first.\n"),  # short bodies need the same title too
    })
    report = curate.run(repo, use_model=False)
    assert [(d["kind"], d["ids"]) for d in report.applied] == [("duplicate", ["reset-b", "reset-a"])]
    assert notes.read(os.path.join(repo, "memory", "reset-b.md")).get("superseded_by") == "reset-a"
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == "curator: supersede reset-b by reset-a (duplicate)"


def test_missing_paths_are_stamped_unverified(repo: str, tmp_path, fake) -> None:
    root = tmp_path / "shop"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("")
    write_file(repo, "index/local.json", json.dumps({"projects": {"shop": {"root": str(root)}}}))
    store(repo, extra={
        "shop-entry": dict(project="shop", body="Entry point is `src/app.py`; jobs in `src/jobs/nightly.py`.\n"),
        # Issue 37: no claim that a file exists now, so no dead path (curate once stamped all three).
        "shop-plan": dict(project="shop", body="The importer, `src/jobs/import.py`, is to be written next sprint.\n"),
        "shop-gone": dict(project="shop", body="`src/legacy.py` was removed in March.\n"),
        "shop-bare": dict(project="shop", body="Nightly jobs in src/jobs/other.py.\n"),  # not a claim for verify either
        "shop-ok": dict(project="shop", body="Entry point is `src/app.py`.\n"),
        "blog-entry": dict(project="blog", body="Entry point is `src/missing.py`.\n"),  # no root configured here
        "global-note": dict(body="See `src/missing.py`.\n"),
    })
    report = curate.run(repo, use_model=False)
    assert [(d["kind"], d["ids"]) for d in report.applied] == [("dead-path", ["shop-entry"])]
    note = notes.read(os.path.join(repo, "memory", "shop-entry.md"))
    # The verifier's stamp, in its words: `memrepo verify --no-model` agrees and changes nothing.
    assert note.get("verification") == {"status": "unverified", "checked": time.strftime("%Y-%m-%d"),
                                        "failed": ["path_exists: src/jobs/nightly.py (shop)"]}
    assert (trailers(repo)["Memrepo-Action"], trailers(repo)["Memrepo-Decisions"]) == ("tidy", "1")
    assert trailers(repo)["Memrepo-Model"] == "not asked (deterministic step)"
    assert runs.decisions(repo)[head(repo)] == [{"action": "stamp", "id": "shop-entry", "winner": "", "reason":
                                                 "cites src/jobs/nightly.py (shop), missing from the project's checkout"}]
    message = git(repo, "log", "-1", "--format=%B").stdout
    assert str(root) not in message and str(tmp_path) not in message  # no path of this machine in shared history
    assert curate.run(repo, use_model=False).applied == []  # stamped once, not again
    from memrepo.passes.verify import verifier

    again = verifier.run(repo, ["shop-entry"], use_model=False, today=time.strftime("%Y-%m-%d"))
    assert again.commit is None and [r.status for r in again.results] == ["unverified"]


def test_a_memory_verify_stamped_for_its_missing_paths_is_not_stamped_again(repo: str, tmp_path, fake) -> None:
    """`memrepo verify` (with the model: a claim of its own beside the text's) stamped the memory
    unverified for the very path curate finds missing: curate has nothing to say. It once
    committed the same stamp again, the model's claim moved before the text's."""
    root = tmp_path / "shop"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("")
    write_file(repo, "index/local.json", json.dumps({"projects": {"shop": {"root": str(root)}}}))
    today = time.strftime("%Y-%m-%d")
    store(repo, extra={"shop-entry": dict(
        project="shop", body="Entry point is `src/app.py`; jobs in `src/jobs/nightly.py`.\n",
        verification={"status": "unverified", "checked": today, "failed": ["path_exists: src/jobs/nightly.py (shop)"]},
        claims=[{"probe": "path_exists", "args": {"path": "src/jobs/nightly.py"}, "by": "text"},
                {"probe": "path_exists", "args": {"path": "src/app.py"}, "by": "model"}])})
    before = head(repo)
    report = curate.run(repo, use_model=False)
    assert [d for d in report.applied if d["kind"] == "dead-path"] == []
    assert head(repo) == before


def test_broken_chains_are_repaired(repo: str, fake) -> None:
    store(repo, extra={
        "v1": dict(status="superseded", superseded_by="v2"),
        "v2": dict(status="superseded", superseded_by="v3"),
        "v3": dict(),
        "orphan": dict(status="superseded", superseded_by="gone"),
        "gone": dict(),
    })
    git(repo, "rm", "-q", "memory/gone.md")
    git(repo, "commit", "-q", "--no-verify", "-m", "drop gone")  # what a bypassed hook leaves behind
    report = curate.run(repo, use_model=False)
    assert sorted((d["kind"], d["ids"][0]) for d in report.applied) == [("chain", "orphan"), ("chain", "v1")]
    assert notes.read(os.path.join(repo, "memory", "v1.md")).get("superseded_by") == "v3"
    orphan = notes.read(os.path.join(repo, "memory", "orphan.md"))
    assert (orphan.get("status"), orphan.get("superseded_by")) == (None, None)


def test_dry_run_writes_nothing(repo: str, fake) -> None:
    store(repo, "p01", "p13")
    fake("p01", "p13")
    before_head, before = head(repo), snapshot(repo)
    report = curate.run(repo, dry_run=True)
    assert (len(report.applied), len(report.review)) == (1, 1)
    assert (head(repo), snapshot(repo), review.branches(repo)) == (before_head, before, [])


def test_memories_with_uncommitted_changes_are_left_to_their_author(repo: str, fake) -> None:
    store(repo, "p01")
    fake("p01")
    old, _ = ids("p01")
    path = os.path.join(repo, "memory", f"{old}.md")
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("An edit in progress.\n")
    dirty = open(path, "rb").read()
    report = curate.run(repo)
    assert report.applied == [] and report.model_calls == 0
    assert open(path, "rb").read() == dirty


def test_a_failing_model_stops_the_model_pass_only(repo: str, fake) -> None:
    body = "The staging database is reset every Sunday night at 23:00 UTC by the ops cron.\n"
    store(repo, "p01", extra={"dup-a": dict(body=body, created="2025-01-01"), "dup-b": dict(body=body, created="2025-01-02")})
    fake({"contains": "", "exit": 2})
    report = curate.run(repo)
    assert [d["kind"] for d in report.applied] == ["duplicate"]
    assert [d["reason"] for d in report.skipped][-1].startswith("model pass stopped: the model command exited 2")


def test_pairs_per_run_are_bounded(repo: str, fake) -> None:
    store(repo, "p01", "p02", "p03")
    write_file(repo, "memrepo.json", json.dumps({"curate": {"max_pairs": 1}}))
    assert curate.run(repo).model_calls == 1


def test_an_open_proposal_is_not_proposed_again(repo: str, fake) -> None:
    store(repo, "p13")
    fake("p13")
    assert len(curate.run(repo).review) == 1
    again = curate.run(repo)
    assert (again.review, again.model_calls) == ([], 0)
    assert len(review.proposals(repo)) == 1


def test_curate_command(repo: str, fake) -> None:
    from memrepo.cli.main import cli

    store(repo, "p01", "p13")
    fake("p01", "p13")
    result = CliRunner().invoke(cli, ["--repo", repo, "curate"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("run ") and lines[0].endswith("-curate, 2 model calls")
    assert lines[1:] == [
        "applied: 1",
        "  model     p01-api-base-url-v1 -> p01-api-base-url-v2 (0.92): v2 states the new base URL for every client v1 named",
        "sent to review: 1",
        "  model     p13-no-force-push -> p13-cloud-sessions (0.86): failed guard: class: reference cannot supersede rule",
        "left alone: 0",
    ]


def test_a_hand_formatted_loser_is_still_superseded(repo: str, fake) -> None:
    """A person writes front matter in their own key order and quoting: the curator's check that
    the file is unchanged compares it with what was read, not with memrepo's own formatting."""
    store(repo, "p01")
    old, new = ids("p01")
    path = os.path.join(repo, "memory", f"{old}.md")
    note = notes.read(path)
    head_lines = [f"{k}: {json.dumps(v) if isinstance(v, str) else json.dumps(v)}" for k, v in reversed(list(note.meta.items()))]
    open(path, "w", encoding="utf-8").write("---\n" + "\n".join(head_lines) + "\n---\n" + note.body)
    assert notes.serialize(notes.read(path)) != open(path, encoding="utf-8").read()
    assert commit_all(repo, "reformat by hand").returncode == 0
    fake("p01")
    report = curate.run(repo)
    assert [(d["loser"], d["winner"]) for d in report.applied] == [(old, new)], report.skipped


@pytest.mark.parametrize("name", ["p39", "p40"])
def test_the_checks_on_the_memories_keep_genuine_supersessions(repo: str, fake, name: str) -> None:
    """Controls for issue 16's checks: a true duplicate in other words, one product's CDN changing."""
    store(repo, name)
    fake(name)
    loser, winner = ids(name)
    assert [(d["loser"], d["winner"]) for d in curate.run(repo).applied] == [(loser, winner)]


def _calls(tmp_path) -> int:
    log = tmp_path / "calls.jsonl"
    return len(log.read_text().splitlines()) if log.exists() else 0


def _rule_and_exception(repo: str) -> None:
    store(repo, extra={
        "deploy-rule": dict(title="Deploys need two approvals", description="Production deploys need two approvals",
                            class_="rule", topics=["deploy", "approvals"], body="Two approvals before a production deploy.\n"),
        "deploy-hotfix": dict(title="Hotfixes need one approval", description="A hotfix deploy needs one approval",
                              class_="rule", topics=["deploy", "approvals"], body="A hotfix ships with one approval.\n"),
    })


def test_a_pair_judged_to_stand_is_not_asked_again_until_one_changes(repo: str, fake, tmp_path) -> None:
    """Issue 37: the second curate asked 16 pairs byte-identical to the first, all "unrelated"."""
    _rule_and_exception(repo)
    fake({"contains": ['"id": "deploy-rule"', '"id": "deploy-hotfix"'],
          "reply": {"relation": "related", "winner": "deploy-rule", "confidence": 0.8, "scope": "partial",
                    "reason": "a rule and its exception: both hold"}})
    before = snapshot(repo)
    first = curate.run(repo)
    assert first.model_calls == 1 and first.applied == [] and first.review == []
    assert first.skipped[0]["reason"] == "relation related, winner deploy-rule: both stand"
    assert snapshot(repo) == before
    second = curate.run(repo)
    assert (second.model_calls, second.remembered, _calls(tmp_path)) == (0, 1, 1)
    out = CliRunner().invoke(cli, ["--repo", repo, "curate"], catch_exceptions=False).output
    assert "0 model calls (1 pairs not asked again: their verdict still holds)" in out
    write_memory(repo, "deploy-hotfix", title="Hotfixes need one approval", description="A hotfix deploy needs one approval",
                 class_="rule", topics=["deploy", "approvals"], body="A hotfix ships with one approval; say so in the channel.\n")
    assert commit_all(repo, "edit").returncode == 0
    third = curate.run(repo)
    assert (third.model_calls, third.remembered) == (1, 0)  # one of them changed: asked again


def test_an_invalid_answer_is_not_remembered(repo: str, fake, tmp_path) -> None:
    _rule_and_exception(repo)
    fake({"contains": '"id": "deploy-rule"', "reply_text": "These two notes seem related but I am not sure."})
    assert curate.run(repo).model_calls == 1
    assert curate.run(repo).model_calls == 1  # no verdict was heard: asked again


def test_pairs_are_made_by_what_memories_are_about_not_a_shared_product_name(repo: str, fake, tmp_path) -> None:
    """Issue 37: of 20 curate calls, 7 paired notes about people with notes about a project, linked
    only by the product name. One shared entity relates nothing; a shared topic, two shared entities
    or text similarity do."""
    store(repo, extra={
        "noor-schedule": dict(title="Noor works Tuesday to Thursday", description="Noor, frontend on tallybird, is in Tue-Thu",
                              class_="fact", entities=["Noor", "tallybird"], topics=["schedule"],
                              body="Noor does tallybird's frontend and works Tuesday to Thursday.\n"),
        "teodor-oncall": dict(title="Teodor covers ops two days a week", description="Teodor runs ops for tallybird part time",
                              class_="fact", entities=["Teodor", "tallybird"], topics=["on-call"],
                              body="Teodor handles tallybird operations on Mondays and Fridays.\n"),
        "deploy-window": dict(title="Deploys only Tuesday to Thursday", description="tallybird ships mid-week only",
                              class_="rule", entities=["tallybird"], topics=["deploy"],
                              body="No tallybird deploys on Mondays or Fridays.\n"),
        "deploy-approvals": dict(title="Deploys need two approvals", description="tallybird production deploys need two approvals",
                                 class_="rule", entities=["tallybird"], topics=["deploy", "approvals"],
                                 body="Two approvals before a production deploy.\n"),
    })
    report = curate.run(repo)
    asked = [json.loads(line)["prompt"] for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    pairs = sorted(tuple(sorted(re.findall(r'"id": "([a-z-]+)"', prompt))) for prompt in asked)
    assert pairs == [("deploy-approvals", "deploy-window")], pairs
    assert report.model_calls == 1
