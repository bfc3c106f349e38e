"""The `index/` folder and the cache file in it: one writer at a time (the index lock), the
folder's two tracked files, a new build put in place so every reader sees the old cache or the
new one, the stale marker, and the schema a cache file holds. `index` builds and updates what is
in the file.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import sys
import time
from typing import Iterator

from memrepo.base import paths
from memrepo.errors import CacheError
from memrepo.vcs import lock as locking

LOCK_WAIT = 120.0  # seconds a writer waits for the index lock (a rebuild of 100,000 memories fits)


class IndexBusy(CacheError):
    """Another process held the index lock for longer than the wait allowed."""


@contextlib.contextmanager
def lock(repo: str, wait: float | None = None) -> Iterator[None]:
    """One writer at a time per repository (ten terminals may commit at once).

    Waits at most `wait` seconds (None: LOCK_WAIT), then raises IndexBusy: a git hook that
    gives up marks the index stale instead of holding the user's commit.
    """
    from memrepo.store import private

    prepare_dir(repo)
    private.tighten(paths.index_dir(repo))  # every index writer passes here: 0700/0600 (issue 15)
    deadline = time.monotonic() + (LOCK_WAIT if wait is None else wait)
    with open(os.path.join(paths.index_dir(repo), ".lock"), "a") as fh:
        if not locking.wait_for(fh.fileno(), max(0.0, deadline - time.monotonic())):
            raise IndexBusy(f"another process has held the index lock of {repo} for too long",
                            hint="let it finish, then run `memrepo index` (or `--rebuild`)")
        try:
            yield
        finally:
            private.tighten(paths.index_dir(repo))  # what SQLite made meanwhile (a rebuild's file, -wal, -shm)
            locking.release(fh.fileno())


GITIGNORE = ("# The cache is rebuilt from memory/ (`memrepo index --rebuild`); only this file and README.md are tracked.\n"
             "*\n!.gitignore\n!README.md\n")


README = f"""# index/

A cache, not a source of truth: `{paths.INDEX_FILE}` (named for its schema) is a SQLite FTS5 index of `memory/`, kept
fresh by the git hooks `memrepo init` installs in each clone, and rebuilt at any time with
`memrepo index --rebuild`.
`recall-log.jsonl` records each recall decision (prompt hash, terms, ids, latency) on this
machine only; `recall-usage.jsonl` whether each turn's reply used what was injected (ids only);
`recall-noisy.json` the memories injected often and never used (the sweep writes it) and the day each was last used. Nothing here is committed except this README and `.gitignore`.
"""


def prepare_dir(repo: str) -> None:
    """`index/` as a folder with its .gitignore: a file in its place is moved aside (memrepo only
    ever makes a folder there), a missing .gitignore written back before any cache file lands.
    A folder or link in the cache file's place is moved aside too (issue 38: the rebuild doctor
    named then failed "Is a directory")."""
    from memrepo.store import faults

    top = paths.index_dir(repo)
    if os.path.lexists(top) and not os.path.isdir(top):
        _move_aside(top, "a file, not a folder")
    os.makedirs(top, mode=0o700, exist_ok=True)
    taken = faults.cache_in_place(repo)
    if taken:
        _move_aside(paths.index_db(repo), f"{taken}, not the cache file")
    for name, text in ((".gitignore", GITIGNORE), ("README.md", README)):  # both tracked: put back as committed
        if not os.path.exists(os.path.join(top, name)):
            with open(os.path.join(top, name), "w", encoding="utf-8") as fh:
                fh.write(text)


def _move_aside(path: str, what: str) -> None:
    """Rename what memrepo did not make out of its way: nothing is deleted."""
    aside = f"{path}.moved-aside-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
    os.replace(path, aside)
    print(f"memrepo: {path} was {what}; moved it to {aside}", file=sys.stderr)


def write_failed(repo: str, exc: BaseException) -> CacheError:
    """A cache write refused by the disk (full, read-only, not a folder), with the fix named."""
    from memrepo.store import faults

    why = getattr(exc, "strerror", None) or str(exc)
    return CacheError(f"cannot write the cache in {paths.index_dir(repo)}: {why}", hint=faults.writable_fix(repo, exc))


def remove_temps(db_path: str) -> None:
    """Drop temp builds: under the lock, any left over belongs to a build that died."""
    folder, name = os.path.split(db_path)
    for entry in os.listdir(folder):
        if entry.startswith(name + ".tmp-"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(folder, entry))


def swap_in(tmp: str, db_path: str) -> None:
    """Make the build in `tmp` the live index, so that every reader sees the old index or the new one.

    A live index is overwritten in one SQLite transaction (the backup API into the WAL file):
    a reader keeps the snapshot it began with, the next one sees the new index. Renaming a file
    under WAL readers instead would pair the new file with the old one's -wal and -shm. Only
    with no live index (or one SQLite cannot open) is the build renamed into place.
    """
    try:
        if _copy_into_live(tmp, db_path):
            return
    except CacheError as exc:
        if not isinstance(exc.__cause__, sqlite3.DatabaseError) or isinstance(exc.__cause__, sqlite3.OperationalError):
            raise  # busy or locked: another process holds it, so it is not ours to replace
    with contextlib.closing(sqlite3.connect(tmp)) as db:
        db.execute("PRAGMA journal_mode=WAL")
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(db_path + suffix)
    os.replace(tmp, db_path)


def _copy_into_live(tmp: str, db_path: str) -> bool:
    """Copy the build over the live index in one transaction; False when there is none to copy into."""
    if schema_version(db_path) is None:
        return False
    try:
        with contextlib.closing(sqlite3.connect(tmp)) as src, \
                contextlib.closing(sqlite3.connect(db_path, timeout=LOCK_WAIT)) as live:
            live.execute("PRAGMA journal_mode=WAL")
            src.backup(live)
            live.execute("PRAGMA journal_mode=WAL")
            live.execute("PRAGMA wal_checkpoint(PASSIVE)")
    except sqlite3.Error as exc:
        raise CacheError(f"could not write the rebuilt index into {db_path}: {exc}",
                         hint="close what holds it open for writing, then run `memrepo index --rebuild`") from exc
    return True


def clear_stale(repo: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(paths.stale_marker(repo))


def read_only(db_path: str) -> sqlite3.Connection:
    """The cache opened for reading as recall opens it (a read-only `index/` included, issue 38)."""
    from memrepo.recall import search

    return search.connect(db_path)


def schema_version(db_path: str) -> int | None:
    """The cache's schema version, or None when it is missing or unreadable."""
    if not os.path.exists(db_path):
        return None
    try:
        with contextlib.closing(read_only(db_path)) as db:
            db.execute("SELECT count(*) FROM memories").fetchone()
            return int(db.execute("PRAGMA user_version").fetchone()[0])
    except sqlite3.Error:
        return None


def mark_stale(repo: str, why: str) -> None:
    """Leave a marker the SessionStart hook and `doctor` see; never raises."""
    with contextlib.suppress(OSError):
        os.makedirs(paths.index_dir(repo), exist_ok=True)
        with open(paths.stale_marker(repo), "w", encoding="utf-8") as fh:
            fh.write(json.dumps({"at": int(time.time()), "why": why}) + "\n")
