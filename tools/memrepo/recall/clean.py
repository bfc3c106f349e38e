"""A prompt reduced to the user's own words, and split into FTS5's tokens (stdlib only: runs
before every prompt).

Code blocks, stack traces and pasted logs are set apart from the user's own words (`split_prompt`);
image placeholders and blobs are removed; URLs become their meaningful host and path words.
`query` then picks the subject terms of each.
"""

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

MAX_INPUT_CHARS = 100_000
MAX_CLEAN_CHARS = 20_000

# Compiling one pattern costs 0.1-0.7 ms (re.I alone doubles it), more than a whole query,
# so none is compiled at import: each compiles on the first prompt that holds its trigger.
# Every pattern is linear: no nested unbounded quantifiers, so 1 MB of garbage cannot hang.
_SOURCES = {
    "placeholder": r"\[(?:[Ii]mage|[Pp]asted|[Ss]creenshot)\b[^\]\n]{0,80}\]",
    "url": r"\b(?:[A-Za-z][A-Za-z0-9+.-]{1,15}://|[Ww]{3}\.)[^\s<>\"'`|\\]+",
    "blob": r"[A-Za-z0-9+/_-]{16,}={0,2}",
    "frame": (
        r"(?::\d+:\d+\)?|:\d+\)|<anonymous>\)?|\(index \d+\)"
        r"|\((?:Native Method|Unknown Source|native)\))\s*$"
    ),
    "log": (
        r"\[?(?:\d{4}-\d\d-\d\d[T ]\d\d:\d\d|\d\d:\d\d:\d\d"
        r"|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d"
        r"|\[(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|CRITICAL"
        r"|trace|debug|info|notice|warn|warning|error|fatal|critical)\]"
        r"|(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|CRITICAL)(?::|[ \t]+[\[\d-]))"
    ),
}
_compiled: "dict[str, re.Pattern[str]]" = {}

_LOG_WORDS = frozenset(
    "TRACE DEBUG INFO NOTICE WARN WARNING ERROR FATAL CRITICAL "
    "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()
)
_CHAINED = ("During handling of the above exception", "The above exception was the direct cause")
_GENERIC_HOST_LABELS = frozenset("www www2 app m web en".split())
_SECOND_LEVEL = frozenset("co com org net gov ac edu".split())
_PAGE_EXTENSIONS = frozenset("html htm php asp aspx jsp cgi".split())

# Lowercase text -> tokens: every ASCII non-alphanumeric is a separator (as in unicode61),
# and Latin-1 accents fold without importing unicodedata.
_BASE_TABLE: dict[int, str] = {c: " " for c in range(128) if not chr(c).isalnum()}
_BASE_TABLE.update(
    (ord(ch), base)
    for base, chars in (("a", "àáâãäå"), ("c", "ç"), ("e", "èéêë"), ("i", "ìíîï"),
                        ("n", "ñ"), ("o", "òóôõö"), ("u", "ùúûü"), ("y", "ýÿ"))
    for ch in chars
)

def clean_prompt(prompt: str) -> str:
    """Keep only the user's own words, with whitespace collapsed to single spaces.

    Removes fenced code blocks, stack traces, pasted log lines, image/paste placeholders and
    long hex/base64 blobs; replaces URLs by their meaningful host and path words. Inline
    `code spans` stay. Reads at most MAX_INPUT_CHARS and returns at most MAX_CLEAN_CHARS.
    """
    return split_prompt(prompt)[0]


def split_prompt(prompt: str) -> tuple[str, str]:
    """The user's own words and, apart, what they pasted: fenced blocks, traces and log lines.

    Both come out as `clean_prompt` describes (URLs as their words, blobs and placeholders
    removed, whitespace collapsed). What was pasted is the most specific evidence many prompts
    have (an error string, a host, a column name: issue 36), so recall counts it, at a reduced
    weight; it is never the user's own words.
    """
    text = prompt[:MAX_INPUT_CHARS]
    if "<task-notification>" in text:
        text = task_notification(text)
    if HANDBACK_FRAME in text:
        text = subagent_handback(text)
    pasted: list[str] = []
    if "```" in text:
        # Even parts lie outside fences; an unclosed fence runs to the end, as in Markdown.
        parts = text.split("```")
        text = "\n".join(parts[::2])
        pasted.extend(_trace_words(line.strip()) for part in parts[1::2] for line in part.split("\n"))
    if "[" in text:
        low = text.lower()
        if "[image" in low or "[pasted" in low or "[screenshot" in low:
            text = _pattern("placeholder").sub(" ", text)
    text = _drop_pasted_lines(text, pasted)
    return _words(text), _words("\n".join(pasted))


def _words(text: str) -> str:
    if "://" in text or "www." in text.lower():
        text = _pattern("url").sub(_url_words, text)
    words = text.split()
    if any(_may_hold_blob(word) for word in words):
        words = _pattern("blob").sub(_drop_blob, " ".join(words)).split()
    return " ".join(words)[:MAX_CLEAN_CHARS]


NOTIFICATION_FRAME = 'Background command "'
HANDBACK_FRAME = "[Subagent hand-back]"
HANDBACK_START = "The report follows:"


def task_notification(text: str) -> str:
    """A Claude Code background-task notification, reduced to what the task was about.

    Claude Code sends the prompt `<task-notification><task-id>…</task-id><output-file>…
    </output-file><status>…</status><summary>Background command "<description>" completed (exit
    code 0)</summary></task-notification>` and a "Read the output file…" line when a background
    task ends: nobody typed it (issue 17). Only the description (and any detail after it) is
    the prompt's subject; ids, paths, the status and the frame around the description are the
    protocol's own words, never query terms.
    """
    out = []
    rest = text
    while "<task-notification>" in rest:
        before, _, rest = rest.partition("<task-notification>")
        out.append(before)
        body, _, rest = rest.partition("</task-notification>")
        summary = body.partition("<summary>")[2].partition("</summary>")[0]
        if summary.startswith(NOTIFICATION_FRAME):
            described, _, tail = summary[len(NOTIFICATION_FRAME):].partition('"')
            summary = described + " " + tail.partition(": ")[2]
        out.append(" " + summary + " ")
        lead = rest.lstrip()
        if lead.startswith("Read the output file"):
            rest = lead.partition("\n")[2]
    out.append(rest)
    return "".join(out)


def subagent_handback(text: str) -> str:
    """A Claude Code subagent hand-back, reduced to the subagent's report.

    Claude Code frames a delegated subagent's final report as `[Subagent hand-back] The text
    below is the final report of a subagent … The report follows:`, the report with every line
    indented, then `agentId: … (use SendMessage with to: '…', summary: '<5-10 word recap>' to
    continue this agent)` and a `<usage>subagent_tokens: … tool_uses: … duration_ms: …</usage>`
    block (tests/fixtures/claude-code, line 33 of the mock session). Nobody typed it (issue 17):
    the frame's own words (authority, harness, report, session, agent, tokens) are never query
    terms; what the report says is, and the text before the frame.
    """
    before, _, rest = text.partition(HANDBACK_FRAME)
    head, found, report = rest.partition(HANDBACK_START)
    if not found:
        return before + " " + head.partition("\n")[2]  # a frame cut short: only what follows its first line
    kept = []
    for line in report.split("\n"):
        if line[:1] in (" ", "\t"):
            kept.append(line)
        elif line.strip() and not line.startswith(("agentId:", "<usage>", "tool_uses:", "duration_ms:", "subagent_tokens:")):
            kept.append(line)  # a line at column zero the frame did not write (e.g. a note after the block)
    out = " ".join(kept)
    if "<usage>" in out:
        out = out.partition("<usage>")[0]
    return before + " " + out


def tokenize(text: str) -> list[str]:
    """Lowercase words split the way FTS5 unicode61 (remove_diacritics 2) splits them.

    Everything but letters and digits separates words (so `_ . / -` do), and diacritics
    are removed from Latin letters: 'Gonçalo' -> 'goncalo'. Emoji are separators.
    """
    text = text.lower()
    if text.isascii():
        return text.translate(_BASE_TABLE).split()
    return text.translate(_unicode_table(text)).split()


def _pattern(name: str) -> "re.Pattern[str]":
    pattern = _compiled.get(name)
    if pattern is None:
        import re  # only for prompts that hold a pattern's trigger: most never load it

        pattern = _compiled[name] = re.compile(_SOURCES[name])
    return pattern


def _drop_pasted_lines(text: str, pasted: "list[str] | None" = None) -> str:
    """Drop stack-trace and log lines, and the indented lines that continue them (into `pasted`)."""
    kept: list[str] = []
    continuing = False
    for line in text.split("\n"):
        stripped = line.lstrip()
        if continuing and stripped and len(stripped) < len(line):
            if pasted is not None:
                pasted.append(line)
            continue
        kind = _pasted_kind(stripped)
        continuing = bool(kind)
        if kind is None:
            kept.append(line)
        elif pasted is not None:
            pasted.append(_trace_words(stripped))
    return "\n".join(kept)


def _trace_words(line: str) -> str:
    """What a pasted line says beyond its frame: a trace's header says nothing, a `File "x.py",
    line 3, in f` frame says its file and function."""
    if line.startswith(("Traceback (most recent call last)",) + _CHAINED):
        return ""
    if line.startswith('File "') and '", line ' in line:
        path, _, rest = line[6:].partition('", line ')
        return path + " " + rest.partition(" in ")[2]
    return line


def _pasted_kind(line: str) -> bool | None:
    """None for the user's own line, else whether indented lines after it belong to it."""
    if not line:
        return None
    if line.startswith("Traceback (most recent call last)"):
        return True
    if line.startswith('File "') and '", line ' in line:
        return True
    if line.startswith(_CHAINED) or (line.startswith("... ") and line.rstrip().endswith(" more")):
        return False
    if len(line) >= 3 and not line.strip("^~ \t\r"):
        return False
    if line.startswith("at ") and _pattern("frame").search(line):
        return False
    head = line[0]
    if head.isdigit() or head == "[" or line.split(None, 1)[0].rstrip(":") in _LOG_WORDS:
        if _pattern("log").match(line):
            return True
    return None


def _url_words(match: "re.Match[str]") -> str:
    url = match.group(0).rstrip(".,;:!?)]}")
    rest = url.split("://", 1)[-1].split("?", 1)[0].split("#", 1)[0]
    host, _, path = rest.partition("/")
    words = _host_words(host.rpartition("@")[2].partition(":")[0].lower())
    for segment in path.split("/"):
        if "%" in segment:
            pieces = segment.split("%")
            segment = " ".join([pieces[0]] + [piece[2:] for piece in pieces[1:]])
        words.extend(
            part for part in tokenize(segment)
            if part not in _PAGE_EXTENSIONS and not _is_id(part)
        )
    return " " + " ".join(words) + " "


def _host_words(host: str) -> list[str]:
    labels = [label for label in host.split(".") if label]
    if not labels or all(label.isdigit() for label in labels):
        return []
    if len(labels) > 1:
        labels.pop()
    if len(labels) > 1 and labels[-1] in _SECOND_LEVEL:
        labels.pop()
    return [label for label in labels if label not in _GENERIC_HOST_LABELS]


def _is_id(part: str) -> bool:
    """Ids and hashes in URL paths: long digit runs, hex, letter/digit jumbles."""
    if part.isdigit():
        return len(part) > 6
    if len(part) > 32 or (len(part) >= 7 and _is_hex(part) and not part.isalpha()):
        return True
    switches = sum(1 for a, b in zip(part, part[1:]) if a.isdigit() != b.isdigit())
    return len(part) >= 8 and switches >= 3


def _is_hex(text: str) -> bool:
    return not text.strip("0123456789abcdefABCDEF")


def _may_hold_blob(word: str) -> bool:
    # Blobs nearly always hold a digit; the gate spares most prompts compiling "blob".
    return len(word) >= 100 or (len(word) >= 16 and any(ch.isdigit() for ch in word))


def _drop_blob(match: "re.Match[str]") -> str:
    blob = match.group(0)
    core = blob.rstrip("=").replace("-", "")
    if len(core) >= 12 and _is_hex(core) and not core.isalpha() and not core.isdigit():
        return " "
    if len(blob) >= 100:
        return " "
    if len(blob) >= 32:
        digits = sum(ch.isdigit() for ch in blob)
        upper = sum(ch.isupper() for ch in blob)
        if digits >= 2 and upper >= 3 and len(blob) - digits - upper >= 3:
            return " "
    return blob


def _unicode_table(text: str) -> dict[int, str]:
    """The translate table extended for this text's non-ASCII characters."""
    table = dict(_BASE_TABLE)
    latin: list[str] = []
    for ch in set(text):
        code = ord(ch)
        if code < 128 or code in table:
            continue
        if 0x300 <= code <= 0x36F:
            table[code] = ""  # a combining diacritic: remove_diacritics drops it
        elif not ch.isalnum():
            table[code] = " "
        elif 0x100 <= code <= 0x24F or 0x1E00 <= code <= 0x1EFF:
            latin.append(ch)
    if latin:
        # Loaded only for Latin letters beyond Latin-1, which keeps it off most prompts.
        import unicodedata

        for ch in latin:
            base = unicodedata.normalize("NFD", ch)[0]
            if base.isascii():
                table[ord(ch)] = base
    return table
