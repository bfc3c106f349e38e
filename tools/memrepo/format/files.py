"""Reading memory files from disk safely (stdlib only: the index's scan uses it).

A memory repository arrives by `git pull` from people we don't control, and git stores
symbolic links: `memory/x.md -> ~/.ssh/id_ed25519` would put a key into the index and the
prompt. So memrepo reads only regular files it opens without following a link, and only
up to a bound (issue 15).
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from typing import Any

MAX_FILE_BYTES = 1024 * 1024  # sixteen times the body limit; a bigger file is not read at all


def read_bytes(path: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """A memory file's bytes; OSError for a link, anything but a regular file, or over `limit` bytes."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"over {limit:,} bytes, more than a memory holds", path)
    return data


def listing(memory_dir: str) -> tuple[list[str], list[str]]:
    """(memory file names, names that look like memories but are links or not regular files).

    Nothing is listed when `memory/` itself is a link: it may point anywhere on this machine."""
    if os.path.islink(memory_dir):
        return [], [os.path.basename(memory_dir.rstrip(os.sep)) + os.sep]
    try:
        entries = sorted(os.scandir(memory_dir), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return [], []
    found: list[str] = []
    odd: list[str] = []
    for entry in entries:
        if entry.name.endswith(".md") and not entry.name.startswith("."):
            (found if entry.is_file(follow_symlinks=False) else odd).append(entry.name)
    return found, odd


def memory_files(memory_dir: str) -> list[str]:
    """Names of the memory files in `memory_dir`, sorted; links and non-files are left out."""
    return listing(memory_dir)[0]


def read_state(path: str) -> dict[str, Any]:
    """A pass's JSON state file under index/ (a cache: a missing, corrupt or oversized one is {})."""
    try:
        data = json.loads(read_bytes(path).decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_state(path: str, state: dict[str, Any]) -> None:
    """Replace a state file whole (written beside it, then renamed: a reader sees old or new)."""
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(state, fh, indent=1, sort_keys=True)
    os.replace(tmp, path)


_SUPERSEDED_BY = re.compile(r"^superseded_by:\s*'?([a-z0-9-]+)'?\s*$", re.M)


def superseded_by(data: bytes) -> str | None:
    """The `superseded_by:` of a memory file's bytes, read from the lines before its closing fence
    without parsing YAML: pre-commit's quick look at the memories a commit does not change."""
    m = _SUPERSEDED_BY.search(data.split(b"\n---", 1)[0].decode("utf-8", "replace"))
    return m.group(1) if m else None


def body_start(lines: list[str]) -> int:
    """The index of the first line after a `---` front-matter block opening `lines`, or 0 when
    they open with none (an unclosed fence is a horizontal rule, not front matter)."""
    if lines and lines[0].strip() == "---":
        close = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if close is not None:
            return close + 1
    return 0
