"""Find and redact secret-looking strings (stdlib only: runs in the git pre-commit hook).

Patterns begin with a literal (the regex engine skips to candidates), reject a start inside a
longer token with a lookbehind, and use bounded quantifiers over classes that exclude their
terminators, so a scan stays linear: 1 MB of adversarial text takes well under a second.
"""

from __future__ import annotations

import bisect
import math
import re

# `typing` stays unloaded at runtime; mypy treats this name as always true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

ALLOW_MARKER = "memrepo: allow-secret"

# Values shorter than this in a `password=`-style assignment are never judged secret.
MIN_GENERIC_LEN = 12
MIN_GENERIC_ENTROPY = 3.0
MAX_PEM_BYTES = 65536

# A token must not continue a longer run of token or base64 characters on either side.
_BEFORE = "[A-Za-z0-9_+/-]"
_AFTER = r"(?![A-Za-z0-9_+/-])"

# (kind, prefix, rest, preview prefix length). Each pattern starts with its fixed-width
# prefix so the regex engine jumps from candidate to candidate; the left boundary is a
# lookbehind *after* the prefix (a leading one would make the engine try every position).
_TOKEN_PATTERNS: tuple[tuple[str, str, str, int], ...] = (
    ("anthropic-key", "sk-ant-", "[A-Za-z0-9_-]{20,250}", 7),
    ("openai-key", "sk-", "(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,250}", 8),
    ("openai-key", "sk-", "[A-Za-z0-9]{32,200}", 3),
    ("github-token", "gh[pousr]_", "[A-Za-z0-9]{36,251}", 4),
    ("github-token", "github_pat_", "[A-Za-z0-9_]{40,244}", 11),
    ("gitlab-token", "glpat-", "[A-Za-z0-9_-]{20,64}", 6),
    ("slack-token", "xox[abeoprs]-", "[A-Za-z0-9-]{10,250}", 5),
    ("slack-token", "xapp-", "[A-Za-z0-9-]{10,250}", 5),
    ("stripe-key", "[rs]k_live_", "[A-Za-z0-9]{16,247}", 8),
    ("google-api-key", "AIza", "[A-Za-z0-9_-]{35}", 4),
    ("npm-token", "npm_", "[A-Za-z0-9]{36}", 4),
    ("doppler-token", r"dp\.", r"(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{1,40}\.)?[A-Za-z0-9]{40,64}", 6),
    ("aws-access-key-id", "A[KS]IA", "[A-Z0-9]{16}", 4),
    ("jwt", "eyJ", r"[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,16384}\.[A-Za-z0-9_-]{10,4096}", 3),
)
_TOKENS = tuple(
    (kind, re.compile(f"{prefix}(?<!{_BEFORE}{prefix}){rest}{_AFTER}"), keep)
    for kind, prefix, rest, keep in _TOKEN_PATTERNS
)

# Matched against an ASCII-lowercased copy of the text (same offsets), so the engine can
# jump to keyword candidates; case-insensitive alternation is several times slower.
_SECRET_WORDS = (
    r"passw(?:or)?d|passphrase|pwd|secret|token|api[_.-]?key|apikey|access[_.-]?key"
    r"|private[_.-]?key|credentials?"
)
# A key holding a secret word, a separator, then a quoted or a bare value on the same line.
# `(?=(?P<sfx>…))(?P=sfx)` is an atomic group: the rest of the key is never backtracked.
_ASSIGNMENT = re.compile(
    r"(?:" + _SECRET_WORDS + r")(?=(?P<sfx>[a-z0-9_.-]{0,40}))(?P=sfx)"
    r"[\"']?[ \t]{0,8}(?::=|=>|[:=])[ \t]{0,8}"
    r"(?:\"(?P<dq>[^\"\n]{1,512})\"|'(?P<sq>[^'\n]{1,512})'|(?P<v>[^\s\"'`,;()<>&]{1,512}))"
)
_BEARER = re.compile(r"bearer[ \t]{1,8}(?P<v>[a-z0-9._~+/-]{12,2048}=*)")
_AWS_SECRET_VALUE = re.compile(r"[A-Za-z0-9/+]{40}")

_URL_CREDENTIALS = re.compile(
    r"://(?P<user>[^\s:/?#@\[\]\"'<>]{0,128}):(?P<v>[^\s/?#@\[\]\"'<>]{1,256})@(?=[A-Za-z0-9\[])"
)

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

_PEM_MARKER = re.compile(r"-----(BEGIN|END) [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
# An unterminated block (a truncated paste) still covers its header and base64 lines.
_PEM_BODY = re.compile(r"(?:[ \t]*\r?\n(?:[A-Za-z-]{1,40}: [^\n]{1,200}|[A-Za-z0-9+/=]{16,128}))+")
_PEM_BASE64 = re.compile(r"[A-Za-z0-9+/]{16}")

_PLACEHOLDER_WORDS = (
    "changeme",
    "change_me",
    "example",
    "placeholder",
    "redacted",
    "dummy",
    "xxxx",
    "****",
    "....",
    "your_",
    "your-",
    "1password",
)
_RANDOM_RUN = re.compile(r"[A-Za-z0-9]{8,}")


def find_secrets(text: str) -> list[tuple[int, str, str]]:
    """Return (1-based line, kind, masked preview) for each secret-looking string in `text`.

    Lines carrying ALLOW_MARKER are skipped; a private-key block counts as on its BEGIN line.
    """
    found = _scan(text)
    if not found:
        return []
    newlines = [m.start() for m in re.finditer("\n", text)]
    return [
        (bisect.bisect_left(newlines, start) + 1, kind, preview)
        for start, _end, kind, preview in found
    ]


def redact(text: str) -> str:
    """Replace each secret in `text` with `[REDACTED:<kind>]` (whole PEM blocks); idempotent."""
    found = _scan(text)
    if not found:
        return text
    out = []
    pos = 0
    for start, end, kind, _preview in found:
        out.append(text[pos:start])
        out.append("[REDACTED:" + kind + "]")
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _scan(text: str) -> list[tuple[int, int, str, str]]:
    """All accepted findings as (start, end, kind, preview), sorted, without overlaps.

    Sources run from most to least specific; a later finding overlapping an accepted one is
    dropped, so `password = ghp_…` is a github-token and not a generic assignment.
    """
    allowed = _allowed_lines(text)
    starts: list[int] = []
    accepted: list[tuple[int, int, str, str]] = []
    for start, end, kind, preview in _candidates(text):
        i = bisect.bisect_right(starts, start)
        if i and accepted[i - 1][1] > start:
            continue
        if i < len(accepted) and accepted[i][0] < end:
            continue
        if _is_allowed(allowed, start):
            kind = ""  # still claims its span: nothing inside an allowed secret is reported
        starts.insert(i, start)
        accepted.insert(i, (start, end, kind, preview))
    return [finding for finding in accepted if finding[2]]


def _candidates(text: str) -> Iterator[tuple[int, int, str, str]]:
    yield from _pem_blocks(text)
    yield from _tokens(text)
    for m in _URL_CREDENTIALS.finditer(text):
        user, value = m.group("user"), m.group("v")
        # Same user and password is a local default (postgres:postgres@localhost), not a leak.
        if value != user and value != "password" and not _is_placeholder(value):
            yield m.start("v"), m.end("v"), "url-credentials", _mask(value, 0)
    low = text.lower() if text.isascii() else text.translate(_ASCII_LOWER)
    for m in _BEARER.finditer(low):
        value = text[m.start("v") : m.end("v")]
        if looks_random(value):
            yield m.start("v"), m.end("v"), "bearer-token", _mask(value, 0)
    for m in _ASSIGNMENT.finditer(low):
        yield from _assignment(text, low, m)


def _tokens(text: str) -> Iterator[tuple[int, int, str, str]]:
    for kind, pattern, keep in _TOKENS:
        for m in pattern.finditer(text):
            if not m.group().endswith("EXAMPLE"):  # AWS's documentation keys
                yield m.start(), m.end(), kind, _mask(m.group(), keep)


def _assignment(text: str, low: str, m: re.Match[str]) -> Iterator[tuple[int, int, str, str]]:
    group = m.lastgroup or "v"  # the value group always closes last
    start, end = m.start(group), m.end(group)
    value = text[start:end]
    if group == "v":  # a bare value ending a sentence keeps its full stop
        value = value.rstrip(".")
        end = start + len(value)
    key = low[max(0, m.start() - 8) : m.end("sfx")]
    aws_name = "secret" in key and ("aws" in key or "access" in key)
    if aws_name and _AWS_SECRET_VALUE.fullmatch(value):
        if "EXAMPLE" not in value:  # AWS's documentation keys
            yield start, end, "aws-secret-access-key", _mask(value, 0)
    elif looks_random(value):
        yield start, end, "secret-assignment", _mask(value, 0)


def _pem_blocks(text: str) -> Iterator[tuple[int, int, str, str]]:
    markers = list(_PEM_MARKER.finditer(text))
    for i, m in enumerate(markers):
        if m.group(1) != "BEGIN":
            continue
        header = m.group().strip("-")
        nxt = markers[i + 1] if i + 1 < len(markers) else None
        if nxt and nxt.group(1) == "END" and nxt.start() - m.end() <= MAX_PEM_BYTES:
            if _PEM_BASE64.search(text, m.end(), nxt.start()):
                yield m.start(), nxt.end(), "private-key", header + "…"
            continue
        body = _PEM_BODY.match(text, m.end())
        if body and _PEM_BASE64.search(text, body.start(), body.end()):
            yield m.start(), body.end(), "private-key", header + "…"


def looks_random(value: str) -> bool:
    """True for a value that reads like a generated secret rather than a word or a reference.

    It must be long, not a placeholder or a path, hold a run of 8+ letters and digits that
    mixes both (what passwords and keys have and names, versions and paths lack), and have a
    Shannon entropy of at least MIN_GENERIC_ENTROPY bits per character.
    """
    if len(value) < MIN_GENERIC_LEN or _is_placeholder(value):
        return False
    if value[0] in "/~." or "://" in value:
        return False
    if not any(_mixed(run) for run in _RANDOM_RUN.findall(value)):
        return False
    return shannon_entropy(value) >= MIN_GENERIC_ENTROPY


def shannon_entropy(value: str) -> float:
    """Shannon entropy of `value` in bits per character (0.0 for an empty string)."""
    if not value:
        return 0.0
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in map(value.count, set(value)))


def _mixed(run: str) -> bool:
    """A run of ASCII letters and digits holding both."""
    return not run.isdigit() and not run.isalpha()


def _is_placeholder(value: str) -> bool:
    low = value.lower()
    if not low or low[0] in "<${%[*" or "{{" in low:
        return True
    return any(word in low for word in _PLACEHOLDER_WORDS)


def _mask(secret: str, keep: int) -> str:
    """`ghp_…a1b2`: the well-known prefix, an ellipsis, and the last 4 characters if long."""
    tail = secret[-4:] if len(secret) - keep >= 12 else ""
    return secret[:keep] + "…" + tail


def _allowed_lines(text: str) -> tuple[list[int], list[int]]:
    """Start and end offsets of the lines carrying ALLOW_MARKER, in order."""
    starts: list[int] = []
    ends: list[int] = []
    pos = text.find(ALLOW_MARKER)
    while pos >= 0:
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        starts.append(text.rfind("\n", 0, pos) + 1)
        ends.append(end)
        pos = text.find(ALLOW_MARKER, end)
    return starts, ends


def _is_allowed(lines: tuple[list[int], list[int]], offset: int) -> bool:
    i = bisect.bisect_right(lines[0], offset) - 1
    return i >= 0 and offset <= lines[1][i]
