"""h31: a user's walk through the offline passes from the CLI, against tests/fake/fakemodel.py.

Each fake answer is written here before the pass runs on it, as a model would answer: empty,
a crash with its message on stderr, or a valid verdict. Each test is a finding of the walk
that failed before its fix.
"""

from __future__ import annotations

import sys

import pytest
from click.testing import CliRunner

from helpers import commit_all, head, write_memory
from memrepo.cli.main import cli

from test_enrich import FAKE


@pytest.fixture
def store(repo: str, monkeypatch: pytest.MonkeyPatch) -> str:
    write_memory(repo, "widgets", title="Widget service runbook", description="How the widget service restarts",
                 topics=["widgets"], body="Restart with `make restart`.\n")
    assert commit_all(repo, "m").returncode == 0
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE}")
    monkeypatch.delenv("FAKE_MODEL_RULES", raising=False)
    return repo


def _run(repo: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--repo", repo, *args])
    return result.exit_code, result.output


def test_enrich_that_gives_up_on_an_unanswered_memory_does_not_say_it_has_no_new_aliases(
        store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_MODEL_DEFAULT", "")  # an empty answer, three times
    for _ in range(2):
        code, out = _run(store, "enrich")
        assert code == 1 and "not answered, asked again next run: widgets" in out
    code, out = _run(store, "enrich")
    assert code == 1
    assert "no new aliases" not in out  # it said so: as if the model had answered
    assert "not answered 3 times, not asked again until its text changes (`memrepo enrich ID` asks now): widgets" in out


def test_enrich_of_a_memory_with_uncommitted_edits_says_it_left_it_alone(store: str) -> None:
    with open(f"{store}/memory/widgets.md", "a", encoding="utf-8") as fh:
        fh.write("Edited by hand.\n")
    before = head(store)
    code, out = _run(store, "enrich", "widgets")
    assert code == 0 and head(store) == before
    assert "nothing to enrich" not in out  # it said only that
    assert "left alone, uncommitted edits (commit them, then enrich): widgets" in out
