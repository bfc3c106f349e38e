"""Which commit the cache holds exactly, so pre-commit can ask git what differs instead of listing N files.

The cache is *synced* to commit C (meta `synced`) when its rows are exactly `C:memory/`: one row
(or one `skipped` entry) per memory file of C, each row's `hash` that file's git blob id. Then
the staged memories that differ from the cache are exactly what `git diff-index --cached C`
names, in C's time, not Python's; everything else the cache gives as it is.

How the mark is kept: a full scan (build or update) sets it when the working tree's `memory/`
is HEAD's (`git status` names nothing there) and the counts agree; a post-commit update carries
it from the parent to the new commit when every path the commit changed now holds the
committed blob; anything else drops it, and pre-commit then reads what it must the slow way.
"""

from __future__ import annotations

import sqlite3

from memrepo.base import paths
from memrepo.vcs import gitcmd, status, trees

KEY = "synced"


def after_scan(repo: str, db: sqlite3.Connection) -> str | None:
    """HEAD when the cache (just brought in line with the working tree) is exactly HEAD's memory/."""
    head = gitcmd.head(repo)
    if head is None:
        return None
    if not clean(repo):
        return None
    listed = trees.paths_under(repo, head, paths.MEMORY_DIR)
    if listed is None:
        return None
    in_tree = sum(1 for rel in listed if rel.endswith(".md") and rel.count("/") == 1)
    rows = db.execute("SELECT (SELECT count(*) FROM memories) + (SELECT count(*) FROM skipped)").fetchone()[0]
    return head if rows == in_tree else None


def clean(repo: str) -> bool:
    """True when git sees nothing in memory/ that HEAD does not hold: no change, no new file.

    One `git status` (git's own stat cache, in C; no lock taken), not a Python scan of N files."""
    return status.clean(repo, paths.MEMORY_DIR)


def fresh(repo: str, commit: str | None) -> bool:
    """The cache synced to `commit` is exactly the memories on disk: HEAD is that commit and clean."""
    return bool(commit) and gitcmd.head(repo) == commit and clean(repo)


def after_commit(repo: str, db: sqlite3.Connection, was: str | None, parent: str | None, rels: list[str],
                 head: str | None = None) -> str | None:
    """The new HEAD (`head`, when the caller just made it) when the cache was synced to `parent`
    and now holds every path HEAD changed exactly as committed; else None."""
    head = head or gitcmd.head(repo)
    if not (was and parent and was == parent and head):
        return None
    if not rels:
        return head
    committed = trees.blob_ids(repo, head, rels)
    if committed is None:
        return None
    for rel in rels:
        row = db.execute("SELECT hash FROM memories WHERE path = ?", (rel,)).fetchone()
        skipped = db.execute("SELECT 1 FROM skipped WHERE path = ?", (rel,)).fetchone()
        if rel in committed:
            if not (skipped or (row and row[0] == committed[rel])):
                return None
        elif row or skipped:
            return None  # the commit removed it; the cache still has it
    return head


def _stamp(db: sqlite3.Connection) -> str:
    hit = db.execute("SELECT value FROM meta WHERE key = 'updated_at'").fetchone()
    return str(hit[0]) if hit else ""


def read(db: sqlite3.Connection) -> str | None:
    """The synced commit, or None. The mark holds the stamp of the update that wrote it: any later
    writer of the cache that does not keep the mark (an older memrepo) changes the stamp."""
    hit = db.execute("SELECT value FROM meta WHERE key = ?", (KEY,)).fetchone()
    commit, _, stamp = str(hit[0] if hit and hit[0] else "").partition(" ")
    return commit if commit and stamp and stamp == _stamp(db) else None


def write(db: sqlite3.Connection, commit: str | None) -> None:
    """Mark the cache synced to `commit` (None: not synced); call after the update's stamp is set."""
    if commit:
        db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (KEY, f"{commit} {_stamp(db)}"))
    else:
        db.execute("DELETE FROM meta WHERE key = ?", (KEY,))
