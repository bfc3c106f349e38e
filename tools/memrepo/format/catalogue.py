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
"""

from __future__ import annotations

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


def find_secrets(text: str) -> list[tuple[int, str, str]]:
    """(1-based line, kind, masked preview) for each secret either catalogue finds in `text`."""
    return _redact.find_secrets(text, library_findings)


def redact(text: str) -> str:
    """`text` with each secret either catalogue finds replaced by `[REDACTED:<kind>]`."""
    return _redact.redact(text, library_findings)


def library_findings(text: str) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, kind, preview) of each value detect-secrets reports in `text`, every
    occurrence of it on its line."""
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
