"""A memory repository whose `.git` is a file: a linked worktree, or a separate git dir (as a submodule has).

Session start, the job queue and bootstrap find its git directory through the file, and read
what is shared by all worktrees (HEAD's refs, the recorded interpreter) from the common dir.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from helpers import ROOT, commit_all, git, write_memory
from memrepo.passes import capture
from memrepo.base import paths
from memrepo.store import doctor, freshness, index, repoinit
from memrepo.vcs import hookwire
from memrepo.worker import bootstrap, jobs

RUN = os.path.join(ROOT, "hooks", "run")
DATA = os.path.join(ROOT, "tests", "data", "capture")
FAKE = os.path.join(ROOT, "tests", "fake", "fakemodel.py")
SESSION = "7c0ffee0-1111-4222-8333-444455556666"


def _linked_worktree(repo: str, tmp_path: str) -> str:
    wt = os.path.join(tmp_path, "mem-wt")
    git(repo, "worktree", "add", "-q", "-b", "wt", wt)
    return wt


def _separate_git_dir(repo: str, tmp_path: str) -> str:
    path = os.path.join(tmp_path, "mem2")
    os.makedirs(os.path.join(tmp_path, "store"))
    git(tmp_path, "-c", "init.defaultBranch=main", "init", "-q", "--separate-git-dir",
        os.path.join(tmp_path, "store", "mem2.git"), path)
    with open(os.path.join(path, ".git"), "w") as fh:
        fh.write("gitdir: ../store/mem2.git\n")  # relative to the file's folder, as a submodule's is
    repoinit.init(path)
    return path


@pytest.fixture(params=["linked-worktree", "separate-git-dir"])
def memrepo(request: pytest.FixtureRequest, repo: str, tmp_path: str) -> str:
    """A memory repository with one memory, whose `.git` is a file, its index fresh."""
    write_memory(repo, "friday-freeze", class_="rule", title="No production deploys on Friday afternoon",
                 description="After 16:00 on Fridays nothing ships to production without an explicit OK.",
                 topics=["deploy", "release policy"])
    assert commit_all(repo, "memories").returncode == 0
    make = _linked_worktree if request.param == "linked-worktree" else _separate_git_dir
    path = make(repo, str(tmp_path))
    if request.param == "separate-git-dir":
        write_memory(path, "friday-freeze", class_="rule", title="No production deploys on Friday afternoon",
                     description="After 16:00 on Fridays nothing ships to production.", topics=["deploy"])
        assert commit_all(path, "memories").returncode == 0
    assert os.path.isfile(os.path.join(path, ".git"))
    if index.status(path)["commit"] != git(path, "rev-parse", "HEAD").stdout.strip():
        index.rebuild(path)
    return path


def _commit_without_hooks(path: str) -> None:
    with open(os.path.join(path, "notes.txt"), "w") as fh:
        fh.write("not a memory\n")
    git(path, "add", "notes.txt")
    git(path, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "outside memrepo")


def test_freshness_reads_head_through_the_git_file(memrepo: str) -> None:
    assert freshness.needs_refresh(memrepo) is None
    _commit_without_hooks(memrepo)  # HEAD moves; the index does not follow
    assert freshness.needs_refresh(memrepo) == "index is behind HEAD"


def test_session_start_starts_no_refresh_when_the_index_is_fresh(memrepo: str) -> None:
    os.makedirs(jobs.jobs_dir(memrepo), exist_ok=True)
    open(os.path.join(jobs.jobs_dir(memrepo), ".sweep-requested"), "w").close()  # no daily sweep either
    env = dict(os.environ, MEMREPO_PYTHON=sys.executable, MEMREPO_DIR=memrepo)
    proc = subprocess.run(["sh", RUN, "session_start"], input=json.dumps({"hook_event_name": "SessionStart", "source": "startup"}).encode(),
                          capture_output=True, env=env, timeout=30)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert not os.path.exists(os.path.join(memrepo, "index", ".refresh-spawned"))


def test_the_job_queue_takes_and_runs_a_capture(memrepo: str, tmp_path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMREPO_DIR", memrepo)
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE}")
    monkeypatch.setenv("FAKE_MODEL_RULES", os.path.join(DATA, "refute-rules.json"))
    spawned: list[str] = []
    monkeypatch.setattr(jobs, "spawn_worker", lambda r: spawned.append(r) or 0)
    path = os.path.join(str(tmp_path), f"{SESSION}.jsonl")
    shutil.copy(os.path.join(DATA, "refute-part1.jsonl"), path)
    event = {"session_id": SESSION, "transcript_path": path, "cwd": "/home/user/shop", "hook_event_name": "SessionEnd"}
    assert jobs.on_session_end(event) == ""
    assert spawned == [memrepo] and os.listdir(jobs.jobs_dir(memrepo)) == [f"capture-{SESSION}.json"]
    assert jobs.work(memrepo) == 1
    assert SESSION in capture.load_state(memrepo)
    assert git(memrepo, "log", "-1", "--format=%s").stdout.startswith("capture: 2 memories from session 7c0ffee0")


def test_bootstrap_finds_the_recorded_python_and_does_not_init_again(memrepo: str, capsys: pytest.CaptureFixture[str]) -> None:
    common = git(memrepo, "rev-parse", "--path-format=absolute", "--git-common-dir").stdout.strip()
    with open(os.path.join(common, hookwire.PYTHON_RECORD), "w") as fh:
        fh.write(sys.executable + "\n")
    assert bootstrap._recorded(memrepo) == sys.executable
    os.remove(paths.index_db(memrepo))
    assert bootstrap.main([memrepo, "index missing"]) == 0
    states = [json.loads(line)["state"] for line in capsys.readouterr().out.splitlines()]
    assert states == ["started", "indexing", "done"]
    assert freshness.needs_refresh(memrepo) is None


def test_doctor_accepts_the_repository(memrepo: str) -> None:
    assert doctor.run(memrepo)[0].ok
