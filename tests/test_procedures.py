"""Recurring procedures: normalization, and the ≥ 3 sessions count over the transcript index."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from helpers import ROOT
from memrepo.format.steps import normalize_command, step_of
from memrepo.passes.skills import procedures
from memrepo.store import sessions
from memrepo.cli.main import cli

DATA = os.path.join(ROOT, "tests", "data", "skills", "transcripts")
MIGRATION = ["alembic revision", "Edit <path>", "alembic upgrade head", "pytest <path>"]


@pytest.mark.parametrize("command, steps", [
    ('alembic revision --autogenerate -m "add users"', ["alembic revision"]),
    ('alembic revision --message "add orders" --autogenerate', ["alembic revision"]),
    ("pytest -x tests/test_users.py", ["pytest <path>"]),
    ("pytest --maxfail=2 -vv tests/test_invoices.py tests/b.py", ["pytest <path>"]),
    (".venv/bin/python3.11 -m pytest -q tests/", ["python -m pytest <path>"]),
    ("python3 manage.py migrate", ["python migrate <path>"]),
    ("cd /srv/app && FOO=1 make test 4", ["make test"]),
    ("git log --oneline | head -n 5", ["git log | head"]),
    ("docker push registry.example.com/app:1.4.0; echo done", ["docker push <path>", "echo done"]),
    ("cd /tmp", []),
    ("echo 'unclosed", ["echo"]),
])
def test_normalize_command(command: str, steps: list[str]) -> None:
    assert normalize_command(command) == steps


@pytest.mark.parametrize("name, command, paths, step", [
    ("Bash", "make build && make test", [], "make build\nmake test"),
    ("Edit", "", ["/a/b.py"], "Edit <path>"),
    ("Write", "", ["/a/c.md"], "Write <path>"),
    ("Read", "", ["/a/b.py"], None),
    ("Grep", "", [], None),
    ("Bash", "cd /x", [], None),
])
def test_step_of(name: str, command: str, paths: list[str], step: str | None) -> None:
    assert step_of(name, command, paths) == step


def test_three_sessions_found_two_not_different_names_and_flags_one_candidate(repo: str) -> None:
    sessions.index(repo, DATA)
    found = procedures.candidates(repo)
    # migration-1..3 use other tables, file names, -m/--message and pytest flags: one candidate;
    # the docker procedure (2 sessions) is not one
    assert [(c["n"], c["steps"], [s[:8] for s in c["sessions"]]) for c in found] == [
        (1, MIGRATION, ["aaaa1111", "aaaa2222", "aaaa3333"])]
    assert [c["steps"] for c in procedures.candidates(repo, min_sessions=2)] == [
        MIGRATION, ["docker build <path>", "docker push <path>"]]


def test_two_of_three_sessions_is_not_enough(repo: str) -> None:
    for name in ("migration-1.jsonl", "migration-2.jsonl", "docker-1.jsonl"):
        sessions.index(repo, os.path.join(DATA, name))
    assert procedures.candidates(repo) == []
    sessions.index(repo, os.path.join(DATA, "migration-3.jsonl"))
    assert [c["steps"] for c in procedures.candidates(repo)] == [MIGRATION]


def test_cli_detect(repo: str) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["--repo", repo, "skills", "detect"], catch_exceptions=False).stdout == \
        "no procedure recurs in 3 or more indexed sessions\n"
    runner.invoke(cli, ["--repo", repo, "transcripts", "index", DATA], catch_exceptions=False)
    out = runner.invoke(cli, ["--repo", repo, "skills", "detect"], catch_exceptions=False)
    assert out.exit_code == 0
    assert out.stdout == (
        "1. [a88cd348] alembic revision → Edit <path> → alembic upgrade head → pytest <path>\n"
        "   seen in 3 sessions: aaaa1111-0000-4000-8000-000000000001, aaaa2222-0000-4000-8000-000000000002, "
        "aaaa3333-0000-4000-8000-000000000003\n")
