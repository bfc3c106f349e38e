"""The query side's Porter stemmer gives the term SQLite's FTS5 `porter` tokenizer stores (issue 17)."""

from __future__ import annotations

import glob
import os
import random
import re
import sqlite3

from helpers import ROOT
from memrepo.recall import porter
from memrepo.recall.porter import _STEP2, _STEP3, _STEP4


def fts5_terms(words: list[str]) -> dict[str, str]:
    """What FTS5 itself stores for each word, read back through fts5vocab."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61 remove_diacritics 2')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    db.executemany("INSERT INTO t(rowid, x) VALUES (?, ?)", [(i + 1, w) for i, w in enumerate(words)])
    by_doc = {doc: term for term, doc, _, _ in db.execute("SELECT term, doc, col, offset FROM v")}
    return {w: by_doc[i + 1] for i, w in enumerate(words)}


def real_words() -> list[str]:
    found: set[str] = set()
    prose = [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "CONTRIBUTING.md")] + glob.glob(os.path.join(ROOT, "docs", "*.md"))
    for path in glob.glob(os.path.join(ROOT, "tests", "data", "**", "*"), recursive=True) + prose:
        if os.path.isfile(path):
            found.update(re.findall(r"[a-z0-9]+", open(path, encoding="utf-8", errors="ignore").read().lower()))
    return sorted(found)


def synthetic_words(n: int = 20000) -> list[str]:
    """Suffix pile-ups and odd letter runs (yy, digits) the real words rarely have."""
    rng = random.Random(17)
    suffixes = [a for a, _ in _STEP2 + _STEP3] + list(_STEP4) + ["sses", "ies", "ss", "s", "eed", "ed", "ing", "at",
                                                                 "bl", "iz", "e", "ll", "y", "sion", "tion"]
    out = set(suffixes)
    while len(out) < n:
        base = "".join(rng.choice("abcdefghijklmnopqrstuvwxyzaeiouyy") for _ in range(rng.randint(0, 6)))
        out.add(base + rng.choice(suffixes) + (rng.choice(suffixes) if rng.random() < 0.3 else ""))
    return sorted(out)


def test_real_words_stem_as_fts5_stems_them() -> None:
    words = real_words()
    assert len(words) > 3000
    want = fts5_terms(words)
    assert [(w, want[w], porter.stem(w)) for w in words if porter.stem(w) != want[w]] == []


def test_odd_words_stem_as_fts5_stems_them() -> None:
    words = synthetic_words()
    want = fts5_terms(words)
    assert [(w, want[w], porter.stem(w)) for w in words if porter.stem(w) != want[w]] == []


def test_each_steps_rules_come_longest_suffix_first() -> None:
    # stem takes the first rule that matches as the longest one (issue 44: no sort per word)
    assert list(_STEP2) == sorted(_STEP2, key=lambda r: -len(r[0]))
    assert list(_STEP3) == sorted(_STEP3, key=lambda r: -len(r[0]))
    assert list(_STEP4) == sorted(_STEP4, key=lambda s: -len(s))


def test_words_that_fold_to_one_term() -> None:
    assert porter.stem("refund") == porter.stem("refunds")
    assert porter.stem("validate") == porter.stem("validator") == porter.stem("validation")
    assert porter.stem("deploy") != porter.stem("depot")
