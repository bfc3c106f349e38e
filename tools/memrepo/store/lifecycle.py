"""A person's changes to one memory: edit it, retire it (forget it). Each is one commit of its own run.

Nothing is deleted: a retired memory keeps its file with `status: retired` and the person's
reason in `retired_reason`; recall never injects it, and neither a re-import (its id is taken)
nor a later capture (see `passes.capture_plan`) brings it back. Every change is made under the
repository lock against the bytes that were read, so an edit in one terminal never overwrites a
change another terminal committed meanwhile, and each is a run that `memrepo undo` reverts.
"""

from __future__ import annotations

from typing import Any

from memrepo.errors import MemrepoError, NoteInvalid
from memrepo.format import notes, spec, validate
from memrepo.base import paths
from memrepo.store import memories
from memrepo.vcs import runs

RETIRED_BY_PERSON = "retired_reason"  # the key a person's retire writes (the curator's retire has none)
DEFAULT_FORGET_REASON = "forgotten at the user's request"


class ChangedMeanwhile(MemrepoError):
    """The memory changed on disk between reading it and committing the change."""


def _rel(note_id: str) -> str:
    return f"{paths.MEMORY_DIR}/{note_id}.md"


def _commit(repo: str, note_id: str, before: str, after: str, action: str, extra: dict[str, Any]) -> tuple[str, str]:
    """Commit `after` over `before` as its own run; (sha, run id). ChangedMeanwhile if the file moved on."""
    from memrepo.store import githooks
    from memrepo.vcs import group

    run = runs.change_run_id(action, note_id)
    trailers = {"Action": action, "Run": run, "Id": note_id, **extra}
    change = group.Change({_rel(note_id): after}, {_rel(note_id): before}, f"{action}: {note_id}", trailers)
    sha, stale = group.submit(repo, change, githooks.in_process())
    if stale:
        raise ChangedMeanwhile(f"{_rel(note_id)} changed while you were editing it (another terminal or a pass "
                               "committed it); nothing was written",
                               hint=f"`memrepo show {note_id}` shows the new version; run the command again")
    return sha, run


def _said(text: object) -> str:
    return " ".join(str(text or "").lower().split())


def forgotten(repo: str) -> dict[str, tuple[str, str]]:
    """{a retired memory's title or description, lowercased and one-spaced: (its id, the person's
    reason)} for every memory a person retired or forgot (a pass's retire has no reason: not here)."""
    import contextlib
    import sqlite3

    try:
        with contextlib.closing(memories.fresh_db(repo)) as db:
            ids = [r[0] for r in db.execute("SELECT id FROM memories WHERE status = 'retired' ORDER BY id")]
    except sqlite3.Error:
        return {}
    out: dict[str, tuple[str, str]] = {}
    for note_id in ids:
        try:
            note = notes.read(paths.note_path(repo, note_id))
        except (OSError, ValueError):
            continue
        reason = note.get(RETIRED_BY_PERSON)
        if note.get("status") == "retired" and reason:
            for said in (_said(note.get("title")), _said(note.get("description"))):
                if said:
                    out.setdefault(said, (note_id, str(reason)))
    return out


def forgotten_like(known: dict[str, tuple[str, str]], note: notes.Note) -> tuple[str, str] | None:
    """(id, reason) of the forgotten memory `note` repeats word for word (its title or its
    description), or None; `known` is `forgotten(repo)`."""
    for said in (_said(note.get("title")), _said(note.get("description"))):
        hit = known.get(said) if said else None
        if hit and hit[0] != note.id:
            return hit
    return None


def validated(text: str, note_id: str) -> notes.Note:
    """The memory `text` holds, or NoteInvalid with every problem; its id must stay `note_id`."""
    problems, note = validate.check_text(text, _rel(note_id))
    if note is not None and isinstance(note.get("id"), str) and note.id != note_id:
        raise NoteInvalid(f"the id changed from {note_id!r} to {note.id!r}", [],
                          hint="an id is the file's name and stays; add a new memory instead "
                               "(`memrepo add`), then retire this one")
    if problems or note is None:
        raise NoteInvalid(f"{_rel(note_id)} would not be a valid memory", [str(p) for p in problems],
                          hint="fix the lines named above and run it again")
    return note


def edit(repo: str, note_id: str, new_text: str, before: str | None = None) -> tuple[str, str] | None:
    """Commit `new_text` as memory `note_id` (Memrepo-Action: edit); (sha, run), or None if unchanged.

    `before` is the text the person started from (read before the editor opened): the commit
    happens only if the file still holds it. `updated` becomes today unless the new text changed it.
    """
    memories.require_repo(repo)
    if before is None:
        before = memories.read_text(repo, note_id)
    if new_text.replace("\r\n", "\n") == before:
        return None
    note = validated(new_text, note_id)
    if note.get("updated") == _updated(before, note_id):
        note.meta["updated"] = notes.today()
        note.meta = {k: note.meta[k] for k in notes.ordered_keys(note.meta)}
    after = notes.serialize(note)
    validated(after, note_id)
    return _commit(repo, note_id, before, after, "edit", {})


def _updated(before: str, note_id: str) -> Any:
    """The `updated` of the text an edit started from; None when a hand edit left it unreadable
    (the edit that repairs it then dates it today)."""
    try:
        return notes.parse(before, _rel(note_id)).get("updated")
    except notes.ParseError:
        return None


def retire(repo: str, note_id: str, reason: str, by: dict[str, str] | None = None) -> tuple[str, str]:
    """Mark memory `note_id` retired with a person's `reason` (Memrepo-Action: retire); (sha, run).

    `by` replaces the trailer naming who asked (`By: user`): `memrepo mcp` names the agent."""
    reason = " ".join((reason or "").split())
    if not reason:
        raise MemrepoError("a retire needs a reason", hint='add --reason "why it no longer holds"')
    memories.require_repo(repo)
    before = memories.read_text(repo, note_id)
    after = retired_text(before, note_id, reason)
    return _commit(repo, note_id, before, after, "retire", {**(by or {"By": "user"}), "Reason": reason})


def retired_text(before: str, note_id: str, reason: str) -> str:
    """The text of memory `note_id` retired with `reason` (a team's or a project's memory is
    retired by proposing this text there: `memrepo.passes.share.forget`)."""
    try:
        note = notes.parse(before, _rel(note_id))
    except notes.ParseError as exc:
        raise NoteInvalid(f"{_rel(note_id)} cannot be read, so it was not retired",
                          [f"{_rel(note_id)}:{exc.line}: {exc}" + (f" — {exc.fix}" if exc.fix else "")],
                          hint=f"repair it with `memrepo edit {note_id}`, or take the hand edit back with `git checkout -- {_rel(note_id)}`") from None
    if note.get("status") == "retired" and note.get(RETIRED_BY_PERSON):
        raise MemrepoError(f"{note_id} is already retired: {note.get(RETIRED_BY_PERSON)}",
                           hint="`memrepo log --runs` lists the retire; `memrepo undo RUN` brings it back")
    meta = dict(note.meta)
    meta.pop("superseded_by", None)
    meta.update(status="retired", updated=notes.today())
    meta[RETIRED_BY_PERSON] = " ".join(reason.split())[: spec.MAX_DESCRIPTION]
    note = notes.Note({k: meta[k] for k in notes.ordered_keys(meta)}, note.body)
    after = notes.serialize(note)
    validated(after, note_id)
    return after

