"""Import Claude Code's auto memory: topic files plus the MEMORY.md index lines that point at them.

A directory is `~/.claude/projects/<project>/memory/`: one memory per topic file, front matter
`name`, `description`, `metadata: {type: user|feedback|project|reference}` (older builds put
`type` at the top level; newer ones stamp `modified`), and `MEMORY.md`, one line per memory:
`- [Title](file.md) — hook`. Types map to classes: user → preference, feedback → rule (a
correction the user gave), project → project, reference → reference. A topic file MEMORY.md
never lists is imported too: it is exactly what the 200-line cliff hides.

The project a memory belongs to is read from the transcripts beside `memory/` (their `cwd`),
because the directory name (`-home-ann-src-my-app`) cannot be turned back into a path by
itself; when no transcript is left, the existing folder it encodes on this machine. User
memories stay global. Ids are `cc-<name>-<hash of project dir and file>`, so a second run
finds what the first one took.
"""

from __future__ import annotations

import datetime as _dt
import glob
import json
import os
import re
from typing import Any

from memrepo.progress import Progress, silent
from memrepo.format import foreign, notes
from memrepo.store import memories as store
from memrepo.importers import common

CLASS_OF = {"user": "preference", "feedback": "rule", "project": "project", "reference": "reference"}
INDEX_LINE = re.compile(r"^\s*[-*]\s+\[(?P<title>[^\]]+)\]\((?P<file>[^)\s]+)\)\s*(?:[—–:-]+\s*(?P<hook>.*))?$")


def claude_home() -> str:
    """Claude Code's configuration directory: `CLAUDE_CONFIG_DIR`, else ~/.claude."""
    return os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")


def default_dirs() -> list[str]:
    """Every auto-memory directory of this machine."""
    return sorted(d for d in glob.glob(os.path.join(claude_home(), "projects", "*", "memory")) if os.path.isdir(d))


def project_of(memory_dir: str) -> str | None:
    """The project's name from the `cwd` its transcripts record, else from the folder its directory
    name stands for on this machine, or None.

    Claude Code deletes transcripts after 30 days (`cleanupPeriodDays`): without the fallback every
    project memory of an older project came in global, recalled in every other project (h33's walk).
    """
    return _project_from_transcripts(memory_dir) or project_from_name(
        os.path.basename(os.path.dirname(os.path.abspath(memory_dir))))


def _encoded(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", name)


def project_from_name(dirname: str, root: str = os.sep) -> str | None:
    """The last folder of the existing path under `root` whose Claude Code encoding (every character
    but a letter or digit made `-`) is `dirname`, or None; at each level the longest name that fits."""
    cur, rest = root, dirname
    for _ in range(64):  # no real path is deeper; bounds a hostile name
        if not rest:
            return os.path.basename(cur.rstrip(os.sep)) or None
        try:
            names = [n for n in os.listdir(cur) if os.path.isdir(os.path.join(cur, n))]
        except OSError:
            return None
        fits = [n for n in names if rest == "-" + _encoded(n) or rest.startswith("-" + _encoded(n) + "-")]
        if not fits:
            return None
        best = max(fits, key=lambda n: (len(n), n))
        cur, rest = os.path.join(cur, best), rest[len(best) + 1:]
    return None


def _project_from_transcripts(memory_dir: str) -> str | None:
    for path in sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(memory_dir)), "*.jsonl"))):
        try:
            with open(path, encoding="utf-8") as fh:
                for _, raw in zip(range(50), fh):
                    cwd = json.loads(raw).get("cwd") if raw.strip().startswith("{") else None
                    if isinstance(cwd, str) and cwd:
                        return os.path.basename(cwd.rstrip("/")) or None
        except (OSError, ValueError, AttributeError):
            continue
    return None


def read_index(memory_dir: str, report: common.Report) -> dict[str, tuple[str, str]]:
    """{file name: (title, hook)} from MEMORY.md; lines that are not index entries are reported."""
    path = os.path.join(memory_dir, "MEMORY.md")
    if not os.path.isfile(path):
        return {}
    out: dict[str, tuple[str, str]] = {}
    with open(path, encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh, start=1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            m = INDEX_LINE.match(line)
            where = f"{path}:{n}"
            if not m:
                report.skip(where, "not an index line `- [Title](file.md) — hook`")
            elif not os.path.isfile(os.path.join(memory_dir, m["file"])):
                report.skip(where, f"points at {m['file']}, which does not exist")
            else:
                out[os.path.normpath(m["file"])] = (m["title"].strip(), (m["hook"] or "").strip())
    return out


def _date(value: Any, path: str) -> str:
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()[:10]
    if isinstance(value, str) and re.match(r"^\d{4}-\d{2}-\d{2}", value):
        return value[:10]
    return _dt.date.fromtimestamp(os.path.getmtime(path)).isoformat()


def topic_note(path: str, key: str, listed: tuple[str, str] | None, project: str | None,
               report: common.Report) -> notes.Note | None:
    """The memory of one topic file, or None (reported) when it cannot be one."""
    try:
        found = foreign.read(path)
    except (OSError, ValueError) as exc:
        report.skip(path, f"unreadable ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})")
        return None
    if found.problem:
        report.skip(path, f"unreadable front matter ({found.problem})")
        return None
    meta, body = found.meta, found.body
    _nested = meta.get("metadata")
    nested: dict[str, Any] = _nested if isinstance(_nested, dict) else {}
    kind = nested.get("type", meta.get("type"))
    if kind not in CLASS_OF:
        report.skip(path, f"unknown memory type {kind!r} (want one of {', '.join(CLASS_OF)})")
        return None
    name = str(meta.get("name") or os.path.splitext(os.path.basename(path))[0])
    if not body.strip():
        report.skip(path, "empty body")
        return None
    first_line = next(line for line in body.splitlines() if line.strip())
    description = str(meta.get("description") or (listed[1] if listed else "") or first_line)
    # Unlisted (the cliff hid it, or it was never indexed): its description is the best title.
    title, description = (listed[0], description) if listed else (description, first_line)
    updated = _date(meta.get("modified"), path)
    return common.build(path, report, id=store.stable_id("cc", name, key), title=store.short(title, 120),
                        description=store.short(description, 200), class_=CLASS_OF[kind], source="import",
                        created=updated, updated=updated, project=None if kind == "user" else project,
                        body=body.strip("\n") + "\n")


def collect(repo: str, memory_dir: str, report: common.Report) -> list[notes.Note]:
    """New memories of one auto-memory directory (already imported ones are counted, not repeated)."""
    memory_dir = os.path.abspath(memory_dir)
    listed = read_index(memory_dir, report)
    project = project_of(memory_dir)
    out = []
    for name in sorted(os.listdir(memory_dir)):
        path = os.path.join(memory_dir, name)
        if name == "MEMORY.md" or not name.endswith(".md") or not os.path.isfile(path):
            continue
        key = f"{os.path.basename(os.path.dirname(memory_dir))}/{name}"
        note = topic_note(path, key, listed.get(name), project, report)
        if note is None:
            continue
        if store.exists(repo, note.id):
            report.already += 1
            continue
        out.append(note)
    return out


def run(repo: str, dirs: list[str] | None = None, progress: Progress = silent) -> common.Report:
    """Import the given auto-memory directories (default: all of this machine's) in one commit."""
    from memrepo.errors import MemrepoError

    store.require_repo(repo)
    report = common.Report("claude-code")
    targets = dirs or default_dirs()
    if not targets:
        raise MemrepoError("no Claude Code auto-memory directory found",
                           hint="give one: `memrepo import claude-code ~/.claude/projects/<project>/memory`")
    new: list[notes.Note] = []
    for done, d in enumerate(targets):
        progress("import: auto-memory folders read", done, len(targets))
        if os.path.isfile(os.path.join(d, "memory", "MEMORY.md")) or os.path.isdir(os.path.join(d, "memory")):
            d = os.path.join(d, "memory")  # the project directory was given
        if not os.path.isdir(d):
            raise MemrepoError(f"{d} is not a directory", hint="give ~/.claude/projects/<project>/memory")
        new += collect(repo, d, report)
    progress("import: auto-memory folders read", len(targets), len(targets))
    return common.commit_run(repo, report, new)
