"""The SQL of recall (stdlib only: the prompt path): open the cache, quote terms, find candidates
and weigh how each one matched. `rank` turns that relevance into scores and applies the floors.

Relevance is FTS5 bm25 with field weights, summed per term so that each term can weigh what
it says: the prompt's own words more than the previous turn's, specific words more than
everyday ones and words that only ever name a technology. A term counts fully where it names
the memory's subject (title, aliases, topics), less where it is one of many names the memory
lists, or only in its prose.
"""

import math

from memrepo.recall import _fast

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3


_sqlite = _fast.load_sqlite()

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

_COLUMNS = ("id, class, status, superseded_by, project, updated, half_life, verification,"
            " verify_reason, title, description, session")
COLUMNS = _COLUMNS  # a Hit's row, for rank's look-up of a successor


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
    technologies, and how many memories hold each word, counted up to the common-word cap + 1
    (bounded walks). Which words name a project is read off each candidate's own `project`
    (`rank._scope`): a key's label is its last segment, which no index column holds."""

    __slots__ = ("n", "tech", "dfs")

    def __init__(self, db: "sqlite3.Connection", words: list[str]) -> None:
        marks = _marks(len(words))
        # An index without the recorded count (an older build in progress) still answers, by a scan.
        size = ("WITH c(n) AS (SELECT coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'count'),"
                " (SELECT count(*) FROM memories))) ")
        cap = f"(SELECT max({COMMON_DF_MIN}, CAST(n * {COMMON_DF_SHARE} AS INTEGER)) + 1 FROM c)"
        held = [f" UNION ALL SELECT 'd', {i}, (SELECT count(*) FROM (SELECT 1 FROM fts WHERE fts MATCH ? LIMIT {cap}))"
                for i in range(len(words))]
        sql = (size + "SELECT 'n', NULL, n FROM c"
               f" UNION ALL SELECT 't', word, NULL FROM techwords WHERE word IN ({marks})" + "".join(held))
        rows = db.execute(sql, words + [quote(w) for w in words]).fetchall()
        self.n = next(int(v) for k, _, v in rows if k == "n")
        self.tech = {w for k, w, _ in rows if k == "t"}
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
    """How one memory matched: its relevance (what orders the matches), its evidence (the same
    sum with each term counted by where it matched: what the floors judge) and the share of the
    query that evidence explains."""

    __slots__ = ("relevance", "evidence", "coverage", "own", "row", "matched")

    def __init__(self, row: tuple) -> None:  # type: ignore[type-arg]
        self.row = row  # (rowid, n_entities, *_COLUMNS)
        self.relevance = 0.0
        self.evidence = 0.0
        self.coverage = 0.0
        self.matched: set[str] = set()  # the query's terms it holds
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
        part = weight * s * rescale[term] / norm
        ev.relevance += part
        ev.evidence += factor * part
        ev.matched.add(term)
        ev.coverage += weight * factor * idf[term] / mass
        ev.own = ev.own or term in own
    if own:
        # The previous turn sharpens a query that has a subject; a memory it alone found ranks lower.
        for ev in found.values():
            if not ev.own:
                ev.relevance *= CONTEXT_ONLY
                ev.evidence *= CONTEXT_ONLY
    return found
