"""The transcript index: Claude Code sessions' turns and tool calls, searchable (the third level of recall).

It lives in its OWN SQLite file, `index/transcripts.sqlite3`, with its own schema version in
`PRAGMA user_version`: the memory cache `index/memrepo-v4.sqlite3` is rebuilt by building a new
file and swapping it into place, which would drop any table added to it. On a version mismatch
this file is dropped and rebuilt from the transcripts (it is a cache, like the other one).

Tables: `files` (path, size, mtime, lines read, byte offset reached, a hash of the file's head
to tell a rewritten file from a grown one), `turns` (session, uuid, role, time, project, text),
`tools` (turn, name, command, normalized command, paths) and `fts`, an FTS5 table over turn
text (external content: the text is stored once, in `turns`). What goes in is what
`transcript.read` yields — images, memrepo's injected context and `<private>` spans dropped,
secrets redacted — and only prompts, assistant text and tool calls: tool output bodies never.

memrepo's own model calls are not the user's work: a session whose first prompt is one
(`transcript.is_memrepo_prompt`) is recorded in `files` with its session id marked `OWN` and
none of its turns is stored (version 2 dropped the ones version 1 had stored).

Incremental: an unchanged file is skipped; a grown file is read from the line of its last
stored turn (that turn is redone, since Claude Code writes one reply over several lines); a
file that shrank or whose head changed is redone from scratch.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sqlite3
from typing import Any, Iterator

from memrepo.progress import Progress, silent
from memrepo.base import paths
from memrepo.store import private
from memrepo.format import steps
from memrepo.format import transcript
from memrepo.errors import CacheError

SCHEMA_VERSION = 2
OWN = "memrepo-pass:"  # prefix of `files.session` for a session of memrepo's own model command
DB_FILE = "transcripts.sqlite3"
HEAD_BYTES = 4096
KINDS = ("prompt", "reply", "compact_summary")
DEFAULT_DIR = "~/.claude/projects"


def default_dir() -> str:
    """Claude Code's transcripts: `$CLAUDE_CONFIG_DIR/projects`, else ~/.claude/projects."""
    config = os.environ.get("CLAUDE_CONFIG_DIR")
    return os.path.join(config, "projects") if config else DEFAULT_DIR

SCHEMA = """
CREATE TABLE files (path TEXT PRIMARY KEY, size INTEGER, mtime REAL, line INTEGER, offset INTEGER,
                    head TEXT, session TEXT);
CREATE TABLE turns (id INTEGER PRIMARY KEY, file TEXT NOT NULL, session TEXT NOT NULL, uuid TEXT, line INTEGER,
                    role TEXT, kind TEXT, time TEXT, project TEXT, cwd TEXT, text TEXT);
CREATE INDEX turns_session ON turns(session, id);
CREATE INDEX turns_file ON turns(file, id);
CREATE INDEX turns_uuid ON turns(uuid);
CREATE TABLE tools (id INTEGER PRIMARY KEY, turn INTEGER NOT NULL, session TEXT NOT NULL, name TEXT,
                    command TEXT, norm TEXT, paths TEXT);
CREATE INDEX tools_turn ON tools(turn);
CREATE INDEX tools_session ON tools(session, id);
CREATE VIRTUAL TABLE fts USING fts5(text, content='turns', content_rowid='id', tokenize='unicode61');
"""


def db_path(repo: str) -> str:
    return os.path.join(paths.index_dir(repo), DB_FILE)


def connect(repo: str) -> sqlite3.Connection:
    """The transcript index of `repo`, created (or dropped and recreated) at this schema version."""
    path = db_path(repo)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    db = sqlite3.connect(path)
    private.tighten(os.path.dirname(path))  # past conversations, whole: for this user's eyes only
    db.row_factory = sqlite3.Row
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        db.close()
        raise CacheError(f"{path} is not a readable SQLite file ({exc})", hint=f"remove {path} and run `memrepo transcripts index`") from None
    if version != SCHEMA_VERSION:
        db.close()
        os.remove(path)
        db = sqlite3.connect(path)
        db.row_factory = sqlite3.Row
        db.executescript(SCHEMA + f"PRAGMA user_version = {SCHEMA_VERSION};")
    return db


class IndexReport:
    """What one `index` run did: files seen / skipped / grown / redone, turns added."""

    def __init__(self) -> None:
        self.files = self.unchanged = self.grown = self.redone = self.new = self.turns = self.own = 0

    def as_dict(self) -> dict[str, int]:
        return dict(vars(self))


def transcript_files(root: str) -> list[str]:
    """Every `.jsonl` file under `root` (or `root` itself when it is a file), sorted."""
    root = os.path.abspath(os.path.expanduser(root))
    if os.path.isfile(root):
        return [root]
    found: list[str] = []
    for dirpath, _, names in os.walk(root):
        found.extend(os.path.join(dirpath, n) for n in names if n.endswith(".jsonl"))
    return sorted(found)


def _head(path: str, size: int) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha1(fh.read(min(size, HEAD_BYTES))).hexdigest()


def index(repo: str, root: str | None = None, progress: Progress = silent) -> IndexReport:
    """Add the turns of every transcript under `root` (default: `default_dir()`) to the index."""
    report = IndexReport()
    with contextlib.closing(connect(repo)) as db:
        found = transcript_files(root or default_dir())
        for path in found:
            progress("transcripts: files read", report.files, len(found))
            report.files += 1
            with db:
                _index_file(db, path, report)
        progress("transcripts: files read", report.files, len(found))
    return report


def _index_file(db: sqlite3.Connection, path: str, report: IndexReport) -> None:
    st = os.stat(path)
    row = db.execute("SELECT * FROM files WHERE path = ?", (path,)).fetchone()
    if row is not None and row["size"] == st.st_size and row["mtime"] == st.st_mtime:
        report.unchanged += 1
        return
    if row is not None and str(row["session"]).startswith(OWN) or row is None and _own_session(path):
        _remember_own(db, path, st, row)
        report.own += 1
        return
    start_line, offset = 0, 0
    if row is not None and st.st_size >= row["size"] and _head(path, row["size"]) == row["head"]:
        report.grown += 1
        start_line, offset = _resume_point(db, path, row)
    elif row is not None:
        report.redone += 1
        _forget(db, "file = ?", (path,))
    else:
        report.new += 1
    last = None
    for turn in _turns_from(path, start_line, offset):
        last = turn
        report.turns += _store(db, path, turn)
    line, offset = _last_turn_start(db, path, start_line, offset)
    db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?)",
               (path, st.st_size, st.st_mtime, line, offset, _head(path, st.st_size),
                last.session_id if last else (row["session"] if row else "")))


def _own_session(path: str) -> bool:
    """True when the file's first prompt is one of memrepo's own model calls."""
    for turn in _turns_from(path, 0, 0):
        if turn.kind == "prompt":
            return transcript.is_memrepo_prompt(turn.text)
    return False


def _remember_own(db: sqlite3.Connection, path: str, st: os.stat_result, row: sqlite3.Row | None) -> None:
    session = str(row["session"]) if row is not None else OWN + os.path.splitext(os.path.basename(path))[0]
    db.execute("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?)",
               (path, st.st_size, st.st_mtime, 0, 0, _head(path, st.st_size), session))


def _resume_point(db: sqlite3.Connection, path: str, row: sqlite3.Row) -> tuple[int, int]:
    """Drop the file's last stored turn (it may continue in the new lines); read again from its line."""
    last = db.execute("SELECT id, line FROM turns WHERE file = ? ORDER BY id DESC LIMIT 1", (path,)).fetchone()
    if last is None:
        return 0, 0
    _forget(db, "id = ?", (last["id"],))
    return row["line"], row["offset"]


def _turns_from(path: str, start_line: int, offset: int) -> Iterator[transcript.Turn]:
    """Turns after byte `offset` (the start of line `start_line` + 1), line numbers absolute."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        for turn in transcript.read_stream(fh):
            turn.line += start_line
            turn.last_line += start_line
            yield turn


def _last_turn_start(db: sqlite3.Connection, path: str, start_line: int, offset: int) -> tuple[int, int]:
    """(lines before the file's last stored turn, byte offset of that turn's first line)."""
    last = db.execute("SELECT line FROM turns WHERE file = ? ORDER BY id DESC LIMIT 1", (path,)).fetchone()
    if last is None:
        return start_line, offset
    target = last["line"] - 1
    with open(path, "rb") as fh:
        fh.seek(offset)
        line = start_line
        while line < target:
            if not fh.readline():
                break
            line += 1
        return line, fh.tell()


def _forget(db: sqlite3.Connection, where: str, args: tuple[Any, ...]) -> None:
    rows = db.execute(f"SELECT id, text FROM turns WHERE {where}", args).fetchall()
    for r in rows:
        db.execute("INSERT INTO fts(fts, rowid, text) VALUES ('delete', ?, ?)", (r["id"], r["text"]))
        db.execute("DELETE FROM tools WHERE turn = ?", (r["id"],))
        db.execute("DELETE FROM turns WHERE id = ?", (r["id"],))


@functools.lru_cache(maxsize=256)
def project_name(cwd: str) -> str:
    """The project of a turn: its key (`memrepo.base.projects`), else the last part of its cwd."""
    return paths.project_of(cwd) or os.path.basename(cwd.rstrip("/")) if cwd else ""


def _store(db: sqlite3.Connection, path: str, turn: transcript.Turn) -> int:
    if turn.kind not in KINDS or (not turn.text and not turn.tools):
        return 0
    session = turn.session_id or os.path.splitext(os.path.basename(path))[0]
    if turn.uuid and db.execute("SELECT 1 FROM turns WHERE uuid = ? AND session = ? AND file != ?",
                                (turn.uuid, session, path)).fetchone():
        return 0  # a copy of a transcript already indexed (or a resumed session replaying it)
    tool_text = "\n".join(f"$ {t.command}" if t.command else f"[{t.name}] {' '.join(t.paths)}".strip() for t in turn.tools)
    text = "\n".join(p for p in (turn.text, tool_text) if p)
    cur = db.execute("INSERT INTO turns (file, session, uuid, line, role, kind, time, project, cwd, text) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (path, session, turn.uuid, turn.line, turn.role, turn.kind, turn.timestamp,
                      project_name(turn.cwd), turn.cwd, text))
    rowid = cur.lastrowid
    db.execute("INSERT INTO fts(rowid, text) VALUES (?, ?)", (rowid, text))
    for call in turn.tools:
        db.execute("INSERT INTO tools (turn, session, name, command, norm, paths) VALUES (?, ?, ?, ?, ?, ?)",
                   (rowid, session, call.name, call.command, steps.step_of(call.name, call.command, call.paths),
                    json.dumps(call.paths)))
    return 1


def fts_query(text: str) -> str:
    """A user query as an FTS5 expression: every word quoted, the last one as a prefix, OR-joined."""
    words = [w for w in "".join(c if c.isalnum() or c in "_-." else " " for c in text).split() if w.strip("_-.")]
    if not words:
        return ""
    quoted = ['"' + w.replace('"', '""') + '"' for w in words]
    quoted[-1] += "*"
    return " OR ".join(quoted)


def search(repo: str, query: str, project: str | None = None, since: str | None = None,
           limit: int = 10) -> list[dict[str, Any]]:
    """Turns matching `query`, best first (bm25), each with session, time, project, uuid and a snippet.

    `project` is a key (`github.com/acme/shop`), or a label (`shop`) that also finds every key ending in it.
    """
    expr = fts_query(query)
    if not expr:
        return []
    sql = ("SELECT t.session, t.uuid, t.time, t.project, t.role, t.file, t.line, bm25(fts) AS score, "
           "snippet(fts, 0, '[', ']', ' … ', 16) AS snippet FROM fts JOIN turns t ON t.id = fts.rowid "
           "WHERE fts MATCH ?")
    args: list[Any] = [expr]
    if project and "/" not in project:
        # A label names every key ending in it, and the bare names turns were stored under before keys.
        sql += " AND (t.project = ? OR t.project LIKE ? ESCAPE '\\')"
        args += [project, "%/" + project.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")]
    elif project:
        sql += " AND t.project = ?"
        args.append(project)
    if since:
        sql += " AND t.time >= ?"
        args.append(since)
    sql += " ORDER BY score, t.id LIMIT ?"
    args.append(limit)
    with contextlib.closing(connect(repo)) as db:
        return [dict(r) | {"score": round(r["score"], 3)} for r in db.execute(sql, args)]


def turns_of(repo: str, session: str) -> list[dict[str, Any]]:
    """Every indexed turn of one session, in order, each with its tool calls."""
    with contextlib.closing(connect(repo)) as db:
        rows = [dict(r) for r in db.execute("SELECT * FROM turns WHERE session = ? ORDER BY id", (session,))]
        for r in rows:
            r["tools"] = [dict(t) for t in db.execute("SELECT name, command, norm, paths FROM tools WHERE turn = ? ORDER BY id", (r["id"],))]
    return rows


def session_of(repo: str, path_or_session: str) -> str | None:
    """The session id named by a transcript path, a session id, or a unique prefix of one."""
    with contextlib.closing(connect(repo)) as db:
        if os.path.exists(path_or_session):
            row = db.execute("SELECT session FROM turns WHERE file = ? LIMIT 1", (os.path.abspath(path_or_session),)).fetchone()
            return row["session"] if row else None
        rows = db.execute("SELECT DISTINCT session FROM turns WHERE session LIKE ? ESCAPE '\\' LIMIT 2",
                          (path_or_session.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%",)).fetchall()
    return rows[0]["session"] if len(rows) == 1 else None


def around(repo: str, path_or_session: str, turn_uuid: str | None = None, context: int = 3) -> list[dict[str, Any]]:
    """The turn `turn_uuid` of a session and `context` turns either side (the whole session without a turn).

    The chosen turn carries `focus: True`. Raises CacheError when the session or turn is not indexed.
    """
    session = session_of(repo, path_or_session)
    if session is None:
        raise CacheError(f"no indexed session matches {path_or_session!r}",
                         hint="run `memrepo transcripts index` first, or give the session id in full")
    turns = turns_of(repo, session)
    if not turn_uuid:
        return turns
    matches = [i for i, t in enumerate(turns) if t["uuid"] == turn_uuid]
    matches = matches or [i for i, t in enumerate(turns) if t["uuid"].startswith(turn_uuid)]
    at = matches[0] if len(matches) == 1 else None
    if at is None:
        raise CacheError(f"session {session} has no indexed turn {turn_uuid!r}" + (" (prefix not unique)" if matches else ""),
                         hint=f"run `memrepo transcript {session}` to list its turns")
    out = turns[max(0, at - context): at + context + 1]
    for t in out:
        t["focus"] = t["uuid"] == turns[at]["uuid"]
    return out


def stats(repo: str) -> dict[str, int]:
    """Files, sessions, turns, tool calls and the index file's size in bytes."""
    with contextlib.closing(connect(repo)) as db:
        one = lambda sql: int(db.execute(sql).fetchone()[0])  # noqa: E731
        out = {"files": one("SELECT COUNT(*) FROM files"), "sessions": one("SELECT COUNT(DISTINCT session) FROM turns"),
               "turns": one("SELECT COUNT(*) FROM turns"), "tool_calls": one("SELECT COUNT(*) FROM tools")}
    out["bytes"] = os.path.getsize(db_path(repo))
    return out
