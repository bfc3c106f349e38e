"""A Claude Code background-task notification or subagent hand-back is a prompt nobody typed: recall
stays silent on it whatever it names (issue 36, part 4; issue 17 once read the task's description
as a query). Inside other text, only what the task was about is a term, never the envelope's
ids, paths, status or frame."""

from __future__ import annotations

from helpers import commit_all, write_memory
from memrepo.recall import decide as recall, query
from memrepo.store import index

NOTE = ('<task-notification>\n<task-id>b1c496c</task-id>\n<tool-use-id>toolu_01ABC</tool-use-id>\n'
        '<output-file>/tmp/claude/-home-ann-src-shop/tasks/b1c496c.output</output-file>\n<status>completed</status>\n'
        '<summary>Background command "{what}" completed (exit code 0)</summary>\n</task-notification>\n'
        'Read the output file to retrieve the result: /tmp/claude/-home-ann-src-shop/tasks/b1c496c.output')


def test_only_the_task_description_is_a_query_term() -> None:
    assert query.build_query(NOTE.format(what="sleep 300")).terms == ("sleep", "300")
    failed = ('<task-notification><task-id>bg-1</task-id><status>failed</status><summary>Background command '
              '"alembic upgrade head" failed with exit code 1: duplicate column invoice_ref</summary></task-notification>')
    assert query.build_query(failed).terms == ("alembic", "upgrade", "head", "duplicate", "column", "invoice", "ref")


def test_a_notification_never_recalls_even_when_its_task_names_a_memorys_subject(repo: str) -> None:
    write_memory(repo, "tasks-output-files", title="Background task output files", topics=["tasks", "output"],
                 description="Background command output files are kept under tmp for a day; read the result there.",
                 body="Claude's background tasks write a .output file; the summary says completed or failed.\n")
    write_memory(repo, "alembic-migrations", title="Alembic migrations run on deploy", topics=["alembic", "migrations"],
                 description="alembic upgrade head runs before every API deploy.", body="Never edit a migration that shipped.\n")
    assert commit_all(repo, "memories").returncode == 0
    index.update(repo)
    assert recall.decide(repo, NOTE.format(what="sleep 300")).hits == []
    d = recall.decide(repo, NOTE.format(what="alembic upgrade head"))
    assert (d.hits, d.silent, d.why) == ([], "not-typed", "no person typed it: a background task's notification")
    assert recall.decide(repo, "alembic upgrade head failed again").hits[0].id == "alembic-migrations"


def _handback(report: str) -> str:
    """The hand-back frame exactly as the fixture's mock session recorded it, around another report."""
    import json
    import os

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "claude-code",
                        "cc-2.1.332-mock-session-excerpt.jsonl")
    line = json.loads(open(path, encoding="utf-8").read().split("\n")[32])
    text = line["message"]["content"][0]["content"][0]["text"]
    assert "  Hello from the mock model.\n" in text
    return text.replace("  Hello from the mock model.\n", "".join(f"  {r}\n" for r in report.split("\n")))


def test_a_subagent_hand_back_is_read_as_its_report() -> None:
    assert query.build_query(_handback("Hello from the mock model.")).terms == ("hello", "mock", "model")
    terms = query.build_query(_handback("Renamed the invoice_ref column.\nAll 212 tests pass.")).terms
    assert terms == ("renamed", "invoice", "ref", "column", "212", "tests", "pass")
    for frame_word in ("authority", "harness", "agentid", "sendmessage", "recap", "subagent", "tokens", "duration"):
        assert frame_word not in terms


def test_a_hand_back_never_recalls_even_when_its_report_names_a_memorys_subject(repo: str) -> None:
    write_memory(repo, "agent-reports", title="Subagent reports need user approval", topics=["subagent", "approval"],
                 description="A subagent's report carries no user authority; ask before acting on its requests.",
                 body="The harness indents the report; the session continues after it.\n")
    write_memory(repo, "alembic-migrations", title="Alembic migrations run on deploy", topics=["alembic", "migrations"],
                 description="alembic upgrade head runs before every API deploy.", body="Never edit a migration that shipped.\n")
    assert commit_all(repo, "memories").returncode == 0
    index.update(repo)
    assert recall.decide(repo, _handback("Checked the three files; nothing to change.")).hits == []
    found = recall.decide(repo, _handback("The alembic migration for invoice_ref is written; upgrade head passes."))
    assert (found.hits, found.silent) == ([], "not-typed")
