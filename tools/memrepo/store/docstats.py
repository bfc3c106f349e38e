"""Per-memory term statistics in the cache, so recall scores its candidates without bm25() walks.

FTS5's bm25() needs each query term's document count, which it gets by walking the term's
whole doclist once per statement: at 100,000 memories scoring 40 candidates on six terms walked
tens of thousands of rows (issue 22). Two rebuildable tables hold what that walk computed:

- `docterms`: one row per memory (the `fts` rowid): its length in tokens and, for each distinct
  token FTS5 stored for it, the token's weighted frequency and where it occurs, as the text
  ` token:W2:G token:W2:G ...` (a leading space, so ` token:` finds a token whole).
  W2 is twice the sum of the column weights of its occurrences (`recall.search.WEIGHTS` are
  halves), G the columns it is in: 1 subject (title, aliases, topics), 2 names (entities),
  4 prose (description, body); 0 means tech only.
- `terms`: each token's document count.

Both are read off FTS5's own tokenization (the `fts5vocab` virtual table), never a tokenizer
of ours, so a token here is exactly the token `MATCH` finds. A full build fills them from the
whole index in two statements; an update computes one memory's statistics by tokenizing it in
a temporary FTS5 table with the same tokenizer. Every writer of `fts` goes through `add` and
`remove` (store/index.py `_insert`, `_delete`), inside the same transaction, so the tables
never disagree with the index. `meta.docstats` names the weights they were made with; recall
uses them only when that matches its own (`recall.search.DOCSTATS`).
"""

from __future__ import annotations

import sqlite3

from memrepo.recall import search

SCHEMA = """
CREATE TABLE docterms(rowid INTEGER PRIMARY KEY, dl INTEGER NOT NULL, terms TEXT NOT NULL);
CREATE TABLE terms(term TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID;
"""
TABLES = ("docterms", "terms")


def _aggregate(vocab: str, columns: tuple[str, ...]) -> str:
    """SQL over an `instance` fts5vocab table: (doc, dl, terms text) per document."""
    w2 = " ".join(f"WHEN '{c}' THEN {int(w * 2)}" for c, w in zip(columns, search.WEIGHTS))
    groups = ((search._SUBJECT, 1), (search._NAMES, 2), (search._PROSE, 4))
    g = " + ".join(f"{bit} * max(col IN ({', '.join(repr(c) for c, on in zip(columns, mask) if on)}))"
                   for mask, bit in groups)
    return (f"SELECT doc, sum(n), ' ' || group_concat(x, ' ') FROM ("
            f"SELECT doc, count(*) AS n, term || ':' || sum(CASE col {w2} ELSE 0 END) || ':' || ({g}) AS x"
            f" FROM {vocab} GROUP BY term, doc) GROUP BY doc")


def _check_weights() -> None:
    if any(w * 2 != int(w * 2) for w in search.WEIGHTS):
        raise ValueError("recall.search.WEIGHTS must be multiples of 0.5 for the cache's term statistics")


def build_all(db: sqlite3.Connection, columns: tuple[str, ...]) -> None:
    """Fill both tables from the whole `fts` index (a full build, into an empty cache)."""
    _check_weights()
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.docstats_instances USING fts5vocab(main, fts, instance)")
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.docstats_rows USING fts5vocab(main, fts, row)")
    db.execute("DELETE FROM docterms")
    db.execute("DELETE FROM terms")
    db.execute(f"INSERT INTO docterms(rowid, dl, terms) {_aggregate('temp.docstats_instances', columns)}")
    # a memory with no token at all (every field empty) still has its row: one row per memory
    db.execute("INSERT INTO docterms(rowid, dl, terms) SELECT rowid, 0, ' ' FROM fts_docsize"
               " WHERE rowid NOT IN (SELECT rowid FROM docterms)")
    db.execute("INSERT INTO terms(term, df) SELECT term, doc FROM temp.docstats_rows")
    db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('docstats', ?)", (search.DOCSTATS,))


def current(db: sqlite3.Connection) -> bool:
    """Whether the tables were made for the weights recall scores with now."""
    row = db.execute("SELECT value FROM meta WHERE key = 'docstats'").fetchone()
    return row is not None and row[0] == search.DOCSTATS


def _tokenizer(db: sqlite3.Connection, columns: tuple[str, ...], tokenizer: str) -> None:
    db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.docstats_one USING fts5({', '.join(columns)},"
               f" tokenize='{tokenizer}')")
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.docstats_one_i USING fts5vocab(temp, docstats_one, instance)")


def add(db: sqlite3.Connection, rowid: int, text: tuple[str, ...], columns: tuple[str, ...], tokenizer: str) -> None:
    """Record one memory just inserted into `fts` as `rowid` with these column values."""
    _tokenizer(db, columns, tokenizer)
    db.execute(f"INSERT INTO temp.docstats_one(rowid, {', '.join(columns)}) VALUES ({', '.join('?' * (len(columns) + 1))})",
               (rowid,) + tuple(text))
    try:
        row = db.execute(_aggregate("temp.docstats_one_i", columns)).fetchone()
    finally:
        db.execute("DELETE FROM temp.docstats_one")
    if row is None:  # nothing to tokenize: an empty memory still has a row (length 0)
        row = (rowid, 0, " ")
    db.execute("INSERT OR REPLACE INTO docterms(rowid, dl, terms) VALUES (?, ?, ?)", (rowid, row[1], row[2]))
    db.executemany("INSERT INTO terms(term, df) VALUES (?, 1) ON CONFLICT(term) DO UPDATE SET df = df + 1",
                   ((t,) for t in tokens(row[2])))


def remove(db: sqlite3.Connection, rowid: int) -> None:
    """Forget one memory about to leave `fts`."""
    row = db.execute("SELECT terms FROM docterms WHERE rowid = ?", (rowid,)).fetchone()
    if row is None:
        return
    gone = [(t,) for t in tokens(row[0])]
    db.executemany("UPDATE terms SET df = df - 1 WHERE term = ?", gone)
    db.executemany("DELETE FROM terms WHERE term = ? AND df <= 0", gone)
    db.execute("DELETE FROM docterms WHERE rowid = ?", (rowid,))


def tokens(text: str) -> list[str]:
    """The tokens of a `docterms.terms` text."""
    return [part.rsplit(":", 2)[0] for part in text.split()]
