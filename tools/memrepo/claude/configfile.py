"""A client's config file as `memrepo install` writes it and `memrepo uninstall` gives it back (issue 39).

Install records what it found, in `<file>.memrepo-uninstall` beside the file (mode 0600: it may
hold a copy of the user's settings): the bytes and mode of the file before memrepo's first write
(or that there was none, and which directories were made for it), and a hash of what memrepo
wrote last. Uninstall gives back exactly that when the file is still what memrepo wrote; when
something else changed it since, it removes only memrepo's entries (the caller's `strip`) and
keeps everything else, the file's mode included. Writes are atomic and keep the file's mode;
a settings file that is a link (dotfiles) is written through it; no `.bak` is left behind.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from typing import Any, Callable

from memrepo.errors import MemrepoError

RECORD = ".memrepo-uninstall"


def read_text(path: str) -> str | None:
    """The file's text, or None when there is no file."""
    data = _bytes(path)
    return None if data is None else _decode(path, data)


def _decode(path: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MemrepoError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start}); memrepo will not rewrite it, "
                           "nothing was changed", hint="save the file as UTF-8, then run the command again") from None


def record_path(path: str) -> str:
    """Where install keeps what uninstall gives back for the file at `path`."""
    return os.path.realpath(path) + RECORD


def write(path: str, text: str, clean: bool = True) -> None:
    """Install's write of `text` to `path`. The first one records what to give back; `clean` is
    False when the file already held memrepo's entries (then uninstall can only strip them)."""
    path = os.path.realpath(path)
    record = _load(path)
    current = _bytes(path)
    if not (record and current is not None and record.get("after") == _sha(current)):
        record = _fresh(path, current, clean)
    data = text.encode("utf-8")
    made = _makedirs(os.path.dirname(path))
    if made and current is None:
        record["dirs"] = made
    _replace(path, data, None if current is None else _mode(path))
    _save(path, {**record, "after": _sha(data)})


def give_back(path: str, strip: Callable[[str], str]) -> bool:
    """Uninstall: the file as it was before install when nothing else changed it since, else
    `strip(text)` (memrepo's entries removed); True when the file changed."""
    path = os.path.realpath(path)
    record = _load(path) or {}
    current = _bytes(path)
    if current is None:
        _drop_record(path)
        return False
    made = "before" in record and record["before"] is None
    after: bytes | None
    if "before" in record and record.get("after") == _sha(current):
        after, mode = (None if made else base64.b64decode(record["before"])), int(record.get("mode", 0))
    else:
        text = _decode(path, current)
        stripped = strip(text)
        if stripped == text:
            _drop_record(path)
            return False
        # A file install made, with nothing of the user's left in it, goes.
        after, mode = (None if made and stripped.strip() in ("", "{}") else stripped.encode("utf-8")), _mode(path)
    if after is None:
        os.remove(path)
    else:
        _replace(path, after, mode)
    _drop_record(path)
    if after is None:
        _remove_dirs(record.get("dirs", []))
    return True


def _fresh(path: str, current: bytes | None, clean: bool) -> dict[str, Any]:
    if not clean:
        return {}  # no "before": uninstall strips memrepo's entries and keeps the rest
    if current is None:
        return {"before": None}
    return {"before": base64.b64encode(current).decode("ascii"), "mode": _mode(path)}


def _bytes(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _mode(path: str) -> int:
    return os.stat(path).st_mode & 0o7777


def _makedirs(folder: str) -> list[str]:
    """Make `folder` and its missing parents; returns the ones made, deepest first."""
    made = []
    probe = folder
    while probe and not os.path.isdir(probe):
        made.append(probe)
        probe = os.path.dirname(probe)
    os.makedirs(folder, exist_ok=True)
    return made


def _remove_dirs(dirs: list[str]) -> None:
    for folder in dirs:
        try:
            os.rmdir(folder)
        except OSError:  # not empty: something else lives there now
            return


def _replace(path: str, data: bytes, mode: int | None) -> None:
    """Write `data` beside `path` and rename it into place; `mode` None: a new file's default."""
    tmp = f"{path}.tmp-{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666 if mode is None else 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    if mode is not None:
        os.chmod(tmp, mode)
    os.replace(tmp, path)


def _load(path: str) -> dict[str, Any] | None:
    try:
        with open(record_path(path), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _save(path: str, record: dict[str, Any]) -> None:
    _replace(record_path(path), (json.dumps(record, indent=1) + "\n").encode("utf-8"), 0o600)


def _drop_record(path: str) -> None:
    try:
        os.remove(record_path(path))
    except FileNotFoundError:
        pass
