"""Find and redact secret-looking strings, standard library only (the formats are in
`token_formats`; the write path adds detect-secrets' catalogue in `catalogue`).

A secret is a provider token in its published format (over a hundred formats, after the
catalogues of gitleaks and detect-secrets), a private-key block, a password in a URL or a
bearer header, or a random-looking value after a secret word: in an assignment
(`password=…`) or in prose ("the password is …").

Patterns begin with a literal (the regex engine skips to candidates, and a text without the
literal skips the pattern), reject a start inside a longer token with a lookbehind, and use
bounded quantifiers over classes that exclude their terminators, so a scan stays linear: 1 MB
of ordinary or adversarial text takes a fraction of a second, under one even when every line
holds a secret.
"""

from __future__ import annotations

import math
import re

from memrepo.format.token_formats import TOKENS as _TOKENS

# `typing` stays unloaded at runtime; mypy treats this name as always true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    # More findings to merge with this module's: (start, end, kind, preview) for a text.
    Extra = Callable[[str], Iterable[tuple[int, int, str, str]]]

ALLOW_MARKER = "memrepo: allow-secret"

# Values shorter than this in a `password=`-style assignment are never judged secret.
MIN_GENERIC_LEN = 12
MIN_GENERIC_ENTROPY = 3.0
MAX_PEM_BYTES = 65536

# Every pattern here is compiled on first use, and only searched where its literal is in the text
# (the secret words, `bearer`, `://`, `-----`): an ordinary memory compiles few (issue 44).
_COMPILED: dict[str, re.Pattern[str]] = {}
# One of these is in every match of _ASSIGNMENT and _PROSE (each a piece of a secret word).
_SECRET_NEEDLES = ("pass", "pwd", "secret", "token", "key", "credential")


def _rx(source: str) -> re.Pattern[str]:
    return _COMPILED.get(source) or _COMPILED.setdefault(source, re.compile(source))


# Matched against an ASCII-lowercased copy of the text (same offsets), so the engine can
# jump to keyword candidates; case-insensitive alternation is several times slower.
_SECRET_WORDS = (
    r"passw(?:or)?d|passphrase|pwd|secret|token|api[_.-]?key|apikey|access[_.-]?key"
    r"|private[_.-]?key|credentials?|(?<![a-z])key(?![a-z])"
)
# A bare value may hold `&` (a password does) unless it starts the next `name=` of a query string.
_BARE = r"(?:[^\s\"'`,;()<>&{stop}]|&(?![a-z_][a-z0-9_.-]{{0,40}}=))"
# A key holding a secret word, a separator, then a quoted or a bare value on the same line.
# `(?=(?P<sfx>…))(?P=sfx)` is an atomic group: the rest of the key is never backtracked.
_ASSIGNMENT = (
    r"(?:" + _SECRET_WORDS + r")(?=(?P<sfx>[a-z0-9_.-]{0,40}))(?P=sfx)"
    r"[\"']?[ \t]{0,8}(?::=|=>|[:=])[ \t]{0,8}"
    r"(?:\"(?P<dq>[^\"\n]{1,512})\"|'(?P<sq>[^'\n]{1,512})'|(?P<v>" + _BARE.format(stop="") + r"{1,512}))"
)
# The same words in prose: "with password X", "the password is X", "token set to `X`",
# "**Password:** X" — the word, up to four fillers or separators, then the value. A bare value
# is at least MIN_GENERIC_LEN long here, so a short word after the keyword is not consumed.
_PROSE = (
    # Not inside a word: "1Password" names a vault, and `1Password "Backups age key"` names an
    # item in it (two memories of the tuning set lost those words to the index, issue 38).
    r"(?<![a-z0-9])(?P<word>passw(?:or)?d|passphrase|passcode|pwd|secret|token|api[ _.-]?key|apikey"
    r"|access[ _.-]?key|private[ _.-]?key|credentials?|(?<![a-z])key)s?(?![a-z0-9])[*_]{0,2}"
    r"(?:[ \t]{0,4}[:=][*_]{0,2}|[ \t]{1,4}(?:is|was|of|to|set|now|be|been|has|changed|-)(?![a-z0-9])){0,4}"
    r"[ \t]{1,4}\*{0,2}"
    r"(?:`(?P<bq>[^`\n]{1,512})`|\"(?P<dq>[^\"\n]{1,512})\"|'(?P<sq>[^'\n]{1,512})'"
    r"|(?P<v>" + _BARE.format(stop="*") + "{" + str(MIN_GENERIC_LEN) + r",512}))"
)
_BEARER = r"bearer[ \t]{1,8}(?P<v>[a-z0-9._~+/-]{12,2048}=*)"
_AWS_SECRET_VALUE = r"[A-Za-z0-9/+]{40}"

_URL_CREDENTIALS = (
    r"://(?P<user>[^\s:/?#@\[\]\"'<>]{0,128}):(?P<v>[^\s/?#@\[\]\"'<>]{1,256})@(?=[A-Za-z0-9\[])"
)

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

_PEM_MARKER = r"-----(BEGIN|END) [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
# An unterminated block (a truncated paste) still covers its header and base64 lines, their
# line breaks written out (`\n` in a JSON string or a .env value) or not.
_PEM_BODY = r"(?:[ \t]*(?:\r?\n|\\(?:r\\)?n)(?:[A-Za-z-]{1,40}: [^\n\\]{1,200}|[A-Za-z0-9+/=]{16,128}))+"
_PEM_BASE64 = r"[A-Za-z0-9+/]{16}"

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
_RANDOM_RUN = r"[A-Za-z0-9]{8,}"
# A name or a dotted path to one: what a password assignment refers to rather than holds.
_REFERENCE = r"[A-Za-z_][A-Za-z0-9_]*(?:[.:-][A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?"


def find_secrets(text: str, extra: Extra | None = None) -> list[tuple[int, str, str]]:
    """Return (1-based line, kind, masked preview) for each secret-looking string in `text`.

    Lines carrying ALLOW_MARKER are skipped; a private-key block counts as on its BEGIN line.
    `extra` adds another detector's findings (`memrepo.format.catalogue`), after this module's.
    """
    found = _scan(text, extra)
    if not found:
        return []
    import bisect

    newlines = [m.start() for m in re.finditer("\n", text)]
    return [
        (bisect.bisect_left(newlines, start) + 1, kind, preview)
        for start, _end, kind, preview in found
    ]


def redact(text: str, extra: Extra | None = None) -> str:
    """Replace each secret in `text` with `[REDACTED:<kind>]` (whole PEM blocks); idempotent.
    `extra` as for `find_secrets`."""
    found = _scan(text, extra)
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


def _scan(text: str, extra: Extra | None = None) -> list[tuple[int, int, str, str]]:
    """All accepted findings as (start, end, kind, preview), sorted, without overlaps.

    Sources run from most to least specific; a later finding overlapping an accepted one is
    dropped, so `password = ghp_…` is a github-token and not a generic assignment.
    """
    allowed = _allowed_lines(text)
    starts: list[int] = []
    accepted: list[tuple[int, int, str, str]] = []
    for start, end, kind, preview in _candidates(text, extra):
        # Imported here: an ordinary text has no candidate, and loading `bisect`'s C module
        # cost ~0.7 M instructions of a waiting `memrepo add` (issue 44).
        import bisect

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


def _candidates(text: str, extra: Extra | None = None) -> Iterator[tuple[int, int, str, str]]:
    yield from _candidates_here(text)
    if extra is not None:
        yield from extra(text)


def _candidates_here(text: str) -> Iterator[tuple[int, int, str, str]]:
    yield from _pem_blocks(text)
    yield from _tokens(text)
    for m in _rx(_URL_CREDENTIALS).finditer(text) if "://" in text else ():
        user, value = m.group("user"), m.group("v")
        # Same user and password is a local default (postgres:postgres@localhost), not a leak.
        if value != user and value != "password" and not _is_placeholder(value):
            yield m.start("v"), m.end("v"), "url-credentials", _mask(value, 0)
    low = text.lower() if text.isascii() else text.translate(_ASCII_LOWER)
    for m in _rx(_BEARER).finditer(low) if "bearer" in low else ():
        value = text[m.start("v") : m.end("v")]
        if looks_random(value):
            yield m.start("v"), m.end("v"), "bearer-token", _mask(value, 0)
    if not any(needle in low for needle in _SECRET_NEEDLES):
        return
    judged: set[int] = set()  # where an assignment's value starts: prose need not judge it again
    for m in _rx(_ASSIGNMENT).finditer(low):
        start, end, value = _value(text, m)
        judged.add(start)
        yield from _assignment(low, m, start, end, value)
    for m in _rx(_PROSE).finditer(low):
        start, end, value = _value(text, m)
        # After "password" a value is one; after "token" or "secret" it may name a thing.
        if start in judged:
            continue
        password = m.group("word").startswith("pass")
        if password and looks_like_password(value) or looks_random(value) and not _identifier_like(value):
            yield start, end, "secret-in-prose", _mask(value, 0)


def _tokens(text: str) -> Iterator[tuple[int, int, str, str]]:
    for kind, source, keep, needles in _TOKENS:
        for needle in needles:
            if needle in text:
                break
        else:
            continue
        pattern = _rx(source)
        value, lead = "v" in pattern.groupindex, "lead" in pattern.groupindex
        for m in pattern.finditer(text):
            start, end = m.span("v") if value else m.span()
            start = m.start("lead") if lead else start
            token = text[start:end].rstrip(".")  # a full stop ends the sentence, not the token
            if _is_placeholder(token):
                continue  # AWS's documentation keys (…EXAMPLE), `sk_test_xxxx…`
            yield start, start + len(token), kind, _mask(token, keep)


def _value(text: str, m: re.Match[str]) -> tuple[int, int, str]:
    """The start, end and text of the value an assignment or a prose match captured."""
    group = m.lastgroup or "v"  # the value group always closes last
    start, end = m.start(group), m.end(group)
    value = text[start:end]
    if group == "v":  # a bare value ending a sentence keeps its full stop
        value = value.rstrip(".")
        end = start + len(value)
    return start, end, value


def _assignment(
    low: str, m: re.Match[str], start: int, end: int, value: str
) -> Iterator[tuple[int, int, str, str]]:
    key = _name(low, m.start(), m.end("sfx"))
    aws_name = "secret" in key and ("aws" in key or "access" in key)
    if aws_name and _rx(_AWS_SECRET_VALUE).fullmatch(value):
        if "EXAMPLE" not in value:  # AWS's documentation keys
            yield start, end, "aws-secret-access-key", _mask(value, 0)
    elif "public" in key or "pub_" in key:
        return  # a public key (`PUBLIC_KEY=`, `ssh_pub_key:`) is meant to be shared
    elif looks_random(value) or "pass" in key and looks_like_password(value):
        yield start, end, "secret-assignment", _mask(value, 0)


_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.-")


def _name(low: str, start: int, end: int) -> str:
    """The whole name an assignment's secret word is part of (at most 40 characters before it)."""
    first = start
    while first > max(0, start - 40) and low[first - 1] in _NAME_CHARS:
        first -= 1
    return low[first:end]


def _pem_blocks(text: str) -> Iterator[tuple[int, int, str, str]]:
    markers = list(_rx(_PEM_MARKER).finditer(text)) if "-----" in text else []
    for i, m in enumerate(markers):
        if m.group(1) != "BEGIN":
            continue
        header = m.group().strip("-")
        nxt = markers[i + 1] if i + 1 < len(markers) else None
        if nxt and nxt.group(1) == "END" and nxt.start() - m.end() <= MAX_PEM_BYTES:
            if _rx(_PEM_BASE64).search(text, m.end(), nxt.start()):
                yield m.start(), nxt.end(), "private-key", header + "…"
            continue
        body = _rx(_PEM_BODY).match(text, m.end())
        if body and _rx(_PEM_BASE64).search(text, body.start(), body.end()):
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
    if not any(_mixed(run) for run in _rx(_RANDOM_RUN).findall(value)):
        return False
    return shannon_entropy(value) >= MIN_GENERIC_ENTROPY


def looks_like_password(value: str) -> bool:
    """True for a value after a password word that reads like a chosen password: long, no
    placeholder or path, three of lowercase, uppercase, digits and symbols (`Tr0ub4dor&3x!`
    has no run of 8 letters and digits that `looks_random` asks of a generated key)."""
    if len(value) < MIN_GENERIC_LEN or _is_placeholder(value) or value[0] in "/~." or "://" in value:
        return False
    if _rx(_REFERENCE).fullmatch(value):
        return False  # `process.env.DB_PASSWORD`, `settings.DATABASE_PASSWORD_2024`
    classes = (any(c.islower() for c in value), any(c.isupper() for c in value),
               any(c.isdigit() for c in value), any(not c.isalnum() and c not in "._-" for c in value))
    return sum(classes) >= 3 and shannon_entropy(value) >= MIN_GENERIC_ENTROPY


# c·log2(c) for the character counts of values judged here (most are short): a lookup is
# several times faster than the arithmetic in a generator, and a page of secrets has many.
# Built when a value is first judged (~0.8 M instructions; an ordinary memory never is).
_C_LOG2_C_SIZE = 1025
_C_LOG2_C: list[float] | None = None


def shannon_entropy(value: str) -> float:
    """Shannon entropy of `value` in bits per character (0.0 for an empty string)."""
    if not value:
        return 0.0
    global _C_LOG2_C
    n = len(value)
    counts = map(value.count, set(value))
    if n < _C_LOG2_C_SIZE:
        if _C_LOG2_C is None:
            _C_LOG2_C = [0.0] + [c * math.log2(c) for c in range(1, _C_LOG2_C_SIZE)]
        total = sum(map(_C_LOG2_C.__getitem__, counts))
    else:
        total = sum(c * math.log2(c) for c in counts)
    return max(0.0, math.log2(n) - total / n)  # H = log2 n − Σ c·log2 c / n


def _mixed(run: str) -> bool:
    """A run of ASCII letters and digits holding both."""
    return not run.isdigit() and not run.isalpha()


_WORD_PIECE = r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+|[^A-Za-z0-9]"


def _identifier_like(value: str) -> bool:
    """True for a name made of words, acronyms and at most two numbers (`AuthProvider2Client`,
    `utf8mb4_unicode`); a generated string has lone lowercase letters or more numbers."""
    numbers = 0
    for piece in _rx(_WORD_PIECE).findall(value):
        if piece.isdigit():
            numbers += 1
        elif piece.isalpha() and not piece.isupper() and len(piece) - piece[0].isupper() < 2:
            return False
    return numbers <= 2


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
    import bisect

    i = bisect.bisect_right(lines[0], offset) - 1
    return i >= 0 and offset <= lines[1][i]
