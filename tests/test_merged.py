"""The merged cache (issue 41, part 2's budget): one cache for the personal, team and project
memory of a prompt context, ranked once by the prompt hook as one store, stale or not; the hook
as a subprocess, real repositories and caches (the fixtures of test_sources.py)."""

from __future__ import annotations

import os
import sqlite3
import time
from typing import Any

import pytest
from click.testing import CliRunner

from helpers import commit_all, memory_text, write_file
from memrepo.cli.main import cli
from memrepo.base import paths
from memrepo.recall import decide, search, sources as rs
from memrepo.store import merged, sources
from test_sources import _dirs, code, hook, me, run, team  # noqa: F401 — the fixtures

KAFKA = "how long do our kafka topics keep retention of events?"
CHECKOUT = "how do I see the redesigned checkout page, which feature flag?"


def drop(me: str, code: str) -> None:
    """No merged cache (the `me` fixture's refresh built one)."""
    os.remove(rs.merged_db(rs.found(me, code)))


def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The cache files recall opens in this process, in order."""
    seen: list[str] = []
    real = search.connect
    monkeypatch.setattr(search, "connect", lambda p: seen.append(p) or real(p))
    return seen


def test_the_refresh_builds_the_merged_cache_and_recall_reads_it_alone(me: str, code: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    run("sources", "--cwd", code, "--refresh", repo=me)
    srcs = rs.found(me, code)
    assert merged.state(me, code) == "current"
    assert rs.merged_db(srcs).startswith(paths.index_dir(me))  # private to the machine, never in a repository
    seen = opened(monkeypatch)
    d = decide.decide(me, KAFKA, cwd=code)
    assert [(h.id, h.source) for h in d.hits] == [("team-kafka-retention", "team acme")]
    assert seen == [rs.merged_db(srcs)]


def test_the_merged_cache_answers_what_the_three_caches_answer(me: str, code: str) -> None:
    prompts = (KAFKA, CHECKOUT, "ok, go ahead", "which grafana dashboard shows the payment latency?")
    drop(me, code)
    three = [hook(p, me, code) for p in prompts]
    assert merged.state(me, code) == "missing"
    run("sources", "--cwd", code, "--refresh", repo=me)
    assert merged.state(me, code) == "current"
    assert [hook(p, me, code) for p in prompts] == three
    assert "source: team acme" in three[0] and "source: project shop" in three[1]


def test_a_stale_merged_cache_answers_as_it_stands_until_its_refresh(me: str, code: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    run("sources", "--cwd", code, "--refresh", repo=me)
    write_file(code, ".memrepo/memory/shop-payments.md", memory_text(
        "shop-payments", class_="project", title="Payments go through Adyen in the shop",
        description="The shop's payments are processed by Adyen, never Stripe.", topics=["payments", "adyen"]))
    project = rs.found(me, code)[-1]
    sources.place(project)
    assert sources.refresh(project) is not None  # the project's cache moves; the merged one does not
    assert merged.state(me, code) == "stale"
    prompt = "which payment provider processes the shop's payments, adyen?"
    seen = opened(monkeypatch)
    assert "shop-payments" not in [h.id for h in decide.decide(me, prompt, cwd=code).hits]
    assert seen == [rs.merged_db(rs.found(me, code))]  # the merged cache alone, as it stands
    assert "team-kafka-retention" in hook(KAFKA, me, code)
    sources.refresh_known(me)  # as the SessionStart refresh, `memrepo sync` and the commit's worker do
    assert merged.state(me, code) == "current"
    assert "shop-payments" in hook(prompt, me, code)


def test_a_commit_in_a_team_clone_refreshes_the_merged_caches_off_its_path(me: str, code: str) -> None:
    """The team clone's post-commit hook starts the refresh of the merged caches of the personal
    repository that joined it (its mark names it), detached."""
    clone = sources.teams(me)["acme"]["path"]
    write_file(clone, "memory/team-zookeeper.md", memory_text(
        "team-zookeeper", title="Zookeeper quorum needs three nodes",
        description="A Zookeeper quorum needs three nodes in every cluster.", topics=["zookeeper", "quorum"]))
    from helpers import commit_all

    assert commit_all(clone, "zookeeper").returncode == 0
    deadline = time.monotonic() + 60
    while merged.state(me, code) != "current" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert merged.state(me, code) == "current"
    assert "team-zookeeper" in hook("how many zookeeper nodes does a quorum need?", me, code)


def test_a_team_removed_is_not_read_from_the_merged_cache(me: str, code: str) -> None:
    run("sources", "--cwd", code, "--refresh", repo=me)
    assert "team-kafka-retention" in hook(KAFKA, me, code)
    run("team", "remove", "acme", repo=me)
    assert merged.state(me, code) == "stale"
    assert "team-kafka-retention" not in hook(KAFKA, me, code)


@pytest.mark.parametrize("damage", ["garbage", "no meta", "a foreign signature"])
def test_a_damaged_merged_cache_is_ignored_and_never_silences_the_personal_source(me: str, code: str, damage: str) -> None:
    run("sources", "--cwd", code, "--refresh", repo=me)
    path = rs.merged_db(rs.found(me, code))
    if damage == "garbage":
        with open(path, "r+b") as fh:
            fh.seek(0)
            fh.write(b"\0" * 4096)
    else:
        with sqlite3.connect(path) as db:
            db.execute("DROP TABLE meta" if damage == "no meta" else "UPDATE meta SET value = 'v6\t' WHERE key = 'sources'")
    out = hook("should I indent python with tabs or spaces?", me, code)
    assert "my-spaces" in out and "source: personal" in out
    assert "team-kafka-retention" in hook(KAFKA, me, code)


def test_untrusted_rows_of_a_source_cache_are_left_out(me: str, code: str) -> None:
    clone = sources.teams(me)["acme"]["path"]
    with sqlite3.connect(paths.index_db(clone)) as db:
        db.execute("UPDATE memories SET id = '../../etc', path = 'memory/../../etc.md' WHERE id = 'team-tabs'")
        db.execute("UPDATE memories SET half_life = -1 WHERE id = 'team-kafka-retention'")
    built = merged.build(rs.found(me, code))
    assert built.rows == 2 and len(built.skipped) == 2  # my-spaces and the project's; both team rows refused
    with sqlite3.connect(built.path) as db:
        ids = sorted(r[0] for r in db.execute("SELECT id FROM memories"))
    assert ids == ["my-spaces", "project:shop-checkout-flag"]


def test_doctor_reports_the_merged_cache(me: str, code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(code)

    def line() -> str:
        out = CliRunner().invoke(cli, ["--repo", me, "doctor"]).output
        return next(x for x in out.splitlines() if "merged cache" in x)

    drop(me, code)
    assert "missing; the prompt hook reads each source's own cache until it is built" in line()
    run("sources", "--cwd", code, "--refresh", repo=me)
    assert "current" in line()
    with open(os.path.join(code, ".memrepo", "memory", "shop-checkout-flag.md"), "a", encoding="utf-8") as fh:
        fh.write("More.\n")
    sources.refresh(rs.found(me, code)[-1])
    assert "stale; the prompt hook reads it as it stands until its refresh" in line()  # as _union does


def test_ids_shared_by_two_sources_stay_apart(me: str, code: str, team: tuple[str, str], tmp_path: Any) -> None:
    """A memory shared to a team keeps its id there: in the merged cache each is its source's."""
    write_file(code, ".memrepo/memory/my-spaces.md", memory_text(
        "my-spaces", class_="project", title="The shop indents its Python with four spaces",
        description="The shop's Python is indented with four spaces.", topics=["indentation", "python style"]))
    project = rs.found(me, code)[-1]
    sources.place(project)
    sources.refresh(project)
    built = merged.build(rs.found(me, code))
    assert not built.skipped
    d = decide.decide(me, "should I indent python with tabs or spaces?", cwd=code)
    assert ("my-spaces", "") in [(h.id, h.source) for h in d.hits]


def _dump(path: str) -> dict[str, list[Any]]:
    """What recall reads of a merged cache: its rows, texts, the union's term statistics, and each
    source's own (the refresh's bookkeeping)."""
    with sqlite3.connect(path) as db:
        return {table: sorted(db.execute(sql).fetchall()) for table, sql in (
            ("memories", "SELECT rowid, id, path, hash, status, superseded_by FROM memories"),
            ("fts", "SELECT rowid, title, description, body FROM fts"),
            ("docterms", "SELECT rowid, dl, terms FROM docterms"),
            ("citations", "SELECT rowid, path FROM citations"),
            ("src", "SELECT k, tag, count, docstats FROM src"),
            ("srcterms", "SELECT term, k, df FROM srcterms"),
            ("srctech", "SELECT word, k FROM srctech"),
            ("terms", "SELECT term, df FROM terms"),
            ("techwords", "SELECT word FROM techwords"),
            ("meta", "SELECT key, value FROM meta WHERE key IN ('count', 'docstats', 'sources')"))}


def test_a_refresh_copies_only_what_changed_and_equals_a_whole_build(me: str, code: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from memrepo.store import githooks

    monkeypatch.setattr(githooks, "_refresh_merged", lambda *a: None)  # no detached refresh racing this one
    run("sources", "--cwd", code, "--refresh", repo=me)
    run("add", "--class", "fact", "--title", "Payment latency alerts page the payments on-call",
        "-d", "Grafana's payment latency alert pages the payments on-call rotation.", "--topic", "grafana", repo=me)
    run("forget", "my-spaces", "--reason", "tabs after all", repo=me)
    srcs = rs.found(me, code)
    built = merged.refresh(me, code)
    assert built is not None and not built.rebuilt and built.synced == ["personal"]
    assert (built.rows, built.removed) == (2, 1)  # the new memory, and my-spaces again (retired)
    assert merged.state(me, code) == "current"
    after = _dump(rs.merged_db(srcs))
    assert after == _dump(merged.build(srcs).path)
    assert merged.refresh(me, code) is None  # current: nothing to do


def test_an_add_brings_the_merged_cache_up_to_date_off_the_add_s_path(me: str, code: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """After `memrepo add` the post-commit hook starts the merged caches' refresh, detached; then
    the prompt hook reads the merged cache alone and recalls the new memory."""
    run("sources", "--cwd", code, "--refresh", repo=me)
    run("add", "--class", "fact", "--title", "Payment latency alerts page the payments on-call",
        "-d", "Grafana's payment latency alert pages the payments on-call rotation.", "--topic", "grafana",
        "--id", "payment-latency-alerts", repo=me)
    deadline = time.monotonic() + 60
    while merged.state(me, code) != "current" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert merged.state(me, code) == "current"
    prompt = "who gets paged by the grafana payment latency alert?"
    seen = opened(monkeypatch)
    d = decide.decide(me, prompt, cwd=code)
    assert seen == [rs.merged_db(rs.found(me, code))]  # the merged cache alone, not the three
    assert "payment-latency-alerts" in [h.id for h in d.hits]
    assert "payment-latency-alerts" in hook(prompt, me, code)


def test_a_session_lends_only_to_its_own_sources_turns(me: str, code: str) -> None:
    """A session id is its source's: a project's turn that names the session of one of your own
    turns borrows nothing from it in the merged cache (issue 36's share, issue 41's one ranking)."""
    turn = dict(class_="event", source="import", created="2026-11-30", session="s-shared")
    write_file(me, "memory/turn-mine.md", memory_text(
        "turn-mine", title="the ledger queue lease was lost", body="the payments worker lost the ledger queue lease\n",
        description="the payments worker lost the ledger queue lease", **turn))
    assert commit_all(me).returncode == 0
    write_file(code, ".memrepo/memory/turn-theirs.md", memory_text(
        "turn-theirs", title="a lease", body="a lease\n", description="a lease", **turn))
    project = rs.found(me, code)[-1]
    sources.refresh(project)
    run("sources", "--cwd", code, "--refresh", repo=me)
    assert merged.state(me, code) == "current"
    why: list[Any] = []
    decide.decide(me, "why did the payments worker lose the ledger queue lease?", cwd=code, explain=why)
    found = {h.id: h for h, _ in why if h is not None}
    assert found["turn-mine"].source == "" and found["turn-theirs"].source.startswith("project")
    assert found["turn-theirs"].lent == 0.0 and found["turn-mine"].lent == 0.0

