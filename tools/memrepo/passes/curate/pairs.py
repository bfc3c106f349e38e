"""Candidate pairs for the curator's model pass: related active memories, strongest first, bounded.

Related means what the two memories are about: a shared topic or two shared entities. One
shared entity alone relates nothing: a note about a person and a note about a deploy both name
the product they work on (issue 37, part 7). A technology, or the memory's own project name,
never counts. Where a memory declares no topics, strong full-text similarity stands in for
them: each is among the other's nearest FTS neighbours in the index (title and description as
the query); where both declare topics, their words decide, not a coincidence of text. A pair no verdict could move
(`guards.never_applies`: two projects, two named subjects, a pointer) is not asked about.
"""

from __future__ import annotations

import contextlib
import sqlite3
from itertools import combinations

from memrepo.passes.curate import guards
from memrepo.base import paths
from memrepo.recall import query, search
from memrepo.format.notes import Note

NEIGHBOURS = 3
MAX_TERMS = 12


def _subject_links(active: dict[str, Note]) -> tuple[dict[frozenset[str], float], set[frozenset[str]]]:
    """Each pair's subject score (an entity 2, a topic 1) and the pairs about one subject."""
    scores: dict[frozenset[str], float] = {}
    about: set[frozenset[str]] = set()
    by_word: dict[tuple[str, str], list[str]] = {}
    for nid, note in active.items():
        tech = guards.words(note, "tech")
        for key, found in (("topics", guards.words(note, "topics")), ("entities", guards.subject_entities(note))):
            for word in found - tech:
                by_word.setdefault((key, word), []).append(nid)
    for (key, _), ids in by_word.items():
        if len(ids) > 50:  # a word on every memory relates nothing
            continue
        for a, b in combinations(sorted(ids), 2):
            pair = frozenset((a, b))
            scores[pair] = scores.get(pair, 0.0) + (2.0 if key == "entities" else 1.0)
            if key == "topics" or scores[pair] >= 4.0:
                about.add(pair)
    return scores, about


def _neighbours(db: sqlite3.Connection, note: Note) -> list[str]:
    terms = query.subject_terms(f"{note.get('title', '')} {note.get('description', '')}", MAX_TERMS)
    if not terms:
        return []
    expr = " OR ".join(search.quote(t) for t in terms)
    sql = ("SELECT m.id FROM fts JOIN memories m ON m.rowid = fts.rowid WHERE fts MATCH ? AND m.status = 'active'"
           " ORDER BY bm25(fts) LIMIT ?")
    return [r[0] for r in db.execute(sql, (expr, NEIGHBOURS + 1)) if r[0] != note.id][:NEIGHBOURS]


def _text_links(repo: str, active: dict[str, Note]) -> dict[frozenset[str], float]:
    near: dict[str, set[str]] = {}
    try:
        with contextlib.closing(search.connect(paths.index_db(repo))) as db:
            for nid, note in active.items():
                near[nid] = set(_neighbours(db, note))
    except sqlite3.Error:
        return {}
    return {frozenset((a, b)): 1.0 for a, ns in near.items() for b in ns if a < b and a in near.get(b, set())}


def candidates(repo: str, active: dict[str, Note], limit: int, skip: set[frozenset[str]] = set()) -> list[tuple[str, str]]:
    """Up to `limit` pairs (older id first by created date) to put to the model, strongest link first."""
    scores, about = _subject_links(active)
    for pair, bonus in _text_links(repo, active).items():
        scores[pair] = scores.get(pair, 0.0) + bonus
        if any(not guards.words(active[i], "topics") for i in pair):
            about.add(pair)
    ids = set(active)
    ranked = sorted((p for p in about if p not in skip and p <= ids and not guards.never_applies(*(active[i] for i in p))),
                    key=lambda p: (-scores[p], sorted(p)))
    out = []
    for pair in ranked[:limit]:
        a, b = sorted(pair, key=lambda i: (str(active[i].get("created", "")), i))
        out.append((a, b))
    return out
