"""Every number, URL and string a memory file holds is read within bounds (issue 38, parts 1 and 2).

A teammate's push (or `git commit --no-verify`) can bring any front matter and any body. One
memory with `x: <4,301 digits>` made every command that read the store exit 3 (Python's limit
on int-to-text conversion) and every post-commit index update fail; a body with
`http://[::1]:8080/f` stopped the daily sweep ("Invalid IPv6 URL"). Now the bad memory is named
and skipped, and the store goes on: index, doctor, list, stats, fmt, curate, verify and sweep.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
from typing import Any

import pytest

from helpers import commit_all, git, memory_text, write_file, write_memory
from memrepo.format import merge, notes, validate
from memrepo.passes.verify import argtypes, claims
from memrepo.base import paths
from test_hook import event, hook

BIG = "9" * 4301
KEY_FIX = "quote it (`x: '…'`) if it is text, or shorten it"


def cli(repo: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memrepo", "--repo", repo, *args], capture_output=True, text=True,
                          timeout=600)


def with_key(note_id: str, line: str, **fields: Any) -> str:
    """A valid memory with one more front matter line (the 8th of the file) after `created`."""
    text = memory_text(note_id, **fields)
    return text.replace("created: '2026-01-15'\n", f"created: '2026-01-15'\n{line}\n", 1)


@pytest.mark.parametrize("value", [
    BIG, "-" + BIG, "0x" + "f" * 20000, "0b" + "1" * 20000, "0" + "7" * 20000, ":".join(["59"] * 5000),
    "1_" * 5000 + "1", "1." + "9" * 5000, "[1, 2, " + "9" * 200 + "]", "{a: {b: " + "7" * 300 + "}}",
    "0x" + "f" * 98, "-" + "9" * 100,
], ids=["decimal", "negative", "hex", "binary", "octal", "sexagesimal", "underscores", "float", "in-a-list",
        "in-a-mapping", "hex-longer-in-decimal", "sign-past-the-bound"])
def test_a_number_over_the_bound_is_a_parse_error_naming_the_key(value: str) -> None:
    text = with_key("big", f"x: {value}")
    with pytest.raises(notes.ParseError) as err:
        notes.parse(text)
    assert str(err.value).startswith("`x` holds a number ")
    assert str(err.value).endswith(" characters long, over 100")
    assert (err.value.line, err.value.fix) == (8, KEY_FIX)


@pytest.mark.parametrize("value, expected", [
    ("12345", 12345), ("9" * 100, int("9" * 100)), ("0x" + "f" * 80, int("f" * 80, 16)), ("'" + BIG + "'", BIG),
    (".inf", float("inf")), ("2.5e+3", 2500.0), ("12:30", 750),
], ids=["small", "at-the-bound", "hex-at-the-bound", "quoted", "inf", "exponent", "sexagesimal"])
def test_numbers_within_the_bound_are_read_as_written(value: str, expected: Any) -> None:
    note = notes.parse(with_key("ok", f"x: {value}"))
    assert note.get("x") == expected
    json.dumps(note.meta)
    assert notes.parse(notes.serialize(note)).get("x") == expected


@pytest.mark.parametrize("depth, error", [(15, ""), (16, "front matter is nested more than 16 levels deep"),
                                          (500, "front matter is nested more than 16 levels deep"),
                                          (5000, "front matter is not valid YAML (exceeded maximum nesting depth)")])
def test_nesting_is_bounded_before_any_reader_recurses(depth: int, error: str) -> None:
    for value in ("[" * depth + "]" * depth, "{a: " * depth + "1" + "}" * depth):
        text = with_key("deep", f"x: {value}")
        if not error:
            notes.serialize(notes.parse(text))
            continue
        with pytest.raises(notes.ParseError, match=r"^" + error.replace("(", r"\(").replace(")", r"\)") + "$"):
            notes.parse(text)


@pytest.mark.parametrize("value, expected", [
    ("!!timestamp 2026-13-45", "2026-13-45"), ("!!timestamp 0000-01-01", "0000-01-01"),
    ("!!timestamp 2026-01-01T00:00:00+01:00", "2026-01-01T00:00:00+01:00"),
    ("!!set {a, b}", "front matter is not valid YAML (!!set values are not memory front matter)"),
    ("!!binary aGVsbG8=", "front matter is not valid YAML (!!binary values are not memory front matter)"),
    ("!!omap [{a: 1}]", "front matter is not valid YAML (!!omap values are not memory front matter)"),
    ("[!!pairs [{a: 1}]]", "front matter is not valid YAML (!!pairs values are not memory front matter)"),
], ids=["timestamp-off-the-calendar", "timestamp-year-0", "timestamp", "set", "binary", "omap", "pairs-in-a-list"])
def test_explicit_tags_build_only_what_json_and_the_serializer_read_back(value: str, expected: str) -> None:
    # `!!timestamp 2026-13-45` raised ValueError from parse; a set or bytes broke json and `fmt`.
    text = with_key("tagged", f"x: {value}")
    if "not memory front matter" not in expected:
        note = notes.parse(text)
        assert note.get("x") == expected
        assert notes.parse(notes.serialize(note)).get("x") == expected
        return
    with pytest.raises(notes.ParseError) as err:
        notes.parse(text)
    assert (str(err.value), err.value.line) == (expected, 8)


def test_the_pre_commit_check_names_the_file_the_line_and_the_key(repo: str) -> None:
    write_file(repo, "memory/big.md", with_key("big", f"x: {BIG}"))
    refused = commit_all(repo, "a big number")
    assert refused.returncode == 1
    assert (f"memory/big.md:8: `x` holds a number 4,301 characters long, over 100 — {KEY_FIX}"
            in refused.stderr.splitlines())


@pytest.mark.parametrize("value, problem", [
    ("-0.001", "`half_life_days` -0.001 is not a positive number"),
    (".nan", "`half_life_days` nan is not a positive number"),
    ("-.inf", "`half_life_days` -inf is not a positive number"),
], ids=["negative", "nan", "minus-infinity"])
def test_a_half_life_recall_cannot_compute_with_is_skipped_and_named(repo: str, value: str, problem: str) -> None:
    # 0.5 ** (age / -0.001) overflowed in recall's ranking: every prompt that found the memory was silent.
    write_memory(repo, "friday", class_="rule", title="No production deploys on Friday afternoon",
                 description="After 16:00 on Fridays nothing ships.", topics=["deploy"])
    text = memory_text("decays", title="Deploy freeze on Friday afternoons", description="No deploys on Friday afternoon.",
                       topics=["deploy"], created="2025-01-15")
    write_file(repo, "memory/decays.md", text.replace("source: user\n", f"source: user\nhalf_life_days: {value}\n"))
    done = commit_all(repo, "slipped in", "--no-verify")
    assert done.returncode == 0
    assert done.stderr.splitlines() == [f"memrepo: skipped memory/decays.md: {problem} — run `memrepo doctor` for every problem"]
    problems, _ = validate.check_text(text.replace("source: user\n", f"source: user\nhalf_life_days: {value}\n"),
                                      "memory/decays.md")
    assert [p.problem for p in problems] == [f"half_life_days {float(value.replace('.nan', 'nan').replace('.inf', 'inf'))!r}"
                                             " is not a positive number"]
    prompt = hook("user_prompt_submit", event("can we deploy on friday afternoon?"), repo)
    assert prompt.returncode == 0 and prompt.stderr == b""
    assert "(id: friday)" in json.loads(prompt.stdout)["hookSpecificOutput"]["additionalContext"]


@pytest.fixture
def pulled(tmp_path: Any) -> dict[str, str]:
    """Clone A (`memrepo init`, pushed) and clone B (cloned, `memrepo init`), both through the CLI."""
    remote, a, b = (str(tmp_path / n) for n in ("remote.git", "a", "b"))
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", remote], check=True)
    assert cli(a, "init", a).returncode == 0
    git(a, "remote", "add", "origin", remote)
    git(a, "push", "-q", "-u", "origin", "main")
    subprocess.run(["git", "clone", "-q", remote, b], check=True, capture_output=True)
    assert cli(b, "init", b).returncode == 0
    return {"a": a, "b": b}


GOOD = ["no-production-deploys-friday-afternoon", "dev-server-listens-port-8080"]


def add_good_memories(repo: str) -> None:
    for title, description, body in (
        ("No production deploys on Friday afternoon", "After 16:00 on Fridays nothing ships.", "Ask the lead first."),
        ("The dev server listens on port 8080", "Run the dev server locally on port 8080",
         "It answers at http://[::1]:8080/f and http://localhost:8080/f."),
    ):
        added = cli(repo, "add", "--title", title, "--description", description, "--class", "fact", "--body", body)
        assert added.returncode == 0, added.stderr


def assert_the_store_goes_on(repo: str, ids: list[str]) -> None:
    """Every command that reads the store names memory/big.md, skips it and goes on."""
    named = "memory/big.md: `x` holds a number 4,301 characters long, over 100"
    skipped = f"memrepo: skipped {named} — run `memrepo doctor` for every problem"
    outcomes = {args: cli(repo, *args.split()) for args in (
        "index", "index --rebuild", "doctor", "list", "stats", "fmt", "curate --no-model", "verify --no-model",
        "sweep --no-model")}
    for args, proc in outcomes.items():
        assert "Traceback" not in proc.stderr and "unexpected" not in proc.stderr, (args, proc.stderr)
    assert {args: proc.returncode for args, proc in outcomes.items()} == {
        "index": 0, "index --rebuild": 0, "doctor": 1, "list": 0, "stats": 0, "fmt": 1, "curate --no-model": 0,
        "verify --no-model": 0, "sweep --no-model": 0}
    assert f"not indexed: {named}" in outcomes["index"].stderr.splitlines()  # post-commit or post-merge skipped it
    assert skipped in outcomes["index --rebuild"].stderr.splitlines()
    assert f"FAIL memory files: memory/big.md:8: `x` holds a number 4,301 characters long, over 100 — {KEY_FIX}" \
        in outcomes["doctor"].stdout.splitlines()
    assert f"FAIL indexed files: 1 files skipped: {named}" in outcomes["doctor"].stdout.splitlines()
    assert f"not indexed: {named}" in outcomes["list"].stderr.splitlines()
    listed = [line.split()[0] for line in outcomes["list"].stdout.splitlines()]
    assert sorted(listed) == sorted(ids)
    assert f"not indexed: {named}" in outcomes["stats"].stdout.splitlines()
    assert f"{os.path.join(repo, 'memory', 'big.md')}:8: `x` holds a number 4,301 characters long, over 100 — {KEY_FIX}" \
        in outcomes["fmt"].stderr
    assert f"invalid   big: memory/big.md: unreadable: `x` holds a number 4,301 characters long, over 100" \
        in outcomes["curate --no-model"].stdout
    assert "skip big: unreadable (`x` holds a number 4,301 characters long, over 100); run `memrepo doctor`" \
        in outcomes["verify --no-model"].stdout.splitlines()
    recalled = cli(repo, "recall", "--json", "can we deploy on friday afternoon?")
    assert recalled.returncode == 0, recalled.stderr
    assert [m["id"] for m in json.loads(recalled.stdout)][:1] == ["no-production-deploys-friday-afternoon"]


def test_a_huge_number_committed_past_the_hooks_is_named_and_skipped(repo: str) -> None:
    add_good_memories(repo)
    write_file(repo, "memory/big.md", with_key("big", f"x: {BIG}"))
    done = commit_all(repo, "a big number", "--no-verify")
    assert done.returncode == 0
    assert done.stderr.splitlines() == ["memrepo: skipped memory/big.md: `x` holds a number 4,301 characters long, "
                                        "over 100 — run `memrepo doctor` for every problem"]
    write_memory(repo, "later", title="Release notes live in the wiki", description="Release notes go to the wiki")
    later = commit_all(repo, "a later memory")  # every post-commit update after it still indexes
    assert later.returncode == 0 and later.stderr == "", later.stderr
    assert_the_store_goes_on(repo, GOOD + ["later"])


def test_a_huge_number_that_arrives_by_pull_is_named_and_skipped(pulled: dict[str, str]) -> None:
    a, b = pulled["a"], pulled["b"]
    add_good_memories(a)
    write_file(a, "memory/big.md", with_key("big", f"x: {BIG}"))
    git(a, "add", "-A")
    git(a, "commit", "-q", "--no-verify", "-m", "a big number")
    git(a, "push", "-q", "origin", "main")
    # A fast-forward runs no validating hook; post-merge indexes what came and names what it skipped.
    pulled_in = git(b, "pull", "-q", "--ff-only", "origin", "main", check=False)
    assert pulled_in.returncode == 0, pulled_in.stderr
    assert pulled_in.stderr.splitlines() == ["memrepo: skipped memory/big.md: `x` holds a number 4,301 characters "
                                             "long, over 100 — run `memrepo doctor` for every problem"]
    assert_the_store_goes_on(b, GOOD)


def test_a_huge_number_in_a_real_merge_is_refused_by_name(pulled: dict[str, str]) -> None:
    a, b = pulled["a"], pulled["b"]
    write_file(a, "memory/big.md", with_key("big", f"x: {BIG}"))
    git(a, "add", "-A")
    git(a, "commit", "-q", "--no-verify", "-m", "a big number")
    git(a, "push", "-q", "origin", "main")
    write_memory(b, "local", title="Release notes live in the wiki", description="Release notes go to the wiki")
    assert commit_all(b, "a local memory").returncode == 0
    merged = git(b, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main", check=False)
    assert merged.returncode == 1
    assert merged.stderr.splitlines()[:2] == [
        f"memory/big.md:8: `x` holds a number 4,301 characters long, over 100 — {KEY_FIX}",
        "memrepo: merge rejected: 1 problem in memory files (bypass once with `git merge --no-verify`)"]


MALFORMED_URLS = ["http://[::1", "http://[zz]/", "http://example.com:99999/", "http://[::1]:70000/x",
                  "http://example.com:-1/", "http://[1.2.3.4]/", "http://[v1.x]/"]


@pytest.mark.parametrize("url", ["http://[::1]:8080/f"] + MALFORMED_URLS)
def test_a_url_that_cannot_be_read_is_a_refused_claim_not_a_crash(url: str) -> None:
    note = notes.parse(memory_text("urls", body=f"The service answers at {url} today.\n"))
    found, _ = claims.from_text(note)
    assert [c.args for c in found if c.probe == "url_alive"] == [{"url": url}]
    if url == "http://[::1]:8080/f":
        assert argtypes.http_url(url) == url
        return
    with pytest.raises(argtypes.ClaimRejected, match="^url (cannot be read|host '.*' is not a plain host name|port is not)"):
        argtypes.http_url(url)


def test_bracketed_and_malformed_urls_leave_the_sweep_and_verify_running(repo: str) -> None:
    add_good_memories(repo)
    body = "Mirrors: " + ", ".join(MALFORMED_URLS) + ".\n"
    stored = [{"probe": "url_alive", "args": {"url": u}} for u in MALFORMED_URLS]
    note = notes.parse(memory_text("mirrors", title="Package mirrors", description="Where the mirrors answer", body=body))
    note.meta["claims"] = stored
    write_file(repo, "memory/mirrors.md", notes.serialize(note))
    assert commit_all(repo, "mirrors").returncode == 0
    swept = cli(repo, "sweep", "--no-model")
    assert swept.returncode == 0 and "Traceback" not in swept.stderr, swept.stderr
    verified = cli(repo, "verify", "--no-model", "--json")
    assert verified.returncode == 0, verified.stderr
    results = {r["id"]: r for r in json.loads(verified.stdout)["memories"]}
    assert results["dev-server-listens-port-8080"]["status"] in ("unchecked", None)
    refused = [r["claim"] for r in results["mirrors"]["refused"]]
    assert all(any(u in claim for claim in refused) for u in MALFORMED_URLS), refused


@pytest.mark.parametrize("value", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"])
def test_a_date_whose_utc_is_off_the_calendar_does_not_stop_a_merge(value: str) -> None:
    base = memory_text("dated", updated="2026-01-15")
    ours = memory_text("dated", updated=value)
    theirs = memory_text("dated", updated="2026-02-01")
    result = merge.merge_note(base, ours, theirs)
    assert (result.clean, result.conflicts, result.unmerged) == (False, ["updated"], "")


def test_a_negative_half_life_in_a_cache_built_before_the_bound_leaves_recall_answering(repo: str) -> None:
    # A cache an older memrepo built may still hold the row the index now skips; recall ranks it undecayed.
    write_memory(repo, "friday", class_="rule", title="No production deploys on Friday afternoon",
                 description="After 16:00 on Fridays nothing ships.", topics=["deploy"], created="2025-01-15")
    assert commit_all(repo, "a rule").returncode == 0
    with contextlib.closing(sqlite3.connect(paths.index_db(repo))) as db, db:
        db.execute("UPDATE memories SET half_life = -0.001 WHERE id = 'friday'")
    recalled = cli(repo, "recall", "--json", "--today", "2026-12-01", "can we deploy on friday afternoon?")
    assert recalled.returncode == 0, recalled.stderr
    assert [m["id"] for m in json.loads(recalled.stdout)] == ["friday"]
