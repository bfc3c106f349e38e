"""Private data stays private on disk: `index/` is 0700 and everything in it 0600.

`index/` holds the cache of every memory, the recall log (what was asked, in tokens), the
transcript index (past conversations, whole) and the model ledger. git creates the folder
with the user's umask (0755 after a clone), and SQLite creates its files 0644, so memrepo's
processes run with umask 077 (`restrict`) and every index writer tightens what it finds
(`tighten`, a handful of stats when nothing is wrong). Symbolic links are never followed.
"""

from __future__ import annotations

import contextlib
import os
import stat

UMASK = 0o077
DIR_MODE = 0o700
FILE_MODE = 0o600


def restrict() -> None:
    """From here on this process creates files 0600 and folders 0700 (entry points call it)."""
    os.umask(UMASK)


def _walk(top: str) -> list[tuple[str, os.stat_result]]:
    found = []
    with contextlib.suppress(OSError):
        found.append((top, os.stat(top, follow_symlinks=False)))
        with os.scandir(top) as entries:
            for entry in entries:
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    found.extend(_walk(entry.path))
                else:
                    found.append((entry.path, st))
    return found


def loose(top: str) -> list[str]:
    """Paths under `top` (itself included) that users other than the owner can read or enter."""
    return [path for path, st in _walk(top)
            if not stat.S_ISLNK(st.st_mode) and st.st_mode & 0o077]


def tighten(top: str) -> None:
    """Make `top` (created if missing) 0700, its folders 0700 and its files 0600; never raises."""
    with contextlib.suppress(OSError):
        os.makedirs(top, mode=DIR_MODE, exist_ok=True)
    for path, st in _walk(top):
        if stat.S_ISLNK(st.st_mode) or not st.st_mode & 0o077:
            continue
        want = DIR_MODE if stat.S_ISDIR(st.st_mode) else FILE_MODE
        with contextlib.suppress(OSError):
            os.chmod(path, stat.S_IMODE(st.st_mode) & want)
