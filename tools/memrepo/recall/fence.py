"""Memory text is data in the prompt (stdlib only, no `re`: the prompt path).

Memories arrive from teammates by `git pull`, and memrepo injects their titles, descriptions,
labels and ids, and the profile's lines, inside its `<memrepo-memories>` / `<memrepo-profile>`
fences. None of that text may close a fence, open one, or start a line of its own (where it
could pass for system text), see issue 15:

- `inert` is applied to every injected field: each line separator and control character
  (C0 and C1 controls, DEL, U+2028, U+2029) becomes a space, and each `<` that opens a tag
  (`<`, then any slashes or zero-width characters, then a letter; or `<`, then any of those
  and spaces, then `memrepo`) becomes `‹` (U+2039): `</memrepo-memories>` shows as
  `‹/memrepo-memories>`, `< /MEMREPO-profile>` as `‹ /MEMREPO-profile>`, `Vec<u8>` as
  `Vec‹u8>`, while `a < b` and `x <= 1` are left alone. No memory body is injected, so no field keeps a
  newline.
- `problem` is what commits refuse (`memrepo.format.validate`, profile writes): a line
  separator or control character, or a memrepo fence tag, in a one-line field.
- `cap` cuts injected text to a length and keeps the closing tag of the fence it cuts into.
"""

TAG_MARK = "\u2039"  # ‹, what a neutralized `<` becomes
_SEPARATORS = tuple(range(0x20)) + tuple(range(0x7F, 0xA0)) + (0x2028, 0x2029)
_TO_SPACE = dict.fromkeys(_SEPARATORS, " ")
# Between `<` and a tag's name a reader may not see these, so they do not stop the tag.
_SKIP = frozenset(" /\u00a0\u200b\u200c\u200d\u2060\ufeff")
_NAMES = {0x0A: "a newline", 0x0D: "a carriage return", 0x09: "a tab", 0x2028: "a line separator (U+2028)",
          0x2029: "a paragraph separator (U+2029)", 0x85: "a next-line character (U+0085)"}


def _tag_start(part: str, name_only: bool = False) -> bool:
    """Whether the text right after a `<` opens a tag.

    It does when a letter follows at once (past slashes and zero-width characters), or when
    `memrepo` follows past spaces too (`< /memrepo-memories>`); `a < b` is no tag. With
    `name_only`, only the second counts.
    """
    i, n = 0, len(part)
    while i < n and part[i] in _SKIP and part[i] != " ":
        i += 1
    if not name_only and i < n and part[i].isalpha():
        return True
    while i < n and (part[i] in _SKIP or part[i].isspace()):
        i += 1
    return part[i:i + 7].lower() == "memrepo"


def inert(text: object) -> str:
    """`text` as one inert line: separators and controls as spaces, tag openings as `‹`."""
    s = text if isinstance(text, str) else str(text)
    s = s.translate(_TO_SPACE)
    if "<" not in s:
        return s
    parts = s.split("<")
    return parts[0] + "".join((TAG_MARK if _tag_start(p) else "<") + p for p in parts[1:])


def problem(text: str) -> str | None:
    """Why `text` cannot be a one-line field that is injected into prompts, or None when it can."""
    for ch in text:
        o = ord(ch)
        if o < 0x20 or 0x7F <= o < 0xA0 or o in (0x2028, 0x2029):
            return f"holds {_NAMES.get(o, f'a control character (U+{o:04X})')}"
    if "<" in text and any(_tag_start(p, name_only=True) for p in text.split("<")[1:]):
        return "holds a memrepo fence tag (`<memrepo-…>`), which would break out of the injected context"
    return None


def _open_fence(text: str) -> str:
    """The name of the memrepo fence left open at the end of `text` ("" when none is)."""
    at = ("\n" + text).rfind("\n<memrepo-")
    if at < 0:
        return ""
    name = text[at + 1:].split(">", 1)[0]
    return "" if f"\n</{name}>" in text[at:] else name


def cap(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, keeping the closing tag of a fence it cuts into.

    Text with lines is cut after a whole line and the cut marked by a line `…`; one long line
    is cut anywhere, marked by `…`.
    """
    if len(text) <= limit:
        return text
    closing = ""
    for _ in range(2):  # the second round has room for the closing tag the first one found
        cut = text.rfind("\n", 0, limit - len(closing) - 1)
        kept, mark = (text[:cut], "\n…") if cut > 0 else (text[:limit - len(closing) - 1], "…")
        name = _open_fence(kept)
        need = f"\n</{name}>" if name else ""
        if len(need) <= len(closing):
            break
        closing = need
    return kept + mark + need
