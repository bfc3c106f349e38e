"""The text of a proposal's pull request: what a reviewer on the forge needs to decide.

For a supersession: both memories' title and description side by side, the model's verdict
(relation, confidence, scope, reason), the guard that held it back, and the commands that
decide it locally. For any other proposal (a capture sent to review): each memory it adds or
changes. Memory text and the model's words came from a shared repository and a model, so
every value is flattened to one line, cut to a bound, and escaped: nothing in it can become a
link, an image, a mention, HTML, or a new table cell.
"""

from __future__ import annotations

import re
from typing import Any

from memrepo.format import notes

FIELD_MAX = 300
TITLE_MAX = 120
MARK = "<!-- memrepo proposal {id} -->"
_SPECIAL = re.compile(r"([\\`*_\[\]|~])")  # what makes emphasis, code, links, images, cells, strikes inline
_ENTITIES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("@", "&#64;"), ("://", "&#58;//"), ("www.", "www&#46;"))
_PLAIN = re.compile(r"^[A-Za-z0-9._-]{1,100}$")


def inline(text: Any, limit: int = FIELD_MAX) -> str:
    """One line of untrusted text, safe inside a Markdown table cell: no HTML, link, image,
    mention, autolink, code span or extra cell can come out of it."""
    flat = " ".join(str(text or "").split())
    if len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    for raw, entity in _ENTITIES:
        flat = flat.replace(raw, entity)
    return _SPECIAL.sub(r"\\\1", flat) or "—"


def code(text: Any) -> str:
    """An id as a code span when it is plain (ids are file names), else as escaped text."""
    value = str(text or "")
    return f"`{value}`" if _PLAIN.match(value) else inline(value, 100)


def _fields(text: str) -> dict[str, str]:
    try:
        note = notes.parse(text)
    except (notes.ParseError, ValueError):
        return {}
    return {k: str(note.get(k) or "") for k in ("title", "description", "class", "project", "updated", "superseded_by")}


def title(p: dict[str, Any]) -> str:
    t = p["trailers"]
    if t.get("Winner") and t.get("Id"):
        what = f"supersede {t['Id']} by {t['Winner']}"
    else:
        what = p["subject"].replace(" (proposed)", "", 1)
    return " ".join(f"memrepo review: {what}".split())[:TITLE_MAX]


def _table(loser: tuple[str, str], winner: tuple[str, str]) -> list[str]:
    a, b = _fields(loser[1]), _fields(winner[1])
    rows = ["| | would be superseded | would stay in force |", "|---|---|---|",
            f"| **id** | {code(loser[0])} | {code(winner[0])} |"]
    for key in ("title", "description", "class", "project", "updated"):
        if a.get(key) or b.get(key):
            rows.append(f"| **{key}** | {inline(a.get(key))} | {inline(b.get(key))} |")
    return rows


def _changed(p: dict[str, Any]) -> list[str]:
    rows = ["| memory | title | description |", "|---|---|---|"]
    for mid, text in p.get("files", []):
        f = _fields(text)
        rows.append(f"| {code(mid)} | {inline(f.get('title'))} | {inline(f.get('description'))} |")
    return rows


def render(p: dict[str, Any]) -> str:
    """The pull request body for proposal `p` (as `review.show` returns it, plus `files`)."""
    t = p["trailers"]
    pid = p["id"]
    lines = [MARK.format(id=pid)]
    if t.get("Winner") and t.get("Id"):
        lines += [f"The memrepo curator thinks {code(t['Winner'])} should supersede {code(t['Id'])}, "
                  "but a guard held it back, so a person decides. **Merge** this pull request to accept it, "
                  "**close** it to reject it (the pair is then not proposed again).", ""]
        lines += _table((t["Id"], p["loser"]["text"]), (t["Winner"], p["winner"]["text"]))
        verdict = [f"relation **{inline(t.get('Relation', '?'), 40)}**", f"confidence **{inline(t.get('Confidence', '?'), 20)}**"]
        if t.get("Scope"):
            verdict.append(f"scope **{inline(t['Scope'], 20)}**")
        lines += ["", "**The model's verdict:** " + ", ".join(verdict) + "."]
    else:
        lines += [f"A memrepo run proposed this change ({inline(p['subject'], 200)}) and left it for a person. "
                  "**Merge** this pull request to accept it, **close** it to reject it.", ""]
        lines += _changed(p)
        lines.append("")
    if t.get("Reason"):
        lines += ["", f"**Reason:** {inline(t['Reason'])}"]
    lines += ["", f"**Held back by:** {inline(t.get('Review') or 'the run was set to send its changes to review')}", "",
              "**Or decide locally** (the next `memrepo review push` closes this pull request):", "", "```",
              f"memrepo review accept {pid}", f'memrepo review reject {pid} --reason "why"', "```", "",
              f"<sub>proposal {pid} of run {inline(p['run'], 80)}, opened by `memrepo review push`</sub>"]
    return "\n".join(lines) + "\n"
