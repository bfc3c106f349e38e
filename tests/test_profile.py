"""The bounded always-on profile: adds never fail, the weakest lines are demoted into searchable memories."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner
from helpers import IDENTITY, ROOT, build_template, commit_all, copy_template, git, write_file

from memrepo.store import doctor
from memrepo.format import notes
from memrepo.passes import profile
from memrepo.recall import query, decide as recall
from memrepo.claude import session_start as sessionstart
from memrepo.cli.main import cli

# Ten lines already in the profile: (source, added, text). Dates are old; the adds are "today".
EXISTING = [
    ("user", "2026-01-03", "Writes commit messages in the imperative mood"),
    ("inferred", "2026-01-02", "Seems to prefer dark terminal themes"),
    ("user", "2026-01-04", "Works from Lisbon on Europe/Lisbon time"),
    ("inferred", "2026-01-10", "Probably reviews code in the mornings"),
    ("user", "2026-01-05", "Deploys the billing app with Kamal only"),
    ("inferred", "2026-02-03", "Likes tables more than bullet lists"),
    ("user", "2026-02-04", "Tracks work in Linear, not GitHub issues"),
    ("inferred", "2026-02-05", "Apparently drinks a lot of green tea"),
    ("user", "2026-02-06", "Keeps infrastructure in Terraform modules"),
    ("user", "2026-02-07", "Runs Postgres 16 locally through Docker"),
]
# Twelve lines added one by one: (flag, text).
ADDED = [
    ("--user", "Runs pytest with -x before every push"),
    ("--inferred", "Tends to work late on Thursdays"),
    ("--user", "Never force-pushes to the main branch"),
    ("--user", "Uses the fish shell instead of bash"),
    ("--inferred", "Might prefer Postgres over MySQL"),
    ("--user", "Reads code review comments on GitHub"),
    ("--user", "Keeps passwords in Bitwarden vaults"),
    ("--user", "Writes documentation in British English"),
    ("--inferred", "Often pairs with Noor on frontend work"),
    ("--user", "Wants short answers, details on request"),
    ("--user", "Formats Python code with ruff format"),
    ("--user", "Pins Node to the LTS release with mise"),
]
BOUND = 560  # 14 lines of 40 characters (text + newline); these lines are 32-46 characters long

# The weakest lines, in the order they went: every inferred line except the one recall used
# (fewest uses first, then oldest), then the user lines recall never used, oldest first.
EXPECTED_DEMOTED = [
    "Seems to prefer dark terminal themes",          # inferred, 0 uses, oldest
    "Likes tables more than bullet lists",           # inferred, 0 uses
    "Apparently drinks a lot of green tea",          # inferred, 0 uses
    "Tends to work late on Thursdays",               # inferred, 0 uses, added today
    "Might prefer Postgres over MySQL",              # inferred, 0 uses, added today
    "Often pairs with Noor on frontend work",        # inferred, 0 uses, added today
    "Probably reviews code in the mornings",         # inferred, 2 uses: the last inferred line
    "Works from Lisbon on Europe/Lisbon time",       # user, 0 uses, oldest unused user line
]


def _setup(repo: str) -> None:
    lines = "".join(f"- [{s} {d} used:0] {t}\n" for s, d, t in EXISTING)
    write_file(repo, "profile.md", profile.HEADER + lines)
    write_file(repo, "memrepo.json", json.dumps({"profile_bound": BOUND}) + "\n")
    assert commit_all(repo, "profile before the test").returncode == 0
    # Recall used two lines: prompts about them are in this machine's recall log.
    used = {"Probably reviews code in the mornings": 2, "Writes commit messages in the imperative mood": 1}
    log = [{"t": "2026-03-01T10:00:00Z", "terms": list(query.subject_terms(text)), "injected": [], "silent": "no-match"}
           for text, n in used.items() for _ in range(n)]
    write_file(repo, "index/recall-log.jsonl", "".join(json.dumps(e) + "\n" for e in log))


def _add(repo: str, flag: str, text: str) -> str:
    result = CliRunner().invoke(cli, ["--repo", repo, "profile", "add", flag, text], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def _demoted_ids(repo: str) -> dict[str, str]:
    """{line text: memory id} for every memory a demotion made, read back from the files."""
    out = {}
    for name in sorted(os.listdir(os.path.join(repo, "memory"))):
        if name.startswith("profile-"):
            note = notes.read(os.path.join(repo, "memory", name))
            out[note.body.split("\n\n")[0]] = note.id
    return out


def test_twelve_adds_demote_exactly_the_weakest_and_lose_nothing(twelve_added: str) -> None:
    repo = twelve_added
    kept = profile.read(repo)
    demoted = _demoted_ids(repo)
    assert sorted(demoted) == sorted(EXPECTED_DEMOTED)
    assert profile.size(kept) <= BOUND
    # Nothing is lost: every line is in the profile or is a memory; every user line survives.
    every = [t for _, _, t in EXISTING] + [t for _, t in ADDED]
    assert sorted([e.text for e in kept] + list(demoted)) == sorted(every)
    user_said = [t for s, _, t in EXISTING if s == "user"] + [t for f, t in ADDED if f == "--user"]
    assert all(t in demoted or t in [e.text for e in kept] for t in user_said)
    # Each demotion is in git log, in the commit of the add that caused it, in the order they went.
    log = git(repo, "log", "--reverse", "--format=%B%x00").stdout
    demote_lines = [line for line in log.splitlines() if line.startswith("demote: ")]
    assert [line.split("): ", 1)[1] for line in demote_lines] == EXPECTED_DEMOTED
    assert [line.split()[1] for line in demote_lines] == [demoted[t] for t in EXPECTED_DEMOTED]
    for text in EXPECTED_DEMOTED:
        rc = git(repo, "log", "-n1", "--format=%s%n%(trailers:key=Memrepo-Demoted,valueonly)", f"--grep={demoted[text]}").stdout
        assert rc.startswith("profile: add '") and demoted[text] in rc
    # The memory says who said it, and as what class.
    lisbon = notes.read(os.path.join(repo, "memory", demoted["Works from Lisbon on Europe/Lisbon time"] + ".md"))
    assert (lisbon.get("class"), lisbon.get("source"), lisbon.get("created")) == ("preference", "user", "2026-01-04")
    tea = notes.read(os.path.join(repo, "memory", demoted["Apparently drinks a lot of green tea"] + ".md"))
    assert tea.get("source") == "agent" and tea.get("description").startswith("Inferred about the user;")
    # Use counts derived from the recall log were written into the file.
    assert [e.uses for e in kept if e.text.startswith("Writes commit")] == [1]


def _twelve(repo: str) -> None:
    _setup(repo)
    for flag, text in ADDED:
        _add(repo, flag, text)


@pytest.fixture(scope="module")
def twelve_added_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The twelve adds, made once for the tests that read what they did (~13 s each before)."""
    return build_template(tmp_path_factory, _twelve, identity=IDENTITY)


@pytest.fixture
def twelve_added(twelve_added_template: str, tmp_path: os.PathLike[str]) -> str:
    return copy_template(twelve_added_template, tmp_path)


def test_every_kept_line_is_stronger_than_every_demoted_one(twelve_added: str) -> None:
    kept = profile.read(twelve_added)
    weakest_kept = min((0 if e.source == "inferred" else 1, e.uses, e.added) for e in kept)
    for text, note_id in _demoted_ids(twelve_added).items():
        note = notes.read(os.path.join(twelve_added, "memory", note_id + ".md"))
        uses = int(note.get("description").split("recall used it ")[1].split()[0])
        rank = (1 if note.get("source") == "user" else 0, uses, note.get("created"))
        assert rank <= weakest_kept, text
    # Recall finds the demoted lines when a prompt is about them.
    ids = _demoted_ids(twelve_added)
    for prompt, text in RECALL_PROMPTS:
        d = recall.decide(twelve_added, prompt)
        assert ids[text] in [h.id for h in d.hits], (prompt, d.silent, d.terms, [h.id for h in d.hits])


RECALL_PROMPTS = [
    ("what timezone am I in, Lisbon?", "Works from Lisbon on Europe/Lisbon time"),
    ("which terminal theme should the dark mode screenshots use", "Seems to prefer dark terminal themes"),
    ("should this summary use tables or bullet lists", "Likes tables more than bullet lists"),
    ("pair with Noor on the frontend component", "Often pairs with Noor on frontend work"),
    ("postgres or mysql for the new service?", "Might prefer Postgres over MySQL"),
    ("when should I schedule the code reviews, mornings?", "Probably reviews code in the mornings"),
]


def test_a_line_longer_than_the_bound_goes_whole_to_a_memory(repo: str) -> None:
    write_file(repo, "memrepo.json", '{"profile_bound": 40}\n')
    commit_all(repo, "small bound")
    _add(repo, "--user", "Short line")
    long = "Deploys go through the staging cluster first, then a canary at five percent for an hour"
    out = _add(repo, "--user", long)
    assert "demoted to memory profile-deploys-go-through" in out
    assert [e.text for e in profile.read(repo)] == ["Short line"]
    (note_id,) = [i for t, i in _demoted_ids(repo).items() if t == long]
    assert notes.read(os.path.join(repo, "memory", note_id + ".md")).get("title") == long[:88]


def test_add_twice_is_a_no_op_and_user_upgrades_inferred(repo: str) -> None:
    _add(repo, "--inferred", "Prefers small pull requests")
    head = git(repo, "rev-parse", "HEAD").stdout
    assert "Already in the profile" in _add(repo, "--inferred", "Prefers  small pull requests")
    assert git(repo, "rev-parse", "HEAD").stdout == head
    _add(repo, "--user", "prefers small pull requests")
    assert [(e.source, e.text) for e in profile.read(repo)] == [("user", "Prefers small pull requests")]


def test_show_remove_and_demote(repo: str) -> None:
    for text in ("Line one about vim", "Line two about emacs", "Line three about nano"):
        _add(repo, "--user", text)
    out = CliRunner().invoke(cli, ["--repo", repo, "profile", "show"], catch_exceptions=False).stdout
    assert out.splitlines()[1].endswith("] Line two about emacs") and "3 lines, 62 of 1,375 characters" in out
    r = CliRunner().invoke(cli, ["--repo", repo, "profile", "remove", "2"], catch_exceptions=False)
    assert r.exit_code == 0 and [e.text for e in profile.read(repo)] == ["Line one about vim", "Line three about nano"]
    assert git(repo, "log", "-n1", "--format=%(trailers:key=Memrepo-Action,valueonly)").stdout.strip() == "profile-remove"
    r = CliRunner().invoke(cli, ["--repo", repo, "profile", "demote", "1"], catch_exceptions=False)
    assert r.exit_code == 0 and [e.text for e in profile.read(repo)] == ["Line three about nano"]
    assert git(repo, "log", "-n1", "--format=%(trailers:key=Memrepo-Action,valueonly)").stdout.strip() == "demote"
    assert list(_demoted_ids(repo)) == ["Line one about vim"]
    bad = CliRunner().invoke(cli, ["--repo", repo, "profile", "remove", "9"])
    assert bad.exit_code == 1 and "the profile has no line 9 (it has 1)" in bad.output


def test_secret_looking_lines_are_refused_with_a_hint(repo: str) -> None:
    r = CliRunner().invoke(cli, ["--repo", repo, "profile", "add", "token ghp_" + "a1B2" * 9])
    assert r.exit_code == 1 and "looks like it holds a secret" in r.output and "hint:" in r.output
    assert not os.path.exists(profile.path(repo))


@pytest.mark.parametrize("line, expected", [
    ("- [user 2026-11-29 used:3] Uses fish", ("Uses fish", "user", "2026-11-29", 3)),
    ("- [inferred 2026-11-30 used:0] Likes tea", ("Likes tea", "inferred", "2026-11-30", 0)),
    ("- [inferred ? used:2] No date", ("No date", "inferred", "", 2)),
    ("- written by hand", ("written by hand", "user", "", 0)),
    ("- [note] brackets a person wrote", ("[note] brackets a person wrote", "user", "", 0)),
])
def test_parse_line(line: str, expected: tuple[str, str, str, int]) -> None:
    e = profile.parse_line(line)
    assert e is not None and (e.text, e.source, e.added, e.uses) == expected


def test_parse_skips_header_comment_and_blanks() -> None:
    text = profile.HEADER + "- [user 2026-11-29 used:0] One\n\n<!-- - not an entry -->\n- Two\n"
    assert [e.text for e in profile.parse(text)] == ["One", "Two"]
    assert profile.render(profile.parse(text)) == profile.HEADER + "- [user 2026-11-29 used:0] One\n- [user ? used:0] Two\n"


@pytest.mark.parametrize("source", ["startup", "compact"])
def test_session_start_hook_injects_the_profile(repo: str, source: str) -> None:
    _add(repo, "--user", "Works in Lisbon time")
    _add(repo, "--inferred", "Prefers small pull requests")
    env = dict(os.environ, MEMREPO_DIR=repo)
    event = json.dumps({"hook_event_name": "SessionStart", "source": source}).encode()
    proc = subprocess.run([sys.executable, "-I", os.path.join(ROOT, "hooks", "session_start.py")], input=event,
                          capture_output=True, env=env, timeout=30)
    assert proc.returncode == 0, proc.stderr
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context == (profile.INTRO + "\n<memrepo-profile>\n- Works in Lisbon time\n"
                       "- Prefers small pull requests (inferred)\n</memrepo-profile>")


def test_doctor_reports_the_always_on_size(repo: str) -> None:
    assert "always-on size" not in [c.name for c in doctor.run(repo, sessionstart.always_on_text(repo))]  # nothing injected yet
    _add(repo, "--user", "Works in Lisbon time")
    text = sessionstart.always_on_text(repo)
    assert "always-on size" in [c.name for c in doctor.run(repo, text)]
    check = doctor.always_on_check(repo, text)
    size = len(text)
    assert check.ok and check.detail == f"≈{-(-size // 4)} tokens at session start (estimate: {size} characters / 4), budget 1,300"
    write_file(repo, "index/local.json", '{"always_on_tokens": 10}')
    check = doctor.always_on_check(repo, text)
    assert not check.ok and "profile demote" in check.fix
