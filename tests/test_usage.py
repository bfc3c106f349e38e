"""Was an injected memory used? The Stop hook judges each turn's injections from the reply (and the
next prompt), with no model; `recall-log`, `memrepo stats` and the profile's demotion order read it.

Hooks run as subprocesses with JSON on stdin, in a real memory repository. The replies are what an
honest agent would answer to the prompt, written before the judgement ran on them.
"""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from helpers import commit_all, write_file, write_memory
from memrepo.cli.main import cli
from memrepo.passes import profile
from memrepo.recall import paths, usage
from test_hook import hook

FRIDAY = "it's friday 17:00, can I still ship this hotfix to production?"
USED = ("Not on your own: the Friday freeze starts at 16:00, so a production deploy now needs an explicit OK "
        "from Marta or Joel. Ask in #release-desk; once one of them approves, ship the hotfix as usual.")
IGNORED = ("Yes, you can still ship the hotfix to production: run the deploy script with the hotfix tag, "
           "then watch the error rate for ten minutes before you close the incident.")


@pytest.fixture
def store(repo: str) -> str:
    write_memory(repo, "release-freeze", class_="rule", title="No production deploys on Friday afternoon",
                 description="After 16:00 on Fridays nothing ships to production without an explicit OK from "
                             "Marta or Joel in #release-desk.",
                 topics=["deploy", "release policy"], aliases=["can I ship this now"])
    write_memory(repo, "staging-db", title="Staging database lives on pg-stage-2",
                 description="Staging Postgres is pg-stage-2.internal.example, port 6432 through pgbouncer.",
                 topics=["staging", "database"])
    write_memory(repo, "coffee-order", title="The team orders coffee from the corner roaster",
                 description="Beans come from the corner roaster every Monday.", topics=["coffee"])
    assert commit_all(repo, "memories").returncode == 0
    return repo


def prompt(repo: str, text: str, session: str = "s-1") -> None:
    proc = hook("user_prompt_submit", json.dumps({"session_id": session, "transcript_path": "", "cwd": "/tmp",
                                                  "hook_event_name": "UserPromptSubmit", "prompt": text}), repo)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr


def stop(repo: str, reply: str, session: str = "s-1", again: bool = False) -> bytes:
    proc = hook("stop", json.dumps({"session_id": session, "transcript_path": "", "cwd": "/tmp", "hook_event_name": "Stop",
                                    "stop_hook_active": again, "last_assistant_message": reply}), repo)
    assert proc.returncode == 0 and proc.stdout == b""
    return proc.stderr


def verdicts(repo: str) -> list[dict]:
    path = usage.usage_log(repo)
    if not os.path.exists(path):
        return []
    return [json.loads(line) for line in open(path, encoding="utf-8")]


def test_a_reply_that_says_the_memorys_own_facts_used_it(store: str) -> None:
    prompt(store, FRIDAY)
    assert stop(store, USED) == b""
    [v] = verdicts(store)
    assert (v["by"], v["used"], v["unused"], v["session"]) == ("reply", ["release-freeze"], [], "s-1")


def test_a_reply_that_only_repeats_the_prompt_did_not(store: str) -> None:
    prompt(store, FRIDAY)
    stop(store, IGNORED)
    [v] = verdicts(store)
    assert (v["used"], v["unused"]) == ([], ["release-freeze"])


def test_the_id_named_in_the_reply_counts_as_used(store: str) -> None:
    prompt(store, FRIDAY)
    stop(store, "The note release-freeze applies here; I'd wait until Monday.")
    assert verdicts(store)[0]["used"] == ["release-freeze"]


def test_the_next_prompt_can_show_what_the_reply_ignored(store: str) -> None:
    prompt(store, FRIDAY)
    stop(store, IGNORED)
    prompt(store, "wait, doesn't Marta have to approve deploys on a friday?")
    stop(store, "Yes, she or Joel has to give the OK after 16:00 on Fridays.")
    by = {v["by"]: v for v in verdicts(store)}
    assert by["next-prompt"]["used"] == ["release-freeze"]
    assert by["next-prompt"]["key"] == verdicts(store)[0]["key"]


def test_an_unrelated_next_prompt_leaves_it_unused(store: str) -> None:
    prompt(store, FRIDAY)
    stop(store, IGNORED)
    prompt(store, "which port does the staging postgres listen on?")
    stop(store, "6432, through pgbouncer on pg-stage-2.")
    assert not [v for v in verdicts(store) if v["by"] == "next-prompt" and v["used"]]


def test_a_second_stop_of_the_same_turn_judges_nothing_twice(store: str) -> None:
    prompt(store, FRIDAY)
    stop(store, USED)
    stop(store, USED, again=True)
    assert len(verdicts(store)) == 1


def test_a_silent_turn_and_another_session_get_no_verdict(store: str) -> None:
    prompt(store, "ok, go ahead")
    stop(store, USED)
    stop(store, USED, session="s-other")
    assert verdicts(store) == []


def test_the_usage_log_holds_no_text(store: str) -> None:
    prompt(store, FRIDAY)
    stop(store, USED)
    raw = open(usage.usage_log(store), encoding="utf-8").read()
    for word in ("Marta", "hotfix", "freeze starts", "friday"):
        assert word not in raw
    assert oct(os.stat(usage.usage_log(store)).st_mode & 0o777) == "0o600"


def test_a_broken_index_costs_the_verdict_never_the_hook(store: str) -> None:
    prompt(store, FRIDAY)
    os.remove(paths.index_db(store))
    err = stop(store, USED)
    assert b"usage not recorded" in err and verdicts(store) == []


def test_recall_log_marks_used_and_unused(store: str) -> None:
    prompt(store, FRIDAY)
    stop(store, USED)
    prompt(store, FRIDAY, session="s-2")
    stop(store, IGNORED, session="s-2")
    prompt(store, FRIDAY, session="s-3")  # not judged yet
    out = CliRunner().invoke(cli, ["--repo", store, "recall-log"])
    assert out.exit_code == 0, out.output
    lines = [line for line in out.output.splitlines() if line.startswith("  injected: ")]
    assert "release-freeze (" in lines[0] and "used" not in lines[0]
    assert ", unused)" in lines[1] and ", used)" in lines[2]
    data = json.loads(CliRunner().invoke(cli, ["--repo", store, "recall-log", "--json"]).output)
    assert [e["injected"][0].get("used") for e in data] == [None, False, True]


def test_stats_reports_precision_and_what_is_never_used(store: str) -> None:
    prompt(store, FRIDAY)
    stop(store, USED)
    for n in range(usage.REVIEW_AFTER):
        prompt(store, "which port does the staging postgres listen on?", session=f"p-{n}")
        stop(store, "Let me look at the service config first.", session=f"p-{n}")
    data = json.loads(CliRunner().invoke(cli, ["--repo", store, "stats", "--json"]).output)["recall"]
    assert (data["judged"], data["used"]) == (1 + usage.REVIEW_AFTER, 1)
    assert data["never_used"] == [{"id": "staging-db", "injected": usage.REVIEW_AFTER}]
    out = CliRunner().invoke(cli, ["--repo", store, "stats"]).output
    assert "1 of 4 judged injections used (precision 25%)" in out
    assert "staging-db (3x)" in out


def test_a_profile_line_the_reply_used_outlives_one_it_did_not(store: str) -> None:
    write_file(store, "profile.md", profile.render([
        profile.Entry("Works in Lisbon time; schedule nothing before 09:30.", "inferred", "2026-01-10"),
        profile.Entry("Prefers small pull requests with one concern each.", "inferred", "2026-01-10")]))
    write_file(store, "memrepo.json", json.dumps({"profile_bound": 120}))
    assert commit_all(store, "profile").returncode == 0
    prompt(store, "add a cron entry for the nightly invoice report")
    stop(store, "Done: the cron runs at 09:45 Lisbon time, so it is never scheduled before 09:30.")
    assert [e["uses"] for e in profile.show(store)["entries"]] == [1, 0]
    result = profile.add(store, "Reviews happen in the afternoon, never before lunch.", "user")
    assert [d["text"] for d in result["demoted"]] == ["Prefers small pull requests with one concern each."]


def test_a_memory_injected_often_and_never_used_yields_to_a_comparable_one(repo: str) -> None:
    from memrepo.worker import sweep

    for year in ("2026", "2025"):
        write_memory(repo, f"failover-drill-{year}", class_="event", created=f"{year}-10-01", title="Database failover drill",
                     description="The primary was failed over to the replica in 4 minutes.", topics=["database", "failover"])
    write_memory(repo, "coffee-order", title="The team orders coffee from the corner roaster",
                 description="Beans come from the corner roaster every Monday.", topics=["coffee"])
    assert commit_all(repo, "memories").returncode == 0
    question = "how long did the database failover drill take?"
    for n in range(usage.REVIEW_AFTER):
        prompt(repo, question, session=f"d-{n}")
        stop(repo, "About four minutes, in the 2025 drill: the notes of failover-drill-2025 say so.", session=f"d-{n}")
    log = [json.loads(line) for line in open(os.path.join(repo, "index", "recall-log.jsonl"), encoding="utf-8")]
    assert log[0]["injected"][0]["id"] == "failover-drill-2026"  # the newer first, by decay ...
    # ... until the reply used the older one: use renews its decay clock (issue 43)
    assert all(e["injected"][0]["id"] == "failover-drill-2025" for e in log[1:])
    report = sweep.run(repo, use_model=False)
    assert report["noisy"] == ["failover-drill-2026"]
    prompt(repo, question, session="after")
    last = json.loads(open(os.path.join(repo, "index", "recall-log.jsonl"), encoding="utf-8").read().splitlines()[-1])
    assert [i["id"] for i in last["injected"]][:2] == ["failover-drill-2025", "failover-drill-2026"]


def test_what_near_misses_share_shows_none_of_them(repo: str) -> None:
    # Two notes on one subject injected together: the reply says the shared subject's words and
    # one note's own facts; only that note was used.
    write_memory(repo, "calibration-upload", title="Uploading a calibration certificate in the portal",
                 description="Staff upload the lab's calibration certificate PDF at /admin/calibration, per batch.",
                 topics=["calibration", "certificates"], body="The PDF is linked to every tag of the batch.\n")
    write_memory(repo, "calibration-offsets", title="Per-tag calibration offsets in NVS",
                 description="Each tag stores its calibration offset in NVS, written by the production tool.",
                 topics=["calibration", "firmware"], body="The offsets come from the lab's PDF for each batch; "
                                                            "the production tool writes them.\n")
    write_memory(repo, "coffee-order", title="The team orders coffee from the corner roaster",
                 description="Beans come from the corner roaster every Monday.", topics=["coffee"])
    assert commit_all(repo, "memories").returncode == 0
    prompt(repo, "the lab sent back run 21: what do I do with its calibration certificate and the tag offsets?")
    injected = json.loads(open(os.path.join(repo, "index", "recall-log.jsonl"), encoding="utf-8").readline())["injected"]
    assert {i["id"] for i in injected} == {"calibration-upload", "calibration-offsets"}
    stop(repo, "Upload the certificate PDF on /admin/calibration and pick the batch; the portal links it to every tag "
               "in that batch. The offsets stay as they are unless the lab's numbers changed.")
    [v] = verdicts(repo)
    assert (v["used"], v["unused"]) == (["calibration-upload"], ["calibration-offsets"])
