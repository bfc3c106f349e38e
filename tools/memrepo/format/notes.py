"""Parse, validate and serialize memory files (`memory/<id>.md`).

One serializer writes every file, so `serialize(parse(text)) == text` for every file
already in canonical form. python-frontmatter's `loads()` strips the body and its
`dumps()` sorts keys, so memrepo splits the fences itself and uses PyYAML directly.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from typing import TYPE_CHECKING, Any

from memrepo.format import files, spec

if TYPE_CHECKING:
    import yaml

# PyYAML loads where a file is parsed or written, not where this module is imported: `memrepo add`
# builds its note here, and a writer whose change a lock holder renders never parses nor writes
# one (~92 M instructions of its process, issue 44).

FENCE = "---"
ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
DATETIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")
FIX_FMT = "run `memrepo fmt {path}`"
# Memories arrive by `git pull` from people we don't control: every parse is bounded (issue 15).
MAX_HEAD_CHARS = 64 * 1024  # front matter is a few hundred bytes; this is not front matter
# Python refuses to turn an int of over 4,300 digits into text (and a hex one builds it first):
# a teammate's `x: 999…` crashed every command that read the store (issue 38).
MAX_NUMBER_CHARS = 100
MAX_DEPTH = 16  # the deepest key memrepo writes (claims → a claim → its args) is 3 levels down
KEY_RE = re.compile(r"^([A-Za-z_][\w-]*)\s*:")
NO_ALIASES_FIX = "write each value out in full; memory front matter has no YAML anchors (`&`) or aliases (`*`)"


def is_id(text: object) -> bool:
    """Whether `text` is a memory id: kebab-case [a-z0-9-], at most spec.MAX_ID characters (so it
    names a file inside memory/ and nothing else)."""
    return isinstance(text, str) and len(text) <= spec.MAX_ID and ID_RE.match(text) is not None


_LOADER: list[Any] = []  # the one loader class, built at the first parse


def _loader() -> Any:
    """PyYAML's SafeLoader (libyaml's where there is one) that keeps dates as the text written,
    refuses over-long numbers and values no memory holds (sets, bytes)."""
    if _LOADER:
        return _LOADER[0]
    import yaml

    class Loader(yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader):  # type: ignore[misc]
        """SafeLoader that keeps dates as the strings the user wrote."""

    Loader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    Loader.add_constructor("tag:yaml.org,2002:int", _bounded(yaml.SafeLoader.construct_yaml_int))
    Loader.add_constructor("tag:yaml.org,2002:float", _bounded(yaml.SafeLoader.construct_yaml_float))
    Loader.add_constructor("tag:yaml.org,2002:timestamp", _as_written)
    for tag in ("set", "binary", "omap", "pairs"):
        Loader.add_constructor(f"tag:yaml.org,2002:{tag}", _refused)
    _LOADER.append(Loader)
    return Loader


class _LongNumber(Exception):
    """A number over MAX_NUMBER_CHARS characters, as written or in decimal, at a 0-based line of the head."""

    def __init__(self, line: int, chars: int) -> None:
        super().__init__(line, chars)
        self.line, self.chars = line, chars


def _bounded(build: Any) -> Any:
    """A constructor that refuses an over-long number before Python converts it, and one the
    serializer would write longer (`0xfff…` in decimal), so `fmt` never writes what it can't read."""

    def construct(loader: Any, node: yaml.ScalarNode) -> Any:
        if len(node.value) > MAX_NUMBER_CHARS:
            raise _LongNumber(node.start_mark.line, len(node.value))
        value = build(loader, node)
        if isinstance(value, int) and len(str(value)) > MAX_NUMBER_CHARS:
            raise _LongNumber(node.start_mark.line, len(str(value)))
        return value

    return construct


def _as_written(loader: Any, node: yaml.Node) -> Any:
    """`!!timestamp 2026-13-45` stays the text it is (building a datetime raised ValueError)."""
    return loader.construct_scalar(node)


def _refused(loader: Any, node: yaml.Node) -> Any:
    """A set or bytes is no value a memory holds, and neither json nor the serializer reads it back."""
    import yaml

    tag = str(node.tag).replace("tag:yaml.org,2002:", "!!")
    raise yaml.constructor.ConstructorError(None, None, f"{tag} values are not memory front matter", node.start_mark)


class Note:
    """A memory: its front matter (in canonical key order) and its markdown body.

    `text` is the file's text as parsed (None for a note built in memory): what a writer must
    find unchanged before it commits (`original`), whatever order or quoting a person wrote.
    """

    __slots__ = ("meta", "body", "path", "text")

    def __init__(self, meta: dict[str, Any], body: str, path: str = "", text: str | None = None) -> None:
        self.meta = meta
        self.body = body
        self.path = path
        self.text = text

    @property
    def id(self) -> str:
        return str(self.meta.get("id", ""))

    def get(self, key: str, default: Any = None) -> Any:
        return self.meta.get(key, default)

    def __repr__(self) -> str:
        return f"Note({self.id!r})"


class ParseError(ValueError):
    """Front matter could not be read; `line` is 1-based."""

    def __init__(self, message: str, line: int = 1, fix: str = "") -> None:
        super().__init__(message)
        self.line = line
        self.fix = fix


def split(text: str) -> tuple[str, str, int]:
    """Split a file into (front matter text, body, line number of the closing fence)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != FENCE:
        raise ParseError("no front matter", 1, "start the file with a `---` line, the YAML keys, then `---`")
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r") == FENCE:
            return "\n".join(lines[1:i]) + "\n", "\n".join(lines[i + 1 :]), i + 1
    raise ParseError("front matter is never closed", 1, "add a `---` line after the last key")


def parse(text: str, path: str = "") -> Note:
    """Parse a memory file's text. Raises ParseError when the front matter is unreadable."""
    head, body, _ = split(text)
    if len(head) > MAX_HEAD_CHARS:
        raise ParseError(f"front matter is over {MAX_HEAD_CHARS:,} characters", 2, "move the long text into the body")
    _refuse_aliases(head)
    import yaml

    try:
        meta = yaml.load(head, Loader=_loader())
    except RecursionError:  # the pure-Python parser nests by recursion; libyaml stops at 1,000 levels
        raise ParseError("front matter is nested too deeply", 2, "write one `key: value` per line") from None
    except _LongNumber as exc:
        key = key_at(head, exc.line)
        raise ParseError(f"`{key}` holds a number {exc.chars:,} characters long, over {MAX_NUMBER_CHARS}",
                         exc.line + 2, f"quote it (`{key}: '…'`) if it is text, or shorten it") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        # An unclosed quote or bracket is noticed lines later (or at the end); point at where it opens.
        if str(getattr(exc, "context", "")).startswith(("while scanning a quoted", "while parsing a flow")):
            mark = getattr(exc, "context_mark", None) or mark
        line = mark.line + 2 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ParseError(f"front matter is not valid YAML ({problem})", line, "quote the value with single quotes")
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise ParseError("front matter is not a mapping of keys", 2, "write one `key: value` per line")
    return Note({str(k): _plain(v, 1) for k, v in meta.items()}, body, path, text)


def key_at(head: str, line: int) -> str:
    """The top-level key whose value holds 0-based `line` of the front matter `head`."""
    lines = head.split("\n")
    for text in reversed(lines[: line + 1]):
        m = KEY_RE.match(text)
        if m:
            return m.group(1)
    return "a key"


def original(note: Note) -> str:
    """The text `note` was read from, or its serialized form when it was built in memory.

    A pass compares the file with this before it commits (`commit_if_unchanged`); comparing with
    `serialize(note)` would call every hand-formatted memory changed and never write it.
    """
    return note.text if note.text is not None else serialize(note)


def alias_line(head: str, loader: Any = None) -> int | None:
    """The file line of the first YAML anchor or alias in a front-matter `head`, or None: 500
    bytes of nested aliases stand for 10 GiB of values. The one alias check (issue 40): memrepo's
    files, the merge driver and foreign files all ask it. Bad YAML is None: the loader says what
    is wrong, with its line."""
    if "&" not in head and "*" not in head:
        return None  # neither can be written without its sigil; most heads skip the event scan
    import yaml

    try:
        for event in yaml.parse(head, Loader=loader or _loader()):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                return event.start_mark.line + 2 if event.start_mark else 2
    except yaml.YAMLError:
        return None
    return None


def _refuse_aliases(head: str) -> None:
    line = alias_line(head)
    if line is not None:
        raise ParseError("front matter uses a YAML anchor or alias", line, NO_ALIASES_FIX)


def _plain(value: Any, depth: int) -> Any:
    """Keys as text, and nesting bounded here, since every later reader (the serializer, json)
    walks the value by recursion."""
    if isinstance(value, (list, dict)) and depth >= MAX_DEPTH:
        raise ParseError(f"front matter is nested more than {MAX_DEPTH} levels deep", 2, "write one `key: value` per line")
    if isinstance(value, list):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    return value


def bounded(meta: dict[str, Any], body: str) -> Note:
    """A note of fields that come from elsewhere (a waiting writer's, through the group commit's
    queue: issue 44), keys as text and nesting bounded as `parse` bounds them (ParseError)."""
    return Note({str(k): _plain(v, 1) for k, v in meta.items()}, body)


def read(path: str) -> Note:
    """Read and parse a memory file from disk (bounded, symlinks refused: see `files.read_bytes`)."""
    return parse(files.read_bytes(path).decode("utf-8"), path)


# -- serializer ---------------------------------------------------------------

_STYLES: list[dict[str, Any]] = []  # PyYAML's emitter's options, then libyaml's: set at the first write


def _styles() -> list[dict[str, Any]]:
    """[PyYAML's emitter, the emitter for printable ASCII]. libyaml's writes what PyYAML's writes
    for printable ASCII, about five times faster (a sweep rewrites thousands of stamps), but it
    escapes what PyYAML writes as is above U+FFFF (an emoji) and the BOM: any other text keeps
    PyYAML's emitter, so every file reads as before. `tests/test_notes.py` holds the two to the
    same output."""
    if not _STYLES:
        import yaml

        plain = {"allow_unicode": True, "width": float("inf"), "sort_keys": False, "Dumper": yaml.SafeDumper}
        fast = ({**plain, "width": 2**31 - 1, "Dumper": yaml.CSafeDumper} if getattr(yaml, "__with_libyaml__", False)
                else plain)
        _STYLES[:] = [plain, fast]
    return _STYLES


def _ascii(value: Any) -> bool:
    if isinstance(value, str):
        return value.isascii() and value.isprintable()
    if isinstance(value, list):
        return all(_ascii(v) for v in value)
    if isinstance(value, dict):
        return all(_ascii(k) and _ascii(v) for k, v in value.items())
    return True


def _dump(value: Any, **style: Any) -> str:
    import yaml

    plain, fast = _styles()
    return str(yaml.dump(value, **style, **(fast if _ascii(value) else plain)))  # type: ignore[call-overload]


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = _dump(value)
    if text.endswith("\n...\n"):
        text = text[: -len("\n...\n")]
    return text.rstrip("\n")


def _flow(value: Any) -> str:
    return _dump(value, default_flow_style=True).rstrip("\n")


def _emit(key: str, value: Any) -> list[str]:
    if isinstance(value, dict) and value:
        out = [f"{key}:"]
        for sub, subvalue in value.items():
            rendered = _flow(subvalue) if isinstance(subvalue, (list, dict)) else _scalar(subvalue)
            out.append(f"  {sub}: {rendered}")
        return out
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return [f"{key}:"] + [f"  - {_flow(item)}" for item in value]
    if isinstance(value, list):
        return [f"{key}: {_flow(value)}"]
    return [f"{key}: {_scalar(value)}"]


def emit(meta: dict[str, Any]) -> str:
    """YAML lines for `meta` in its own order, each key as `serialize` writes it: the one emitter,
    also for another tool's front matter (a SKILL.md's)."""
    return "".join(line + "\n" for key, value in meta.items() for line in _emit(key, value))


def ordered_keys(meta: dict[str, Any]) -> list[str]:
    """Known keys in the format's order, then unknown keys in their own order."""
    known = [k for k in spec.KEY_ORDER if k in meta]
    return known + [k for k in meta if k not in spec.KEY_ORDER]


def serialize(note: Note) -> str:
    """The canonical text of a memory: fixed key order, quoted ambiguous scalars, one final newline."""
    lines = [FENCE]
    for key in ordered_keys(note.meta):
        lines.extend(_emit(key, note.meta[key]))
    lines.append(FENCE)
    body = note.body.replace("\r\n", "\n").rstrip("\n")
    text = "\n".join(lines) + "\n"
    return text + body + "\n" if body else text


def write(note: Note, path: str) -> None:
    """Write a memory atomically (temp file + rename) so a reader never sees half a file."""
    text = serialize(note)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    os.replace(tmp, path)


def today() -> str:
    return _dt.date.today().isoformat()


def new_note(**fields: Any) -> Note:
    """A note from keyword fields (`class_` for `class`); drops None and empty lists."""
    body = str(fields.pop("body", "") or "")
    meta: dict[str, Any] = {}
    for key, value in fields.items():
        key = "class" if key == "class_" else key
        if value is None or value == [] or value == "":
            continue
        meta[key] = value
    meta.setdefault("created", today())
    return Note({k: meta[k] for k in ordered_keys(meta)}, body)
