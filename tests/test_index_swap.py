"""Recall never fails during a rebuild, and the index is in WAL mode after every path that writes it."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from helpers import commit_all, write_memory
from memrepo.base import paths
from memrepo.store import index

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN = os.path.join(ROOT, "hooks", "run")
HOOKS = 20
RUNS_PER_HOOK = 6
READERS = 4
READS_PER_READER = 600

# A reader that calls recall as the hook does, many times, and prints what went wrong.
READER = textwrap.dedent("""
    import sys
    from memrepo.recall import decide
    repo, n = sys.argv[1], int(sys.argv[2])
    bad = []
    for _ in range(n):
        try:
            d = decide.decide(repo, "how long do we keep the nightly database backups?")
            if [h.id for h in d.hits][:1] != ["backups"]:
                bad.append("wrong hits: %r" % ([h.id for h in d.hits],))
        except Exception as exc:
            bad.append("%s: %s" % (type(exc).__name__, exc))
    print(len(bad), sorted(set(bad))[:5])
""")


def journal_mode(repo: str) -> str:
    with sqlite3.connect(paths.index_db(repo)) as db:
        return str(db.execute("PRAGMA journal_mode").fetchone()[0])


@pytest.fixture
def store(repo: str) -> str:
    write_memory(repo, "backups", title="Nightly database backups are kept 30 days",
                 description="The nightly Postgres dump is kept for 30 days in the backup bucket.", topics=["backups"])
    for i in range(40):
        write_memory(repo, f"widget-{i}", title=f"Widget {i} is painted in colour {i}",
                     description=f"Gadget {i} ships with the widget kit, shade {i}.")
    assert commit_all(repo, "memories").returncode == 0
    return repo


def event(prompt: str) -> bytes:
    return json.dumps({"session_id": "s-1", "transcript_path": "", "cwd": "/tmp",
                       "hook_event_name": "UserPromptSubmit", "prompt": prompt}).encode()


def decode_all(text: str) -> list[dict[str, object]]:
    """The JSON objects printed one after another (each hook run prints one, with no newline)."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while at < len(text.rstrip()):
        obj, at = decoder.raw_decode(text, at)
        found.append(obj)
        while at < len(text) and text[at].isspace():
            at += 1
    return found


def test_recall_hooks_and_readers_never_fail_during_a_rebuild_loop(store: str) -> None:
    env = dict(os.environ, MEMREPO_PYTHON=sys.executable, MEMREPO_DIR=store)
    hook_loop = f'for i in $(seq {RUNS_PER_HOOK}); do sh "$0" user_prompt_submit < "$1" || echo "exit $?" >&2; done'
    stdin_file = os.path.join(store, "..", "event.json")
    with open(stdin_file, "wb") as fh:
        fh.write(event("how long do we keep the nightly database backups?"))
    hooks = [subprocess.Popen(["sh", "-c", hook_loop, RUN, stdin_file], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=env) for _ in range(HOOKS)]
    readers = [subprocess.Popen([sys.executable, "-c", READER, store, str(READS_PER_READER)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env) for _ in range(READERS)]
    rebuilds = 0
    while rebuilds < 3 or any(p.poll() is None for p in hooks + readers):
        index.rebuild(store)
        rebuilds += 1
        if rebuilds % 4 == 0:  # updates in between switch the live file to WAL, as git hooks do
            index.update(store, force=("memory/widget-1.md",))
    for proc in hooks:
        out, err = proc.communicate(timeout=300)
        assert err == b"", err.decode(errors="replace")
        injections = decode_all(out.decode())
        assert len(injections) == RUNS_PER_HOOK  # every run injected: none fell silent on an error
        assert all("(id: backups)" in o["hookSpecificOutput"]["additionalContext"] for o in injections)  # type: ignore[index]
    for proc in readers:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        assert out.strip() == "0 []", out
    assert journal_mode(store) == "wal"


@pytest.mark.parametrize("path", ["first build", "rebuild over a live index", "update", "rebuild over a corrupt file",
                                  "rebuild over an old schema"])
def test_the_index_is_wal_after_every_path(store: str, path: str) -> None:
    db = paths.index_db(store)
    if path == "first build":
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(db + suffix):
                os.remove(db + suffix)
        index.rebuild(store)
    elif path == "rebuild over a live index":
        index.rebuild(store)
        index.rebuild(store)
    elif path == "update":
        index.rebuild(store)
        write_memory(store, "extra", title="One more memory")
        index.update(store)
    elif path == "rebuild over a corrupt file":
        with open(db, "wb") as fh:
            fh.write(b"not a database" * 100)
        index.rebuild(store)
    else:
        with sqlite3.connect(db) as old:
            old.execute(f"PRAGMA user_version = {index.SCHEMA_VERSION - 1}")
        index.update(store)
    assert journal_mode(store) == "wal"
    assert index.schema_version(db) == index.SCHEMA_VERSION
    with sqlite3.connect(db) as check:
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert check.execute("SELECT count(*) FROM memories").fetchone()[0] >= 41
