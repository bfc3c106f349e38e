"""How many secrets of the labeled corpus (tests/data/secrets/) a detector redacts, and how much
ordinary technical text it takes for a secret (issue 38, part 4).

Detectors:
- `regex`: memrepo's stdlib redactor alone (`memrepo.format.redact.redact`), what the prompt-path
  pre-check and the git hook's fast path know;
- `library`: detect-secrets alone, with its default plugins and filters, scanning the text as a
  file: each value it reports is replaced in the text;
- `plugins`: detect-secrets as memrepo configures it (its entropy and IP plugins left out), alone;
- `shipped`: what the write path runs (`memrepo.format.catalogue.redact`: both).

A case is detected when its secret no longer appears in the redacted text; a negative is a false
positive when the redacted text differs from it.

    python tests/bench/bench_secrets.py [--detector regex|library|plugins|shipped] [--misses] [--json]

To measure an older redactor, put its `tools/` first: `PYTHONPATH=/tmp/old/tools python …`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import secrets_corpus  # noqa: E402


def regex() -> Callable[[str], str]:
    from memrepo.format import redact
    return redact.redact


def library() -> Callable[[str], str]:
    """detect-secrets as it scans a repository's files (`scan_line`'s ad hoc mode reports every
    word of a line through its entropy plugins, so the file scan is the fair one)."""
    import tempfile

    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    def run(text: str) -> str:
        with tempfile.TemporaryDirectory() as tmp, default_settings():
            path = os.path.join(tmp, "note.md")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            found = SecretsCollection()
            found.scan_file(path)
            values = {s.secret_value for _name, s in found if s.secret_value}
        for value in sorted(values, key=len, reverse=True):
            text = text.replace(value, "[REDACTED]")
        return text
    return run


def plugins() -> Callable[[str], str]:
    """detect-secrets as memrepo configures it (`catalogue.LEFT_OUT` left out), alone."""
    from memrepo.format import catalogue

    def run(text: str) -> str:
        for start, end, _kind, _preview in sorted(set(catalogue.library_findings(text)), reverse=True):
            text = text[:start] + "[REDACTED]" + text[end:]
        return text
    return run


def shipped() -> Callable[[str], str]:
    from memrepo.format import catalogue
    return catalogue.redact


DETECTORS = {"regex": regex, "library": library, "plugins": plugins, "shipped": shipped}


def measure(name: str) -> dict[str, object]:
    run = DETECTORS[name]()
    cases = secrets_corpus.cases()
    missed = [c.name for c in cases if c.secret in run(c.text)]
    negatives = secrets_corpus.negatives()
    false = [t for t in negatives if run(t) != t]
    return {"detector": name, "cases": len(cases), "detected": len(cases) - len(missed), "missed": missed,
            "negatives": len(negatives), "false_positives": false}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--detector", choices=sorted(DETECTORS), action="append",
                        help="detector to measure (repeatable; default: all)")
    parser.add_argument("--misses", action="store_true", help="list missed cases and false positives")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    results = [measure(name) for name in args.detector or list(DETECTORS)]
    if args.json:
        print(json.dumps(results, indent=1))
        return 0
    for r in results:
        print(f"{r['detector']:8} detected {r['detected']}/{r['cases']}, missed {len(r['missed'])}, "  # type: ignore[arg-type]
              f"false positives {len(r['false_positives'])}/{r['negatives']}")  # type: ignore[arg-type]
        if args.misses:
            for m in r["missed"]:  # type: ignore[attr-defined]
                print("   missed", m)
            for t in r["false_positives"]:  # type: ignore[attr-defined]
                print("   false positive", repr(t[:100]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
