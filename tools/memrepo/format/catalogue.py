"""Secret detection on the write path: memrepo's own catalogue of token formats (`redact`,
standard library only) and detect-secrets' provider plugins, a catalogue Yelp maintains
(issue 38, part 4).

What writes a memory or keeps a person's words calls `find_secrets` and `redact` here: `memrepo
add`, the importers, capture (the turns it sends the model, the memories it writes), enrich's
aliases, `memrepo profile add` and the transcript store. detect-secrets is imported on the first
scan; it pulls in `requests` (about 0.3 s), so the git hooks, run on every commit, keep to
`redact`'s catalogue, and the prompt path never imports this module (its yes-or-no pre-check
is `memrepo.recall.secretish`).

Which plugins, measured on the labeled corpus in tests/data/secrets/ (176 secrets, 34 ordinary
technical texts; `python tests/bench/bench_secrets.py`): the entropy plugins take lockfile
checksums, SRI hashes, an etag and a key fingerprint for secrets (5 false positives), and a
public IP address is no secret, so all three are left out; the rest find 85 of the 176 with no
false positive. What one catalogue finds and the other misses is redacted: `redact`'s kinds
win where both find the same span.

A plugin reports nothing on a line none of its own patterns matches, so the patterns of the
chosen plugins (45 regexes) are remembered in the user's cache folder (`secret-gates-v2.json`,
keyed by the library's files as installed and this module's choices): a later process searches
a text with them first and loads detect-secrets only when a line matches one. An ordinary memory
is then scanned by both catalogues exactly as before without loading the library and
`requests`, about 0.2 s CPU of a 0.47 s `memrepo add` (issue 44). A missing, unreadable or
outdated record only means the library is loaded, and the record written again. Beside each
pattern the record keeps the words one of which every match contains (found in the pattern
itself, `_needles`): an ASCII text holding none of a pattern's words is not searched with it, so
a process compiles only the few gates its text could match (compiling all 45 cost ~13 ms of a
~150 ms add). A text no remembered gate matches, and in which `recall.secretish` finds no literal
that a pattern of `redact` needs, holds nothing either catalogue finds: it is answered without
importing `redact` and its token formats (`_neither_finds`; a waiting `memrepo add` checks its
fields so, ~16 M → ~6 M instructions).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any

# The entropy plugins took lockfile checksums, SRI hashes, an etag and a key fingerprint for
# secrets; a public IP address is no secret. The basic-auth plugin judges what `redact` judges
# with a rule of its own: a local default like postgres:postgres@localhost is no leak (on the
# 1,060 memory files of the labeled sets it found 8 such spans, none a secret).
LEFT_OUT = ("Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector", "BasicAuthDetector")
VERIFY = "detect_secrets.filters.common.is_ignored_due_to_verification_policies"
# The library's regexes are not all linear: a longer line is left to `redact`'s, which are.
MAX_LINE = 4096

# Each plugin's own patterns, searched first: a plugin reports nothing on a line none of its
# patterns matches, and the library's per-line machinery (filters, context, argument injection)
# made a megabyte of log lines cost ~16 times `redact`'s scan, ~5 times with this gate.
# Empty: scan every line.
_gates: list[re.Pattern[str]] = []
_configured = False
GATES_FORMAT = 2  # bump when `_patterns` or `_needles` derive the gates differently
# Named for its format: two memrepo versions on one machine each keep theirs, not rewrite each other's.
GATES_FILE = f"secret-gates-v{GATES_FORMAT}.json"


class Gate:
    """A remembered gate, compiled when a text could match it: one holding none of its `needles`
    (lowercase when `fold`: it ignores case) cannot, when the text is ASCII. None: not known."""

    def __init__(self, pattern: str, flags: int, needles: list[str] | None) -> None:
        self.pattern, self.flags, self.needles = pattern, flags, needles
        self.fold = bool(flags & _IGNORECASE)
        self._compiled: re.Pattern[str] | None = None

    @classmethod
    def of(cls, pattern: re.Pattern[str]) -> Gate:
        return cls(pattern.pattern, int(pattern.flags), _needles(pattern))

    def excludes(self, text: str, folded: str | None) -> bool:
        """Whether `text` (`folded`: its lowercase when it is ASCII, else None) cannot match."""
        if folded is None or self.needles is None:
            return False
        seen = folded if self.fold else text
        return not any(n in seen for n in self.needles)

    def search(self, line: str) -> bool:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled.search(line) is not None


# An int: `flags & re.IGNORECASE` builds a RegexFlag through the enum machinery, ~8,000
# instructions for each of the 45 remembered gates a waiting `memrepo add` reads (issue 44).
_IGNORECASE = int(re.IGNORECASE)

# The gates as an earlier process recorded them (`_remembered`): None until read, [] when unknown.
_known: list[Gate] | None = None


def find_secrets(text: str) -> list[tuple[int, str, str]]:
    """(1-based line, kind, masked preview) for each secret either catalogue finds in `text`."""
    if _neither_finds(text):
        return []
    from memrepo.format import redact as _redact

    return _redact.find_secrets(text, library_findings)


def redact(text: str) -> str:
    """`text` with each secret either catalogue finds replaced by `[REDACTED:<kind>]`."""
    if _neither_finds(text):
        return text
    from memrepo.format import redact as _redact

    return _redact.redact(text, library_findings)


def _neither_finds(text: str) -> bool:
    """Whether `text` is certainly no finding of either catalogue, known without loading either:
    `recall.secretish` says no for `redact`'s (a literal each of its patterns needs) and no
    remembered gate matches a line (what detect-secrets' plugins need). An ordinary memory then
    costs a waiting `memrepo add` neither `redact` nor its token formats (~3 M instructions,
    issue 44); any other text is scanned by both, as before."""
    from memrepo.recall import secretish

    return not _configured and not secretish.may_hold_secret(text) and not _may_report(text)


def library_findings(text: str) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, kind, preview) of each value detect-secrets reports in `text`, every
    occurrence of it on its line."""
    if not _configured and not _may_report(text):
        return
    scan_line = _scanner()
    offset = 0
    for line in text.splitlines(keepends=True):
        if len(line) <= MAX_LINE and (not _gates or any(g.search(line) for g in _gates)):
            found = {(s.secret_value.strip(" \t\"'=:"), s.type) for s in scan_line(line) if s.secret_value}
            for value, kind in found:
                if value:
                    yield from _occurrences(line, offset, value, kind)
        offset += len(line)


def _occurrences(line: str, offset: int, value: str, kind: str) -> Iterator[tuple[int, int, str, str]]:
    from memrepo.format.redact import _mask

    slug = "-".join(kind.lower().split())
    pos = line.find(value)
    while pos >= 0:
        yield offset + pos, offset + pos + len(value), slug, _mask(value, 0)
        pos = line.find(value, pos + len(value))


def _scanner() -> Callable[[str], Iterable[Any]]:
    """detect-secrets' line scanner, its plugins chosen once per process. A secret is never
    sent to its provider to be verified: the filter that would do it is switched off."""
    global _configured
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import configure_settings_from_baseline, get_settings

    if not _configured:
        known: dict[str, Any] = get_mapping_from_secret_type_to_class()
        plugins = [c for c in known.values() if c.__name__ not in LEFT_OUT]
        configure_settings_from_baseline({"plugins_used": [{"name": c.__name__} for c in sorted(plugins, key=str)]})
        get_settings().disable_filters(VERIFY)
        _gates.extend(_patterns(plugins))
        _configured = True
        _remember(_gates)
    return scan_line


def _patterns(plugins: list[Any]) -> list[re.Pattern[str]]:
    """The patterns a line must match for any of `plugins` to report on it, or [] when one
    plugin's are unknown (then every line is scanned)."""
    from detect_secrets.plugins import keyword

    out: list[re.Pattern[str]] = []
    for plugin in plugins:
        if plugin is keyword.KeywordDetector:
            out.append(re.compile(keyword.DENYLIST_REGEX, re.IGNORECASE))
            continue
        patterns = getattr(plugin, "denylist", None)
        if not isinstance(patterns, (list, tuple)) or not all(isinstance(p, re.Pattern) for p in patterns):
            return []
        out.extend(patterns)
    return out


def _may_report(text: str) -> bool:
    """Whether a line of `text` the library would scan matches a remembered gate (True when no
    gates are remembered, or one cannot be compiled: then only the library can say)."""
    gates = _remembered()
    if not gates:
        return True
    folded = text.lower() if text.isascii() else None
    lines: list[str] | None = None
    try:
        for gate in gates:
            if gate.excludes(text, folded):
                continue
            if lines is None:
                lines = [line for line in text.splitlines(keepends=True) if len(line) <= MAX_LINE]
            if any(gate.search(line) for line in lines):
                return True
    except re.error:
        return True
    return False


def _remembered() -> list[Gate]:
    """The gates an earlier process recorded for the library installed now; [] when there is no
    such record."""
    global _known
    if _known is None:
        _known = []
        stamp = _library_stamp()
        try:
            with open(_gates_path(), encoding="utf-8") as fh:
                import json

                record = json.load(fh)
            if stamp is not None and record.get("stamp") == stamp:
                _known = [Gate(str(pattern), int(flags), _words(needles))
                          for (pattern, flags), needles in zip(record["patterns"], record["needles"], strict=True)]
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            _known = []
    return _known


def _words(needles: object) -> list[str] | None:
    if needles is None:
        return None
    if not isinstance(needles, list) or not needles or not all(isinstance(n, str) and n for n in needles):
        raise ValueError("needles")
    return needles


def _remember(gates: list[re.Pattern[str]]) -> None:
    """Record the gates for later processes (best effort: where the cache folder can't be
    written, every process loads the library as before)."""
    stamp = _library_stamp()
    if stamp is None or not gates:
        return
    import json

    path = _gates_path()
    text = json.dumps({"stamp": stamp, "patterns": [[g.pattern, int(g.flags)] for g in gates],
                       "needles": [_needles(g) for g in gates]})
    with contextlib.suppress(OSError), open(path, encoding="utf-8") as fh:
        if fh.read() == text:
            return
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.remove(tmp)


def _gates_path() -> str:
    from memrepo.recall.sources import cache_home

    return os.path.join(cache_home(), GATES_FILE)


def _library_stamp() -> str | None:
    """What the gates depend on: this module's choices and the library's files as installed
    (path, size, mtime of its top, `plugins/` and `core/plugins/` modules), found without
    importing it; None when it is not installed."""
    spec = _find_spec("detect_secrets")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = list(spec.submodule_search_locations)[0]
    parts = [f"format {GATES_FORMAT}", "left out " + " ".join(LEFT_OUT), root]
    for folder in ("", "plugins", os.path.join("core", "plugins")):
        prefix = os.path.join(folder, "")  # what os.path.join(folder, name) puts before a name
        try:
            with os.scandir(os.path.join(root, folder)) as found:
                entries = sorted((e.name, e.stat()) for e in found if e.name.endswith(".py"))
        except OSError:
            return None
        parts += [f"{prefix}{name} {st.st_size} {st.st_mtime_ns}" for name, st in entries]
    return "\n".join(parts)


def _find_spec(name: str) -> Any:
    """`importlib.util.find_spec(name)` for a top-level module, None where it raises: its module
    spec as the import system would find it, the module not imported. Asked of the finders here
    because importing `importlib.util` cost a waiting `memrepo add` ~0.9 M instructions (issue 44)."""
    if name in sys.modules:
        return getattr(sys.modules[name], "__spec__", None)
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        try:
            spec = find(name, None) if find is not None else None
        except (ImportError, ValueError):
            return None
        if spec is not None:
            return spec
    return None


def _needles(gate: re.Pattern[str]) -> list[str] | None:
    """Words one of which every match of `gate` contains (lowercase when it ignores case), read
    from the pattern's own parse; None when none is certain (then the gate is always searched)."""
    try:
        from re import _parser as parser  # type: ignore[attr-defined]
    except ImportError:  # Python 3.10
        import sre_parse as parser
    try:
        parsed = parser.parse(gate.pattern, gate.flags)
        found = _required(list(parsed), parser)
    except Exception:  # noqa: BLE001 — an unforeseen pattern only means no needles
        return None
    if not found or not all(n.isascii() for n in found):
        return None
    return [n.lower() for n in found] if parsed.state.flags & re.IGNORECASE else found


def _required(items: list[tuple[Any, Any]], p: Any) -> list[str] | None:
    """For a parsed sequence: strings one of which every match contains, the set whose shortest
    is longest; None when nothing is certain. Only what surely consumes text counts: a run of
    literals, a group, a repeat at least once, a branch whose every alternative has one, a class
    of literals; a group that sets its own flags counts for nothing, and so does a character
    outside ASCII (under IGNORECASE some match ASCII letters: `ſ` an `s`)."""
    candidates: list[list[str]] = []
    run: list[str] = []
    for op, av in [*items, (None, None)]:
        if op is p.LITERAL and av < 128:  # a text is judged by needles only when it is ASCII
            run.append(chr(av))
            continue
        if run:
            candidates.append(["".join(run)])
            run = []
        found: list[str] | None = None
        if op is p.SUBPATTERN and not av[1] and not av[2]:
            found = _required(list(av[3]), p)
        elif op is p.BRANCH:
            alternatives = [_required(list(alt), p) for alt in av[1]]
            found = [n for alt in alternatives for n in alt or ()] if all(alternatives) else None
        elif op in (p.MAX_REPEAT, p.MIN_REPEAT) and av[0] >= 1:
            found = _required(list(av[2]), p)
        elif op is p.IN and av and all(o is p.LITERAL and v < 128 for o, v in av):
            found = [chr(v) for _, v in av]
        if found:
            candidates.append(found)
    return max(candidates, key=lambda c: min(map(len, c)), default=None)
