"""format.foreign: other tools' files are read leniently; bad front matter gives the body, never an error."""

from __future__ import annotations

import codecs
import os

import pytest

from memrepo.format import foreign
from memrepo.importers import claude_code, common


def test_a_mapping_splits_into_meta_and_body() -> None:
    got = foreign.parse("---\nname: testing\nmetadata: {type: feedback}\nmodified: 2026-11-20\n---\n\nUse a real DB.\n")
    assert (got.meta["name"], got.meta["metadata"], got.body, got.problem) == ("testing", {"type": "feedback"}, "Use a real DB.\n", None)
    assert str(got.meta["modified"]) == "2026-11-20"


@pytest.mark.parametrize("text,problem", [
    ("Just a note, no header.\n", "no front matter"),
    ("", "no front matter"),
    ("---\nA horizontal rule and no closing fence\n", "no front matter"),
    ("---\n- a\n- list\n---\nbody\n", "front matter is not a mapping"),
    ("---\njust a string\n---\nbody\n", "front matter is not a mapping"),
    ("---\nname: \"unclosed\n---\nbody\n", "while scanning a quoted scalar"),
    ("---\nname: [unclosed\n---\nbody\n", "while parsing a flow sequence"),
    ("---\n" + "[" * 5000 + "\n---\nbody\n", "while increasing flow level"),
    ("---\na: &x [1, 2]\nb: *x\n---\nbody\n", "front matter uses YAML aliases"),
    ("---\n!!python/object:os.system x\n---\nbody\n", "could not determine a constructor for the tag 'tag:yaml.org,2002:python/object:os.system'"),
])
def test_anything_but_a_mapping_gives_the_whole_text_as_body(text: str, problem: str) -> None:
    got = foreign.parse(text)
    assert (got.meta, got.body, got.problem) == ({}, text, problem)


def test_oversized_front_matter_is_not_read() -> None:
    text = "---\nname: x\n" + "k: v\n" * (foreign.MAX_HEAD // 4) + "---\nbody\n"
    got = foreign.parse(text)
    assert (got.meta, got.body, got.problem) == ({}, text, f"front matter over {foreign.MAX_HEAD:,} characters")


def test_bom_crlf_empty_front_matter_and_odd_keys() -> None:
    assert foreign.parse("\ufeff---\r\nname: y\r\n---\r\nbody\r\n").meta == {"name": "y"}
    assert (foreign.parse("---\n---\nbody\n").meta, foreign.parse("---\n---\nbody\n").body) == ({}, "body\n")
    assert foreign.parse("---\n2: two\ntrue: yes\n---\nb\n").meta == {"2": "two", "True": True}


def test_read_bounds_the_file(tmp_path: str) -> None:
    path = os.path.join(str(tmp_path), "note.md")
    with open(path, "wb") as fh:
        fh.write(b"---\nname: cafe\n---\nbody\n")
    assert foreign.read(path).meta == {"name": "cafe"}
    with pytest.raises(ValueError, match="over 10 bytes"):
        foreign.read(path, max_bytes=10)


TEXT = "---\nname: café\n---\nThe café's port is 5433 ✓\n"


@pytest.mark.parametrize("codec", ["utf-8", "utf-8-sig", "utf-16", "utf-16-be", "utf-32"])
def test_read_decodes_utf8_and_text_that_a_byte_order_mark_names(tmp_path: str, codec: str) -> None:
    # A Windows editor's "Unicode" is UTF-16 with a mark: it read as "no front matter" (h33's walk).
    data = TEXT.encode(codec)
    if codec == "utf-16-be":
        data = codecs.BOM_UTF16_BE + data
    path = os.path.join(str(tmp_path), "note.md")
    with open(path, "wb") as fh:
        fh.write(data)
    got = foreign.read(path)
    assert (got.meta, got.body) == ({"name": "café"}, "The café's port is 5433 ✓\n")


def test_read_refuses_text_that_is_not_utf8_naming_the_byte_and_the_fix(tmp_path: str) -> None:
    # A Latin-1 `é` was imported as U+FFFD into title, description and body (h33's walk).
    path = os.path.join(str(tmp_path), "note.md")
    with open(path, "wb") as fh:
        fh.write(TEXT.replace(" ✓", "").encode("latin-1"))
    with pytest.raises(ValueError) as exc:
        foreign.read(path)
    assert str(exc.value) == ("not UTF-8 text (byte 0xe9 at offset 13); save it as UTF-8 "
                              "(e.g. `iconv -f LATIN1 -t UTF-8`) and import again")


def test_a_topic_file_with_bad_front_matter_is_reported_not_fatal(tmp_path: str) -> None:
    path = os.path.join(str(tmp_path), "odd.md")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("---\n- not\n- a mapping\n---\nSome text\n")
    report = common.Report("claude-code")
    assert claude_code.topic_note(path, "p/odd.md", None, None, report) is None
    assert report.skipped == [(path, "unreadable front matter (front matter is not a mapping)")]
