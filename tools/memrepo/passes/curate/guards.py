"""The four guards a model-proposed supersession must pass to be applied without a person.

Each guard names a way an unguarded curator went wrong: a confident-sounding guess
(confidence), two notes that only share a technology (subject overlap), a reference note
retiring a rule (same class), a note that resolves one item of a list retiring the whole list
(full scope). Stricter checks only ever hold a supersession back: a winner listing fewer items
than the loser's list of three or more does not cover it, nor does a note of one project
cover another project's (scope); a note that cites the other's id is a pointer to it, never
its replacement. What fails a guard but is a real tension goes to review; what is no tension
at all (different named subjects, a pointer and what it points to) is left alone.

Checks on the memories themselves close what a confident wrong verdict still passed (issue 16):
two notes naming different subjects (disjoint entities) never supersede each other; a note that
cites the other's id is a pointer whichever side wins (an index is not replaced by the runbook
it points to); and "duplicates" needs the two texts to say the same thing: at least
MIN_DUPLICATE_OVERLAP of the shorter text's content words appear in the other.
"""

from __future__ import annotations

import re
from typing import Any

from memrepo.format.notes import Note
from memrepo.base import projects

MIN_CONFIDENCE = 0.75
MIN_SHARED = 2
TENSION_CONFIDENCE = 0.5
TENSIONS = ("contradicts", "duplicates", "refines")
MIN_LIST = 3
# Half the shorter text's content words: a rewording keeps most of them, two procedures that
# only share a subject ("release the Android app" / "the iOS app") keep almost none.
MIN_DUPLICATE_OVERLAP = 0.5
_WORD = re.compile(r"[a-z0-9][a-z0-9_.-]*[a-z0-9]|[a-z0-9]")
_FILLER = frozenset("the a an and or of to in on at for with by from is are was were be it this that these those "
                    "then than as do does not no its their there here into onto when what which who how".split())
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S", re.M)


def words(note: Note, key: str) -> set[str]:
    """A list key of a note (topics, entities, tech) as a set of lowercase names."""
    value = note.get(key)
    return {str(v).strip().lower() for v in value if str(v).strip()} if isinstance(value, list) else set()


def project_names(note: Note) -> set[str]:
    """A memory's project as the names an entity may spell it with (its key, and the key's label)."""
    project = note.get("project")
    if not isinstance(project, str) or not project:
        return set()
    return {project.lower(), projects.label_of(project).lower()}


def subject_entities(note: Note) -> set[str]:
    """A note's named subjects: entities that are neither a technology nor its own project's name
    (every memory of the shop naming "shop" says nothing about what it is about, issue 16)."""
    return words(note, "entities") - words(note, "tech") - project_names(note)


def shared_subject(a: Note, b: Note) -> tuple[set[str], set[str]]:
    """Shared topics and shared entities; a name either note lists as a technology, or as its
    project, never counts."""
    tech = words(a, "tech") | words(b, "tech")
    topics = (words(a, "topics") & words(b, "topics")) - tech
    entities = (subject_entities(a) & subject_entities(b)) - tech
    return topics, entities


def _entities_disjoint(a: Note, b: Note) -> bool:
    tech = words(a, "tech") | words(b, "tech")
    ea, eb = subject_entities(a) - tech, subject_entities(b) - tech
    return bool(ea) and bool(eb) and not (ea & eb)


def other_projects(a: Note, b: Note) -> bool:
    """True when both memories belong to a project, and not the same one."""
    pa, pb = a.get("project"), b.get("project")
    return bool(pa) and bool(pb) and not projects.same(pa, pb)


def never_applies(a: Note, b: Note) -> str:
    """Why no verdict about `a` and `b` could be applied or be worth a review, or "": the pair
    is then not put to the model at all (issue 16: such pairs were a third of the calls)."""
    if other_projects(a, b):
        return f"different projects ({a.get('project')}, {b.get('project')})"
    if _entities_disjoint(a, b):
        return "different named subjects (no shared entity)"
    if cites(a, b) or cites(b, a):
        return "one points to the other"
    return ""


def _items(note: Note) -> list[str]:
    """The list items of a note's body: a list of open questions is several claims, not one."""
    return _ITEM.findall(note.body)


def cites(pointer: Note, target: Note) -> bool:
    """True when `pointer` names `target`'s id: an index or pointer note depends on what it points to."""
    text = " ".join([pointer.body, str(pointer.get("description", ""))])
    return bool(target.id) and target.id in text


def content_words(note: Note) -> set[str]:
    """The words of a note's description and body, lowercased, without filler."""
    text = f"{note.get('description', '')} {note.body}".lower()
    return {w for w in _WORD.findall(text) if w not in _FILLER}


def overlap(a: Note, b: Note) -> float:
    """Share of the shorter text's content words that the other text has too (0 to 1)."""
    wa, wb = content_words(a), content_words(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / min(len(wa), len(wb))


def _pointer(winner: Note, loser: Note) -> str:
    if cites(winner, loser):
        return f"pointer: {winner.id} cites {loser.id}"
    if cites(loser, winner):
        return f"pointer: {loser.id} points to {winner.id}, which does not replace it"
    return ""


def failures(verdict: dict[str, Any], winner: Note, loser: Note) -> list[str]:
    """The guards that fail, each with why; [] means the supersession may be applied."""
    failed = []
    if verdict["confidence"] < MIN_CONFIDENCE:
        failed.append(f"confidence {verdict['confidence']:.2f} < {MIN_CONFIDENCE}")
    topics, entities = shared_subject(winner, loser)
    if len(topics) < MIN_SHARED and len(entities) < MIN_SHARED:
        failed.append(f"subject overlap: {len(topics)} shared topic(s), {len(entities)} shared entit(ies); needs {MIN_SHARED}")
    if winner.get("class") != loser.get("class"):
        failed.append(f"class: {winner.get('class')} cannot supersede {loser.get('class')}")
    if verdict["scope"] != "full":
        failed.append("scope: partial (the winner does not cover everything the loser claims)")
    elif len(_items(loser)) >= MIN_LIST and len(_items(winner)) < len(_items(loser)):
        failed.append(f"scope: {loser.id} lists {len(_items(loser))} items, {winner.id} only {len(_items(winner))}")
    elif winner.get("project") and loser.get("project") and not projects.same(winner.get("project"), loser.get("project")):
        failed.append(f"scope: project {winner.get('project')} cannot cover project {loser.get('project')}")
    pointer = _pointer(winner, loser)
    if pointer:
        failed.append(pointer)
    if _entities_disjoint(winner, loser):
        failed.append("subject: different named subjects (no shared entity)")
    if verdict.get("relation") == "duplicates" and overlap(winner, loser) < MIN_DUPLICATE_OVERLAP:
        failed.append(f"duplicates: the texts share {overlap(winner, loser):.0%} of their words (needs {MIN_DUPLICATE_OVERLAP:.0%})")
    return failed


def no_tension(verdict: dict[str, Any], winner: Note, loser: Note) -> str:
    """Why a verdict is no tension worth a person's time, or "" when it is one."""
    if verdict["relation"] not in TENSIONS:
        return f"relation {verdict['relation']}"
    if verdict["confidence"] < TENSION_CONFIDENCE:
        return f"confidence {verdict['confidence']:.2f} < {TENSION_CONFIDENCE}"
    if cites(winner, loser):
        return f"{winner.id} points to {loser.id}: a pointer never replaces what it points to"
    if cites(loser, winner):
        return f"{loser.id} points to {winner.id}: what a pointer points to does not replace it"
    if verdict["relation"] == "duplicates" and overlap(winner, loser) < MIN_DUPLICATE_OVERLAP:
        return f"not duplicates: the texts share {overlap(winner, loser):.0%} of their words"
    if _entities_disjoint(winner, loser):
        return "different named subjects (no shared entity)"
    if other_projects(winner, loser):
        return f"different projects ({winner.get('project')}, {loser.get('project')})"
    topics, entities = shared_subject(winner, loser)
    if not topics and not entities:
        return "no shared topic or entity (a shared technology does not count)"
    return ""
