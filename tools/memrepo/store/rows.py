"""A memory file as a row of the cache: parsed, checked that the cache can hold it (one bad file
is skipped by name, never the build), its text cleaned of secrets (`store.index` writes the rows)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable

from memrepo.format import files, mentions, spec

if TYPE_CHECKING:
    from memrepo.format.notes import Note

try:
    from _sha1 import sha1 as _own_sha1  # type: ignore[import-not-found]
except ImportError:
    _own_sha1 = None
# hashlib's import loads OpenSSL (10 M instructions, a tenth of a lock hold: issue 44), whose
# SHA-1 is 6x faster per byte than CPython's own: a process hashes its first blobs with CPython's
# (a commit's cache update hashes a few) and loads hashlib only for a rebuild's many.
OWN_SHA1_BLOBS = 256
_hashed = [0]


def load(repo: str, rel: str, st: os.stat_result) -> tuple[tuple[Any, ...] | None, str]:
    """Parse one file into a row for `memories` + `fts`, or (None, problem)."""
    from memrepo.format import notes, redact

    try:
        data = files.read_bytes(os.path.join(repo, rel))
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or exc})"
    digest = blob_id(data)
    try:
        note = notes.parse(data.decode("utf-8"), rel)
    except (UnicodeDecodeError, notes.ParseError) as exc:
        return None, str(exc)
    problem = unindexable(note, rel)
    if problem:
        return None, problem
    return row(note, rel, digest, st, redact.redact), ""


_TEXT_KEYS = ("source", "status", "superseded_by", "project", "session")


def blob_id(data: bytes) -> str:
    """The id git gives `data` as a blob: the cache's `hash`, so git's own listings can be
    compared with it (pre-commit takes unchanged memories from the cache that way)."""
    _hashed[0] += 1
    if _own_sha1 is not None and _hashed[0] <= OWN_SHA1_BLOBS:
        return str(_own_sha1(b"blob %d\0" % len(data) + data).hexdigest())
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def unindexable(note: Note, rel: str) -> str:
    """Why the cache cannot hold this memory, or ""."""
    m = note.meta
    stem = os.path.splitext(os.path.basename(rel))[0]
    if m.get("id") != stem:
        return f"id {m.get('id')!r} is not the file name"
    if m.get("class") not in spec.CLASSES:
        return f"unknown class {m.get('class')!r}"
    if not isinstance(m.get("title"), str) or not isinstance(m.get("description"), str):
        return "title or description missing"
    # sqlite3 cannot bind a list or mapping: one mistyped key must skip its file, not abort the build.
    for key in _TEXT_KEYS:
        if m.get(key) is not None and not isinstance(m[key], str):
            return f"`{key}` is not text"
    hl = m.get("half_life_days")
    if hl is not None and (isinstance(hl, bool) or not isinstance(hl, (int, float))):
        return "`half_life_days` is not a number"
    if hl is not None and not 0 < hl < float("inf"):  # recall raises 0.5 to age / half-life: -0.001 overflows
        return f"`half_life_days` {hl!r} is not a positive number"
    ver = m.get("verification")
    if isinstance(ver, dict) and ver.get("status") is not None and not isinstance(ver["status"], str):
        return "`verification.status` is not text"
    return ""


def _words(value: Any) -> str:
    return " ; ".join(str(v) for v in value) if isinstance(value, list) else ""


def _subjects(meta: dict[str, Any]) -> int:
    """How many aliases, topics and entities a memory lists: 0 for one that only has prose (a
    dialogue turn an importer made), whose matches recall reads differently (recall.calibrate)."""
    return sum(len(meta[k]) for k in ("aliases", "topics", "entities") if isinstance(meta.get(k), list))


def row(note: Note, rel: str, digest: str, st: os.stat_result, clean: Callable[[str], str]) -> tuple[Any, ...]:
    """The `memories` record, the `fts` text and the citations of a memory; `clean` takes secrets
    out of its text (a cited path it would change is no citation: the cache never holds it)."""
    m = note.meta
    cls = m["class"]
    half_life = m["half_life_days"] if "half_life_days" in m else spec.HALF_LIFE_DAYS.get(cls)
    _ver = m.get("verification")
    ver: dict[str, Any] = _ver if isinstance(_ver, dict) else {}
    failed = ver.get("failed") or []
    reason = "; ".join(str(f) for f in failed) if isinstance(failed, list) else str(failed)
    created = str(m.get("created", ""))[:10]
    updated = str(m.get("updated") or created)[:10]
    record = (m["id"], rel, cls, m.get("source"), m.get("status") or "active", m.get("superseded_by"),
              m.get("project"), created, updated, half_life, ver.get("status"), reason or None,
              clean(m["title"]), clean(m["description"]), m.get("session"), digest, st.st_mtime_ns, st.st_size,
              _subjects(m))
    text = (clean(m["title"]), _words(m.get("aliases")), _words(m.get("topics")), _words(m.get("entities")),
            _words(m.get("tech")), clean(m["description"]), clean(note.body))
    cites = [c for c in mentions.citations(m["title"], m["description"], note.body) if clean(c[0]) == c[0]]
    return record, text, cites
