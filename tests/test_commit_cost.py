"""Commits proportional to the change: pre-commit takes unchanged memories from the cache where
the cache holds that very blob, reads the rest in bounded batches, and post-commit reads only
what the commit changed when the cache recorded its parent. Real `git commit`s through the hooks."""

from __future__ import annotations

import contextlib
import os
import sqlite3

from helpers import commit_all, git, head, write_file, write_memory
from memrepo.recall import paths
from memrepo.store import index


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
    write_memory(repo, "new", status="superseded", superseded_by="old")
    result = commit_all(repo, "new superseded by old")
    assert (result.returncode, result.stderr) == (0, "")


def test_a_cache_without_git_blob_hashes_is_not_read(repo: str) -> None:
    _cycle_setup(repo)
    with _db(repo) as db, db:
        db.execute("UPDATE memories SET superseded_by = 'new' WHERE id = 'old'")
        db.execute("DELETE FROM meta WHERE key = 'hashes'")  # a cache built before the hashes were blob ids
    assert index.blob_facts(repo) == {}
    write_memory(repo, "new", status="superseded", superseded_by="old")
    assert commit_all(repo, "new superseded by old").returncode == 0


def test_the_cache_hash_is_the_git_blob_id(repo: str) -> None:
    write_memory(repo, "one")
    assert commit_all(repo, "one").returncode == 0
    index.rebuild(repo)
    blob = git(repo, "rev-parse", "HEAD:memory/one.md").stdout.strip()
    assert index.blob_facts(repo) == {"memory/one.md": (blob, None)}


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
    result = git(repo, "add", "memory/huge.md")
    result = commit_all(repo, "huge")
    assert result.returncode == 1 and "memory/huge.md:1:" in result.stderr


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
