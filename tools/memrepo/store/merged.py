"""The merged cache (issue 41, part 2's budget): one cache per prompt context holding the rows of
every source a prompt there reads, so the prompt hook searches one cache instead of three.

A prompt context is the personal repository, the teams this machine joined and the project of
the checkout the prompt comes from; its merged cache lives in the personal repository's private
`index/merged/` (`recall.sources.merged_db`), named for the checkout (or `none`). It is built off
the prompt path (`memrepo sources --refresh`, the SessionStart refresh, `memrepo sync`, the
personal repository's git hooks) from the sources' own caches: copying rows is far cheaper than
parsing files again. It is the same schema as a source's cache (`store.index.SCHEMA`), so recall
reads it as it reads any cache; a team's or a project's memory is stored under a prefixed id
(`acme:deploy`, `project:deploy`: `recall.sources.tag`), so ids never collide and a supersession
stays inside its source.

Trust: a team's or a project's cache was built on this machine, but from files anyone with push
access wrote, and its file may be damaged; each row copied passes the checks `store.rows` makes
of a memory file (id, class, status, text types and sizes, a positive half-life) or is left out.
The meta row `sources` records each source's cache file as it was when it was read (its
`recall.sources.signature`): the prompt hook uses the merged cache only while every source
still matches it, and reads the sources' own caches otherwise.
"""

from __future__ import annotations

import contextlib
import glob
import math
import os
import re
import sqlite3
import time
from typing import Any

from memrepo.base import paths
from memrepo.errors import CacheError
from memrepo.format import spec
from memrepo.recall import sources as rs
from memrepo.store import docstats, index

ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
MAX_TEXT = 2 * spec.MAX_BODY_BYTES  # a cached field past this is no memory's (the body is the largest)
MAX_CITATIONS = 32  # as format.mentions keeps
KEEP = 8  # merged caches kept: the most recently refreshed prompt contexts
# Below this many memories in all the sources, three caches cost little and BM25's statistics of
# the union differ most from each source's own (a word two small stores both hold is worth
# nothing in their union): no merged cache. See docs/sharing.md, "The merged cache".
MIN_ROWS = 3000
_MEMORY_COLUMNS = ("id, path, class, source, status, superseded_by, project, created, updated, half_life,"
                   " verification, verify_reason, title, description, session, hash, mtime_ns, size, subjects")


class Built:
    """What a refresh of the merged cache did."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.rows = 0
        self.skipped: list[tuple[str, str]] = []  # (source label, why) of each row left out
        self.rebuilt = False
        self.seconds = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "rows": self.rows, "skipped": len(self.skipped), "rebuilt": self.rebuilt,
                "seconds": round(self.seconds, 3)}


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
    except sqlite3.DatabaseError:
        return "damaged"
    return "current" if row is not None and row[0] == rs.signature(srcs) else "stale"


def refresh(repo: str, cwd: str | None) -> Built | None:
    """Build the merged cache of the prompt context of `cwd` unless it is current; None when a
    prompt there reads one source (nothing to merge), the sources hold fewer than MIN_ROWS
    memories together (a merged cache there is removed), or it was current."""
    srcs = rs.found(repo, cwd)
    if len(srcs) < 2 or state(repo, cwd) == "current":
        return None
    if sum(_count(s.db) for s in srcs) < MIN_ROWS:
        with contextlib.suppress(FileNotFoundError):
            os.remove(rs.merged_db(srcs))
        return None
    return build(srcs)


def _count(db_path: str) -> int:
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)) as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'count'").fetchone()
        return int(row[0]) if row else 0
    except (sqlite3.DatabaseError, ValueError):
        return 0


def build(srcs: list[rs.Source]) -> Built:
    """Build the merged cache of `srcs` into a temp file and put it in place (readers see the old
    file or the new one). The signature recorded is taken before any source is read: a source
    written meanwhile leaves the merged cache stale, never wrong."""
    start = time.perf_counter()
    path = rs.merged_db(srcs)
    out = Built(path)
    out.rebuilt = True
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    signature = rs.signature(srcs)
    tmp = f"{path}.tmp-{os.getpid()}"
    with contextlib.suppress(FileNotFoundError):
        os.remove(tmp)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        with contextlib.closing(sqlite3.connect(tmp)) as db:
            db.executescript(index.SCHEMA)
            with db:
                for src in srcs:
                    _copy(db, src, out)
                docstats.build_all(db, index.FTS_COLUMNS)
                index._set_techwords(db)
                count = db.execute("SELECT count(*) FROM memories").fetchone()[0]
                db.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                               [("sources", signature), ("count", str(count)), ("commit", ""),
                                ("updated_at", f"{time.time():.6f}")])
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
    _forget_old(folder)
    out.seconds = time.perf_counter() - start
    return out


def _copy(db: sqlite3.Connection, src: rs.Source, out: Built) -> None:
    """Every row of `src`'s cache that passes the checks, under its tagged id and path. A source
    whose cache cannot be read is left out whole (the prompt hook skips it the same way)."""
    tag = rs.tag(src)
    try:
        with contextlib.closing(sqlite3.connect(f"file:{src.db}?mode=ro", uri=True)) as sdb:
            if sdb.execute("PRAGMA user_version").fetchone()[0] != index.SCHEMA_VERSION:
                raise sqlite3.DatabaseError("an older schema")
            cites: dict[int, list[tuple[Any, ...]]] = {}
            for rowid, cpath, line, symbol in sdb.execute("SELECT rowid, path, line, symbol FROM citations"):
                cites.setdefault(rowid, []).append((cpath, line, symbol))
            rows = sdb.execute(f"SELECT m.rowid, {', '.join('m.' + c.strip() for c in _MEMORY_COLUMNS.split(','))},"
                               f" {', '.join('f.' + c for c in index.FTS_COLUMNS)}"
                               " FROM memories m JOIN fts f ON f.rowid = m.rowid ORDER BY m.rowid").fetchall()
    except sqlite3.DatabaseError as exc:
        out.skipped.append((src.label, f"its cache cannot be read: {exc}"))
        if src.kind == rs.PERSONAL:
            raise
        return
    seen: set[str] = set()
    for row in rows:
        rowid, record, text = row[0], row[1:20], row[20:]
        problem = _problem(record, text) or ("a second row for this id" if record[0] in seen else "")
        if problem:
            out.skipped.append((src.label, f"{str(record[0])[:80]!r}: {problem}"))
            continue
        seen.add(record[0])
        tagged = (tag + record[0], tag + record[1], *record[2:5],
                  tag + record[5] if record[5] else None, *record[6:])
        kept = [c for c in cites.get(rowid, [])[:MAX_CITATIONS] if _citation_ok(c)]
        index._insert(db, (tagged, tuple(t or "" for t in text), kept), stats=False)
        out.rows += 1


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
