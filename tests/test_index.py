"""The FTS5 cache: rebuild, schema check, damage repair, status facts, malformed files."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sqlite3

import pytest

from memrepo.errors import CacheError
from click.testing import CliRunner
from helpers import build_template, commit_all, git, head, memory_text, write_file, write_memory

from memrepo.store import index
from memrepo.base import paths
from memrepo.recall import rank
from memrepo.cli.main import cli


def _db(repo: str) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{paths.index_db(repo)}?mode=ro", uri=True)


def _ids(repo: str, *terms: str) -> list[str]:
    with contextlib.closing(_db(repo)) as db:
        return [h.id for h in rank.rank(db, [(t, 1.0) for t in terms], floors=False, limit=20)]


def _count(repo: str) -> int:
    with contextlib.closing(_db(repo)) as db:
        return int(db.execute("SELECT count(*) FROM memories").fetchone()[0])


def _user_version(repo: str) -> int:
    with contextlib.closing(_db(repo)) as db:
        return int(db.execute("PRAGMA user_version").fetchone()[0])


def _meta(repo: str) -> dict[str, str]:
    with contextlib.closing(_db(repo)) as db:
        return dict(db.execute("SELECT key, value FROM meta"))


def _make_two(repo: str) -> None:
    write_memory(repo, "deploy-freeze", title="No deploys on Friday", description="Production deploys freeze on Fridays.",
                 class_="rule", topics=["deploy"], body="Ask in #ops for an exception.\n")
    write_memory(repo, "postgres-port", title="Postgres listens on 5433", description="The dev database port.",
                 entities=["postgres"], body="Not the default port.\n")
    assert commit_all(repo, "two memories").returncode == 0


@pytest.fixture(scope="module")
def two_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Built once per module (init and commits run real hooks, ~1 s); each test gets a copy."""
    def setup(path: str) -> None:
        _make_two(path)

    return build_template(tmp_path_factory, setup)


@pytest.fixture
def two(two_template: str, tmp_path: os.PathLike[str]) -> str:
    """A repository with two committed, indexed memories (a copy: stat times are kept, so the cache is fresh)."""
    path = os.path.join(str(tmp_path), "mem")
    shutil.copytree(two_template, path, symlinks=True)
    return path


def test_rebuild_then_search_finds(two: str) -> None:
    report = index.rebuild(two)
    assert (report.added, report.updated, report.removed, report.skipped, report.rebuilt) == (2, 0, 0, [], True)
    assert _ids(two, "friday") == ["deploy-freeze"]
    assert _ids(two, "postgres") == ["postgres-port"]
    assert _ids(two, "port") == ["postgres-port"]
    assert _ids(two, "deploys") == ["deploy-freeze"]  # porter stemming
    assert _ids(two, "kubernetes") == []


def test_schema_version_is_in_user_version(two: str) -> None:
    index.rebuild(two)
    assert _user_version(two) == index.SCHEMA_VERSION >= 1
    assert index.schema_version(paths.index_db(two)) == index.SCHEMA_VERSION


def _other_version(db_path: str) -> None:
    with contextlib.closing(sqlite3.connect(db_path)) as db:
        db.execute("PRAGMA user_version = 99")


def _garbage(db_path: str) -> None:
    with open(db_path, "wb") as fh:
        fh.write(b"this is not a sqlite database\x00\xff" * 200)


def _empty(db_path: str) -> None:
    open(db_path, "wb").close()


def _other_schema(db_path: str) -> None:
    os.remove(db_path)
    with contextlib.closing(sqlite3.connect(db_path)) as db:
        db.execute("CREATE TABLE something(x)")
        db.execute(f"PRAGMA user_version = {index.SCHEMA_VERSION}")


def _missing(db_path: str) -> None:
    os.remove(db_path)


DAMAGE = {"other-user-version": _other_version, "garbage-bytes": _garbage, "empty-file": _empty,
          "tables-missing": _other_schema, "missing": _missing}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_update_rebuilds_a_damaged_cache(two: str, damage: str) -> None:
    DAMAGE[damage](paths.index_db(two))
    # Only a cache whose tables are all there still reads as a version; every other damage reads as none.
    assert index.schema_version(paths.index_db(two)) == (99 if damage == "other-user-version" else None)
    report = index.update(two)
    assert (report.rebuilt, report.added) == (True, 2)
    assert _user_version(two) == index.SCHEMA_VERSION
    assert _ids(two, "friday") == ["deploy-freeze"]


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_cli_index_rebuild_repairs_a_damaged_cache(two: str, damage: str) -> None:
    DAMAGE[damage](paths.index_db(two))
    result = CliRunner().invoke(cli, ["--repo", two, "index", "--rebuild"], catch_exceptions=False)
    assert result.exit_code == 0
    assert result.stdout.startswith("rebuilt: 2 added, 0 updated, 0 removed, 0 unchanged, 0 skipped in ")
    assert _user_version(two) == index.SCHEMA_VERSION
    assert _count(two) == 2
    assert _ids(two, "postgres") == ["postgres-port"]


def test_status_facts(two: str) -> None:
    index.rebuild(two)
    db_path = paths.index_db(two)
    assert index.status(two) == {
        "path": db_path, "exists": True, "schema": index.SCHEMA_VERSION, "schema_ok": True, "commit": head(two), "count": 2,
        "skipped": [], "stale_marker": False, "changed_files": [], "synced": head(two), "blob_hashes": True,
    }
    write_memory(two, "postgres-port", title="Postgres listens on 5434")
    write_memory(two, "new-one")
    os.remove(os.path.join(two, "memory", "deploy-freeze.md"))
    index.mark_stale(two, "test")
    info = index.status(two)
    assert (info["count"], info["stale_marker"]) == (2, True)
    assert info["changed_files"] == ["memory/deploy-freeze.md", "memory/new-one.md", "memory/postgres-port.md"]


def test_status_of_a_missing_cache(two: str) -> None:
    os.remove(paths.index_db(two))
    assert index.status(two) == {
        "path": paths.index_db(two), "exists": False, "schema": None, "schema_ok": False, "commit": None,
        "count": 0, "skipped": [], "stale_marker": False,
    }


def _bad_yaml(mid: str) -> str:
    return memory_text(mid).replace(f"title: Title of {mid}", "title: [unclosed")


MALFORMED = [
    ("bad-yaml", _bad_yaml, "front matter is not valid YAML (did not find expected ',' or ']')"),
    ("id-mismatch", lambda mid: memory_text("another-id"), "id 'another-id' is not the file name"),
    ("bad-class", lambda mid: memory_text(mid).replace("class: fact", "class: rumour"), "unknown class 'rumour'"),
    ("no-front-matter", lambda mid: "Just a note without front matter.\n", "no front matter"),
    ("unclosed", lambda mid: "---\nid: unclosed\ntitle: x\n", "front matter is never closed"),
    ("list-front", lambda mid: "---\n- a\n- b\n---\nbody\n", "front matter is not a mapping of keys"),
    ("numeric-title", lambda mid: memory_text(mid).replace(f"title: Title of {mid}", "title: 42"),
     "title or description missing"),
    ("list-project", lambda mid: memory_text(mid, project="x").replace("project: x", "project: [a, b]"),
     "`project` is not text"),
    ("map-status", lambda mid: memory_text(mid).replace("source: user", "source: user\nstatus: {a: b}"),
     "`status` is not text"),
    ("text-half-life", lambda mid: memory_text(mid, half_life_days="soon"), "`half_life_days` is not a number"),
    ("list-verification", lambda mid: memory_text(mid).replace("source: user", "source: user\nverification: {status: [x]}"),
     "`verification.status` is not text"),
]


@pytest.mark.parametrize(("mid", "make", "problem"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_file_is_skipped_with_a_warning(two: str, mid: str, make, problem: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    rel = f"memory/{mid}.md"
    write_file(two, rel, make(mid))
    done = commit_all(two, "slipped in", "--no-verify")
    assert done.returncode == 0
    warning = f"memrepo: skipped {rel}: {problem} — run `memrepo doctor` for every problem"
    # post-commit indexed everything else and said why it skipped this file
    assert done.stderr.splitlines() == [warning]
    assert index.status(two)["skipped"] == [(rel, problem)]
    assert not os.path.exists(paths.stale_marker(two))
    assert _count(two) == 2
    report = index.rebuild(two)
    assert (report.added, report.skipped) == (2, [(rel, problem)])
    assert capsys.readouterr().err.splitlines() == [warning]
    assert _ids(two, "friday") == ["deploy-freeze"]


def test_fixed_file_is_picked_up(two: str) -> None:
    write_file(two, "memory/late-fix.md", _bad_yaml("late-fix"))
    assert commit_all(two, "broken", "--no-verify").returncode == 0
    assert _ids(two, "latefixword") == []
    write_memory(two, "late-fix", title="Latefixword works now")
    done = commit_all(two, "fixed")
    assert (done.returncode, done.stderr) == (0, "")
    assert index.status(two)["skipped"] == []
    assert _ids(two, "latefixword") == ["late-fix"]
    assert _count(two) == 3


def test_removed_malformed_file_leaves_skipped(two: str) -> None:
    write_file(two, "memory/gone-soon.md", "no front matter\n")
    assert commit_all(two, "broken", "--no-verify").returncode == 0
    assert [p for p, _ in index.status(two)["skipped"]] == ["memory/gone-soon.md"]
    git(two, "rm", "-q", "memory/gone-soon.md")
    assert commit_all(two, "removed").returncode == 0
    assert index.status(two)["skipped"] == []


def _index_files(repo: str) -> list[str]:
    return sorted(os.listdir(paths.index_dir(repo)))


def test_rebuild_leaves_no_temp_files(two: str) -> None:
    # A build that died (another pid) left its temp file; the next rebuild under the lock removes it.
    write_file(two, f"index/{paths.INDEX_FILE}.tmp-999999", b"half a build")
    index.rebuild(two)
    assert _index_files(two) == [".gitignore", ".lock", "README.md", paths.INDEX_FILE]
    index.update(two)
    assert _index_files(two) == [".gitignore", ".lock", "README.md", paths.INDEX_FILE]


def test_failed_rebuild_leaves_no_temp_file(two: str, monkeypatch: pytest.MonkeyPatch) -> None:
    os.remove(paths.index_db(two))

    def replace(src: str, dst: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", dst)

    monkeypatch.setattr(index.os, "replace", replace)  # the build renamed into place: the disk refuses
    with pytest.raises(CacheError, match="cannot write the cache in .*: No space left on device") as err:
        index.rebuild(two)
    assert str(err.value.hint).endswith(f"then run `memrepo --repo {two} index`")
    assert _index_files(two) == [".gitignore", ".lock", "README.md"]


def test_reader_keeps_a_consistent_view_during_rebuild(two: str) -> None:
    # The rebuild lands in one WAL transaction: a reader inside a transaction finishes on the old cache.
    reader = _db(two)
    with contextlib.closing(reader):
        reader.execute("BEGIN")
        assert reader.execute("SELECT count(*) FROM memories").fetchone()[0] == 2
        write_memory(two, "third-one")
        index.rebuild(two)
        assert _count(two) == 3
        assert reader.execute("SELECT count(*) FROM memories").fetchone()[0] == 2
        reader.execute("COMMIT")
        assert reader.execute("SELECT count(*) FROM memories").fetchone()[0] == 3


def test_indexed_commit_is_head(two: str) -> None:
    assert _meta(two)["commit"] == head(two)  # written by the post-commit hook
    write_memory(two, "third-one")
    assert commit_all(two, "third").returncode == 0
    assert _meta(two)["commit"] == head(two)
    index.rebuild(two)
    assert _meta(two)["commit"] == head(two)
    assert index.status(two)["commit"] == head(two)


def test_update_counts(two: str) -> None:
    write_memory(two, "postgres-port", title="Postgres listens on 5434")
    write_memory(two, "third-one")
    os.remove(os.path.join(two, "memory", "deploy-freeze.md"))
    report = index.update(two)
    assert report.as_dict() | {"seconds": 0} == {"added": 1, "updated": 1, "removed": 1, "unchanged": 0,
                                                 "skipped": [], "rebuilt": False, "seconds": 0}
    assert _ids(two, "5434") == ["postgres-port"]
    assert _ids(two, "friday") == []
    again = index.update(two)
    assert (again.added, again.updated, again.removed, again.unchanged) == (0, 0, 0, 2)


def test_touched_but_unchanged_file_is_not_reindexed(two: str) -> None:
    path = os.path.join(two, "memory", "deploy-freeze.md")
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    report = index.update(two)
    assert (report.added, report.updated, report.unchanged) == (0, 0, 2)
    assert index.status(two)["changed_files"] == []
