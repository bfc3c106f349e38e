"""The one lenient reader of other tools' markdown files (Claude Code auto memory, memsearch, Hermes).

Foreign files are read, never written, and never trusted: front matter that is missing, not a
mapping, bad YAML, oversized or using YAML aliases leaves `meta` empty and the whole text as the
body (nothing the user wrote is dropped), with `problem` saying why. Only a mapping splits the
file into `meta` and the body after it. memrepo's own files go through the strict
`memrepo.format.notes` instead (python-frontmatter's parse strips the body, which breaks their
byte round trip; for a foreign file that is what we want).
"""

from __future__ import annotations

import codecs
from typing import Any

import frontmatter
import yaml

from memrepo.format import notes

MAX_BYTES = 1024 * 1024  # a topic file or a day's journal is kilobytes; refuse what is not one
MAX_HEAD = 64 * 1024  # front matter longer than this is not front matter we read


class Foreign:
    """A foreign file: its front matter (`{}` unless it was a mapping), its body, and why `meta` is empty."""

    __slots__ = ("meta", "body", "problem")

    def __init__(self, meta: dict[str, Any], body: str, problem: str | None = None) -> None:
        self.meta = meta
        self.body = body
        self.problem = problem

    def __repr__(self) -> str:
        return f"Foreign(meta={self.meta!r}, body={self.body[:40]!r}, problem={self.problem!r})"


def parse(text: str) -> Foreign:
    """Split a foreign file's text; never raises on its content (BOM and CRLF are normalized first)."""
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    handler = frontmatter.detect_format(text, frontmatter.handlers)
    if handler is None:
        return Foreign({}, text, "no front matter")
    try:
        head, body = handler.split(text)
    except ValueError:  # an opening fence and no closing one: a horizontal rule, not front matter
        return Foreign({}, text, "no front matter")
    if len(head) > MAX_HEAD:
        return Foreign({}, text, f"front matter over {MAX_HEAD:,} characters")
    try:
        if isinstance(handler, frontmatter.YAMLHandler) and notes.alias_line(head, yaml.SafeLoader) is not None:
            return Foreign({}, text, "front matter uses YAML aliases")
        meta = handler.load(head)
    except Exception as exc:  # noqa: BLE001 — any parser failure (YAMLError, ValueError, RecursionError) is bad front matter
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return Foreign({}, text, first)  # the parser's own words: "while scanning a quoted scalar"
    if meta is None:  # fences with nothing between them
        meta = {}
    if not isinstance(meta, dict):
        return Foreign({}, text, "front matter is not a mapping")
    return Foreign({str(k): v for k, v in meta.items()}, body.lstrip("\n"))


def read(path: str, max_bytes: int = MAX_BYTES) -> Foreign:
    """Read and parse a foreign file: UTF-8, or UTF-16/32 when a byte order mark says so.

    Raises OSError when it cannot be read and ValueError when it is over `max_bytes` or not
    text in one of those encodings (a Latin-1 `é` imported as U+FFFD is a memory imported wrongly).
    """
    with open(path, "rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ValueError(f"over {max_bytes:,} bytes; not a file this importer reads")
    return parse(decode(data))


# UTF-32's little-endian mark starts with UTF-16's: look for it first.
_MARKS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
          (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def decode(data: bytes) -> str:
    """The text of a foreign file's bytes; ValueError naming the first bad byte and how to convert the file."""
    codec = next((c for mark, c in _MARKS if data.startswith(mark)), "utf-8")
    try:
        return data.decode(codec)
    except UnicodeDecodeError as exc:
        raise ValueError(f"not {codec.upper()} text (byte 0x{data[exc.start]:02x} at offset {exc.start:,}); "
                         "save it as UTF-8 (e.g. `iconv -f LATIN1 -t UTF-8`) and import again") from None
