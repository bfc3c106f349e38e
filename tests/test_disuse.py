"""Use renews, disuse fades (issue 43): a used memory's decay clock restarts on the day of its use
(local state, never the memory file), and an agent-captured memory unused for
`retire_unused_days` is proposed for retirement in review with its evidence, never retired by itself.
"""

from __future__ import annotations

import datetime as _dt
import json
import os

import pytest
from click.testing import CliRunner

from helpers import commit_all, git, memory_text, write_file, write_memory
from memrepo.cli.main import cli
from memrepo.passes.curate import curator, disuse, review
from memrepo.base import paths
from memrepo.recall import noisy, rank, usage
from test_usage import FRIDAY, USED, prompt, stop

OLD = "2025-01-10"


def _invoke(repo: str, *args: str) -> str:
    result = CliRunner().invoke(cli, ["--repo", repo, *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_a_used_memory_renews_its_decay_clock_without_touching_its_file(repo: str) -> None:
    write_memory(repo, "release-freeze", class_="fact", created=OLD, title="No production deploys on Friday afternoon",
                 description="After 16:00 on Fridays nothing ships to production without an explicit OK from "
                             "Marta or Joel in #release-desk.", topics=["deploy", "release policy"])
    assert commit_all(repo, "memories").returncode == 0
    prompt(repo, FRIDAY)
    stop(repo, USED)
    today = _dt.datetime.now(_dt.timezone.utc).date().isoformat()
    assert noisy.noisy_ids(repo).renewed == {"release-freeze": today}
    assert git(repo, "status", "--porcelain").stdout == ""  # the memory file was not rewritten
    state = json.load(open(noisy.noisy_path(repo), encoding="utf-8"))
    assert state["used"] == {"release-freeze": today}
    # The sweep's rewrite keeps it (and would find it in the usage log if the file were gone).
    os.remove(noisy.noisy_path(repo))
    usage.write_noisy(repo)
    assert noisy.noisy_ids(repo).renewed == {"release-freeze": today}
    shown = _invoke(repo, "show", "release-freeze")
    assert f"Use on this machine: injected 1 times, 1 judged by the reply, used 1; last used: {today}" in shown


def _hit(updated: str) -> rank.Hit:
    return rank.Hit(("m", "fact", "active", None, None, updated, 365.0, None, None, "t", "d", None), 1.0)


@pytest.mark.parametrize("year", [1, 4, 100, 400, 1600, 1899, 1900, 1969, 1970, 2000, 2024, 2025, 2100, 9999])
def test_the_decay_clock_counts_days_as_the_calendar_does(year: int) -> None:
    epoch = _dt.date(1970, 1, 1).toordinal()
    first, last = _dt.date(year, 1, 1).toordinal(), _dt.date(year, 12, 31).toordinal()
    for ordinal in range(first, last + 1):
        day = _dt.date.fromordinal(ordinal)
        assert rank._epoch_day(day.year, day.month, day.day) == ordinal - epoch, day
    # a day past its month's end counts on into the next month; a month or a day out of range is no date
    assert rank._epoch_day(year, 2, 31) == rank._epoch_day(year, 2, 28) + 3
    for month, d in ((0, 1), (13, 1), (1, 0), (1, 32)):
        with pytest.raises(ValueError):
            rank._epoch_day(year, month, d)


def test_priority_decays_from_the_last_use() -> None:
    now = (_dt.date(2026, 12, 1) - _dt.date(1970, 1, 1)).days * 86400.0
    stale = rank._priority(_hit("2024-12-01"), now, noisy.Usage())
    renewed = rank._priority(_hit("2024-12-01"), now, noisy.Usage((), {"m": "2026-11-30"}))
    fresh = rank._priority(_hit("2026-11-30"), now, noisy.Usage())
    assert stale < renewed == fresh
    # An old renewal never ages a memory edited since.
    assert rank._priority(_hit("2026-11-30"), now, noisy.Usage((), {"m": "2025-01-01"})) == fresh
    # Noisy (injected often, never used) still ranks as fully decayed.
    assert rank._priority(_hit("2026-11-30"), now, noisy.Usage(["m"], {})) == rank.DECAY_FLOOR


def _watched_since(repo: str, day: str) -> None:
    """A recall log whose first decision is on `day`: recall has watched use since then."""
    os.makedirs(paths.index_dir(repo), exist_ok=True)
    with open(paths.recall_log(repo), "w", encoding="utf-8") as fh:
        fh.write(json.dumps({"t": f"{day}T09:00:00Z", "prompt_sha": "0", "terms": [], "injected": [], "silent": "x"}) + "\n")


@pytest.fixture
def aged(repo: str) -> str:
    common = {"created": OLD, "description": "A memory that nobody asked about for a long time."}
    write_memory(repo, "agent-fact", source="capture", title="Staging cron runs at 02:00", **common)
    write_memory(repo, "agent-event", source="agent", class_="event", title="The March outage", **common)
    write_memory(repo, "user-fact", source="user", title="Staging DNS is split", **common)
    write_memory(repo, "agent-rule", source="capture", class_="rule", title="Never force-push main", **common)
    write_memory(repo, "agent-pref", source="capture", class_="preference", title="Short PRs", **common)
    timeless = memory_text("agent-timeless", source="capture", title="The repo is MIT", **common)
    head, _, body = timeless.partition("\n---\n")
    write_file(repo, "memory/agent-timeless.md", head + "\nhalf_life_days: null\n---\n" + body)  # never decays
    write_memory(repo, "agent-used", source="capture", title="Deploys need Joel", **common)
    write_memory(repo, "agent-recent", source="capture", title="New cache host", created="2026-11-20",
                 description="A memory written days ago.")
    assert commit_all(repo, "memories").returncode == 0
    _watched_since(repo, "2025-02-01")
    noisy.renew(repo, ["agent-used"], "2026-11-01")
    return repo


def test_idle_agent_memories_are_found_and_what_the_user_said_never_expires(aged: str) -> None:
    from memrepo.store import config

    found = disuse.idle(aged, curator._load(aged), config.load(aged), today=_dt.date(2026, 12, 1))
    assert [n.id for n, _ in found] == ["agent-event", "agent-fact"]
    evidence = found[1][1]
    assert evidence == {"idle_days": 668, "last_used": "never", "injected": 0, "judged": 0, "used": 0,
                        "window_days": 90, "watched_since": "2025-02-01"}


def test_a_machine_that_began_recalling_lately_proposes_nothing(aged: str) -> None:
    from memrepo.store import config

    _watched_since(aged, "2026-11-15")
    assert disuse.idle(aged, curator._load(aged), config.load(aged), today=_dt.date(2026, 12, 1)) == []
    os.remove(paths.recall_log(aged))
    assert disuse.idle(aged, curator._load(aged), config.load(aged), today=_dt.date(2026, 12, 1)) == []


@pytest.mark.parametrize("days, expected", [(0, []), (700, []), (600, ["agent-event", "agent-fact"])])
def test_the_period_is_a_setting(aged: str, days: int, expected: list[str]) -> None:
    write_file(aged, "memrepo.json", json.dumps({"retire_unused_days": days}))
    from memrepo.store import config

    found = disuse.idle(aged, curator._load(aged), config.load(aged), today=_dt.date(2026, 12, 1))
    assert [n.id for n, _ in found] == expected


def test_curate_proposes_retirement_in_review_and_never_retires(aged: str) -> None:
    head = git(aged, "rev-parse", "HEAD").stdout
    report = curator.run(aged, use_model=False)
    assert sorted(d["ids"][0] for d in report.review if d["kind"] == "disuse") == ["agent-event", "agent-fact"]
    assert git(aged, "rev-parse", "HEAD").stdout == head  # nothing retired on the current branch
    listed = _invoke(aged, "review")
    assert "curator (proposed): retire agent-fact, unused for" in listed
    [fact] = [p for p in review.proposals(aged) if p["trailers"].get("Id") == "agent-fact"]
    shown = _invoke(aged, "review", "show", fact["id"])
    assert "retire agent-fact: unused for" in shown and "last used: never" in shown
    assert "recall watched since 2025-02-01" in shown
    # Open proposals are not made again; a rejected one neither.
    assert [d for d in curator.run(aged, use_model=False).review if d["kind"] == "disuse"] == []
    _invoke(aged, "review", "reject", fact["id"], "--reason", "still true")
    assert [d for d in curator.run(aged, use_model=False).review if d["kind"] == "disuse"] == []
    # Accepting retires it, through a commit a person made.
    [event] = [p for p in review.proposals(aged) if p["trailers"].get("Id") == "agent-event"]
    _invoke(aged, "review", "accept", event["id"])
    text = open(paths.note_path(aged, "agent-event"), encoding="utf-8").read()
    assert "status: retired" in text and "retired_reason: not used for" in text
