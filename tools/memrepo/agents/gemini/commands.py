"""Gemini CLI's custom commands, recognised in the prompt its BeforeAgent hook receives.

Gemini CLI 0.61 sends the hook a custom command's expanded template, not the `/name args` the
user typed (tests/fixtures/prompt-frames/gemini-0.61.0.jsonl): `.gemini/commands/notes.toml`
with `prompt = "Summarise the notes about {{args}} in three bullet points."` arrives as
"Summarise the notes about the build system in three bullet points." for `/notes the build
system`; a template without `{{args}}` arrives with "\n\n/name args" appended; `!{…}` is replaced
by a command's output and `@{…}` by a file's. The template is the command author's words and the
output the machine's, so recall reads only the arguments.

The command files are the ones the session can read: `.gemini/commands/` in the prompt's folder
or any folder above it, and `~/.gemini/commands/`, each searched to a bounded depth, with at most
MAX_FILES files of at most MAX_BYTES each (stdlib only: the prompt path; `os`, `re` and `tomllib`
are loaded only when a commands folder exists: every Gemini prompt runs `folders`, and `os` with
`re` cost it 1.2x a bare interpreter start, issue 44).
"""

from memrepo.base import _fast

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

MAX_FILES = 200
MAX_BYTES = 64 * 1024
MAX_DEPTH = 4
MAX_UP = 40
_HOLE = r"\{\{args\}\}|!\{[^}]*\}|@\{[^}]*\}"


def _isdir(path: str) -> bool:
    try:
        return (_fast.stat(path).st_mode & 0o170000) == 0o040000
    except (OSError, ValueError):
        return False


def folders(cwd: "str | None", home: "str | None") -> "list[str]":
    """The commands folders a session in `cwd` reads, nearest first."""
    out = []
    cur = _fast.abspath(cwd) if cwd else ""
    for _ in range(MAX_UP):
        if not cur:
            break
        found = _fast.join(cur, ".gemini", "commands")
        if _isdir(found):
            out.append(found)
        parent = _fast.dirname(cur)
        if parent == cur:
            break
        cur = parent
    if home:
        user = _fast.join(home, ".gemini", "commands")
        if _isdir(user) and user not in out:
            out.append(user)
    return out


def templates(folder: str) -> "list[str]":
    """The `prompt` of each command file under `folder` (bounded; unreadable files skipped)."""
    import os

    out: list[str] = []
    count = 0
    for root, dirs, files in os.walk(folder):
        if root[len(folder):].count(os.sep) >= MAX_DEPTH:
            dirs[:] = []
        for name in sorted(files):
            if not name.endswith(".toml"):
                continue
            count += 1
            if count > MAX_FILES:
                return out
            text = _prompt_of(os.path.join(root, name))
            if text:
                out.append(text)
    return out


def _prompt_of(path: str) -> "str | None":
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            return None
        text = data.decode("utf-8")
        try:
            import tomllib  # type: ignore[import-not-found,unused-ignore]  # Python 3.11+
        except ImportError:
            return _plain_prompt(text)
        value = tomllib.loads(text).get("prompt")
    except (OSError, ValueError):  # tomllib.TOMLDecodeError is a ValueError
        return None
    return value if isinstance(value, str) else None


_STRING = r'^prompt\s*=\s*(?:"""(.*?)"""|\'\'\'(.*?)\'\'\'|"((?:[^"\\\n]|\\.)*)"|\'([^\'\n]*)\')'
_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


def _plain_prompt(text: str) -> "str | None":
    """`prompt = …` of a command file without tomllib (Python 3.10): a basic or literal string,
    on one line or in triple quotes; None for anything else."""
    import re

    found = re.search(_STRING, text, re.S | re.M)
    if found is None:
        return None
    basic, literal_multi, basic_line, literal = found.groups()
    if literal_multi is not None or literal is not None:
        return (literal_multi if literal_multi is not None else literal).removeprefix("\n")
    raw = (basic if basic is not None else basic_line).removeprefix("\n")
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), raw)


def _pattern(template: str) -> "re.Pattern[str] | None":
    """A pattern of the template expanded: its words as they are (any run of spaces as any
    other), each hole as any text, and for a template without `{{args}}` the line Gemini
    appends, "/name args"."""
    import re

    chunks = re.split(_HOLE, template)
    holes = re.findall(_HOLE, template)
    if not "".join(chunks).strip():
        return None  # a template of holes alone would match anything
    parts = [r"\s*"]
    for i, chunk in enumerate(chunks):
        words = chunk.split()
        if words:
            parts.append(r"\s*" + r"\s+".join(re.escape(w) for w in words) + r"\s*")
        if i < len(holes):
            parts.append("(?P<args>.*?)" if holes[i] == "{{args}}" and "(?P<args>" not in "".join(parts) else "(?:.*?)")
    if "{{args}}" not in holes:
        parts.append(r"(?:/\S+(?:[ \t]+(?P<args>.*?))?)?")
    parts.append(r"\s*")
    return re.compile("".join(parts), re.S)


def arguments(prompt: str, template: str) -> "str | None":
    """What the user typed as the arguments, when `prompt` is `template` expanded; else None."""
    pattern = _pattern(template)
    found = pattern.fullmatch(prompt) if pattern else None
    if found is None:
        return None
    return (found.group("args") or "").strip()


def typed_part(prompt: str, cwd: "str | None", home: "str | None") -> "str | None":
    """The arguments of the custom command `prompt` expands, or None when it expands none."""
    for folder in folders(cwd, home):
        for template in templates(folder):
            found = arguments(prompt, template)
            if found is not None:
                return found
    return None
