"""Commits proportional to the change: pre-commit takes unchanged memories from the cache where
the cache holds that very blob, reads the rest in bounded batches, and post-commit reads only
what the commit changed when the cache recorded its parent. Real `git commit`s through the hooks."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import subprocess
import sys

import pytest

from helpers import commit_all, git, head, write_file, write_memory
from memrepo.base import paths
from memrepo.store import cachefacts, index, rows


def _db(repo: str) -> sqlite3.Connection:
    return contextlib.closing(sqlite3.connect(paths.index_db(repo)))  # type: ignore[return-value]


def _cycle_setup(repo: str) -> None:
    write_memory(repo, "old")
    write_memory(repo, "new")
    assert commit_all(repo, "two").returncode == 0
    index.rebuild(repo)  # a cache whose hashes are git blob ids


def test_unchanged_memories_come_from_the_cache_when_it_holds_their_blob(repo: str) -> None:
    _cycle_setup(repo)
    # The cache says `old` (unchanged by the next commit) is superseded by `new`; its blob says not.
    # Pre-commit believes the cache only because the cache holds exactly the staged blob.
    with _db(repo) as db, db:
        db.execute("UPDATE memories SET superseded_by = 'new' WHERE id = 'old'")
    write_memory(repo, "new", status="superseded", superseded_by="old")
    result = commit_all(repo, "new points back at old")
    assert result.returncode == 1 and "supersession cycle: new → old → new" in result.stderr


def test_a_cache_that_holds_another_blob_is_not_believed(repo: str) -> None:
    _cycle_setup(repo)
    with _db(repo) as db, db:
        db.execute("UPDATE memories SET superseded_by = 'new', hash = ? WHERE id = 'old'", ("0" * 40,))
        db.execute("DELETE FROM meta WHERE key = 'synced'")  # not synced: each blob id is compared
    write_memory(repo, "new", status="superseded", superseded_by="old")
    result = commit_all(repo, "new superseded by old")
    assert (result.returncode, result.stderr) == (0, "")


def test_a_cache_without_git_blob_hashes_is_not_read(repo: str) -> None:
    _cycle_setup(repo)
    with _db(repo) as db, db:
        db.execute("UPDATE memories SET superseded_by = 'new' WHERE id = 'old'")
        db.execute("DELETE FROM meta WHERE key IN ('hashes', 'synced')")  # a cache built before the hashes were blob ids
    assert cachefacts.blob_facts(repo) == {}
    write_memory(repo, "new", status="superseded", superseded_by="old")
    assert commit_all(repo, "new superseded by old").returncode == 0


def test_the_cache_hash_is_the_git_blob_id(repo: str) -> None:
    write_memory(repo, "one")
    assert commit_all(repo, "one").returncode == 0
    index.rebuild(repo)
    blob = git(repo, "rev-parse", "HEAD:memory/one.md").stdout.strip()
    assert cachefacts.blob_facts(repo) == {"memory/one.md": (blob, None)}


@pytest.mark.parametrize("hashed", [0, rows.OWN_SHA1_BLOBS])
def test_a_blob_id_is_git_s_before_and_after_hashlib_takes_over(repo: str, hashed: int, monkeypatch) -> None:
    # CPython's own SHA-1 for a process's first blobs (no OpenSSL to load in a lock hold), hashlib's after (issue 44).
    monkeypatch.setattr(rows, "_hashed", [hashed])
    for data in (b"", b"a memory\n", os.urandom(70000)):
        write_file(repo, "blob.bin", data)
        assert rows.blob_id(data) == git(repo, "hash-object", "blob.bin").stdout.strip()


# Which of CPython's own digest modules a process finds: Python 3.12 renamed `_sha256` to `_sha2`
# (this is 3.12's layout on any Python), and a build without them (`--without-builtin-hashlib-hashes`)
# has neither. The journal's, the blob ids' and the recall log's digests are hashlib's in each;
# where CPython's own are there, OpenSSL is not loaded for them (issue 44).
LAYOUTS = {
    "3.12 and later": ("try:\n    import _sha2\nexcept ImportError:\n    import _sha256 as _sha2\n"
                       "sys.modules['_sha2'], sys.modules['_sha256'] = _sha2, None\n"),
    "without CPython's own": "sys.modules.update(dict.fromkeys(('_sha1', '_sha2', '_sha256')))\n",
}
DIGESTS = """
import json, os, sys
{layout}
from memrepo.recall import log
from memrepo.store import rows
from memrepo.vcs import journal
datas = [b"", b"a memory\\n", "naïve ☃ 記憶".encode(), os.urandom(3 * 1024 * 1024 + 7)]
ours = [(journal.digest(d), rows.blob_id(d)) for d in datas] + [log.text_hash("naïve ☃ 記憶")]
openssl = "hashlib" in sys.modules or "_hashlib" in sys.modules
import hashlib
theirs = [(hashlib.sha256(d).hexdigest(), hashlib.sha1(b"blob %d\\0" % len(d) + d).hexdigest()) for d in datas]
theirs += [hashlib.sha256("naïve ☃ 記憶".encode()).hexdigest()[:16]]
print(json.dumps({{"same": ours == theirs, "openssl": openssl}}))
"""


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_digests_are_hashlib_s_whichever_of_cpython_s_own_digest_modules_there_are(layout: str) -> None:
    res = subprocess.run([sys.executable, "-c", DIGESTS.format(layout=LAYOUTS[layout])], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    found = json.loads(res.stdout)
    assert found["same"]
    assert found["openssl"] == (layout == "without CPython's own")


def test_staged_blobs_beyond_what_one_git_process_may_print_are_read_in_batches(repo: str) -> None:
    # 70 committed files of 1,000,000 bytes: 70 MB, more than one git process may print (64 MB).
    filler = "x" * 999_000
    for n in range(70):
        write_file(repo, f"memory/big-{n:02d}.md", f"---\nid: big-{n:02d}\n---\n{filler}\n")
    assert commit_all(repo, "big files", "--no-verify").returncode == 0
    os.remove(paths.index_db(repo))  # no cache: every blob is read
    write_memory(repo, "small", superseded_by="big-07", status="superseded")
    result = commit_all(repo, "small")
    assert result.returncode == 0, result.stderr


def test_a_staged_blob_over_the_file_limit_is_not_read(repo: str) -> None:
    write_file(repo, "memory/huge.md", "---\nid: huge\n---\n" + "y" * (2 * 1024 * 1024) + "\n")
    result = commit_all(repo, "huge")
    assert result.returncode == 1
    assert result.stderr.startswith(f"memory/huge.md:1: is {os.path.getsize(os.path.join(repo, 'memory', 'huge.md')):,} bytes, "
                                    "more than a memory file may hold (1,048,576), so it was not read — ")


def test_post_commit_reads_only_what_the_commit_changed(repo: str) -> None:
    write_memory(repo, "a", description="First words about apples.")
    write_memory(repo, "b", description="First words about bananas.")
    assert commit_all(repo, "two").returncode == 0
    assert index.status(repo)["commit"] == head(repo)
    write_memory(repo, "a", description="Edited on disk, not committed.")  # left out of the next commit
    write_memory(repo, "b", description="Second words about bananas.")
    git(repo, "add", "memory/b.md")
    assert git(repo, "commit", "-q", "-m", "b only").returncode == 0
    with _db(repo) as db:
        rows = dict(db.execute("SELECT id, description FROM memories"))
    assert rows == {"a": "First words about apples.", "b": "Second words about bananas."}
    assert index.status(repo)["changed_files"] == ["memory/a.md"]  # freshness still sees the edit


def test_post_commit_scans_everything_when_the_cache_did_not_record_the_parent(repo: str) -> None:
    write_memory(repo, "a", description="First words about apples.")
    assert commit_all(repo, "one").returncode == 0
    write_memory(repo, "c", description="Committed while the hooks were off.")
    git(repo, "add", "memory/c.md")
    assert git(repo, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "no hooks").returncode == 0
    write_memory(repo, "a", description="Second words about apples.")
    git(repo, "add", "memory/a.md")
    assert git(repo, "commit", "-q", "-m", "a").returncode == 0
    with _db(repo) as db:
        rows = dict(db.execute("SELECT id, description FROM memories"))
    assert rows == {"a": "Second words about apples.", "c": "Committed while the hooks were off."}


def test_a_merge_commit_indexes_what_the_other_side_brought(repo: str) -> None:
    write_memory(repo, "base", description="The base memory.")
    assert commit_all(repo, "base").returncode == 0
    git(repo, "checkout", "-q", "-b", "side")
    write_memory(repo, "theirs", description="Added on the side branch.")
    assert commit_all(repo, "theirs").returncode == 0
    git(repo, "checkout", "-q", "main")
    write_memory(repo, "ours", description="Added on main.")
    assert commit_all(repo, "ours").returncode == 0
    assert git(repo, "merge", "-q", "--no-ff", "--no-commit", "side").returncode == 0
    assert git(repo, "commit", "-q", "-m", "merge side").returncode == 0  # post-commit, on a merge
    with _db(repo) as db:
        ids = sorted(r[0] for r in db.execute("SELECT id FROM memories"))
    assert ids == ["base", "ours", "theirs"]


def test_a_commit_that_changes_tech_or_entities_recomputes_the_tech_words(repo: str) -> None:
    write_memory(repo, "a", tech=["kafka"])
    assert commit_all(repo, "a").returncode == 0

    def techwords() -> list[str]:
        with _db(repo) as db:
            return [r[0] for r in db.execute("SELECT word FROM techwords")]

    assert "kafka" in techwords()
    write_memory(repo, "b", entities=["kafka"])  # now kafka names something here, not just a stack
    assert commit_all(repo, "b").returncode == 0
    assert "kafka" not in techwords()
    write_memory(repo, "b", entities=["zookeeper"], body="An edit elsewhere too.\n")
    assert commit_all(repo, "b again").returncode == 0
    assert "kafka" in techwords()


def _synced(repo: str) -> str | None:
    from memrepo.store import synced

    with _db(repo) as db:
        return synced.read(db)


def test_the_cache_stays_synced_to_each_commit_and_pre_commit_asks_git_what_differs(repo: str) -> None:
    _cycle_setup(repo)
    assert _synced(repo) == head(repo)
    write_memory(repo, "third")
    assert commit_all(repo, "third").returncode == 0
    assert _synced(repo) == head(repo)  # carried by post-commit from the parent
    # the cache is believed for what git says did not change since the synced commit
    with _db(repo) as db, db:
        db.execute("UPDATE memories SET superseded_by = 'new' WHERE id = 'old'")
    write_memory(repo, "new", status="superseded", superseded_by="old")
    result = commit_all(repo, "new points back at old")
    assert result.returncode == 1 and "supersession cycle: new → old → new" in result.stderr


def test_a_commit_of_other_content_than_the_file_holds_drops_the_mark(repo: str) -> None:
    _cycle_setup(repo)
    write_memory(repo, "old", description="Staged words.")
    git(repo, "add", "memory/old.md")
    write_memory(repo, "old", description="Other words on disk.")  # the commit holds what was staged
    assert git(repo, "commit", "-q", "-m", "staged words").returncode == 0
    assert _synced(repo) is None
    # pre-commit still validates the next commit, from the blobs
    write_memory(repo, "new", status="superseded", superseded_by="gone")
    result = commit_all(repo, "dangling")
    assert result.returncode == 1 and "superseded_by names `gone`, which is no memory" in result.stderr


def test_a_full_update_marks_the_cache_synced_only_when_memory_is_clean(repo: str) -> None:
    _cycle_setup(repo)
    write_memory(repo, "old", description="Edited, not committed.")
    index.update(repo)
    assert _synced(repo) is None
    git(repo, "checkout", "--", "memory/old.md")
    index.update(repo)
    assert _synced(repo) == head(repo)


def test_with_a_synced_cache_a_deleted_target_and_a_dangling_name_are_caught(repo: str) -> None:
    write_memory(repo, "new")
    write_memory(repo, "old", status="superseded", superseded_by="new")
    write_memory(repo, "other")
    assert commit_all(repo, "three").returncode == 0
    assert _synced(repo) == head(repo)
    git(repo, "rm", "-q", "memory/new.md")
    result = git(repo, "commit", "-q", "-m", "delete new", check=False)
    assert result.returncode == 1 and "`new`" in result.stderr
    git(repo, "reset", "-q", "--hard")
    write_memory(repo, "other", status="superseded", superseded_by="new")  # an existing target: fine
    assert commit_all(repo, "other by new").returncode == 0
    write_memory(repo, "other", status="superseded", superseded_by="nobody")
    result = commit_all(repo, "other by nobody")
    assert result.returncode == 1 and "superseded_by names `nobody`" in result.stderr


def test_renaming_a_memory_another_points_at_is_caught(repo: str) -> None:
    write_memory(repo, "new")
    write_memory(repo, "old", status="superseded", superseded_by="new")
    assert commit_all(repo, "two").returncode == 0
    git(repo, "mv", "memory/new.md", "memory/newer.md")
    path = os.path.join(repo, "memory", "newer.md")
    text = open(path).read().replace("id: new\n", "id: newer\n", 1)
    write_file(repo, "memory/newer.md", text)  # the same memory under a new name: git sees a rename
    git(repo, "add", "memory/newer.md")
    assert git(repo, "diff", "--cached", "--name-status", "-M").stdout.startswith("R")
    result = git(repo, "commit", "-q", "-m", "rename new", check=False)
    assert result.returncode == 1 and "superseded_by names `new`, which is no memory" in result.stderr


def test_a_cache_synced_to_a_clean_head_is_fresh_without_a_scan(repo: str, monkeypatch) -> None:
    _cycle_setup(repo)

    def no_scan(*args: object) -> None:
        raise AssertionError("scanned every memory file")

    monkeypatch.setattr(cachefacts, "scan", no_scan)  # what update and status would walk memory/ with
    report = index.update(repo)
    assert (report.added, report.updated, report.removed, report.unchanged) == (0, 0, 0, 2)
    assert index.status(repo)["changed_files"] == []


@pytest.mark.parametrize("change", ["edit", "new file", "delete", "stale marker"])
def test_anything_git_or_the_marker_reports_takes_the_full_scan(repo: str, change: str) -> None:
    _cycle_setup(repo)
    if change == "edit":
        write_memory(repo, "old", description="Edited on disk.")
    elif change == "new file":
        write_memory(repo, "third", description="Not committed yet.")
    elif change == "delete":
        os.remove(os.path.join(repo, "memory", "new.md"))
    else:
        index.mark_stale(repo, "a post hook failed")
    assert index.status(repo)["changed_files"] != [] or change == "stale marker"
    report = index.update(repo)
    assert report.unchanged == {"edit": 1, "new file": 2, "delete": 1, "stale marker": 2}[change]  # what a scan saw
    with _db(repo) as db:
        rows = dict(db.execute("SELECT id, description FROM memories"))
    expected = {"edit": {"old": "Edited on disk.", "new": "What new says, in one line."},
                "new file": {"old": "What old says, in one line.", "new": "What new says, in one line.", "third": "Not committed yet."},
                "delete": {"old": "What old says, in one line."},
                "stale marker": {"old": "What old says, in one line.", "new": "What new says, in one line."}}
    assert rows == expected[change]
    info = index.status(repo)
    assert (info["changed_files"], info["stale_marker"]) == ([], False)


def test_doctor_names_the_rebuild_for_a_cache_without_git_blob_hashes(repo: str) -> None:
    from memrepo.store import doctor

    def hashes_line() -> list[str]:
        return [c.detail for c in doctor._index_checks(repo) if c.name == "index hashes"]

    assert hashes_line() == []
    with _db(repo) as db, db:
        db.execute("DELETE FROM meta WHERE key = 'hashes'")
    (line,) = [c for c in doctor._index_checks(repo) if c.name == "index hashes"]
    assert (line.ok, line.warn, line.fix) == (True, True, f"memrepo --repo {repo} index --rebuild")
    index.rebuild(repo)
    assert hashes_line() == []


def test_an_update_by_an_older_memrepo_voids_the_mark(repo: str) -> None:
    _cycle_setup(repo)
    assert _synced(repo) == head(repo)
    # What an older memrepo's update does: rows rewritten from the working tree, whole-second stamp,
    # the `synced` key left as it was.
    write_memory(repo, "old", status="superseded", superseded_by="new")  # on disk, not committed
    digest = hashlib.sha1(open(os.path.join(repo, "memory", "old.md"), "rb").read()).hexdigest()  # the old kind
    with _db(repo) as db, db:
        db.execute("UPDATE memories SET superseded_by = 'new', hash = ? WHERE id = 'old'", (digest,))
        db.execute("UPDATE meta SET value = '1796190000' WHERE key = 'updated_at'")
    assert _synced(repo) is None
    # so pre-commit reads from git, not from rows that describe the working tree
    write_memory(repo, "new", status="superseded", superseded_by="old")
    git(repo, "add", "memory/new.md")
    result = git(repo, "commit", "-q", "-m", "new by old", check=False)
    assert (result.returncode, result.stderr) == (0, "")
