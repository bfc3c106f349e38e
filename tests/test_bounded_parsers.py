"""Parsers have limits (issue 15): what arrives by pull or from a model is read in bounded time
and memory, and a file a pass can't use is skipped and reported, never a crash.

The expensive inputs run in subprocesses under an address-space limit (`RLIMIT_AS`), so a
parser that expands them fails the test with MemoryError instead of taking the machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import sqlite3
import subprocess
import sys
from typing import Any

import pytest

from helpers import ROOT, commit_all, git, memory_text, write_file, write_memory
from memrepo.errors import MemrepoError
from memrepo.format import files, notes
from memrepo.passes import answers, model
from memrepo.passes.verify import verifier as verify
from memrepo.base import paths
from memrepo.store import config, doctor, index
from test_hook import event, hook
from test_untrusted_repo import clones  # noqa: F401  (a bare remote and two clones A and B)

FAKE_MODEL = os.path.join(ROOT, "tests", "fake", "fakemodel.py")
LIMIT = 1024 * 1024 * 1024  # 1 GiB: memrepo needs a few dozen MiB; the bomb needs ~10
ALIASES = "write each value out in full; memory front matter has no YAML anchors (`&`) or aliases (`*`)"


def bomb_text(note_id: str = "bomb") -> str:
    """A valid memory plus nine levels of aliases: 9**9 strings once expanded, ~500 bytes written."""
    levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, cur in zip("abcdefgh", "bcdefghi"):
        levels.append(f"{cur}: &{cur} [{','.join('*' + prev for _ in range(9))}]")
    text = memory_text(note_id, title="Deploy freeze window", description="No deploys on Friday afternoon.")
    head, rest = text.split("\n---\n", 1)
    return head + "\n" + "\n".join(levels) + "\n---\n" + rest


def limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def cli(repo: str, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memrepo", "--repo", repo, *args], capture_output=True, text=True,
                          preexec_fn=limited, timeout=600, **kw)


def test_the_alias_bomb_is_refused_when_parsed() -> None:
    text = bomb_text()
    assert len(text.encode()) < 600
    with pytest.raises(notes.ParseError) as err:
        notes.parse(text)
    assert (str(err.value), err.value.line, err.value.fix) == ("front matter uses a YAML anchor or alias", 8, ALIASES)
    plain = memory_text("stars", title="Use a*b & c in docs", description="Literal * and & are just text.")
    assert notes.parse(plain).get("title") == "Use a*b & c in docs"  # the sigils alone are fine


def test_the_alias_bomb_is_refused_by_a_real_commit(repo: str) -> None:
    write_file(repo, "memory/bomb.md", bomb_text())
    git(repo, "add", "-A")
    proc = subprocess.run(["git", "commit", "-q", "-m", "bomb"], cwd=repo, capture_output=True, text=True,
                          preexec_fn=limited, timeout=600)
    assert proc.returncode == 1
    assert f"memory/bomb.md:8: front matter uses a YAML anchor or alias — {ALIASES}" in proc.stderr


def test_the_alias_bomb_past_the_hooks_costs_nothing_in_any_hook_or_pass(repo: str) -> None:
    write_memory(repo, "friday", class_="rule", title="No production deploys on Friday afternoon",
                 description="After 16:00 on Fridays nothing ships.", topics=["deploy"])
    write_file(repo, "memory/bomb.md", bomb_text())
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "bomb")  # as a teammate's push would bring it
    rebuilt = cli(repo, "index", "--rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "memory/bomb.md: front matter uses a YAML anchor or alias" in rebuilt.stderr
    checked = cli(repo, "doctor")
    assert checked.returncode == 1
    assert f"memory/bomb.md:8: front matter uses a YAML anchor or alias — {ALIASES}" in checked.stdout
    swept = cli(repo, "sweep", "--no-model")
    assert swept.returncode == 0, swept.stderr
    env = dict(os.environ, MEMREPO_DIR=repo, MEMREPO_PYTHON=sys.executable)
    prompt = subprocess.run(["sh", os.path.join(os.path.dirname(__file__), "..", "hooks", "run"), "user_prompt_submit"],
                            input=event("can we deploy on friday afternoon?").encode(), capture_output=True, env=env,
                            preexec_fn=limited, timeout=600)
    assert prompt.returncode == 0
    context = json.loads(prompt.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "(id: friday)" in context and "bomb" not in context


def test_a_front_matter_over_the_bound_is_not_parsed() -> None:
    text = memory_text("long", title="Long", description="x").replace("title: Long", "title: Long\nnote: " + "y" * 70000)
    with pytest.raises(notes.ParseError, match="front matter is over 65,536 characters"):
        notes.parse(text)


def test_memory_files_over_the_bound_are_not_read(tmp_path: Any) -> None:
    path = write_file(str(tmp_path), "memory/huge.md", b"x" * (files.MAX_FILE_BYTES + 1))
    with pytest.raises(OSError, match="over 1,048,576 bytes"):
        files.read_bytes(path)


NESTED = "[" * 5000 + "]" * 5000


@pytest.mark.parametrize("answer, error", [
    (NESTED, "not JSON: nested too deeply"),
    ('{"claims": ' + "[" * 100 + "]" * 100 + "}", "not JSON: nested more than 32 levels deep"),
], ids=["5000-brackets", "100-brackets"])
def test_a_deeply_nested_model_answer_is_rejected_by_verify(repo: str, monkeypatch: pytest.MonkeyPatch,
                                                            answer: str, error: str) -> None:
    write_memory(repo, "runbook", title="On-call runbook", description="Start from the runbook when paged",
                 body="When paged, open `docs/runbook.md` first.\n")
    assert commit_all(repo, "memories").returncode == 0
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE_MODEL}")
    monkeypatch.setenv("FAKE_MODEL_DEFAULT", answer)
    report = verify.run(repo, use_model=True, today="2026-11-29")
    assert [r.id for r in report.results] == ["runbook"]
    with open(os.path.join(repo, "index", model.REJECTS), encoding="utf-8") as fh:
        rejects = [json.loads(line) for line in fh]
    assert [r["errors"] for r in rejects] == [[error]]


def test_a_deeply_nested_model_answer_leaves_the_sweep_running(repo: str, monkeypatch: pytest.MonkeyPatch) -> None:
    write_memory(repo, "runbook", title="On-call runbook", description="Start from the runbook when paged")
    assert commit_all(repo, "memories").returncode == 0
    env = dict(os.environ, MEMREPO_MODEL_CMD=f"{sys.executable} {FAKE_MODEL}", FAKE_MODEL_DEFAULT=NESTED)
    swept = cli(repo, "sweep", env=env)
    # The sweep runs to its end; an answer nobody can read is a failed call (issue 37), so a
    # sweep where every call failed says so and exits 1.
    assert "Traceback" not in swept.stderr
    assert swept.returncode == 1, swept.stderr
    assert "every model call failed (2): the model's answer is not valid (not JSON: nested too deeply)" in swept.stderr


def test_bounded_json_helpers() -> None:
    from memrepo.base import _fast

    with pytest.raises(ValueError, match="nested too deeply"):
        _fast.loads(NESTED)
    with pytest.raises(ValueError, match="nested more than 3 levels deep"):
        answers.loads("[[[[1]]]]", max_depth=3)
    assert answers.loads('{"a": [[1]]}', max_depth=3) == {"a": [[1]]}


def test_nested_committed_settings_are_an_error_with_a_fix(repo: str) -> None:
    write_file(repo, "memrepo.json", '{"a": ' + NESTED + "}")
    with pytest.raises(MemrepoError, match="nested too deeply") as err:
        config.load(repo)
    assert err.value.hint == "fix the file, or remove it to use the defaults"


def push_bypassing_hooks(a: str, msg: str) -> None:
    git(a, "add", "-A")
    git(a, "commit", "-q", "--no-verify", "-m", msg)
    git(a, "push", "-q", "origin", "main")


def test_a_malformed_memory_that_arrives_by_merge_is_skipped_and_reported(clones: dict[str, str]) -> None:
    a, b = clones["a"], clones["b"]
    text = memory_text("merged-rule", title="Deploy with kamal", description="We deploy with kamal to hetzner")
    write_file(a, "memory/merged-rule.md", text.replace("class: fact", "class: [rule]"))
    push_bypassing_hooks(a, "a malformed memory")
    # A fast-forward runs no validating hook (a real merge would be refused by pre-merge-commit).
    git(b, "pull", "-q", "--ff-only", "origin", "main")
    write_memory(b, "deploy-kamal", title="Deploy with kamal", description="We deploy with kamal to hetzner")
    write_memory(b, "deploy-kamal-2", title="Deploy with kamal", description="We deploy with kamal to hetzner")
    assert commit_all(b, "two near duplicates").returncode == 0
    curated = cli(b, "curate", "--no-model", "--json")
    assert curated.returncode == 0, curated.stderr
    skipped = json.loads(curated.stdout)["skipped"]
    assert {"kind": "invalid", "ids": ["merged-rule"],
            "reason": "memory/merged-rule.md: unknown class ['rule'] (see `memrepo doctor`)"} in skipped
    swept = cli(b, "sweep", "--no-model")
    assert swept.returncode == 0 and "Traceback" not in swept.stderr, swept.stderr
    checked = doctor.run(b)
    files_check = next(c for c in checked if c.name == "memory files")
    assert "memory/merged-rule.md:5: unknown class ['rule'] — use one of:" in files_check.detail


SECRET_WORD = "zanzibarquokka"


def test_a_symlink_in_memory_is_never_followed(clones: dict[str, str]) -> None:
    a, b = clones["a"], clones["b"]
    outside = os.path.join(os.path.dirname(clones["marker"]), "outside")
    os.makedirs(outside)
    # What the link points at is a perfectly valid memory: only the link makes it foreign.
    secret = write_file(outside, "id_key.md", memory_text("leak", title=f"Deploy key {SECRET_WORD}",
                                                          description=f"The {SECRET_WORD} private deploy key"))
    os.symlink(secret, os.path.join(a, "memory", "leak.md"))
    git(a, "add", "-A")
    refused = git(a, "commit", "-q", "-m", "a link", check=False)
    assert refused.returncode == 1
    assert "memory/leak.md:1: is a symbolic link (or a submodule), which memrepo never follows" in refused.stderr
    push_bypassing_hooks(a, "a link")
    git(b, "pull", "-q", "--ff-only", "origin", "main")
    assert os.path.islink(os.path.join(b, "memory", "leak.md"))
    index.update(b)
    with contextlib.closing(sqlite3.connect(paths.index_db(b))) as db:
        assert "leak" not in {row[0] for row in db.execute("SELECT id FROM memories")}
    assert not hook("user_prompt_submit", event(f"where is the {SECRET_WORD} deploy key?"), b).stdout
    shown = cli(b, "show", "leak")
    assert shown.returncode != 0 and SECRET_WORD not in shown.stdout + shown.stderr
    assert "memory/leak.md cannot be read" in shown.stderr
    listed = cli(b, "search", SECRET_WORD)
    assert SECRET_WORD not in listed.stdout
    detail = next(c for c in doctor.run(b) if c.name == "memory files").detail
    assert "memory/leak.md:1: is a symbolic link or not a regular file, so memrepo does not read it" in detail


def test_memory_itself_as_a_symlink_lists_nothing(tmp_path: Any) -> None:
    outside = tmp_path / "elsewhere"
    write_file(str(outside), "x.md", memory_text("x"))
    repo = tmp_path / "mem"
    repo.mkdir()
    os.symlink(outside, repo / "memory")
    assert files.listing(str(repo / "memory")) == ([], ["memory/"])
