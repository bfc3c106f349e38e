"""The post-* git hooks keep the cache equal to a full rebuild after any sequence of git operations.

Every operation goes through the real git CLI, so the committed `.githooks/` shims run the hooks.
After each one, `snapshot(repo)` (the cache as the hooks left it, read without updating it) must
equal the snapshot of a fresh rebuild of the same `memory/` in another directory.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import IDENTITY, build_template, commit_all, git, head, write_memory

from memrepo.store import index
from memrepo.base import paths
from memrepo.recall import rank
from memrepo.cli.main import cli

WORDS = ("deploy", "friday", "postgres", "redis", "cache", "token", "billing", "lisbon", "kafka", "retry",
         "webhook", "staging")
QUERIES = [(w,) for w in WORDS] + [("friday", "deploy"), ("redis", "cache", "retry"), ("nothing",)]
TODAY = 1_800_000_000.0  # a fixed "now", so decay is the same in both snapshots


def snapshot(repo: str) -> dict[str, Any]:
    """The cache's rows, indexed text and ranked answers to QUERIES, read without updating the cache."""
    cols = ", ".join(f"f.{c}" for c in index.FTS_COLUMNS)
    with contextlib.closing(sqlite3.connect(f"file:{paths.index_db(repo)}?mode=ro", uri=True)) as db:
        rows = sorted(db.execute("SELECT id, path, class, status, superseded_by, project, updated, hash FROM memories"))
        text = sorted(db.execute(f"SELECT m.id, {cols} FROM fts f JOIN memories m ON m.rowid = f.rowid"))
        orphans = db.execute("SELECT count(*) FROM fts WHERE rowid NOT IN (SELECT rowid FROM memories)").fetchone()[0]
        skipped = sorted(db.execute("SELECT path, problem FROM skipped"))
        tables = {t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        # derived tables recall reads (e.g. techwords) must follow incremental updates too
        derived = {t: sorted(db.execute(f"SELECT * FROM {t}"))
                   for t in sorted(tables - {"memories", "fts", "meta", "skipped", "docterms"}) if not t.startswith("fts_")}
        # per-memory statistics by id: rowids differ between an updated cache and a rebuild
        derived["docterms"] = sorted(db.execute("SELECT m.id, d.dl, d.terms FROM docterms d JOIN memories m ON m.rowid = d.rowid"))
        ranked = {" ".join(q): [(h.id, round(h.score, 6)) for h in
                                rank.rank(db, [(t, 1.0) for t in q], floors=False, limit=20, today=TODAY)]
                  for q in QUERIES}
    return {"rows": rows, "text": text, "orphans": orphans, "skipped": skipped, "derived": derived, "ranked": ranked}


def rebuilt(repo: str) -> dict[str, Any]:
    """The snapshot of a full rebuild of the same memory/ files, made in a scratch directory."""
    scratch = tempfile.mkdtemp(dir=os.path.dirname(repo))
    try:
        if os.path.isdir(paths.memory_dir(repo)):
            shutil.copytree(paths.memory_dir(repo), paths.memory_dir(scratch))
        index.rebuild(scratch)
        return snapshot(scratch)
    finally:
        shutil.rmtree(scratch)


def assert_in_line(repo: str) -> dict[str, Any]:
    """The hooks' cache equals a rebuild, is not marked stale and records HEAD."""
    snap = snapshot(repo)
    assert snap == rebuilt(repo)
    assert not os.path.exists(paths.stale_marker(repo))
    assert index.status(repo)["commit"] == head(repo)
    return snap


def ok(proc: Any) -> Any:
    """A git command through the hooks succeeded and no hook complained."""
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
    return proc


def run(repo: str, *args: str) -> Any:
    return ok(git(repo, *args, check=False))


def ids(repo: str) -> list[str]:
    return [r[0] for r in snapshot(repo)["rows"]]


def _three_memories(path: str) -> None:
    write_memory(path, "deploy-freeze", class_="rule", title="No deploys on friday", topics=["deploy"],
                 body="Ask in #ops for an exception to the friday deploy freeze.\n")
    write_memory(path, "postgres-port", title="Postgres listens on 5433", entities=["Postgres"], project="api",
                 body="The staging database also uses 5433.\n")
    write_memory(path, "redis-cache", class_="reference", title="Redis cache keys", tech=["Redis"],
                 aliases=["cache keys"], body="Keys expire after a retry window.\n")
    ok(commit_all(path, "three memories"))


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> str:
    """`memrepo init` and the three memories' commit once per module; each test gets a copy."""
    return build_template(tmp_path_factory, _three_memories, identity=IDENTITY)


@pytest.fixture
def mem(template: str, tmp_path: os.PathLike[str]) -> str:
    """A memory repository with three committed memories on `main`."""
    path = os.path.join(str(tmp_path), "mem")
    shutil.copytree(template, path, symlinks=True)
    return path


def search_ids(repo: str, text: str) -> list[str]:
    result = CliRunner().invoke(cli, ["--repo", repo, "search", text, "--json"], catch_exceptions=False)
    assert result.exit_code == 0
    return [h["id"] for h in json.loads(result.stdout)]


def test_commit_of_a_new_memory_is_indexed_by_post_commit(mem: str) -> None:
    assert ids(mem) == ["deploy-freeze", "postgres-port", "redis-cache"]
    write_memory(mem, "kafka-topics", title="Kafka topics are per team", body="Billing owns the billing topics.\n")
    ok(commit_all(mem, "kafka"))
    snap = assert_in_line(mem)
    assert snap["ranked"]["kafka"] == [("kafka-topics", snap["ranked"]["kafka"][0][1])]
    assert search_ids(mem, "kafka topics") == ["kafka-topics"]


def test_modify(mem: str) -> None:
    write_memory(mem, "postgres-port", title="Postgres listens on 6432 via kafka", entities=["Postgres"], project="api")
    ok(commit_all(mem, "modify"))
    snap = assert_in_line(mem)
    assert [i for i, _ in snap["ranked"]["kafka"]] == ["postgres-port"]
    assert [i for i, _ in snap["ranked"]["staging"]] == []


def test_delete(mem: str) -> None:
    run(mem, "rm", "-q", "memory/redis-cache.md")
    ok(commit_all(mem, "delete"))
    assert_in_line(mem)
    assert ids(mem) == ["deploy-freeze", "postgres-port"]
    assert search_ids(mem, "redis") == []


def test_deleting_every_memory_and_the_folder(mem: str) -> None:
    run(mem, "rm", "-q", "-r", "memory")
    ok(commit_all(mem, "start over"))
    assert not os.path.exists(paths.memory_dir(mem))
    assert_in_line(mem)
    assert ids(mem) == []


def test_rename_with_id_change(mem: str) -> None:
    run(mem, "mv", "memory/redis-cache.md", "memory/redis-key-expiry.md")
    write_memory(mem, "redis-key-expiry", class_="reference", title="Redis cache keys", tech=["Redis"],
                 aliases=["cache keys"], body="Keys expire after a retry window.\n")
    ok(commit_all(mem, "rename"))
    assert_in_line(mem)
    assert ids(mem) == ["deploy-freeze", "postgres-port", "redis-key-expiry"]


def test_pure_rename_is_rejected_by_pre_commit_and_changes_nothing(mem: str) -> None:
    before = snapshot(mem)
    run(mem, "mv", "memory/redis-cache.md", "memory/redis-moved.md")
    done = commit_all(mem, "rename without id change")
    assert done.returncode == 1
    assert "memory/redis-moved.md:2: id `redis-cache` is not the file name `redis-moved.md`" in done.stderr
    assert snapshot(mem) == before


def test_superseded_memory_keeps_its_labels(mem: str) -> None:
    write_memory(mem, "deploy-freeze-v2", class_="rule", title="No deploys on friday after 16:00", topics=["deploy"])
    write_memory(mem, "deploy-freeze", class_="rule", title="No deploys on friday", topics=["deploy"],
                 status="superseded", superseded_by="deploy-freeze-v2")
    ok(commit_all(mem, "supersede"))
    snap = assert_in_line(mem)
    row = [r for r in snap["rows"] if r[0] == "deploy-freeze"][0]
    assert row[2:6] == ("rule", "superseded", "deploy-freeze-v2", None)


def test_merge_of_a_branch(mem: str) -> None:
    run(mem, "checkout", "-q", "-b", "feature")
    write_memory(mem, "kafka-topics", title="Kafka topics are per team")
    ok(commit_all(mem, "feature work"))
    assert_in_line(mem)
    run(mem, "checkout", "-q", "main")  # post-checkout drops kafka-topics again
    assert_in_line(mem)
    assert "kafka-topics" not in ids(mem)
    write_memory(mem, "billing-webhook", title="Billing webhook retries")
    ok(commit_all(mem, "main work"))
    run(mem, "merge", "-q", "--no-edit", "feature")  # a real merge commit: post-merge
    assert git(mem, "rev-list", "--count", "--merges", "HEAD").stdout.strip() == "1"
    assert_in_line(mem)
    assert ids(mem) == ["billing-webhook", "deploy-freeze", "kafka-topics", "postgres-port", "redis-cache"]


def test_fast_forward_merge(mem: str) -> None:
    run(mem, "checkout", "-q", "-b", "feature")
    write_memory(mem, "kafka-topics", title="Kafka topics are per team")
    ok(commit_all(mem, "one"))
    run(mem, "rm", "-q", "memory/redis-cache.md")
    write_memory(mem, "deploy-freeze", class_="rule", title="Deploys frozen on friday and lisbon holidays")
    ok(commit_all(mem, "two"))
    run(mem, "checkout", "-q", "main")
    assert_in_line(mem)
    run(mem, "merge", "-q", "--ff-only", "feature")
    assert_in_line(mem)
    assert ids(mem) == ["deploy-freeze", "kafka-topics", "postgres-port"]


def test_pull_from_another_clone(mem: str, tmp_path: os.PathLike[str]) -> None:
    # The other machine: a plain clone where hooks are not wired; the pull runs post-merge here.
    other = os.path.join(str(tmp_path), "laptop")
    git(str(tmp_path), "clone", "-q", mem, other)
    write_memory(other, "lisbon-office", title="Lisbon office wifi", body="Ask reception for the token.\n")
    run(other, "rm", "-q", "memory/postgres-port.md")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "from the laptop")
    run(mem, "pull", "-q", "--no-rebase", other, "main")
    assert_in_line(mem)
    assert ids(mem) == ["deploy-freeze", "lisbon-office", "redis-cache"]


def test_checkout_of_another_branch_and_back(mem: str) -> None:
    start = snapshot(mem)
    run(mem, "checkout", "-q", "-b", "old", "HEAD~1")  # before the three memories
    assert_in_line(mem)
    assert ids(mem) == []
    run(mem, "checkout", "-q", "main")
    assert assert_in_line(mem) == start


def test_checkout_of_a_single_file(mem: str) -> None:
    write_memory(mem, "redis-cache", class_="reference", title="Redis cache keys never expire")
    ok(commit_all(mem, "change"))
    run(mem, "checkout", "-q", "HEAD~1", "--", "memory/redis-cache.md")  # post-checkout with flag 0
    # The working tree now holds the old text; post-checkout re-read it although nothing was committed.
    assert snapshot(mem) == rebuilt(mem)


def test_rebase(mem: str) -> None:
    run(mem, "checkout", "-q", "-b", "topic")
    write_memory(mem, "kafka-topics", title="Kafka topics are per team")
    ok(commit_all(mem, "topic one"))
    write_memory(mem, "redis-cache", class_="reference", title="Redis cache keys expire hourly")
    ok(commit_all(mem, "topic two"))
    run(mem, "checkout", "-q", "main")
    write_memory(mem, "webhook-retry", title="Webhook retry policy")
    run(mem, "rm", "-q", "memory/postgres-port.md")
    ok(commit_all(mem, "main moves on"))
    run(mem, "checkout", "-q", "topic")
    before = head(mem)
    run(mem, "rebase", "-q", "main")  # post-rewrite
    assert head(mem) != before
    assert_in_line(mem)
    assert ids(mem) == ["deploy-freeze", "kafka-topics", "redis-cache", "webhook-retry"]


def test_commit_amend(mem: str) -> None:
    write_memory(mem, "kafka-topics", title="Kafka topics are per team")
    ok(commit_all(mem, "kafka"))
    write_memory(mem, "kafka-topics", title="Kafka topics belong to billing")
    os.remove(os.path.join(mem, "memory", "deploy-freeze.md"))
    git(mem, "add", "-A")
    run(mem, "commit", "-q", "--amend", "--no-edit")  # post-commit, then post-rewrite
    assert_in_line(mem)
    assert ids(mem) == ["kafka-topics", "postgres-port", "redis-cache"]


def test_revert_and_cherry_pick(mem: str) -> None:
    write_memory(mem, "kafka-topics", title="Kafka topics are per team")
    ok(commit_all(mem, "kafka"))
    run(mem, "revert", "--no-edit", "HEAD")
    assert_in_line(mem)
    assert "kafka-topics" not in ids(mem)
    run(mem, "cherry-pick", "HEAD~1")
    assert_in_line(mem)
    assert "kafka-topics" in ids(mem)


def test_reset_hard_fires_no_hook_and_memrepo_index_catches_up(mem: str) -> None:
    write_memory(mem, "kafka-topics", title="Kafka topics are per team")
    ok(commit_all(mem, "kafka"))
    run(mem, "reset", "-q", "--hard", "HEAD~1")
    # git has no post-reset hook: the cache still holds the memory the reset removed.
    assert "kafka-topics" in ids(mem)
    assert snapshot(mem) != rebuilt(mem)
    assert index.status(mem)["changed_files"] == ["memory/kafka-topics.md"]
    result = CliRunner().invoke(cli, ["--repo", mem, "index"], catch_exceptions=False)
    assert result.exit_code == 0
    assert result.stdout.startswith("updated: 0 added, 0 updated, 1 removed, 3 unchanged, 0 skipped in ")
    assert_in_line(mem)


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.sample(WORDS, n))


class Mixer:
    """A random but reproducible stream of git operations on a memory repository."""

    def __init__(self, repo: str, seed: int) -> None:
        self.repo, self.rng, self.n = repo, random.Random(seed), 0

    def memories(self) -> list[str]:
        return sorted(f[:-3] for f in os.listdir(paths.memory_dir(self.repo)) if f.endswith(".md"))

    def write(self, mid: str) -> None:
        rng = self.rng
        write_memory(self.repo, mid, class_=rng.choice(["rule", "fact", "event", "reference"]),
                     title=f"{_words(rng, 2)} {mid}".capitalize(), description=f"About {_words(rng, 2)}.",
                     topics=rng.sample(WORDS, rng.randint(0, 2)), project=rng.choice([None, "api", "web"]),
                     tech=rng.sample(["Redis", "Postgres", "Kafka", "Git"], rng.randint(0, 2)),
                     entities=rng.sample(["Postgres", "billing-api", "Lisbon office"], rng.randint(0, 1)),
                     updated=f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}", body=f"{_words(rng, 4)}.\n")

    def new_id(self) -> str:
        self.n += 1
        return f"mem-{self.n}"

    def op_add(self) -> None:
        self.write(self.new_id())
        ok(commit_all(self.repo, "add"))

    def op_modify(self) -> None:
        self.write(self.rng.choice(self.memories()))
        ok(commit_all(self.repo, "modify"))

    def op_delete(self) -> None:
        run(self.repo, "rm", "-q", f"memory/{self.rng.choice(self.memories())}.md")
        ok(commit_all(self.repo, "delete"))

    def op_rename(self) -> None:
        old, new = self.rng.choice(self.memories()), self.new_id()
        run(self.repo, "mv", f"memory/{old}.md", f"memory/{new}.md")
        self.write(new)
        ok(commit_all(self.repo, "rename"))

    def op_amend(self) -> None:
        self.write(self.rng.choice(self.memories()))
        git(self.repo, "add", "-A")
        run(self.repo, "commit", "-q", "--amend", "--no-edit")

    def _side_branch(self, commits: int) -> str:
        branch = f"side-{self.n}-{self.rng.randint(0, 10**6)}"
        run(self.repo, "checkout", "-q", "-b", branch)
        for _ in range(commits):
            self.op_add()  # only new files on the branch, so merges never conflict
        run(self.repo, "checkout", "-q", "main")
        return branch

    def op_merge(self) -> None:
        branch = self._side_branch(self.rng.randint(1, 2))
        if self.rng.random() < 0.5:
            self.op_modify()
        run(self.repo, "merge", "-q", "--no-edit", branch)

    def op_rebase(self) -> None:
        branch = self._side_branch(2)
        self.op_modify()
        run(self.repo, "checkout", "-q", branch)
        run(self.repo, "rebase", "-q", "main")
        run(self.repo, "checkout", "-q", "main")
        run(self.repo, "merge", "-q", "--ff-only", branch)

    def depth(self) -> int:
        """How many commits HEAD can step back and still be past `init`."""
        return int(git(self.repo, "rev-list", "--count", "--first-parent", "HEAD").stdout) - 1

    def op_checkout_back(self) -> None:
        run(self.repo, "checkout", "-q", "--detach", f"HEAD~{self.rng.randint(1, min(3, self.depth()))}")
        assert_in_line(self.repo)
        run(self.repo, "checkout", "-q", "main")

    def op_revert(self) -> None:
        merge = git(self.repo, "rev-parse", "-q", "--verify", "HEAD^2", check=False).returncode == 0
        run(self.repo, "revert", "--no-edit", *(["-m", "1"] if merge else []), "HEAD")

    def op_reset(self) -> None:
        run(self.repo, "reset", "-q", "--hard", "HEAD~1")
        index.update(self.repo)  # what `memrepo index` does: no hook fires for reset

    OPS = ("add", "add", "modify", "modify", "delete", "rename", "amend", "merge", "rebase", "checkout_back",
           "revert", "reset")


def test_randomized_sequence_matches_a_rebuild_after_every_step(mem: str) -> None:
    mixer = Mixer(mem, seed=20261129)
    done = []
    for _ in range(30):
        name = mixer.rng.choice(Mixer.OPS)
        if name in ("modify", "delete", "rename", "amend") and len(mixer.memories()) < 2:
            name = "add"
        if name in ("reset", "checkout_back") and mixer.depth() < 2:
            name = "add"
        getattr(mixer, f"op_{name}")()
        done.append(name)
        assert snapshot(mem) == rebuilt(mem), f"after {done}"
        assert not os.path.exists(paths.stale_marker(mem))
        assert index.status(mem)["commit"] == head(mem)
    assert len(set(done)) >= 10, done
    assert len(ids(mem)) >= 3


def _lock_is_a_directory(repo: str) -> None:
    lock = os.path.join(paths.index_dir(repo), ".lock")
    with contextlib.suppress(FileNotFoundError):
        os.remove(lock)
    os.mkdir(lock)


def _unbreak_lock(repo: str) -> None:
    os.rmdir(os.path.join(paths.index_dir(repo), ".lock"))


# (A folder in the cache file's place no longer fails the update: every index writer moves it aside,
# tests/test_faults.py, issue 38.)
@pytest.mark.parametrize(("breaks", "mends", "doctor_says"), [
    (_lock_is_a_directory, _unbreak_lock, ["FAIL index fresh: index marked stale", "     fix: memrepo --repo {repo} index"]),
], ids=["lock-is-a-directory"])
def test_failed_post_commit_exits_0_and_marks_the_index_stale(mem: str, breaks, mends, doctor_says: list[str]) -> None:
    breaks(mem)
    write_memory(mem, "kafka-topics", title="Kafka topics are per team")
    before = head(mem)
    done = commit_all(mem, "kafka")
    assert done.returncode == 0
    assert head(mem) != before  # the commit happened
    lines = done.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("memrepo post-commit: index update failed (")
    assert lines[0].endswith("); marked stale — run `memrepo index --rebuild`")
    with open(paths.stale_marker(mem), encoding="utf-8") as fh:
        assert json.load(fh)["why"].startswith("post-commit: ")
    doctor = CliRunner().invoke(cli, ["--repo", mem, "doctor"], catch_exceptions=False)
    assert doctor.exit_code == 1
    lines = doctor.stdout.splitlines()
    at = lines.index(doctor_says[0])
    assert lines[at:at + 2] == [line.format(repo=mem) for line in doctor_says]
    mends(mem)
    result = CliRunner().invoke(cli, ["--repo", mem, "index", "--rebuild"], catch_exceptions=False)
    assert result.exit_code == 0
    assert not os.path.exists(paths.stale_marker(mem))
    assert_in_line(mem)
    assert CliRunner().invoke(cli, ["--repo", mem, "doctor"], catch_exceptions=False).exit_code == 0


@pytest.mark.parametrize("hook", ["post-commit", "post-merge", "post-checkout", "post-rewrite"])
def test_post_hook_entry_points_exit_0_outside_a_repository(tmp_path: os.PathLike[str], hook: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "memrepo.store.githooks", hook], cwd=str(tmp_path),
                          capture_output=True, text=True, input="")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert os.listdir(str(tmp_path)) == []  # no cache made where there is no memory repository



def test_a_post_hook_gives_up_on_a_held_index_lock_marks_stale_and_exits_0(mem: str) -> None:
    # A live holder (a long rebuild, a stuck process) must not hold the user's `git commit`.
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, sys, time; fh = open(sys.argv[1], 'a'); fcntl.flock(fh, fcntl.LOCK_EX); "
         "print('held', flush=True); time.sleep(120)", os.path.join(paths.index_dir(mem), ".lock")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        write_memory(mem, "while-locked", title="Written while the index was locked")
        git(mem, "add", "-A")
        git(mem, "commit", "-q", "--no-verify", "-m", "add while locked")  # --no-verify: hooks off, run below
        code = ("import sys; from memrepo.store import githooks; githooks.HOOK_LOCK_WAIT = 0.3; "
                "raise SystemExit(githooks.main(['post-commit']))")
        proc = subprocess.run([sys.executable, "-c", code], cwd=mem, capture_output=True, text=True, input="")
    finally:
        holder.kill()
        holder.wait()
    assert proc.returncode == 0
    assert "marked stale" in proc.stderr and "index lock" in proc.stderr
    assert os.path.exists(paths.stale_marker(mem))
    assert "while-locked" not in ids(mem)
    assert CliRunner().invoke(cli, ["--repo", mem, "index"], catch_exceptions=False).exit_code == 0
    assert "while-locked" in ids(mem) and not os.path.exists(paths.stale_marker(mem))
