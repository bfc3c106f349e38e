"""Import Hermes Agent's curated memory: MEMORY.md entries become memories, USER.md entries profile lines.

Hermes (NousResearch/hermes-agent) keeps `~/.hermes/memories/MEMORY.md` (the agent's notes,
bounded at 2,200 characters) and `USER.md` (what it knows about the user, 1,375), entries
separated by a line holding only `§`, no front matter. MEMORY.md entries become `fact`
memories (`source: import`, id `hermes-<words>-<hash of the text>`). USER.md entries go to
the always-on profile through its demotion rule, marked `inferred`: Hermes writes USER.md
itself, so memrepo cannot tell which entries the user dictated. An entry already in the
profile, or already demoted from it, is not added again.
"""

from __future__ import annotations

import os
import re

from memrepo.format import catalogue, foreign, notes
from memrepo.passes import profile
from memrepo.store import memories as store
from memrepo.importers import common

SEPARATOR = re.compile(r"\n[ \t]*§[ \t]*(?:\n|$)")


def entries(text: str) -> list[str]:
    """The `§`-separated entries of a Hermes memory file, blank ones dropped."""
    text = "\n" + text.lstrip("\ufeff").replace("\r\n", "\n")
    return [e.strip() for e in SEPARATOR.split(text) if e.strip()]


def first_sentence(text: str) -> tuple[str, str]:
    """(the first sentence or line, the rest) of an entry."""
    parts = re.split(r"(?<=[.!?])\s+|\n+", text.strip(), maxsplit=1)
    return parts[0].strip(), (parts[1].strip() if len(parts) > 1 else "")


def memories_dir(given: str) -> str:
    """`~/.hermes/memories` from either it or `~/.hermes`."""
    inner = os.path.join(given, "memories")
    return inner if os.path.isdir(inner) else given


def _read_entries(path: str, report: common.Report) -> list[str]:
    """The entries of one file (through the lenient reader: bounded, a stray front matter dropped)."""
    try:
        return entries(foreign.read(path).body)
    except (OSError, ValueError) as exc:
        report.skip(path, f"unreadable ({exc})")
        return []


def memory_notes(repo: str, path: str, report: common.Report) -> list[notes.Note]:
    found = _read_entries(path, report)
    out = []
    for n, text in enumerate(found, start=1):
        note_id = store.stable_id("hermes", text, text)
        if store.exists(repo, note_id):
            report.already += 1
            continue
        first, rest = first_sentence(text)
        note = common.build(f"{path} entry {n}", report, id=note_id, title=store.short(first, 120),
                            description=store.short(rest or "A note Hermes Agent kept in its MEMORY.md", 200),
                            class_="fact", source="import",
                            body=text + "\n\nImported from Hermes MEMORY.md.\n")
        if note is not None:
            out.append(note)
    return out


def user_lines(repo: str, path: str, report: common.Report) -> list[str]:
    """USER.md entries not yet in the profile nor demoted from it."""
    found = _read_entries(path, report)
    current = {profile.normalize(e.text).lower() for e in profile.read(repo)}
    out = []
    for n, text in enumerate(found, start=1):
        line = profile.normalize(text)
        if catalogue.find_secrets(line):
            report.skip(f"{path} entry {n}", "looks like it holds a secret; the profile is injected into every session")
        elif line.lower() in current or store.exists(repo, store.stable_id("profile", line, line)):
            report.already += 1
        else:
            out.append(line)
    return out


def run(repo: str, directory: str) -> common.Report:
    """Import a Hermes memories directory in one commit (memories, profile lines and their demotions)."""
    from memrepo.errors import MemrepoError

    store.require_repo(repo)
    mdir = memories_dir(directory)
    mem, user = os.path.join(mdir, "MEMORY.md"), os.path.join(mdir, "USER.md")
    if not os.path.isfile(mem) and not os.path.isfile(user):
        raise MemrepoError(f"no MEMORY.md or USER.md in {mdir}", hint="give Hermes's memories directory, e.g. ~/.hermes/memories")
    report = common.Report("hermes")
    new = memory_notes(repo, mem, report) if os.path.isfile(mem) else []
    lines = user_lines(repo, user, report) if os.path.isfile(user) else []
    extra: dict[str, str] = {}
    demoted: list[str] = []
    if lines:
        plan = profile.plan_adds(repo, [(line, "inferred") for line in lines])
        profile.validate_plan(plan)
        report.profile = lines
        extra = plan.texts()
        demoted = [n.id for _, n in plan.demoted]
    for name in sorted(os.listdir(mdir)):
        if name not in ("MEMORY.md", "USER.md") and os.path.isfile(os.path.join(mdir, name)):
            report.skip(os.path.join(mdir, name), "not a Hermes memory file (MEMORY.md or USER.md); not imported")
    return common.commit_run(repo, report, new, extra, demoted)
