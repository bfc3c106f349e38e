"""The merged cache (issue 41, part 2's budget): one cache per prompt context holding the rows of
every source a prompt there reads, so the prompt hook opens one cache instead of three.

A prompt context is the personal repository, the teams this machine joined and the project of
the checkout the prompt comes from; its merged cache lives in the personal repository's private
`index/merged/` (`recall.sources.merged_db`), named for the checkout (or `none`). It is built off
the prompt path from the sources' own caches (copying rows is far cheaper than parsing files
again) and then kept up to date incrementally (`refresh`): only the rows of a source whose cache
changed since, and only that source's statistics of the words those rows hold.

It has the schema of a source's cache (`store.index.SCHEMA`), filled as one store of all the
sources' rows would be: the union's row count, FTS5's own averages over the union, each word's
document count in the union (`terms`), the union's technology words (`techwords`), and
`meta.docstats` when every source's term statistics are current; so the prompt hook ranks it
exactly as it ranks a single cache, once over every source's rows (`recall.sources`). Beside them
each source's own counts, under its number `k` (its place in `recall.sources.found`), are the
refresh's bookkeeping, which recall never reads: `src` (its row count and `docstats`
signature), `srcterms` (each word's document count in it) and `srctech` (its technology words);
an incremental refresh replaces one source's counts of the words its changed rows hold and sums
the union's counts of just those words. A word is a technology word of the union when it is one
in any source (a store that names it as an entity elsewhere is not looked at: a bounded refresh).
A source's rows keep their rowid in their own cache, shifted into the source's range
(`SHIFT`), so a refresh finds one source's rows by `rowid BETWEEN`; a team's or a
project's memory is stored under a prefixed id (`team-acme:deploy`, `project:deploy`:
`recall.sources.tag`), so ids never collide and a supersession stays inside its source.

Trust: a team's or a project's cache was built on this machine, but from files anyone with push
access wrote, and its file may be damaged; each row copied passes the checks `store.rows` makes
of a memory file (id, class, status, text types and sizes, a positive half-life) or is left out,
and each statistic is checked for its type and size. The meta row `sources` records each source's
cache file as it was before it was read (its `recall.sources.signature`): the prompt hook uses
the merged cache whenever it holds the sources a prompt there reads (a stale one answers as it
stands, as a stale cache does, while its refresh catches up), and the sources' own caches only
when there is none yet.
"""

from __future__ import annotations

import contextlib
import glob
import math
import os
import re
import sqlite3
import time
import urllib.parse
from typing import Any

from memrepo.base import paths
from memrepo.errors import CacheError
from memrepo.format import spec
from memrepo.recall import search, sources as rs
from memrepo.store import index

ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
MAX_TEXT = 2 * spec.MAX_BODY_BYTES  # a cached field past this is no memory's (the body is the largest)
MAX_CITATIONS = 32  # as format.mentions keeps
MAX_TERM = 200  # a token FTS5 stores is a word: past this, no statistic of ours
DOCTERMS = re.compile(r"(?: [^\s:]{1,200}:\d{1,9}:[0-7])*")  # store/docstats.py's text, whole
SHIFT = 40  # a source's rows in a merged cache: rowid k << SHIFT | its rowid in its own cache
KEEP = 8  # merged caches kept: the most recently refreshed prompt contexts
SCHEMA = """
CREATE TABLE src(k INTEGER PRIMARY KEY, tag TEXT NOT NULL, count INTEGER NOT NULL, docstats TEXT);
CREATE TABLE srcterms(term TEXT NOT NULL, k INTEGER NOT NULL, df INTEGER NOT NULL, PRIMARY KEY(term, k)) WITHOUT ROWID;
CREATE TABLE srctech(word TEXT NOT NULL, k INTEGER NOT NULL, PRIMARY KEY(word, k)) WITHOUT ROWID;
"""
_MEMORY_COLUMNS = ("id, path, class, source, status, superseded_by, project, created, updated, half_life,"
                   " verification, verify_reason, title, description, session, hash, mtime_ns, size, subjects")
_INSERT = (f"INSERT INTO memories(rowid, {_MEMORY_COLUMNS}) VALUES ({', '.join('?' * 20)})")


class Built:
    """What a refresh of the merged cache did."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.rows = 0  # rows copied
        self.removed = 0  # rows taken out (a memory changed or gone in its source)
        self.synced: list[str] = []  # the sources whose rows and statistics were brought up to date
        self.skipped: list[tuple[str, str]] = []  # (source label, why) of each row left out
        self.rebuilt = False
        self.seconds = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "rows": self.rows, "removed": self.removed, "synced": self.synced,
                "skipped": len(self.skipped), "rebuilt": self.rebuilt, "seconds": round(self.seconds, 3)}


def state(repo: str, cwd: str | None) -> str:
    """`current`, `stale` (a source changed since the merge, or the sources differ), `missing`,
    `damaged`, or `single` (one source: no merged cache is needed)."""
    srcs = rs.found(repo, cwd)
    if len(srcs) < 2:
        return "single"
    path = rs.merged_db(srcs)
    if not os.path.exists(path):
        return "missing"
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'sources'").fetchone()
            if db.execute("PRAGMA user_version").fetchone()[0] != index.SCHEMA_VERSION:
                return "stale"
            db.execute("SELECT k FROM src LIMIT 1").fetchall()
    except sqlite3.DatabaseError:
        return "damaged"
    return "current" if row is not None and row[0] == rs.signature(srcs) else "stale"


def refresh(repo: str, cwd: str | None) -> Built | None:
    """Bring the merged cache of the prompt context of `cwd` up to date: only the sources whose
    cache changed since it was written, row by row (`update`), else a whole build (`build`: none
    yet, damaged, other sources). None when a prompt there reads one source or it was current."""
    srcs = rs.found(repo, cwd)
    if len(srcs) < 2:
        return None
    signature = rs.signature(srcs)  # before any source is read: a write meanwhile leaves it stale, never wrong
    path = rs.merged_db(srcs)
    if os.path.exists(path):
        try:
            return update(srcs, signature)
        except (sqlite3.DatabaseError, CacheError):
            pass
    return build(srcs, signature)


def update(srcs: list[rs.Source], signature: str) -> Built | None:
    """Copy into the merged cache what changed in each source whose cache changed since (its line
    of the signature differs): the rows whose content hash or rowid moved, that source's
    statistics of the words they hold and the union's of those words. None when it was current;
    raises CacheError when it must be built whole (another set of sources, an older schema)."""
    start = time.perf_counter()
    path = rs.merged_db(srcs)
    out = Built(path)
    with contextlib.closing(sqlite3.connect(_uri(path), uri=True, timeout=10, isolation_level=None)) as db:
        if db.execute("PRAGMA user_version").fetchone()[0] != index.SCHEMA_VERSION:
            raise CacheError("an older schema")
        db.execute("SELECT k FROM src LIMIT 1").fetchall()  # a merged cache without its sources' statistics: built whole
        db.execute("BEGIN IMMEDIATE")  # one refresher at a time reads what the last one wrote
        try:
            row = db.execute("SELECT value FROM meta WHERE key = 'sources'").fetchone()
            old = (row[0] if row else "").split("\n")
            new = signature.split("\n")
            if old == new:
                db.execute("ROLLBACK")
                return None
            if len(old) != len(new) or old[0] != new[0] or any(_where(a) != _where(b) for a, b in zip(old[1:], new[1:])):
                raise CacheError("other sources")
            changed = [k for k, (a, b) in enumerate(zip(old[1:], new[1:])) if a != b]
            words: set[str] | None = set()
            for k in changed:
                moved = _sync(db, path, k, srcs[k], out)
                words = None if moved is None or words is None else words | moved
            _finish(db, signature, words)
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
    out.seconds = time.perf_counter() - start
    return out


def _within(k: int) -> tuple[int, int]:
    """The rowids of the `k`th source's rows in a merged cache: its own rowids, shifted."""
    return k << SHIFT, ((k + 1) << SHIFT) - 1


def _where(line: str) -> str:
    """A signature line without its stamps: which source, from which cache file."""
    return "\t".join(line.split("\t")[:2])


def build(srcs: list[rs.Source], signature: str | None = None) -> Built:
    """Build the merged cache of `srcs` whole into a temp file and put it in place (readers see the
    old file or the new one). The signature recorded is taken before any source is read (by the
    caller, or here): a source written meanwhile leaves the merged cache stale, never wrong."""
    start = time.perf_counter()
    path = rs.merged_db(srcs)
    out = Built(path)
    out.rebuilt = True
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    signature = signature or rs.signature(srcs)
    tmp = f"{path}.tmp-{os.getpid()}"
    with contextlib.suppress(FileNotFoundError):
        os.remove(tmp)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        with contextlib.closing(sqlite3.connect(_uri(tmp), uri=True, isolation_level=None)) as db:
            db.executescript(index.SCHEMA + SCHEMA)
            for k, src in enumerate(srcs):  # a transaction each: the next one's comparison reads this file
                db.execute("BEGIN")
                _sync(db, tmp, k, src, out)
                db.execute("COMMIT")
            db.execute("BEGIN")
            _finish(db, signature, None)
            db.execute("COMMIT")
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
    _forget_old(folder)
    out.seconds = time.perf_counter() - start
    return out


def _uri(path: str, ro: bool = False) -> str:
    return "file:" + urllib.parse.quote(path) + ("?mode=ro" if ro else "")


def _finish(db: sqlite3.Connection, signature: str, words: set[str] | None) -> None:
    """The union's statistics from the sources' (`words`: the only words whose counts moved; None:
    every word), and the signature of the sources as they were read."""
    count = db.execute("SELECT count(*) FROM memories").fetchone()[0]
    if words is None:
        db.execute("DELETE FROM terms")
        db.execute("INSERT INTO terms(term, df) SELECT term, sum(df) FROM srcterms GROUP BY term")
    else:
        listed = sorted(words)
        for part in range(0, len(listed), 500):
            chunk = listed[part:part + 500]
            marks = ",".join("?" * len(chunk))
            db.execute(f"DELETE FROM terms WHERE term IN ({marks})", chunk)
            db.execute(f"INSERT INTO terms(term, df) SELECT term, sum(df) FROM srcterms WHERE term IN ({marks})"
                       " GROUP BY term", chunk)
    db.execute("DELETE FROM techwords")
    db.execute("INSERT INTO techwords(word) SELECT DISTINCT word FROM srctech")
    # the union's term statistics are usable only when every source's were (else recall walks bm25())
    current = db.execute("SELECT count(*) = 0 FROM src WHERE docstats IS NOT ? AND count > 0",
                         (search.DOCSTATS,)).fetchone()[0]
    db.execute("DELETE FROM meta WHERE key = 'docstats'")
    if current:
        db.execute("INSERT INTO meta(key, value) VALUES ('docstats', ?)", (search.DOCSTATS,))
    db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                   [("sources", signature), ("count", str(count)), ("commit", ""), ("updated_at", f"{time.time():.6f}")])


def _sync(db: sqlite3.Connection, path: str, k: int, src: rs.Source, out: Built) -> set[str] | None:
    """Make source `k`'s rows and statistics in the merged cache `db` (the file `path`, in a
    transaction) those of its own cache: rows whose rowid and content hash both match stay; the
    others go, and the source's rows that are new or changed come in, each checked (`_problem`).
    A source whose cache cannot be read is left out whole (the prompt hook skips it the same way);
    the personal one's is an error. The words whose counts in it moved (None: any word may have).

    Which rows differ is one comparison in SQLite over both files (a Python diff of 10,000 rows
    each took 0.2 s), read through a second connection with the merged file attached read-only
    (ATTACH is refused inside the writer's transaction), and released before anything is written."""
    lo, hi = _within(k)
    tag = rs.tag(src)
    try:
        sdb = sqlite3.connect(_uri(src.db, ro=True), uri=True, timeout=10)
    except sqlite3.Error as exc:
        _unreadable(db, k, src, out, exc)
        return None
    with contextlib.closing(sdb):
        try:
            if sdb.execute("PRAGMA user_version").fetchone()[0] != index.SCHEMA_VERSION:
                raise sqlite3.DatabaseError("an older schema")
            sdb.execute("ATTACH DATABASE ? AS mg", (_uri(path, ro=True),))
            gone = [r for (r,) in sdb.execute(
                "SELECT x.rowid FROM mg.memories x WHERE x.rowid BETWEEN ? AND ? AND NOT EXISTS"
                " (SELECT 1 FROM main.memories m WHERE m.rowid = x.rowid - ? AND m.hash IS x.hash)", (lo, hi, lo))]
            new = [r for (r,) in sdb.execute(
                "SELECT m.rowid FROM main.memories m WHERE m.rowid BETWEEN 1 AND ? AND NOT EXISTS"
                " (SELECT 1 FROM mg.memories x WHERE x.rowid = m.rowid + ? AND x.hash IS m.hash)", (hi - lo, lo))]
            sdb.execute("DETACH DATABASE mg")
            sdb.execute("BEGIN")  # one snapshot of the source for everything copied from it
            touched: set[str] = set()
            for r in gone:
                row = db.execute("SELECT terms FROM docterms WHERE rowid = ?", (r,)).fetchone()
                touched.update(_tokens(row[0] if row else ""))
                for table in ("fts", "citations", "docterms", "memories"):
                    db.execute(f"DELETE FROM {table} WHERE rowid = ?", (r,))
                out.removed += 1
            for part in range(0, len(new), 500):
                touched.update(_copy(db, sdb, lo, tag, src, new[part:part + 500], out))
            full = db.execute("SELECT 1 FROM src WHERE k = ? AND tag = ?", (k, tag)).fetchone() is None
            _statistics(db, sdb, k, tag, None if full else touched)  # a first copy: every statistic
            sdb.execute("ROLLBACK")
        except sqlite3.DatabaseError as exc:
            _unreadable(db, k, src, out, exc)
            return None
    out.synced.append(src.label)
    return None if full else touched


def _unreadable(db: sqlite3.Connection, k: int, src: rs.Source, out: Built, exc: Exception) -> None:
    if src.kind == rs.PERSONAL:
        raise exc
    out.skipped.append((src.label, f"its cache cannot be read: {exc}"))
    lo, hi = _within(k)
    for table in ("fts", "citations", "docterms", "memories"):
        db.execute(f"DELETE FROM {table} WHERE rowid BETWEEN ? AND ?", (lo, hi))
    db.execute("DELETE FROM srcterms WHERE k = ?", (k,))
    db.execute("DELETE FROM srctech WHERE k = ?", (k,))
    db.execute("INSERT OR REPLACE INTO src(k, tag, count, docstats) VALUES (?, ?, 0, NULL)",
               (k, rs.tag(src)))


def _tokens(text: Any) -> list[str]:
    return [part.rsplit(":", 2)[0] for part in text.split()] if isinstance(text, str) else []


def _copy(db: sqlite3.Connection, sdb: sqlite3.Connection, lo: int, tag: str, src: rs.Source,
          rowids: list[int], out: Built) -> set[str]:
    """Copy these rows of the source's cache under their tagged ids and shifted rowids, each that
    passes the checks; the words they hold (their source's statistics of those change)."""
    marks = ",".join("?" * len(rowids))
    cites: dict[int, list[tuple[Any, ...]]] = {}
    for rowid, cpath, line, symbol in sdb.execute(f"SELECT rowid, path, line, symbol FROM citations WHERE rowid IN ({marks})",
                                                  rowids):
        cites.setdefault(rowid, []).append((cpath, line, symbol))
    rows = sdb.execute(f"SELECT m.rowid, {', '.join('m.' + c.strip() for c in _MEMORY_COLUMNS.split(','))},"
                       f" {', '.join('f.' + c for c in index.FTS_COLUMNS)}, d.dl, d.terms"
                       " FROM memories m JOIN fts f ON f.rowid = m.rowid LEFT JOIN docterms d ON d.rowid = m.rowid"
                       f" WHERE m.rowid IN ({marks}) ORDER BY m.rowid", rowids).fetchall()
    touched: set[str] = set()
    for row in rows:
        rowid, record, text, (dl, terms) = row[0], row[1:20], row[20:27], row[27:]
        problem = _problem(record, text) or _docterms_problem(dl, terms)
        if not problem and db.execute("SELECT 1 FROM memories WHERE id = ?", (tag + record[0],)).fetchone():
            problem = "a second row for this id"
        if problem:
            out.skipped.append((src.label, f"{str(record[0])[:80]!r}: {problem}"))
            continue
        tagged = (lo + rowid, tag + record[0], tag + record[1], *record[2:5],
                  tag + record[5] if record[5] else None, *record[6:])
        db.execute(_INSERT, tagged)
        db.execute(f"INSERT INTO fts(rowid, {', '.join(index.FTS_COLUMNS)}) VALUES (?,?,?,?,?,?,?,?)",
                   (lo + rowid, *(t or "" for t in text)))
        db.executemany("INSERT INTO citations(rowid, path, line, symbol) VALUES (?, ?, ?, ?)",
                       ((lo + rowid, *c) for c in cites.get(rowid, [])[:MAX_CITATIONS] if _citation_ok(c)))
        db.execute("INSERT INTO docterms(rowid, dl, terms) VALUES (?, ?, ?)", (lo + rowid, dl, terms))
        touched.update(_tokens(terms))
        out.rows += 1
    return touched


def _docterms_problem(dl: Any, terms: Any) -> str:
    """Why a row's term statistics (store/docstats.py) are not what recall can read, or ""."""
    if not (isinstance(dl, int) and not isinstance(dl, bool) and 0 <= dl and isinstance(terms, str)
            and len(terms) <= 4 * MAX_TEXT):
        return "no term statistics"
    return "" if terms == " " or DOCTERMS.fullmatch(terms) else "its term statistics are malformed"


def _statistics(db: sqlite3.Connection, sdb: sqlite3.Connection, k: int, tag: str, words: set[str] | None) -> None:
    """Source `k`'s own statistics, copied from its cache: its row count and docstats signature;
    its technology words; the document counts of `words` (None: of every word), the only counts a
    change of those rows can move."""
    count = sdb.execute("SELECT coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'count'),"
                        " (SELECT count(*) FROM memories))").fetchone()[0]
    sig = sdb.execute("SELECT value FROM meta WHERE key = 'docstats'").fetchone()
    docstats = sig[0] if sig and sig[0] == search.DOCSTATS else None
    db.execute("INSERT OR REPLACE INTO src(k, tag, count, docstats) VALUES (?, ?, ?, ?)",
               (k, tag, count if isinstance(count, int) and count >= 0 else 0, docstats))
    db.execute("DELETE FROM srctech WHERE k = ?", (k,))
    db.executemany("INSERT OR IGNORE INTO srctech(word, k) VALUES (?, ?)",
                   ((w, k) for (w,) in sdb.execute("SELECT word FROM techwords")
                    if isinstance(w, str) and 0 < len(w) <= MAX_TERM))
    if words is None:
        db.execute("DELETE FROM srcterms WHERE k = ?", (k,))
        found: Any = sdb.execute("SELECT term, df FROM terms")
    else:
        listed = sorted(words)
        db.executemany("DELETE FROM srcterms WHERE term = ? AND k = ?", ((w, k) for w in listed))
        found = (row for part in range(0, len(listed), 500)
                 for row in sdb.execute(f"SELECT term, df FROM terms WHERE term IN ({','.join('?' * len(listed[part:part + 500]))})",
                                        listed[part:part + 500]).fetchall())
    db.executemany("INSERT OR IGNORE INTO srcterms(term, k, df) VALUES (?, ?, ?)",
                   ((t, k, df) for t, df in found if isinstance(t, str) and 0 < len(t) <= MAX_TERM
                    and isinstance(df, int) and not isinstance(df, bool) and df > 0))


def _problem(record: tuple[Any, ...], text: tuple[Any, ...]) -> str:
    """Why a source cache's row is no memory the merged cache may hold, or ""."""
    (mid, rel, cls, source, status, superseded_by, project, created, updated, half_life,
     verification, verify_reason, title, description, session, digest, mtime_ns, size, subjects) = record
    if not (isinstance(mid, str) and len(mid) <= spec.MAX_ID and ID.match(mid)):
        return "not a memory id"
    if not (isinstance(rel, str) and rel == f"{paths.MEMORY_DIR}/{mid}.md"):
        return "its path is not memory/<id>.md"
    if cls not in spec.CLASSES or (status or "active") not in spec.STATUSES:
        return "an unknown class or status"
    if superseded_by is not None and not (isinstance(superseded_by, str) and len(superseded_by) <= spec.MAX_ID
                                          and ID.match(superseded_by)):
        return "`superseded_by` is not a memory id"
    if half_life is not None and (isinstance(half_life, bool) or not isinstance(half_life, (int, float))
                                  or not 0 < half_life < math.inf):
        return "`half_life_days` is not a positive number"
    texts = (source, project, created, updated, verification, verify_reason, title, description, session, digest,
             *text)
    if any(t is not None and not (isinstance(t, str) and len(t) <= MAX_TEXT) for t in texts):
        return "a field is not text, or too long"
    if not isinstance(title, str) or not isinstance(description, str):
        return "title or description missing"
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (mtime_ns, size, subjects)):
        return "a count is not a number"
    return ""


def _citation_ok(c: tuple[Any, ...]) -> bool:
    path, line, symbol = c
    return (isinstance(path, str) and 0 < len(path) <= 4096 and (line is None or isinstance(line, int))
            and (symbol is None or (isinstance(symbol, str) and len(symbol) <= 200)))


def _forget_old(folder: str) -> None:
    """Keep the KEEP most recently built merged caches: one per prompt context used lately."""
    found = sorted(glob.glob(os.path.join(folder, "*" + rs.MERGED_SUFFIX)), key=lambda p: -os.stat(p).st_mtime_ns)
    for path in found[KEEP:]:
        with contextlib.suppress(OSError):
            os.remove(path)


def refresh_known(repo: str) -> list[Built]:
    """Refresh every merged cache this machine keeps (after a source's cache changed: a commit to
    the personal repository, a team's sync): each one's checkout is recorded in its file name's
    sidecar. Bounded by KEEP."""
    folder = os.path.join(paths.index_dir(repo), rs.MERGED_DIR)
    done = []
    for path in glob.glob(os.path.join(folder, "*" + rs.MERGED_SUFFIX)):
        cwd = _checkout_of(path)
        if cwd is not None and cwd != "" and not os.path.isdir(cwd):
            continue
        try:
            built = refresh(repo, cwd or None)
        except (OSError, sqlite3.Error, CacheError):
            continue
        if built is not None:
            done.append(built)
    return done


def _checkout_of(path: str) -> str | None:
    """The checkout a merged cache was built for ("" for none), from its meta; None when unreadable."""
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'sources'").fetchone()
    except sqlite3.DatabaseError:
        return None
    return rs.checkout_in(row[0]) if row else None
