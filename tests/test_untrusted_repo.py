"""Nothing from a memory repository's content runs (issue 15): a teammate's push can change every
tracked file, so git hooks, the model command and verifier provider templates must come from
this clone and this machine alone. Two clones share a bare remote; clone A pushes hostile files,
clone B pulls and uses memrepo, and no marker file ever appears, while memrepo's own hooks run.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from typing import Any

import pytest
from click.testing import CliRunner

from helpers import ROOT, commit_all, git, head, memory_text, write_file, write_memory
from memrepo.cli.main import cli
from memrepo.base import paths
from memrepo.store import config, doctor, repoinit
from memrepo.vcs import hookwire

RUN = os.path.join(ROOT, "hooks", "run")
TRANSCRIPT = os.path.join(ROOT, "tests", "data", "capture", "refute-part1.jsonl")
CLAIM = [{"probe": "secret_present", "args": {"provider": "vault", "name": "db"}}]


def invoke(repo: str, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--repo", repo, *args], catch_exceptions=False)


def indexed(repo: str) -> set[str]:
    with sqlite3.connect(paths.index_db(repo)) as db:
        ids = {row[0] for row in db.execute("SELECT id FROM memories")}
    db.close()
    return ids


@pytest.fixture
def clones(tmp_path: Any) -> dict[str, str]:
    """A bare remote, clone A (made with `memrepo init`, pushed) and clone B (cloned, `memrepo init`)."""
    remote, a, b = (str(tmp_path / n) for n in ("remote.git", "a", "b"))
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", remote], check=True)
    repoinit.init(a)
    git(a, "remote", "add", "origin", remote)
    git(a, "push", "-q", "-u", "origin", "main")
    subprocess.run(["git", "clone", "-q", remote, b], check=True, capture_output=True)
    assert repoinit.init(b)["wiring"] == "shims"
    return {"a": a, "b": b, "marker": str(tmp_path / "pwned")}


def hostile_push(a: str, marker: str, settings: dict[str, Any], *memories: tuple[str, str]) -> None:
    """Push, from A, every way a tracked file could try to run `touch marker` in another clone."""
    touch = f"#!/bin/sh\ntouch {marker}\n"
    for hook in hookwire.HOOKS:
        write_file(a, f".githooks/{hook}", touch)
        os.chmod(os.path.join(a, ".githooks", hook), 0o755)
    write_file(a, ".venv/bin/python", touch)  # the old shims tried "$top/.venv/bin/python"
    os.chmod(os.path.join(a, ".venv", "bin", "python"), 0o755)
    # git runs hooks in the work tree's top, and `python -m/-c` would import this package first.
    write_file(a, "memrepo/__init__.py", f"open({marker!r}, 'w').close()\n")
    write_file(a, "memrepo/store/__init__.py", "")
    write_file(a, "memrepo/store/githooks.py", f"open({marker!r}, 'w').close()\n")
    write_file(a, "memrepo.json", json.dumps(settings))
    for note_id, text in memories:
        write_file(a, f"memory/{note_id}.md", text)
    git(a, "add", "-A", "-f")
    assert git(a, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "hostile").returncode == 0
    git(a, "push", "-q", "origin", "main")
    assert not os.path.exists(marker)  # nothing ran on A's side either


def touch_cmd(marker: str) -> str:
    return f"sh -c 'touch {marker}'"


def provider_settings(marker: str) -> dict[str, Any]:
    return {"providers": {"vault": {"secret_present": ["sh", "-c", f"touch {marker}", "{name}"]}}}


def test_a_pushed_hook_never_runs_on_pull_while_memrepos_hooks_do(clones: dict[str, str]) -> None:
    a, b, marker = clones["a"], clones["b"], clones["marker"]
    hostile_push(a, marker, {}, ("pulled", memory_text("pulled", title="Pulled from the team")))
    result = git(b, "pull", "-q", "--ff-only", "origin", "main", check=False)
    assert result.returncode == 0, result.stderr
    assert not os.path.exists(marker)
    assert "pulled" in indexed(b)  # B's own post-merge shim ran and updated the cache
    write_memory(b, "local-one")
    assert commit_all(b, "local").returncode == 0  # pre-commit and post-commit still run
    assert "local-one" in indexed(b)
    write_file(b, "memory/bad.md", memory_text("bad", class_="wish"))
    assert commit_all(b, "bad").returncode == 1  # pre-commit still fails closed
    git(b, "reset", "-q", "--hard")
    git(b, "checkout", "-q", "-b", "other")  # post-checkout
    git(b, "commit", "-q", "--amend", "-m", "amended")  # post-rewrite
    assert not os.path.exists(marker)


def test_pushed_hooks_never_run_through_a_forwarder_either(clones: dict[str, str]) -> None:
    a, b, marker = clones["a"], clones["b"], clones["marker"]
    other = str(os.path.join(os.path.dirname(b), "other-ran"))
    write_file(b, ".git/hooks/post-merge", f"#!/bin/sh\ntouch {other}\n")  # another tool's hook, installed after init
    os.chmod(os.path.join(b, ".git", "hooks", "post-merge"), 0o755)
    assert repoinit.init(b)["wiring"] == "forwarders"
    hostile_push(a, marker, {}, ("pulled", memory_text("pulled")))
    assert git(b, "pull", "-q", "--ff-only", "origin", "main", check=False).returncode == 0
    assert not os.path.exists(marker)
    assert os.path.exists(other) and "pulled" in indexed(b)


def _stop_hook(repo: str, session: str, transcript: str, env: dict[str, str]) -> None:
    payload = json.dumps({"session_id": session, "transcript_path": transcript, "cwd": "/home/user/shop",
                          "hook_event_name": "Stop", "reason": "other"}).encode()
    # In the clone's top, as when the agent works in it: the worker must not import its committed `memrepo/`.
    proc = subprocess.run(["sh", RUN, "stop"], input=payload, capture_output=True, env=env, cwd=repo, timeout=30)
    assert (proc.returncode, proc.stdout) == (0, b"")


def _worker_finished(repo: str, times: int, timeout: float = 90.0) -> None:
    log = os.path.join(repo, "index", "jobs", "worker.log")
    deadline = time.time() + timeout
    while time.time() < deadline:
        lines = open(log, encoding="utf-8").read().splitlines() if os.path.exists(log) else []
        if sum("worker finished" in line for line in lines) >= times:
            return
        time.sleep(0.2)
    raise AssertionError(f"the capture worker did not finish: {lines}")


def test_a_committed_model_cmd_never_runs_from_the_stop_hook(clones: dict[str, str], tmp_path: Any) -> None:
    a, b, marker = clones["a"], clones["b"], clones["marker"]
    hostile_push(a, marker, {"model_cmd": touch_cmd(marker)})
    assert git(b, "pull", "-q", "--ff-only", "origin", "main", check=False).returncode == 0
    transcript = str(tmp_path / "s1.jsonl")
    with open(TRANSCRIPT, "rb") as src, open(transcript, "wb") as dst:
        dst.write(src.read())
    env = {k: v for k, v in os.environ.items() if k != "MEMREPO_MODEL_CMD"}
    env.update(MEMREPO_DIR=b, MEMREPO_PYTHON=sys.executable, PATH=os.path.dirname(sys.executable) + ":/usr/bin:/bin")
    _stop_hook(b, "s-hostile", transcript, env)
    _worker_finished(b, 1)
    assert not os.path.exists(marker)
    # The same command in this machine's settings does run: the worker did reach the model.
    write_file(b, config.LOCAL, json.dumps({"model_cmd": touch_cmd(marker)}))
    _stop_hook(b, "s-local", transcript, env)
    _worker_finished(b, 2)
    assert os.path.exists(marker)


@pytest.mark.parametrize("command", [["verify", "--no-model"], ["verify"], ["sweep", "--no-model"], ["sweep"]])
def test_committed_commands_never_run_from_verify_or_sweep(clones: dict[str, str], command: list[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    a, b, marker = clones["a"], clones["b"], clones["marker"]
    monkeypatch.delenv("MEMREPO_MODEL_CMD", raising=False)
    settings = {**provider_settings(marker), "model_cmd": touch_cmd(marker)}
    hostile_push(a, marker, settings, ("vault-db", memory_text("vault-db", title="The db password is in vault", claims=CLAIM)))
    assert git(b, "pull", "-q", "--ff-only", "origin", "main", check=False).returncode == 0
    before = head(b)
    invoke(b, *command)
    assert not os.path.exists(marker)
    git(b, "reset", "-q", "--hard", before)
    write_file(b, config.LOCAL, json.dumps(settings))  # the same settings from this machine do run
    invoke(b, *command)
    assert os.path.exists(marker)


def test_a_committed_projects_map_never_points_the_verifier_at_this_machines_home(clones: dict[str, str],
                                                                                 isolated_env: str) -> None:
    """Issue 38: `{"projects": {"shop": "~"}}` pushed beside a memory of `shop` citing `.ssh/id_rsa` made
    `verify --no-model` commit `verified` for a file in the victim's home, pushed back by the next sync."""
    a, b, marker = clones["a"], clones["b"], clones["marker"]
    write_file(isolated_env, ".ssh/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\n")
    key = memory_text("shop-key", title="The shop deploy key", project="shop", body="The deploy key is `.ssh/id_rsa`.\n")
    hostile_push(a, marker, {"projects": {"shop": "~"}}, ("shop-key", key))
    assert git(b, "pull", "-q", "--ff-only", "origin", "main", check=False).returncode == 0
    before = head(b)
    assert invoke(b, "verify", "--no-model").exit_code == 0
    history = git(b, "log", "-p", f"{before}..HEAD").stdout
    assert "status: verified" not in history and "verified" not in open(os.path.join(b, "memory", "shop-key.md")).read()
    git(b, "reset", "-q", "--hard", before)
    write_file(b, config.LOCAL, json.dumps({"projects": {"shop": "~"}}))  # this machine's own setting does apply
    assert invoke(b, "verify", "--no-model").exit_code == 0
    assert "status: verified" in open(os.path.join(b, "memory", "shop-key.md")).read()


def test_doctor_warns_about_machine_settings_in_committed_settings(clones: dict[str, str]) -> None:
    b, marker = clones["b"], clones["marker"]
    write_file(b, "memrepo.json", json.dumps({**provider_settings(marker), "model_cmd": "x", "profile_bound": 9,
                                             "projects": {"shop": "~"}}))
    result = invoke(b, "doctor")
    assert result.exit_code == 0  # a warning: nothing is broken, the settings are ignored
    lines = result.stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("warn settings"))  # after the checks before it
    fix = "     fix: move `{0}` to index/local.json (untracked; write this machine's own value there), then remove it " \
          "from memrepo.json and commit"
    assert lines[first:first + 6] == [
        "warn settings: `model_cmd` in the committed memrepo.json is ignored: it names a command this machine runs, so it is "
        "read from this machine's index/local.json only", fix.format("model_cmd"),
        "warn settings: `projects` in the committed memrepo.json is ignored: it names folders on this machine (each "
        "project's root), which the verifier and curator read, so it is read from this machine's index/local.json only",
        fix.format("projects"),
        "warn settings: `providers` in the committed memrepo.json is ignored: it names a command this machine runs, so it "
        "is read from this machine's index/local.json only", fix.format("providers")]
    assert [c.warn for c in doctor.run(b) if c.name == "settings"] == [True, True, True]


V1_FORWARDER = """#!/bin/sh
# memrepo-hook-forwarder v1
here=$(dirname "$0")
top=$(git rev-parse --show-toplevel)
[ -x "$top/.githooks/{hook}" ] || exit 0
exec "$top/.githooks/{hook}" "$@"
"""


@pytest.mark.parametrize("old", ["hooksPath", "v1 forwarders"])
def test_an_old_install_fails_doctor_and_init_migrates_it(clones: dict[str, str], old: str) -> None:
    b = clones["b"]
    hooks = hookwire.hooks_dir(b)
    for hook in hookwire.HOOKS:
        if old == "hooksPath":
            os.remove(os.path.join(hooks, hook))
        else:
            write_file(hooks, hook, V1_FORWARDER.format(hook=hook))
    if old == "hooksPath":
        git(b, "config", "core.hooksPath", ".githooks")
    result = invoke(b, "doctor")
    assert result.exit_code == 1
    says = ("FAIL git hooks: core.hooksPath=.githooks: git runs the tracked .githooks/, which a pushed commit can change "
            "(old install)" if old == "hooksPath" else
            "FAIL git hooks: hooks differ from this memrepo's (an older install, or edited): " + ", ".join(hookwire.HOOKS))
    lines = result.stdout.splitlines()
    assert says in lines
    assert lines[lines.index(says) + 1] == f"     fix: memrepo init {b}"
    assert repoinit.init(b)["wiring"] == ("migrated" if old == "hooksPath" else "shims")
    assert git(b, "config", "--get", "core.hooksPath", check=False).stdout == ""
    assert invoke(b, "doctor").exit_code == 0
    for hook in hookwire.HOOKS:
        with open(os.path.join(hooks, hook), encoding="utf-8") as fh:
            assert fh.read() == hookwire.shim_text(hook)
    write_memory(b, "after-migration")
    assert commit_all(b, "works").returncode == 0 and "after-migration" in indexed(b)
    write_file(b, "memory/bad.md", memory_text("bad", class_="wish"))
    assert commit_all(b, "bad").returncode == 1


@pytest.mark.parametrize("hook", hookwire.HOOKS)
def test_installed_hooks_name_nothing_in_the_work_tree(hook: str) -> None:
    for text in (hookwire.shim_text(hook), hookwire.forwarder_text(hook)):
        assert "$top/.githooks" not in text and ".venv" not in text and "hooksPath" not in text
        assert [line for line in text.splitlines() if "$top" in line and "top=" not in line] == (
            [] if hook in hookwire.BLOCKING else ['[ -d "$top/index" ] && : > "$top/index/STALE"'])


def test_the_bootstrap_worker_imports_nothing_from_the_working_directory(tmp_path: Any,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from memrepo import proc
    from memrepo.worker import bootstrap

    marker = str(tmp_path / "pwned")
    write_file(str(tmp_path), "work/memrepo/__init__.py", f"open({marker!r}, 'w').close()\n")
    write_file(str(tmp_path), "work/venv.py", f"open({marker!r}, 'w').close()\n")
    monkeypatch.chdir(tmp_path / "work")  # the worker runs where the session's hook started it
    assert bootstrap._has_deps(sys.executable)
    assert proc.run(bootstrap._memrepo(sys.executable, "--version"), timeout=60).ok
    assert not os.path.exists(marker)
