"""What a memory's text mentions, by rule: backticked paths, branch names, URLs, `owner/repo#N`,
each weighed against its clause (`mention_context`).

One reader of memory text for two users: the verifier turns the mentions into typed claims
(`memrepo.passes.verify.claims`), and the cache stores the paths a memory claims exist now as
its *citations* (`citations`), which recall checks with `stat` before it injects the memory
(`memrepo.recall.citations`, issue 43). A path may carry where in the file it points: a line
(`src/app.py:42`) or a symbol (`src/app.py::create_app`).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Callable, NamedTuple

if TYPE_CHECKING:
    from memrepo.format import mention_context

# `mention_context` (its clause rules compile ~15 regexes) is loaded only for a text that mentions
# a path: the cache update after most adds needs none of it (issue 44).


class _Pattern:
    """A regular expression compiled on first use. The cache reads every new memory's citations
    under the commit lock, and a text without a backtick needs none of these: compiling them all
    at import was 11 M instructions of every lock hold (issue 44)."""

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source, self.flags = source, flags
        self._rx: re.Pattern[str] | None = None

    @property
    def rx(self) -> re.Pattern[str]:
        if self._rx is None:
            self._rx = re.compile(self.source, self.flags)
        return self._rx

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.rx.finditer(text)

    def search(self, text: str) -> re.Match[str] | None:
        return self.rx.search(text)

    def sub(self, repl: str, text: str) -> str:
        return self.rx.sub(repl, text)


EXTENSIONS = frozenset(
    "py pyi md rst txt json jsonl yaml yml toml ini cfg conf env lock sh bash zsh ps1 js mjs cjs ts tsx jsx vue "
    "go rs rb java kt swift c h cc cpp hpp cs php sql html css scss csv xml tf tfvars hcl proto graphql "
    "gradle properties ipynb sqlite3 db log pem crt example template service plist".split())
BARE_FILES = frozenset("Makefile Dockerfile Procfile Gemfile Rakefile Justfile Vagrantfile Jenkinsfile "
                       "LICENSE README CODEOWNERS".split())
FENCED = _Pattern(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
TICKED = _Pattern(r"`([^`\n]+)`")
# A bracketed IPv6 host (`http://[::1]:8080/f`) is read whole; any other `]` ends the URL.
URL = _Pattern(r"\b[A-Za-z][A-Za-z0-9+.-]{1,15}://(?:\[[^\s\[\]<>\"'`]{1,64}\][^\s<>\"'`)\]]*|[^\s<>\"'`)\]]+)")
_BRANCH_BEFORE = _Pattern(r"\bbranch(?:es)?\s+(?:named\s+|called\s+)?`([^`\n]+)`", re.I)
_BRANCH_AFTER = _Pattern(r"`([^`\n]+)`\s+branch\b", re.I)
_BRANCH_BARE = _Pattern(r"\bbranch\s+([A-Za-z0-9._/-]*[A-Za-z0-9][/_-][A-Za-z0-9._/-]*[A-Za-z0-9])", re.I)
PR = _Pattern(r"(?<![\w/.-])([A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9._-]{1,100})#(\d{1,8})\b")
_WHERE = _Pattern(r"(?::(\d{1,9})(?::\d{1,9})?|::([A-Za-z_][A-Za-z0-9_.]{0,120}))$")  # `:42`, `:42:7`, `::name`

MAX_CITATIONS = 32  # per memory: a memory citing 10,000 paths is bounded at index time and on the prompt path
MAX_PATH = 1000

Span = tuple[int, int]


class Mention(NamedTuple):
    """What the text rules found: its value, where it stands, and what it names (path, dir — a
    path without an extension —, branch, url or pr); a path's line or symbol when it names one."""

    value: str
    span: Span
    kind: str
    line: int | None = None
    symbol: str | None = None


def has_extension(token: str) -> bool:
    stem, dot, ext = token.rpartition(".")
    return bool(dot and stem and ext.lower() in EXTENSIONS)


def is_path(token: str, inside: Callable[[str], bool]) -> bool:
    """A backticked token names a file or folder; `inside(path)` says whether an absolute path
    without an extension lies in a project this machine knows (else it is an endpoint)."""
    if any(ch.isspace() for ch in token) or "://" in token or "#" in token or token.endswith("()"):
        return False
    if token.startswith("/") and not has_extension(_WHERE.sub("", token)):
        return inside(token)
    return token in BARE_FILES or "/" in token or has_extension(_WHERE.sub("", token))


def paths(text: str, taken: set[Span], inside: Callable[[str], bool]) -> list[Mention]:
    out = []
    for m in TICKED.finditer(text):
        raw = m.group(1).strip()
        if m.span() in taken or not is_path(raw, inside):
            continue
        where = _WHERE.search(raw)
        token = raw[:where.start()] if where else raw
        line = int(where.group(1)) if where and where.group(1) else None
        symbol = where.group(2) if where and where.group(2) else None
        kind = "path" if token in BARE_FILES or has_extension(token) else "dir"
        out.append(Mention(token, m.span(), kind, line, symbol))
    return out


def branches(text: str) -> tuple[list[Mention], set[Span]]:
    out, taken = [], set()
    for rx in (_BRANCH_BEFORE, _BRANCH_AFTER):
        for m in rx.finditer(text):
            ticked = (m.start(1) - 1, m.end(1) + 1)
            if ticked not in taken:
                taken.add(ticked)
                out.append(Mention(m.group(1), ticked, "branch"))
    for m in _BRANCH_BARE.finditer(text):
        out.append(Mention(m.group(1), m.span(1), "branch"))
    return out, taken


def urls(text: str) -> list[Mention]:
    out = []
    for m in URL.finditer(text):
        url = m.group(0).rstrip(".,;:!?")  # the sentence's full stop is not the URL's, nor its mention's
        out.append(Mention(url, (m.start(), m.start() + len(url)), "url"))
    return out


def note_text(title: object, description: object, body: str) -> str:
    """The text the rules read: title, description and body, fenced code left out, a blank line
    between them so each is its own clause."""
    fenced = "```" in body or "~~~" in body
    return "\n\n".join([str(title or ""), str(description or ""), FENCED.sub("", body) if fenced else body])


def reader(text: str, found: list[Mention]) -> mention_context.Reader:
    """The clauses of `text` with every mention and backticked span marked."""
    from memrepo.format import mention_context

    return mention_context.Reader(text, [m.span for m in found] + [t.span() for t in TICKED.finditer(text)])


def _never(_: str) -> bool:
    return False


def citations(title: object, description: object, body: str,
              inside: Callable[[str], bool] = _never) -> list[tuple[str, int | None, str | None]]:
    """The paths a memory claims exist now, as the verifier reads them (a plan, a negation, a web
    route or another machine's path is no citation): (path, line, symbol), relative paths
    normalized, a path climbing out with `..` or not plain text left out, at most MAX_CITATIONS."""
    text = note_text(title, description, body)
    if "`" not in text:
        return []  # a path is cited only in backticks
    found_branches, taken = branches(text)
    found_paths = paths(text, taken, inside)
    if not found_paths:
        return []
    from memrepo.format import mention_context

    marks = found_branches + found_paths + urls(text) + [Mention("", m.span(), "pr") for m in PR.finditer(text)]
    rd = reader(text, marks)
    out: dict[str, tuple[str, int | None, str | None]] = {}
    for m in found_paths:
        path = _plain(m.value)
        if path is None or path in out or mention_context.judge(rd, m.span, m.kind):
            continue
        out[path] = (path, m.line, m.symbol)
        if len(out) >= MAX_CITATIONS:
            break
    return list(out.values())


def _plain(path: str) -> str | None:
    """A citation's path as the cache stores it, or None: printable text of bounded length, a
    relative path without `..`, normalized (`./src//a.py` is `src/a.py`)."""
    if not path or len(path) > MAX_PATH or any(ord(ch) < 32 or ord(ch) == 127 for ch in path):
        return None
    if path.startswith("~"):
        return None  # a home folder's file: another machine's layout, never a project's
    norm = posixpath.normpath(path)
    if norm.startswith("//"):
        norm = "/" + norm.lstrip("/")
    if not path.startswith("/") and (norm == ".." or norm.startswith("../") or norm == "."):
        return None
    return norm
