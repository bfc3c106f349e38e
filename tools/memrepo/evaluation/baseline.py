"""The plain searches recall is measured against (issue 36), on the same cache.

- `plain`: every word of the prompt quoted and OR-ed, FTS5's `bm25()` with every column weighing
  the same, no floors: what anyone would build first.
- `weighted`: the same over the prompt's content words (its own and what it pasted, without
  stopwords and filler), with recall's column weights: the ranking recall is built on, with none
  of its decisions.

Neither ever stays silent; both report their top ten.
"""

from __future__ import annotations

import sqlite3

from memrepo.recall import clean, query, search

TOP = 10


def _scored(db: sqlite3.Connection, words: list[str], weights: tuple[float, ...] | None,
            k: int) -> list[tuple[str, float]]:
    if not words:
        return []
    expr = " OR ".join(search.quote(w) for w in words)
    bm = "bm25(fts)" if weights is None else "bm25(fts, " + ", ".join(str(w) for w in weights) + ")"
    rows = db.execute(f"SELECT m.id, -{bm} AS s FROM fts JOIN memories m ON m.rowid = fts.rowid WHERE fts MATCH ?"
                      " ORDER BY s DESC, m.id LIMIT ?", (expr, k)).fetchall()
    return [(r[0], r[1]) for r in rows]


def _ids(db: sqlite3.Connection, words: list[str], weights: tuple[float, ...] | None, k: int) -> list[str]:
    return [i for i, _ in _scored(db, words, weights, k)]


def plain(db: sqlite3.Connection, prompt: str, k: int = TOP) -> list[str]:
    """Plain BM25 over every word of the prompt, best first."""
    return [i for i, _ in plain_scored(db, prompt, k)]


def plain_scored(db: sqlite3.Connection, prompt: str, k: int = TOP) -> list[tuple[str, float]]:
    """`plain` with each memory's score (bm25() negated: higher is better)."""
    return _scored(db, sorted(set(clean.tokenize(prompt[:clean.MAX_INPUT_CHARS]))), None, k)


def weighted(db: sqlite3.Connection, prompt: str, k: int = TOP) -> list[str]:
    """Field-weighted BM25 over the prompt's content words, best first."""
    q = query.build_query(prompt)
    return _ids(db, list(q.terms) + list(q.pasted), search.WEIGHTS, k)
