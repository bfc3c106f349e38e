"""Scores of recall and its decision (stdlib only: the prompt path).

A memory's score is its relevance to the query (`search.relevance`: field-weighted BM25) times
its scope and priority; the decision to inject is `calibrate.p_inject` of the best match.

- Priority breaks ties and never outvotes relevance (issue 36): decay by class half-life takes
  at most 1 - DECAY_FLOOR off a score, and a memory injected often and never used ranks as a
  fully decayed one. Superseded, retired and unverified memories are penalised.
- Scope: another project's memory counts for less unless the prompt names that project (its
  label, `memrepo.base.projects`); a bare legacy `project:` is this project's when one of its
  names matches.

The best match is injected when its features (`calibrate.features`) give `p_inject` at least
`calibrate.THRESHOLD`; further candidates come with it while they score at least
`calibrate.RUNNER_UP` of it, up to the limit.
"""

import time

from memrepo.base import projects
from memrepo.recall import calibrate, search

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3

OTHER_PROJECT = 0.7
SUPERSEDED_PENALTY = 0.3
UNVERIFIED_PENALTY = 0.8
CONTEXT_ONLY = 0.5  # a memory only the previous turn's words found (issue 17)
# A rule or a preference is a standing instruction: it bears on every prompt about its subject, where
# a fact or an event answers one question. Among candidates BM25 finds alike it comes first (a prior,
# as decay is: the decision's evidence divides it out). Chosen on the fitting sets alone:
# `python tests/bench/fit_recall.py --grid STANDING=1,1.05,1.1,1.15,1.2,1.25,1.3` (issue 36).
STANDING = 1.15
STANDING_CLASSES = frozenset(("rule", "preference"))
# In an imported conversation (memories that are dialogue turns: `bare`, with a `session`) a turn's
# subject is its session's: the answer to a question shares few of its words. Each such candidate
# takes this share of the best score another turn of its session has among the candidates (an
# ordering term, not evidence: the decision's features leave it out). Chosen on the fitting sets
# alone: `python tests/bench/fit_recall.py --grid SESSION_LEND=0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1` (issue 36).
SESSION_LEND = 0.8
DECAY_FLOOR = 0.95  # decay is 0.5 ** (age / half-life) as DESIGN.md says, mapped onto [DECAY_FLOOR, 1]


class Hit:
    __slots__ = ("id", "cls", "status", "superseded_by", "project", "updated", "half_life", "verification",
                 "verify_reason", "title", "description", "session", "relevance", "scope", "priority", "score",
                 "own", "matched", "features", "p", "bare", "gone", "source", "lent")

    def __init__(self, row: tuple, relevance: float) -> None:  # type: ignore[type-arg]
        (self.id, self.cls, self.status, self.superseded_by, self.project, self.updated, self.half_life,
         self.verification, self.verify_reason, self.title, self.description, self.session) = row
        self.relevance = relevance  # field-weighted BM25 over the query's weighted terms
        self.matched: dict[str, int] = {}  # the query terms it holds -> where (search.Evidence)
        self.scope = 1.0
        self.priority = 1.0
        self.score = relevance
        self.own = True  # found by the prompt's own words (False: only by the previous turn's)
        self.features: dict[str, float] = {}
        self.p = 0.0  # calibrate.p_inject of its features
        self.bare = False  # it lists no aliases, topics or entities: prose is all it can match in
        self.gone = ""  # the note naming cited paths gone from the prompt's checkout (recall.citations, issue 43)
        self.source = ""  # the source it comes from when not the personal one ("team acme"; recall/sources.py)
        self.lent = 0.0  # the part of `score` its session's other turns lent it (`_lend`)

    def labels(self) -> list[str]:
        out = []
        if self.status == "superseded" and self.superseded_by:
            out.append(f"superseded by {self.superseded_by}")
        elif self.status == "retired":
            out.append("retired")
        if self.verification == "unverified":
            out.append("unverified: " + (self.verify_reason or "a claim failed"))
        if self.gone:
            out.append(self.gone)
        return out

    def as_dict(self) -> dict:  # type: ignore[type-arg]
        return {"id": self.id, "score": float(f"{self.score:.4g}"), "title": self.title, "class": self.cls,
                "status": self.status, "labels": self.labels(), "project": self.project,
                "description": self.description}


# Days from March 1 to the first of each month, January first (the year counted from March puts
# February's leap day last).
_FROM_MARCH = (306, 337, 0, 31, 61, 92, 122, 153, 184, 214, 245, 275)


def _epoch_day(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (no datetime import on the prompt path)."""
    if not (1 <= m <= 12 and 1 <= d <= 31):
        raise ValueError("not a date")
    y -= m <= 2
    return y * 365 + y // 4 - y // 100 + y // 400 + _FROM_MARCH[m - 1] + d - 719469


def _age_days(updated: str, today: float) -> float:
    day = _epoch_day(int(updated[0:4]), int(updated[5:7]), int(updated[8:10]))
    return max(0.0, today / 86400.0 - day)


def _priority(hit: Hit, today: float, noisy: "frozenset[str] | set[str]" = frozenset()) -> float:
    """Decay by half-life from `updated`, the standing instructions' prior, and the penalties for
    superseded and unverified memories.

    A memory injected often and never used (`noisy.noisy_ids`) ranks as a fully decayed one: it
    yields to comparable matches, never to a much weaker one. One that was used decays from the
    day of its last use (`noisy.Usage.renewed`, issue 43), when that is later than `updated`.
    """
    p = 1.0
    if hit.id in noisy:
        p *= DECAY_FLOOR
    elif hit.half_life and hit.updated:
        since = max(hit.updated, getattr(noisy, "renewed", {}).get(hit.id) or "")  # use renews (issue 43)
        try:
            p *= DECAY_FLOOR + (1.0 - DECAY_FLOOR) * 0.5 ** (_age_days(since, today) / float(hit.half_life))
        except (ValueError, OverflowError):  # a negative half-life in a cache built before issue 38
            pass
    if hit.cls in STANDING_CLASSES:
        p *= STANDING
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
         silence: "list[tuple[Hit | None, str]] | None" = None,
         origin: "dict[str, str] | None" = None, named: frozenset[str] | set[str] = frozenset(),
         ours: bool = False, explain_rows: int | None = None, weights: "dict[str, float] | None" = None) -> list[Hit]:
    """The memories to recall for weighted terms, best first; [] when the decision is silence.

    `project` is a key (`--project`) or a Project. `own` names the prompt's own terms (its words
    and what it pasted) when others come from the previous turn; `origin` maps a term to 'own',
    'pasted' or 'previous' (default 'own'), `named` the terms written as names. `noisy`: memories
    injected often and never used. `floors=False` ranks without deciding (`memrepo search`).
    `ours`: the prompt speaks of the user's own team ("our", "we").
    `explain`, when given, receives every candidate in score order with why it was left out
    (None: injected), or (None, why) when there were no candidates to judge; only the first
    `explain_rows` of them when it is given. `weights`: in a merged cache, the weight of each
    source's memories by their id's prefix (`recall.sources.tag`: "" for the personal source),
    part of their priority: a tie-breaker as decay is, never part of the decision's evidence. `silence`, when
    given, receives one entry when nothing is recalled: the best candidate and why, or (None,
    why) without candidates (what the recall log keeps).
    """
    if not terms:
        return []
    origin = origin or {}
    facts = search.Lookups(db, [t for t, _ in terms])
    if own and not any(facts.dfs.get(t, 0) for t in own):
        # The previous turn sharpens a prompt whose own words the store knows; when it knows none
        # of them ("explain that again but shorter" after a deploy turn), it alone never recalls.
        return _nothing("the store knows none of the prompt's own words: the previous turn alone never recalls",
                        explain, silence)
    n_own = sum(1 for t, _ in terms if origin.get(t, "own") == "own")
    # On a large store the search looks first at memories holding two of a longer prompt's words
    # (search._candidates); a store under its walk budget searches them all.
    together = 2 if n_own >= 3 else 1
    scored = search.relevance(db, terms, own=own, lookups=facts, together=together)
    if not scored:
        return _nothing("no memory holds any of the prompt's words (or they are in too many to tell any apart)",
                        explain, silence)
    scope = projects.scope_of(project)
    now = time.time() if today is None else today
    words = {t for t, _ in terms}
    hits = []
    sessions: dict[str, list[Hit]] = {}  # the dialogue turns among them, by source and session (`_lend`)
    for ev in scored.values():
        hit = Hit(ev.row[2:], ev.score)
        hit.matched = ev.matched
        hit.bare = not ev.row[1]
        hit.own = ev.own or not own
        hit.scope = _scope(hit, scope, words)
        hit.priority = _priority(hit, now, noisy)
        if weights:
            hit.priority *= weights.get(hit.id[:hit.id.find(":") + 1], 1.0)
        hit.score = hit.relevance * hit.scope * hit.priority * (1.0 if hit.own else CONTEXT_ONLY)
        hits.append(hit)
        if hit.bare and hit.session:  # a session is one source's: in a merged cache, by the id's source tag
            sessions.setdefault(hit.id[:hit.id.find(":") + 1] + hit.session, []).append(hit)
    if SESSION_LEND and sessions:
        _lend(sessions)
    hits.sort(key=lambda h: (-h.score, h.id))
    # The best match decides; the next ones are judged too only for a caller who reads them all.
    q = calibrate.Query(terms, facts.dfs, facts.n, origin, named, facts.tech, ours)
    _judge(hits, q, JUDGED if explain is not None and explain_rows is None else 1)
    if not floors:
        kept = hits
    else:
        best = hits[0]
        kept = [best] if _p_with_predecessors(hits, q) >= calibrate.THRESHOLD else []
        if kept:
            # Beside the best match come comparable ones of this project (or global, or a project the
            # prompt names): another project's memory is recalled only as the best match there is.
            kept += [h for h in hits[1:] if h.score >= calibrate.RUNNER_UP * best.score and h.scope == 1.0]
    if own:
        # The previous turn sharpens a query, never replaces its subject (DESIGN, rule 3): what the
        # prompt's own words found comes first.
        kept = sorted(kept, key=lambda h: not h.own)
    if explain is not None:
        chosen = {h.id for h in kept[:limit]}
        explain.extend((h, None if h.id in chosen else why_not(h, hits[0], i, limit)) for i, h in enumerate(hits[:explain_rows]))
    if floors:
        kept = _live(db, kept[:limit], {h.id: h for h in hits})
    if silence is not None and not kept:
        best = hits[0]
        silence.append((best, why_not(best, best, 0, limit) or "no live memory: superseded or retired, without a live successor"))
    return kept[:limit]


def _nothing(why: str, *outs: "list[tuple[Hit | None, str]] | list[tuple[Hit | None, str | None]] | None") -> list[Hit]:
    for out in outs:
        if out is not None:
            out.append((None, why))
    return []


def _lend(sessions: dict[str, list[Hit]]) -> None:
    """Each dialogue turn among the candidates (bare, with a session: `sessions` holds them by
    session) takes SESSION_LEND of the best score another turn of its session has among them, all
    from the scores before any lending."""
    for turns in sessions.values():
        if len(turns) < 2:
            continue
        first, second = sorted(turns, key=lambda h: (-h.score, h.id))[:2]
        for h in turns:
            h.lent = SESSION_LEND * (second if h is first else first).score
    for turns in sessions.values():
        for h in turns:
            h.score += h.lent


JUDGED = 3  # the candidates whose features a full explanation shows: the best decides, the next two are explained


def _judge(hits: list[Hit], q: calibrate.Query, judged: int) -> None:
    """The features and p_inject of the first `judged` candidates, in score order."""
    from memrepo.recall.lexicon import COMMON

    for i, h in enumerate(hits[:judged]):
        nxt = hits[i + 1].score if i + 1 < len(hits) else 0.0  # the margin is read on the ordering's scores
        # What it says of the prompt is judged before its priority: a superseded memory still shows
        # that the store knows the subject (its live successor comes with it, `_live`).
        relevance = (h.score - h.lent) / h.priority if h.priority else h.score - h.lent
        h.features = calibrate.features(q, relevance, h.matched, nxt * relevance / h.score if h.score else 0.0,
                                        h.scope == 1.0, h.bare, COMMON)
        h.p = calibrate.p_inject(h.features)


def _p_with_predecessors(hits: list[Hit], q: calibrate.Query) -> float:
    """The best match's p_inject, or that of a memory it superseded among the candidates when that
    is higher: evidence for the fact a memory replaced is evidence for the memory that says what is
    true now ("the weekly report is due monday, right?" beside the report that moved to wednesday).
    Judged only when such a candidate is there."""
    best = hits[0]
    p = best.p
    for i, h in enumerate(hits[1:], 1):
        if h.status == "superseded" and h.superseded_by == best.id:
            if not h.features:
                _judge(hits[i:], q, 1)
            p = max(p, h.p)
    return p


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
    hit = Hit(tuple(row), loser.relevance)
    hit.own, hit.scope, hit.priority, hit.score = loser.own, loser.scope, loser.priority, loser.score
    hit.features, hit.p = loser.features, loser.p
    return hit


def why_not(h: Hit, best: Hit, i: int, limit: int) -> str | None:
    """Why a candidate was left out, in words, or None when it was recalled."""
    if h is best:
        if h.p >= calibrate.THRESHOLD:
            return None
        return f"the evidence says silence: p {h.p:.2f} under {calibrate.THRESHOLD} ({explain_features(h.features)})"
    if best.p < calibrate.THRESHOLD:
        return "the best match was not recalled"
    if h.score < calibrate.RUNNER_UP * best.score:
        return f"scores {h.score / best.score:.0%} of the best match, under {calibrate.RUNNER_UP:.0%}"
    if h.scope != 1.0:
        return "another project's memory: recalled only as the best match"
    if i >= limit:
        return f"beyond the {limit} recalled"
    return None


def explain_features(f: "dict[str, float]", most: "int | None" = 4, digits: int = 1) -> str:
    """The features that moved a decision most (`most` of them; None: all), in words: each one's
    part of the logit, largest first."""
    parts = sorted(((calibrate.COEF.get(k, 0.0) * v, k, v) for k, v in f.items()), key=lambda t: -abs(t[0]))[:most]
    return ", ".join(f"{k} {v:.2f} ({c:+.{digits}f})" for c, k, v in parts)
