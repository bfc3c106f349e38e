"""detect-secrets is loaded only when a line could interest one of its plugins (issue 44): the
plugins' own patterns are remembered in the user's cache folder by the first process that loads
the library, and later processes search a text with them first. What either catalogue finds is
the same as when every text went through the library."""

from __future__ import annotations

import glob
import json
import os
import random
import re
import subprocess
import sys

import pytest

from helpers import ROOT
from memrepo.format import catalogue, notes, redact
from secrets_corpus import cases, negatives

ORDINARY = notes.serialize(notes.new_note(id="deploy-freeze", title="No deploys on Friday afternoon",
                                          description="Production deploys are frozen on Fridays after 16:00",
                                          class_="rule", source="user", created="2026-11-30", topics=["deploy"],
                                          body="Ask in #ops for an exception.\n"))
LIBRARY_ONLY = 'db_pass = "hunter2x"'  # the stdlib catalogue misses it (test_redact_corpus)

SCAN = """
import json, sys
from memrepo.format import catalogue
found = catalogue.find_secrets(sys.stdin.read())
print(json.dumps({"found": found, "loaded": "detect_secrets" in sys.modules, "requests": "requests" in sys.modules}))
"""


def scan(home: str, text: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "XDG_CACHE_HOME"}
    env["HOME"] = home
    out = subprocess.run([sys.executable, "-c", SCAN], input=text, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def record_path(home: str) -> str:
    return os.path.join(home, ".cache", "memrepo", catalogue.GATES_FILE)


def test_an_ordinary_memory_is_scanned_without_loading_the_library(tmp_path) -> None:
    home = str(tmp_path)
    first = scan(home, ORDINARY)  # nothing remembered yet: the library is loaded and its gates recorded
    assert first == {"found": [], "loaded": True, "requests": True}
    assert os.path.exists(record_path(home))
    assert scan(home, ORDINARY) == {"found": [], "loaded": False, "requests": False}
    again = scan(home, LIBRARY_ONLY)  # a line the keyword plugin's pattern matches: the library judges it
    assert again["loaded"] and [kind for _, kind, _ in again["found"]] == ["secret-keyword"]


def test_the_record_holds_the_librarys_own_patterns(tmp_path) -> None:
    home = str(tmp_path)
    scan(home, LIBRARY_ONLY)
    catalogue._scanner()
    with open(record_path(home), encoding="utf-8") as fh:
        record = json.load(fh)
    assert record["patterns"] == [[g.pattern, int(g.flags)] for g in catalogue._gates]
    assert len(record["patterns"]) >= 40
    assert record["needles"] == [catalogue._needles(g) for g in catalogue._gates]
    assert sum(n is not None for n in record["needles"]) >= 40


def test_a_record_for_another_install_loads_the_library_and_is_written_again(tmp_path) -> None:
    home = str(tmp_path)
    scan(home, LIBRARY_ONLY)
    path = record_path(home)
    with open(path, encoding="utf-8") as fh:
        record = json.load(fh)
    record["stamp"] = record["stamp"].replace("format ", "format 0")  # what an upgrade of either side looks like
    record["patterns"] = [["never matches(?!)", 0]]
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(record, fh)
    assert scan(home, ORDINARY)["loaded"]
    assert scan(home, ORDINARY)["loaded"] is False  # written again by the process before


def test_a_damaged_record_only_means_the_library_is_loaded(tmp_path) -> None:
    home = str(tmp_path)
    os.makedirs(os.path.dirname(record_path(home)))
    with open(record_path(home), "w", encoding="utf-8") as fh:
        fh.write('{"stamp": 3, "patterns": [["(", 0]]')
    assert scan(home, LIBRARY_ONLY)["found"]


TEXTS = [c.text for c in cases()] + negatives() + [LIBRARY_ONLY, 'api_key = "Short1"', ORDINARY]


def test_the_gate_keeps_every_text_the_library_reports_on(monkeypatch: pytest.MonkeyPatch) -> None:
    catalogue._scanner()
    monkeypatch.setattr(catalogue, "_known", [catalogue.Gate.of(g) for g in catalogue._gates])
    reported = [text for text in TEXTS if list(catalogue.library_findings(text))]
    assert len(reported) >= 70
    assert [text for text in reported if not catalogue._may_report(text)] == []
    assert not catalogue._may_report(ORDINARY)


# Each text as written, and in other cases (a gate that ignores case matches them all), and beside
# characters outside ASCII (then no gate is skipped: under IGNORECASE `ſ` matches an `s`).
CASED = [variant for text in TEXTS for variant in (text, text.upper(), text.lower(), text.swapcase())] + [
    'CONTRASEÑA = "Hunter2Hunter2x"', 'pasſword = "hunter2hunter2"', "AKIA" + "Z" * 16, "xoxb-1-abc"]


def test_a_gate_is_skipped_only_for_texts_it_cannot_match() -> None:
    catalogue._scanner()
    wrongly = [(gate.pattern, text) for gate in catalogue._gates for text in CASED
               if gate.search(text) and catalogue.Gate.of(gate).excludes(text, text.lower() if text.isascii() else None)]
    assert wrongly == []
    assert len(catalogue._gates) >= 40


def test_an_ordinary_memory_compiles_only_the_gates_its_words_could_match(monkeypatch: pytest.MonkeyPatch) -> None:
    catalogue._scanner()
    gates = [catalogue.Gate.of(g) for g in catalogue._gates]
    monkeypatch.setattr(catalogue, "_known", gates)
    assert not catalogue._may_report(ORDINARY)
    compiled = [g.pattern for g in gates if g._compiled is not None]
    assert 0 < len(compiled) <= len(gates) // 4, compiled
    assert catalogue._may_report(LIBRARY_ONLY)
    monkeypatch.setattr(catalogue, "_known", [catalogue.Gate.of(g) for g in catalogue._gates])
    assert catalogue._may_report("contraseña: " + LIBRARY_ONLY.upper())  # not ASCII: every gate is searched


@pytest.mark.parametrize("pattern, needles", [
    ("AKIA[0-9A-Z]{16}", ["AKIA"]),
    ("x?yz", ["yz"]),
    ("(?:abc|de)f?", ["abc", "de"]),
    ("(?:abc|)", None),  # an empty alternative: nothing is certain
    ("a{0,3}", None),
    ("(?:ab){1,2}c", ["ab"]),
    ("[ab]cd", ["cd"]),
    ("(?i)Secret", ["secret"]),
    ("(?i:Secret)x", ["x"]),  # a group that sets its own flags counts for nothing
    ("contraseña", ["contrase"]),
    ("(?=abc)\\w+", None),  # a lookahead consumes nothing
    ("\\d+", None),
])
def test_needles_are_what_every_match_must_contain(pattern: str, needles: list[str] | None) -> None:
    assert catalogue._needles(re.compile(pattern)) == needles


# An ordinary text is judged without loading either catalogue when `recall.secretish` says no
# for `redact`'s and no remembered gate matches a line (`catalogue._neither_finds`, issue 44).
# That is exact only if every text it lets through is one both catalogues find nothing in.

MEMORY_FILES = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "recall_*", "**", "*.md"), recursive=True))
# What only detect-secrets' plugins find (tests/test_group_commit.py), and what `redact` alone does.
LIBRARY_SECRETS = ['contraseña = "' + "Xk9m" * 3 + '"', "AC" + "0123456789abcdef" * 2, "1234567890:" + "B" * 35,
                   "AKC" + "a1b2c3d4e5f6g7h8", LIBRARY_ONLY, 'api_key = "Short1"']


def memory_texts() -> list[str]:
    texts = []
    for path in MEMORY_FILES:
        with open(path, encoding="utf-8") as fh:
            texts.append(fh.read())
    return texts


def generated(ordinary: list[str], secrets: list[str], n: int, seed: int = 44) -> list[str]:
    """`n` texts of lines drawn from ordinary memories, a third of them with a secret (or a piece
    of one, or its words without a value) put inside a line, some in another case."""
    rnd = random.Random(seed)
    lines = [line for text in ordinary for line in text.splitlines() if line.strip()]
    words = [w for line in lines[:4000] for w in line.split()]
    out = []
    for i in range(n):
        picked = rnd.sample(lines, rnd.randint(1, 12))
        if i % 3 == 0:
            secret = rnd.choice(secrets)
            secret = rnd.choice([secret, secret[: len(secret) // 2], secret.split()[0] if secret.split() else secret,
                                 " ".join(rnd.sample(words, 3)) + " " + secret])
            at = rnd.randrange(len(picked))
            cut = rnd.randint(0, len(picked[at]))
            picked[at] = picked[at][:cut] + rnd.choice(["", " ", "=", ": ", "\n"]) + secret + picked[at][cut:]
        text = "\n".join(picked)
        out.append(rnd.choice([text, text, text, text.upper(), text.lower(), text + "\u00e9"]))
    return out


def test_a_text_neither_catalogue_is_asked_about_holds_nothing_either_finds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Over the secrets corpus, the redactor's cases, the ~900 markdown files of the labeled recall sets and 3,000
    texts made of their lines with secrets put in: every text judged without the catalogues
    (`_neither_finds`) is one both catalogues, scanning it in full, find nothing in; and most
    ordinary memories are judged so."""
    from test_redact import POSITIVES

    memories = memory_texts()
    assert len(memories) >= 900
    secrets = [c.text for c in cases()] + [text for text, _, _ in POSITIVES] + LIBRARY_SECRETS
    texts = TEXTS + secrets + memories + generated(memories, secrets, 3000)
    catalogue._scanner()  # the library loaded: the full scan below asks it of every line its gates pass
    full = [redact.find_secrets(text, catalogue.library_findings) for text in texts]
    monkeypatch.setattr(catalogue, "_known", [catalogue.Gate.of(g) for g in catalogue._gates])
    monkeypatch.setattr(catalogue, "_configured", False)  # as a process that has only the record
    judged = [catalogue._neither_finds(text) for text in texts]
    assert [text for text, found, cheap in zip(texts, full, judged, strict=True) if found and cheap] == []
    assert sum(bool(found) for found in full) >= 1000  # the secrets are there to be found
    assert sum(judged[len(TEXTS) + len(secrets):][:len(memories)]) >= len(memories) // 3
    assert catalogue._neither_finds(ORDINARY)


def test_the_cheap_check_knows_a_literal_of_every_token_format() -> None:
    """`recall.secretish` says yes to a text holding any literal of `redact`'s token formats but
    two, which need more than their literal: a Discord bot token (a full stop) it knows by its
    shape, a Sentry DSN (`://`) by the `@` after it."""
    from memrepo.format import token_formats
    from memrepo.recall import secretish

    shapes = {"discord-bot-token": "M" * 24 + "." + "a" * 6 + "." + "b" * 27, "sentry-dsn": "://" + "a" * 32 + "@"}
    missing = [(kind, literal) for kind, _source, _keep, literals in token_formats.TOKENS for literal in literals
               if not secretish.may_hold_secret(shapes.get(kind, literal))]
    assert missing == []
    assert not secretish.may_hold_secret("://" + "a" * 32) and not secretish.may_hold_secret("M" * 24 + ".a.b")


SCAN_LOADS = """
import sys
from memrepo.format import catalogue
found = catalogue.find_secrets(sys.stdin.read())
print(sorted(m for m in ("memrepo.format.redact", "memrepo.format.token_formats", "detect_secrets") if m in sys.modules))
"""


def test_an_ordinary_memory_loads_neither_catalogue(tmp_path) -> None:
    home = str(tmp_path)
    scan(home, LIBRARY_ONLY)  # the gates remembered
    env = {k: v for k, v in os.environ.items() if k != "XDG_CACHE_HOME"}
    env["HOME"] = home

    def loads(text: str) -> str:
        return subprocess.run([sys.executable, "-c", SCAN_LOADS], input=text, env=env, capture_output=True,
                              text=True, check=True).stdout.strip()

    assert loads(ORDINARY) == "[]"
    assert loads(ORDINARY + "The api token is in the vault.\n") == "['memrepo.format.redact', 'memrepo.format.token_formats']"
    assert loads(ORDINARY + LIBRARY_ONLY) == "['detect_secrets', 'memrepo.format.redact', 'memrepo.format.token_formats']"
