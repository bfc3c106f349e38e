"""The curator's deterministic pass: duplicates, cited paths that no longer exist, broken chains.

Each finder looks at the memories as they stand and returns Changes (one memory each), which
the curator commits together, one commit per run. No model, no guessing: a path is only reported missing when
the memory's project has a root configured on this machine (`projects: {name: path | {root: path}}`
in memrepo.json or index/local.json) and that root exists, because a path that does not
resolve here proves nothing elsewhere; what counts as a cited path is the verifier's rule.
"""

from __future__ import annotations

import copy
import os
from typing import Any

from memrepo.format import notes
from memrepo.format.notes import Note

MIN_DUPLICATE_CHARS = 40


class Change:
    """One decision about one memory: the memory's new front matter, and why."""

    def __init__(self, kind: str, note: Note, subject: str, action: str, reason: str, **extra: Any) -> None:
        self.kind = kind
        self.note = note
        self.subject = subject
        self.action = action
        self.reason = reason
        self.extra = extra



def _with(note: Note, **meta: Any) -> Note:
    """A copy of `note` with front matter keys set (None removes one), in canonical order."""
    new = copy.deepcopy(note.meta)
    for key, value in meta.items():
        if value is None:
            new.pop(key, None)
        else:
            new[key] = value
    return Note({k: new[k] for k in notes.ordered_keys(new)}, note.body, note.path)


def superseded(note: Note, winner: str) -> Note:
    return _with(note, status="superseded", superseded_by=winner)


def is_active(note: Note) -> bool:
    return (note.get("status") or "active") == "active"


# -- duplicates ------------------------------------------------------------------

def _norm(text: str) -> str:
    return " ".join(text.split())


def _completeness(note: Note) -> int:
    lists = sum(len(note.get(k) or []) for k in ("topics", "entities", "tech", "aliases"))
    return lists + len(note.meta) + len(str(note.get("description", "")))


def duplicates(memories: dict[str, Note]) -> list[Change]:
    """Active memories of one class and project whose bodies match after whitespace normalization.

    The oldest copy (then the most complete) stays; each other copy is superseded by it. Bodies
    shorter than MIN_DUPLICATE_CHARS count only when the titles match too ("Ask first." is no
    duplicate of another "Ask first.").
    """
    groups: dict[tuple[Any, ...], list[Note]] = {}
    for note in memories.values():
        body = _norm(note.body)
        if not is_active(note) or not body:
            continue
        title = _norm(str(note.get("title", ""))).lower() if len(body) < MIN_DUPLICATE_CHARS else ""
        groups.setdefault((note.get("class"), note.get("project"), body, title), []).append(note)
    changes = []
    for group in groups.values():
        if len(group) < 2:
            continue
        group.sort(key=lambda n: (str(n.get("created", "")), -_completeness(n), n.id))
        keep = group[0]
        for dup in group[1:]:
            changes.append(Change("duplicate", superseded(dup, keep.id), f"curator: supersede {dup.id} by {keep.id} (duplicate)",
                                  "supersede", f"same body as {keep.id} (whitespace aside); the older copy stays",
                                  Winner=keep.id))
    return changes


# -- cited paths -----------------------------------------------------------------

PATH_PROBES = frozenset({"path_exists"})


def project_root(settings: dict[str, Any], project: Any) -> str | None:
    """The configured root of `project` on this machine, when it exists."""
    from memrepo.store.config import project_roots, root_of

    root = root_of(project_roots(settings), project) if isinstance(project, str) else None
    if root is None:
        return None
    root = os.path.abspath(os.path.expanduser(root))
    return root if os.path.isdir(root) else None


def dead_paths(repo: str, memories: dict[str, Note], settings: dict[str, Any], today: str) -> list[Change]:
    """Active memories citing files missing from their project's checkout here: stamped unverified.

    The claims are the verifier's (`verifier.check_note`, its path probe alone, no model), so
    curate and verify agree on what a memory claims: a plan, a negation, a gitignored or
    another machine's path is no claim, and the stamp is the one `memrepo verify` would write
    (issue 37: curate's own path finder once committed three of those as missing). The reason
    names paths relative to the project (`path_exists: src/x.py (shop)`), never the machine's root.
    """
    from memrepo.passes.verify import verifier

    changes = []
    setup = None
    for note in memories.values():
        if project_root(settings, note.get("project")) is None or not is_active(note):
            continue
        stamped = _with(note)
        result = verifier.MemoryResult(note.id)
        setup = setup or verifier.checks(repo, settings)  # this machine's settings, read once per run
        if not verifier.check_note(repo, stamped, settings, False, today, result, only=PATH_PROBES, setup=setup):
            continue
        missing = [c["claim"] for c in result.claims if c["probe"] == "path_exists" and c["verdict"] == "false"]
        if result.status != "unverified" or not missing:
            continue  # curate stamps dead paths; every other verdict is `memrepo verify`'s
        if _stamped_alike(note, stamped):
            continue  # already stamped for these paths (by verify, or an earlier curate): a commit would only reorder
        first = missing[0].removeprefix("path_exists: ")
        changes.append(Change("dead-path", stamped, f"curator: {note.id} cites missing {first}"
                              + (f" (+{len(missing) - 1})" if len(missing) > 1 else ""),
                              "stamp", f"cites {', '.join(m.removeprefix('path_exists: ') for m in missing)}, "
                              "missing from the project's checkout"))
    return changes


def _stamped_alike(old: Note, new: Note) -> bool:
    """Whether two versions of a memory say the same of its claims, whatever their order: the
    verification's status and failures, and the claims themselves."""
    import json

    def said(note: Note) -> tuple[Any, ...]:
        ver = note.get("verification") if isinstance(note.get("verification"), dict) else {}
        claims = note.get("claims") if isinstance(note.get("claims"), list) else []
        return (ver.get("status"), sorted(map(str, ver.get("failed") or [])), sorted(map(str, ver.get("not_claims") or [])),
                sorted(json.dumps(c, sort_keys=True, default=str) for c in claims))
    return said(old) == said(new)


# -- supersession chains ---------------------------------------------------------

def _end_of_chain(memories: dict[str, Note], start: str) -> str | None:
    """The first memory down a superseded_by chain that is not itself superseded; None on a cycle."""
    seen = {start}
    cur = start
    while True:
        nxt = memories[cur].get("superseded_by")
        if memories[cur].get("status") != "superseded" or not isinstance(nxt, str) or nxt not in memories:
            return cur
        if nxt in seen:
            return None
        seen.add(nxt)
        cur = nxt


def chains(memories: dict[str, Note]) -> tuple[list[Change], list[tuple[str, str]]]:
    """Repairs of superseded_by links: dangling ones reactivate the memory, chains point at their live end.

    Returns (changes, [(id, why it was left alone)]) — a cycle needs a person.
    """
    changes, left = [], []
    for note in memories.values():
        target = note.get("superseded_by")
        if note.get("status") != "superseded" or not isinstance(target, str):
            continue
        if target not in memories:
            changes.append(Change("chain", _with(note, status=None, superseded_by=None),
                                  f"curator: reactivate {note.id} (superseded by missing {target})", "repair",
                                  f"superseded_by names {target}, which is no memory"))
            continue
        end = _end_of_chain(memories, target)
        if end is None:
            left.append((note.id, f"supersession cycle through {target}"))
        elif end != target:
            changes.append(Change("chain", superseded(note, end), f"curator: point {note.id} at {end} (was {target})",
                                  "repair", f"{target} is itself superseded; {end} is the live end of the chain", Winner=end))
    return changes, left
