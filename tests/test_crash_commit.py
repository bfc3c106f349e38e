"""`kill -9` at each step of `commit_files`: after the next writer, the old state or the new one, never between.

A child process runs `commit_files` with one step patched to SIGKILL the process (no handler
runs, no restore). Then a real `memrepo add` takes the lock, and the repository must be either
exactly as before the killed commit or exactly as that commit left it: nothing staged, no
file changed without a commit, and the add itself lands.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from helpers import commit_all, git, head, memory_text, write_memory

CHILD = textwrap.dedent("""
    import os, signal, subprocess, sys, time
    from memrepo.vcs import commit, gitcmd

    repo, step, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    def die(*_a, **_k):
        os.kill(os.getpid(), signal.SIGKILL)

    put, stage, run_git = commit._put, commit._stage, gitcmd.run_git
    calls = []
    def second_put(*a):
        calls.append(a)
        if len(calls) == 2:
            die()
        put(*a)
    def stage_then_die(*a):
        stage(*a)
        die()
    def commit_then_die(*args, cwd, input=None, **kw):
        if args[0] != "commit":
            return run_git(*args, cwd=cwd, input=input, **kw)
        git = subprocess.Popen(["git", *args], cwd=cwd, stdin=subprocess.PIPE, start_new_session=True)
        git.stdin.write(input)
        git.stdin.close()
        lock = os.path.join(cwd, ".git", "index.lock")
        while git.poll() is None and not os.path.exists(lock):
            time.sleep(0.001)
        die()  # git goes on without us, holding the index
    patch = {"before write": ("_put", die), "mid write": ("_put", second_put), "after write": ("_stage", die),
             "after stage": ("_stage", stage_then_die)}
    if step.startswith("during commit"):
        gitcmd.run_git = commit_then_die
    else:
        setattr(commit, *patch[step])
    texts = {}
    for rel in files:
        with open(rel + ".new", encoding="utf-8") as fh:
            texts[os.path.relpath(rel, repo)] = fh.read()
    commit.commit_files(repo, texts, "test: the commit that gets killed", {"Memrepo-Action": "test"})
    print("not killed")
""")

STEPS = ["before write", "mid write", "after write", "after stage", "during commit", "during commit (refused)"]


def snapshot(repo: str) -> dict[str, bytes]:
    out = {}
    for name in sorted(os.listdir(os.path.join(repo, "memory"))):
        with open(os.path.join(repo, "memory", name), "rb") as fh:
            out[name] = fh.read()
    return out


@pytest.fixture
def store(repo: str) -> str:
    write_memory(repo, "deploy-window", title="Deploys happen on Tuesdays")
    write_memory(repo, "backup-days", title="Backups are kept 30 days")
    assert commit_all(repo, "two memories").returncode == 0
    return repo


def run_killed(repo: str, step: str, new: dict[str, str]) -> subprocess.CompletedProcess[str]:
    paths = []
    for rel, text in new.items():
        path = os.path.join(repo, rel)
        with open(path + ".new", "w", encoding="utf-8") as fh:  # the text the child commits (outside memory/*.md)
            fh.write(text)
        paths.append(path)
    return subprocess.run([sys.executable, "-c", CHILD, repo, step, *paths], capture_output=True, text=True, timeout=120)


def next_writer(repo: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memrepo", "--repo", repo, "add", "--class", "fact",
                           "--title", "Written after the crash", "-d", "The next writer's own memory."],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("step", STEPS)
def test_kill_9_at_each_step_leaves_old_or_new_state(store: str, step: str) -> None:
    new = {"memory/deploy-window.md": memory_text("deploy-window", title="Deploys happen on Wednesdays now"),
           "memory/release-train.md": memory_text("release-train", title="The release train leaves at noon")}
    if step.endswith("(refused)"):
        new["memory/release-train.md"] = "---\nid: release-train\n---\nno title, no class: pre-commit refuses this\n"
    old_head, old_files = head(store), snapshot(store)
    for rel in new:
        os.makedirs(os.path.dirname(os.path.join(store, rel)), exist_ok=True)
    killed = run_killed(store, step, new)
    for rel in new:
        os.remove(os.path.join(store, rel) + ".new")
    assert killed.returncode == -9, (killed.stdout, killed.stderr)

    after = next_writer(store)
    assert after.returncode == 0, after.stderr
    assert git(store, "status", "--porcelain").stdout == ""  # nothing staged, no file changed without a commit
    subjects = git(store, "log", "--format=%s", f"{old_head}..HEAD").stdout.splitlines()
    assert subjects[0] == "add: written-after-crash"
    files = snapshot(store)
    files.pop("written-after-crash.md")
    if subjects[1:] == ["test: the commit that gets killed"]:  # the new state, whole
        expected = dict(old_files, **{os.path.basename(r): t.encode() for r, t in new.items()})
        assert step == "during commit"
    else:  # the old state, whole
        assert subjects[1:] == []
        expected = old_files
        assert "rolled back" in after.stderr or step == "before write"
    assert files == expected
    assert not [n for n in os.listdir(os.path.join(store, "memory")) if ".tmp-memrepo-" in n]
    assert not os.path.exists(os.path.join(store, ".git", "memrepo-commit-journal.json"))


def test_recovery_leaves_a_file_someone_changed_since_the_crash(store: str) -> None:
    new = {"memory/deploy-window.md": memory_text("deploy-window", title="Deploys happen on Wednesdays now")}
    killed = run_killed(store, "after write", new)
    os.remove(os.path.join(store, "memory/deploy-window.md.new"))
    assert killed.returncode == -9
    mine = memory_text("deploy-window", title="Deploys happen on Thursdays, says a person")
    with open(os.path.join(store, "memory", "deploy-window.md"), "w", encoding="utf-8") as fh:
        fh.write(mine)
    assert next_writer(store).returncode == 0
    with open(os.path.join(store, "memory", "deploy-window.md"), encoding="utf-8") as fh:
        assert fh.read() == mine  # the person's edit, not the dead writer's and not the old text


def test_doctor_reports_an_interrupted_commit_and_recover_undoes_it(store: str) -> None:
    from click.testing import CliRunner

    from memrepo.cli.main import cli

    old = snapshot(store)
    new = {"memory/deploy-window.md": memory_text("deploy-window", title="Deploys happen on Wednesdays now")}
    killed = run_killed(store, "after stage", new)
    os.remove(os.path.join(store, "memory/deploy-window.md.new"))
    assert killed.returncode == -9
    doctor = CliRunner().invoke(cli, ["--repo", store, "doctor"])
    assert doctor.exit_code == 1
    lines = doctor.output.splitlines()
    at = lines.index("FAIL interrupted commit: a memrepo commit was killed mid-way: memory/deploy-window.md")
    assert lines[at + 1] == f"     fix: memrepo --repo {store} recover"
    result = CliRunner().invoke(cli, ["--repo", store, "recover"])
    assert (result.exit_code, result.stdout) == (0, "rolled back 1 file(s): memory/deploy-window.md\n")
    assert snapshot(store) == old and git(store, "status", "--porcelain").stdout == ""
    assert "interrupted commit" not in CliRunner().invoke(cli, ["--repo", store, "doctor"]).output
    assert CliRunner().invoke(cli, ["--repo", store, "recover"]).output == "nothing to recover\n"
