"""Memory files merge like data, not text: `format.merge`, the git merge driver and pre-merge-commit.

The integration tests make real branches (or two clones of a bare remote) in a repository
made by `memrepo init` and run the real `git merge`, so git itself calls the driver from
`.git/config` and the `pre-merge-commit` shim.
"""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import sys
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import build_template, commit_all, copy_template, git, head, memory_text, write_file, write_memory

from memrepo.cli.main import cli
from memrepo.format import merge, notes
from memrepo.store import repoinit
from memrepo.vcs import hookwire, mergedriver

BASE: dict[str, Any] = {
    "title": "The API listens on 8080",
    "description": "The API server binds port 8080 in every environment.",
    "topics": ["api", "ports", "networking"],
    "body": "The API listens on 8080.\n\nStaging uses the same port.\n\nAsk ops before changing it.\n",
}


def text(**changes: Any) -> str:
    return memory_text("api-port", **{**BASE, **changes})


# -- merge_note, pure -----------------------------------------------------------------------

VER_MARCH = {"status": "verified", "checked": "2026-03-01"}
VER_APRIL = {"status": "unverified", "checked": "2026-04-01", "failed": ["path_exists: ops/port.conf"]}
CLAIM_A = [{"probe": "path_exists", "args": {"path": "a"}}]
CLAIM_B = [{"probe": "path_exists", "args": {"path": "b"}}]

CLEAN = {
    "different keys": (text(), text(title="The API port"), text(description="Port 8080, everywhere."),
                       text(title="The API port", description="Port 8080, everywhere.")),
    "same change on both sides": (text(), text(title="Same"), text(title="Same"), text(title="Same")),
    "one side only": (text(), text(), text(project="shop"), text(project="shop")),
    "topics: both add": (text(), text(topics=["api", "ports", "networking", "http"]),
                         text(topics=["api", "ports", "networking", "tcp", "http"]),
                         text(topics=["api", "ports", "networking", "http", "tcp"])),
    "topics: a removal stays removed": (text(), text(topics=["api", "networking"]),
                                        text(topics=["api", "ports", "networking", "tcp"]),
                                        text(topics=["api", "networking", "tcp"])),
    "topics: removed on both sides": (text(), text(topics=["api"]), text(topics=["networking", "x"]),
                                      text(topics=["x"])),
    "topics: all removed drops the key": (text(), text(topics=["api"]), text(topics=["ports"]), text(topics=None)),
    "entities and aliases are sets too": (text(entities=["svc"], aliases=["a"]),
                                          text(entities=["svc", "gw"], aliases=["b"]),
                                          text(entities=["svc", "db"], aliases=["a", "c"]),
                                          text(entities=["svc", "gw", "db"], aliases=["b", "c"])),
    "tech is a set": (text(tech=["nginx"]), text(tech=["nginx", "envoy"]), text(tech=["haproxy"]),
                      text(tech=["envoy", "haproxy"])),
    "no base: topics union": (None, text(topics=["api", "b"]), text(topics=["c", "api"]), text(topics=["api", "b", "c"])),
    "updated: the later date": (text(updated="2026-02-01"), text(updated="2026-05-01"), text(updated="2026-03-01"),
                                text(updated="2026-05-01")),
    "updated: theirs later": (text(), text(updated="2026-03-01"), text(updated="2026-03-02T08:00:00Z"),
                              text(updated="2026-03-02T08:00:00Z")),
    "verification: the newer check (theirs)": (text(), text(verification=VER_MARCH), text(verification=VER_APRIL),
                                               text(verification=VER_APRIL)),
    "verification: the newer check (ours)": (text(verification={"status": "unchecked", "checked": "2026-01-01"}),
                                             text(verification=VER_APRIL), text(verification=VER_MARCH),
                                             text(verification=VER_APRIL)),
    "verification: removed on one side is oldest": (text(verification=VER_MARCH), text(), text(verification=VER_APRIL),
                                                    text(verification=VER_APRIL)),
    "claims follow the newer verification": (text(), text(verification=VER_APRIL, claims=CLAIM_A),
                                             text(verification=VER_MARCH, claims=CLAIM_B),
                                             text(verification=VER_APRIL, claims=CLAIM_A)),
    "body on one side, keys on the other": (text(), text(body="A new body.\n"), text(title="T"),
                                            text(title="T", body="A new body.\n")),
    "status on one side": (text(), text(status="retired"), text(title="T"), text(status="retired", title="T")),
}


@pytest.mark.parametrize(("base", "ours", "theirs", "expected"), CLEAN.values(), ids=CLEAN.keys())
def test_clean_merges(base: str | None, ours: str, theirs: str, expected: str) -> None:
    result = merge.merge_note(base, ours, theirs)
    assert (result.text, result.conflicts, result.unmerged) == (expected, [], "")
    assert notes.serialize(notes.parse(expected)) == expected


CONFLICTS = {
    "status": (text(), text(status="superseded", superseded_by="api-port-v2"), text(status="retired"),
               ["status"]),
    "superseded_by": (text(status="superseded", superseded_by="a"), text(status="superseded", superseded_by="b"),
                      text(status="superseded", superseded_by="c"), ["superseded_by"]),
    "title": (text(), text(title="One"), text(title="Two"), ["title"]),
    "body": (text(), text(body="Port 8081.\n"), text(body="Port 8082.\n"), ["body"]),
    "verification: same day, different result": (text(), text(verification=VER_APRIL),
                                                 text(verification={"status": "verified", "checked": "2026-04-01"}),
                                                 ["verification"]),
    "claims without a verification to follow": (text(), text(claims=CLAIM_A), text(claims=CLAIM_B), ["claims"]),
    "updated that is no date": (text(), text(updated="2026-03-01"), text(updated="soon"), ["updated"]),
    "no base: different titles": (None, text(title="One"), text(title="Two"), ["title"]),
    "topics that are no list": (text(), text(topics="api"), text(topics=["api", "tcp"]), ["topics"]),
}


@pytest.mark.parametrize(("base", "ours", "theirs", "conflicts"), CONFLICTS.values(), ids=CONFLICTS.keys())
def test_conflicts(base: str | None, ours: str, theirs: str, conflicts: list[str]) -> None:
    result = merge.merge_note(base, ours, theirs)
    assert (result.text, result.conflicts, result.unmerged) == (None, conflicts, "")


def test_bodies_changed_on_both_sides_go_to_merge_text() -> None:
    seen = []

    def merge_text(b: str, o: str, t: str) -> str | None:
        seen.append((b, o, t))
        return "merged body\n"

    result = merge.merge_note(text(), text(body="Ours.\n"), text(body="Theirs.\n", title="T"), merge_text=merge_text)
    assert result.text == text(body="merged body\n", title="T")
    assert seen == [(BASE["body"], "Ours.\n", "Theirs.\n")]
    refused = merge.merge_note(text(), text(body="Ours.\n"), text(body="Theirs.\n"), merge_text=lambda b, o, t: None)
    assert (refused.text, refused.conflicts) == (None, ["body"])


NOT_NOTES = {
    "no front matter": ("plain text\n", "no front matter"),
    "bad yaml": ("---\ntitle: 'open\n---\nbody\n", "front matter is not valid YAML"),
    "yaml alias": ("---\nid: a\ntopics: &t [x]\naliases: *t\n---\nbody\n", "ours front matter uses YAML aliases"),
    "a comment the serializer would drop": (text().replace("topics:", "# keep this\ntopics:"),
                                            "ours front matter is not in canonical form and may hold a comment"),
    "over the size bound": (text(body="x" * (merge.MAX_BYTES + 1)), f"ours is over {merge.MAX_BYTES:,} bytes"),
}


@pytest.mark.parametrize(("ours", "why"), NOT_NOTES.values(), ids=NOT_NOTES.keys())
def test_what_is_not_a_memory_is_left_to_the_text_merge(ours: str, why: str) -> None:
    result = merge.merge_note(text(), ours, text(title="T"))
    assert (result.text, result.conflicts) == (None, [])
    assert result.unmerged.startswith(why)


def test_a_hash_inside_a_canonical_value_is_no_comment() -> None:
    ours = text(title="C# tips")
    assert merge.merge_note(text(), ours, text(project="x")).text == text(title="C# tips", project="x")


def test_a_non_canonical_note_is_merged_and_written_canonically() -> None:
    ours = text().replace("topics: [api, ports, networking]", "topics:\n  - api\n  - ports\n  - networking\n  - http")
    assert merge.merge_note(text(), ours, text(title="T")).text == text(title="T", topics=["api", "ports", "networking", "http"])


# -- the driver, called as git calls it ---------------------------------------------------------

def _driver_files(tmp: str, base: str, ours: str, theirs: str) -> list[str]:
    paths = []
    for name, content in (("base file", base), ("ours file", ours), ("theirs file", theirs)):
        paths.append(write_file(tmp, f"odd dir/{name}", content))
    return paths


def test_driver_clean_merge_writes_ours_and_exits_0(tmp_path) -> None:
    base, ours, theirs = _driver_files(str(tmp_path), text(), text(title="A"), text(description="B"))
    assert mergedriver.main([base, ours, theirs, "memory/api-port.md"]) == 0
    with open(ours, encoding="utf-8") as fh:
        assert fh.read() == text(title="A", description="B")


def test_driver_merges_bodies_line_by_line(tmp_path) -> None:
    body = BASE["body"]
    ours_body = body.replace("The API listens on 8080.", "The API listens on 8080 (HTTP).")
    theirs_body = body.replace("Ask ops", "Ask the ops channel")
    base, ours, theirs = _driver_files(str(tmp_path), text(), text(body=ours_body), text(body=theirs_body))
    assert mergedriver.main([base, ours, theirs]) == 0
    with open(ours, encoding="utf-8") as fh:
        assert fh.read() == text(body=ours_body.replace("Ask ops", "Ask the ops channel"))


def test_driver_conflict_writes_markers_and_exits_1(tmp_path, capsys) -> None:
    base, ours, theirs = _driver_files(str(tmp_path), text(), text(title="One"), text(title="Two"))
    assert mergedriver.main([base, ours, theirs, "memory/api-port.md"]) == 1
    with open(ours, encoding="utf-8") as fh:
        merged = fh.read()
    assert "<<<<<<< ours\ntitle: One\n=======\ntitle: Two\n>>>>>>> theirs\n" in merged
    assert capsys.readouterr().err == "memrepo merge: memory/api-port.md: both sides changed title\n"


def test_driver_conflict_git_merges_cleanly_as_text_still_shows_both_sides(tmp_path) -> None:
    # theirs repeats `title` at the end (YAML keeps the last): the lines git compares do not overlap.
    repeated = text().replace("\n---\nThe API", "\ntitle: Two\n---\nThe API")
    base, ours, theirs = _driver_files(str(tmp_path), text(), text(title="One"), repeated)
    assert merge.merge_note(text(), text(title="One"), repeated).conflicts == ["title"]
    assert mergedriver.main([base, ours, theirs]) == 1
    with open(ours, encoding="utf-8") as fh:
        assert fh.read() == "<<<<<<< ours\n" + text(title="One") + "=======\n" + repeated + ">>>>>>> theirs\n"


@pytest.mark.parametrize(("ours", "theirs", "code", "expected"), [
    ("line 1\nours\nline 3\nline 4\nline 5\n", "line 1\nline 2\nline 3\nline 4\ntheirs\n", 0,
     "line 1\nours\nline 3\nline 4\ntheirs\n"),
    ("line 1\nours\nline 3\nline 4\nline 5\n", "line 1\ntheirs\nline 3\nline 4\nline 5\n", 1,
     "line 1\n<<<<<<< ours\nours\n=======\ntheirs\n>>>>>>> theirs\nline 3\nline 4\nline 5\n"),
], ids=["clean", "conflict"])
def test_driver_merges_files_that_are_no_memory_as_git_would(tmp_path, ours: str, theirs: str, code: int,
                                                            expected: str) -> None:
    files = _driver_files(str(tmp_path), "line 1\nline 2\nline 3\nline 4\nline 5\n", ours, theirs)
    assert mergedriver.main(files) == code
    with open(files[1], encoding="utf-8") as fh:
        assert fh.read() == expected


def test_driver_falls_back_to_the_text_merge_on_any_error(tmp_path, monkeypatch, capsys) -> None:
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(merge, "merge_note", boom)
    base, ours, theirs = _driver_files(str(tmp_path), text(), text(title="One"), text(title="Two"))
    assert mergedriver.main([base, ours, theirs, "memory/api-port.md"]) == 1
    with open(ours, encoding="utf-8") as fh:
        assert "<<<<<<< ours\ntitle: One\n=======\ntitle: Two\n>>>>>>> theirs\n" in fh.read()
    assert capsys.readouterr().err == "memrepo merge: memory/api-port.md: boom; merged as text instead\n"


def test_driver_leaves_ours_when_git_cannot_merge_it_as_text(tmp_path) -> None:
    files = _driver_files(str(tmp_path), "base\n", "ours\n", "theirs\n")
    for path, data in zip(files, (b"\x00\xffbase", b"\x00\xffours", b"\x00\xfftheirs")):
        with open(path, "wb") as fh:
            fh.write(data)
    assert mergedriver.main(files) == 1
    with open(files[1], "rb") as fh:
        assert fh.read() == b"\x00\xffours"


# -- real merges in real repositories ----------------------------------------------------------

@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> str:
    def setup(path: str) -> None:
        write_file(path, "memory/api-port.md", text())
        write_memory(path, "api-port-v2")
        write_memory(path, "a")
        write_memory(path, "b")
        write_memory(path, "c")
        assert commit_all(path, "memories").returncode == 0

    return build_template(tmp_path_factory, setup)


@pytest.fixture
def mem(template: str, tmp_path) -> str:
    return copy_template(template, tmp_path)


def _two_sides(repo: str, ours: dict[str, str], theirs: dict[str, str]) -> None:
    """Branch `other` changes `theirs` ({id: text, or "" to delete}), main changes `ours`."""
    git(repo, "checkout", "-q", "-b", "other")
    _commit(repo, theirs, "theirs")
    git(repo, "checkout", "-q", "main")
    _commit(repo, ours, "ours")


def _commit(repo: str, changes: dict[str, str], msg: str) -> None:
    for mid, content in changes.items():
        if content:
            write_file(repo, f"memory/{mid}.md", content)
        else:
            git(repo, "rm", "-q", f"memory/{mid}.md")
    result = commit_all(repo, msg)
    assert (result.returncode, result.stderr) == (0, "")


def _merge(repo: str) -> subprocess.CompletedProcess[str]:
    return git(repo, "merge", "-q", "--no-edit", "other", check=False)


def _read(repo: str, mid: str = "api-port") -> str:
    with open(os.path.join(repo, "memory", f"{mid}.md"), encoding="utf-8") as fh:
        return fh.read()


def _parents(repo: str) -> int:
    return len(git(repo, "log", "-1", "--format=%P").stdout.split())


def test_different_keys_of_one_memory_merge_cleanly(mem: str) -> None:
    _two_sides(mem, {"api-port": text(title="The API port")}, {"api-port": text(description="Port 8080, everywhere.")})
    result = _merge(mem)
    assert (result.returncode, result.stderr) == (0, "")
    assert _parents(mem) == 2
    assert _read(mem) == text(title="The API port", description="Port 8080, everywhere.")
    assert git(mem, "status", "--porcelain").stdout == ""


def test_without_the_driver_git_would_conflict_on_those_adjacent_lines(mem: str) -> None:
    git(mem, "config", "--remove-section", "merge.memrepo")
    _two_sides(mem, {"api-port": text(title="The API port")}, {"api-port": text(description="Port 8080, everywhere.")})
    assert _merge(mem).returncode == 1
    assert "<<<<<<< HEAD\n" in _read(mem)


def test_topics_union_and_newer_verification_and_later_updated(mem: str) -> None:
    _two_sides(mem,
               {"api-port": text(topics=["api", "ports", "networking", "http"], verification=VER_MARCH,
                                 updated="2026-03-01")},
               {"api-port": text(topics=["api", "networking", "tcp"], verification=VER_APRIL, updated="2026-02-01")})
    result = _merge(mem)
    assert (result.returncode, result.stderr) == (0, "")
    assert _read(mem) == text(topics=["api", "networking", "http", "tcp"], verification=VER_APRIL, updated="2026-03-01")


def _conflicted(repo: str) -> list[str]:
    return sorted({line.split("\t")[1] for line in git(repo, "ls-files", "-u").stdout.splitlines()})


def test_status_changed_on_both_sides_is_a_real_conflict(mem: str) -> None:
    ours = text(status="superseded", superseded_by="api-port-v2")
    theirs = text(status="retired", title="Retired")
    _two_sides(mem, {"api-port": ours}, {"api-port": theirs})
    result = _merge(mem)
    assert result.returncode == 1
    assert "memrepo merge: memory/api-port.md: both sides changed status\n" in result.stderr
    assert _conflicted(mem) == ["memory/api-port.md"]
    # git's line merge of the whole file: theirs' title taken, both statuses between the markers
    assert _read(mem) == text(title="Retired").replace("---\nThe API", (
        "<<<<<<< ours\nstatus: superseded\nsuperseded_by: api-port-v2\n=======\nstatus: retired\n>>>>>>> theirs\n"
        "---\nThe API"))
    # and git keeps both versions in the index
    assert git(mem, "show", ":2:memory/api-port.md").stdout == ours
    assert git(mem, "show", ":3:memory/api-port.md").stdout == theirs


def test_body_changed_on_both_sides_is_a_real_conflict(mem: str) -> None:
    ours = text(body=BASE["body"].replace("8080.", "8081."))
    theirs = text(body=BASE["body"].replace("8080.", "8082."), project="shop")
    _two_sides(mem, {"api-port": ours}, {"api-port": theirs})
    result = _merge(mem)
    assert result.returncode == 1
    assert _conflicted(mem) == ["memory/api-port.md"]
    merged = _read(mem)
    assert "<<<<<<< ours\nThe API listens on 8081.\n=======\nThe API listens on 8082.\n>>>>>>> theirs\n" in merged
    assert "project: shop\n" in merged


def test_body_edits_in_different_paragraphs_merge(mem: str) -> None:
    ours_body = BASE["body"].replace("8080.", "8080 (HTTP).")
    theirs_body = BASE["body"].replace("Ask ops", "Ask the ops channel")
    _two_sides(mem, {"api-port": text(body=ours_body)}, {"api-port": text(body=theirs_body, title="T")})
    result = _merge(mem)
    assert (result.returncode, result.stderr) == (0, "")
    assert _read(mem) == text(body=ours_body.replace("Ask ops", "Ask the ops channel"), title="T")


REJECTED_MERGE = "memrepo: merge rejected: {n} problem{s} in memory files (bypass once with `git merge --no-verify`)\n"


def test_a_merge_that_makes_a_supersession_cycle_is_refused(mem: str) -> None:
    _two_sides(mem, {"a": memory_text("a", status="superseded", superseded_by="b")},
               {"b": memory_text("b", status="superseded", superseded_by="a")})
    before = head(mem)
    result = _merge(mem)
    assert result.returncode == 1
    assert result.stderr.startswith(
        "memory/b.md:2: supersession cycle: b → a → b — one memory in the cycle must stay active\n"
        + REJECTED_MERGE.format(n=1, s=""))
    assert head(mem) == before
    assert os.path.exists(os.path.join(mem, ".git", "MERGE_HEAD"))


@pytest.mark.parametrize(("ours", "theirs", "problem"), [
    ({"c": ""}, {"a": memory_text("a", status="superseded", superseded_by="c")},
     "memory/a.md:2: superseded_by names `c`, which is no memory — name an existing memory id"),
    ({"a": memory_text("a", status="superseded", superseded_by="c")}, {"c": ""},
     "memory/a.md:2: superseded_by names `c`, which is no memory — name an existing memory id"),
], ids=["theirs-points-at-a-memory-ours-deleted", "theirs-deletes-what-ours-points-at"])
def test_a_merge_that_leaves_superseded_by_dangling_is_refused(mem: str, ours: dict[str, str], theirs: dict[str, str],
                                                              problem: str) -> None:
    _two_sides(mem, ours, theirs)
    before = head(mem)
    result = _merge(mem)
    assert result.returncode == 1
    assert result.stderr.startswith(problem + "\n" + REJECTED_MERGE.format(n=1, s=""))
    assert head(mem) == before


def test_a_valid_merge_of_different_memories_commits(mem: str) -> None:
    _two_sides(mem, {"a": memory_text("a", status="superseded", superseded_by="c")}, {"b": memory_text("b", title="B")})
    result = _merge(mem)
    assert (result.returncode, result.stderr) == (0, "")
    assert _parents(mem) == 2


def test_two_clones_of_a_bare_remote(tmp_path, mem: str) -> None:
    remote = str(tmp_path / "remote.git")
    git(str(tmp_path), "clone", "-q", "--bare", mem, remote)
    laptop, desktop = str(tmp_path / "laptop"), str(tmp_path / "desktop")
    for clone in (laptop, desktop):
        git(str(tmp_path), "clone", "-q", remote, clone)
        repoinit.init(clone)  # wires hooks and the driver: neither travels with a clone
    write_file(laptop, "memory/api-port.md", text(topics=["api", "ports", "networking", "http"]))
    assert commit_all(laptop, "laptop").returncode == 0
    git(laptop, "push", "-q", "origin", "main")
    write_file(desktop, "memory/api-port.md", text(topics=["api", "tcp"], title="The API port"))
    assert commit_all(desktop, "desktop").returncode == 0
    result = git(desktop, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main", check=False)
    assert (result.returncode, result.stderr) == (0, "")
    assert _read(desktop) == text(topics=["api", "tcp", "http"], title="The API port")


def test_a_clone_without_the_driver_merges_as_plain_git(tmp_path, mem: str) -> None:
    git(mem, "config", "--remove-section", "merge.memrepo")
    _two_sides(mem, {"api-port": text(title="The API port")}, {"api-port": text(project="shop")})
    result = _merge(mem)
    assert (result.returncode, result.stderr) == (0, "")
    assert _read(mem) == text(title="The API port", project="shop")


# -- registration by init, doctor ----------------------------------------------------------------

ATTRIBUTES = "memory/*.md text eol=lf\nmemory/*.md merge=memrepo\n"


def _config(repo: str, key: str) -> str:
    return git(repo, "config", "--local", "--get", key, check=False).stdout


def test_init_registers_the_driver_once(repo: str) -> None:
    assert _config(repo, "merge.memrepo.name") == "memrepo: memory files merge key by key\n"
    assert _config(repo, "merge.memrepo.driver") == (
        f"{shlex.quote(sys.executable)} -I -m memrepo.vcs.mergedriver %O %A %B %P\n")
    with open(os.path.join(repo, ".gitattributes"), encoding="utf-8") as fh:
        assert fh.read() == ATTRIBUTES
    assert git(repo, "show", "HEAD:.gitattributes").stdout == ATTRIBUTES
    with open(os.path.join(repo, ".git", "config"), encoding="utf-8") as fh:
        config = fh.read()
    report = repoinit.init(repo)
    assert (report["merge_driver"], report["written"], report["commit"]) == (False, [], None)
    with open(os.path.join(repo, ".git", "config"), encoding="utf-8") as fh:
        assert fh.read() == config


def test_init_adds_the_merge_line_to_an_older_gitattributes(repo: str) -> None:
    write_file(repo, ".gitattributes", "*.png binary\nmemory/*.md text eol=lf\n")
    git(repo, "commit", "-q", "-am", "an install from before the merge driver")
    repoinit.init(repo)
    assert git(repo, "show", "HEAD:.gitattributes").stdout == "*.png binary\nmemory/*.md text eol=lf\nmemory/*.md merge=memrepo\n"


def test_init_writes_the_driver_where_git_dir_is_a_file(tmp_path) -> None:
    path, gitdir = str(tmp_path / "work"), str(tmp_path / "elsewhere.git")
    os.makedirs(path)
    git(path, "init", "-q", "-b", "main", "--separate-git-dir", gitdir)
    assert os.path.isfile(os.path.join(path, ".git"))
    repoinit.init(path)
    assert git(path, "config", "--file", os.path.join(gitdir, "config"), "merge.memrepo.driver").stdout.endswith(
        " -I -m memrepo.vcs.mergedriver %O %A %B %P\n")
    assert hookwire.merge_driver_wiring(path) == (True, "memory/*.md merge with memrepo.vcs.mergedriver")


def test_driver_command_quotes_odd_interpreter_paths() -> None:
    assert hookwire.merge_driver_command("/opt/my py/100%/python") == (
        "'/opt/my py/100%%/python' -I -m memrepo.vcs.mergedriver %O %A %B %P")


def test_a_real_merge_with_spaces_and_percent_in_every_path(tmp_path) -> None:
    odd = tmp_path / "odd dir 100%A"
    bindir = odd / "py bin"
    bindir.mkdir(parents=True)
    python = bindir / "python"
    python.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} \"$@\"\n")
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    path = str(odd / "my memories")
    repoinit.init(path)
    hookwire.wire_merge_driver(path, str(python))
    assert hookwire.merge_driver_wiring(path)[0] is True
    write_file(path, "memory/api-port.md", text())
    assert commit_all(path, "base").returncode == 0
    _two_sides(path, {"api-port": text(title="The API port")}, {"api-port": text(description="Port 8080, everywhere.")})
    result = _merge(path)
    assert (result.returncode, result.stderr) == (0, "")
    assert _read(path) == text(title="The API port", description="Port 8080, everywhere.")


def run_doctor(repo: str) -> list[str]:
    result = CliRunner().invoke(cli, ["--repo", repo, "doctor"], catch_exceptions=False)
    lines = result.stdout.splitlines()
    return [line for n, line in enumerate(lines)
            if "merge driver" in line or ("fix:" in line and n and "merge driver" in lines[n - 1])]


@pytest.mark.parametrize(("damage", "says"), [
    (lambda repo: git(repo, "config", "--remove-section", "merge.memrepo"),
     "FAIL merge driver: merge.memrepo.driver is not set in .git/config, so git merges memory files as text"),
    # git then refuses the merge: "fatal: custom merge driver memrepo lacks command line"
    (lambda repo: git(repo, "config", "--unset", "merge.memrepo.driver"),
     "FAIL merge driver: merge.memrepo.name is set without merge.memrepo.driver, so git refuses to merge memory files"),
    (lambda repo: write_file(repo, ".gitattributes", "memory/*.md text eol=lf\n"),
     "FAIL merge driver: memory/*.md is not routed to the merge driver (merge attribute: unspecified)"),
    (lambda repo: git(repo, "config", "merge.memrepo.driver", "/nowhere/python -I -m memrepo.vcs.mergedriver %O %A %B"),
     "FAIL merge driver: merge.memrepo.driver names /nowhere/python, which is not an executable"),
], ids=["no-driver", "name-without-driver", "no-attribute", "gone-interpreter"])
def test_doctor_reports_a_driver_that_is_not_registered(mem: str, damage: Any, says: str) -> None:
    assert run_doctor(mem) == ["ok  merge driver: memory/*.md merge with memrepo.vcs.mergedriver"]
    damage(mem)
    assert run_doctor(mem) == [says, f"     fix: memrepo init {mem}"]
    CliRunner().invoke(cli, ["init", mem], catch_exceptions=False)
    assert run_doctor(mem) == ["ok  merge driver: memory/*.md merge with memrepo.vcs.mergedriver"]


def test_doctor_reports_an_interpreter_that_cannot_import_the_driver(mem: str, tmp_path) -> None:
    python = write_file(str(tmp_path), "bin/python", "#!/bin/sh\nexit 1\n")
    os.chmod(python, 0o755)
    hookwire.wire_merge_driver(mem, python)
    assert run_doctor(mem) == [
        f"FAIL merge driver: {python} -I cannot import memrepo.vcs.mergedriver (memrepo installed with --user, or removed)",
        f"     fix: memrepo init {mem}"]
