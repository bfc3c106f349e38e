"""Read-only queries over the cache and the ranking recall uses (stdlib only: the prompt path).

A memory's score is its relevance to the query — FTS5 bm25 with field weights, summed per
term so that context terms count for less than the prompt's own — times its priority: decay by
class half-life, a penalty when superseded or unverified, and project scope. Floors judge
relevance alone, so an old event that fits is still recalled, just ranked lower.
"""

from __future__ import annotations

import math
import sqlite3
import time

# bm25 weights, in the order of index.FTS_COLUMNS: title, aliases, topics, entities, tech, description, body.
WEIGHTS = (8.0, 6.0, 5.0, 5.0, 1.5, 3.0, 1.0)
CANDIDATES = 40
SUPERSEDED_PENALTY = 0.3
UNVERIFIED_PENALTY = 0.8
OTHER_PROJECT = 0.35
ABS_FLOOR = 1.0  # score: relevance (bm25 over ln N) × priority
OOV_IDF = 1.0  # a word no memory holds, relative to the rarest possible word
BREADTH_FLOOR = 0.15  # score × share of the prompt's idf mass matched
REL_FLOOR = 0.45  # of the top hit's score
SUBJECT_COLUMNS = "title aliases topics"
HUB_ENTITIES = 4
CONTEXT_ONLY = 0.5
PROSE_COLUMNS = "description body"
PROSE_FACTOR = 0.6
TECH_FACTOR = 0.3

_COLUMNS = ("id, class, status, superseded_by, project, updated, half_life, verification,"
            " verify_reason, title, description, session")


class Hit:
    __slots__ = ("id", "cls", "status", "superseded_by", "project", "updated", "half_life", "verification",
                 "verify_reason", "title", "description", "session", "relevance", "priority", "score", "matched",
                 "strong", "coverage")

    def __init__(self, row: tuple, relevance: float, matched: int, strong: int = 0) -> None:  # type: ignore[type-arg]
        (self.id, self.cls, self.status, self.superseded_by, self.project, self.updated, self.half_life,
         self.verification, self.verify_reason, self.title, self.description, self.session) = row
        self.relevance = relevance
        self.matched = matched
        self.strong = strong
        self.coverage = 0.0
        self.priority = 1.0
        self.score = relevance

    def labels(self) -> list[str]:
        out = []
        if self.status == "superseded" and self.superseded_by:
            out.append(f"superseded by {self.superseded_by}")
        elif self.status == "retired":
            out.append("retired")
        if self.verification == "unverified":
            out.append("unverified: " + (self.verify_reason or "a claim failed"))
        return out

    def as_dict(self) -> dict:  # type: ignore[type-arg]
        return {"id": self.id, "score": round(self.score, 4), "title": self.title, "class": self.cls,
                "status": self.status, "labels": self.labels(), "project": self.project,
                "description": self.description}


def connect(db_path: str) -> sqlite3.Connection:
    """Open the cache read-only; raises sqlite3.Error when it is missing or unreadable."""
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=1.0)
    return db


def quote(term: str) -> str:
    """A term as an FTS5 string: user text never reaches MATCH unquoted."""
    return '"' + term.replace('"', '""') + '"'


def _bm25() -> str:
    return "bm25(fts, " + ", ".join(str(w) for w in WEIGHTS) + ")"


def _candidates(db: sqlite3.Connection, terms: list[str], limit: int) -> list[int]:
    expr = " OR ".join(quote(t) for t in terms)
    sql = f"SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY {_bm25()} LIMIT ?"
    return [r[0] for r in db.execute(sql, (expr, limit))]


def _per_term(db: sqlite3.Connection, term: str, rowids: list[int], columns: str = "") -> dict[int, float]:
    marks = ",".join("?" * len(rowids))
    sql = f"SELECT rowid, -{_bm25()} FROM fts WHERE fts MATCH ? AND rowid IN ({marks})"
    expr = f"{{{columns}}} : {quote(term)}" if columns else quote(term)
    return {r[0]: r[1] for r in db.execute(sql, [expr] + rowids)}


def _df(db: sqlite3.Connection, term: str) -> int:
    return int(db.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (quote(term),)).fetchone()[0])


def _idf(df: int, n: int) -> float:
    """A smoothed idf that stays positive when a term is in most memories (a store of five must work).

    A word no memory holds weighs like the rarest one: it is likely what the prompt is about.
    """
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5)) if df else OOV_IDF * math.log(1.0 + (n + 0.5) / 0.5)


def _fts_idf(df: int, n: int) -> float:
    # FTS5's own bm25() idf, clamped as SQLite clamps it; dividing by it leaves the tf part.
    return max(math.log((n - df + 0.5) / (df + 0.5)), 1e-6)


class Evidence:
    """How one memory matched: weighted relevance and which prompt terms named its subject."""

    __slots__ = ("relevance", "matched", "strong", "coverage", "own")

    def __init__(self) -> None:
        self.own = False  # matched one of the prompt's own terms, not only the previous turn's
        self.relevance = 0.0
        self.coverage = 0.0  # share of the query's idf mass this memory matched
        self.matched = 0  # terms found anywhere but the tech list
        self.strong = 0  # terms found in its title, aliases, topics or entities


def relevance(db: sqlite3.Connection, terms: list[tuple[str, float]], limit: int = CANDIDATES,
              own: frozenset[str] | set[str] = frozenset()) -> dict[int, Evidence]:
    """rowid -> Evidence for the best candidates.

    A term counts fully where it names the memory's subject (title, aliases, topics, entities),
    less where it only appears in the prose, and least where it only names a technology the
    memory uses: a question about CSS grids is not about the memory whose stack lists CSS.
    """
    words = [t for t, _ in terms]
    if not words:
        return {}
    rowids = _candidates(db, words, limit)
    if not rowids:
        return {}
    n = db.execute("SELECT count(*) FROM memories").fetchone()[0]
    norm = math.log(max(n, 2) + 1.0)
    dfs = {t: _df(db, t) for t, _ in terms}
    idf = {t: _idf(dfs[t], n) for t in dfs}
    mass = sum(w * idf[t] for t, w in terms) or 1.0
    found = {r: Evidence() for r in rowids}
    marks = ",".join("?" * len(rowids))
    hubs = dict(db.execute(f"SELECT rowid, n_entities FROM memories WHERE rowid IN ({marks})", rowids).fetchall())
    for term, weight in terms:
        anywhere = _per_term(db, term, rowids)
        if not anywhere:
            continue
        subject = _per_term(db, term, list(anywhere), SUBJECT_COLUMNS)
        rest = [r for r in anywhere if r not in subject]
        named = _per_term(db, term, rest, "entities") if rest else {}
        rest = [r for r in rest if r not in named]
        prose = _per_term(db, term, rest, PROSE_COLUMNS) if rest else {}
        rescale = idf[term] / _fts_idf(dfs[term], n)
        for rowid, s in anywhere.items():
            s *= rescale
            ev = found[rowid]
            if rowid in subject:
                factor = 1.0
            elif rowid in named:
                # A memory that lists many names (clients, people) matches every prompt naming one.
                factor = min(1.0, math.sqrt(HUB_ENTITIES / max(1, hubs.get(rowid, 0))))
            elif rowid in prose:
                factor = PROSE_FACTOR
            else:
                factor = TECH_FACTOR
            ev.relevance += weight * factor * s / norm
            ev.coverage += weight * factor * idf[term] / mass
            ev.own = ev.own or term in own
            if factor > TECH_FACTOR:
                ev.matched += 1
                ev.strong += rowid in subject or rowid in named
    if own:
        # The previous turn sharpens a query that has a subject; a memory it alone found ranks lower.
        for ev in found.values():
            if not ev.own:
                ev.relevance *= CONTEXT_ONLY
    return found


def _priority(hit: Hit, today: float) -> float:
    """Decay by half-life from `updated`, and the penalties for superseded and unverified memories."""
    p = 1.0
    if hit.half_life and hit.updated:
        try:
            age = max(0.0, (today - time.mktime(time.strptime(hit.updated[:10], "%Y-%m-%d"))) / 86400.0)
            p *= 0.5 ** (age / float(hit.half_life))
        except (ValueError, OverflowError):
            pass
    if hit.status in ("superseded", "retired"):
        p *= SUPERSEDED_PENALTY
    if hit.verification == "unverified":
        p *= UNVERIFIED_PENALTY
    return p


def _scope(hit: Hit, project: str | None, projects_named: set[str]) -> float:
    """Another project's memory counts for less unless the prompt names that project."""
    if hit.project and hit.project != project and hit.project not in projects_named:
        return OTHER_PROJECT
    return 1.0


def rank(db: sqlite3.Connection, terms: list[tuple[str, float]], project: str | None = None,
         limit: int = 3, floors: bool = True, today: float | None = None,
         own: frozenset[str] | set[str] = frozenset()) -> list[Hit]:
    """The memories to recall for weighted terms, best first; [] when nothing clears the floors.

    `own` names the prompt's own terms when others come from the previous turn.
    """
    scored = relevance(db, terms, own=own)
    if not scored:
        return []
    marks = ",".join("?" * len(scored))
    rows = db.execute(f"SELECT rowid, {_COLUMNS} FROM memories WHERE rowid IN ({marks})", list(scored)).fetchall()
    words = {t for t, _ in terms}
    projects_named = {p for (p,) in db.execute("SELECT DISTINCT project FROM memories WHERE project IS NOT NULL") if p in words}
    now = time.time() if today is None else today
    hits = []
    for row in rows:
        ev = scored[row[0]]
        hit = Hit(row[1:], ev.relevance, ev.matched, ev.strong)
        hit.coverage = ev.coverage
        hit.relevance = ev.relevance * _scope(hit, project, projects_named)
        hit.priority = _priority(hit, now)
        hit.score = hit.relevance * hit.priority
        hits.append(hit)
    hits.sort(key=lambda h: (-h.score, h.id))
    if floors:
        hits = _apply_floors(hits)
    return hits[:limit]


def _clears(h: Hit) -> bool:
    """The absolute floor, on relevance in scope (not decay or supersession, which only order):
    enough evidence, and enough of the prompt explained by it.

    Breadth is score × coverage: a strong match on one word of a long question about
    something else (a general programming question that brushes the store) stays silent.
    """
    return h.relevance >= ABS_FLOOR and h.relevance * h.coverage >= BREADTH_FLOOR


def _apply_floors(hits: list[Hit]) -> list[Hit]:
    relevant = [h for h in hits if _clears(h)]
    if not relevant:
        return []
    top = relevant[0].score
    return [h for h in relevant if h.score >= REL_FLOOR * top]
