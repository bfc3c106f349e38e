"""The FTS5 cache under `index/`: schema, full rebuild, incremental update, status.

The cache can always be rebuilt from `memory/`. Importing this module loads only the
standard library; parsing memory files (PyYAML) happens inside the build functions.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import sys
import time
from typing import Any, Callable

from memrepo.vcs import gitcmd
from memrepo.base import paths
from memrepo.store import cachefacts, cachefile, docstats, rows, synced
# What callers of the cache ask of this module, kept from before the file's own code moved out (issue 40).
from memrepo.store.cachefile import GITIGNORE, LOCK_WAIT, README, IndexBusy, mark_stale, schema_version  # noqa: F401
from memrepo.store.cachefacts import status  # noqa: F401

SCHEMA_VERSION = paths.SCHEMA_VERSION  # the cache's file name depends on it: see base.paths
FTS_COLUMNS = ("title", "aliases", "topics", "entities", "tech", "description", "body")
TOKENIZER = "porter unicode61 remove_diacritics 2"
SCHEMA = f"""
CREATE TABLE memories(
  rowid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  path TEXT NOT NULL UNIQUE,
  class TEXT NOT NULL,
  source TEXT,
  status TEXT NOT NULL,
  superseded_by TEXT,
  project TEXT,
  created TEXT,
  updated TEXT,
  half_life REAL,
  subjects INTEGER NOT NULL DEFAULT 0,
  verification TEXT,
  verify_reason TEXT,
  title TEXT NOT NULL,
  description TEXT NOT NULL,
  session TEXT,
  hash TEXT NOT NULL,
  mtime_ns INTEGER NOT NULL,
  size INTEGER NOT NULL
);
CREATE INDEX memories_project ON memories(project);
CREATE VIRTUAL TABLE fts USING fts5({", ".join(FTS_COLUMNS)}, tokenize='{TOKENIZER}');
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE skipped(path TEXT PRIMARY KEY, problem TEXT NOT NULL);
CREATE TABLE techwords(word TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE citations(rowid INTEGER NOT NULL, path TEXT NOT NULL, line INTEGER, symbol TEXT);
CREATE INDEX citations_rowid ON citations(rowid);
{docstats.SCHEMA}PRAGMA user_version = {SCHEMA_VERSION};
"""

Progress = Callable[[int, int], None]


class Report:
    """What a build or update did."""

    def __init__(self) -> None:
        self.added = self.updated = self.removed = self.unchanged = 0
        self.skipped: list[tuple[str, str]] = []
        self.rebuilt = False
        self.seconds = 0.0
        self.tech_changed = True  # whether the techwords table may need recomputing (`_apply_to` knows better)

    def as_dict(self) -> dict[str, Any]:
        return {"added": self.added, "updated": self.updated, "removed": self.removed,
                "unchanged": self.unchanged, "skipped": self.skipped, "rebuilt": self.rebuilt,
                "seconds": round(self.seconds, 3)}


_INSERT = ("INSERT INTO memories(id, path, class, source, status, superseded_by, project, created, updated,"
           " half_life, verification, verify_reason, title, description, session, hash, mtime_ns, size, subjects)"
           " VALUES (" + ",".join("?" * 19) + ")")


def _insert(db: sqlite3.Connection, row: tuple[Any, ...], stats: bool = True) -> None:
    """Index one memory; its term statistics too, unless a full build makes them all at the end."""
    record, text, cites = row
    rowid = db.execute(_INSERT, record).lastrowid
    db.execute(f"INSERT INTO fts(rowid, {', '.join(FTS_COLUMNS)}) VALUES (?,?,?,?,?,?,?,?)", (rowid,) + text)
    # The paths it claims exist now, which recall stats before injecting it (issue 43).
    db.executemany("INSERT INTO citations(rowid, path, line, symbol) VALUES (?, ?, ?, ?)",
                   ((rowid, path, line, symbol) for path, line, symbol in cites))
    if stats and rowid is not None:
        docstats.add(db, rowid, text, FTS_COLUMNS, TOKENIZER)


def _delete(db: sqlite3.Connection, rel: str) -> None:
    hit = db.execute("SELECT rowid FROM memories WHERE path = ?", (rel,)).fetchone()
    if hit:
        docstats.remove(db, hit[0])
        db.execute("DELETE FROM fts WHERE rowid = ?", (hit[0],))
        db.execute("DELETE FROM citations WHERE rowid = ?", (hit[0],))
        db.execute("DELETE FROM memories WHERE rowid = ?", (hit[0],))


def _warn(rel: str, problem: str) -> None:
    print(f"memrepo: skipped {rel}: {problem} — run `memrepo doctor` for every problem", file=sys.stderr)


def _set_techwords(db: sqlite3.Connection) -> None:
    """Words that only ever name a technology in this store (in `tech:`, never in `entities:`).

    Recall weighs them lightly: a question about git or CSS is not about every memory whose
    stack lists git or CSS.
    """
    from memrepo.recall.query import tokenize

    tech: set[str] = set()
    named: set[str] = set()
    for tech_text, entities_text in db.execute("SELECT tech, entities FROM fts"):
        tech.update(tokenize(tech_text or ""))
        named.update(tokenize(entities_text or ""))
    db.execute("DELETE FROM techwords")
    db.executemany("INSERT INTO techwords(word) VALUES (?)", ((w,) for w in sorted(tech - named)))


def _set_meta(db: sqlite3.Connection, repo: str, rebuilt: bool = False, head: str | None = None) -> None:
    """Record HEAD (`head` when the caller knows it), the time and the count; `hashes` only on a
    full build (an older cache's rows keep sha1 digests of the bytes until it is rebuilt, and an
    update must not vouch for them)."""
    count = db.execute("SELECT count(*) FROM memories").fetchone()[0]
    # Microseconds: an update by an older memrepo (a plugin's venv, say) writes whole seconds, so
    # a `synced` mark naming this stamp (store/synced.py) cannot survive such an update.
    values = {"commit": head or gitcmd.head(repo) or "", "updated_at": f"{time.time():.6f}", "count": str(count)}
    if rebuilt:
        values["hashes"] = cachefacts.BLOB_HASHES
    db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", values.items())


def rebuild(repo: str, progress: Progress | None = None, wait: float | None = None) -> Report:
    """Build the whole cache into a temp file and swap it in, so readers never see half an index."""
    start = time.perf_counter()
    report = Report()
    report.rebuilt = True
    try:
        with cachefile.lock(repo, wait):
            db_path = paths.index_db(repo)
            tmp = f"{db_path}.tmp-{os.getpid()}"
            cachefile.remove_temps(db_path)
            try:
                _build(repo, tmp, report, progress)
                cachefile.swap_in(tmp, db_path)
            finally:
                with contextlib.suppress(OSError):
                    cachefile.remove_temps(db_path)
            cachefile.clear_stale(repo)
    except (OSError, sqlite3.OperationalError) as exc:
        if isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc)):
            raise
        raise cachefile.write_failed(repo, exc) from exc
    report.seconds = time.perf_counter() - start
    return report


def _build(repo: str, tmp: str, report: Report, progress: Progress | None) -> None:
    files = sorted(cachefacts.scan(repo).items())
    with contextlib.closing(sqlite3.connect(tmp)) as db:
        db.executescript(SCHEMA)
        with db:
            for n, (rel, st) in enumerate(files, start=1):
                row, problem = rows.load(repo, rel, st)
                if row is None:
                    db.execute("INSERT OR REPLACE INTO skipped VALUES (?, ?)", (rel, problem))
                    report.skipped.append((rel, problem))
                    _warn(rel, problem)
                else:
                    _insert_unique(db, row, rel, report, stats=False)
                if progress:
                    progress(n, len(files))
            docstats.build_all(db, FTS_COLUMNS)
            _set_techwords(db)
            _set_meta(db, repo, rebuilt=True)
            synced.write(db, synced.after_scan(repo, db))


def _insert_unique(db: sqlite3.Connection, row: tuple[Any, ...], rel: str, report: Report, stats: bool = True) -> None:
    try:
        _insert(db, row, stats)
        report.added += 1
    except sqlite3.IntegrityError:
        problem = f"duplicate id {row[0][0]!r}"
        db.execute("INSERT OR REPLACE INTO skipped VALUES (?, ?)", (rel, problem))
        report.skipped.append((rel, problem))
        _warn(rel, problem)


def update(repo: str, force: tuple[str, ...] = (), wait: float | None = None, after: str | None = None,
           head: str | None = None) -> Report:
    """Bring the cache up to date with `memory/`, touching only files whose stat or hash changed.

    A missing, corrupt or old-schema cache is rebuilt instead. `force` names paths to re-read
    even when their size and mtime look unchanged. With `after` (post-commit: the new commit's
    parent) and a cache that recorded exactly that commit, only the `force` paths are looked at:
    git said what the commit changed, so nothing else is statted (a commit at 100,000 memories
    costs what it costs at 100). `head`: the commit HEAD is, when the caller just made it.
    """
    if schema_version(paths.index_db(repo)) != SCHEMA_VERSION:
        return rebuild(repo, wait=wait)
    start = time.perf_counter()
    report = Report()
    held = _already_fresh(repo) if after is None and not force else None
    if held is not None:
        report.unchanged = held
        report.seconds = time.perf_counter() - start
        return report  # git says memory/ is the commit the cache holds: no file to stat, nothing to write
    try:
        with cachefile.lock(repo, wait), contextlib.closing(sqlite3.connect(paths.index_db(repo), timeout=10)) as db:
            db.execute("PRAGMA journal_mode=WAL")
            recorded = db.execute("SELECT value FROM meta WHERE key = 'commit'").fetchone()
            incremental = bool(after and recorded and recorded[0] == after and not os.path.islink(paths.memory_dir(repo)))
            # Counting the full-text rows reads that whole index (0.1 s at 100,000): the full update
            # checks it; a post-commit's few rows go in by rowid, and a clash there is a DatabaseError too.
            if not incremental and _row_counts_differ(db):
                raise sqlite3.DatabaseError("the memories table and the full-text table disagree")
            if not docstats.current(db):
                raise sqlite3.DatabaseError("the term statistics were made for other weights")
            if set(REQUIRED_TABLES) - {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}:
                raise sqlite3.DatabaseError("a table of the cache is missing")
            with db:
                was = synced.read(db) if cachefacts.blob_hashes(db) else None
                if incremental:
                    _apply_to(repo, db, sorted(set(force)), report)
                    now = synced.after_commit(repo, db, was, after, sorted(set(force)), head)
                else:
                    _apply_changes(repo, db, set(force), report)
                    moved = report.added or report.updated or report.removed or report.skipped
                    now = was if was and not moved and was == gitcmd.head(repo) else (
                        synced.after_scan(repo, db) if cachefacts.blob_hashes(db) else None)
                if (report.added or report.updated or report.removed) and report.tech_changed:
                    _set_techwords(db)
                _set_meta(db, repo, head=head if incremental else None)
                synced.write(db, now)  # after the meta: the mark names this update's stamp
            cachefile.clear_stale(repo)
    except OSError as exc:
        raise cachefile.write_failed(repo, exc) from exc
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise
        return rebuild(repo, wait=wait)  # a missing table, a full disk: rebuilt, or a CacheError naming the fix
    except sqlite3.DatabaseError:
        return rebuild(repo, wait=wait)  # a damaged page: the same (the transaction was rolled back)
    report.seconds = time.perf_counter() - start
    return report


def _already_fresh(repo: str) -> int | None:
    """How many memories the cache holds, when it is whole, synced to HEAD, memory/ is clean and
    nothing marked it stale (else None: the full update, which repairs what is wrong).

    Whole: every table there, and as many full-text rows (counted in FTS5's own `fts_docsize`,
    one row per document, cheap where counting `fts` reads the whole index) as memories. Opened
    read-write though it only reads: the last connection to close a WAL database removes its
    -wal and -shm files, a read-only one cannot. The folder's modes are tightened as every
    writer does (issue 15)."""
    from memrepo.store import private

    if os.path.exists(paths.stale_marker(repo)):
        return None
    try:
        with contextlib.closing(sqlite3.connect(paths.index_db(repo), timeout=10)) as db:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not set(REQUIRED_TABLES) | {"fts_docsize"} <= tables:
                return None
            count = db.execute("SELECT count(*) FROM memories").fetchone()[0]
            if count != db.execute("SELECT count(*) FROM fts_docsize").fetchone()[0]:
                return None
            commit = synced.read(db) if cachefacts.blob_hashes(db) else None
            if not docstats.current(db):  # term statistics made for other weights: the full update rebuilds
                return None
    except sqlite3.DatabaseError:
        return None
    if not synced.fresh(repo, commit):
        return None
    cachefile.prepare_dir(repo)
    private.tighten(paths.index_dir(repo))
    return int(count)


def _row_counts_differ(db: sqlite3.Connection) -> bool:
    """True when rows went missing from one table and not the other (an update would collide)."""
    memories = db.execute("SELECT count(*) FROM memories").fetchone()[0]
    return bool(memories != db.execute("SELECT count(*) FROM fts").fetchone()[0]
                or memories != db.execute("SELECT count(*) FROM docterms").fetchone()[0])


REQUIRED_TABLES = ("memories", "fts", "meta", "skipped", "techwords", "citations") + docstats.TABLES


def damage(repo: str) -> str:
    """What is wrong inside the cache file, or "": `PRAGMA quick_check` (every page and index),
    the tables, and the two tables' row counts. Reads the whole file: for doctor, not hooks."""
    db_path = paths.index_db(repo)
    try:
        with contextlib.closing(cachefile.read_only(db_path)) as db:
            found = [r[0] for r in db.execute("PRAGMA quick_check(5)")]
            if found != ["ok"]:
                return "damaged pages (" + "; ".join(str(f) for f in found)[:200] + ")"
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
            missing = [t for t in REQUIRED_TABLES if t not in tables]
            if missing:
                return f"table{'s' * (len(missing) > 1)} {', '.join(missing)} missing"
            if _row_counts_differ(db):
                return "rows missing: the memories table and the full-text table disagree"
            db.execute("SELECT count(*) FROM fts WHERE fts MATCH 'memrepo'").fetchone()  # reads the FTS index
    except sqlite3.DatabaseError as exc:
        return f"unreadable ({exc})"
    return ""


def _apply_changes(repo: str, db: sqlite3.Connection, force: set[str], report: Report) -> None:
    on_disk = cachefacts.scan(repo)
    known = {r[0]: r[1:] for r in db.execute("SELECT path, hash, mtime_ns, size FROM memories")}
    skipped = {r[0] for r in db.execute("SELECT path FROM skipped")}
    for rel in sorted(set(known) | skipped):
        if rel not in on_disk:
            _delete(db, rel)
            db.execute("DELETE FROM skipped WHERE path = ?", (rel,))
            report.removed += rel in known
    for rel, st in sorted(on_disk.items()):
        old = known.get(rel)
        if old and old[1] == st.st_mtime_ns and old[2] == st.st_size and rel not in force:
            report.unchanged += 1
            continue
        row, problem = rows.load(repo, rel, st)
        if old and row is not None and row[0][15] == old[0]:
            db.execute("UPDATE memories SET mtime_ns = ?, size = ? WHERE path = ?", (st.st_mtime_ns, st.st_size, rel))
            report.unchanged += 1
            continue
        if not _replace(db, rel, row, problem, report):
            continue
        if old:
            report.added -= 1
            report.updated += 1


def _apply_to(repo: str, db: sqlite3.Connection, rels: list[str], report: Report) -> None:
    """`_apply_changes` for the named paths alone (each re-read, or dropped when gone)."""
    mdir = paths.memory_dir(repo)
    report.tech_changed = False
    for rel in rels:
        before = db.execute("SELECT f.tech, f.entities FROM memories m JOIN fts f ON f.rowid = m.rowid WHERE m.path = ?",
                            (rel,)).fetchone()
        after = _apply_one(repo, db, mdir, rel, report)
        if (tuple(before) if before else ("", "")) != (tuple(after) if after else ("", "")):
            report.tech_changed = True


def _apply_one(repo: str, db: sqlite3.Connection, mdir: str, rel: str, report: Report) -> tuple[str, str] | None:
    """Re-read one path; the (tech, entities) text it is indexed with now, or None."""
    st = None
    name = rel[len(paths.MEMORY_DIR) + 1:] if rel.startswith(paths.MEMORY_DIR + "/") else ""
    if name and "/" not in name and name.endswith(".md") and not name.startswith("."):
        with contextlib.suppress(FileNotFoundError):
            st = os.stat(os.path.join(mdir, name), follow_symlinks=False)
    old = db.execute("SELECT hash FROM memories WHERE path = ?", (rel,)).fetchone()
    was_skipped = db.execute("SELECT 1 FROM skipped WHERE path = ?", (rel,)).fetchone()
    if st is None or not stat.S_ISREG(st.st_mode):
        _delete(db, rel)
        db.execute("DELETE FROM skipped WHERE path = ?", (rel,))
        report.removed += old is not None
        return None
    row, problem = rows.load(repo, rel, st)
    refused = len(report.skipped)
    if not _replace(db, rel, row, problem, report) or row is None:
        return None
    if len(report.skipped) > refused:
        return ("\0", "")  # not inserted (a duplicate id): whatever it held is gone, so look again
    if old or was_skipped:
        report.added -= 1
        report.updated += 1
    return row[1][4], row[1][3]  # tech, entities as the fts table holds them


def _replace(db: sqlite3.Connection, rel: str, row: tuple[Any, ...] | None, problem: str, report: Report) -> bool:
    """Put `rel`'s new row in place of whatever the cache held for it; False when it is unindexable
    (then it is listed in `skipped` with the problem, and said on stderr)."""
    _delete(db, rel)
    db.execute("DELETE FROM skipped WHERE path = ?", (rel,))
    if row is None:
        db.execute("INSERT INTO skipped VALUES (?, ?)", (rel, problem))
        report.skipped.append((rel, problem))
        _warn(rel, problem)
        return False
    _insert_unique(db, row, rel, report)
    return True
