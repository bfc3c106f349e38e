"""What the git hooks and the commands read from the cache without building it: the commit it
holds exactly, the git blob id of each memory it indexed, which paths it holds, the memory files
it could not index, and its status for doctor and SessionStart (with the memory files on disk it
is compared with). Each answers "nothing" for a cache of another schema; `index` builds.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from typing import Any

from memrepo.base import paths
from memrepo.format import files
from memrepo.store import cachefile, synced

SCHEMA_VERSION = paths.SCHEMA_VERSION
BLOB_HASHES = "git-blob"  # meta `hashes`: every row's hash is its file's git blob id


def blob_hashes(db: sqlite3.Connection) -> bool:
    """Whether every row's hash in the cache is its file's git blob id."""
    kind = db.execute("SELECT value FROM meta WHERE key = 'hashes'").fetchone()
    return bool(kind and kind[0] == BLOB_HASHES)


def synced_facts(repo: str) -> tuple[str, dict[str, str], set[str]] | None:
    """(the commit the cache holds exactly, {path: superseded_by} of its memories that have one,
    the paths it could not index), or None when the cache is synced to no commit (see `synced`)."""
    db_path = paths.index_db(repo)
    if cachefile.schema_version(db_path) != SCHEMA_VERSION:
        return None
    with contextlib.closing(cachefile.read_only(db_path)) as db:
        commit = synced.read(db) if blob_hashes(db) else None
        if not commit:
            return None
        edges = {path: sup for path, sup in db.execute(
            "SELECT path, superseded_by FROM memories WHERE superseded_by IS NOT NULL") if isinstance(sup, str) and sup}
        return commit, edges, {r[0] for r in db.execute("SELECT path FROM skipped")}


def indexed(repo: str, rels: list[str]) -> set[str]:
    """Which of `rels` the cache has a row or a skipped entry for."""
    found: set[str] = set()
    with contextlib.closing(sqlite3.connect(f"file:{paths.index_db(repo)}?mode=ro", uri=True)) as db:
        for i in range(0, len(rels), 500):
            chunk = rels[i:i + 500]
            marks = ",".join("?" * len(chunk))
            found.update(r[0] for r in db.execute(f"SELECT path FROM memories WHERE path IN ({marks}) "
                                                   f"UNION SELECT path FROM skipped WHERE path IN ({marks})", chunk + chunk))
    return found


def skipped(repo: str) -> list[tuple[str, str]]:
    """(path, problem) of each memory file the cache could not index: `list` and `stats` name them
    (issue 38). [] when there is no readable cache."""
    db_path = paths.index_db(repo)
    if cachefile.schema_version(db_path) != SCHEMA_VERSION:
        return []
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)) as db:
            return [(str(p), str(q)) for p, q in db.execute("SELECT path, problem FROM skipped ORDER BY path")]
    except sqlite3.DatabaseError:
        return []


def blob_facts(repo: str) -> dict[str, tuple[str, str | None]]:
    """{path: (git blob id, superseded_by)} of every indexed memory, or {} when the cache's hashes
    are not git blob ids (a cache built before they were: `memrepo index --rebuild` makes them so)."""
    db_path = paths.index_db(repo)
    if cachefile.schema_version(db_path) != SCHEMA_VERSION:
        return {}
    with contextlib.closing(cachefile.read_only(db_path)) as db:
        if not blob_hashes(db):
            return {}
        return {path: (digest, sup if isinstance(sup, str) else None)
                for path, digest, sup in db.execute("SELECT path, hash, superseded_by FROM memories")}


def scan(repo: str) -> dict[str, os.stat_result]:
    """Memory files on disk, by repository-relative path."""
    found: dict[str, os.stat_result] = {}
    mdir = paths.memory_dir(repo)
    for name in files.memory_files(mdir):  # never a symlink: one that came with a pull may point at ~/.ssh
        with contextlib.suppress(FileNotFoundError):
            found[f"{paths.MEMORY_DIR}/{name}"] = os.stat(os.path.join(mdir, name), follow_symlinks=False)
    return found


def status(repo: str) -> dict[str, Any]:
    """Facts about the cache for `doctor` and the SessionStart hook (no rebuild, no git writes)."""
    db_path = paths.index_db(repo)
    info: dict[str, Any] = {"path": db_path, "exists": os.path.exists(db_path), "schema": None,
                            "schema_ok": False, "commit": None, "count": 0, "skipped": [],
                            "stale_marker": os.path.exists(paths.stale_marker(repo))}
    version = cachefile.schema_version(db_path)
    info["schema"] = version
    info["schema_ok"] = version == SCHEMA_VERSION
    if not info["schema_ok"]:
        return info
    try:
        with contextlib.closing(cachefile.read_only(db_path)) as db:
            meta = dict(db.execute("SELECT key, value FROM meta"))
            info["commit"] = meta.get("commit") or None
            info["blob_hashes"] = meta.get("hashes") == BLOB_HASHES
            info["synced"] = synced.read(db) if info["blob_hashes"] else None
            info["count"] = db.execute("SELECT count(*) FROM memories").fetchone()[0]
            info["skipped"] = list(db.execute("SELECT path, problem FROM skipped ORDER BY path"))
            if info["synced"] and not info["stale_marker"] and synced.fresh(repo, info["synced"]):
                info["changed_files"] = []  # git says memory/ is the commit the cache holds: no scan
                return info
            known = {r[0]: (r[1], r[2]) for r in db.execute("SELECT path, mtime_ns, size FROM memories")}
            known.update({p: (None, None) for p, _ in info["skipped"]})
    except sqlite3.DatabaseError:  # a damaged page under the tables: as unreadable as no file
        info.update(schema=None, schema_ok=False, skipped=[])
        return info
    on_disk = {rel: (st.st_mtime_ns, st.st_size) for rel, st in scan(repo).items()}
    info["changed_files"] = sorted(p for p in set(on_disk) | set(known)
                                   if p not in known or p not in on_disk or (known[p][0] is not None and known[p] != on_disk[p]))
    return info
