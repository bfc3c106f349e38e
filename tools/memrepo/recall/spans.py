"""Tagged spans of a prompt or transcript, found the way a person writes them (stdlib only, no
`re`: runs before every prompt).

`<private>…</private>` marks what must never be stored, indexed, logged or sent. People
write it as `<PRIVATE>`, `<private reason="pin">`, `<private >`, `< /private>`, and nest it,
so a tag here is: `<`, optional spaces, an optional `/`, optional spaces, the name in any
case, then `>`, spaces, `/` or attributes up to the next `>` (at most MAX_ATTRS characters,
no `<`). Spans nest; an unclosed one runs to the end; a stray closing tag is dropped. Linear:
each occurrence of the name is looked at once.
"""

MAX_ATTRS = 256
PRIVATE = "private"
_SPACE = " \t\r\n"
# ASCII-only lowering keeps every offset (`"İ".lower()` is two characters).
_ASCII_LOWER = {c: c + 32 for c in range(65, 91)}


def ascii_lower(text: str) -> str:
    """`text` with A–Z lowered and every other character (and so every offset) kept."""
    return text.lower() if text.isascii() else text.translate(_ASCII_LOWER)


def _tag_at(low: str, i: int, name: str) -> "tuple[int, int, bool, bool] | None":
    """The tag whose name starts at `i`: (start, end, closing, self-closing), or None."""
    j = i - 1
    while j >= 0 and low[j] in _SPACE:
        j -= 1
    closing = j >= 0 and low[j] == "/"
    if closing:
        j -= 1
        while j >= 0 and low[j] in _SPACE:
            j -= 1
    if j < 0 or low[j] != "<" or i - j > 16:
        return None
    k = i + len(name)
    if k < len(low) and low[k] not in _SPACE and low[k] not in ">/":
        return None  # `<privateer>` is another word
    end = low.find(">", k, k + MAX_ATTRS + 1)
    if end < 0 or "<" in low[k:end]:
        return None
    return j, end + 1, closing, low[end - 1] == "/" and not closing


def strip_tag(text: str, tag: str) -> str:
    """`text` without its `<tag>…</tag>` spans (see the module docstring for what a tag is)."""
    low = ascii_lower(text)
    name = tag.lower()
    i = low.find(name)
    if i < 0 or "<" not in low:
        return text
    kept: "list[str]" = []
    pos = depth = 0
    while i >= 0:
        found = _tag_at(low, i, name)
        if found is None:
            i = low.find(name, i + len(name))
            continue
        start, end, closing, alone = found
        if depth == 0:
            kept.append(text[pos:start])
        if closing:
            depth = max(0, depth - 1)
        elif not alone:
            depth += 1
        pos = end
        i = low.find(name, end)
    if depth == 0:
        kept.append(text[pos:])
    return "".join(kept)


def strip_private(text: str) -> str:
    """`text` without its `<private>` spans, however they are written."""
    return strip_tag(text, PRIVATE) if PRIVATE in ascii_lower(text) else text
