"""Twenty writers at once against one repository, as real processes: every write lands, exactly once.

Sixteen `memrepo add` (eight of them with one title), a capture of a session transcript with the
fake model, a curate run, a Claude Code import and a verify run all start together. Afterwards
every add and every memory the capture and the import report is in `memory/` and in exactly one
commit, nothing is staged or changed without a commit, no journal is left, and the index equals
a rebuild.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from typing import Any

from helpers import ROOT, commit_all, git, write_memory
from memrepo.base import paths
from memrepo.store import index

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "fake", "fakemodel.py")
CAPTURE = os.path.join(HERE, "data", "capture")
CC_DIR = os.path.join(ROOT, "tests", "data", "importers", "claude-code", "projects", "-home-ann-src-tallybird", "memory")
SESSION = "7c0ffee0-1111-4222-8333-444455556666"
ADDS = 16


def indexed(repo: str) -> list[tuple[str, str]]:
    with sqlite3.connect(paths.index_db(repo)) as db:
        return sorted(db.execute("SELECT id, hash FROM memories").fetchall())


def commits_touching(repo: str, rel: str) -> list[str]:
    return git(repo, "log", "--format=%s", "--", rel).stdout.splitlines()


def test_twenty_mixed_writers_all_land_exactly_once(repo: str, tmp_path: Any) -> None:
    write_memory(repo, "deploy-window", title="Deploys happen on Tuesdays", topics=["deploy"])
    write_memory(repo, "deploy-window-copy", title="Deploys happen on Tuesdays", topics=["deploy"])
    assert commit_all(repo, "seed").returncode == 0
    transcript = os.path.join(str(tmp_path), f"{SESSION}.jsonl")
    shutil.copy(os.path.join(CAPTURE, "refute-part1.jsonl"), transcript)
    env = dict(os.environ, MEMREPO_MODEL_CMD=f"{sys.executable} {FAKE}",
               FAKE_MODEL_RULES=os.path.join(CAPTURE, "refute-rules.json"))
    base = [sys.executable, "-m", "memrepo", "--repo", repo]
    argvs = {f"add-{i}": base + ["add", "--class", "fact", "--title",
                                 "One title from every terminal" if i % 2 else f"Terminal {i} keeps its own note",
                                 "-d", f"Written by terminal {i}."] for i in range(ADDS)}
    argvs["capture"] = base + ["capture", transcript, "--session", SESSION, "--json"]
    argvs["curate"] = base + ["curate", "--no-model", "--json"]
    argvs["import"] = base + ["import", "claude-code", CC_DIR, "--json"]
    argvs["verify"] = base + ["verify", "--no-model", "--json"]
    assert len(argvs) == 20
    procs = {name: subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for name, argv in argvs.items()}
    done = {name: (p.wait(timeout=600), p.stdout.read(), p.stderr.read())  # type: ignore[union-attr]
            for name, p in procs.items()}
    failed = {name: r for name, r in done.items() if r[0] != 0}
    assert not failed, failed

    added = [re.match(r"Added ([a-z0-9-]+) ", done[f"add-{i}"][1]).group(1) for i in range(ADDS)]  # type: ignore[union-attr]
    assert len(set(added)) == ADDS
    for i, note_id in enumerate(added):
        rel = f"memory/{note_id}.md"
        with open(os.path.join(repo, rel), encoding="utf-8") as fh:
            assert f"description: Written by terminal {i}.\n" in fh.read()  # its own text, never another's
        assert commits_touching(repo, rel) == [f"add: {note_id}"]  # exactly one commit

    imported = json.loads(done["import"][1])
    assert imported["added"], imported
    for note_id in imported["added"]:
        assert len(commits_touching(repo, f"memory/{note_id}.md")) >= 1
    captured = json.loads(done["capture"][1])
    assert captured["added"] and len(captured["commits"]) == 1, captured
    for note_id in captured["added"]:
        assert commits_touching(repo, f"memory/{note_id}.md")  # in the capture's one commit
    for run in (imported["run"], captured["run_id"]):
        assert len(git(repo, "log", "--format=%H", f"--grep=Memrepo-Run: {run}").stdout.split()) == 1

    assert git(repo, "status", "--porcelain").stdout == ""
    assert git(repo, "diff", "--cached", "--name-only").stdout == ""
    assert not os.path.exists(os.path.join(repo, ".git", "memrepo-commit-journal.json"))
    kept = indexed(repo)
    index.rebuild(repo)
    assert indexed(repo) == kept
