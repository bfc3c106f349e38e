"""Memory text is data in the prompt (stdlib only, no `re`: the prompt path).

Memories arrive from teammates by `git pull`, and memrepo injects their titles, descriptions,
labels and ids, and the profile's lines, inside its `<memrepo-memories>` / `<memrepo-profile>`
fences. None of that text may close a fence, open one, or start a line of its own (where it
could pass for system text), see issue 15:

- `inert` is applied to every injected field: each line separator and control character
  (C0 and C1 controls, DEL, U+2028, U+2029) becomes a space, each invisible character
  (Unicode's Default_Ignorable_Code_Point, which holds every bidirectional control) is removed,
  and each `<` that opens a tag (`<`, then any slashes, then a letter; or `<`, then any of those
  and spaces, then `memrepo`) becomes `‹` (U+2039): `</memrepo-memories>` shows as
  `‹/memrepo-memories>`, `< /MEMREPO-profile>` as `‹ /MEMREPO-profile>`, `Vec<u8>` as
  `Vec‹u8>`, while `a < b` and `x <= 1` are left alone. The fullwidth and small forms of `<`
  and `/` and fullwidth letters (what NFKC folds to them) count as those. No memory body is
  injected, so no field keeps a newline.
- `problem` is what commits refuse (`memrepo.format.validate`, profile writes): a line
  separator or control character, or a memrepo fence tag, in a one-line field.
- `cap` cuts injected text to a length and keeps the closing tag of the fence it cuts into.

Invisible characters are removed before any tag is looked for: a soft hyphen or a right-to-left
override between `<` and `/memrepo-memories>` hides nothing from a model (issue 38, part 3).
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TAG_MARK = "\u2039"  # ‹, what a neutralized `<` becomes
_SEPARATORS = tuple(range(0x20)) + tuple(range(0x7F, 0xA0)) + (0x2028, 0x2029)
_TO_SPACE = dict.fromkeys(_SEPARATORS, " ")
# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): invisible, so a reader does
# not see them between `<` and a tag's name. The bidirectional controls (U+061C, U+200E/F,
# U+202A-202E, U+2066-2069) are among them.
IGNORABLE_RANGES = ((0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
                    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
                    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
                    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF))
# Ranges of combining marks: they ride on the character before them, so a reader does not see
# them stop a tag either.
_MARK_RANGES = ((0x0300, 0x036F), (0x1AB0, 0x1AFF), (0x1DC0, 0x1DFF), (0x20D0, 0x20FF), (0xFE20, 0xFE2F))
# Between `<` and a tag's name a reader may not see these (nor combining marks), so they do not stop the tag.
_SKIP = frozenset(" /\u00a0")
# The tables for text that is not ASCII, built when the first such text comes (`_tables`): a
# hook whose text is all ASCII does not pay for them.
_LAZY: "dict[str, Any]" = {}


def _tables() -> "dict[str, Any]":
    """drop (the ignorables to remove), clean (drop and separators to space), fold, marks."""
    if not _LAZY:
        # The tag characters (U+E0000-E0FFF, the last range) are removed apart (`_drop_tag_chars`):
        # 4,096 more entries would cost a millisecond.
        drop = {c: None for lo, hi in IGNORABLE_RANGES[:-1] for c in range(lo, hi + 1)}
        # One character for one, so a position in the folded text is the same position in the text:
        # what NFKC folds to `<` and `/` (fullwidth, small, and the slashes a reader takes for one)
        # and fullwidth letters.
        fold = {0xFF1C: "<", 0xFE64: "<", 0xFF0F: "/", 0x2215: "/", 0x2044: "/", 0x29F8: "/",
                **{c: chr(c - 0xFEE0) for c in range(0xFF21, 0xFF3B)},
                **{c: chr(c - 0xFEE0) for c in range(0xFF41, 0xFF5B)}}
        marks = frozenset(chr(c) for lo, hi in _MARK_RANGES for c in range(lo, hi + 1))
        _LAZY.update(drop=drop, clean={**_TO_SPACE, **drop}, fold=fold, marks=marks, skip=_SKIP | marks)
    return _LAZY


_NAMES = {0x0A: "a newline", 0x0D: "a carriage return", 0x09: "a tab", 0x2028: "a line separator (U+2028)",
          0x2029: "a paragraph separator (U+2029)", 0x85: "a next-line character (U+0085)"}


def _tag_start(part: str, name_only: bool = False) -> bool:
    """Whether the text right after a `<` opens a tag.

    It does when a letter follows at once (past slashes and combining marks), or when `memrepo`
    follows past spaces too (`< /memrepo-memories>`, marks on its letters or not); `a < b` is no
    tag. With `name_only`, only the second counts.
    """
    skip = _SKIP
    if not part[:200].isascii():
        tables = _tables()
        part, skip = part[:200].translate(tables["fold"]), tables["skip"]
    i, n = 0, len(part)
    while i < n and part[i] in skip and part[i] != " ":
        i += 1
    if not name_only and i < n and part[i].isalpha():
        return True
    while i < n and (part[i] in skip or part[i].isspace()):
        i += 1
    name = part[i:i + 7]
    if not name.isascii():
        marks = _tables()["marks"]
        name = "".join(c for c in part[i:i + 40] if c not in marks)[:7]
    return name.lower() == "memrepo"


def _opens(text: str) -> "list[int]":
    """The positions of the `<` (or its fullwidth or small form) in `text` that open a tag."""
    if not text.isascii() and ("\uff1c" in text or "\ufe64" in text):
        text = text.translate(_tables()["fold"])
    parts = text.split("<")
    out, at = [], len(parts[0])
    for p in parts[1:]:
        if _tag_start(p):
            out.append(at)
        at += 1 + len(p)
    return out


def _drop_tag_chars(text: str) -> str:
    if not text or max(text) < "\U000e0000":  # empty: a text of invisibles only, translated away
        return text
    return "".join(c for c in text if not "\U000e0000" <= c <= "\U000e0fff")


def visible(text: str) -> str:
    """`text` without the invisible characters a reader would not see (Default_Ignorable_Code_Point)."""
    return text if text.isascii() else _drop_tag_chars(text.translate(_tables()["drop"]))


def inert(text: object) -> str:
    """`text` as one inert line: separators and controls as spaces, invisibles gone, tag openings as `‹`."""
    s = text if isinstance(text, str) else str(text)
    if not s.isascii():
        s = _drop_tag_chars(s.translate(_tables()["clean"]))
    elif not s.isprintable():  # an ASCII control to turn into a space (else the translation changes nothing)
        s = s.translate(_TO_SPACE)
    if "<" not in s and s.isascii():
        return s
    opens = _opens(s)
    if not opens:
        return s
    chars = list(s)
    for at in opens:
        chars[at] = TAG_MARK
    return "".join(chars)


def problem(text: str) -> str | None:
    """Why `text` cannot be a one-line field that is injected into prompts, or None when it can."""
    for ch in text:
        o = ord(ch)
        if o < 0x20 or 0x7F <= o < 0xA0 or o in (0x2028, 0x2029):
            return f"holds {_NAMES.get(o, f'a control character (U+{o:04X})')}"
    s = visible(text)
    if not s.isascii() and ("\uff1c" in s or "\ufe64" in s):
        s = s.translate(_tables()["fold"])
    if "<" in s and any(_tag_start(p, name_only=True) for p in s.split("<")[1:]):
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
