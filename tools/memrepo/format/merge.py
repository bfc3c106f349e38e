"""Three-way merge of one memory file as data: the front matter key by key, the body as a whole.

Pure (no git, no files): `memrepo.vcs.mergedriver` runs it as git's merge driver for
`memory/*.md`. Each key is merged on its own, so two sides that changed different keys merge
cleanly; a key unchanged on one side takes the other side's value, and the same change on both
sides is that change. A key changed *differently* on both sides is resolved by its kind:

- `topics`, `entities`, `tech`, `aliases` (sets by nature): a three-way set merge. An item
  stays when both sides kept it or either side added it; an item that either side removed from
  base is gone. Ours' order first, then theirs' new items in theirs' order; an empty result
  drops the key. Without a base (both sides added the file) it is the union.
- `updated`: the later date.
- `verification`: the one with the later `checked` (a side without one counts as oldest); the
  same `checked` with different content is a conflict.
- `claims`: the verifier writes them with `verification`, so they follow the side whose
  verification the merge took; when neither side's was taken, a conflict.
- every other key (`status`, `superseded_by`, `title`, …): a conflict.

The body changed differently on both sides goes to `merge_text` when one is given (the driver
passes git's own line merge, so edits to different paragraphs still merge), else it is a
conflict. Input that is not a memory file memrepo can read back exactly (no front matter, bad
YAML, YAML aliases, over `MAX_BYTES`, or comments a rewrite would drop) is not merged here at
all: `MergeResult.unmerged` says why and the caller merges it as text.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Callable

import yaml

from memrepo.format import notes, spec

# A memory is at most a 64 KiB body and a small front matter; anything bigger is not one we merge.
MAX_BYTES = 2 * spec.MAX_BODY_BYTES
SET_KEYS = spec.LIST_KEYS
_MISSING: Any = object()

TextMerge = Callable[[str, str, str], "str | None"]


class MergeResult:
    """The merged text (None unless clean), the keys that conflict (`body` for the body), and
    `unmerged`: why the inputs were not merged as memories at all ("" when they were)."""

    __slots__ = ("text", "conflicts", "unmerged")

    def __init__(self, text: str | None, conflicts: list[str], unmerged: str = "") -> None:
        self.text, self.conflicts, self.unmerged = text, conflicts, unmerged

    @property
    def clean(self) -> bool:
        return self.text is not None

    def __repr__(self) -> str:
        return f"MergeResult(clean={self.clean}, conflicts={self.conflicts!r}, unmerged={self.unmerged!r})"


def _load(text: str, side: str) -> notes.Note:
    if len(text.encode("utf-8")) > MAX_BYTES:
        raise notes.ParseError(f"{side} is over {MAX_BYTES:,} bytes")
    head, _, _ = notes.split(text)
    if notes.alias_line(head) is not None:
        raise notes.ParseError(f"{side} front matter uses YAML aliases")
    note = notes.parse(text)
    # The serializer writes no comments: a hand-formatted head with a `#` may hold one we would drop.
    if "#" in head and notes.serialize(note) != text:
        raise notes.ParseError(f"{side} front matter is not in canonical form and may hold a comment")
    return note


def _when(value: Any) -> _dt.datetime | None:
    """An ISO date or datetime as a comparable naive UTC datetime; None when it is neither."""
    if not isinstance(value, str):
        return None
    try:
        when = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        if when.tzinfo is not None:  # `0001-01-01T00:00+01:00` is a valid date whose UTC is not (issue 38)
            when = when.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    except (ValueError, OverflowError):
        return None
    return when


def _later(o: Any, t: Any) -> tuple[Any, str] | None:
    """The later of two dates and which side it came from ("ours" on a tie); None if one is not a date."""
    wo, wt = _when(o), _when(t)
    if (o is not _MISSING and wo is None) or (t is not _MISSING and wt is None):
        return None
    if wt is None or (wo is not None and wo >= wt):
        return o, "ours"
    return t, "theirs"


def _set_merge(b: Any, o: Any, t: Any) -> Any:
    base, ours, theirs = ([] if v is _MISSING else list(v) for v in (b, o, t))
    removed = [x for x in base if x not in ours or x not in theirs]
    merged = [x for x in ours if x not in removed]
    merged += [x for x in theirs if x not in merged and x not in removed]
    return merged or _MISSING


def _verification(o: Any, t: Any) -> tuple[Any, str] | None:
    """The newer check of two differing `verification` values and its side; None on a tie or a bad date."""
    def checked(v: Any) -> _dt.datetime | None:
        return _when(v.get("checked")) if isinstance(v, dict) else None

    co, ct = checked(o), checked(t)
    if (o is not _MISSING and co is None) or (t is not _MISSING and ct is None):
        return None
    if co == ct:
        return None
    if ct is None or (co is not None and co > ct):
        return o, "ours"
    return t, "theirs"


def _merge_meta(base: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    merged: dict[str, Any] = {}
    conflicts: list[str] = []
    taken: dict[str, str] = {}  # key -> the side whose value the merge took, for `claims`
    keys = list(dict.fromkeys([*ours, *theirs, *base]))
    for key in sorted(keys, key=lambda k: k == "claims"):  # claims last: they follow verification
        b, o, t = base.get(key, _MISSING), ours.get(key, _MISSING), theirs.get(key, _MISSING)
        if o == t:
            value: Any = o
            taken[key] = "both" if o != b else "neither"
        elif o == b:
            value, taken[key] = t, "theirs"
        elif t == b:
            value, taken[key] = o, "ours"
        else:
            resolved = _both_changed(key, b, o, t, taken)
            if resolved is None:
                conflicts.append(key)
                continue
            value, taken[key] = resolved
        if value is not _MISSING:
            merged[key] = value
    return {k: merged[k] for k in notes.ordered_keys(merged)}, conflicts


def _both_changed(key: str, b: Any, o: Any, t: Any, taken: dict[str, str]) -> tuple[Any, str] | None:
    if key in SET_KEYS:
        # A value that is not a list (invalid, but written by hand) is not a set to merge into.
        if any(v is not _MISSING and not isinstance(v, list) for v in (b, o, t)):
            return None
        return _set_merge(b, o, t), "both"
    if key == "updated":
        return _later(o, t)
    if key == "verification":
        return _verification(o, t)
    if key == "claims" and taken.get("verification") in ("ours", "theirs"):
        side = taken["verification"]
        return (o if side == "ours" else t), side
    return None


def _body(note: notes.Note | None) -> str:
    return note.body.replace("\r\n", "\n").rstrip("\n") if note is not None else ""


def merge_note(base: str | None, ours: str, theirs: str, merge_text: TextMerge | None = None) -> MergeResult:
    """Merge three versions of one memory file (base None: both sides added it).

    Returns the merged canonical text when clean, else the conflicting keys (and `body`); see
    the module docstring for the rules. `merge_text(base_body, ours_body, theirs_body)` merges
    bodies changed on both sides as lines and returns None on a conflict.
    """
    try:
        b = _load(base, "base") if base is not None else None
        o, t = _load(ours, "ours"), _load(theirs, "theirs")
    except (notes.ParseError, yaml.YAMLError, RecursionError) as exc:
        return MergeResult(None, [], str(exc) or type(exc).__name__)
    meta, conflicts = _merge_meta(b.meta if b is not None else {}, o.meta, t.meta)
    bb, bo, bt = _body(b), _body(o), _body(t)
    body: str | None = bo if bt in (bo, bb) else bt if bo == bb else None
    if body is None and merge_text is not None:
        body = merge_text(_lines(bb), _lines(bo), _lines(bt))
    if body is None:
        conflicts.append("body")
    if conflicts or body is None:
        return MergeResult(None, conflicts)
    return MergeResult(notes.serialize(notes.Note(meta, body)), [])


def _lines(body: str) -> str:
    return body + "\n" if body else ""
