"""`memrepo audit claude`: what of MEMORY.md / CLAUDE.md reaches a session, measured as Claude Code loads it."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner
from helpers import write_file

from memrepo.claude import audit
from memrepo.cli.main import cli


def _entries(n: int, start: int = 1) -> str:
    return "".join(f"- [Entry {i}](entry_{i}.md) - MEMLINE-{i}\n" for i in range(start, start + n))


def _audit(tmp_path: str, name: str, text: str | bytes) -> audit.Result:
    return audit.audit_file(write_file(str(tmp_path), name, text))


def test_300_short_lines_lose_exactly_lines_201_to_300_newest_first(tmp_path: str) -> None:
    r = _audit(tmp_path, "MEMORY.md", _entries(300))
    assert (r.lines_present, r.lines_loaded) == (300, 200)
    assert [n for n, _ in r.cut] == list(range(300, 200, -1))
    assert r.cut[0][1] == "- [Entry 300](entry_300.md) - MEMLINE-300"
    assert r.units_loaded == len(_entries(200)) - 1


def test_200_lines_load_whole(tmp_path: str) -> None:
    r = _audit(tmp_path, "MEMORY.md", _entries(200))
    assert (r.lines_loaded, r.cut, r.is_cut) == (200, [], False)


def test_long_lines_are_cut_at_the_last_newline_within_25000_units(tmp_path: str) -> None:
    # CLAUDE-CODE.md §3.2: 120 lines of 315 characters (newline included) -> 79 lines, 24,884 characters load.
    text = "".join(f"{i:03d}" + "x" * 311 + "\n" for i in range(1, 121))
    r = _audit(tmp_path, "MEMORY.md", text)
    assert (r.lines_present, r.units_present) == (120, 120 * 315 - 1)
    assert (r.lines_loaded, r.units_loaded) == (79, 24_884)
    assert [n for n, _ in r.cut] == list(range(120, 79, -1))


@pytest.mark.parametrize("char, loaded", [
    ("é", 79),   # one UTF-16 unit (two UTF-8 bytes): characters, not bytes, count -> as ASCII
    ("😀", 39),  # two UTF-16 units each: a line is 628 + 1 units
])
def test_the_unit_is_utf16_not_bytes(tmp_path: str, char: str, loaded: int) -> None:
    text = "".join(char * 314 + "\n" for _ in range(120))
    r = _audit(tmp_path, "MEMORY.md", text)
    assert r.lines_loaded == loaded
    assert len(text.encode("utf-8")) > 25_000 * 1.9


def test_accented_text_under_the_limit_in_characters_loads_whole_though_its_bytes_are_over(tmp_path: str) -> None:
    text = "".join("- Preferência: café às três, açúcar à parte " + "é" * 150 + "\n" for _ in range(120))
    assert len(text) < 25_000 < len(text.encode("utf-8"))
    r = _audit(tmp_path, "MEMORY.md", text)
    assert (r.lines_loaded, r.is_cut) == (120, False)


def test_front_matter_and_block_html_comments_are_not_counted(tmp_path: str) -> None:
    front = "---\nname: index\ndescription: x\n---\n"
    comment = "<!--\n" + "a comment line\n" * 50 + "-->\n"
    one_line_comment = "<!-- a one-line comment -->\n"
    body = _entries(150) + comment + one_line_comment + _entries(60, start=151)
    r = _audit(tmp_path, "MEMORY.md", front + body)
    assert (r.lines_present, r.lines_loaded) == (210, 200)
    # Lines are numbered as in the file: 4 front-matter lines, 52 + 1 comment lines before entry 151.
    assert [n for n, _ in r.cut] == list(range(4 + 150 + 53 + 60, 4 + 150 + 53 + 50, -1))
    assert r.cut[-1][1] == "- [Entry 201](entry_201.md) - MEMLINE-201"


def test_inline_comments_and_comments_in_code_fences_stay(tmp_path: str) -> None:
    text = "- entry <!-- inline --> stays\n```\n<!-- in a fence -->\n```\n"
    assert [line for _, line in audit.loaded_lines(text)] == ["- entry <!-- inline --> stays", "```", "<!-- in a fence -->", "```"]


def test_claude_md_loads_whole_and_warns_past_200_lines(tmp_path: str) -> None:
    r = _audit(tmp_path, "CLAUDE.md", "- rule\n" * 250)
    assert (r.lines_loaded, r.is_cut) == (250, False)
    assert r.notes == ["250 lines: all load, but the docs advise under 200"]


def test_claude_md_over_4_mib_is_skipped_whole(tmp_path: str) -> None:
    r = _audit(tmp_path, "CLAUDE.md", ("x" * 1023 + "\n") * (4 * 1024 + 1))
    assert r.lines_loaded == 0 and len(r.cut) == 4097 and r.is_cut


def test_cli_exit_codes_and_listing(tmp_path: str) -> None:
    cut = write_file(str(tmp_path), "a/MEMORY.md", _entries(203))
    fine = write_file(str(tmp_path), "b/CLAUDE.md", "- be brief\n")
    result = CliRunner().invoke(cli, ["audit", "claude", cut, fine], catch_exceptions=False)
    assert result.exit_code == 1
    assert result.stdout.splitlines()[:5] == [
        f"{cut}: CUT, 3 entries never reach a session: 200 of 203 lines, "
        f"{len(_entries(200)) - 1:,} of {len(_entries(203)) - 1:,} characters (UTF-16 units) load",
        "  never loaded, newest first:",
        "  line 203: - [Entry 203](entry_203.md) - MEMLINE-203",
        "  line 202: - [Entry 202](entry_202.md) - MEMLINE-202",
        "  line 201: - [Entry 201](entry_201.md) - MEMLINE-201",
    ]
    assert result.stdout.splitlines()[5] == f"{fine}: loads whole: 1 of 1 lines, 10 of 10 characters (UTF-16 units) load"
    assert CliRunner().invoke(cli, ["audit", "claude", fine]).exit_code == 0


def test_discovers_auto_memory_indexes_and_claude_md_files(tmp_path: str, isolated_env: str) -> None:
    index = write_file(isolated_env, ".claude/projects/-home-ann-src-app/memory/MEMORY.md", _entries(3))
    user_md = write_file(isolated_env, ".claude/CLAUDE.md", "- global rule\n")
    project = os.path.join(str(tmp_path), "proj", "sub")
    os.makedirs(project)
    proj_md = write_file(str(tmp_path), "proj/CLAUDE.md", "- project rule\n")
    assert audit.discover(project) == [index, user_md, proj_md]
    result = CliRunner().invoke(cli, ["audit", "claude", os.path.join(str(tmp_path), "nope")])
    assert result.exit_code == 1 and "no such file or directory" in result.output
