"""Import memsearch journals: one memory (class `event`) per `###` turn section of each daily file.

memsearch (zilliztech/memsearch) writes `<project>/.memsearch/memory/YYYY-MM-DD.md`, no front
matter, one file per day: `## Session HH:MM` groups `### HH:MM` turns, each opening with
`<!-- session:<uuid> turn:<uuid> transcript:<path> -->` and then bullet lines summarising the
turn. `created` is the file's date plus the heading's time; the session id becomes `session:`.
PROJECT.md and USER.md beside the journals are summaries memsearch rewrites, not journals.
Ids are `memsearch-[<project>-]<date>-<hhmm>[-n]` (n counts repeats of one minute in a file),
so a second run finds what the first one took.
"""

from __future__ import annotations

import os
import re

from memrepo.format import foreign, notes
from memrepo.store import memories as store
from memrepo.importers import common

DAY_FILE = re.compile(r"^(\d{4}-\d{2}-\d{2})\.md$")
TURN = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}))?(?:\s.*)?$")
META = re.compile(r"\b(session|turn|transcript):(\S+)")
SUMMARIES = ("PROJECT.md", "USER.md")


def journal_dir(given: str) -> tuple[str, str | None]:
    """(the directory holding the daily files, the project name or None) for a project, .memsearch or memory dir."""
    given = os.path.abspath(given)
    for cand in (os.path.join(given, ".memsearch", "memory"), os.path.join(given, "memory"), given):
        if os.path.isdir(cand) and any(DAY_FILE.match(n) for n in os.listdir(cand)):
            parent = os.path.dirname(cand)
            project = os.path.basename(os.path.dirname(parent)) if os.path.basename(parent) == ".memsearch" else None
            return cand, project or None
    return given, None


def sections(text: str) -> list[tuple[int, str, list[str]]]:
    """(line number, heading text, lines) of every `###` section; a `##` heading ends one."""
    out: list[tuple[int, str, list[str]]] = []
    current: tuple[int, str, list[str]] | None = None
    for n, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        if line.startswith("### "):
            current = (n, line[4:].strip(), [])
            out.append(current)
        elif line.startswith(("## ", "# ")):
            current = None
        elif current is not None:
            current[2].append(line)
    return out


def turn_note(day: str, heading: str, lines: list[str], note_id: str, project: str | None,
              where: str, report: common.Report) -> notes.Note | None:
    m = TURN.match(heading)
    if not m:
        report.skip(where, f"heading `### {heading}` is not a turn time HH:MM")
        return None
    hh, mm, ss = int(m[1]), int(m[2]), m[3]
    if hh > 23 or mm > 59:
        report.skip(where, f"heading `### {heading}` is not a valid time")
        return None
    meta = {k: v.rstrip("->").strip() for line in lines if line.lstrip().startswith("<!--") for k, v in META.findall(line)}
    content = [line for line in lines if not line.lstrip().startswith("<!--")]
    bullets = [line.strip()[2:].strip() for line in content if line.strip().startswith(("- ", "* "))]
    text = [line.strip() for line in content if line.strip()]
    if not text:
        report.skip(where, "empty turn section")
        return None
    first = bullets[0] if bullets else text[0]
    rest = bullets[1:] if bullets else text[1:]
    summary = "; ".join(rest) if rest else f"A turn of a Claude Code session on {day} at {hh:02d}:{mm:02d}, from memsearch"
    tail = f"\n\nFrom the memsearch journal of {day}, turn {hh:02d}:{mm:02d}."
    if meta.get("transcript"):
        tail += f" Transcript: {meta['transcript']}"
    created = f"{day}T{hh:02d}:{mm:02d}" + (f":{ss}" if ss else "")
    return common.build(where, report, id=note_id, title=store.short(first, 120), description=store.short(summary, 200),
                        class_="event", source="import", created=created, updated=day, project=project,
                        session=meta.get("session"), body="\n".join(content).strip("\n") + tail + "\n")


def collect(repo: str, directory: str, project: str | None, report: common.Report) -> list[notes.Note]:
    prefix = "memsearch" + (f"-{store.import_slug(project)[:30].rstrip('-')}" if project else "")
    out = []
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if not name.endswith(".md") or not os.path.isfile(path):
            continue
        m = DAY_FILE.match(name)
        if not m:
            why = "a summary memsearch rewrites, not a journal" if name in SUMMARIES else "not a daily journal (YYYY-MM-DD.md)"
            report.skip(path, why)
            continue
        try:
            found = sections(foreign.read(path).body)
        except (OSError, ValueError) as exc:
            report.skip(path, f"unreadable ({exc})")
            continue
        seen: dict[str, int] = {}
        for n, heading, lines in found:
            t = TURN.match(heading)
            stem = f"{prefix}-{m[1]}-{int(t[1]):02d}{t[2]}" if t else f"{prefix}-{m[1]}-x"
            seen[stem] = seen.get(stem, 0) + 1
            note_id = stem if seen[stem] == 1 else f"{stem}-{seen[stem]}"
            if t and store.exists(repo, note_id):
                report.already += 1
                continue
            note = turn_note(m[1], heading, lines, note_id, project, f"{path}:{n}", report)
            if note is not None:
                out.append(note)
    return out


def run(repo: str, directory: str) -> common.Report:
    """Import a memsearch journal directory (a project, its .memsearch, or the memory dir) in one commit."""
    from memrepo.errors import MemrepoError

    store.require_repo(repo)
    if not os.path.isdir(directory):
        raise MemrepoError(f"{directory} is not a directory", hint="give the project directory, or its .memsearch/memory")
    report = common.Report("memsearch")
    found, project = journal_dir(directory)
    return common.commit_run(repo, report, collect(repo, found, project, report))
