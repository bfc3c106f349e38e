"""Disuse fades: an agent-captured memory this machine has not seen used for a while is proposed
for retirement, on a review branch, with the evidence (issue 43). Never retired by itself.

"Used" is the Stop hook's judgement (`memrepo.recall.usage`); the day of a memory's last use is
in `index/recall-noisy.json` (`memrepo.recall.noisy`). A memory is proposed when it is active,
an agent wrote it (`source: agent` or `capture`), it is not a rule or a preference, it decays
(no `half_life_days: null`), and for `retire_unused_days` days (default 90) it was neither
written nor used while recall was watching: the idle time counts from the latest of its
`updated` day, its last use, and the day this machine's recall log begins (a machine that only
started recalling last week has not watched any memory for 90 days). What the user said never
expires. A proposal that was rejected, or is open, is not made again.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from memrepo.format import notes
from memrepo.format.notes import Note
from memrepo.recall import noisy, usage

SETTING = "retire_unused_days"
DEFAULT_DAYS = 90
AGENT_SOURCES = ("agent", "capture")
NEVER_EXPIRE = ("rule", "preference")


def period(settings: dict[str, Any]) -> int:
    """The idle days after which a memory is proposed; 0 turns proposals off."""
    value = settings.get("retire_unused_days", DEFAULT_DAYS)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return DEFAULT_DAYS
    return value


def expires(note: Note) -> bool:
    """Whether disuse may ever propose retiring this memory."""
    return (note.get("source") in AGENT_SOURCES and note.get("class") not in NEVER_EXPIRE
            and (note.get("status") or "active") == "active"
            and not ("half_life_days" in note.meta and note.get("half_life_days") is None))


def _day(value: Any) -> str:
    text = str(value or "")[:10]
    return text if len(text) == 10 else ""


def idle(repo: str, memories: dict[str, Note], settings: dict[str, Any],
         today: _dt.date | None = None) -> list[tuple[Note, dict[str, Any]]]:
    """The memories to propose for retirement, oldest idle first, each with its evidence."""
    days = period(settings)
    since = usage.watching_since(repo)
    if not days or since is None:
        return []
    today = today or _dt.date.today()
    verdicts = usage.read_all(repo)
    used = usage.last_used(verdicts)
    for note_id, day in noisy.renewed_days(noisy.read_state(repo)).items():
        used[note_id] = max(used.get(note_id, ""), day)
    window = usage.summary(repo, days=days, now=_epoch(today))["per_memory"]
    out = []
    for note in memories.values():
        if not expires(note):
            continue
        start = max(_day(note.get("updated")), _day(note.get("created")), used.get(note.id, ""), since)
        try:
            idle_days = (today - _dt.date.fromisoformat(start)).days
        except ValueError:
            continue
        if idle_days < days:
            continue
        seen = window.get(note.id) or {"injected": 0, "judged": 0, "used": 0}
        out.append((note, {"idle_days": idle_days, "last_used": used.get(note.id) or "never",
                           "injected": seen["injected"], "judged": seen["judged"], "used": seen["used"],
                           "window_days": days, "watched_since": since}))
    out.sort(key=lambda pair: (-pair[1]["idle_days"], pair[0].id))
    return out


def _epoch(day: _dt.date) -> float:
    return (day - _dt.date(1970, 1, 1)).days * 86400.0 + 86399.0


def evidence_line(e: dict[str, Any]) -> str:
    """The evidence in one line, as the proposal's subject and trailer carry it."""
    return (f"unused for {e['idle_days']} days (last used: {e['last_used']}; injected {e['injected']} times in "
            f"the last {e['window_days']} days, {e['judged']} judged, {e['used']} used; recall watched since "
            f"{e['watched_since']})")


def retired(note: Note, e: dict[str, Any], today: str) -> Note:
    """The memory as the proposal would leave it: retired, saying why."""
    meta = dict(note.meta)
    meta.pop("superseded_by", None)
    meta.update(status="retired", updated=today,
                retired_reason=f"not used for {e['idle_days']} days (proposed by the curator, accepted in review)")
    return Note({k: meta[k] for k in notes.ordered_keys(meta)}, note.body, note.path)
