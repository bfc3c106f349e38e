"""`memrepo export`: the project's rules and preferences where agents without hooks read them.

One marked block (`<!-- memrepo:begin -->` … `<!-- memrepo:end -->`) in AGENTS.md, CLAUDE.md or
GEMINI.md at the project's top level, or a file of memrepo's own, `.cursor/rules/memrepo.mdc`.
The block holds the active memories of class rule or preference that belong to the project or
to no project, one line each, and is cut to stay under what the target agent reads (`Target`):
a cut block says how many were left out. Text outside the block is never touched; a second
export with nothing new writes nothing; `remove` takes out exactly what the export put in, so
a file whose only change was the block gets its bytes back, and a file the export created is
deleted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from memrepo.errors import MemrepoError
from memrepo.format import notes
from memrepo.base import paths, projects
from memrepo.recall import fence
from memrepo.store import memories

BEGIN = "<!-- memrepo:begin -->"
END = "<!-- memrepo:end -->"
CLASSES = ("rule", "preference")
MIN_ROOM = 1024  # bytes a block needs to say anything under a whole-file bound


@dataclass(frozen=True)
class Target:
    """Where one agent reads project instructions, and the bound memrepo keeps the block under.

    `max_bytes` counts the whole file (the agent reads the file, not the block); `max_lines` and
    `max_chars` count the block alone.
    """

    name: str
    path: str  # relative to the project's top level
    reader: str
    why: str  # the documented limit, for the report and the cut line
    max_lines: int | None = None
    max_chars: int | None = None
    max_bytes: int | None = None
    owned: bool = False  # the whole file is memrepo's (created and deleted by it)


TARGETS = {
    # Codex stops adding AGENTS.md files once their combined size reaches project_doc_max_bytes (32 KiB).
    "agents-md": Target("agents-md", "AGENTS.md", "Codex and other AGENTS.md readers",
                        "Codex reads 32 KiB of AGENTS.md", max_bytes=32 * 1024),
    # Claude Code loads CLAUDE.md whole (up to 4 MiB) but advises under 200 lines; 25,000
    # characters is its MEMORY.md cliff, kept here too so nothing depends on which file it reads.
    "claude-md": Target("claude-md", "CLAUDE.md", "Claude Code",
                        "Claude Code advises CLAUDE.md under 200 lines, and reads 25,000 characters of MEMORY.md",
                        max_lines=200, max_chars=25_000),
    # Gemini CLI documents no limit for GEMINI.md: the same bound as CLAUDE.md.
    "gemini-md": Target("gemini-md", "GEMINI.md", "Gemini CLI",
                        "Gemini CLI documents no limit: kept to Claude Code's 200 lines and 25,000 characters",
                        max_lines=200, max_chars=25_000),
    # Cursor's rules documentation: keep a rule under 500 lines.
    "cursor-rules": Target("cursor-rules", os.path.join(".cursor", "rules", "memrepo.mdc"), "Cursor",
                           "Cursor advises rules under 500 lines", max_lines=500, owned=True),
}

CURSOR_HEAD = ("---\ndescription: The user's rules and preferences for this project, from memrepo\n"
               "alwaysApply: true\n---\n")


@dataclass
class Report:
    """What an export or a removal did: the file, whether it changed, what the block holds and left out."""

    path: str
    action: str  # written, unchanged, removed, absent
    written: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    lines: int = 0
    chars: int = 0
    file_bytes: int = 0
    bound: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def target(name: str) -> Target:
    if name not in TARGETS:
        raise MemrepoError(f"no export target {name!r}", hint=f"use one of: {', '.join(TARGETS)}")
    return TARGETS[name]


def project_root(directory: str) -> str:
    """The folder the file goes in: the git top level of `directory`, else `directory` itself."""
    if not os.path.isdir(directory):
        raise MemrepoError(f"{directory} is not a folder", hint="pass the project's folder with --project DIR")
    return projects.top_level(directory) or os.path.abspath(directory)


def chosen(repo: str, directory: str) -> list[notes.Note]:
    """The active rules and preferences of the project `directory` is in, and the global ones:
    the project's first, rules before preferences, newest update first within each."""
    scope = projects.identify(directory)
    picked = []
    for row in memories.list_memories(repo, status="active"):
        if row["class"] not in CLASSES or (row["project"] and not (scope and scope.owns(row["project"]))):
            continue
        picked.append((not row["project"], CLASSES.index(row["class"]), notes.read(paths.note_path(repo, row["id"]))))
    picked.sort(key=lambda p: (p[0], p[1]))  # stable: list_memories already put the newest first
    return [note for _, _, note in picked]


def _inert(text: object) -> str:
    """Memory text as one line that can neither add a line nor open or close an HTML comment (the markers)."""
    return fence.inert(text).replace("<!--", "‹!--").replace("-->", "--›")


def _line(note: notes.Note) -> str:
    return f"- ({_inert(note.get('class'))}) {_inert(note.get('title'))}: {_inert(note.get('description'))} (id: {note.id})"


def block(picked: list[notes.Note], t: Target, room_bytes: int | None, head_lines: int = 0) -> tuple[str, list[str], list[str]]:
    """The block's text (markers included, no final newline), the ids written and the ids left out;
    `head_lines` of the file come before it and count against the line bound."""
    head = [BEGIN, "## The user's rules and preferences (memrepo)", "",
            f"Written by `memrepo export {t.name}` from the user's memory repository; edits inside these markers "
            "are replaced by the next export. The whole note: `memrepo show <id>`.", ""]
    lines, written = list(head), list[str]()
    spare = f"_{len(picked)} more not written here: {t.why}; `memrepo list --class rule` lists every one._"
    for n, note in enumerate(picked):
        candidate = lines + [_line(note)]
        rest = [] if n == len(picked) - 1 else [spare]  # room for the cut line if more follow
        if not _fits([""] * head_lines + candidate + rest + [END], t, room_bytes):
            break
        lines, written = candidate, written + [note.id]
    left = [note.id for note in picked[len(written):]]
    if left:
        lines.append(f"_{len(left)} more not written here: {t.why}; `memrepo list --class rule` lists every one._")
    if not picked:
        lines.append("_No rule or preference of this project yet._")
    return "\n".join(lines + [END]), written, left


def _fits(lines: list[str], t: Target, room_bytes: int | None) -> bool:
    text = "\n".join(lines)
    if t.max_lines is not None and len(lines) > t.max_lines:
        return False
    if t.max_chars is not None and len(text.encode("utf-16-le")) // 2 > t.max_chars:
        return False
    return room_bytes is None or len(text.encode("utf-8")) + 2 <= room_bytes


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return fh.read().decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise MemrepoError(f"{path} is not UTF-8 text; memrepo leaves it alone", hint="convert it to UTF-8 first") from None


def find(text: str, path: str) -> tuple[int, int] | None:
    """The span of the block in `text` (from its begin marker to the end of its end marker), or None."""
    starts = [i for i in _marker_lines(text, BEGIN)]
    ends = [i for i in _marker_lines(text, END)]
    if not starts and not ends:
        return None
    if len(starts) != 1 or len(ends) != 1 or ends[0] < starts[0]:
        raise MemrepoError(f"{path} holds {len(starts)} `{BEGIN}` and {len(ends)} `{END}` lines, not one block",
                           hint="put the markers right by hand (one begin, then one end), or delete both, and run it again")
    return starts[0], ends[0] + len(END)


def _marker_lines(text: str, marker: str) -> list[int]:
    out, at = [], text.find(marker)
    while at != -1:
        before_ok = at == 0 or text[at - 1] == "\n"
        after = text[at + len(marker):at + len(marker) + 2]
        if before_ok and (after == "" or after.startswith("\n") or after == "\r\n"):
            out.append(at)
        at = text.find(marker, at + 1)
    return out


def _write(path: str, text: str) -> None:
    """Write `text`, keeping an existing file's mode."""
    mode = os.stat(path).st_mode & 0o7777 if os.path.exists(path) else None
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.memrepo-tmp"
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
    if mode is not None:
        os.chmod(tmp, mode)
    os.replace(tmp, path)


def export(repo: str, name: str, directory: str) -> Report:
    """Write (or refresh) the block of target `name` in the project `directory` is in."""
    t = target(name)
    memories.require_repo(repo)
    root = project_root(directory)
    path = os.path.join(root, t.path)
    old = _read(path)
    picked = chosen(repo, root)
    if t.owned:
        if old is not None and find(old, path) is None:
            raise MemrepoError(f"{path} exists and is not memrepo's", hint="rename it; memrepo writes only its own file there")
        text, written, left = block(picked, t, None, head_lines=CURSOR_HEAD.count("\n"))
        new = CURSOR_HEAD + text + "\n"
    else:
        span = find(old, path) if old else None
        outside = (old or "") if span is None else old[:span[0]] + old[span[1]:]  # type: ignore[index]
        room = None if t.max_bytes is None else t.max_bytes - len(outside.encode("utf-8"))
        if room is not None and room < MIN_ROOM:
            raise MemrepoError(f"{path} is already {len(outside.encode('utf-8'))} bytes: {t.why}, so a block there would not be read",
                               hint=f"shorten {t.path}, or export to another target")
        text, written, left = block(picked, t, room)
        new = _placed(old, span, text)
    report = Report(path=path, action="unchanged" if new == old else "written", written=written, left_out=left,
                    lines=text.count("\n") + 1, chars=len(text), file_bytes=len(new.encode("utf-8")), bound=t.why)
    if new != old:
        _write(path, new)
    return report


def _placed(old: str | None, span: tuple[int, int] | None, text: str) -> str:
    """`old` with the block replaced in place, or appended so that `remove` can take exactly it out:
    after a final newline a blank line, else one newline; in an empty or new file, the block alone."""
    if span is not None:
        return old[:span[0]] + text + old[span[1]:]  # type: ignore[index]
    if not old:
        return text + "\n"
    return old + "\n" + text + "\n"


def remove(name: str, directory: str) -> Report:
    """Take the block of target `name` out of the project `directory` is in, exactly as export put it in."""
    t = target(name)
    root = project_root(directory)
    path = os.path.join(root, t.path)
    old = _read(path)
    span = find(old, path) if old else None
    if old is None or span is None:
        return Report(path=path, action="absent")
    start, end = span
    if start > 0 and old[start - 1] == "\n":
        start -= 1
    elif start == 0 and old[end:end + 1] == "\n":
        end += 1
    if start > 0 and old[end:end + 1] == "\n":
        end += 1
    rest = old[:start] + old[end:]
    if t.owned or rest == "":
        os.remove(path)
        _prune(os.path.dirname(path), root)
    else:
        _write(path, rest)
    return Report(path=path, action="removed")


def _prune(folder: str, root: str) -> None:
    """Remove the folders of an owned file that are now empty, up to (not including) the project root."""
    while os.path.abspath(folder) != os.path.abspath(root) and os.path.isdir(folder) and not os.listdir(folder):
        os.rmdir(folder)
        folder = os.path.dirname(folder)
