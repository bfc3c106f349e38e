"""Verdicts the curator remembers: a pair judged to leave both memories standing is not asked again.

Issue 37: the second `memrepo curate` asked 16 pairs byte-identical to the first, all answered
"unrelated". A verdict that changes nothing (unrelated, related, no winner, or a tension the
guards leave alone) is kept in `index/curate-verdicts.json` with a fingerprint of each memory;
the pair is asked again once either memory's wording or classification changes. A proposal or
a supersession is remembered by git already (`review.pairs_seen`), so only these are kept here.
The file is this machine's cache: a missing or corrupt one only costs the calls again.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from memrepo.format import files
from memrepo.format.notes import Note
from memrepo.base import paths

FILE = "curate-verdicts.json"
MAX_KEPT = 20000  # pairs; the oldest verdicts go first beyond it
# What a verdict was about: a change of any of these asks the pair again.
_ABOUT = ("title", "description", "class", "project", "topics", "entities", "tech", "status")


def fingerprint(note: Note) -> str:
    about = {k: note.get(k) for k in _ABOUT}
    text = json.dumps(about, sort_keys=True, ensure_ascii=False, default=str) + "\n" + note.body
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _key(a: str, b: str) -> str:
    return "|".join(sorted((a, b)))


def _path(repo: str) -> str:
    return os.path.join(paths.index_dir(repo), FILE)


def standing(repo: str, memories: dict[str, Note]) -> set[frozenset[str]]:
    """Pairs whose remembered verdict still holds: both memories read as they did then."""
    found = set()
    for key, entry in files.read_state(_path(repo)).items():
        ids = key.split("|")
        if len(ids) != 2 or not isinstance(entry, dict) or not all(i in memories for i in ids):
            continue
        if entry.get("fingerprints") == [fingerprint(memories[i]) for i in ids]:
            found.add(frozenset(ids))
    return found


def remember(repo: str, judged: list[tuple[Note, Note, dict[str, Any]]], today: str) -> None:
    """Keep each (a, b, verdict) that left both memories standing."""
    remember_keyed(repo, [(a.id, a, b.id, b, verdict) for a, b, verdict in judged], today)


def remember_keyed(repo: str, judged: list[tuple[str, Note, str, Note, dict[str, Any]]], today: str) -> None:
    """Keep each (key a, a, key b, b, verdict) that left both memories standing, under those keys:
    the curator across sources names a memory by its source too (`personal: x`, `team acme: y`)."""
    if not judged:
        return
    state = files.read_state(_path(repo))
    for ka, a, kb, b, verdict in judged:
        keys = sorted((ka, kb))
        by_key = {ka: a, kb: b}
        state[_key(ka, kb)] = {"fingerprints": [fingerprint(by_key[k]) for k in keys], "relation": verdict.get("relation"),
                               "winner": verdict.get("winner"), "checked": today}
    if len(state) > MAX_KEPT:
        oldest = sorted(state, key=lambda k: str(state[k].get("checked", "")) if isinstance(state[k], dict) else "")
        for key in oldest[:len(state) - MAX_KEPT]:
            del state[key]
    os.makedirs(paths.index_dir(repo), exist_ok=True)
    files.write_state(_path(repo), state)
