"""Was an injected memory used? (stdlib only: the Stop hook runs it, no model.)

A memory recall injected was *used* when the agent's reply (the Stop hook's
`last_assistant_message`) or the person's next prompt shows it: the memory's id appears, or
enough of its *distinctive* words do. A memory's distinctive words are its index terms that
tell it apart in this store (at most FINDER_DF_SHARE of the memories hold them, as search
counts them), that are not everyday words, that the prompt did not already say — a reply
repeating the question's words proves nothing — and that no other memory injected with it
holds (near misses on one subject share their subject's words). "Enough" is two of them, or
the only one a memory has. On a labeled set written before the judge ran on it
(`tests/bench/report_usage.py`): precision of "used" 0.67, recall 0.89 without the last
condition; 0.83 and 0.74 with it.

Verdicts go to `index/recall-usage.jsonl` (0600, this machine only), one line per judged
decision: its key (session, time, prompt hash), the ids used and unused, and what showed it
(`reply`, or `next-prompt` for one that the reply did not use and the next prompt did). No
text of the prompt, the reply or the memory is written. `recall-log`, `memrepo stats`
(precision of injections) and the profile's demotion order read it.
"""

from memrepo.recall import _fast, noisy, paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from typing import Any, Iterable

USAGE_LOG = "recall-usage.jsonl"
MAX_LOG_BYTES = 5 * 1024 * 1024
TAIL_BYTES = 256 * 1024  # of the recall log read at a Stop: this session's last decisions are near the end
MAX_REPLY_CHARS = 100_000
MIN_SHARED = 2  # distinctive words a reply must share with a memory (or all it has, when it has fewer)
MAX_DISTINCT = 40  # a memory's rarest words that count; a long body's tail says little more


def usage_log(repo: str) -> str:
    return _fast.join(paths.index_dir(repo), USAGE_LOG)


def stems(words: "Iterable[str]") -> set[str]:
    from memrepo.recall import porter

    return {porter.stem(w) for w in words}


def text_stems(text: str) -> set[str]:
    """The index terms of any text: unicode61 words, porter stems (the reply is read whole, code too)."""
    from memrepo.recall import clean

    return stems(clean.tokenize(text[:MAX_REPLY_CHARS]))


def _candidate_words(text: str) -> list[str]:
    from memrepo.recall import clean, query
    from memrepo.recall.lexicon import COMMON

    out: dict[str, None] = {}
    for tok in clean.tokenize(text):
        if 2 < len(tok) <= 64 and not tok.isdigit() and tok not in COMMON and not query.is_filler(tok):
            out[tok] = None
    return list(out)


def distinctive(db: "sqlite3.Connection", note_id: str, said: set[str]) -> "tuple[str, ...] | None":
    """The stems that tell `note_id` apart in this store, rarest first, minus the stems in `said`;
    None when the index no longer holds the memory."""
    from memrepo.recall import porter, search

    row = db.execute("SELECT f.title, f.aliases, f.topics, f.entities, f.tech, f.description, f.body"
                     " FROM fts f JOIN memories m ON m.rowid = f.rowid WHERE m.id = ?", (note_id,)).fetchone()
    if row is None:
        return None
    words = [w for w in _candidate_words(" ".join(str(c or "") for c in row)) if porter.stem(w) not in said]
    if not words:
        return ()
    facts = search.Lookups(db, words)
    cap = max(search.COMMON_DF_MIN, int(facts.n * search.FINDER_DF_SHARE))
    rare = sorted((facts.dfs.get(w, 0), i, w) for i, w in enumerate(words) if 0 < facts.dfs.get(w, 0) <= cap)
    out: dict[str, None] = {}
    for _, _, w in rare:
        out.setdefault(porter.stem(w), None)
    return tuple(out)[:MAX_DISTINCT]


def shows(note_id: str, distinct: "tuple[str, ...]", text: str, text_terms: set[str]) -> bool:
    """Whether `text` (with its stems `text_terms`) shows the memory: its id, or enough distinctive words."""
    if note_id and note_id.lower() in text.lower():
        return True
    if not distinct:
        return False
    return len(text_terms.intersection(distinct)) >= min(MIN_SHARED, len(distinct))


def _tail(path: str, size: int = TAIL_BYTES) -> "list[dict[str, Any]]":
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            end = fh.tell()
            fh.seek(max(0, end - size))
            raw = fh.read()
    except OSError:
        return []
    from memrepo.recall import log

    lines = raw.decode("utf-8", "replace").split("\n")
    return log.parse_lines(lines[1:] if end > size else lines)  # a tail's first line may be cut


def key(entry: "dict[str, Any]") -> str:
    """A decision's key in both logs: session, time and prompt hash."""
    return f"{entry.get('session') or ''}|{entry.get('t') or ''}|{entry.get('prompt_sha') or ''}"


def _injected(entry: "dict[str, Any]") -> list[str]:
    found = entry.get("injected")
    return [str(i["id"]) for i in found if isinstance(i, dict) and i.get("id")] if isinstance(found, list) else []


def judge_stop(repo: str, session: str, reply: str, lines: "Iterable[str]" = ()) -> "list[dict[str, Any]]":
    """At a Stop: judge this session's last decision by the reply, and the one before it by this
    turn's prompt when the reply to it did not use everything. `lines` are always-on texts (the
    profile's) also judged by the reply; a used one is recorded by its hash. Returns the verdicts
    written."""
    if not session or not isinstance(reply, str):
        return []
    mine = [e for e in _tail(paths.recall_log(repo)) if e.get("session") == session]
    if not mine:
        return []
    judged = [v for v in _tail(usage_log(repo)) if v.get("session") == session]
    done = {(v.get("key"), v.get("by")) for v in judged}
    reply = reply[:MAX_REPLY_CHARS]
    last = mine[-1]
    verdicts = []
    reply_terms = text_stems(reply)
    if (key(last), "reply") not in done:
        said = _said(last)
        verdict = _verdict(repo, last, "reply", reply, reply_terms, _injected(last))
        profile = [line_hash(t) for t in lines if shows("", tuple(stems(_subject(t)) - said), "", reply_terms)]
        if profile:
            verdict["profile"] = profile
        if verdict["used"] or verdict["unused"] or profile:
            verdicts.append(verdict)
    if len(mine) > 1 and (key(mine[-2]), "next-prompt") not in done:
        unused = _unused(judged, mine[-2])
        said_now = _said(last)
        if unused and said_now:
            verdicts.append(_verdict(repo, mine[-2], "next-prompt", "", said_now, unused))
    for v in verdicts:
        _append(repo, v)
    # Use renews (issue 43): the day is recorded now, so the next prompt already ranks it so.
    noisy.renew(repo, [i for v in verdicts for i in _strings(v.get("used"))], _now()[:10])
    return verdicts


def _said(entry: "dict[str, Any]") -> set[str]:
    """The stems a decision's prompt (and the turn it leaned on) said."""
    return stems(_strings(entry.get("terms"))) | stems(_strings(entry.get("context_terms")))


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _subject(text: str) -> tuple[str, ...]:
    from memrepo.recall import query

    return query.subject_terms(text)


def line_hash(text: str) -> str:
    """How the usage log names an always-on line without holding its text."""
    from memrepo.recall import log

    return log.text_hash(" ".join(text.split()))


def _verdict(repo: str, entry: "dict[str, Any]", by: str, text: str, text_terms: set[str],
             ids: list[str]) -> "dict[str, Any]":
    """Which of `ids` the text (or its stems alone, for a next prompt's terms) shows."""
    used: list[str] = []
    unused: list[str] = []
    if ids:
        from memrepo.recall import search

        db = search.connect(paths.index_db(repo))
        try:
            used, unused = judge(db, ids, _said(entry), text, text_terms)
        finally:
            db.close()
    return {"t": _now(), "session": entry.get("session"), "key": key(entry), "by": by, "used": used, "unused": unused}


def judge(db: "sqlite3.Connection", ids: "Iterable[str]", said: set[str], text: str,
          text_terms: "set[str] | None" = None) -> "tuple[list[str], list[str]]":
    """(used, unused) of `ids` for a reply `text`, the prompt having said the stems `said`."""
    text = text[:MAX_REPLY_CHARS]
    terms = text_stems(text) if text_terms is None else text_terms
    ids = list(ids)
    words = {note_id: distinctive(db, note_id, said) for note_id in ids}
    used: list[str] = []
    unused: list[str] = []
    for note_id in ids:
        distinct = words[note_id]
        if distinct is not None:
            # What the injected notes share (near misses on one subject) shows none of them in particular.
            others = set().union(*(w or () for i, w in words.items() if i != note_id))
            distinct = tuple(w for w in distinct if w not in others)
        (used if distinct is not None and shows(note_id, distinct, text, terms) else unused).append(note_id)
    return used, unused


def _unused(judged: "list[dict[str, Any]]", entry: "dict[str, Any]") -> list[str]:
    """The ids of `entry` that its reply's verdict (among `judged`) left unused ([] when none)."""
    k = key(entry)
    for v in reversed(judged):
        if v.get("key") == k and v.get("by") == "reply":
            return _strings(v.get("unused"))
    return []


def _now() -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _append(repo: str, verdict: "dict[str, Any]") -> None:
    path = usage_log(repo)
    try:
        if _fast.stat(path).st_size > MAX_LOG_BYTES:
            _fast.replace(path, path + ".1")
    except OSError:
        pass
    fd = _fast.open_fd(path, _fast.O_WRONLY | _fast.O_APPEND | _fast.O_CREAT, 0o600)
    try:
        _fast.write(fd, (_fast.dumps(verdict) + "\n").encode("utf-8", "surrogatepass"))
    finally:
        _fast.close(fd)


def read_all(repo: str) -> "list[dict[str, Any]]":
    """Every verdict on this machine, oldest first."""
    from memrepo.recall import log

    return log.read_jsonl(usage_log(repo))


def used_by_key(verdicts: "list[dict[str, Any]]") -> "dict[str, set[str]]":
    """decision key -> the ids any verdict found used."""
    out: dict[str, set[str]] = {}
    for v in verdicts:
        out.setdefault(str(v.get("key")), set()).update(_strings(v.get("used")))
    return out


DEFAULT_DAYS = 30
REVIEW_AFTER = 3  # judged injections with no use that make a memory a candidate for review


def summary(repo: str, days: int = DEFAULT_DAYS, now: "float | None" = None) -> "dict[str, Any]":
    """Precision of the injections of the last `days` days that a Stop judged, and the memories
    injected at least REVIEW_AFTER times and never used (ranking noise: candidates for review)."""
    import time

    from memrepo.recall import log

    since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime((time.time() if now is None else now) - days * 86400))
    verdicts = read_all(repo)
    judged = {str(v.get("key")) for v in verdicts if v.get("by") == "reply"}
    used = used_by_key(verdicts)
    per: dict[str, list[int]] = {}  # id -> [injected, judged, used]
    injections = judged_n = used_n = 0
    for entry in log.read_all(repo):
        if str(entry.get("t") or "") < since:
            continue
        k = key(entry)
        for note_id in _injected(entry):
            row = per.setdefault(note_id, [0, 0, 0])
            row[0] += 1
            injections += 1
            if k in judged:
                row[1] += 1
                judged_n += 1
                if note_id in used.get(k, ()):
                    row[2] += 1
                    used_n += 1
    never = sorted(((i, r[1]) for i, r in per.items() if r[1] >= REVIEW_AFTER and not r[2]), key=lambda x: (-x[1], x[0]))
    return {"days": days, "injections": injections, "judged": judged_n, "used": used_n,
            "precision": round(used_n / judged_n, 3) if judged_n else None,
            "never_used": [{"id": i, "injected": n} for i, n in never],
            "per_memory": {i: {"injected": r[0], "judged": r[1], "used": r[2]} for i, r in sorted(per.items())}}


def last_used(verdicts: "list[dict[str, Any]]") -> "dict[str, str]":
    """id -> the day (YYYY-MM-DD) of the latest verdict that found it used."""
    out: dict[str, str] = {}
    for v in verdicts:
        day = str(v.get("t") or "")[:10]
        for note_id in _strings(v.get("used")):
            if len(day) == 10 and out.get(note_id, "") < day:
                out[note_id] = day
    return out


def write_noisy(repo: str) -> "list[str]":
    """Record the memories injected often and never used (`summary`) and the day each memory was
    last used (the usage log's verdicts, with the days recorded before: the log rotates), for the
    prompt path to read (`noisy`); the daily sweep refreshes it. Returns the noisy ids."""
    ids = [m["id"] for m in summary(repo)["never_used"]]
    used = noisy.renewed_days(noisy.read_state(repo))
    for note_id, day in last_used(read_all(repo)).items():
        if used.get(note_id, "") < day:
            used[note_id] = day
    noisy.write_state(repo, {"ids": ids, "after": REVIEW_AFTER, "days": DEFAULT_DAYS, "used": used})
    return ids


def memory_use(repo: str, note_id: str) -> "dict[str, Any]":
    """What this machine saw of one memory's use, over every decision its logs still hold: times
    injected, judged by a Stop, used, and the day it was last used (`memrepo show`)."""
    per = summary(repo, days=DAYS_EVER)["per_memory"].get(note_id) or {"injected": 0, "judged": 0, "used": 0}
    return {**per, "last_used": noisy.renewed_days(noisy.read_state(repo)).get(note_id)
            or last_used(read_all(repo)).get(note_id)}


DAYS_EVER = 100 * 366


def watching_since(repo: str) -> "str | None":
    """The day of the oldest recall decision this machine's log holds: how long use was watched."""
    from memrepo.recall import log

    for name in (paths.recall_log(repo) + ".1", paths.recall_log(repo)):
        try:
            with open(name, encoding="utf-8", errors="replace") as fh:
                first = log.parse_lines([fh.readline()])
        except OSError:
            continue
        if first and isinstance(first[0].get("t"), str):
            return str(first[0]["t"])[:10]
    return None
