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
chosen plugins (45 regexes) are remembered in the user's cache folder (`secret-gates.json`,
keyed by the library's files as installed and this module's choices): a later process searches
a text with them first and loads detect-secrets only when a line matches one. An ordinary memory
is then scanned by both catalogues exactly as before without loading the library and
`requests`, about 0.2 s CPU of a 0.47 s `memrepo add` (issue 44). A missing, unreadable or
outdated record only means the library is loaded, and the record written again.
"""

from __future__ import annotations

import contextlib
import os
import re

from memrepo.format import redact as _redact

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
# The gates as an earlier process recorded them (`_remembered`): None until read, [] when unknown.
_known: list[re.Pattern[str]] | None = None
GATES_FILE = "secret-gates.json"
GATES_FORMAT = 1  # bump when `_patterns` derives the gates differently


def find_secrets(text: str) -> list[tuple[int, str, str]]:
    """(1-based line, kind, masked preview) for each secret either catalogue finds in `text`."""
    return _redact.find_secrets(text, library_findings)


def redact(text: str) -> str:
    """`text` with each secret either catalogue finds replaced by `[REDACTED:<kind>]`."""
    return _redact.redact(text, library_findings)


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
    slug = "-".join(kind.lower().split())
    pos = line.find(value)
    while pos >= 0:
        yield offset + pos, offset + pos + len(value), slug, _redact._mask(value, 0)
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
    gates are remembered: then only the library can say)."""
    gates = _remembered()
    if not gates:
        return True
    return any(len(line) <= MAX_LINE and any(g.search(line) for g in gates) for line in text.splitlines(keepends=True))


def _remembered() -> list[re.Pattern[str]]:
    """The gates an earlier process recorded for the library installed now, compiled; [] when
    there is no such record."""
    global _known
    if _known is None:
        _known = []
        stamp = _library_stamp()
        try:
            with open(_gates_path(), encoding="utf-8") as fh:
                import json

                record = json.load(fh)
            if stamp is not None and record.get("stamp") == stamp:
                _known = [re.compile(pattern, flags) for pattern, flags in record["patterns"]]
        except (OSError, ValueError, TypeError, KeyError, AttributeError, re.error):
            _known = []
    return _known


def _remember(gates: list[re.Pattern[str]]) -> None:
    """Record the gates for later processes (best effort: where the cache folder can't be
    written, every process loads the library as before)."""
    stamp = _library_stamp()
    if stamp is None or not gates:
        return
    import json

    path = _gates_path()
    text = json.dumps({"stamp": stamp, "patterns": [[g.pattern, int(g.flags)] for g in gates]})
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
    import importlib.util

    try:
        spec = importlib.util.find_spec("detect_secrets")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    root = list(spec.submodule_search_locations)[0]
    parts = [f"format {GATES_FORMAT}", "left out " + " ".join(LEFT_OUT), root]
    for folder in ("", "plugins", os.path.join("core", "plugins")):
        try:
            with os.scandir(os.path.join(root, folder)) as found:
                entries = sorted((e.name, e.stat()) for e in found if e.name.endswith(".py"))
        except OSError:
            return None
        parts += [f"{os.path.join(folder, name)} {st.st_size} {st.st_mtime_ns}" for name, st in entries]
    return "\n".join(parts)
