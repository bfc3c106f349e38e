"""Repository text on a terminal: its control characters are shown, never obeyed (issue 38, part 8).

What a teammate wrote reaches this machine by `git pull`: commit subjects and trailers, proposal
bodies, memory titles, descriptions, files and file names. Printed raw, an escape sequence in it
would act on the terminal: an OSC that sets the window title or writes the clipboard (OSC 52), a
CSI that moves the cursor or clears the screen, a C1 control, a bare carriage return or
backspaces that print over what came before, a bidirectional override that reorders a line.
`safe` shows each such character as an escape (`\\x1b`, `\\u202e`); newlines and tabs stay as
they are. The CLI prints through `memrepo.cli.term.echo`, the git hooks through `safe`.
"""

from __future__ import annotations

import json
from typing import Any

_CONTROLS = [c for c in range(0x20) if c not in (0x09, 0x0A)] + list(range(0x7F, 0xA0))
# Bidirectional controls: they print nothing and reorder what follows (Trojan Source).
_BIDI = [0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_SHOWN = {c: f"\\x{c:02x}" for c in _CONTROLS} | {c: f"\\u{c:04x}" for c in _BIDI}
# In JSON text a raw control can only stand inside a string, where `\uXXXX` means the same character.
_JSON_SHOWN = {c: f"\\u{c:04x}" for c in _CONTROLS + _BIDI}


def safe(text: object) -> str:
    """`text` with every terminal control character but newline and tab written as a visible escape."""
    return (text if isinstance(text, str) else str(text)).translate(_SHOWN)


def json_text(data: Any, indent: int = 2) -> str:
    """`data` as indented JSON that a terminal prints as it is, and that decodes to the same data."""
    return json.dumps(data, indent=indent, ensure_ascii=False).translate(_JSON_SHOWN)
