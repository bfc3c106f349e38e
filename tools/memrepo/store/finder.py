"""`memrepo search`: ranked full-text search over the cache with recall's ranking, without its floors."""

from __future__ import annotations

import contextlib

from memrepo.recall import query, rank
from memrepo.store import memories as store


def search_terms(text: str) -> list[str]:
    """The query's subject terms, or every word when the text is all filler (the user asked explicitly)."""
    q = query.build_query(text)
    return list(q.terms) or list(dict.fromkeys(query.tokenize(text)))


def search_memories(repo: str, text: str, limit: int = 10, project: str | None = None, fresh: bool = True) -> list[rank.Hit]:
    """The best `limit` memories for `text`, best first (`fresh`: as `memories.fresh_db`)."""
    terms = search_terms(text)
    if not terms:
        return []
    with contextlib.closing(store.fresh_db(repo, fresh)) as db:
        return rank.rank(db, [(t, 1.0) for t in terms], project=project, limit=limit, floors=False)



