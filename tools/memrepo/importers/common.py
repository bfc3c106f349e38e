"""What every importer shares: a report of what was taken and skipped, memory building and one commit per run.

An import is all or nothing: every generated memory is validated before any file is
written, the files are written, and one commit (`Memrepo-Action: import`, `Memrepo-Run`)
records them (`vcs.commit.commit_files`), so `memrepo undo RUN` reverts the whole import. If
the commit fails, the files are put back as they were.
"""

from __future__ import annotations

import os
from typing import Any

from memrepo.format import catalogue, notes, validate
from memrepo.base import paths


class Report:
    """The outcome of one import: memories added, entries skipped (with why) and already imported."""

    def __init__(self, tool: str) -> None:
        self.tool = tool
        self.added: list[str] = []
        self.profile: list[str] = []
        self.demoted: list[str] = []
        self.skipped: list[tuple[str, str]] = []
        self.already = 0
        self.run: str | None = None
        self.commit: str | None = None

    def skip(self, where: str, why: str) -> None:
        self.skipped.append((where, why))

    def as_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "added": self.added, "profile": self.profile, "demoted": self.demoted,
                "skipped": [{"entry": w, "why": y} for w, y in self.skipped], "already_imported": self.already,
                "run": self.run, "commit": self.commit}




def build(where: str, report: Report, **fields: Any) -> notes.Note | None:
    """A canonical memory from fields, or None (reported against `where`) when it does not validate."""
    note = notes.new_note(**fields)
    rel = f"{paths.MEMORY_DIR}/{note.id}.md"
    problems, _ = validate.check_text(notes.serialize(note), rel, catalogue.find_secrets)
    if problems:
        report.skip(where, "; ".join(dict.fromkeys(p.problem for p in problems)))
        return None
    return note


def commit_run(repo: str, report: Report, new: list[notes.Note], extra: dict[str, str] | None = None,
               demoted: list[str] | None = None) -> Report:
    """Commit a run's new memories (and any other files, e.g. profile.md) in one `Memrepo-Action: import` commit.

    Nothing new means no commit: a second run of the same import adds nothing.
    """
    from memrepo.vcs import commit, runs

    from memrepo.store import memories as store

    from memrepo.store import lifecycle

    texts: dict[str, str] = {}
    removed = store.removed_ids(repo) if new else set()
    forgotten = lifecycle.forgotten(repo) if new else {}
    said = _active_texts(repo) if new else {}
    for note in new:
        rel = f"{paths.MEMORY_DIR}/{note.id}.md"
        if rel in texts:
            report.already += 1
            continue
        if note.id in removed:
            report.skip(note.id, "removed from the store before (git log shows the deletion); not imported again "
                                 "— to keep it, restore the file with git")
            continue
        like = lifecycle.forgotten_like(forgotten, note)
        if like:
            report.skip(note.id, f"says what {like[0]} said, which a person retired ({like[1]}); not imported "
                                 f"— to keep it, `memrepo log --runs` lists the retire and `memrepo undo RUN` brings it back")
            continue
        twin = said.setdefault(_text_key(note), note.id)
        if twin != note.id:
            # The same user memory sits in every project's auto memory (h33's walk): one copy, not one per project.
            report.skip(note.id, f"says word for word what {twin} says (same class and scope); not imported twice")
            continue
        texts[rel] = notes.serialize(note)
        report.added.append(note.id)
    texts.update(extra or {})
    report.demoted = list(demoted or [])
    if not texts:
        return report
    report.run = runs.fresh_run_id(repo, "import")
    parts = [f"{len(report.added)} memor{'y' if len(report.added) == 1 else 'ies'}"]
    if report.profile:
        parts.append(f"{len(report.profile)} profile line{'s' * (len(report.profile) != 1)}")
    trailers: dict[str, Any] = {"Action": "import", "Run": report.run, "Source": report.tool}
    if report.demoted:
        trailers["Demoted"] = " ".join(report.demoted)
    body = "\n".join([f"add: {i}" for i in report.added] + [f"profile: {t}" for t in report.profile]
                     + [f"demote: {i}" for i in report.demoted]
                     + [f"skipped: {_shared(repo, w)}: {y}" for w, y in report.skipped])
    report.commit = commit.commit_files(repo, texts, f"import: {' and '.join(parts)} from {report.tool}", trailers, body)
    return report


def _said(*texts: object) -> tuple[str, ...]:
    return tuple(" ".join(str(t or "").split()) for t in texts)


def _text_key(note: notes.Note) -> tuple[Any, ...]:
    """What a memory says: its class, scope, title, description and body, whitespace aside (a body
    alone is no key: two memories without one say different things in their titles)."""
    return (note.get("class"), note.get("project"), *_said(note.get("title"), note.get("description"), note.body))


def _active_texts(repo: str) -> dict[tuple[Any, ...], str]:
    """{`_text_key`: id} of the store's active memories, from the cache."""
    import contextlib
    import sqlite3

    from memrepo.store import memories as store

    try:
        with contextlib.closing(store.fresh_db(repo)) as db:
            found = db.execute("SELECT m.id, m.class, m.project, m.title, m.description, f.body FROM memories m"
                               " JOIN fts f ON f.rowid = m.rowid WHERE m.status = 'active' ORDER BY m.id").fetchall()
    except sqlite3.Error:
        return {}
    out: dict[tuple[Any, ...], str] = {}
    for note_id, cls, project, title, description, body in found:
        out.setdefault((cls, project, *_said(title, description, body)), note_id)
    return out


def _shared(repo: str, where: str) -> str:
    """A skipped entry's place as the shared history may name it: never this machine's layout."""
    if not os.path.isabs(where):
        return where
    from memrepo.store import config

    return config.shareable_path(where, config.project_roots(config.load(repo))) or os.path.basename(where)
