"""`search.quote`: user text reaches FTS5 MATCH as one literal phrase (sqlite-utils' test_fts.py style).

Every string below is FTS5 query syntax when left unquoted (a column filter, a prefix, NEAR,
a boolean operator, a group, an unbalanced quote); quoted, each must parse, and match only
the row holding the same words in the same order.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing

import pytest

from memrepo.recall.search import quote

TOKENIZER = "porter unicode61 remove_diacritics 2"  # the index's own (DESIGN.md, Index)

# (user text, its quoted form, the body of a row holding it literally, does the decoy row hold it too?)
# The decoy row is what the unquoted syntax finds: title 'deploy', body 'friday'.
CASES = [
    ("deploy", '"deploy"', "deploy", True),
    ('say "hi" now', '"say ""hi"" now"', "say hi now", False),
    ('"', '""""', None, False),
    ('""', '""""""', None, False),
    ('unbalanced "quote', '"unbalanced ""quote"', "unbalanced quote", False),
    ("depl*", '"depl*"', "depl", False),
    ("*", '"*"', None, False),
    ("-friday", '"-friday"', "friday", True),
    ("deploy -friday", '"deploy -friday"', "deploy friday", False),
    ("NEAR(deploy friday)", '"NEAR(deploy friday)"', "near deploy friday", False),
    ("deploy NEAR friday", '"deploy NEAR friday"', "deploy near friday", False),
    ("deploy AND friday", '"deploy AND friday"', "deploy and friday", False),
    ("deploy OR friday", '"deploy OR friday"', "deploy or friday", False),
    ("deploy NOT friday", '"deploy NOT friday"', "deploy not friday", False),
    ("NOT", '"NOT"', "not", False),
    ("AND OR NOT", '"AND OR NOT"', "and or not", False),
    ("title:deploy", '"title:deploy"', "title deploy", False),
    ("{title body}:deploy", '"{title body}:deploy"', "title body deploy", False),
    ("^deploy", '"^deploy"', "deploy", True),
    ("deploy + friday", '"deploy + friday"', "deploy friday", False),
    ("(deploy", '"(deploy"', "deploy", True),
    ("(deploy OR friday) AND NOT coffee", '"(deploy OR friday) AND NOT coffee"', "deploy or friday and not coffee", False),
    ("café", '"café"', "café", False),
    ("Café Crème", '"Café Crème"', "cafe creme", False),
    ("日本語", '"日本語"', "日本語", False),
    ("🚀 deploy", '"🚀 deploy"', "deploy", True),
    ("it's", '"it\'s"', "it s", False),
    ("a\tb\nc", '"a\tb\nc"', "a b c", False),
    ("", '""', None, False),
    ("()", '"()"', None, False),
]
IDS = [repr(case[0]) for case in CASES]


def table(body: str | None = None) -> sqlite3.Connection:
    """An FTS5 table like the index's: the decoy as row 1, and `body` as row 2."""
    conn = sqlite3.connect(":memory:")
    conn.execute(f"CREATE VIRTUAL TABLE fts USING fts5(title, body, tokenize='{TOKENIZER}')")
    conn.execute("INSERT INTO fts(rowid, title, body) VALUES (1, 'deploy', 'friday')")
    if body is not None:
        conn.execute("INSERT INTO fts(rowid, title, body) VALUES (2, 'x', ?)", (body,))
    return conn


def _rows(db: sqlite3.Connection, expr: str) -> list[int]:
    return [r for (r,) in db.execute("SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rowid", (expr,))]


@pytest.mark.parametrize("text, quoted, body, decoy", CASES, ids=IDS)
def test_quote(text: str, quoted: str, body: str | None, decoy: bool) -> None:
    assert quote(text) == quoted


@pytest.mark.parametrize("text, quoted, body, decoy", CASES, ids=IDS)
def test_quoted_text_matches_literally_and_never_raises(text: str, quoted: str, body: str | None, decoy: bool) -> None:
    with closing(table(body)) as db:
        assert _rows(db, quote(text)) == [1] * decoy + [2] * (body is not None)


@pytest.mark.parametrize("text", ["title:deploy", "depl*", "NEAR(deploy)", "(deploy", '"', "-friday",
                                  "deploy AND friday", "{title body}:deploy", "deploy NOT coffee"])
def test_the_same_text_unquoted_is_fts_syntax(text: str) -> None:
    # Why quoting matters: raw, each is an error, or finds the decoy by syntax rather than by its words.
    with closing(table()) as db:
        try:
            found = _rows(db, text)
        except sqlite3.OperationalError:
            return
        assert found == [1] and _rows(db, quote(text)) == []


def test_quoted_terms_joined_with_or_stay_literal() -> None:
    # The candidate query ORs quoted terms: an operator a user typed is one more literal term.
    with closing(table("not title deploy")) as db:
        assert _rows(db, " OR ".join(quote(t) for t in ["NOT", "title:deploy", "depl*"])) == [2]
        assert _rows(db, " OR ".join(quote(t) for t in ["AND", "depl*"])) == []
