"""What every importer shares: a report of what was taken and skipped, memory building and one commit per run.

An import is all or nothing: every generated memory is validated before any file is
written, the files are written, and one commit (`Memrepo-Action: import`, `Memrepo-Run`)
records them, so `memrepo undo RUN` reverts the whole import. If the commit fails, the files
are put back as they were.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from memrepo.vcs import gitcmd, gitops
from memrepo.format import notes, spec, validate
from memrepo.recall import paths
from memrepo.store import memories as store

ELLIPSIS = "…"


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


def short(text: str, limit: int) -> str:
    """One line of at most `limit` characters, cut at a word boundary with an ellipsis."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    if " " in cut[limit // 2:]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:.-") + ELLIPSIS


def stable_id(prefix: str, label: str, key: str) -> str:
    """A deterministic id: prefix, a slug of `label`, and a hash of `key` (the entry's origin).

    The same entry always maps to the same id, which is how a second import run knows what the
    first one took.
    """
    digest = hashlib.sha1(key.encode("utf-8")).hexdigest()[:6]
    room = spec.MAX_ID - len(prefix) - len(digest) - 2
    slug = store.slugify(label)[:room].rstrip("-") or "entry"
    return f"{prefix}-{slug}-{digest}"


def exists(repo: str, note_id: str) -> bool:
    return os.path.exists(paths.note_path(repo, note_id))


def build(where: str, report: Report, **fields: Any) -> notes.Note | None:
    """A canonical memory from fields, or None (reported against `where`) when it does not validate."""
    note = notes.new_note(**fields)
    rel = f"{paths.MEMORY_DIR}/{note.id}.md"
    problems, _ = validate.check_text(notes.serialize(note), rel)
    if problems:
        report.skip(where, "; ".join(dict.fromkeys(p.problem for p in problems)))
        return None
    return note


def commit_files(repo: str, texts: dict[str, str], subject: str, trailers: dict[str, Any], body: str = "") -> str:
    """Write every `{repo-relative path: text}` and commit them in one commit; on failure restore them.

    Nothing is left half-written: a file that existed gets its old text back, a new one is
    removed and unstaged.
    """
    before: dict[str, str | None] = {}
    for rel in texts:
        path = os.path.join(repo, rel)
        if os.path.exists(path):
            with open(path, encoding="utf-8", newline="") as fh:
                before[rel] = fh.read()
        else:
            before[rel] = None
    try:
        for rel, text in texts.items():
            _write(os.path.join(repo, rel), text)
        return gitops.commit(repo, sorted(texts), subject, trailers, body)
    except BaseException:
        for rel, old in before.items():
            path = os.path.join(repo, rel)
            if old is None:
                if os.path.exists(path):
                    os.remove(path)
            else:
                _write(path, old)
        gitcmd.run_git("reset", "-q", "--", *sorted(texts), cwd=repo)
        raise


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    os.replace(tmp, path)


def note_texts(new: list[notes.Note]) -> dict[str, str]:
    return {f"{paths.MEMORY_DIR}/{n.id}.md": notes.serialize(n) for n in new}


def commit_run(repo: str, report: Report, new: list[notes.Note], extra: dict[str, str] | None = None,
               demoted: list[str] | None = None) -> Report:
    """Commit a run's new memories (and any other files, e.g. profile.md) in one `Memrepo-Action: import` commit.

    Nothing new means no commit: a second run of the same import adds nothing.
    """
    from memrepo.vcs import runs

    texts: dict[str, str] = {}
    for note in new:
        rel = f"{paths.MEMORY_DIR}/{note.id}.md"
        if rel in texts:
            report.already += 1
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
                     + [f"demote: {i}" for i in report.demoted] + [f"skipped: {w}: {y}" for w, y in report.skipped])
    report.commit = commit_files(repo, texts, f"import: {' and '.join(parts)} from {report.tool}", trailers, body)
    return report
