"""Every fault leaves a state `doctor` names and a fix that works (issue 15).

Each test really breaks something — overwrites index pages, drops a table, kills a process
group with SIGKILL mid-commit, leaves a lock, deletes `index/` — then asserts that `memrepo
doctor` names the state, runs the fix it names (parsed from its own output), and checks that
doctor is clean, the index equals a fresh rebuild, and `git fsck` is clean.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from typing import Any, Iterator

import pytest

from helpers import IDENTITY, ROOT, build_template, commit_all, copy_template, git, head, memory_text, write_file, write_memory
from memrepo.base import paths
from memrepo.store import doctor, index
from memrepo.vcs import commit

FAKE_MODEL = os.path.join(ROOT, "tests", "fake", "fakemodel.py")
CAPTURE_DATA = os.path.join(ROOT, "tests", "data", "capture")
RUN = "2026-11-30T09-00-00-verify"


def memrepo(repo: str, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memrepo", "--repo", repo, *args], capture_output=True, text=True,
                          timeout=300, **kw)


def failing(repo: str) -> dict[str, Any]:
    """Doctor's failing checks (and warnings), by name: {name: check}."""
    return {c.name: c for c in doctor.run(repo) if not c.ok or c.warn}


def run_fix(fix: str) -> None:
    """Run the commands a fix names (`a && b`), before any "(…)" aside or ", then …"."""
    for command in fix.split(" (", 1)[0].split(", then", 1)[0].strip().strip("`").split(" && "):
        argv = shlex.split(command)
        if argv[0] == "memrepo":
            argv = [sys.executable, "-m", "memrepo", *argv[1:]]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, (argv, proc.stdout, proc.stderr)


def rows(db_path: str) -> list[tuple[Any, ...]]:
    with contextlib.closing(sqlite3.connect(db_path)) as db:
        memories = db.execute("SELECT m.id, m.path, m.hash, f.title, f.body FROM memories m JOIN fts f ON f.rowid = m.rowid "
                              "ORDER BY m.id").fetchall()
        return memories + db.execute("SELECT path, problem FROM skipped ORDER BY path").fetchall()


def assert_healthy(repo: str, tmp_path: Any) -> None:
    """Doctor clean, the live index equal to a fresh build, git fsck clean."""
    assert failing(repo) == {}
    fresh = str(tmp_path / f"fresh-{time.monotonic_ns()}.sqlite3")
    index._build(repo, fresh, index.Report(), None)
    assert rows(paths.index_db(repo)) == rows(fresh)
    fsck = subprocess.run(["git", "fsck", "--no-progress"], cwd=repo, capture_output=True, text=True)
    assert fsck.returncode == 0 and "error" not in fsck.stderr + fsck.stdout, fsck.stderr


def _forty_memories(repo: str) -> None:
    for i in range(40):
        write_memory(repo, f"note-{i:02d}", title=f"Deploy note {i}", description=f"How deploy step {i} works.",
                     body=("Step details. " * 30) + "\n")
    assert commit_all(repo, "forty memories").returncode == 0
    with contextlib.closing(sqlite3.connect(paths.index_db(repo))) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


@pytest.fixture(scope="module")
def store_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Forty memories committed through the hooks, once per module (~1 s a test before)."""
    return build_template(tmp_path_factory, _forty_memories, identity=IDENTITY)


@pytest.fixture
def store(store_template: str, tmp_path: Any) -> str:
    """A private copy of `store_template`: every test here breaks its store."""
    return copy_template(store_template, tmp_path)


def overwrite_pages(db_path: str, first: int, count: int, byte: bytes = b"\xa5") -> None:
    size, page = os.path.getsize(db_path), 4096
    with open(db_path, "r+b") as fh:
        for n in range(first, first + count):
            if n * page < size:
                fh.seek(n * page)
                fh.write(byte * page)


# -- the index -----------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["middle", "last", "header"])
def test_page_level_damage_is_named_and_rebuilt(store: str, tmp_path: Any, where: str) -> None:
    db_path = paths.index_db(store)
    pages = os.path.getsize(db_path) // 4096
    first = {"middle": pages // 2, "last": pages - 1, "header": 0}[where]
    overwrite_pages(db_path, first, 2 if where == "middle" else 1, b"\x00" if where == "header" else b"\xa5")
    check = failing(store)["index"]
    assert check.detail.startswith(("index is damaged:", "index is unreadable or corrupt")), check.detail
    assert check.fix == f"memrepo --repo {store} index --rebuild"
    run_fix(check.fix)
    assert_healthy(store, tmp_path)


@pytest.mark.parametrize("damage, named", [
    ("DROP TABLE fts", "index is damaged: table fts missing"),
    ("DELETE FROM memories WHERE rowid % 2 = 0", "index is damaged: rows missing: the memories table and the full-text "
                                                 "table disagree"),
])
def test_a_missing_table_or_half_the_rows_is_named_and_any_index_command_repairs_it(store: str, tmp_path: Any,
                                                                                     damage: str, named: str) -> None:
    with contextlib.closing(sqlite3.connect(paths.index_db(store))) as db:
        db.execute(damage)
        db.commit()
    check = failing(store)["index"]
    assert (check.detail, check.fix) == (named, f"memrepo --repo {store} index --rebuild")
    plain = memrepo(store, "index")  # the update falls back to a rebuild on a DatabaseError
    assert plain.returncode == 0 and plain.stdout.startswith("rebuilt: 40 added"), plain.stdout + plain.stderr
    assert_healthy(store, tmp_path)


def test_a_crash_between_the_rebuilds_replace_and_its_wal_leaves_no_mismatched_pair(store: str, tmp_path: Any) -> None:
    db_path = paths.index_db(store)
    with open(db_path + "-wal", "wb") as fh:
        fh.write(b"\x37\x7f\x06\x82" + b"\x00" * 4092)  # the old file's WAL, as a crash leaves it
    overwrite_pages(db_path, 0, 1, b"\x00")  # unreadable: the rebuild must rename its build into place
    killer = ("import os, sys\nfrom memrepo.store import index\nreal = os.replace\n"
              "def replace(src, dst):\n    if dst.endswith(" + repr(paths.INDEX_FILE) + "):\n        os._exit(9)\n    return real(src, dst)\n"
              "os.replace = replace\nindex.rebuild(sys.argv[1])\n")
    proc = subprocess.run([sys.executable, "-c", killer, store], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 9, proc.stderr
    assert not os.path.exists(db_path + "-wal")  # removed before the replace, never paired with the new file
    check = failing(store)["index"]
    assert check.fix == f"memrepo --repo {store} index --rebuild"
    run_fix(check.fix)
    assert_healthy(store, tmp_path)


def test_a_deleted_index_folder_gets_its_gitignore_back_before_the_cache(store: str, tmp_path: Any) -> None:
    subprocess.run(["rm", "-rf", paths.index_dir(store)], check=True)
    names = failing(store)
    assert "index/.gitignore is missing, so `git add -A` would commit the cache" in names["index folder"].detail
    run_fix(names["index folder"].fix)
    git(store, "add", "-A")
    assert git(store, "status", "--porcelain").stdout == ""  # neither the cache nor the recall log is staged
    assert_healthy(store, tmp_path)


def test_a_file_where_the_index_folder_should_be_is_moved_aside(store: str, tmp_path: Any) -> None:
    subprocess.run(["rm", "-rf", paths.index_dir(store)], check=True)
    write_file(store, "index", "not a folder\n")
    check = failing(store)["index folder"]
    assert check.detail == "index is a file, not a folder, so the cache cannot be written"
    run_fix(check.fix)
    aside = [n for n in os.listdir(store) if n.startswith("index.moved-aside-")]
    assert len(aside) == 1 and open(os.path.join(store, aside[0])).read() == "not a folder\n"  # nothing deleted
    assert_healthy(store, tmp_path)


def test_a_full_disk_names_its_fix_instead_of_a_traceback(store: str, tmp_path: Any) -> None:
    """RLIMIT_FSIZE stands in for a full disk: every write past it fails with EFBIG, as ENOSPC would."""
    def small_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 1024, 16 * 1024))

    proc = memrepo(store, "index", "--rebuild", preexec_fn=small_disk)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert f"cannot write the cache in {paths.index_dir(store)}" in proc.stderr
    # SQLite reports the failed write as "disk I/O error", as it does for several causes.
    assert (f"hint: check the disk holding {paths.index_dir(store)} (it may be full, read-only or failing), "
            f"then run `memrepo --repo {store} index`") in proc.stderr
    assert_healthy(store, tmp_path)  # the live cache was never touched: the build went to a temp file
    assert memrepo(store, "index", "--rebuild").returncode == 0


FULL_DISK = """set -u
umask 077
cp -a "$INDEX" "$WORK/backup"
mount -t tmpfs -o size=4m memrepo-test "$INDEX" || exit 77
cp -a "$WORK/backup/." "$INDEX/"
dd if=/dev/zero of="$INDEX/filler" bs=4k count=1100 2>/dev/null
$MEMREPO index --rebuild > "$WORK/out" 2> "$WORK/err"; echo $? > "$WORK/rc"
$MEMREPO doctor --json > "$WORK/doctor-full.json"
rm "$INDEX/filler"
$MEMREPO index --rebuild > "$WORK/out2" 2>&1; echo $? > "$WORK/rc2"
$MEMREPO doctor --json > "$WORK/doctor-after.json"
"""


def test_a_really_full_disk_is_named_and_freeing_space_is_the_fix(store: str, tmp_path: Any) -> None:
    """index/ on a 4 MiB tmpfs in a private mount namespace, filled up: ENOSPC, not a stand-in."""
    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("no mount namespaces here (unshare -m needs root)")
    work = str(tmp_path)
    env = dict(os.environ, INDEX=paths.index_dir(store), WORK=work,
               MEMREPO=f"{shlex.quote(sys.executable)} -m memrepo --repo {shlex.quote(store)}")
    ran = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", FULL_DISK], env=env,
                         capture_output=True, text=True, timeout=300)
    if ran.returncode == 77:
        pytest.skip("tmpfs cannot be mounted here")
    read = lambda name: open(os.path.join(work, name), encoding="utf-8").read()  # noqa: E731
    assert read("rc").strip() == "1" and "Traceback" not in read("err"), read("err")
    assert f"hint: free some space on the disk holding {paths.index_dir(store)}, then run `memrepo --repo {store} index`" \
        in read("err")
    full = {c["name"]: c for c in json.loads(read("doctor-full.json"))}
    assert full["index folder"]["detail"] == "index/ cannot be written (No space left on device)"
    assert full["index folder"]["fix"].startswith(f"free some space on the disk holding {paths.index_dir(store)}")
    # (SQLite can't open a WAL database for reading without room for its -shm: the index check may fail
    # too, and its fix waits on this one.)
    assert read("rc2").strip() == "0", read("out2")
    # (the model command and Claude Code's wiring are this machine's, not the disk's)
    assert [c for c in json.loads(read("doctor-after.json")) if (not c["ok"] or c["warn"])
            and not c["name"].startswith(("claude", "model"))] == []
    assert_healthy(store, tmp_path)  # and outside the namespace, the folder as it was


@contextlib.contextmanager
def read_only(folder: str) -> Iterator[None]:
    """`folder` unwritable for this user: mode 0500, or for root (whom modes don't stop) the immutable flag."""
    if os.geteuid() != 0:
        os.chmod(folder, 0o500)
        try:
            yield
        finally:
            os.chmod(folder, 0o700)
        return
    if subprocess.run(["chattr", "+i", folder], capture_output=True).returncode != 0:
        pytest.skip("root, and this file system has no immutable flag")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", folder], check=True)


def refusal_fix(folder: str) -> str:
    """The command that makes `folder` writable again, as doctor names it: root writes through any
    mode, so what stops it is the immutable flag `read_only` sets."""
    return f"chattr -i -a {folder}" if os.geteuid() == 0 else f"chmod -R u+rwX {folder}"


def test_a_read_only_index_folder_is_named_with_a_fix_that_works(store: str, tmp_path: Any) -> None:
    with read_only(paths.index_dir(store)):
        check = failing(store)["index folder"]
        assert check.detail.startswith("index/ cannot be written (")
        assert check.fix == f"{refusal_fix(paths.index_dir(store))} && memrepo --repo {store} index"
        proc = memrepo(store, "index", "--rebuild")
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert f"cannot write the cache in {paths.index_dir(store)}" in proc.stderr
        assert f"hint: {check.fix}" in proc.stderr
        run_fix(check.fix)  # inside the read-only context: the fix itself makes it writable
        assert_healthy(store, tmp_path)


def without_wal(repo: str) -> None:
    """The cache as the last writer leaves it: SQLite removes -wal and -shm when its last connection closes."""
    with contextlib.closing(sqlite3.connect(paths.index_db(repo))) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert not os.path.exists(paths.index_db(repo) + "-wal")


def test_a_read_only_index_folder_still_recalls_and_logs_nothing(store: str, tmp_path: Any) -> None:
    """Issue 38: SQLite could not make the -shm file a WAL reader needs, so recall failed on every prompt
    and doctor added "unreadable or corrupt → --rebuild", a rebuild that cannot write either."""
    write_memory(store, "billing-vacuum", class_="fact", title="Autovacuum is off on the billing Postgres database",
                 description="Billing's Postgres runs VACUUM from a nightly cron job instead.", topics=["autovacuum"])
    assert commit_all(store, "billing").returncode == 0
    without_wal(store)
    log = paths.recall_log(store)
    with contextlib.suppress(FileNotFoundError):
        os.remove(log)
    prompt = json.dumps({"session_id": "s-1", "transcript_path": "", "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit",
                         "prompt": "why is autovacuum off on the billing postgres database?"})
    with read_only(paths.index_dir(store)):
        proc = subprocess.run(["sh", os.path.join(ROOT, "hooks", "run"), "user_prompt_submit"], input=prompt, text=True,
                              capture_output=True, timeout=60, env=dict(os.environ, MEMREPO_DIR=store, MEMREPO_PYTHON=sys.executable))
        assert (proc.returncode, proc.stderr) == (0, "")
        assert "(id: billing-vacuum)" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
        assert not os.path.exists(log)  # read without writing its log
        names = failing(store)
        assert "index" not in names  # the cache is whole: only the folder is named
        run_fix(names["index folder"].fix)
    assert_healthy(store, tmp_path)


def test_a_folder_in_the_cache_files_place_is_moved_aside_by_the_fix(store: str, tmp_path: Any) -> None:
    """Issue 38: doctor named it "unreadable or corrupt" and its rebuild failed "Is a directory", blaming the disk."""
    db_path = paths.index_db(store)
    without_wal(store)
    os.remove(db_path)
    write_file(db_path, "kept.txt", "someone's file\n")
    check = failing(store)["index"]
    rel = f"index/{paths.INDEX_FILE}"
    assert (check.detail, check.fix) == (f"{rel} is a folder, not the cache file", f"memrepo --repo {store} index --rebuild "
                                         f"(it moves it aside as {rel}.moved-aside-<time>, deleting nothing, and builds the cache)")
    run_fix(check.fix)
    aside = [n for n in os.listdir(paths.index_dir(store)) if n.startswith(paths.INDEX_FILE + ".moved-aside-")]
    assert len(aside) == 1 and open(os.path.join(paths.index_dir(store), aside[0], "kept.txt")).read() == "someone's file\n"
    assert_healthy(store, tmp_path)


def test_a_folder_in_the_cache_files_place_is_moved_aside_by_the_next_commit(store: str, tmp_path: Any) -> None:
    os.remove(paths.index_db(store))
    os.mkdir(paths.index_db(store))
    write_memory(store, "kafka-topics", title="Kafka topics are per team")
    done = commit_all(store, "kafka")
    assert done.returncode == 0 and "was a folder, not the cache file; moved it to" in done.stderr, done.stderr
    assert_healthy(store, tmp_path)


def add(repo: str, title: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    """`memrepo add` of a memory of about 27 KB (the file size limit below stops it, not git's index)."""
    return memrepo(repo, "add", "--title", title, "--description", f"{title}, in one line.", "--class", "fact",
                   "--body", "Details. " * 3000, **kw)


def test_add_over_a_file_size_limit_names_the_fault_and_loses_nothing(store: str, tmp_path: Any) -> None:
    """RLIMIT_FSIZE (EFBIG) stands in for a full disk: `add` exited 3 with a traceback, whose own log
    could not be written either (issue 38)."""
    def small_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (16 * 1024, 16 * 1024))

    before = head(store)
    proc = add(store, "Billing runs VACUUM nightly", preexec_fn=small_disk)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and "unexpected" not in proc.stderr, proc.stderr
    assert f"cannot write in {store}: File too large: a file size limit stops the write" in proc.stderr
    assert "hint: raise the file size limit (`ulimit -f unlimited`)" in proc.stderr
    assert head(store) == before and git(store, "status", "--porcelain").stdout == ""
    assert_healthy(store, tmp_path)
    assert add(store, "Billing runs VACUUM nightly").returncode == 0


FULL_MEMORY = """set -u
cp -a "$MEM" "$WORK/backup"
mount -t tmpfs -o size=1m memrepo-test "$MEM" || exit 77
cp -a "$WORK/backup/." "$MEM/"
dd if=/dev/zero of="$MEM/filler" bs=4k count=300 2>/dev/null
$MEMREPO add --title "Billing runs VACUUM nightly" --description "In one line." --class fact --body "$BODY" \
    > "$WORK/out" 2> "$WORK/err"; echo $? > "$WORK/rc"
$MEMREPO doctor --json > "$WORK/doctor-full.json"
rm "$MEM/filler"
$MEMREPO add --title "Billing runs VACUUM nightly" --description "In one line." --class fact --body "$BODY" \
    > "$WORK/out2" 2>&1; echo $? > "$WORK/rc2"
"""


def test_add_on_a_really_full_disk_names_the_fault_and_freeing_space_is_the_fix(store: str, tmp_path: Any) -> None:
    """memory/ on a 1 MiB tmpfs in a private mount namespace, filled up: ENOSPC, not a stand-in."""
    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("no mount namespaces here (unshare -m needs root)")
    work, mem, before = str(tmp_path), paths.memory_dir(store), head(store)
    env = dict(os.environ, MEM=mem, WORK=work, BODY="Details. " * 3000,
               MEMREPO=f"{shlex.quote(sys.executable)} -m memrepo --repo {shlex.quote(store)}")
    ran = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", FULL_MEMORY], env=env,
                         capture_output=True, text=True, timeout=300)
    if ran.returncode == 77:
        pytest.skip("tmpfs cannot be mounted here")
    read = lambda name: open(os.path.join(work, name), encoding="utf-8").read()  # noqa: E731
    assert read("rc").strip() == "1" and "Traceback" not in read("err") and "unexpected" not in read("err"), read("err")
    assert "No space left on device: the disk is full" in read("err")
    assert "hint: free some space on the disk holding" in read("err")
    full = {c["name"]: c for c in json.loads(read("doctor-full.json"))}
    assert full["repository writable"]["detail"] == ("memory/ cannot be written (No space left on device): the disk is "
                                                     "full, so no memory can be added or changed")
    assert full["repository writable"]["fix"] == f"free some space on the disk holding {mem}"
    assert read("rc2").strip() == "0", read("out2")  # space freed: the same add goes through
    assert git(store, "rev-list", "--count", f"{before}..HEAD").stdout.strip() == "1"  # one commit, the second add's
    git(store, "checkout", "--", "memory")  # outside the namespace, memory/ is the folder as it was
    assert memrepo(store, "index").returncode == 0
    assert_healthy(store, tmp_path)


@pytest.mark.parametrize("folder", ["memory", ".git"])
def test_add_in_a_read_only_repository_names_the_fault_and_doctors_fix_works(store: str, tmp_path: Any, folder: str) -> None:
    where = os.path.join(store, folder)
    before = head(store)
    with read_only(where):
        proc = add(store, "Billing runs VACUUM nightly")
        assert proc.returncode == 1 and "Traceback" not in proc.stderr and "unexpected" not in proc.stderr, proc.stderr
        assert f"Error: cannot write {where}/" in proc.stderr
        assert f"hint: {refusal_fix(where)}, then run the command again" in proc.stderr
        assert head(store) == before and git(store, "status", "--porcelain").stdout == ""
        check = failing(store)["repository writable"]
        assert check.detail.startswith(f"{folder}/ cannot be written (")
        assert check.detail.endswith("so no memory can be added or changed")
        assert check.fix == refusal_fix(where)
        run_fix(check.fix)
        assert add(store, "Billing runs VACUUM nightly").returncode == 0
    assert_healthy(store, tmp_path)


# -- git state -----------------------------------------------------------------------------

def slow_pre_commit(repo: str, marker: str) -> str:
    """The clone's pre-commit hook, made to signal and then hang, so a commit can be killed inside it;
    returns the real hook's text."""
    where = os.path.join(repo, git(repo, "rev-parse", "--git-path", "hooks").stdout.strip(), "pre-commit")
    with open(where) as fh:
        real = fh.read()
    with open(where, "w") as fh:
        fh.write(f"#!/bin/sh\nsleep 120 &\ntouch {marker}\nwait\n")  # the sleep exists before the marker
    os.chmod(where, 0o755)
    return real


@contextlib.contextmanager
def killed_in_pre_commit(repo: str, tmp_path: Any, argv: list[str], env: dict[str, str] | None = None) -> Iterator[None]:
    """Start `argv` in its own process group, SIGKILL the group once its commit is in pre-commit."""
    marker = str(tmp_path / "in-pre-commit")
    real = slow_pre_commit(repo, marker)
    proc = subprocess.Popen(argv, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=dict(os.environ, **(env or {})))
    deadline = time.monotonic() + 120
    while not os.path.exists(marker):
        assert proc.poll() is None and time.monotonic() < deadline, "the commit never reached pre-commit"
        time.sleep(0.02)
    tree = descendants(proc.pid)  # memrepo runs git in sessions of its own: kill them all, as a cgroup stop does
    for pid in tree:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGSTOP)  # freeze first, so nothing finishes between two kills
    for pid in tree:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    proc.wait()
    hook = os.path.join(repo, git(repo, "rev-parse", "--git-path", "hooks").stdout.strip(), "pre-commit")
    with open(hook, "w") as fh:
        fh.write(real)  # the real shim again, for the commits after the fix
    yield


def descendants(top: int) -> list[int]:
    """`top` and every process below it."""
    out = subprocess.run(["ps", "-eo", "pid=,ppid="], capture_output=True, text=True, check=True).stdout
    children: dict[int, list[int]] = {}
    for line in out.splitlines():
        pid, ppid = map(int, line.split())
        children.setdefault(ppid, []).append(pid)
    found, todo = [], [top]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def minute_ago(path: str) -> None:
    past = time.time() - 60  # as if a minute passed: a lock git left that long ago is a dead git's
    os.utime(path, (past, past))


def index_lock(repo: str) -> str:
    return os.path.join(repo, git(repo, "rev-parse", "--git-path", "index.lock").stdout.strip())


def test_kill_9_during_undo_leaves_no_revert_state_and_recover_fixes_it(store: str, tmp_path: Any) -> None:
    note = memory_text("note-00", title="Deploy note 0", description="Stamped by a run.", body="Stamped.\n")
    commit.commit_files(store, {"memory/note-00.md": note}, "verify: restamp 1 memory", {"Action": "verify", "Run": RUN})
    before = head(store)
    with killed_in_pre_commit(store, tmp_path, [sys.executable, "-m", "memrepo", "--repo", store, "undo", RUN]):
        pass
    assert head(store) == before
    for name in ("REVERT_HEAD", "sequencer"):  # the revert was built in a temporary index
        assert not os.path.exists(os.path.join(store, ".git", name))
    # The commit was of memrepo's own index (vcs/staging.py), which `git commit` has written and
    # let go of before its hooks run: a kill in pre-commit leaves no index lock at all.
    for name in ("index.lock", "memrepo-index.lock"):
        assert not os.path.exists(os.path.join(store, ".git", name))
    names = failing(store)
    assert "git operation" not in names and "git index lock" not in names
    assert names["interrupted commit"].fix == f"memrepo --repo {store} recover"
    run_fix(names["interrupted commit"].fix)
    assert_healthy(store, tmp_path)
    undone = memrepo(store, "undo", RUN)
    assert undone.returncode == 0, (undone.stderr, git(store, "log", "--oneline").stdout, git(store, "status").stdout)
    assert "Stamped" not in open(paths.note_path(store, "note-00")).read()
    assert_healthy(store, tmp_path)


def test_kill_9_while_undo_builds_its_revert_leaves_nothing_to_fix(store: str, tmp_path: Any) -> None:
    """Killed while git computes the revert (`git apply`, or `git revert` as undo once ran it), undo left
    a half revert, REVERT_HEAD and sequencer state; now it builds the revert in a temporary index."""
    note = memory_text("note-00", title="Deploy note 0", description="Stamped by a run.", body="Stamped.\n")
    commit.commit_files(store, {"memory/note-00.md": note}, "verify: restamp 1 memory", {"Action": "verify", "Run": RUN})
    before = head(store)
    real_git = subprocess.run(["sh", "-c", "command -v git"], capture_output=True, text=True).stdout.strip()
    marker = str(tmp_path / "in-revert")
    shim = write_file(str(tmp_path), "bin/git", f"#!/bin/sh\ncase \"$1\" in apply|revert) sleep 120 & touch {marker}; wait;; esac\n"
                                              f"exec {real_git} \"$@\"\n")
    os.chmod(shim, 0o755)
    env = {"PATH": os.path.dirname(shim) + os.pathsep + os.environ["PATH"]}
    proc = subprocess.Popen([sys.executable, "-m", "memrepo", "--repo", store, "undo", RUN], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ, **env))
    deadline = time.monotonic() + 120
    while not os.path.exists(marker):
        assert proc.poll() is None and time.monotonic() < deadline, "undo never reached the revert"
        time.sleep(0.02)
    tree = descendants(proc.pid)
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        for pid in tree:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
    proc.wait()
    assert head(store) == before and git(store, "status", "--porcelain").stdout == ""
    assert_healthy(store, tmp_path)  # nothing to name: nothing was touched
    assert memrepo(store, "undo", RUN).returncode == 0
    assert_healthy(store, tmp_path)


def test_a_revert_left_unfinished_by_hand_is_named_with_its_abort(store: str, tmp_path: Any) -> None:
    write_memory(store, "note-01", title="Deploy note 1", description="Changed by hand.")
    assert commit_all(store, "hand edit").returncode == 0
    git(store, "revert", "--no-commit", "HEAD")
    check = failing(store)["git operation"]
    assert check.detail.startswith("a revert was left unfinished")
    assert check.fix.startswith(f"git -C {store} revert --abort && memrepo --repo {store} index")
    run_fix(check.fix)
    assert_healthy(store, tmp_path)


def test_a_capture_worker_killed_with_its_group_in_pre_commit_loses_nothing(repo: str, tmp_path: Any) -> None:
    transcript = str(tmp_path / "7c0ffee0-1111-4222-8333-444455556666.jsonl")
    with open(os.path.join(CAPTURE_DATA, "refute-part1.jsonl"), encoding="utf-8") as src, open(transcript, "w") as dst:
        dst.write(src.read())
    env = {"MEMREPO_MODEL_CMD": f"{sys.executable} {FAKE_MODEL}", "FAKE_MODEL_RULES": os.path.join(CAPTURE_DATA, "refute-rules.json")}
    with killed_in_pre_commit(repo, tmp_path, [sys.executable, "-m", "memrepo", "--repo", repo, "capture", transcript], env):
        pass
    staged = git(repo, "diff", "--cached", "--name-only").stdout.split()
    assert "memory/staging-502s-come-nginx-proxy-timeout.md" in staged  # staged, in no commit
    assert not os.path.exists(index_lock(repo))  # memrepo's own index was committed, and let go before the hook
    names = failing(repo)
    assert {"interrupted commit", "uncommitted changes"} <= set(names) and "git index lock" not in names
    run_fix(names["interrupted commit"].fix)
    assert_healthy(repo, tmp_path)
    again = memrepo(repo, "capture", transcript, env=dict(os.environ, **env))
    assert again.returncode == 0, again.stderr
    assert os.path.exists(paths.note_path(repo, "staging-502s-come-nginx-proxy-timeout"))  # not deduplicated away
    assert "staging-502s-come-nginx-proxy-timeout" in git(repo, "log", "--name-only", "-1").stdout
    assert_healthy(repo, tmp_path)


def test_a_stale_index_lock_is_named_and_a_live_one_is_not(store: str, tmp_path: Any) -> None:
    lock = index_lock(store)
    open(lock, "w").close()
    assert "git index lock" not in failing(store)  # just made: a git may be running
    minute_ago(lock)
    check = failing(store)["git index lock"]
    assert check.detail == f"{lock} was left by a git that is no longer running, so every commit fails"
    run_fix(check.fix)
    assert not os.path.exists(lock)
    assert_healthy(store, tmp_path)


def test_changes_a_pass_staged_but_never_committed_are_named(store: str, tmp_path: Any) -> None:
    write_memory(store, "orphan", title="Captured then interrupted", description="Written and staged, never committed.")
    git(store, "add", "memory/orphan.md")
    check = failing(store)["uncommitted changes"]
    assert (check.ok, check.detail) == (False, "staged but in no commit: memory/orphan.md")
    assert check.fix.startswith(f"commit them (`git -C {store} commit`)")
    git(store, "commit", "-q", "-m", "the orphan, committed")
    assert_healthy(store, tmp_path)


def test_conflict_markers_are_named_as_an_unfinished_merge(store: str, tmp_path: Any) -> None:
    base = git(store, "rev-parse", "--abbrev-ref", "HEAD").stdout.strip()
    git(store, "checkout", "-q", "-b", "theirs")
    write_memory(store, "note-02", title="Deploy note 2", description="Their version of step 2.")
    assert commit_all(store, "theirs").returncode == 0
    git(store, "checkout", "-q", base)
    write_memory(store, "note-02", title="Deploy note 2", description="Our version of step 2.")
    assert commit_all(store, "ours").returncode == 0
    # git's own text merge, as a clone without memrepo's merge driver would do it: markers in the file.
    merged = git(store, "-c", "merge.memrepo.driver=git merge-file -L ours -L base -L theirs %A %O %B",
                 "merge", "-q", "--no-edit", "theirs", check=False)
    assert merged.returncode != 0
    names = failing(store)
    assert names["git operation"].detail.startswith("a merge was left unfinished")
    assert "memory/note-02.md:" in names["memory files"].detail
    assert "holds git conflict markers (`<<<<<<<`, `=======`, `>>>>>>>`): a merge was left unfinished" in names["memory files"].detail
    assert "quote the value" not in names["memory files"].detail
    run_fix(names["git operation"].fix)
    assert_healthy(store, tmp_path)
    assert json.loads(json.dumps([c.as_dict() for c in doctor.run(store)]))  # and --json still renders
