"""The SQL of recall (stdlib only: the prompt path): open the cache, quote terms, find candidates
and weigh how each one matched. `rank` turns that relevance into scores and applies the floors.

Relevance is FTS5's bm25 with field weights, summed per term so that each term weighs what the
query gives it (the prompt's own words fully, what it pasted and the previous turn's words
less): plain field-weighted BM25, the baseline every heuristic on top of it must beat (issue
36). Where each term matched (subject, names, prose) is kept for the decision.
"""

import math

from memrepo.base import _fast
from memrepo.recall import porter

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
WALK_BUDGET = 1500  # rows the candidate search scores with bm25() before it asks for terms together (_candidates)
# A term in more memories than this tells none of them apart; it is left out of the scores
# (its bm25 weight would be near zero anyway).
COMMON_DF_SHARE = 0.25
# A term in more memories than this never finds candidates (`_seeds`): walking its doclist would
# cost more than the rest of the hook. It still scores the candidates rarer words found: scores
# come from the cache's term statistics, whatever a term's document count.
FINDER_DF_SHARE = 0.12
COMMON_DF_MIN = 60
SEED_DF_SHARE = 0.04

# What the cache's term statistics were made for (store/docstats.py writes it into meta).
DOCSTATS = "v1 w2=" + ",".join(str(int(w * 2)) for w in WEIGHTS) + " g=subject,names,prose"
K1, B = 1.2, 0.75  # FTS5's bm25() constants

_COLUMNS = ("id, class, status, superseded_by, project, updated, half_life, verification,"
            " verify_reason, title, description, session")
COLUMNS = _COLUMNS  # a Hit's row, for rank's look-up of a successor


def connect(db_path: str) -> "sqlite3.Connection":
    """Open the cache read-only; raises sqlite3.Error when it is missing or unreadable.

    A WAL database is read through its -shm file, which a reader creates when no writer left
    one: in a read-only `index/` every read then failed "unable to open database file" and
    recall stopped on every prompt (issue 38). Without a -wal file the database file alone holds
    every committed write, and a folder no one can create a -wal in has no writer, so the file
    is read as immutable instead."""
    db = _sqlite.connect(f"file:{db_path}?mode=ro", uri=True, timeout=1.0)
    try:
        db.execute("PRAGMA user_version").fetchone()
    except _sqlite.OperationalError as exc:
        db.close()
        if "unable to open" not in str(exc) or _fast.exists(db_path + "-wal"):
            raise
        db = _sqlite.connect(f"file:{db_path}?mode=ro&immutable=1", uri=True, timeout=1.0)
    return db  # type: ignore[no-any-return]


def quote(term: str) -> str:
    """A term as an FTS5 string: user text never reaches MATCH unquoted."""
    return '"' + term.replace('"', '""') + '"'


def _bm25(weights: tuple[float, ...] | tuple[int, ...]) -> str:
    return "bm25(fts, " + ", ".join(str(w) for w in weights) + ")"


def _marks(n: int) -> str:
    return ",".join("?" * n)


class Lookups:
    """What one statement tells about the query's words: the store's size, which words only name
    technologies, and how many memories hold each word, counted up to the common-word cap + 1
    (bounded walks). Which words name a project is read off each candidate's own `project`
    (`rank._scope`): a key's label is its last segment, which no index column holds.

    A word whose index token is known here (`_token`: plain ASCII letters and digits, stemmed as
    FTS5's porter does) takes its count from the cache's `terms` table; any other word is counted
    by a bounded walk of its doclist. The same statement reads what scoring from the cache's term
    statistics needs (`stats`: FTS5's row count and average length), when the cache has them."""

    __slots__ = ("n", "tech", "dfs", "tokens", "stats")

    def __init__(self, db: "sqlite3.Connection", words: list[str]) -> None:
        marks = _marks(len(words))
        # An index without the recorded count (an older build in progress) still answers, by a scan.
        size = ("coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'count'),"
                " (SELECT count(*) FROM memories))")
        cap = f"(max({COMMON_DF_MIN}, CAST({size} * {COMMON_DF_SHARE} AS INTEGER)) + 1)"
        self.tokens = {w: _token(w) for w in words}
        slow = [i for i, w in enumerate(words) if self.tokens[w] is None]
        known = sorted({t for t in self.tokens.values() if t is not None})
        held = [f" UNION ALL SELECT 'd', {i}, (SELECT count(*) FROM (SELECT 1 FROM fts WHERE fts MATCH ? LIMIT {cap}))"
                for i in slow]
        counted = (f" UNION ALL SELECT 'f', term, df FROM terms WHERE term IN ({_marks(len(known))})"
                   if known else "")
        sql = (f"SELECT 'n', NULL, {size}"
               " UNION ALL SELECT 's', value, (SELECT block FROM fts_data WHERE id = 1) FROM meta WHERE key = 'docstats'"
               f" UNION ALL SELECT 't', word, NULL FROM techwords WHERE word IN ({marks})" + counted + "".join(held))
        args = words + known + [quote(words[i]) for i in slow]
        try:
            rows = db.execute(sql, args).fetchall()
        except _sqlite.OperationalError:  # a cache without the term tables (built by an older memrepo)
            self.tokens = dict.fromkeys(words)
            held = [f" UNION ALL SELECT 'd', {i}, (SELECT count(*) FROM (SELECT 1 FROM fts WHERE fts MATCH ? LIMIT {cap}))"
                    for i in range(len(words))]
            sql = (f"SELECT 'n', NULL, {size}"
                   f" UNION ALL SELECT 't', word, NULL FROM techwords WHERE word IN ({marks})" + "".join(held))
            rows = db.execute(sql, words + [quote(w) for w in words]).fetchall()
        self.n = next(int(v) for k, _, v in rows if k == "n")
        self.tech = {w for k, w, _ in rows if k == "t"}
        most = max(COMMON_DF_MIN, int(self.n * COMMON_DF_SHARE)) + 1  # as `cap` counts: bounded walks count to it
        by_token = {t: min(int(v), most) for k, t, v in rows if k == "f"}
        self.dfs = {w: by_token.get(t, 0) for w, t in self.tokens.items() if t is not None}
        self.dfs.update({words[i]: int(v) for k, i, v in rows if k == "d"})
        self.stats = next((_averages(v) for k, sig, v in rows if k == "s" and sig == DOCSTATS), None)
        if self.stats is None:
            self.tokens = {w: None for w in words}  # no usable statistics: every word scores by bm25()


def _token(word: str) -> "str | None":
    """The token FTS5 stores for a query word, when that is certain without asking it: a word of
    ASCII letters and digits (query.tokenize lowercases and splits as unicode61 does) stemmed by
    `porter` (checked against SQLite's own tokenizer by tests/test_porter.py)."""
    if word.isascii() and word.isalnum() and word == word.lower():
        return porter.stem(word)
    return None


def _varints(blob: bytes) -> list[int]:
    """SQLite's varints, as FTS5 writes them (its `averages` record)."""
    out: list[int] = []
    i, n = 0, len(blob)
    while i < n:
        value = 0
        for k in range(9):
            if i >= n:
                return out
            b = blob[i]
            i += 1
            if k == 8:
                value = (value << 8) | b
                break
            value = (value << 7) | (b & 0x7F)
            if b < 0x80:
                break
        out.append(value)
    return out


def _averages(block: "bytes | None") -> "tuple[int, float] | None":
    """FTS5's row count and average row length in tokens, as bm25() reads them (the `averages`
    record: the row count, then each column's total of tokens); None when unreadable."""
    if not isinstance(block, bytes) or len(block) > 128:
        return None
    values = _varints(block)
    if len(values) != len(WEIGHTS) + 1 or values[0] <= 0:
        return None
    return values[0], float(sum(values[1:])) / float(values[0])


_TOP = f"SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY {_bm25(WEIGHTS)} LIMIT ?"  # (expression, limit)


def _top(db: "sqlite3.Connection", expr: str, limit: int) -> list[int]:
    return [r[0] for r in db.execute(_TOP, (expr, limit))]


def _searches_all(seeds: list[str], active: list[str], dfs: dict[str, int], together: int) -> bool:
    """Whether the candidates are the best by bm25 over the OR of the seeds (see `_candidates`)."""
    return together < 2 or len(active) < 2 or sum(dfs[t] for t in seeds) <= WALK_BUDGET


def _candidates(db: "sqlite3.Connection", seeds: list[str], active: list[str], dfs: dict[str, int],
                limit: int, together: int = 1) -> list[int]:
    """The memories the seeds find best, by bm25 over the OR of the seeds.

    bm25() costs FTS5 a call per row that holds a seed: at 100,000 memories, three seeds of a
    few thousand memories each cost more than the rest of the hook. When the seeds' rows exceed
    WALK_BUDGET and the prompt has `together` >= 2 words of its own (`rank`), the candidates are
    the memories where the terms occur together, found by FTS5's doclist intersection before bm25
    sees a row: first those holding two seeds, then, while fewer than `limit`, those holding a
    seed and one of the rarer other active terms (as many as fit the budget). This is a bound on
    the search, not a rule of the decision (issue 36 removed the rule that a memory must hold two
    words): on such a store a memory holding one of a longer prompt's words alone is not found.
    On a store where the seeds' rows fit the budget, the search is the OR of the seeds.
    """
    if _searches_all(seeds, active, dfs, together):
        return _top(db, " OR ".join(quote(t) for t in seeds), limit)
    pairs = [f"({quote(a)} AND {quote(b)})" for i, a in enumerate(seeds) for b in seeds[i + 1:]]
    found = _top(db, " OR ".join(pairs), limit) if pairs else []
    # the rarest other terms, as many as fit the budget (at least one): bm25 scores only rows in
    # both lists, at most the others' rows, so long doclists of everyday words are never scored
    others: list[str] = []
    rows = 0
    for t in sorted((t for t in active if t not in seeds), key=lambda t: dfs[t]):
        if others and rows + dfs[t] > WALK_BUDGET:
            break
        others.append(t)
        rows += dfs[t]
    if len(found) < limit and others:
        expr = f"({' OR '.join(quote(t) for t in seeds)}) AND ({' OR '.join(quote(t) for t in others)})"
        have = set(found)
        found += [r for r in _top(db, expr, limit) if r not in have][:limit - len(found)]
    return found


def _seeds(active: list[tuple[str, float]], dfs: dict[str, int], n: int) -> list[str]:
    """The terms that find candidates: the rarer ones (the best memories hold at least one of
    them), so the candidate query walks short doclists; every active term still scores them.
    Without a rare one, the rarest, unless even that is in more than FINDER_DF_SHARE of the store."""
    limit = max(COMMON_DF_MIN, int(n * SEED_DF_SHARE))
    rare = [t for t, _ in active if dfs[t] <= limit]
    if rare:
        return rare
    rarest = min(active, key=lambda tw: dfs[tw[0]])[0]
    return [rarest] if dfs[rarest] <= max(COMMON_DF_MIN, int(n * FINDER_DF_SHARE)) else []


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


_CELLS: "dict[str, tuple[float, int]]" = {}  # what `_cell` answered
MAX_CELLS = 4096  # a long-lived process (serve, mcp) remembers at most as many


def _cell(text: str) -> tuple[float, int]:
    """A `docterms` cell, "W2:G", as (weighted frequency, where: G). Each cell is parsed once per
    process: `int()` of a string costs ~2,800 instructions, and a prompt's forty candidates hold
    a few dozen distinct cells among their ~80 matches (issue 44)."""
    got = _CELLS.get(text)
    if got is None:
        if len(_CELLS) >= MAX_CELLS:
            _CELLS.clear()
        w2, _, g = text.partition(":")
        got = _CELLS[text] = (int(w2) / 2.0, int(g))
    return got


def _stat_hits(wanted: "list[tuple[int, str, int]]", docs: "list[tuple[int, int, str]]",
               stats: tuple[int, float]) -> dict[int, list[tuple[int, int, float, int]]]:
    """(term index, rowid, -bm25, where) of the terms `wanted` ((term index, token, document
    count) each) and each candidate holding one, from the cache's term statistics
    (store/docstats.py), by term index: the same
    figures bm25() computes, by the same formula in the same order of operations, from the row
    count and average length FTS5 keeps, each candidate's length and each term's weighted
    frequency in it (`docs`: its `docterms` row, in rowid order), and its document count; where
    it occurs as `Evidence.matched` keeps it. One row per candidate, whatever the store's size."""
    n_rows, avgdl = stats
    # each candidate's length part, once for all terms (the same operations: the same figure)
    normed = [(rowid, K1 * (1 - B + B * dl / avgdl), text) for rowid, dl, text in docs]
    out: dict[int, list[tuple[int, int, float, int]]] = {}
    for i, token, df in wanted:
        idf = math.log((n_rows - df + 0.5) / (df + 0.5))
        if idf <= 0.0:
            idf = 1e-6
        key = " " + token + ":"
        skip = len(key)
        found = out[i] = []
        for rowid, norm, text in normed:
            at = text.find(key)
            if at < 0:
                continue
            at += skip
            end = text.find(" ", at)
            freq, where = _cell(text[at:end if end >= 0 else len(text)])
            found.append((i, rowid, idf * ((freq * (K1 + 1.0)) / (freq + norm)), where))
    return out


def _hits(db: "sqlite3.Connection", facts: Lookups, active: list[tuple[str, float]],
          rowids: list[int], docs: "list[tuple[int, int, str]] | None") -> list[tuple[int, int, float, int]]:
    """Each active term's hits among the candidates, (term index, rowid, -bm25, where: the bits of
    `Evidence.matched`), in term order and rowid order (the order the
    sums are made in): from the cache's statistics (`docs`, the candidates' `docterms` rows; None
    without them) where a term's token is known, else bm25()."""
    words = [t for t, _ in active]
    fast = [i for i, w in enumerate(words) if facts.tokens.get(w) is not None]
    by_term: dict[int, list] = {}  # type: ignore[type-arg]
    if fast and facts.stats is not None and docs is not None:
        by_term.update(_stat_hits([(i, facts.tokens[words[i]], facts.dfs[words[i]]) for i in fast],  # type: ignore[misc]
                                  docs, facts.stats))
    slow = [i for i in range(len(words)) if i not in by_term]
    if slow:
        rows = _term_hits(db, [words[i] for i in slow], rowids, sum(facts.dfs[words[i]] for i in slow))
        for i, rowid, s, subject, names, prose in sorted(rows, key=lambda r: (r[0], r[1])):
            where = (1 if subject else 0) | (2 if names else 0) | (4 if prose else 0)
            by_term.setdefault(slow[i], []).append((slow[i], rowid, s, where))
    return [row for i in range(len(words)) for row in by_term.get(i, [])]


def _rows(db: "sqlite3.Connection", where: str, args: list,  # type: ignore[type-arg]
          stats: bool) -> "tuple[list[tuple], list[tuple[int, int, str]] | None]":  # type: ignore[type-arg]
    """The candidates' `memories` rows (rowid, subjects, *_COLUMNS) and, when `stats` (some term
    scores from the cache's statistics), their `docterms` rows in rowid order, read by the same
    statement; None for those when the cache has no `docterms` (a damaged cache: every term then
    scores by bm25()). One statement less per source than reading them apart (issue 41). The
    candidates are `m.rowid {where}` with its `args`: their rowids, or the candidate search itself
    (`IN (_TOP)`), which then costs no statement of its own (issue 44)."""
    if stats:
        try:
            rows = db.execute(f"SELECT m.rowid, m.subjects, {_COLUMNS}, d.dl, d.terms FROM memories m"
                              f" LEFT JOIN docterms d ON d.rowid = m.rowid WHERE m.rowid {where}", args).fetchall()
        except _sqlite.OperationalError:  # a damaged cache missing `docterms`
            pass
        else:
            return [r[:-2] for r in rows], sorted((r[0], r[-2], r[-1]) for r in rows if r[-2] is not None)
    return db.execute(f"SELECT m.rowid, m.subjects, {_COLUMNS} FROM memories m WHERE m.rowid {where}", args).fetchall(), None


class Evidence:
    """How one memory matched: its score (field-weighted BM25 summed over the query's weighted
    terms: what orders the matches) and, for each term it holds, where it holds it (`bits`:
    1 subject: title, aliases or topics; 2 names: entities; 4 prose: description or body; 0 only
    in `tech:`), which the decision reads (`memrepo.recall.calibrate`)."""

    __slots__ = ("score", "own", "row", "matched")

    def __init__(self, row: tuple) -> None:  # type: ignore[type-arg]
        self.row = row  # (rowid, subjects, *_COLUMNS)
        self.score = 0.0
        self.matched: dict[str, int] = {}  # the query's terms it holds -> where
        self.own = False  # matched one of the prompt's own terms, not only the previous turn's


def relevance(db: "sqlite3.Connection", terms: list[tuple[str, float]], limit: int = CANDIDATES,
              own: frozenset[str] | set[str] = frozenset(), lookups: Lookups | None = None,
              together: int = 1) -> dict[int, Evidence]:
    """rowid -> Evidence for the best candidates of weighted terms; `together`: how many of the
    terms the best memories are known to hold, which bounds the search on a large store."""
    if not terms:
        return {}
    facts = lookups or Lookups(db, [t for t, _ in terms])
    n = facts.n
    cap = max(COMMON_DF_MIN, int(n * COMMON_DF_SHARE))
    dfs = facts.dfs
    active = [(t, w) for t, w in terms if 0 < dfs[t] <= cap]
    seeds = _seeds(active, dfs, n) if active else []
    if not seeds:
        return {}
    words = [t for t, _ in active]
    stats = facts.stats is not None and any(facts.tokens.get(t) is not None for t in words)
    if _searches_all(seeds, words, dfs, together):
        rows, docs = _rows(db, f"IN ({_TOP})", [" OR ".join(quote(t) for t in seeds), limit], stats)
    else:
        rowids = _candidates(db, seeds, words, dfs, limit, together)
        rows, docs = _rows(db, f"IN ({_marks(len(rowids))})", rowids, stats) if rowids else ([], None)
    found = {row[0]: Evidence(row) for row in rows}
    if not found:
        return {}
    for i, rowid, s, where in _hits(db, facts, active, list(found), docs):
        term, weight = active[i]
        ev = found[rowid]
        ev.score += weight * s
        ev.matched[term] = where
        ev.own = ev.own or term in own
    return found
