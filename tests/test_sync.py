"""`memrepo sync` between two clones of a bare remote, all real git in tmp_path."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from typing import Any

import pytest
from click.testing import CliRunner

from helpers import commit_all, git, head, memory_text, write_file, write_memory
from memrepo.cli.main import cli
from memrepo.errors import GitError
from memrepo.format import notes
from memrepo.base import paths
from memrepo.store import index, repoinit, sync

CLAIMS = [{"probe": "command_exists", "args": {"name": "git"}, "by": "model"}]


def clone(bare: str, path: str) -> str:
    subprocess.run(["git", "clone", "-q", bare, path], check=True, capture_output=True)
    repoinit.init(path)
    return path


@pytest.fixture
def machines(tmp_path: Any) -> tuple[str, str, str]:
    """(bare remote, clone a, clone b), both clones holding the memory `shared`."""
    bare = str(tmp_path / "remote.git")
    git(str(tmp_path), "init", "-q", "--bare", "-b", "main", bare)
    a = str(tmp_path / "a")
    repoinit.init(a)
    git(a, "remote", "add", "origin", bare)
    write_memory(a, "shared", title="The staging database is called stage-db", topics=["staging"],
                 description="Staging runs on stage-db in eu-west-1.", claims=CLAIMS)
    assert commit_all(a, "shared").returncode == 0
    sync.sync(a)
    git(a, "branch", "--set-upstream-to", "origin/main")
    b = clone(bare, str(tmp_path / "b"))
    return bare, a, b


def edit(repo: str, note_id: str, **changes: Any) -> None:
    path = paths.note_path(repo, note_id)
    note = notes.read(path)
    body = changes.pop("body", None)
    note.meta.update(changes)
    if body is not None:
        note.body = body
    write_file(repo, f"memory/{note_id}.md", notes.serialize(note))
    assert commit_all(repo, f"edit {note_id}").returncode == 0


def indexed(repo: str) -> list[tuple[str, str]]:
    with sqlite3.connect(paths.index_db(repo)) as db:
        return sorted(db.execute("SELECT id, hash FROM memories").fetchall())


def assert_settled(repo: str) -> None:
    """Clean tree, nothing staged, and the index equal to a rebuild."""
    assert git(repo, "status", "--porcelain").stdout == ""
    kept = indexed(repo)
    index.rebuild(repo)
    assert indexed(repo) == kept


@pytest.mark.parametrize("first", ["a", "b"])
def test_both_add_edit_different_keys_verify_and_sync_in_both_orders(machines: tuple[str, str, str], first: str) -> None:
    from memrepo.passes.verify import verifier

    _, a, b = machines
    write_memory(a, "from-a", title="Machine a uses the corp VPN profile")
    assert commit_all(a, "a adds").returncode == 0
    write_memory(b, "from-b", title="Machine b builds with podman")
    assert commit_all(b, "b adds").returncode == 0
    edit(a, "shared", topics=["staging", "databases"])  # a: one key
    edit(b, "shared", aliases=["which db is staging"])  # b: another
    assert verifier.run(b, ["shared"], use_model=False, today="2026-12-01").commit  # b: the verification stamp
    order = [a, b, a] if first == "a" else [b, a, b]
    reports = [sync.sync(r) for r in order]
    assert reports[0].pushed and not reports[0].pulled
    assert reports[1].pulled and reports[1].merged and reports[1].pushed
    assert reports[2].pulled and not reports[2].merged and not reports[2].pushed  # a fast-forward
    assert head(a) == head(b)
    merged = notes.read(paths.note_path(a, "shared")).meta
    assert merged["topics"] == ["staging", "databases"] and merged["aliases"] == ["which db is staging"]
    assert merged["verification"]["checked"] == "2026-12-01"
    for repo in (a, b):
        assert os.path.exists(paths.note_path(repo, "from-a")) and os.path.exists(paths.note_path(repo, "from-b"))
        assert_settled(repo)
    parents = git(a, "log", "--merges", "--format=%s").stdout.splitlines()
    assert parents == ["sync: merge origin/main"]  # merged as designed: one merge commit, nothing rewritten
    assert [r.changed for r in (sync.sync(a), sync.sync(b))] == [False, False]  # idempotent


def test_a_body_conflict_stops_with_a_rescue_ref_and_the_commands(machines: tuple[str, str, str]) -> None:
    _, a, b = machines
    edit(a, "shared", body="Staging moved to stage-db-2 on Monday.\n")
    edit(b, "shared", body="Staging is being retired; use the preview envs.\n")
    sync.sync(a)
    before = head(b)
    result = CliRunner().invoke(cli, ["--repo", b, "sync"])
    assert result.exit_code == 1
    message = result.output
    assert "memory/shared.md changed on both sides" in message
    assert "Nothing here changed; your side is also saved as refs/memrepo/rescue/" in message
    assert f"git -C {b} merge refs/remotes/origin/main" in message and "memrepo sync" in message
    assert head(b) == before and git(b, "status", "--porcelain").stdout == ""
    rescue = git(b, "for-each-ref", "--format=%(objectname)", "refs/memrepo/rescue/").stdout.split()
    assert rescue == [before]
    again = CliRunner().invoke(cli, ["--repo", b, "sync"])  # cron, half an hour later: the same stop, no new ref
    assert again.exit_code == 1 and git(b, "for-each-ref", "refs/memrepo/rescue/").stdout.count("\n") == 1
    with open(paths.note_path(b, "shared"), encoding="utf-8") as fh:
        assert "preview envs" in fh.read()


def test_a_merged_supersession_cycle_is_refused(machines: tuple[str, str, str]) -> None:
    _, a, b = machines
    write_memory(a, "other", title="Staging has a second database")
    assert commit_all(a, "other").returncode == 0
    sync.sync(a)
    sync.sync(b)
    edit(a, "shared", status="superseded", superseded_by="other")  # valid on a
    edit(b, "other", status="superseded", superseded_by="shared")  # valid on b
    sync.sync(a)
    before = head(b)
    with pytest.raises(sync.SyncStopped) as stopped:
        sync.sync(b)
    assert "would not pass validation" in str(stopped.value) and "cycle" in str(stopped.value)
    assert head(b) == before and git(b, "status", "--porcelain").stdout == ""


def test_same_title_added_on_two_machines_keeps_both(machines: tuple[str, str, str]) -> None:
    _, a, b = machines
    for repo, says in ((a, "Tokens last one hour."), (b, "Tokens are refreshed at login.")):
        assert CliRunner().invoke(cli, ["--repo", repo, "add", "--class", "fact", "--title", "Auth tokens",
                                        "-d", says]).exit_code == 0
    assert os.path.exists(paths.note_path(a, "auth-tokens")) and os.path.exists(paths.note_path(b, "auth-tokens"))
    sync.sync(a)
    report = sync.sync(b)
    (old, new), = report.renamed
    assert old == "auth-tokens" and new.startswith("auth-tokens-")
    sync.sync(a)
    for repo in (a, b):
        says = {notes.read(paths.note_path(repo, i)).get("description") for i in (old, new)}
        assert says == {"Tokens last one hour.", "Tokens are refreshed at login."}
        assert_settled(repo)
    # Once the remote's id is known here, a third add of that title never reuses it.
    result = CliRunner().invoke(cli, ["--repo", a, "add", "--class", "fact", "--title", "Auth tokens", "-d", "Third."])
    assert result.exit_code == 0 and result.output.split()[1] not in (old, new)


def test_a_force_pushed_server_branch_is_not_taken(machines: tuple[str, str, str]) -> None:
    bare, a, b = machines
    sync.sync(b)
    write_memory(a, "later", title="A later memory")
    assert commit_all(a, "later").returncode == 0
    sync.sync(a)
    sync.sync(b)
    git(a, "push", "-q", "--force", "origin", "HEAD~1:refs/heads/main")  # the server loses a commit
    write_memory(b, "mine", title="Only on b so far")
    assert commit_all(b, "mine").returncode == 0
    before = head(b)
    with pytest.raises(GitError) as stopped:
        sync.sync(b)
    assert "force-pushed" in str(stopped.value)
    assert head(b) == before and os.path.exists(paths.note_path(b, "later"))
    assert git(b, "rev-parse", "refs/remotes/origin/main").stdout.strip() != git(bare, "rev-parse", "main").stdout.strip()


def test_a_remote_that_deletes_memories_is_refused(machines: tuple[str, str, str]) -> None:
    _, a, b = machines
    git(a, "rm", "-q", "memory/shared.md")
    assert git(a, "commit", "-q", "-m", "wipe", check=False).returncode == 0
    git(a, "push", "-q", "origin", "HEAD:main")
    before = head(b)
    with pytest.raises(sync.SyncStopped) as stopped:
        sync.sync(b)
    assert "the remote deletes 1 memory (memory/shared.md)" in str(stopped.value)
    assert head(b) == before and os.path.exists(paths.note_path(b, "shared"))


@pytest.mark.parametrize("b_moved", [False, True])
def test_an_add_undone_and_pushed_elsewhere_is_taken_back_here_too(machines: tuple[str, str, str], b_moved: bool) -> None:
    """`memrepo undo` of an add deletes the file it added, on purpose: another machine's sync took
    that for a wipe and stopped, every time, until merged by hand (h32's walk)."""
    _, a, b = machines
    runner = CliRunner()
    added = runner.invoke(cli, ["--repo", a, "add", "--class", "fact", "--title", "Staging runs on Caddy",
                                "-d", "The staging proxy is Caddy", "--json"], catch_exceptions=False)
    run = json.loads(added.output)["run"]
    sync.sync(a)
    sync.sync(b)
    assert os.path.exists(paths.note_path(b, "staging-runs-caddy"))
    assert runner.invoke(cli, ["--repo", a, "undo", run], catch_exceptions=False).exit_code == 0
    sync.sync(a)
    if b_moved:  # b has commits of its own: a merge, not a fast-forward
        write_memory(b, "from-b", title="Machine b builds with podman")
        assert commit_all(b, "b adds").returncode == 0
    report = sync.sync(b)
    assert report.pulled == 1 and report.merged == b_moved
    assert not os.path.exists(paths.note_path(b, "staging-runs-caddy"))
    assert_settled(b)


def test_a_wipe_beside_an_undo_is_still_refused(machines: tuple[str, str, str]) -> None:
    _, a, b = machines
    runner = CliRunner()
    added = runner.invoke(cli, ["--repo", a, "add", "--class", "fact", "--title", "Staging runs on Caddy",
                                "-d", "The staging proxy is Caddy", "--json"], catch_exceptions=False)
    sync.sync(a)
    sync.sync(b)
    assert runner.invoke(cli, ["--repo", a, "undo", json.loads(added.output)["run"]], catch_exceptions=False).exit_code == 0
    git(a, "rm", "-q", "memory/shared.md")
    assert git(a, "commit", "-q", "-m", "wipe", check=False).returncode == 0
    sync.sync(a)
    before = head(b)
    with pytest.raises(sync.SyncStopped) as stopped:
        sync.sync(b)
    assert "the remote deletes 1 memory (memory/shared.md)" in str(stopped.value)
    assert head(b) == before


def test_cli_is_quiet_when_there_is_nothing_to_do(machines: tuple[str, str, str]) -> None:
    _, a, _ = machines
    argv = [sys.executable, "-m", "memrepo", "--repo", a, "sync"]
    first = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert (first.returncode, first.stdout, first.stderr) == (0, "", "")
    write_memory(a, "new-one", title="A new one")
    assert commit_all(a, "new").returncode == 0
    second = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert (second.returncode, second.stdout) == (0, "sync with origin/main: pushed 1 commit\n")


def test_no_remote_names_the_fix(repo: str) -> None:
    result = CliRunner().invoke(cli, ["--repo", repo, "sync"])
    assert result.exit_code == 1
    assert "has no remote 'origin'" in result.output and "git -C" in result.output and "remote add origin" in result.output


def test_uncommitted_memory_files_stop_sync(machines: tuple[str, str, str]) -> None:
    _, a, _ = machines
    write_file(a, "memory/shared.md", memory_text("shared", title="Half-edited"))
    with pytest.raises(sync.SyncStopped, match="uncommitted changes"):
        sync.sync(a)


def test_the_sweep_syncs_only_when_this_machine_opts_in(machines: tuple[str, str, str]) -> None:
    import json

    from memrepo.worker import sweep

    bare, a, b = machines
    write_memory(a, "from-a", title="Machine a uses the corp VPN profile")
    assert commit_all(a, "a adds").returncode == 0
    write_file(a, "memrepo.json", json.dumps({"sync": {"auto": True}}))  # shared settings cannot switch it on
    assert commit_all(a, "shared settings").returncode == 0
    before = git(bare, "rev-parse", "main").stdout
    assert "sync" not in sweep.run(a, use_model=False)
    assert git(bare, "rev-parse", "main").stdout == before
    write_file(a, "index/local.json", json.dumps({"sync": {"auto": True}}))
    report = sweep.run(a, use_model=False)
    assert report["sync"]["pushed"] >= 2 and not report["errors"]  # the two commits, and the sweep's own
    assert git(bare, "rev-parse", "main").stdout.strip() == head(a)


def test_a_sync_conflict_in_the_sweep_is_an_error_line_not_a_failed_run(machines: tuple[str, str, str]) -> None:
    import json

    from memrepo.worker import sweep

    _, a, b = machines
    edit(a, "shared", body="Staging moved to stage-db-2 on Monday.\n")
    edit(b, "shared", body="Staging is being retired; use the preview envs.\n")
    sync.sync(a)
    write_file(b, "index/local.json", json.dumps({"sync": {"auto": True}}))
    report = sweep.run(b, use_model=False)
    assert "sync" not in report
    assert [e for e in report["errors"] if e.startswith("sync: sync with origin/main stopped")]
    assert git(b, "log", "--merges", "--format=%s").stdout == "" and git(b, "status", "--porcelain").stdout == ""
    assert "preview envs" in notes.read(paths.note_path(b, "shared")).body


def test_a_remote_that_moves_while_sync_pushes_gets_another_round(machines: tuple[str, str, str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from memrepo.vcs import remote

    _, a, b = machines
    sync.sync(b)
    write_memory(a, "from-a", title="Machine a uses the corp VPN profile")
    assert commit_all(a, "a adds").returncode == 0
    real_push, calls = remote.push, []

    def b_pushes_first(repo: str, t: remote.Target) -> bool:
        calls.append(repo)
        if len(calls) == 1:  # another machine pushes between a's fetch and a's push
            write_memory(b, "from-b", title="Machine b builds with podman")
            assert commit_all(b, "b adds").returncode == 0
            git(b, "push", "-q", "origin", "HEAD:main")
        return real_push(repo, t)

    monkeypatch.setattr(remote, "push", b_pushes_first)
    report = sync.sync(a)
    assert len(calls) == 2 and report.merged and report.pushed
    assert git(a, "rev-parse", "HEAD").stdout == git(a, "rev-parse", "refs/remotes/origin/main").stdout
    assert os.path.exists(paths.note_path(a, "from-b"))
    assert_settled(a)
