"""Recall's ranking and wording, through the same `decide` path the hook uses."""

from __future__ import annotations

import json
import os
import time

from typing import Any

import pytest

from helpers import commit_all, git, write_memory
from memrepo.store import index
from memrepo.base import paths
from memrepo.recall import calibrate, query, decide as recall, log, rank, search

TODAY = time.mktime(time.strptime("2026-11-30", "%Y-%m-%d"))


def _store(repo: str, memories: dict[str, dict]) -> str:
    for mid, fields in memories.items():
        write_memory(repo, mid, **fields)
    assert commit_all(repo, "memories").returncode == 0
    index.update(repo)
    return repo


DEPLOY = {
    "deploy-heroku": dict(title="Deploying the shop API with git push heroku", description="The shop API deploys by pushing main to the heroku remote.",
                          topics=["deploy"], entities=["shop-api", "Heroku"], created="2025-06-01", status="superseded",
                          superseded_by="deploy-fly", body="git push heroku main\n"),
    "deploy-fly": dict(title="The shop API deploys to Fly.io from GitHub Actions", description="Merging to main deploys the shop API to Fly.io; Heroku is gone.",
                       topics=["deploy"], entities=["shop-api", "Fly.io"], created="2026-03-01", aliases=["ship to production"],
                       body="flyctl deploy runs on merge.\n"),
    "friday-freeze": dict(title="No production deploys on Friday afternoon", description="After 16:00 on Fridays nothing ships to production without an explicit OK.",
                          class_="rule", topics=["deploy", "release policy"], body="Ask first.\n"),
    "backups-nightly": dict(title="Nightly database backups to object storage", description="pg_dump runs nightly at 02:30 UTC and keeps 30 days.",
                            topics=["backups", "database"], entities=["Backblaze B2"], verification={"status": "unverified", "checked": "2026-11-20", "failed": ["path_exists: ops/backup.yml"]},
                            body="Restore drill every quarter.\n"),
    "queue-shop": dict(title="The shop worker queue is Redis", description="Background jobs of the shop API run on a Redis queue.",
                       topics=["queue", "jobs"], entities=["shop-api", "Redis"], project="shop", body="Three workers.\n"),
    "queue-blog": dict(title="The blog worker queue is Redis", description="Background jobs of the blog run on a Redis queue.",
                       topics=["queue", "jobs"], entities=["blog", "Redis"], project="blog", body="One worker.\n"),
}


@pytest.fixture
def store(repo: str) -> str:
    return _store(repo, DEPLOY)


def ids(d: recall.Decision) -> list[str]:
    return [h.id for h in d.hits]


def test_replacement_outranks_superseded_and_both_are_labelled(store: str) -> None:
    # The prompt is in the superseded note's own words: it matches the loser far better (its
    # relevance is the higher one), and its replacement still comes first (rank._live).
    d = recall.decide(store, "git push heroku main to deploy the shop api", today=TODAY)
    assert ids(d) == ["deploy-fly", "deploy-heroku"]
    fly, heroku = d.hits
    assert heroku.relevance > 3 * fly.relevance
    assert [h.labels() for h in d.hits] == [[], ["superseded by deploy-fly"]]
    lines = recall.format_context(d.hits).splitlines()
    assert [line for line in lines if line.startswith("- ")] == [
        "- (fact) The shop API deploys to Fly.io from GitHub Actions: Merging to main deploys the shop API to Fly.io;"
        " Heroku is gone. (id: deploy-fly)",
        "- (fact) Deploying the shop API with git push heroku: The shop API deploys by pushing main to the heroku"
        " remote. [superseded by deploy-fly] (id: deploy-heroku)",
    ]


def test_unverified_label_is_shown(store: str) -> None:
    d = recall.decide(store, "how long do we keep the nightly database backups?", today=TODAY)
    assert ids(d)[0] == "backups-nightly"
    assert d.hits[0].labels() == ["unverified: path_exists: ops/backup.yml"]
    assert "[unverified: path_exists: ops/backup.yml]" in recall.format_context(d.hits)


@pytest.mark.parametrize("project, first", [("shop", "queue-shop"), ("blog", "queue-blog")])
def test_project_scope_favours_the_current_project(store: str, project: str, first: str) -> None:
    d = recall.decide(store, "the worker queue is stuck with jobs piling up", project=project, today=TODAY)
    assert ids(d)[0] == first


def test_naming_another_project_lifts_its_penalty(store: str) -> None:
    d = recall.decide(store, "and the blog worker queue, same redis jobs setup?", project="shop", today=TODAY)
    assert "queue-blog" in ids(d)[:2]


@pytest.mark.parametrize("prompt, reason", [("ok, go ahead", "conversational"), ("thanks!", "conversational"),
                                            ("sim, pode seguir", "conversational"), ("lgtm 👍", "conversational"),
                                            ("", "empty"), ("   ", "empty")])
def test_conversational_prompts_are_silent(store: str, prompt: str, reason: str) -> None:
    d = recall.decide(store, prompt, previous="deploy the shop api to fly on friday", today=TODAY)
    assert (d.hits, d.silent, d.context_terms) == ([], reason, ())


@pytest.mark.parametrize("prompt", [
    "what's the difference between a list and a tuple in python?",
    "explain big-O notation with a sorting example",
    "write a regex that matches an IPv4 address",
])
def test_prompts_that_share_no_word_with_the_store_are_silent(store: str, prompt: str) -> None:
    d = recall.decide(store, prompt, today=TODAY)
    assert (d.hits, d.silent) == ([], "no-match")


OFFTOPIC = [
    # Each brushes the store (production, redis, jobs, date/utc) without being about any note in it.
    "my python list comprehension is slow, how do I profile it on production data?",
    "what is a good name for a variable holding a production config in rust",
    "what does the redis INCR command return on overflow",
    "explain the difference between threads and processes for background jobs",
]
ONTOPIC = ["can I deploy the shop api to production on friday afternoon?", "is the shop worker queue still on redis?"]


def _best_p(store: str, prompt: str) -> float:
    why: list = []  # type: ignore[type-arg]
    recall.decide(store, prompt, today=TODAY, explain=why)
    return max((h.p for h, _ in why if h is not None and h.features), default=0.0)


def test_offtopic_prompts_read_as_weaker_evidence_than_ontopic_ones(store: str) -> None:
    # Without the decision these prompts find notes; the decision reads each as weaker evidence
    # than any prompt about a note. In a store of six, one shared subject word can still speak
    # (docs/recall.md, what is not reached): two of the four do.
    weakest_on = min(_best_p(store, p) for p in ONTOPIC)
    for prompt in OFFTOPIC:
        q = query.build_query(prompt)
        db = search.connect(paths.index_db(store))
        try:
            assert rank.rank(db, recall.weigh(q.terms, 1.0), today=TODAY, floors=False) != []
        finally:
            db.close()
        assert _best_p(store, prompt) < weakest_on, prompt
    assert [recall.decide(store, p, today=TODAY).hits for p in OFFTOPIC[2:]] == [[], []]


FORCE_PUSH = dict(title="Never force-push main or any shared branch", class_="rule", topics=["git", "branches"],
                  description="Force pushes only with --force-with-lease on your own feature branch; main and release branches are off limits.",
                  body="After rebasing your own branch: `git push --force-with-lease`. To undo something on main: `git revert`.\n")
GIT_NOTES = {
    "no-force-push": FORCE_PUSH,
    "commit-messages": dict(title="Commit messages in the imperative, with the issue key", class_="preference", topics=["git", "commits"],
                            description="Subject line in the imperative under 72 characters; the Linear key at the end.", body="git commit -v, then edit.\n"),
    "small-prs": dict(title="Small pull requests, one concern each", class_="preference", topics=["pull requests", "branches"],
                      description="Feature branches stay small: under 400 changed lines, rebased on main before review.", body="Split a big branch with git.\n"),
    "review-tone": dict(title="Review comments are questions, not orders", class_="preference", topics=["code review"],
                        description="In reviews, ask about a branch's choices instead of dictating.", body="Approve with nits when it is fine.\n"),
    "ask-before-commit": dict(title="Ask before every git commit", class_="preference", topics=["git"],
                              description="Show the diff and wait for an OK before committing or pushing any branch.", body="Never amend pushed commits.\n"),
}


def test_asking_to_explain_costs_no_recall(tmp_path: object) -> None:
    # No phrase list marks a prompt "general" any more (issue 17): prefixing "explain " or "with an
    # example: " to a prompt of the labeled set that recalls something keeps it recalling (the list
    # silenced 13 of 39).
    import shutil

    from memrepo.evaluation import evaluate

    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "recall")
    repo = os.path.join(str(tmp_path), "set")
    shutil.copytree(os.path.join(data, "memory"), os.path.join(repo, "memory"))
    index.rebuild(repo)
    checked, lost = 0, []
    for row in evaluate.load_prompts(os.path.join(data, "prompts.jsonl")):
        if row["kind"] != "answerable" or row.get("previous"):
            continue
        project = row["cwd"].rstrip("/").split("/")[4]  # /home/rafa/src/<project>/...
        if not recall.decide(repo, row["prompt"], today=TODAY, project=project).hits:
            continue
        checked += 1
        for prefix in ("explain ", "with an example: "):
            if not recall.decide(repo, prefix + row["prompt"], today=TODAY, project=project).hits:
                lost.append((prefix, row["id"]))
    # Every word counts in the decision (issue 36), so a word more can tip a prompt at its edge;
    # no prefix silences prompts wholesale.
    assert checked >= 30
    assert len(lost) <= checked // 10, lost


def test_previous_turn_sharpens_but_never_invents_a_subject(store: str) -> None:
    previous = "Are the nightly database backups still kept for 30 days in Backblaze?"
    assert recall.decide(store, "yes do it", previous=previous, today=TODAY).hits == []
    # A follow-up leans on the previous turn when the store knows one of its own words ("b2");
    # "and how long are those kept?" knows none, so the previous turn alone recalls nothing (issue 17).
    assert recall.decide(store, "and how long are those kept?", previous=previous, today=TODAY).hits == []
    d = recall.decide(store, "and is that still b2?", previous=previous, today=TODAY)
    assert ids(d)[:1] == ["backups-nightly"]
    assert "backblaze" in d.context_terms


BACKUPS_TURN = "Are the nightly database backups still kept for 30 days in Backblaze?"


def test_a_prompt_that_says_enough_on_its_own_never_reads_the_previous_turn(store: str) -> None:
    calls: list[str] = []

    def previous() -> str:
        calls.append("read")
        return BACKUPS_TURN

    prompt = "the shop worker queue on redis keeps dropping background jobs"  # seven terms of its own
    d = recall.decide(store, prompt, previous=previous, today=TODAY)
    assert (calls, d.context_terms) == ([], ())
    assert ids(d) == ids(recall.decide(store, prompt, today=TODAY))
    assert ids(d)[:1] == ["queue-shop"] and "backups-nightly" not in ids(d)


@pytest.mark.parametrize("prompt", ["ok do it", "yes do it", "", "and those?"])
def test_a_prompt_with_no_subject_never_reads_the_previous_turn(store: str, prompt: str) -> None:
    calls: list[str] = []
    d = recall.decide(store, prompt, previous=lambda: calls.append("read") or BACKUPS_TURN, today=TODAY)
    assert (calls, d.hits, d.context_terms) == ([], [], ())


def test_a_follow_up_leans_on_the_previous_turn(store: str) -> None:
    # A short follow-up: the previous turn's subject terms come along (its own word, b2, is known here).
    prompt = "and is that still b2?"
    d = recall.decide(store, prompt, previous=lambda: BACKUPS_TURN, today=TODAY)
    assert d.context_terms == ("nightly", "database", "backups", "kept", "backblaze")
    assert ids(d) == ["backups-nightly"]


def test_context_only_evidence_counts_for_less(store: str) -> None:
    own = ("shop", "queue")
    context = ("nightly", "database", "backups", "kept", "backblaze")
    terms = recall.weigh(own, 1.0) + recall.weigh(context, recall.CONTEXT_WEIGHT)
    db = search.connect(paths.index_db(store))
    try:
        found = {ev.row[2]: ev for ev in search.relevance(db, terms, own=set(own)).values()}
        hits = {h.id: h for h in rank.rank(db, terms, own=set(own), today=TODAY, floors=False, limit=50)}
    finally:
        db.close()
    # Found by the previous turn's words alone: its score halved; found by the prompt's own: untouched.
    assert not found["backups-nightly"].own and found["queue-shop"].own
    backups, shop = hits["backups-nightly"], hits["queue-shop"]
    assert backups.score == pytest.approx(backups.relevance * backups.scope * backups.priority * rank.CONTEXT_ONLY)
    assert shop.score == pytest.approx(shop.relevance * shop.scope * shop.priority)


def test_a_note_only_the_previous_turn_found_ranks_below_the_prompts_own(store: str) -> None:
    # DESIGN.md, rule 3: the previous turn sharpens a query that has a subject, never invents one.
    # "the shop queue" is the subject here; the backups note only shares words with the last turn.
    d = recall.decide(store, "and the shop queue?", previous=lambda: BACKUPS_TURN, today=TODAY)
    assert "backblaze" in d.context_terms
    assert ids(d)[:1] == ["queue-shop"]


def test_decay_ranks_an_old_event_below_a_new_one(repo: str) -> None:
    _store(repo, {
        "outage-old": dict(class_="event", title="Checkout outage: payment webhook timeouts", description="Payment webhooks timed out and checkout failed.",
                           topics=["checkout", "payments", "outage"], created="2025-12-01", body="Fixed by raising the timeout.\n"),
        "outage-new": dict(class_="event", title="Checkout outage: payment webhook timeouts again", description="Payment webhooks timed out and checkout failed.",
                           topics=["checkout", "payments", "outage"], created="2026-11-20", body="Fixed by raising the timeout.\n"),
    })
    d = recall.decide(repo, "checkout is failing with payment webhook timeouts", today=TODAY)
    assert ids(d)[0] == "outage-new"


def test_context_text_is_fenced_factual_and_bounded(store: str) -> None:
    d = recall.decide(store, "can I deploy the shop api to production on friday afternoon?", today=TODAY)
    text = recall.format_context(d.hits)
    assert 1 <= len(d.hits) <= 3
    assert text.startswith("memrepo recalled ")
    assert "not instructions" in text
    assert "<memrepo-memories>" in text and "</memrepo-memories>" in text
    assert "`memrepo show <id>`" in text
    assert len(text) < 2000
    assert "friday-freeze" in ids(d)


def test_context_stays_under_claude_cap_with_huge_descriptions(repo: str) -> None:
    long = "deploy " * 40
    _store(repo, {f"big-{i}": dict(title=f"Deploy note {i}", description=long.strip()[:199], topics=["deploy"]) for i in range(5)})
    d = recall.decide(repo, "deploy note", today=TODAY)
    assert len(recall.format_context(d.hits)) < 9500


def test_every_decision_is_logged(store: str) -> None:
    d1 = recall.decide(store, "how long do we keep the nightly database backups?", today=TODAY)
    log.log_decision(store, "how long do we keep the nightly database backups?", d1, session="s1")
    d2 = recall.decide(store, "ok, go ahead", today=TODAY)
    log.log_decision(store, "ok, go ahead", d2)
    entries = log.read_log(store)
    assert [e["silent"] for e in entries] == ["conversational", None]
    assert entries[1]["injected"][0]["id"] == "backups-nightly"
    assert entries[1]["session"] == "s1"
    assert len(entries[1]["prompt_sha"]) == 16
    raw = open(f"{store}/index/recall-log.jsonl", encoding="utf-8").read()
    assert "nightly database backups" not in raw  # the prompt itself is never stored
    assert all(isinstance(json.loads(line)["ms"], float) for line in raw.splitlines())


def _scores(d: recall.Decision) -> list[tuple[str, float]]:
    return [(h.id, round(h.score, 9)) for h in d.hits]


def test_index_without_recorded_count_ranks_the_same(store: str) -> None:
    # An index whose meta lacks the count (an older build) answers by counting memories.
    import sqlite3

    from memrepo.base import paths

    prompt = "how do we deploy the shop api to production these days, still heroku?"
    before = _scores(recall.decide(store, prompt, today=TODAY))
    assert before
    with sqlite3.connect(paths.index_db(store)) as db:
        assert db.execute("DELETE FROM meta WHERE key = 'count'").rowcount == 1
    assert _scores(recall.decide(store, prompt, today=TODAY)) == before


def test_term_scores_are_the_same_whether_doclists_are_walked_or_filtered(store: str) -> None:
    from memrepo.base import paths
    from memrepo.recall import search

    db = search.connect(paths.index_db(store))
    try:
        rowids = [r for (r,) in db.execute("SELECT rowid FROM memories ORDER BY rowid")][1:5]
        terms = ["deploy", "shop", "redis", "production", "heroku"]
        walked = search._term_hits(db, terms, rowids, rows=10)
        filtered = search._term_hits(db, terms, rowids, rows=10 ** 6)
        assert walked and sorted(walked) == sorted(filtered)
        assert {r for _, r, *_ in walked} <= set(rowids)
    finally:
        db.close()


def test_sqlite_loads_without_functools_on_the_prompt_path(tmp_path: pytest.TempPathFactory) -> None:
    # As the hook runs (-I -S): _sqlite3 gets a stand-in lru_cache, functools never loads, and
    # statements (repeated, different, FTS5) still work.
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = ("import sys; sys.path.insert(0, 'tools'); from memrepo.recall import search\n"
            "db = search._sqlite.connect(':memory:')\n"
            "db.execute(\"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61 remove_diacritics 2')\")\n"
            "db.executemany('INSERT INTO t(x) VALUES (?)', [('deploying the api',), ('coffee beans',)])\n"
            "got = [db.execute('SELECT rowid FROM t WHERE t MATCH ?', (w,)).fetchall() for w in ('deploy', 'deploy', 'coffee')]\n"
            "print(got, 'functools' in sys.modules, 'collections' in sys.modules)")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[[(1,)], [(1,)], [(2,)]] False False"


# Issue 16: a hypothesis captured mid-session, then superseded by its correction in other words.
REFUTED = {
    "email-backend-missing": dict(title="Staging emails fail because EMAIL_BACKEND is missing from prod.py",
                                  description="Add EMAIL_BACKEND to prod.py to fix the failing staging emails.",
                                  topics=["email", "settings"], entities=["prod.py", "EMAIL_BACKEND"], created="2026-11-20",
                                  status="superseded", superseded_by="smtp-password-rotated",
                                  body="A guess from the start of the session.\n"),
    "smtp-password-rotated": dict(title="Staging mail broke when the SMTP password was rotated",
                                  description="The mail relay credential in the vault was rotated; the settings were fine.",
                                  topics=["mail", "credentials"], entities=["mail relay"], created="2026-11-20",
                                  body="Updating the vault entry fixed it.\n"),
    "old-cdn-note": dict(title="Static assets are served from the KeyCDN pull zone", status="retired",
                         description="KeyCDN pull zone in front of the static bucket.", topics=["cdn"], entities=["KeyCDN"]),
}


def test_a_superseded_memory_is_never_recalled_without_its_live_successor(repo: str) -> None:
    _store(repo, REFUTED)
    d = recall.decide(repo, "should I add EMAIL_BACKEND to prod.py?", today=TODAY)
    assert ids(d) == ["smtp-password-rotated", "email-backend-missing"]  # the correction first, the guess labelled
    assert d.hits[1].labels() == ["superseded by smtp-password-rotated"]


def test_a_retired_memory_is_not_recalled(repo: str) -> None:
    _store(repo, REFUTED)
    d = recall.decide(repo, "are static assets served from the KeyCDN pull zone?", today=TODAY)
    assert "old-cdn-note" not in ids(d)


def test_a_chain_is_followed_to_its_live_end_and_a_cycle_says_nothing(repo: str) -> None:
    chain = {
        "cron-v1": dict(title="Reports are mailed by the zebrafish cron job", description="zebrafish cron mails the reports.",
                        status="superseded", superseded_by="cron-v2"),
        "cron-v2": dict(title="Reports moved to a queue worker", description="The queue worker mails them now.",
                        status="superseded", superseded_by="cron-v3"),
        "cron-v3": dict(title="Reports are a dashboard now", description="Nobody mails reports any more."),
    }
    _store(repo, chain)
    assert ids(recall.decide(repo, "how does the zebrafish cron job mail reports?", today=TODAY)) == ["cron-v3", "cron-v1"]
    loop = {"loop-a": dict(title="The marmoset flag is on", description="marmoset flag on.", status="superseded",
                           superseded_by="loop-b"),
            "loop-b": dict(title="The flag is off", description="off.", status="superseded", superseded_by="loop-a")}
    for mid, fields in loop.items():
        write_memory(repo, mid, **fields)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "a cycle, as a bad merge could leave it")
    index.update(repo)
    assert "loop-a" not in ids(recall.decide(repo, "is the marmoset flag on?", today=TODAY))


def test_evidence_for_a_superseded_memory_speaks_for_its_successor(tmp_path: object) -> None:
    # "when's the kpi report due" matches the superseded memory (the report was due on Mondays)
    # better than its successor (it moved to Wednesday): evidence for the old fact is evidence for
    # the new one, which is what the user needs to hear (tests/data/recall_small, a fitting store).
    import shutil

    data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "recall_small", "farah-data-science")
    repo = os.path.join(str(tmp_path), "set")
    shutil.copytree(os.path.join(data, "memory"), os.path.join(repo, "memory"))
    index.rebuild(repo)
    why: list = []
    d = recall.decide(repo, "when's the kpi report due this week?", today=TODAY,
                      project="farah", explain=why)
    best, old = why[0][0], next(h for h, _ in why if h is not None and h.id == "fact-kpi-report-monday")
    assert best.id == "fact-kpi-report-wednesday" and best.p < calibrate.THRESHOLD <= old.p
    assert ids(d)[:2] == ["fact-kpi-report-wednesday", "fact-kpi-report-monday"]


def test_two_losers_of_one_successor_bring_it_once(repo: str) -> None:
    _store(repo, {
        "okapi-v1": dict(title="The okapi importer reads CSV files", description="okapi importer CSV input.",
                         status="superseded", superseded_by="importer-now"),
        "okapi-v2": dict(title="The okapi importer reads Excel files", description="okapi importer Excel input.",
                         status="superseded", superseded_by="importer-now"),
        "importer-now": dict(title="Partners send everything through the API", description="Nothing is uploaded by hand."),
    })
    db = search.connect(paths.index_db(repo))
    try:
        rows = {r[0]: r for r in db.execute(f"SELECT {search.COLUMNS} FROM memories")}
        losers = [rank.Hit(rows[i], 1.0) for i in ("okapi-v1", "okapi-v2")]
        live = rank._live(db, losers, {h.id: h for h in losers})  # the successor was not found by the prompt
    finally:
        db.close()
    assert [h.id for h in live] == ["importer-now", "okapi-v1", "okapi-v2"]


INCIDENTS = {
    # The same kind of incident twice: the old write-up answers the question, the new one brushes it.
    "event-queue-outage-2025": dict(class_="event", created="2025-02-10", title="Redis queue outage: workers lost the lease",
                                    description="The shop worker queue stalled for 3 hours when Redis evicted the lease keys; "
                                                "fixed with maxmemory-policy noeviction.",
                                    topics=["redis", "queue", "outage"], body="Lease keys evicted under memory pressure.\n"),
    "event-queue-slow-2026": dict(class_="event", created="2026-11-20", title="Slow queue at checkout on Black Friday",
                                  description="Checkout jobs waited in the queue for a minute at peak; it drained by itself.",
                                  topics=["checkout", "latency"], body="Nothing to fix.\n"),
}


def test_decay_does_not_outvote_a_much_stronger_match(repo: str) -> None:
    # Issue 17, part 5: the 2025 outage is eleven half-lives old, yet it is what the prompt is about;
    # the newer note shares only "queue" and "checkout" with it (decay once let it win).
    store = _store(repo, dict(DEPLOY, **GIT_NOTES, **INCIDENTS))
    d = recall.decide(store, "the queue stalled at checkout, did redis evict the keys again?", today=TODAY)
    assert ids(d)[:2] == ["event-queue-outage-2025", "event-queue-slow-2026"]


def test_decay_orders_comparable_matches(repo: str) -> None:
    twins = {f"event-db-failover-{year}": dict(class_="event", created=f"{year}-10-01", title="Database failover drill",
                                               description="The primary was failed over to the replica in 4 minutes.",
                                               topics=["database", "failover"], body="Drill.\n")
             for year in (2024, 2026)}
    store = _store(repo, dict(DEPLOY, **twins))
    assert ids(recall.decide(store, "how long did the database failover drill take?", today=TODAY))[:2] == [
        "event-db-failover-2026", "event-db-failover-2024"]



PAGER = {
    # A standing instruction and a fact on the same subject, in the same words, written today (no
    # decay between them) (issue 36).
    "pager-handover-a": dict(class_="rule", created="2026-11-30", title="Pager handover on Monday mornings",
                             description="The pager moves to the next person at 10:00 on Monday.",
                             topics=["pager", "handover"], body="Handover.\n"),
    "pager-handover-b": dict(class_="fact", created="2026-11-30", title="Pager handover on Monday mornings",
                             description="The pager moves to the next person at 10:00 on Monday.",
                             topics=["pager", "handover"], body="Handover.\n"),
}


def test_a_standing_instruction_comes_before_a_fact_bm25_finds_alike(repo: str) -> None:
    # A rule or preference bears on every prompt about its subject (`rank.STANDING`, chosen on the
    # fitting sets by `fit_recall.py --grid STANDING=...`); its score is the fact's times the prior.
    store = _store(repo, dict(DEPLOY, **PAGER))
    q = query.build_query("when does the pager handover happen on monday?")
    db = search.connect(paths.index_db(store))
    try:
        hits = rank.rank(db, recall.weigh(q.terms, 1.0), today=TODAY, floors=False)
    finally:
        db.close()
    assert [h.id for h in hits][:2] == ["pager-handover-a", "pager-handover-b"]
    assert hits[0].relevance == pytest.approx(hits[1].relevance)
    assert hits[0].score == pytest.approx(hits[1].score * rank.STANDING) and hits[0].score > hits[1].score


def test_the_standing_prior_does_not_outvote_a_much_stronger_match(repo: str) -> None:
    # The rule shares "friday" and "deploys" with the prompt; the note it is about holds far more of it.
    store = _store(repo, dict(DEPLOY, **INCIDENTS))
    d = recall.decide(store, "the queue stalled at checkout on friday, did redis evict the lease keys again?", today=TODAY)
    assert ids(d)[0] == "event-queue-outage-2025"
    assert "friday-freeze" not in ids(d)[:1]


def _turn(session: str, text: str, **fields: Any) -> dict:  # type: ignore[type-arg]
    """A dialogue turn as a chat importer writes it: no topics, aliases or entities (`bare`), its session kept."""
    return dict(class_="event", source="import", created="2026-11-30", title=text[:50], description=text,
                session=session, body=text + "\n", **fields)


CHAT = {
    # A question and its answer, which shares none of the question's words but "lease".
    "turn-a-1": _turn("s-a", "why did the payments worker lose its lease on the ledger queue last night?"),
    "turn-a-2": _turn("s-a", "Redis evicted the lease under memory pressure; maxmemory-policy is now noeviction."),
    # Another session's turn that happens to share two words with the prompt.
    "turn-b-1": _turn("s-b", "the lease on the office ends in March; the ledger goes to the accountant."),
}


def _ranked(store: str, prompt: str) -> list[rank.Hit]:
    q = query.build_query(prompt)
    db = search.connect(paths.index_db(store))
    try:
        return rank.rank(db, recall.weigh(q.terms, 1.0), today=TODAY, floors=False, limit=20)
    finally:
        db.close()


def test_a_turn_takes_a_share_of_its_sessions_best_match(repo: str) -> None:
    # Issue 36: in an imported conversation the answer shares few of the question's words; its
    # session's question lends it `rank.SESSION_LEND` of its score, ahead of another session's turn.
    store = _store(repo, dict(DEPLOY, **CHAT))
    hits = {h.id: h for h in _ranked(store, "the payments worker lost its lease on the ledger queue again, why?")}
    question, answer, other = hits["turn-a-1"], hits["turn-a-2"], hits["turn-b-1"]
    assert answer.lent == pytest.approx(rank.SESSION_LEND * (question.score - question.lent))
    assert question.lent == pytest.approx(rank.SESSION_LEND * (answer.score - answer.lent))
    assert other.lent == 0.0  # alone in its session among the candidates
    assert answer.score > other.score and (answer.score - answer.lent) < other.score


def test_what_a_session_lends_orders_candidates_but_is_no_evidence(repo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(repo, dict(DEPLOY, **CHAT))
    prompt = "why did the payments worker lose its lease on the ledger queue?"
    with_lend = _ranked(store, prompt)
    monkeypatch.setattr(rank, "SESSION_LEND", 0.0)
    without = _ranked(store, prompt)
    assert with_lend[0].id == without[0].id == "turn-a-1" and with_lend[0].lent > 0
    assert with_lend[0].features["lnrel"] == pytest.approx(without[0].features["lnrel"])


def test_memories_with_subjects_lend_nothing_to_their_session(repo: str) -> None:
    # Captured notes of one working session are notes, not turns: a session lends only between turns.
    notes = {"note-a": _turn("s-c", "the ledger queue lease is renewed every 30 s", topics=["ledger"]),
             "note-b": _turn("s-c", "payments worker restarts drop the lease", topics=["payments"])}
    store = _store(repo, dict(DEPLOY, **notes))
    assert all(h.lent == 0.0 for h in _ranked(store, "the payments worker lease on the ledger queue"))


def test_one_shared_word_of_a_longer_prompt_is_weaker_evidence(repo: str) -> None:
    # Issue 17, part 2: one word of a longer prompt is what a memory shares with it by chance; the
    # decision weighs how many of the prompt's words a memory holds (calibrate's `nm`).
    store = _store(repo, dict(DEPLOY, **GIT_NOTES))
    one = _best_p(store, "what's a good redis eviction policy for a cache")  # "redis" alone, in the queue note
    assert one < _best_p(store, "is the shop worker queue still on redis?")
    assert ids(recall.decide(store, "is the shop worker queue still on redis?", today=TODAY))[:1] == ["queue-shop"]


def _crowded(repo: str) -> str:
    """50 notes with "ledger" in the title, 50 with "reconcile", one that holds both, in its body only."""
    for i in range(50):
        write_memory(repo, f"ledger-{i}", title=f"Ledger export number {i}", description=f"Export {i} of the books.",
                     body=f"Shard {i}.\n")
        write_memory(repo, f"reconcile-{i}", title=f"Reconcile step number {i}", description=f"Step {i} of the close.",
                     body=f"Shard {i}.\n")
    write_memory(repo, "month-end", title="Month-end close runbook", description="What finance does on the last day.",
                 body="Reconcile the ledger against the bank feed before the books close.\n")
    assert commit_all(repo, "crowded").returncode == 0
    index.update(repo)
    return repo


def _candidate_ids(repo: str, terms: list[str], together: int) -> set[str]:
    db = search.connect(paths.index_db(repo))
    try:
        return {ev.row[2] for ev in search.relevance(db, [(t, 1.0) for t in terms], together=together).values()}
    finally:
        db.close()


def test_on_a_large_walk_the_candidates_are_the_notes_holding_the_terms_together(repo: str, monkeypatch) -> None:
    # bm25() over "ledger OR reconcile" puts the 100 title matches first, and the one note that
    # holds both words (in its body) is not among the 40 candidates. When a note must hold two
    # of the words to be recalled, a note holding one can never be, so past the walk budget the
    # search asks FTS5 for the notes holding them together, and finds it.
    _crowded(repo)
    terms = ["ledger", "reconcile", "bank"]
    assert "month-end" not in _candidate_ids(repo, terms[:2], together=2)  # under the budget: the OR of the seeds
    monkeypatch.setattr(search, "WALK_BUDGET", 50)
    found = _candidate_ids(repo, terms[:2], together=2)
    assert found == {"month-end"}
    # a third term (only in the target here) is an "other" term: a seed with it counts as together
    assert "month-end" in _candidate_ids(repo, terms, together=2)
    # a prompt of one or two words needs one of them: the OR of the seeds, whatever the walk
    assert "month-end" not in _candidate_ids(repo, terms[:2], together=1)


def test_past_the_walk_budget_a_seed_with_another_term_fills_the_candidates(repo: str, monkeypatch) -> None:
    # One seed ("feed", rare) and an active term too common to seed ("reconcile"): no pair of
    # seeds exists, so the candidates are the notes holding the seed and the other term; the
    # note holding the seed alone is left out.
    write_memory(repo, "feed-only", title="The bank feed arrives at six", description="A CSV over SFTP.", body="Daily.\n")
    _crowded(repo)
    monkeypatch.setattr(search, "COMMON_DF_MIN", 5)
    monkeypatch.setattr(search, "COMMON_DF_SHARE", 0.6)  # "reconcile" (51 of 102 notes) stays active
    assert _candidate_ids(repo, ["feed", "reconcile"], together=2) >= {"feed-only", "month-end"}  # the OR of the seeds
    monkeypatch.setattr(search, "WALK_BUDGET", 0)
    assert _candidate_ids(repo, ["feed", "reconcile"], together=2) == {"month-end"}


def test_past_the_walk_budget_only_the_rarer_other_terms_join_a_seed(repo: str, monkeypatch) -> None:
    # "feed" seeds; "export" (51 notes) and "number" (101) are other terms, too common to seed.
    # With no budget to spare only the rarer of them joins the seed: bm25 never scores the
    # longer list's rows.
    write_memory(repo, "feed-export", title="Feed export", description="The feed as a CSV export.", body="Daily.\n")
    write_memory(repo, "feed-number", title="Feed number", description="Which number the feed has.", body="Weekly.\n")
    _crowded(repo)
    monkeypatch.setattr(search, "COMMON_DF_MIN", 5)
    monkeypatch.setattr(search, "SEED_DF_SHARE", 0.0)
    monkeypatch.setattr(search, "COMMON_DF_SHARE", 1.0)
    monkeypatch.setattr(search, "WALK_BUDGET", 0)
    assert _candidate_ids(repo, ["feed", "export", "number"], together=2) == {"feed-export"}


def test_a_word_too_common_to_find_memories_still_scores_them(repo: str, monkeypatch) -> None:
    # "reconcile" is in 51 of 103 notes: over the finder share (30%) it finds nothing alone, but
    # under the common-word share (60%) it still scores what "feed" found.
    write_memory(repo, "feed-only", title="The bank feed arrives at six", description="A CSV over SFTP.", body="Daily.\n")
    _crowded(repo)
    monkeypatch.setattr(search, "COMMON_DF_MIN", 5)
    monkeypatch.setattr(search, "FINDER_DF_SHARE", 0.3)
    monkeypatch.setattr(search, "COMMON_DF_SHARE", 0.6)
    assert _candidate_ids(repo, ["reconcile"], together=1) == set()
    db = search.connect(paths.index_db(repo))
    try:
        found = {ev.row[2]: ev for ev in search.relevance(db, [("feed", 1.0), ("reconcile", 1.0)]).values()}
    finally:
        db.close()
    assert set(found) == {"feed-only", "month-end"}
    assert set(found["month-end"].matched) == {"feed", "reconcile"} and set(found["feed-only"].matched) == {"feed"}
    # over the common-word share it would not score at all
    monkeypatch.setattr(search, "COMMON_DF_SHARE", 0.3)
    db = search.connect(paths.index_db(repo))
    try:
        found = {ev.row[2]: ev for ev in search.relevance(db, [("feed", 1.0), ("reconcile", 1.0)]).values()}
    finally:
        db.close()
    assert set(found["month-end"].matched) == {"feed"}


def test_a_new_users_first_rules_are_recalled(repo: str) -> None:
    # Issue 36: an absolute floor on a bm25 sum kept a store of one rule silent ("evidence 0.77
    # under the floor 1.0"); the same prompt recalled once four unrelated memories were added.
    _store(repo, {"deploys-tue-thu": dict(class_="rule", source="user", title="Deploys only Tuesday to Thursday",
                                          description="No deploys on Fridays or Mondays")})
    assert ids(recall.decide(repo, "can I deploy on friday?", today=TODAY)) == ["deploys-tue-thu"]
    _store(repo, {"never-commit-secrets": dict(class_="rule", source="user", title="Never commit secrets",
                                               description="Secrets live in Bitwarden; never paste tokens into code or chat")})
    assert ids(recall.decide(repo, "can I deploy on friday?", today=TODAY)) == ["deploys-tue-thu"]
    assert ids(recall.decide(repo, "is it ok to ship this on a monday morning", today=TODAY)) == ["deploys-tue-thu"]
    assert ids(recall.decide(repo, "I have an API token for stripe, where do I put it?", today=TODAY)) == ["never-commit-secrets"]
