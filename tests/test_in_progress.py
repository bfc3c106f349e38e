"""No memrepo write lands in a person's merge, rebase, cherry-pick or revert (real git states)."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner
from helpers import commit_all, git, head, write_file

from memrepo.cli.main import cli
from memrepo.errors import Deferred
from memrepo.base import paths
from memrepo.vcs import commit
from memrepo.worker import jobs, queue, sweep


def _conflict(repo: str, how: str) -> None:
    """Leave `repo` stopped in the middle of `how` on a conflict in notes.txt."""
    write_file(repo, "notes.txt", "base\n")
    commit_all(repo, "base")
    git(repo, "checkout", "-q", "-b", "side")
    write_file(repo, "notes.txt", "side\n")
    commit_all(repo, "side edit")
    git(repo, "checkout", "-q", "main")
    write_file(repo, "notes.txt", "main\n")
    commit_all(repo, "main edit")
    args = {"merge": ["merge", "side"], "rebase": ["rebase", "side"], "cherry-pick": ["cherry-pick", "side"],
            "revert": ["revert", "--no-edit", "HEAD~1"]}[how]
    if how == "revert":  # reverting the base edit conflicts with main's edit of the same line
        write_file(repo, "notes.txt", "main, again\n")
        commit_all(repo, "main edit again")
    assert git(repo, *args, check=False).returncode != 0


@pytest.mark.parametrize("how, what", [("merge", "a merge"), ("rebase", "a rebase"),
                                       ("cherry-pick", "a cherry-pick"), ("revert", "a revert")])
def test_in_progress_names_what_git_is_in_the_middle_of(repo: str, how: str, what: str) -> None:
    assert commit.in_progress(repo) is None
    _conflict(repo, how)
    assert commit.in_progress(repo) == what


@pytest.mark.parametrize("how, what", [("merge", "a merge"), ("rebase", "a rebase"),
                                       ("cherry-pick", "a cherry-pick"), ("revert", "a revert")])
def test_add_in_the_middle_of_an_operation_writes_nothing_and_says_what_to_do(repo: str, how: str, what: str) -> None:
    _conflict(repo, how)
    before, status = head(repo), git(repo, "status", "--porcelain").stdout
    result = CliRunner().invoke(cli, ["--repo", repo, "add", "--class", "rule", "--title", "Mid-merge rule",
                                      "-d", "Written while a merge was open"], catch_exceptions=False)
    assert result.exit_code == 1
    assert f"{what} is in progress" in result.output and "finish it or abort it" in result.output
    assert (head(repo), git(repo, "status", "--porcelain").stdout) == (before, status)
    assert not os.path.exists(paths.note_path(repo, "mid-merge-rule"))


def test_the_sweep_skips_a_merge_and_stays_due(repo: str) -> None:
    _conflict(repo, "merge")
    before = head(repo)
    result = CliRunner().invoke(cli, ["--repo", repo, "sweep", "--no-model"], catch_exceptions=False)
    assert result.exit_code == 0
    assert "skipped: a merge is in progress" in result.output
    assert head(repo) == before
    assert jobs.sweep_due(repo)  # not recorded as the last sweep
    assert sweep.run(repo, use_model=False)["skipped"].startswith("a merge is in progress")


def test_a_deferred_job_goes_back_to_the_queue_without_using_an_attempt(repo: str) -> None:
    jobs.enqueue(repo, {"kind": "capture", "session": "s1", "transcript": "/nonexistent"})

    def busy(r: str, job: dict) -> None:
        raise commit.OperationInProgress("a merge is in progress")

    assert jobs.drain(repo, busy) == []
    path = os.path.join(jobs.jobs_dir(repo), "capture-s1.json")
    job = queue._read_json(path)
    assert job is not None and job["attempts"] == 0 and job["not_before"] > job["queued"]
    assert not os.path.exists(os.path.join(jobs.jobs_dir(repo), "failed"))
    assert issubclass(commit.OperationInProgress, Deferred)
