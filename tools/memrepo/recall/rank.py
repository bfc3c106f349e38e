"""Scores and floors of recall (stdlib only: the prompt path).

A memory's score is its relevance to the query (`search.relevance`) times its priority.

- Priority: decay by class half-life, and penalties for superseded and unverified memories.
  Decay orders comparable matches and never decides (issue 17): it can take at most
  1 - DECAY_FLOOR off a score, so a newer memory outranks an older one only when their
  relevance is within that much, never a much stronger match.
- Scope: another project's memory counts for less unless the prompt names that project (its
  label, `memrepo.recall.projects`); a bare legacy `project:` is this project's when one of its
  names matches.

Floors judge each memory's evidence alone (`search.Evidence`): enough of it, enough of the
prompt explained by it, and two of the prompt's words held together (one, for a prompt of one
or two words). Every memory injected clears them on its own, except a memory of a session
another of whose memories cleared them: one conversation is one context (a chat-style store's
question and the reply that answered it).
"""

import time

from memrepo.recall import projects, search

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3

OTHER_PROJECT = 0.35
SUPERSEDED_PENALTY = 0.3
UNVERIFIED_PENALTY = 0.8
DECAY_FLOOR = 0.85  # decay is 0.5 ** (age / half-life) as DESIGN.md says, mapped onto [DECAY_FLOOR, 1]

ABS_FLOOR = 1.0  # evidence (bm25 over ln N, by where each term matched) in scope
BREADTH_FLOOR = 0.15  # evidence × share of the prompt's idf mass matched


class Hit:
    __slots__ = ("id", "cls", "status", "superseded_by", "project", "updated", "half_life", "verification",
                 "verify_reason", "title", "description", "session", "relevance", "evidence", "coverage", "priority", "score",
                 "own", "matched")

    def __init__(self, row: tuple, relevance: float, coverage: float, evidence: float | None = None) -> None:  # type: ignore[type-arg]
        (self.id, self.cls, self.status, self.superseded_by, self.project, self.updated, self.half_life,
         self.verification, self.verify_reason, self.title, self.description, self.session) = row
        self.relevance = relevance
        self.evidence = relevance if evidence is None else evidence
        self.coverage = coverage
        self.matched: set[str] = set()  # the query terms it holds
        self.priority = 1.0
        self.score = relevance
        self.own = True  # found by the prompt's own words (False: only by the previous turn's)

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


def _priority(hit: Hit, today: float, noisy: "frozenset[str] | set[str]" = frozenset()) -> float:
    """Decay by half-life from `updated`, and the penalties for superseded and unverified memories.

    A memory injected often and never used (`noisy.noisy_ids`) ranks as a fully decayed one: it
    yields to comparable matches, never to a much weaker one.
    """
    p = 1.0
    if hit.id in noisy:
        p *= DECAY_FLOOR
    elif hit.half_life and hit.updated:
        try:
            p *= DECAY_FLOOR + (1.0 - DECAY_FLOOR) * 0.5 ** (_age_days(hit.updated, today) / float(hit.half_life))
        except ValueError:
            pass
    if hit.status in ("superseded", "retired"):
        p *= SUPERSEDED_PENALTY
    if hit.verification == "unverified":
        p *= UNVERIFIED_PENALTY
    return p


def _scope(hit: Hit, project: "projects.Project | None", words: set[str]) -> float:
    """Another project's memory counts for less unless the prompt names that project (its label)."""
    if not hit.project or (project and project.owns(hit.project)):
        return 1.0
    return 1.0 if projects.label_of(hit.project).lower() in words else OTHER_PROJECT


def rank(db: "sqlite3.Connection", terms: list[tuple[str, float]], project: "str | projects.Project | None" = None,
         limit: int = 3, floors: bool = True, today: float | None = None,
         own: frozenset[str] | set[str] = frozenset(), noisy: frozenset[str] | set[str] = frozenset(),
         explain: "list[tuple[Hit | None, str | None]] | None" = None,
         silence: "list[tuple[Hit | None, str]] | None" = None) -> list[Hit]:
    """The memories to recall for weighted terms, best first; [] when nothing clears the floors.

    `project` is a key (`--project`) or a Project. `own` names the prompt's own terms when
    others come from the previous turn; `noisy`, memories injected often and never used.
    `explain`, when given, receives every candidate in score order with the floor it failed
    (None: it cleared them), or (None, why) when there were no candidates to judge. `silence`,
    when given, receives one entry when nothing is recalled: the best candidate and the floor it
    failed, or (None, why) without candidates (what the recall log keeps).
    """
    if not terms:
        return []
    facts = search.Lookups(db, [t for t, _ in terms])
    if own and not any(facts.dfs.get(t, 0) for t in own):
        # The previous turn sharpens a prompt whose own words the store knows; when it knows none
        # of them ("explain that again but shorter" after a deploy turn), it alone never recalls.
        why = "the store knows none of the prompt's own words: the previous turn alone never recalls"
        for out in (explain, silence):
            if out is not None:
                out.append((None, why))
        return []
    words = {t for t, _ in terms}
    # Aboutness is co-occurrence: one word of a prompt that says more is what a memory shares with
    # it by chance (a textbook question in the store's field, a tool's name in a pasted log), so a
    # memory must hold two of the words of a prompt of three or more; of a shorter one, one.
    together = 2 if len(own if own else words) >= 3 else 1
    scored = search.relevance(db, terms, own=own, lookups=facts, together=together)
    if not scored:
        why = "no memory holds any of the prompt's words (or they are in too many to tell any apart)"
        for out in (explain, silence):
            if out is not None:
                out.append((None, why))
        return []
    scope = projects.scope_of(project)
    now = time.time() if today is None else today
    hits = []
    for ev in scored.values():
        hit = Hit(ev.row[2:], ev.relevance, ev.coverage, ev.evidence)
        hit.matched = ev.matched
        hit.own = ev.own or not own
        in_scope = _scope(hit, scope, words)
        hit.relevance *= in_scope
        hit.evidence *= in_scope
        hit.priority = _priority(hit, now, noisy)
        hit.score = hit.relevance * hit.priority
        hits.append(hit)
    hits.sort(key=lambda h: (-h.score, h.id))
    kept = [h for h in hits if not why_not(h, together)] if floors else hits
    if floors and kept:
        sessions = {h.session for h in kept if h.session}
        if sessions:
            # One conversation is one context: a turn of a session recall found, that the prompt
            # matched too, comes with it (a question's turn and the reply that answered it).
            chosen = {h.id for h in kept}
            kept = [h for h in hits if h.id in chosen or (h.session in sessions and h.own)]
    if explain is not None:
        chosen = {h.id for h in kept}
        explain.extend((h, None if h.id in chosen else why_not(h, together)) for h in hits)
    if floors:
        kept = _live(db, kept, {h.id: h for h in hits})
    if silence is not None and not kept:
        best = hits[0]
        silence.append((best, why_not(best, together) or "no live memory: superseded or retired, without a live successor"))
    if own:
        # The previous turn sharpens a query, never replaces its subject (DESIGN, rule 3): what the
        # prompt's own words found comes first; the floors above are unchanged.
        kept.sort(key=lambda h: not h.own)
    return kept[:limit]


MAX_CHAIN = 16  # supersession hops followed to a live memory (a cycle or a longer chain: none)


def _live(db: "sqlite3.Connection", kept: list[Hit], found: dict[str, Hit]) -> list[Hit]:
    """Recall never injects a loser alone (issue 16): a superseded memory comes after its live
    successor (fetched when the prompt did not find it), or not at all when it has none; a
    retired one is left out. Each memory appears once."""
    out: list[Hit] = []
    shown: set[str] = set()

    def show(h: Hit) -> None:
        if h.id not in shown:
            shown.add(h.id)
            out.append(h)

    for hit in kept:
        if hit.status == "retired":
            continue
        live: Hit | None = hit
        for _ in range(MAX_CHAIN):
            if live is None or live.status != "superseded" or not live.superseded_by:
                break
            live = found.get(live.superseded_by) or _fetch(db, live.superseded_by, hit)
        if live is None or live.status in ("superseded", "retired"):
            continue  # no live successor (a cycle, a chain into a retired note): the loser says nothing true
        show(live)
        show(hit)
    return out


def _fetch(db: "sqlite3.Connection", note_id: str, loser: Hit) -> "Hit | None":
    """The successor's row as a hit in the loser's place (its score, so the order stays)."""
    row = db.execute(f"SELECT {search.COLUMNS} FROM memories WHERE id = ?", (note_id,)).fetchone()
    if row is None:
        return None
    hit = Hit(tuple(row), loser.relevance, loser.coverage, loser.evidence)
    hit.own, hit.priority, hit.score = loser.own, loser.priority, loser.score
    return hit


def why_not(h: Hit, together: int = 1) -> str | None:
    """The floor a memory fails, in words, or None when it clears them all."""
    if h.evidence < ABS_FLOOR:
        return f"evidence {h.evidence:.2f} under the floor {ABS_FLOOR}"
    if h.evidence * h.coverage < BREADTH_FLOOR:
        return (f"breadth {h.evidence * h.coverage:.2f} under the floor {BREADTH_FLOOR}: it explains "
                f"{h.coverage:.0%} of the prompt's informative words")
    if len(h.matched) < together:
        return f"holds {len(h.matched)} of the prompt's words; a prompt this long needs {together} together"
    return None


def _clears(h: Hit, breadth: float = BREADTH_FLOOR) -> bool:
    """The absolute floor: enough evidence, and enough of the prompt explained by it.

    Breadth is evidence × coverage: a strong match on one word of a long question about
    something else (a general programming question that brushes the store) stays silent.
    """
    return h.evidence >= ABS_FLOOR and h.evidence * h.coverage >= breadth
