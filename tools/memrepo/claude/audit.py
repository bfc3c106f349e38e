"""`memrepo audit claude`: what of MEMORY.md and CLAUDE.md actually reaches a Claude Code session.

Claude Code loads an auto-memory index (`MEMORY.md`) the way CLAUDE-CODE.md §3 records it:
YAML front matter and block HTML comments are stripped, then the first 200 lines are taken,
then the text is cut at the last newline within 25,000 UTF-16 code units (JavaScript string
length: an accented letter is one unit, an emoji two, whatever their UTF-8 bytes). Everything
after that never reaches a session, and it is the appended — newest — lines that go. A
CLAUDE.md loads whole up to 4 MiB and not at all above; past 200 lines the docs advise
trimming, which is reported but is no cut.
"""

from __future__ import annotations

import glob
import os
from typing import Any

from memrepo.format import files
from memrepo.importers.claude_code import claude_home

LINE_LIMIT = 200
UNIT_LIMIT = 25_000
CLAUDE_MD_MAX_BYTES = 4 * 1024 * 1024
CLAUDE_MD_NAMES = ("CLAUDE.md", "CLAUDE.local.md")


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, as JavaScript counts it."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class Result:
    """One file's audit: what is present, what loads, and the entries that never do (newest first)."""

    def __init__(self, path: str, kind: str) -> None:
        self.path, self.kind = path, kind
        self.lines_present = self.lines_loaded = 0
        self.units_present = self.units_loaded = 0
        self.cut: list[tuple[int, str]] = []
        self.notes: list[str] = []

    @property
    def is_cut(self) -> bool:
        return bool(self.cut)

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "lines_present": self.lines_present,
                "lines_loaded": self.lines_loaded, "units_present": self.units_present,
                "units_loaded": self.units_loaded, "cut": [{"line": n, "text": t} for n, t in self.cut],
                "notes": self.notes}


def loaded_lines(text: str) -> list[tuple[int, str]]:
    """(line number in the file, text) of each line Claude Code keeps: no front matter, no block HTML comments.

    A block comment is one whose line starts with `<!--` (outside fenced code); it runs to the
    line holding `-->`. Comments inside a line of text stay, as they do in Claude Code.
    """
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    start = files.body_start(lines)
    kept: list[tuple[int, str]] = []
    fence: str | None = None
    in_comment = False
    for i in range(start, len(lines)):
        line = lines[i]
        bare = line.lstrip()
        if in_comment:
            in_comment = "-->" not in line
            continue
        if fence is None and bare.startswith("<!--"):
            in_comment = "-->" not in bare[4:]
            continue
        if bare.startswith(("```", "~~~")):
            mark = bare[:3]
            fence = mark if fence is None else (None if mark == fence else fence)
        kept.append((i + 1, line))
    return kept


def audit_index(path: str, text: str) -> Result:
    """Measure a MEMORY.md the way Claude Code loads it."""
    res = Result(path, "memory-index")
    kept = loaded_lines(text)
    res.lines_present = len(kept)
    res.units_present = utf16_len("\n".join(line for _, line in kept))
    head = kept[:LINE_LIMIT]
    loaded = len(head)
    if utf16_len("\n".join(line for _, line in head)) > UNIT_LIMIT:
        loaded, offset = 0, 0
        for _, line in head:
            end = offset + utf16_len(line)  # where this line's newline sits
            if end >= UNIT_LIMIT:
                break
            loaded, offset = loaded + 1, end + 1
        if loaded == 0:
            res.notes.append(f"line {head[0][0]} alone is longer than {UNIT_LIMIT:,} UTF-16 units: no newline to cut at")
    res.lines_loaded = loaded
    res.units_loaded = utf16_len("\n".join(line for _, line in kept[:loaded]))
    res.cut = [(n, line) for n, line in reversed(kept[loaded:]) if line.strip()]
    return res


def audit_claude_md(path: str, data: bytes) -> Result:
    """A CLAUDE.md loads whole (front matter and block comments stripped) up to 4 MiB, and not at all above."""
    res = Result(path, "claude-md")
    kept = loaded_lines(data.decode("utf-8", "replace"))
    res.lines_present = len(kept)
    res.units_present = utf16_len("\n".join(line for _, line in kept))
    if len(data) > CLAUDE_MD_MAX_BYTES:
        res.notes.append(f"{len(data):,} bytes is over the 4 MiB Claude Code loads: the whole file is skipped")
        res.cut = [(n, line) for n, line in reversed(kept) if line.strip()]
        return res
    res.lines_loaded, res.units_loaded = res.lines_present, res.units_present
    if res.lines_present > LINE_LIMIT:
        res.notes.append(f"{res.lines_present} lines: all load, but the docs advise under {LINE_LIMIT}")
    return res


def audit_file(path: str) -> Result:
    """Audit one file; the kind follows its name (CLAUDE.md / CLAUDE.local.md, else an auto-memory index)."""
    with open(path, "rb") as fh:
        data = fh.read()
    if os.path.basename(path) in CLAUDE_MD_NAMES:
        return audit_claude_md(path, data)
    return audit_index(path, data.decode("utf-8", "replace"))


def discover(cwd: str | None = None) -> list[str]:
    """Every auto-memory index under ~/.claude/projects, ~/.claude/CLAUDE.md, and CLAUDE.md files from cwd up."""
    home = claude_home()
    found = sorted(glob.glob(os.path.join(home, "projects", "*", "memory", "MEMORY.md")))
    found.append(os.path.join(home, "CLAUDE.md"))
    cur = os.path.abspath(cwd or os.getcwd())
    chain = []
    while True:
        chain.append(cur)
        parent = os.path.dirname(cur)
        if parent == cur:
            break
        cur = parent
    for d in reversed(chain):
        found += [os.path.join(d, n) for n in CLAUDE_MD_NAMES] + [os.path.join(d, ".claude", "CLAUDE.md")]
    return [p for p in dict.fromkeys(found) if os.path.isfile(p)]


def expand(targets: list[str]) -> list[str]:
    """Files to audit from given paths: files as they are, directories searched for the usual names."""
    from memrepo.errors import MemrepoError

    out = []
    for t in targets:
        if os.path.isfile(t):
            out.append(t)
        elif os.path.isdir(t):
            names = ["MEMORY.md", os.path.join("memory", "MEMORY.md"), *CLAUDE_MD_NAMES]
            out += [os.path.join(t, n) for n in names if os.path.isfile(os.path.join(t, n))]
        else:
            raise MemrepoError(f"{t}: no such file or directory", hint="give a MEMORY.md or CLAUDE.md, or a directory holding one")
    return out


def run(targets: list[str] | None = None, cwd: str | None = None) -> list[Result]:
    """Audit the given paths, or everything `discover` finds."""
    files = expand(targets) if targets else discover(cwd)
    return [audit_file(p) for p in files]
