"""Recurring procedures: normalized tool-call sequences seen in ≥ 3 distinct sessions.

A step is one tool call reduced to its shape (`memrepo.format.steps`): a shell command keeps its program and leading
sub-command words, and loses flags (with their values), numbers, quoted arguments and paths
(paths become one `<path>`); an edit keeps only the tool's name and `<path>`. Reading and
searching tools are not steps (they explore; they do not do the procedure). A chained shell
command (`a && b; c`) is several steps; `cd` is none.

The count is a database query over the transcript index (sessions.py): consecutive steps of
a session, n-grams of 2..MAX_STEPS joined in SQL, grouped, `COUNT(DISTINCT session) >= 3`.
A model never decides what recurred.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
from typing import Any

MIN_SESSIONS = 3
MIN_STEPS = 2
MAX_STEPS = 5
_STEPS_SQL = """
WITH calls AS (SELECT session, id, norm FROM tools WHERE norm IS NOT NULL),
split(session, id, k, step, rest) AS (
  SELECT session, id, 0, '', norm || char(10) FROM calls
  UNION ALL
  SELECT session, id, k + 1, substr(rest, 1, instr(rest, char(10)) - 1), substr(rest, instr(rest, char(10)) + 1)
  FROM split WHERE rest != ''),
flat AS (SELECT session, id, k, step, LAG(step) OVER (PARTITION BY session ORDER BY id, k) AS prev
         FROM split WHERE k > 0),
s AS (SELECT session, step, ROW_NUMBER() OVER (PARTITION BY session ORDER BY id, k) AS i
      FROM flat WHERE prev IS NULL OR prev != step)
"""


def _ngram_sql(n: int) -> str:
    alias = [f"s{j}" for j in range(n)]
    seq = " || char(31) || ".join(f"{a}.step" for a in alias)
    joins = " ".join(f"JOIN s {alias[j]} ON {alias[j]}.session = s0.session AND {alias[j]}.i = s0.i + {j}"
                     for j in range(1, n))
    return (f"SELECT {seq} AS seq, COUNT(DISTINCT s0.session) AS n, GROUP_CONCAT(DISTINCT s0.session) AS sessions "
            f"FROM s s0 {joins} GROUP BY seq HAVING n >= ?")


def _contains(longer: list[str], shorter: list[str]) -> bool:
    k = len(shorter)
    return any(longer[i:i + k] == shorter for i in range(len(longer) - k + 1))


def detect(db: sqlite3.Connection, min_sessions: int = MIN_SESSIONS) -> list[dict[str, Any]]:
    """Candidates from an open transcript index: {id, steps, sessions}, most sessions first.

    A sequence contained in a longer candidate seen in the same sessions is left out (the
    longer one says more); numbering (`n`, 1-based) is stable for a given index.
    """
    found: list[dict[str, Any]] = []
    for n in range(MIN_STEPS, MAX_STEPS + 1):
        for row in db.execute(_STEPS_SQL + _ngram_sql(n), (min_sessions,)):
            found.append({"steps": row[0].split("\x1f"), "sessions": sorted(row[2].split(","))})
    kept = [c for c in found if not any(len(o["steps"]) > len(c["steps"]) and set(o["sessions"]) == set(c["sessions"])
                                        and _contains(o["steps"], c["steps"]) for o in found)]
    kept.sort(key=lambda c: (-len(c["sessions"]), -len(c["steps"]), c["steps"]))
    for i, c in enumerate(kept, 1):
        c["n"] = i
        c["id"] = hashlib.sha1("\n".join(c["steps"]).encode()).hexdigest()[:8]
    return kept


def candidates(repo: str, min_sessions: int = MIN_SESSIONS) -> list[dict[str, Any]]:
    """Recurring procedures in `repo`'s transcript index (run `memrepo transcripts index` first)."""
    from memrepo.store import sessions

    with contextlib.closing(sessions.connect(repo)) as db:
        return detect(db, min_sessions)
