"""The group commit (issue 44): writers that find the lock held leave their change to its holder.

Real processes against a real repository. The test holds the repository lock itself while the
writers start, waits until each has queued its change (`memrepo-group/` in the git dir), then
lets go: the first in the lock's queue commits every waiting change as a chain. No timing is
asserted; only what landed, in which commits, and what each process said.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from typing import Any

import pytest

from helpers import commit_all, git, head, memory_text, write_memory
from memrepo.base import paths
from memrepo.vcs import group, journal, lock

DEADLINE = 120.0


def add_argv(repo: str, i: int) -> list[str]:
    return [sys.executable, "-m", "memrepo", "--repo", repo, "add", "--class", "fact", "--json",
            "--title", f"Grouped note number {i}", "-d", f"Added by writer {i} while the lock was held."]


def start(argv: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def queued(repo: str, n: int, suffix: str = group.QUEUED) -> None:
    """Wait until `n` changes wait in the queue (each writer queues it on its first wait)."""
    where = group.folder(repo)
    deadline = time.monotonic() + DEADLINE
    while True:
        found = [f for f in os.listdir(where) if f.endswith(suffix)] if os.path.isdir(where) else []
        if len(found) >= n:
            return
        assert time.monotonic() < deadline, f"{len(found)} of {n} changes queued"
        time.sleep(0.02)


def finish(procs: list[subprocess.Popen[str]]) -> list[tuple[int, str, str]]:
    return [(p.wait(timeout=DEADLINE), p.stdout.read(), p.stderr.read()) for p in procs]  # type: ignore[union-attr]


def holds(repo: str) -> int:
    """HEAD's reflog entries: one per lock hold that moved HEAD."""
    return len(git(repo, "reflog", "--format=%H", "HEAD").stdout.split())


def commits(repo: str, since: str) -> list[dict[str, Any]]:
    """{sha, subject, trailers} of each commit after `since`, oldest first."""
    out = git(repo, "log", "--reverse", "-z", "--format=%H%x1f%s%x1f%(trailers:only,unfold)", f"{since}..HEAD").stdout
    found = []
    for record in filter(None, out.split("\0")):
        sha, subject, trailers = record.strip("\n").split("\x1f")
        found.append({"sha": sha, "subject": subject,
                      "trailers": dict(line.split(": ", 1) for line in trailers.splitlines() if ": " in line)})
    return found


def clean(repo: str) -> None:
    """Nothing staged or changed without a commit, no journal, nothing left in the queue."""
    assert git(repo, "status", "--porcelain").stdout == ""
    assert not os.path.exists(journal.path(repo))
    where = group.folder(repo)
    assert not os.path.isdir(where) or os.listdir(where) == []


def indexed(repo: str) -> set[str]:
    with sqlite3.connect(paths.index_db(repo)) as db:
        return {r[0] for r in db.execute("SELECT id FROM memories")}


def grouped_adds(repo: str, n: int) -> tuple[str, int, list[dict[str, Any]]]:
    """`n` adds started while the test holds the lock: (HEAD before, holds before, their JSON replies)."""
    base, before = head(repo), holds(repo)
    with lock.held(repo):
        procs = []
        for i in range(n):
            procs.append(start(add_argv(repo, i)))
            queued(repo, i + 1)  # one at a time: the lock's queue serves them in this order
    results = finish(procs)
    assert [r[0] for r in results] == [0] * n, results
    return base, before, [json.loads(out) for _, out, _ in results]


def test_writers_that_wait_land_as_one_chain_each_its_own_commit_and_run(repo: str) -> None:
    base, before, replies = grouped_adds(repo, 5)
    made = commits(repo, base)
    assert holds(repo) - before == 1  # one lock hold moved HEAD once, for all five
    assert len(made) == 5
    by_sha = {c["sha"]: c for c in made}
    for reply in replies:  # each process reports its own commit, which carries its own trailers
        mine = by_sha[reply["commit"]]
        assert mine["subject"] == f"add: {reply['id']}"
        assert mine["trailers"]["Memrepo-Run"] == reply["run"] and mine["trailers"]["Memrepo-Id"] == reply["id"]
        assert git(repo, "show", "--name-only", "--format=", reply["commit"]).stdout.split() == [f"memory/{reply['id']}.md"]
    assert len({r["run"] for r in replies}) == 5
    assert {r["id"] for r in replies} <= indexed(repo)  # one cache update took in the whole chain
    clean(repo)


# What only a lock holder needs: the commit machinery and the cache (issue 44).
HOLDER_ONLY = {"memrepo.vcs.commit", "memrepo.vcs.chain", "memrepo.vcs.journal", "memrepo.vcs.staging",
               "memrepo.store.index", "sqlite3"}
# What no add loads, the holder included: OpenSSL through hashlib (10 M instructions), shutil with
# bz2, lzma and fnmatch (6 M): a tenth of a lock hold of one change at 1,000 memories.
NEVER = {"hashlib", "_hashlib", "shutil", "bz2", "lzma"}


def test_a_writer_whose_change_a_holder_commits_loads_no_commit_machinery(repo: str) -> None:
    base = head(repo)
    with lock.held(repo):
        procs = []
        for i in range(2):  # the first in the lock's queue leads and commits the second's change
            procs.append(start([sys.executable, "-X", "importtime", *add_argv(repo, i)[1:]]))
            queued(repo, i + 1)
    results = finish(procs)
    assert [r[0] for r in results] == [0, 0], results
    loaded = [{line.rsplit("|", 1)[-1].strip() for line in err.splitlines() if "|" in line} for _, _, err in results]
    assert HOLDER_ONLY <= loaded[0]
    assert HOLDER_ONLY & loaded[1] == set(), results[1][2]
    assert len(commits(repo, base)) == 2 and holds_one_chain(repo, base)


def test_a_lock_hold_loads_neither_openssl_nor_shutil(repo: str) -> None:
    assert finish([start(add_argv(repo, 0))])[0][0] == 0  # the first add writes the secret gates' record
    base = head(repo)
    [(rc, _, err)] = finish([start([sys.executable, "-X", "importtime", *add_argv(repo, 1)[1:]])])
    assert rc == 0, err
    loaded = {line.rsplit("|", 1)[-1].strip() for line in err.splitlines() if "|" in line}
    assert HOLDER_ONLY <= loaded and len(commits(repo, base)) == 1
    assert NEVER & loaded == set()


def holds_one_chain(repo: str, base: str) -> bool:
    """Whether HEAD moved from `base` in one step (one lock hold's chain)."""
    return git(repo, "reflog", "-n1", "--format=%H", "HEAD@{1}").stdout.strip() == base


def test_undo_of_one_grouped_change_takes_back_only_that_one(repo: str) -> None:
    _, _, replies = grouped_adds(repo, 3)
    gone = replies[1]
    res = subprocess.run([sys.executable, "-m", "memrepo", "--repo", repo, "undo", gone["run"]], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    present = {r["id"]: os.path.exists(paths.note_path(repo, r["id"])) for r in replies}
    assert present == {r["id"]: r is not gone for r in replies}
    clean(repo)


CHILD = textwrap.dedent("""
    import json, os, signal, sys
    from memrepo.errors import GitError
    from memrepo.store import githooks
    from memrepo.vcs import commit, gitcmd, group

    repo, rel, text, fault = sys.argv[1:5]
    if fault == "kill before HEAD moves":  # the chain's commits made, HEAD not moved to them
        made = commit.chain_commits
        def dies(*a, **k):
            made(*a, **k)
            os.kill(os.getpid(), signal.SIGKILL)
        commit.chain_commits = dies
    elif fault == "kill after HEAD moves":
        run_git = gitcmd.run_git
        def dies(*args, **kw):
            res = run_git(*args, **kw)
            if args[0] == "update-ref" and args[1] == "-m":
                os.kill(os.getpid(), signal.SIGKILL)
            return res
        gitcmd.run_git = dies
    elif fault == "group fails once":
        made = commit.chain_commits
        calls = []
        def fails(*a, **k):
            calls.append(1)
            if len(calls) == 1:
                raise GitError("git fast-import failed: a fault the test put there")
            return made(*a, **k)
        commit.chain_commits = fails
    try:
        change = group.Change({rel: text}, {rel: None}, "add: " + os.path.basename(rel)[:-3],
                              {"Action": "add", "Run": "child-" + os.path.basename(rel)})
        sha, stale = group.submit(repo, change, githooks.in_process())
        print(json.dumps({"sha": sha, "stale": stale}))
    except GitError as exc:
        print(json.dumps({"error": str(exc), "hint": exc.hint}))
""")


def child(repo: str, note_id: str, text: str, fault: str = "") -> subprocess.Popen[str]:
    return start([sys.executable, "-c", CHILD, repo, f"memory/{note_id}.md", text, fault])


def test_a_waiter_whose_change_fails_validation_gets_its_own_error_and_the_others_land(repo: str) -> None:
    bad = "---\nid: broken-one\ntitle: no class, no source\n---\nbody\n"
    alone = child(repo, "broken-one", bad)
    alone_said = json.loads(finish([alone])[0][1])
    assert "git commit failed" in alone_said["error"]
    base, before = head(repo), holds(repo)
    with lock.held(repo):
        procs = [start(add_argv(repo, 0))]
        queued(repo, 1)
        procs.append(child(repo, "broken-one", bad))
        queued(repo, 2)
        procs += [start(add_argv(repo, 2))]
        queued(repo, 3)
    (rc0, out0, _), (rc1, out1, _), (rc2, out2, _) = finish(procs)
    assert rc0 == rc2 == 0 and rc1 == 0
    assert json.loads(out1) == alone_said  # word for word what it says alone
    landed = [c["subject"] for c in commits(repo, base)]
    assert landed == [f"add: {json.loads(out0)['id']}", f"add: {json.loads(out2)['id']}"]
    assert holds(repo) - before == 1  # the refused change was put back inside the same hold
    assert not os.path.exists(os.path.join(repo, "memory", "broken-one.md"))
    clean(repo)


def test_two_waiters_changing_one_memory_the_second_is_told_it_changed_meanwhile(repo: str) -> None:
    write_memory(repo, "shared-one")
    commit_all(repo, "a memory to retire twice")
    base = head(repo)
    retire = [sys.executable, "-m", "memrepo", "--repo", repo, "retire", "shared-one", "--reason"]
    with lock.held(repo):
        procs = [start(add_argv(repo, 0))]
        queued(repo, 1)
        procs.append(start(retire + ["first terminal"]))
        queued(repo, 2)
        procs.append(start(retire + ["second terminal"]))
        queued(repo, 3)
        procs.append(start(add_argv(repo, 3)))
        queued(repo, 4)
    results = finish(procs)
    assert [r[0] for r in results] == [0, 0, 1, 0], results
    assert "changed while you were editing it" in results[2][2]
    subjects = [c["subject"] for c in commits(repo, base)]
    assert subjects.count("retire: shared-one") == 1 and len(subjects) == 3
    with open(paths.note_path(repo, "shared-one"), encoding="utf-8") as fh:
        assert "first terminal" in fh.read()
    clean(repo)


def killed_holder(repo: str, fault: str) -> tuple[str, list[tuple[int, str, str]], int]:
    base = head(repo)
    with lock.held(repo):
        holder = child(repo, "holder-change", memory_text("holder-change"), fault)
        queued(repo, 1)
        procs = []
        for i in range(3):
            procs.append(start(add_argv(repo, i)))
            queued(repo, i + 2)
    holder_rc = holder.wait(timeout=DEADLINE)
    return base, finish(procs), holder_rc


def test_a_holder_killed_before_head_moves_loses_no_waiter(repo: str) -> None:
    base, results, holder_rc = killed_holder(repo, "kill before HEAD moves")
    assert holder_rc == -signal.SIGKILL
    assert [r[0] for r in results] == [0, 0, 0], results
    ids = [json.loads(out)["id"] for _, out, _ in results]
    subjects = [c["subject"] for c in commits(repo, base)]
    assert sorted(subjects) == sorted(f"add: {i}" for i in ids)  # each once; the dead holder's own change is gone
    assert not os.path.exists(os.path.join(repo, "memory", "holder-change.md"))
    clean(repo)


def test_a_holder_killed_after_head_moves_reports_each_waiter_landed_once(repo: str) -> None:
    base, results, holder_rc = killed_holder(repo, "kill after HEAD moves")
    assert holder_rc == -signal.SIGKILL
    assert [r[0] for r in results] == [0, 0, 0], results
    replies = [json.loads(out) for _, out, _ in results]
    made = commits(repo, base)
    assert [c["subject"] for c in made] == ["add: holder-change"] + [f"add: {r['id']}" for r in replies]
    assert [c["sha"] for c in made[1:]] == [r["commit"] for r in replies]  # told of the dead holder's commits
    clean(repo)


def test_a_group_that_fails_as_a_whole_is_given_back_and_every_change_lands(repo: str) -> None:
    base, before = head(repo), holds(repo)
    with lock.held(repo):
        holder = child(repo, "holder-change", memory_text("holder-change"), "group fails once")
        queued(repo, 1)
        procs = [start(add_argv(repo, i)) for i in range(2)]
        queued(repo, 3)
    assert "sha" in json.loads(finish([holder])[0][1])
    results = finish(procs)
    assert [r[0] for r in results] == [0, 0], results
    subjects = sorted(c["subject"] for c in commits(repo, base))
    assert subjects == sorted(["add: holder-change"] + [f"add: {json.loads(out)['id']}" for _, out, _ in results])
    assert holds(repo) - before == 3  # the holder alone, then each writer its own
    clean(repo)


def test_a_stale_or_hostile_queue_entry_is_never_committed(repo: str) -> None:
    where = group.folder(repo)
    os.makedirs(where)
    evil = {"files": {"../outside.md": "x\n"}, "expect": {"../outside.md": None}, "subject": "add: evil",
            "trailers": {}, "body": ""}
    dead = {**evil, "files": {"memory/dead-writer.md": memory_text("dead-writer")}, "expect": {"memory/dead-writer.md": None}}
    with open(os.path.join(where, "00000000000000000001-1.json"), "w") as fh:
        json.dump(dead, fh)  # nobody holds it: a writer that died
    with open(os.path.join(where, ".00000000000000000003-3"), "w") as fh:
        fh.write("{")  # a writer killed before its entry was complete
    live = os.path.join(where, "00000000000000000002-2.json")
    with open(live, "w") as fh:
        json.dump(evil, fh)
    fd = lock.hold_file(live)  # a live process waits on a change that leaves the tree
    try:
        base, before = head(repo), holds(repo)
        with lock.held(repo):
            procs = [start(add_argv(repo, 0))]
            queued(repo, 3)
            procs.append(start(add_argv(repo, 1)))
            queued(repo, 4)
        results = finish(procs)
        assert [r[0] for r in results] == [0, 0], results
        assert [c["subject"] for c in commits(repo, base)] == [f"add: {json.loads(out)['id']}" for _, out, _ in results]
        assert holds(repo) - before == 1  # the two writers' group was not broken by it
        assert not os.path.exists(os.path.join(os.path.dirname(repo), "outside.md"))
        assert not os.path.exists(os.path.join(repo, "memory", "dead-writer.md"))
        assert sorted(os.listdir(where)) == ["00000000000000000002-2.out", "00000000000000000002-2.taken"]
        with open(os.path.join(where, "00000000000000000002-2.out")) as fh:
            assert json.load(fh) == {"final": True, "retry": True}  # given back to its writer
    finally:
        os.close(fd)


def test_a_lone_writer_still_commits_through_the_chain_alone(repo: str) -> None:
    base, before = head(repo), holds(repo)
    res = subprocess.run(add_argv(repo, 0), capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    reply = json.loads(res.stdout)
    assert re.fullmatch(r"[0-9a-f]{40}", reply["commit"]) and head(repo) == reply["commit"]
    assert holds(repo) - before == 1 and len(commits(repo, base)) == 1
    assert reply["id"] in indexed(repo)
    clean(repo)


COUNTED = textwrap.dedent("""
    import json, sys
    from memrepo.store import githooks
    from memrepo.vcs import gitcmd, group
    repo, text = sys.argv[1:3]
    ran = []
    run_git = gitcmd.run_git
    def counted(*args, **kw):
        ran.append(" ".join(args[:2]))
        return run_git(*args, **kw)
    gitcmd.run_git = counted
    rel = "memory/counted.md"
    sha, _ = group.submit(repo, group.Change({rel: text}, {rel: None}, "add: counted", {"Action": "add"}), githooks.in_process())
    print(json.dumps({"sha": sha, "ran": ran}))
""")


def test_a_lock_hold_asks_git_where_its_files_are_once_and_head_once(repo: str) -> None:
    # Each git is a process (~1 M instructions with Python's spawn): the journal's, memrepo's index's
    # and the commit-graph mark's places were three `rev-parse`s, HEAD two (issue 44).
    res = subprocess.run([sys.executable, "-c", COUNTED, repo, memory_text("counted")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    found = json.loads(res.stdout)
    assert found["sha"] == head(repo)
    asked = [r for r in found["ran"] if r.startswith("rev-parse")]
    assert asked == ["rev-parse --git-common-dir", "rev-parse --verify"], found["ran"]
    clean(repo)


def test_a_chain_is_one_fast_import_that_leaves_no_ref(repo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from memrepo.vcs import commit, gitcmd

    base = head(repo)
    ran: list[str] = []
    run_git = gitcmd.run_git
    monkeypatch.setattr(gitcmd, "run_git", lambda *a, **k: ran.append(a[2] if a[0] == "-c" else a[0]) or run_git(*a, **k))
    shas = commit.chain_commits(repo, base, [(b"one\n", {"memory/a.md": b"a\n"}), (b"two\n", {"memory/b.md": b"b\n"})])
    assert ran == ["var", "var", "fast-import"]  # no `update-ref -d` after it (issue 44)
    assert git(repo, "for-each-ref", "refs/memrepo/").stdout == "" and head(repo) == base
    assert git(repo, "rev-parse", f"{shas[1]}^").stdout.strip() == shas[0]
    assert git(repo, "show", f"{shas[1]}:memory/b.md").stdout == "b\n"


@pytest.mark.parametrize("n", [1, 3], ids=["one change", "a chain of three"])
def test_a_person_s_commit_landing_mid_chain_is_never_reverted(repo: str, monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    """memrepo's index is made from HEAD; a person commits (no memrepo lock) before the chain lands:
    the chain is made again on their commit, which stays."""
    from memrepo.store import githooks
    from memrepo.vcs import chain, staging

    real = staging.open_for
    done: list[str] = []

    def open_then_a_person_commits(repo_: str, head_: str | None) -> dict[str, str]:
        env = real(repo_, head_)
        if not done:
            write_memory(repo, "theirs")
            git(repo, "add", "memory/theirs.md")
            git(repo, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "a person's commit meanwhile", "--", "memory/theirs.md")
            done.append(head(repo))
        return env

    monkeypatch.setattr(staging, "open_for", open_then_a_person_commits)
    changes = [chain.Change({f"memory/mine-{i}.md": memory_text(f"mine-{i}")}, {f"memory/mine-{i}.md": None}, f"add: mine-{i}",
                            {"Action": "add"}) for i in range(n)]
    with lock.held(repo):
        outcomes = chain.commit_chain(repo, changes, githooks.in_process())
    assert git(repo, "rev-parse", f"{outcomes[0].sha}^").stdout.strip() == done[0]
    assert [c["subject"] for c in commits(repo, done[0])] == [f"add: mine-{i}" for i in range(n)]
    assert os.path.exists(os.path.join(repo, "memory", "theirs.md"))
    assert git(repo, "status", "--porcelain").stdout == ""


@pytest.mark.parametrize("n", [1, 3], ids=["one change", "a chain of three"])
def test_a_chain_that_fails_after_a_person_s_commit_puts_its_files_back(repo: str, monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    """A person commits during a lock hold (HEAD moves: the compare-and-swap fails), then the
    next try fails too (^C here): memrepo's files are put back and nothing stays staged, though
    HEAD is no longer the one the journal named. Left there, the person's next commit took them."""
    from memrepo.store import githooks
    from memrepo.vcs import chain, staging

    real = staging.open_for
    opened: list[str | None] = []

    def open_then_a_person_commits(repo_: str, head_: str | None) -> dict[str, str]:
        opened.append(head_)
        if len(opened) > 1:
            raise KeyboardInterrupt
        env = real(repo_, head_)
        write_memory(repo, "theirs")
        git(repo, "add", "memory/theirs.md")
        git(repo, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "a person's commit meanwhile", "--", "memory/theirs.md")
        return env

    monkeypatch.setattr(staging, "open_for", open_then_a_person_commits)
    changes = [chain.Change({f"memory/mine-{i}.md": memory_text(f"mine-{i}")}, {f"memory/mine-{i}.md": None}, f"add: mine-{i}",
                            {"Action": "add"}) for i in range(n)]
    with pytest.raises(KeyboardInterrupt), lock.held(repo):
        chain.commit_chain(repo, changes, githooks.in_process())
    assert git(repo, "log", "-1", "--format=%s").stdout.strip() == "a person's commit meanwhile"
    assert git(repo, "status", "--porcelain").stdout == ""
    assert not any(os.path.exists(os.path.join(repo, "memory", f"mine-{i}.md")) for i in range(n))
    assert journal.pending(repo) is None


@pytest.mark.parametrize("n", [1, 3], ids=["one change", "a chain of three"])
def test_a_chain_interrupted_just_after_it_lands_keeps_its_files(repo: str, n: int) -> None:
    """^C after HEAD moved to the chain (in its post-commit work): the commits are history, so the
    files they hold stay as they are and nothing is left staged."""
    from memrepo.store import githooks
    from memrepo.vcs import chain

    def interrupted(*_: Any) -> None:
        raise KeyboardInterrupt

    hooks = githooks.in_process()
    hooks.post_commit = interrupted
    changes = [chain.Change({f"memory/mine-{i}.md": memory_text(f"mine-{i}")}, {f"memory/mine-{i}.md": None}, f"add: mine-{i}",
                            {"Action": "add"}) for i in range(n)]
    base = head(repo)
    with pytest.raises(KeyboardInterrupt), lock.held(repo):
        chain.commit_chain(repo, changes, hooks)
    assert [c["subject"] for c in commits(repo, base)] == [f"add: mine-{i}" for i in range(n)]
    assert all(os.path.exists(os.path.join(repo, "memory", f"mine-{i}.md")) for i in range(n))
    assert git(repo, "status", "--porcelain").stdout == "" and journal.pending(repo) is None


SLOW_POLL = ("import sys; from memrepo.vcs import lock; lock._POLL = 3600.0; "
             "from memrepo.cli.main import main; sys.argv[0] = 'memrepo'; raise SystemExit(main())")


def _behind_the_lock(repo: str, first: list[str], second: list[str]) -> list[tuple[int, str, str]]:
    """Start two writers, in this order, while this test holds the lock; their (exit code, stdout,
    stderr) once it lets go. One still asleep after DEADLINE / 2 is killed: nobody woke it."""
    with lock.held(repo):
        procs = [start(first)]
        queued(repo, 1)
        procs.append(start(second))
        queued(repo, 2)
    try:
        return [(p.wait(timeout=DEADLINE / 2), p.stdout.read(), p.stderr.read()) for p in procs]  # type: ignore[union-attr]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def test_a_waiter_is_woken_when_its_answer_is_written_not_at_its_next_poll(repo: str) -> None:
    """The holder rings the waiter's FIFO after writing its answer (issue 44): a waiter whose
    poll is an hour long still reports its commit as soon as the chain has landed."""
    base = head(repo)
    # the first in line takes the lock and leads; the second polls once an hour
    results = _behind_the_lock(repo, add_argv(repo, 0), [sys.executable, "-c", SLOW_POLL, *add_argv(repo, 1)[3:]])
    assert [r[0] for r in results] == [0, 0], results
    assert [c["sha"] for c in commits(repo, base)] == [json.loads(out)["commit"] for _, out, _ in results]
    clean(repo)


def test_a_waiter_given_back_its_change_takes_the_lock_as_soon_as_its_holder_frees_it(repo: str) -> None:
    """Two adds of one id: the holder gives the second back (one path, two changes) and wakes it,
    then wakes it again once the lock is free; with an hour-long poll it still finishes at once."""
    def same_id(i: int) -> list[str]:
        return [*add_argv(repo, i)[3:], "--id", "one-id-for-two"]

    base = head(repo)
    results = _behind_the_lock(repo, [sys.executable, "-m", "memrepo", *same_id(0)],
                               [sys.executable, "-c", SLOW_POLL, *same_id(1)])
    assert [r[0] for r in results] == [0, 1], results
    assert "was just added by another process" in results[1][2]
    assert [c["subject"] for c in commits(repo, base)] == ["add: one-id-for-two"]
    clean(repo)


def test_the_wake_up_writes_only_to_a_fifo_and_a_stray_one_is_dropped_unopened(repo: str, tmp_path: Any) -> None:
    import threading

    where = group.folder(repo)
    os.makedirs(where)
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched\n")
    os.link(victim, os.path.join(where, "00000000000000000001-1.wake"))  # a hard link to a user's file
    os.symlink(victim, os.path.join(where, "00000000000000000002-2.wake"))
    for n in (1, 2):
        group.Entry(where, f"0000000000000000000{n}-{n}").answer(None)
    assert victim.read_text() == "untouched\n"
    os.mkfifo(os.path.join(where, "00000000000000000003-3.wake"))  # its writer died before its entry showed
    with lock.held(repo):
        done = threading.Thread(target=group.claim, args=(repo, set()), daemon=True)
        done.start()
        done.join(DEADLINE)  # opening a FIFO nobody writes to, to ask whether it is alive, would block
        assert not done.is_alive()
    assert not any(name.endswith(group.WAKE) for name in os.listdir(where))


# A memory with what the renderer treats apart: a list, text past ASCII (PyYAML's emitter, not
# libyaml's), a scalar YAML would retype, and a body.
TWIN = ["--id", "twin-memory", "--class", "fact", "--title", "Déploiement 🎉 of the api", "-d", "yes",
        "--topic", "deploy", "--topic", "007", "--entity", "api", "--project", "on", "--body", "Line one.\n\n- item ✓\n"]


def loaded(err: str) -> set[str]:
    """The modules a `python -X importtime` process imported, from its stderr."""
    return {line.rsplit("|", 1)[-1].strip() for line in err.splitlines() if line.startswith("import time:")}


def waiting_add(repo: str, argv: list[str]) -> tuple[int, str, str]:
    """`memrepo add argv` as a writer whose change the first in the lock's line commits (-X importtime)."""
    results = _behind_the_lock(repo, add_argv(repo, 0), [sys.executable, "-X", "importtime", "-m", "memrepo",
                                                         "--repo", repo, "add", *argv])
    assert results[0][0] == 0, results
    return results[1]


def test_a_waiter_s_add_commits_the_bytes_a_lone_add_writes_and_never_loads_yaml(repo: str) -> None:
    """The waiter hands its fields over; the holder renders them with the one serializer (issue 44)."""
    alone = subprocess.run([sys.executable, "-m", "memrepo", "--repo", repo, "add", "--json", *TWIN], capture_output=True, text=True)
    assert alone.returncode == 0, alone.stderr
    with open(paths.note_path(repo, "twin-memory"), "rb") as fh:
        lone_bytes = fh.read()
    assert "🎉" in lone_bytes.decode("utf-8") and b"- item" in lone_bytes
    git(repo, "rm", "-q", "memory/twin-memory.md")
    commit_all(repo, "the twin goes, to be added again by a waiter")
    base = head(repo)
    rc, _, err = waiting_add(repo, TWIN)
    assert rc == 0, err
    modules = loaded(err)
    assert "memrepo.vcs.chain" not in modules  # it waited: a holder committed its change
    # nor the validation, nor dataclasses (3.4 M instructions, and ~9 M for vcs.change's three classes)
    assert {"yaml", "frontmatter", "memrepo.format.validate", "dataclasses"} & modules == set()
    assert git(repo, "show", "HEAD:memory/twin-memory.md").stdout.encode("utf-8") == lone_bytes
    assert [c["subject"].split(": ")[1] for c in commits(repo, base)][-1] == "twin-memory"
    assert holds_one_chain(repo, base)
    clean(repo)


TOKEN = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"


@pytest.mark.parametrize("argv", [
    ["--title", "x" * 121, "-d", "A title one character too long."],
], ids=["title too long"])
def test_an_invalid_add_rendered_by_its_holder_comes_back_as_its_own_error(repo: str, argv: list[str]) -> None:
    argv = ["--class", "fact", *argv]
    alone = subprocess.run([sys.executable, "-m", "memrepo", "--repo", repo, "add", *argv], capture_output=True, text=True)
    assert alone.returncode == 1 and "is not a valid memory" in alone.stderr, alone.stderr
    base = head(repo)
    rc, out, err = waiting_add(repo, argv)
    assert "memrepo.vcs.chain" not in loaded(err)  # the holder rendered it and refused it
    said = "\n".join(line for line in err.splitlines() if not line.startswith("import time:"))
    assert (rc, out, said + "\n") == (alone.returncode, alone.stdout, alone.stderr)
    assert [c["subject"] for c in commits(repo, base)] == ["add: grouped-note-number-0"]
    clean(repo)


# What only detect-secrets' plugins find, `recall.secretish` says no to (plain patterns, no credential).
KEYWORD = 'contraseña = "' + "Xk9m" * 3 + '"'
TWILIO = "AC" + "0123456789abcdef" * 2
TELEGRAM = "1234567890:" + "B" * 35
ARTIFACTORY = "AKC" + "a1b2c3d4e5f6g7h8"


@pytest.mark.parametrize("argv, secret", [
    (["--title", "A token in the body", "-d", "The body holds a token.", "--body", f"token {TOKEN}"], TOKEN),
    (["--title", "A token in an alias", "-d", "An alias holds a token.", "--alias", f"the {TOKEN} one"], TOKEN),
    (["--title", "Staging login for the reports app", "-d", "Written down by mistake.", "--body", KEYWORD], "Xk9m" * 3),
    (["--title", "The SMS provider account", "-d", "Written down by mistake.", "--entity", TWILIO], TWILIO),
    (["--title", "The release bot", "-d", "Written down by mistake.", "--alias", f"bot {TELEGRAM}"], TELEGRAM),
    (["--title", "The package registry login", "-d", "Written down by mistake.", "--body", ARTIFACTORY], ARTIFACTORY),
], ids=["in the body", "in an alias", "a keyword only detect-secrets knows", "twilio", "telegram", "artifactory"])
def test_a_secret_never_reaches_the_queue_and_is_refused_as_a_lone_add_refuses_it(repo: str, argv: list[str], secret: str) -> None:
    """The fields a waiter queues are written to disk for the holder: one holding a secret is
    refused by its own writer before that, with the error a lone add gives (issue 44). Whichever
    catalogue finds it: `recall.secretish` answers for `redact`'s only."""
    from memrepo.recall import secretish

    if secret != TOKEN:  # the prompt path's pre-check says no to all of it: only detect-secrets finds it
        assert not secretish.may_hold_secret("\n".join([*argv[1::2], "fact", "user", "2026-01-02"]))
    argv = ["--class", "fact", *argv]
    alone = subprocess.run([sys.executable, "-m", "memrepo", "--repo", repo, "add", *argv], capture_output=True, text=True)
    assert alone.returncode == 1 and "is not a valid memory" in alone.stderr, alone.stderr
    base = head(repo)
    seen: list[str] = []
    with lock.held(repo):  # the writer would wait behind this hold, and queue its change meanwhile
        proc = start([sys.executable, "-m", "memrepo", "--repo", repo, "add", *argv])
        deadline = time.monotonic() + DEADLINE / 4
        while proc.poll() is None and time.monotonic() < deadline:
            where = group.folder(repo)
            for name in os.listdir(where) if os.path.isdir(where) else []:
                with contextlib.suppress(OSError), open(os.path.join(where, name), "rb") as fh:
                    seen.append(fh.read().decode("utf-8", "replace"))
            time.sleep(0.005)
        refused_meanwhile = proc.poll() is not None
    out, err = proc.communicate(timeout=DEADLINE)
    assert not any(secret in text for text in seen)
    assert refused_meanwhile and (proc.returncode, out, err) == (alone.returncode, alone.stdout, alone.stderr)
    assert commits(repo, base) == []
    clean(repo)


def test_a_body_over_the_limit_is_refused_by_its_writer_never_by_a_holder(repo: str) -> None:
    """A body a holder would refuse for its size is refused by its own writer, with the lone add's
    error, before it queues anything: a holder never spends its hold on it (a body of megabytes
    took it seconds to refuse, issue 44)."""
    argv = [sys.executable, "-m", "memrepo", "--repo", repo, "add", "--class", "fact", "--title", "A pasted log",
            "-d", "Far too long to be a memory.", "--stdin"]
    body = "a line of a long pasted log\n" * 3000  # 84,000 bytes: over the 65,536 of a body
    alone = subprocess.run(argv, input=body, capture_output=True, text=True)
    assert alone.returncode == 1 and "body is 84000 bytes, over the 65536-byte limit" in alone.stderr, alone.stderr
    base = head(repo)
    with lock.held(repo):  # the writer would wait behind this hold, and queue its change meanwhile
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = proc.communicate(body, timeout=DEADLINE)  # it ends while the lock is still held
        where = group.folder(repo)
        assert not os.path.isdir(where) or os.listdir(where) == []
    assert (proc.returncode, out, err) == (alone.returncode, alone.stdout, alone.stderr)
    assert commits(repo, base) == []
    clean(repo)


ADDED = {"id": "from-the-queue", "title": "From the queue", "description": "Fields a holder renders.", "class": "fact",
         "source": "user", "created": "2026-01-02"}


@pytest.mark.parametrize("fields", [
    {"memory/from-the-queue.md": {"meta": ADDED, "body": 7}},
    {"memory/from-the-queue.md": {"meta": ADDED, "body": "", "files": {"hooks/x": "y"}}},
    {"memory/elsewhere.md": {"meta": ADDED, "body": ""}},
    {"memory/from-the-queue.md": {"meta": {**ADDED, "id": "../x"}, "body": ""}},
    {"memory/from-the-queue.md": {"meta": {**ADDED, "tech": [[[[[[[[[[[[[[[[["deep"]]]]]]]]]]]]]]]]]}, "body": ""}},
    {"memory/from-the-queue.md": ["meta", "body"]},
    {"../from-the-queue.md": {"meta": ADDED, "body": ""}},
    {},
], ids=["body not text", "more than fields", "not the id's path", "not an id", "nested too deep", "not a mapping",
        "outside the tree", "nothing"])
def test_a_malformed_fields_entry_is_given_back_never_committed(repo: str, fields: dict[str, Any]) -> None:
    where = group.folder(repo)
    os.makedirs(where)
    live = os.path.join(where, "00000000000000000002-2.json")
    with open(live, "w") as fh:
        json.dump({"files": {}, "expect": {"memory/from-the-queue.md": None}, "subject": "add: from-the-queue",
                   "trailers": {}, "body": "", "fields": fields}, fh)
    fd = lock.hold_file(live)  # a live process waits on it
    try:
        base = head(repo)
        with lock.held(repo):
            procs = [start(add_argv(repo, 0))]
            queued(repo, 2)
        [(rc, out, err)] = finish(procs)
        assert rc == 0, err
        assert [c["subject"] for c in commits(repo, base)] == [f"add: {json.loads(out)['id']}"]
        assert not os.path.exists(paths.note_path(repo, "from-the-queue"))
        with open(os.path.join(where, "00000000000000000002-2.out")) as fh:
            assert json.load(fh) == {"final": True, "retry": True}  # given back to its writer
    finally:
        os.close(fd)


def test_the_same_fields_valid_from_the_queue_are_committed(repo: str) -> None:
    """The malformed entries above differ from this one, which lands, in one thing each."""
    where = group.folder(repo)
    os.makedirs(where)
    live = os.path.join(where, "00000000000000000002-2.json")
    with open(live, "w") as fh:
        json.dump({"files": {}, "expect": {"memory/from-the-queue.md": None}, "subject": "add: from-the-queue",
                   "trailers": {}, "body": "", "fields": {"memory/from-the-queue.md": {"meta": ADDED, "body": "Body.\n"}}}, fh)
    fd = lock.hold_file(live)
    try:
        with lock.held(repo):
            procs = [start(add_argv(repo, 0))]
            queued(repo, 2)
        assert finish(procs)[0][0] == 0
        assert git(repo, "show", "HEAD:memory/from-the-queue.md").stdout == memory_text(
            "from-the-queue", title="From the queue", description="Fields a holder renders.", created="2026-01-02",
            body="Body.\n")
    finally:
        os.close(fd)


@pytest.mark.parametrize("value", [("deploy",), {"deploy"}, {1: "x"}, "a byte no UTF-8 decodes: \udcff"],
                         ids=["a tuple", "a set", "a key that is no text", "a lone surrogate"])
def test_fields_json_would_change_are_never_queued(repo: str, value: Any) -> None:
    """Such a writer waits its turn and renders its change itself: a holder renders only what the
    writer's own process would have rendered."""
    meta = {**ADDED, "topics": value}
    change = group.Change({}, {"memory/from-the-queue.md": None}, "add: from-the-queue", {},
                          fields={"memory/from-the-queue.md": {"meta": meta, "body": ""}})
    assert group.Entry.put(group.folder(repo), change) is None
    plain = group.Entry.put(group.folder(repo), group.Change({}, change.expect, change.subject, {},
                                                             fields={"memory/from-the-queue.md": {"meta": ADDED, "body": ""}}))
    assert plain is not None
    plain.close()


def in_line(repo: str, n: int) -> None:
    """Wait until `n` processes wait in the lock's own line (a writer that queued no change is in it too)."""
    where = lock.path(repo) + ".queue"
    deadline = time.monotonic() + DEADLINE
    while len([f for f in os.listdir(where) if not f.startswith(".")] if os.path.isdir(where) else []) < n:
        assert time.monotonic() < deadline, "nobody waits in the lock's line"
        time.sleep(0.02)


def test_an_add_whose_text_is_no_utf8_waits_its_turn_and_says_what_a_lone_add_says(repo: str) -> None:
    """A byte of argv no UTF-8 decodes is a lone surrogate in the fields: they are never queued (the
    entry's encoding raised, and the waiter crashed with a traceback); its writer renders them at its
    turn and is refused as a lone add is (issue 44)."""
    argv = [sys.executable, "-m", "memrepo", "--repo", repo, "add", "--class", "fact", "-d", "One byte is no UTF-8.",
            "--title", "A byte no UTF-8 decodes: \udcff"]
    alone = subprocess.run(argv, capture_output=True, text=True, errors="replace")
    assert alone.returncode == 1 and "is not a valid memory" in alone.stderr, alone.stderr
    base = head(repo)
    with lock.held(repo):
        first = start(add_argv(repo, 0))
        queued(repo, 1)
        second = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
        in_line(repo, 2)
    (rc0, _, err0), (rc, out, err) = finish([first, second])
    assert rc0 == 0, err0
    assert (rc, out, err) == (alone.returncode, alone.stdout, alone.stderr)
    assert [c["subject"] for c in commits(repo, base)] == ["add: grouped-note-number-0"]
    clean(repo)


def test_the_write_benchmark_s_timeline_traces_an_add_that_commits(repo: str, tmp_path: Any) -> None:
    """`bench_writes.py --timeline` wraps the in-process hooks from outside; it replaced them with
    hooks that had no renderer, and every traced add failed (issue 44)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench"))
    try:
        import writes_timeline
    finally:
        sys.path.pop(0)
    base = head(repo)
    found = writes_timeline.run(repo, sys.executable, dict(os.environ), 1, 1, str(tmp_path / "timeline"))
    assert len(found["adds"]) == 1 and len(found["holds"]) == 1
    assert [c["subject"].split(": ")[0] for c in commits(repo, base)] == ["add"]
    assert any(line.startswith("    hold at") for line in writes_timeline.report(found))


def test_one_title_and_one_id_twice_behind_a_third_each_add_lands_once_or_says_why(repo: str) -> None:
    """Two adds of one title and two of one --id wait behind a third: the holder takes the first of
    each and gives the second back (one path, two changes); the second title gets the id a lone
    add gets when the slug is taken (its own text's suffix), the second --id its own error, and
    `memrepo undo` of one takes back only that one (issue 44)."""
    from memrepo.format import notes
    from memrepo.store import memories

    def add(*argv: str) -> list[str]:
        return [sys.executable, "-m", "memrepo", "--repo", repo, "add", "--class", "fact", "--json", *argv]

    title = ["--title", "Two terminals, one title"]
    argvs = [add_argv(repo, 0), add(*title, "-d", "The first of two."), add(*title, "-d", "The second of two."),
             add("--id", "one-id-twice", "--title", "First with the id", "-d", "x"),
             add("--id", "one-id-twice", "--title", "Second with the id", "-d", "y")]
    base = head(repo)
    with lock.held(repo):
        procs = []
        for i, argv in enumerate(argvs):
            procs.append(start(argv))
            queued(repo, i + 1)
    results = finish(procs)
    assert [r[0] for r in results] == [0, 0, 0, 0, 1], results
    assert "was just added by another process" in results[4][2]
    replies = [json.loads(out) for _, out, _ in results[:4]]
    first, second = replies[1]["id"], replies[2]["id"]
    assert first == "two-terminals-one-title" and replies[3]["id"] == "one-id-twice"
    note = notes.read(paths.note_path(repo, second))
    note.meta.pop("id")
    assert second == memories.suffixed(first, notes.serialize(note))  # what it gets alone, the slug taken
    assert sorted(c["subject"] for c in commits(repo, base)) == sorted(f"add: {r['id']}" for r in replies)
    with open(paths.note_path(repo, "one-id-twice"), encoding="utf-8") as fh:
        assert "First with the id" in fh.read()
    res = subprocess.run([sys.executable, "-m", "memrepo", "--repo", repo, "undo", replies[2]["run"]],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert {r["id"]: os.path.exists(paths.note_path(repo, r["id"])) for r in replies} == {
        r["id"]: r is not replies[2] for r in replies}
    clean(repo)


def test_a_queued_change_from_before_fields_is_committed(repo: str) -> None:
    """Mixed versions: an entry a writer of the code before `fields` queued (its rendered file, no
    `fields` key) is committed by a holder of this code and answered with its commit (issue 44)."""
    where = group.folder(repo)
    os.makedirs(where)
    live = os.path.join(where, "00000000000000000002-2.json")
    rel = "memory/from-an-older-writer.md"
    with open(live, "w") as fh:
        json.dump({"files": {rel: memory_text("from-an-older-writer")}, "expect": {rel: None},
                   "subject": "add: from-an-older-writer", "trailers": {"Action": "add", "Run": "older-run"}, "body": ""}, fh)
    fd = lock.hold_file(live)
    try:
        base = head(repo)
        with lock.held(repo):
            procs = [start(add_argv(repo, 0))]
            queued(repo, 2)
        assert finish(procs)[0][0] == 0
        made = commits(repo, base)
        assert [c["subject"] for c in made] == ["add: grouped-note-number-0", "add: from-an-older-writer"]
        assert made[1]["trailers"]["Memrepo-Run"] == "older-run"
        assert git(repo, "show", f"HEAD:{rel}").stdout == memory_text("from-an-older-writer")
        with open(os.path.join(where, "00000000000000000002-2.out")) as fh:
            answer = json.load(fh)
        assert answer["final"] is True and answer["sha"] == made[1]["sha"] and answer["error"] is None
    finally:
        os.close(fd)
