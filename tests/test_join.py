"""Joining memory that lives on a remote (issue 37, part 1): a second machine and a teammate.

A bare remote whose HEAD names a branch nobody pushed, three clones, both spellings of the
branch; real git in tmp_path, the CLI as a subprocess where the HOME has no git identity.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
from click.testing import CliRunner

from helpers import commit_all, git, write_memory
from memrepo.cli.main import cli
from memrepo.errors import MemrepoError
from memrepo.store import doctor, join, repoinit, sync


def bare_remote(tmp_path: Any, head: str) -> str:
    """An empty bare repository whose HEAD names `head` (the branch a plain `git clone` starts on)."""
    bare = str(tmp_path / "team.git")
    git(str(tmp_path), "init", "-q", "--bare", "-b", head, bare)
    return bare


def first_machine(tmp_path: Any, bare: str, branch: str) -> str:
    """Machine A: a memory repository on `branch` with one memory, pushed by `memrepo sync`."""
    a = str(tmp_path / "a")
    git(str(tmp_path), "init", "-q", "-b", branch, a)
    repoinit.init(a)
    git(a, "remote", "add", "origin", bare)
    write_memory(a, "staging-db", title="The staging database is called stage-db", topics=["staging"],
                 description="Staging runs on stage-db in eu-west-1.")
    assert commit_all(a, "staging-db").returncode == 0
    sync.sync(a)
    return a


def branches(bare: str) -> list[str]:
    out = git(bare, "for-each-ref", "--format=%(refname:short)", "refs/heads/").stdout
    return sorted(out.split())


def memories(repo: str) -> list[str]:
    return sorted(os.path.splitext(n)[0] for n in os.listdir(os.path.join(repo, "memory")) if n.endswith(".md"))


def memrepo(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memrepo", *args], capture_output=True, text=True, env=env, timeout=120)


def no_identity_env(home: str) -> dict[str, str]:
    """A fresh machine: a HOME with no .gitconfig, and no GIT_AUTHOR_*/GIT_COMMITTER_* set."""
    os.makedirs(home, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "MEMREPO_DIR"}
    env.update(HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"), GIT_CONFIG_NOSYSTEM="1",
               EMAIL="", MEMREPO_DIR=os.path.join(home, ".memrepo"))
    return env


# (remote HEAD, branch the team's memory is on): both spellings, each way round.
SPELLINGS = [("master", "main"), ("main", "master")]


@pytest.mark.parametrize("remote_head,team_branch", SPELLINGS)
def test_plain_clone_then_init_adopts_the_team_branch_and_sync_pushes_no_second_branch(
        tmp_path: Any, remote_head: str, team_branch: str) -> None:
    bare = bare_remote(tmp_path, remote_head)
    first_machine(tmp_path, bare, team_branch)
    b = str(tmp_path / "b")
    git(str(tmp_path), "clone", "-q", bare, b)  # on an unborn `remote_head`, beside origin/team_branch
    report = repoinit.init(b)
    assert report["adopted"] is not None and report["adopted"].branch == team_branch
    assert report["adopted"].memories == 1
    assert join.current_branch(b) == team_branch
    assert memories(b) == ["staging-db"]
    assert git(b, "rev-parse", "--abbrev-ref", "@{upstream}").stdout.strip() == f"origin/{team_branch}"
    sync.sync(b)
    assert branches(bare) == [team_branch]
    assert all(c.ok for c in doctor.run(b) if c.name == "branch")


@pytest.mark.parametrize("remote_head,team_branch", SPELLINGS)
def test_three_machines_join_with_init_from_and_converge(tmp_path: Any, remote_head: str, team_branch: str) -> None:
    bare = bare_remote(tmp_path, remote_head)
    a = first_machine(tmp_path, bare, team_branch)
    b, c = str(tmp_path / "b"), str(tmp_path / "c")
    for clone in (b, c):
        result = CliRunner().invoke(cli, ["init", "--from", bare, clone], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert f"branch: {team_branch}, tracking origin/{team_branch}" in result.output, result.output
        assert "1 memory" in result.output
    write_memory(b, "from-b", title="Machine b builds images with podman")
    assert commit_all(b, "b adds").returncode == 0
    write_memory(c, "from-c", title="Machine c reaches the VPN through corp-gw")
    assert commit_all(c, "c adds").returncode == 0
    for repo in (b, c, a, b):
        sync.sync(repo)
    assert memories(a) == memories(b) == memories(c) == ["from-b", "from-c", "staging-db"]
    assert branches(bare) == [team_branch]


def test_init_from_on_a_machine_without_git_identity(tmp_path: Any) -> None:
    bare = bare_remote(tmp_path, "master")
    first_machine(tmp_path, bare, "main")
    env = no_identity_env(str(tmp_path / "fresh-home"))
    target = os.path.join(env["HOME"], ".memrepo")
    proc = memrepo("init", "--from", bare, target, env=env)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "Joined" in proc.stdout and "main" in proc.stdout
    assert memories(target) == ["staging-db"]
    proc = memrepo("--repo", target, "sync", env=env)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert branches(bare) == ["main"]


def test_sync_refuses_to_push_a_second_memory_beside_the_team_branch(tmp_path: Any) -> None:
    """The state an old `memrepo init` left: a layout committed on an unborn master."""
    bare = bare_remote(tmp_path, "master")
    first_machine(tmp_path, bare, "main")
    b = str(tmp_path / "b")
    git(str(tmp_path), "clone", "-q", bare, b)
    git(b, "commit", "-q", "--allow-empty", "-m", "a commit of its own")  # born master, no memory
    os.makedirs(os.path.join(b, "memory"))
    with pytest.raises(sync.SyncStopped) as stopped:
        sync.sync(b)
    assert "Nothing was pushed" in str(stopped.value) and "memrepo init" in (stopped.value.hint or "")
    assert branches(bare) == ["main"]
    failing = [c for c in doctor.run(b) if c.name == "branch"]
    assert failing and not failing[0].ok and "memrepo init" in failing[0].fix
    # init adopts it now, keeping the commit it moved away from.
    report = repoinit.init(b)
    assert report["adopted"].branch == "main" and report["adopted"].left == "master"
    assert memories(b) == ["staging-db"]
    sync.sync(b)
    assert branches(bare) == ["main"]


def test_a_clone_with_memories_of_its_own_is_not_switched_and_sync_names_the_merge(tmp_path: Any) -> None:
    bare = bare_remote(tmp_path, "master")
    first_machine(tmp_path, bare, "main")
    b = str(tmp_path / "b")
    git(str(tmp_path), "init", "-q", "-b", "master", b)
    repoinit.init(b)
    write_memory(b, "mine", title="Machine b keeps its own memory")
    assert commit_all(b, "mine").returncode == 0
    git(b, "remote", "add", "origin", bare)
    git(b, "fetch", "-q", "origin")
    assert repoinit.init(b)["adopted"] is None
    assert join.current_branch(b) == "master" and memories(b) == ["mine"]
    with pytest.raises(sync.SyncStopped) as stopped:
        sync.sync(b)
    assert "--allow-unrelated-histories" in (stopped.value.hint or "")
    assert branches(bare) == ["main"]
    check = [c for c in doctor.run(b) if c.name == "branch"][0]
    assert not check.ok and "--allow-unrelated-histories" in check.fix


def test_a_layout_only_branch_on_the_remote_does_not_win_over_the_populated_one(tmp_path: Any) -> None:
    """The team's remote after an old fork: `master` (HEAD) holds a layout alone, `main` the memory."""
    bare = bare_remote(tmp_path, "master")
    first_machine(tmp_path, bare, "main")
    fork = str(tmp_path / "fork")
    git(str(tmp_path), "init", "-q", "-b", "master", fork)
    repoinit.init(fork)
    git(fork, "push", "-q", bare, "master")
    b = str(tmp_path / "b")
    git(str(tmp_path), "clone", "-q", bare, b)  # checks out the layout-only master
    assert join.choose(b, "origin") == "main"
    report = repoinit.init(b)
    assert report["adopted"].branch == "main"
    assert memories(b) == ["staging-db"]


def test_branch_flag_names_a_branch_without_memory(tmp_path: Any) -> None:
    bare = bare_remote(tmp_path, "master")
    first_machine(tmp_path, bare, "main")
    result = CliRunner().invoke(cli, ["init", "--from", bare, "--branch", "trunk", str(tmp_path / "b")])
    assert result.exit_code != 0
    assert "no memory on a branch 'trunk'" in result.output and "main" in result.output


def test_several_populated_branches_and_no_head_among_them_asks_which(tmp_path: Any) -> None:
    bare = bare_remote(tmp_path, "trunk")
    first_machine(tmp_path, bare, "team-a")
    other = str(tmp_path / "other")
    git(str(tmp_path), "init", "-q", "-b", "team-b", other)
    repoinit.init(other)
    write_memory(other, "other-team", title="Team b deploys on Fridays")
    assert commit_all(other, "other").returncode == 0
    git(other, "push", "-q", bare, "team-b")
    b = str(tmp_path / "b")
    git(str(tmp_path), "clone", "-q", bare, b)
    with pytest.raises(MemrepoError) as err:
        join.choose(b, "origin")
    assert "team-a, team-b" in str(err.value) and "--branch" in (err.value.hint or "")
    assert repoinit.init(b, branch="team-b")["adopted"].branch == "team-b"
    assert memories(b) == ["other-team"]


def test_init_from_refuses_a_directory_that_is_not_a_repository(tmp_path: Any) -> None:
    bare = bare_remote(tmp_path, "main")
    first_machine(tmp_path, bare, "main")
    target = tmp_path / "busy"
    target.mkdir()
    (target / "notes.txt").write_text("someone's files\n")
    result = CliRunner().invoke(cli, ["init", "--from", bare, str(target)])
    assert result.exit_code != 0 and "is not a git repository" in result.output
    assert sorted(os.listdir(target)) == ["notes.txt"]


def test_init_from_refuses_a_clone_of_another_remote(tmp_path: Any) -> None:
    bare = bare_remote(tmp_path, "main")
    a = first_machine(tmp_path, bare, "main")
    other = str(tmp_path / "elsewhere.git")
    git(str(tmp_path), "init", "-q", "--bare", other)
    result = CliRunner().invoke(cli, ["init", "--from", other, a])
    assert result.exit_code != 0 and "already syncs with" in result.output and "set-url" in result.output


def test_sync_on_an_unborn_clone_says_to_run_init(tmp_path: Any) -> None:
    bare = bare_remote(tmp_path, "master")
    first_machine(tmp_path, bare, "main")
    b = str(tmp_path / "b")
    git(str(tmp_path), "clone", "-q", bare, b)
    before = doctor.run(b)
    assert not before[0].ok and "holds memory on main (1 memory)" in before[0].detail
    with pytest.raises(MemrepoError) as stopped:
        sync.sync(b)  # no memory/ at all
    assert "memrepo init" in (stopped.value.hint or "")
    os.makedirs(os.path.join(b, "memory"))
    with pytest.raises(sync.SyncStopped) as stopped:
        sync.sync(b)  # memory/ made by hand, nothing committed
    assert "no commit yet" in str(stopped.value) and "memrepo init" in (stopped.value.hint or "")
    assert branches(bare) == ["main"]
