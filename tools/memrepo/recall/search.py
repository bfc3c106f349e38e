"""Read-only queries over the cache and the ranking recall uses (stdlib only: the prompt path).

A memory's score is its relevance to the query times its priority.

- Relevance: FTS5 bm25 with field weights, summed per term so that each term can weigh what
  it says: the prompt's own words more than the previous turn's, specific words more than
  everyday ones and words that only ever name a technology. A term counts fully where it
  names the memory's subject (title, aliases, topics), less where it is one of many names the
  memory lists, or only in its prose. Another project's memory counts for less unless the
  prompt names that project.
- Priority: decay by class half-life (bounded below: it orders old memories, never erases a
  strong match), and penalties for superseded and unverified memories.

Floors judge relevance alone: enough evidence, and enough of the prompt explained by it.
"""

import math
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from typing import Any, Callable


def _no_cache(maxsize: int = 128, typed: bool = False) -> "Callable[[Any], Any]":
    """functools.lru_cache's shape, caching nothing."""
    return lambda fn: fn


def _load_sqlite() -> "Any":
    """The `_sqlite3` C module, loaded for the prompt path.

    The C module alone: the `sqlite3` package adds datetime adapters this path never uses.
    And on CPython 3.11+ the C module's init takes `functools.lru_cache` for its statement
    cache: importing functools (with collections, operator, keyword, reprlib) is ~3 ms of a
    ~20 ms hook. Each statement here runs once per process, so a cache buys nothing: when no
    one has imported functools yet (the hook), the module gets a stand-in whose "cache"
    compiles every statement, and the stand-in leaves sys.modules right after. Anywhere else
    (the CLI, tests) functools is loaded already and nothing changes; if a Python's module
    wants more of functools than the stand-in has, it is loaded again with the real one.
    """
    import sys

    if "functools" not in sys.modules and "_sqlite3" not in sys.modules:
        stand_in = type(sys)("functools")
        stand_in.lru_cache = _no_cache  # type: ignore[attr-defined]
        sys.modules["functools"] = stand_in
        try:
            import _sqlite3
            return _sqlite3
        except Exception:  # noqa: BLE001 — any failure: forget this attempt, load it plainly below
            sys.modules.pop("_sqlite3", None)
        finally:
            if sys.modules.get("functools") is stand_in:
                del sys.modules["functools"]
    import _sqlite3
    return _sqlite3


_sqlite = _load_sqlite()

# bm25 weights, in the order of index.FTS_COLUMNS: title, aliases, topics, entities, tech, description, body.
WEIGHTS = (8.0, 6.0, 5.0, 5.0, 1.5, 3.0, 1.0)
# The same columns as masks, to tell in one pass where a term matched.
_SUBJECT = (1, 1, 1, 0, 0, 0, 0)
_NAMES = (0, 0, 0, 1, 0, 0, 0)
_PROSE = (0, 0, 0, 0, 0, 1, 1)

CANDIDATES = 40
WALK_ROWS = 600  # see _term_hits
# A term in more memories than this tells none of them apart; it is left out of the search
# (its bm25 weight would be near zero anyway) so ranking stays fast on a large store.
COMMON_DF_SHARE = 0.12
COMMON_DF_MIN = 60
SEED_DF_SHARE = 0.04

PROSE_FACTOR = 0.6
TECH_FACTOR = 0.3  # matched only in `tech:`
HUB_ENTITIES = 4  # a memory listing more names than this counts each name for less
TECH_WEIGHT = 0.5  # a word that only ever names a technology in this store
OOV_IDF = 1.0  # a word no memory holds, relative to the rarest possible word
CONTEXT_ONLY = 0.5  # a memory only the previous turn's words found

OTHER_PROJECT = 0.35
SUPERSEDED_PENALTY = 0.3
UNVERIFIED_PENALTY = 0.8
DECAY_FLOOR = 0.3  # decay is 0.5 ** (age / half-life) as DESIGN.md says, bounded below by this

ABS_FLOOR = 1.0  # relevance (bm25 over ln N) in scope
BREADTH_FLOOR = 0.15  # relevance × share of the prompt's idf mass matched
REL_FLOOR = 0.45  # of the top hit's score
GENERAL_BREADTH = 2.0  # times BREADTH_FLOOR, for a request for general knowledge (query.asks_general)

_COLUMNS = ("id, class, status, superseded_by, project, updated, half_life, verification,"
            " verify_reason, title, description, session")


class Hit:
    __slots__ = ("id", "cls", "status", "superseded_by", "project", "updated", "half_life", "verification",
                 "verify_reason", "title", "description", "session", "relevance", "coverage", "priority", "score")

    def __init__(self, row: tuple, relevance: float, coverage: float) -> None:  # type: ignore[type-arg]
        (self.id, self.cls, self.status, self.superseded_by, self.project, self.updated, self.half_life,
         self.verification, self.verify_reason, self.title, self.description, self.session) = row
        self.relevance = relevance
        self.coverage = coverage
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


def connect(db_path: str) -> "sqlite3.Connection":
    """Open the cache read-only; raises sqlite3.Error when it is missing or unreadable."""
    return _sqlite.connect(f"file:{db_path}?mode=ro", uri=True, timeout=1.0)  # type: ignore[no-any-return]


def quote(term: str) -> str:
    """A term as an FTS5 string: user text never reaches MATCH unquoted."""
    return '"' + term.replace('"', '""') + '"'


def _bm25(weights: tuple[float, ...] | tuple[int, ...]) -> str:
    return "bm25(fts, " + ", ".join(str(w) for w in weights) + ")"


def _marks(n: int) -> str:
    return ",".join("?" * n)


def _idf(df: int, n: int) -> float:
    """A smoothed idf that stays positive when a term is in most memories (a store of five must work).

    A word no memory holds weighs like the rarest one: it is likely what the prompt is about.
    """
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5)) if df else OOV_IDF * math.log(1.0 + (n + 0.5) / 0.5)


def _fts_idf(df: int, n: int) -> float:
    # FTS5's own bm25() idf, clamped as SQLite clamps it; dividing by it leaves the tf part.
    return max(math.log((n - df + 0.5) / (df + 0.5)), 1e-6)


class Lookups:
    """What one statement tells about the query's words: the store's size, which words only name
    technologies, which name projects, and how many memories hold each word, counted up to
    the common-word cap + 1 (bounded walks)."""

    __slots__ = ("n", "tech", "projects", "dfs")

    def __init__(self, db: "sqlite3.Connection", words: list[str]) -> None:
        marks = _marks(len(words))
        # An index without the recorded count (an older build in progress) still answers, by a scan.
        size = ("WITH c(n) AS (SELECT coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'count'),"
                " (SELECT count(*) FROM memories))) ")
        cap = f"(SELECT max({COMMON_DF_MIN}, CAST(n * {COMMON_DF_SHARE} AS INTEGER)) + 1 FROM c)"
        held = [f" UNION ALL SELECT 'd', {i}, (SELECT count(*) FROM (SELECT 1 FROM fts WHERE fts MATCH ? LIMIT {cap}))"
                for i in range(len(words))]
        sql = (size + "SELECT 'n', NULL, n FROM c"
               f" UNION ALL SELECT 't', word, NULL FROM techwords WHERE word IN ({marks})"
               f" UNION ALL SELECT DISTINCT 'p', project, NULL FROM memories WHERE project IN ({marks})" + "".join(held))
        rows = db.execute(sql, words + words + [quote(w) for w in words]).fetchall()
        self.n = next(int(v) for k, _, v in rows if k == "n")
        self.tech = {w for k, w, _ in rows if k == "t"}
        self.projects = {w for k, w, _ in rows if k == "p"}
        self.dfs = {words[i]: int(v) for k, i, v in rows if k == "d"}


def _candidates(db: "sqlite3.Connection", terms: list[str], limit: int) -> list[int]:
    expr = " OR ".join(quote(t) for t in terms)
    sql = f"SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY {_bm25(WEIGHTS)} LIMIT ?"
    return [r[0] for r in db.execute(sql, (expr, limit))]


def _seeds(active: list[tuple[str, float]], dfs: dict[str, int], n: int) -> list[str]:
    """The terms that find candidates: the rarer ones (the best memories hold at least one of
    them), so the candidate query walks short doclists; every active term still scores them."""
    limit = max(COMMON_DF_MIN, int(n * SEED_DF_SHARE))
    rare = [t for t, _ in active if dfs[t] <= limit]
    return rare or [min(active, key=lambda tw: dfs[tw[0]])[0]]


def _term_hits(db: "sqlite3.Connection", terms: list[str], rowids: list[int],
               rows: int = 0) -> list[tuple[int, int, float, float, float, float]]:
    """(term index, rowid, -bm25, in subject?, in names?, in prose?) for each term and candidate
    holding it: one statement, one bm25 pass per term (bm25 sums over phrases, so a term's own
    score needs its own MATCH).

    FTS5 does not take `rowid IN (...)` as a constraint: it walks each doclist whole and SQLite
    tests every row against the list. When the doclists are short (`rows`, the sum of the
    terms' document counts, at most WALK_ROWS) scoring every row and keeping the candidates in
    Python is faster (1.0 against 1.8 ms on a store of 1,000); on long ones the list test is
    cheaper than bm25 on every row. The result is the same either way.
    """
    walk = 0 < rows <= WALK_ROWS
    one = (f"SELECT {{i}}, rowid, -{_bm25(WEIGHTS)}, {_bm25(_SUBJECT)}, {_bm25(_NAMES)}, {_bm25(_PROSE)}"
           " FROM fts WHERE fts MATCH ?" + ("" if walk else f" AND rowid IN ({_marks(len(rowids))})"))
    sql = " UNION ALL ".join(one.format(i=i) for i in range(len(terms)))
    if walk:
        keep = set(rowids)
        return [row for row in db.execute(sql, [quote(t) for t in terms]) if row[1] in keep]
    return db.execute(sql, [x for t in terms for x in [quote(t)] + rowids]).fetchall()  # type: ignore[no-any-return]


class Evidence:
    """How one memory matched: weighted relevance and the share of the query it explains."""

    __slots__ = ("relevance", "coverage", "own", "row")

    def __init__(self, row: tuple) -> None:  # type: ignore[type-arg]
        self.row = row  # (rowid, n_entities, *_COLUMNS)
        self.relevance = 0.0
        self.coverage = 0.0
        self.own = False  # matched one of the prompt's own terms, not only the previous turn's


def _factor(subject: float, names: float, prose: float, n_entities: int) -> float:
    if subject:
        return 1.0
    if names:
        # A memory that lists many names (clients, people) matches every prompt naming one.
        return min(1.0, math.sqrt(HUB_ENTITIES / max(1, n_entities)))
    return PROSE_FACTOR if prose else TECH_FACTOR


def relevance(db: "sqlite3.Connection", terms: list[tuple[str, float]], limit: int = CANDIDATES,
              own: frozenset[str] | set[str] = frozenset(), lookups: Lookups | None = None) -> dict[int, Evidence]:
    """rowid -> Evidence for the best candidates of weighted terms."""
    if not terms:
        return {}
    facts = lookups or Lookups(db, [t for t, _ in terms])
    n = facts.n
    cap = max(COMMON_DF_MIN, int(n * COMMON_DF_SHARE))
    terms = [(t, w * TECH_WEIGHT if t in facts.tech else w) for t, w in terms]
    dfs = facts.dfs
    idf = {t: _idf(dfs[t], n) for t in dfs}
    mass = sum(w * idf[t] for t, w in terms) or 1.0
    active = [(t, w) for t, w in terms if 0 < dfs[t] <= cap]
    rowids = _candidates(db, _seeds(active, dfs, n), limit) if active else []
    if not rowids:
        return {}
    norm = math.log(max(n, 2) + 1.0)
    found = {row[0]: Evidence(row) for row in
             db.execute(f"SELECT rowid, n_entities, {_COLUMNS} FROM memories WHERE rowid IN ({_marks(len(rowids))})", rowids)}
    rescale = {t: idf[t] / _fts_idf(dfs[t], n) for t, _ in active}
    walked = sum(dfs[t] for t, _ in active)
    for i, rowid, s, subject, names, prose in _term_hits(db, [t for t, _ in active], rowids, walked):
        term, weight = active[i]
        ev = found[rowid]
        factor = _factor(subject, names, prose, ev.row[1] or 0)
        ev.relevance += weight * factor * s * rescale[term] / norm
        ev.coverage += weight * factor * idf[term] / mass
        ev.own = ev.own or term in own
    if own:
        # The previous turn sharpens a query that has a subject; a memory it alone found ranks lower.
        for ev in found.values():
            if not ev.own:
                ev.relevance *= CONTEXT_ONLY
    return found


def _epoch_day(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (no datetime import on the prompt path)."""
    if not (1 <= m <= 12 and 1 <= d <= 31):
        raise ValueError("not a date")
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _age_days(updated: str, today: float) -> float:
    day = _epoch_day(int(updated[0:4]), int(updated[5:7]), int(updated[8:10]))
    return max(0.0, today / 86400.0 - day)


def _priority(hit: Hit, today: float) -> float:
    """Decay by half-life from `updated`, and the penalties for superseded and unverified memories."""
    p = 1.0
    if hit.half_life and hit.updated:
        try:
            p *= DECAY_FLOOR + (1.0 - DECAY_FLOOR) * 0.5 ** (_age_days(hit.updated, today) / float(hit.half_life))
        except ValueError:
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


def rank(db: "sqlite3.Connection", terms: list[tuple[str, float]], project: str | None = None,
         limit: int = 3, floors: bool = True, today: float | None = None,
         own: frozenset[str] | set[str] = frozenset(), general: bool = False) -> list[Hit]:
    """The memories to recall for weighted terms, best first; [] when nothing clears the floors.

    `own` names the prompt's own terms when others come from the previous turn. `general`
    says the prompt asks for general knowledge: a memory must then explain GENERAL_BREADTH
    times as much of it.
    """
    if not terms:
        return []
    facts = Lookups(db, [t for t, _ in terms])
    scored = relevance(db, terms, own=own, lookups=facts)
    if not scored:
        return []
    projects_named = facts.projects
    now = time.time() if today is None else today
    hits = []
    for ev in scored.values():
        hit = Hit(ev.row[2:], ev.relevance, ev.coverage)
        hit.relevance *= _scope(hit, project, projects_named)
        hit.priority = _priority(hit, now)
        hit.score = hit.relevance * hit.priority
        hits.append(hit)
    hits.sort(key=lambda h: (-h.score, h.id))
    return (_apply_floors(hits, BREADTH_FLOOR * (GENERAL_BREADTH if general else 1.0)) if floors else hits)[:limit]


def _clears(h: Hit, breadth: float) -> bool:
    """The absolute floor: enough evidence, and enough of the prompt explained by it.

    Breadth is relevance × coverage: a strong match on one word of a long question about
    something else (a general programming question that brushes the store) stays silent.
    """
    return h.relevance >= ABS_FLOOR and h.relevance * h.coverage >= breadth


def _apply_floors(hits: list[Hit], breadth: float = BREADTH_FLOOR) -> list[Hit]:
    relevant = [h for h in hits if _clears(h, breadth)]
    if not relevant:
        return []
    top = relevant[0].score
    return [h for h in relevant if h.score >= REL_FLOOR * top]
