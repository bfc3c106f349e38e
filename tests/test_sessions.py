"""The transcript index: incremental indexing, search ranking, L3 context, redaction."""

from __future__ import annotations

import json
import os
import sys

from click.testing import CliRunner

from helpers import ROOT
from memrepo.store import sessions
from memrepo.cli.main import cli

sys.path.insert(0, os.path.join(ROOT, "tests", "data", "capture"))
from ccbuild import Session  # noqa: E402

DATA = os.path.join(ROOT, "tests", "data", "skills", "transcripts")


def _uuids(rows: list[dict]) -> list[str]:
    return [r["uuid"] for r in rows]


def test_a_growing_file_is_read_from_where_it_stopped(repo: str, tmp_path: str) -> None:
    s = Session("cccc0000-0000-4000-8000-000000000001")
    s.user("first question about the flaky importer")
    s.assistant({"type": "text", "text": "part one of the reply"}, msg_id="msg_A")
    path = s.write(os.path.join(str(tmp_path), "grow.jsonl"))
    first = sessions.index(repo, path)
    assert (first.new, first.turns) == (1, 2)
    # the same reply continues on a new line (same message id), then a new prompt
    done = len(s.lines)
    s.assistant({"type": "tool_use", "id": "toolu_9", "name": "Bash", "input": {"command": "make test"}}, msg_id="msg_A")
    s.user("second question")
    s.write(path, start=done)
    second = sessions.index(repo, path)
    assert (second.grown, second.redone, second.turns) == (1, 0, 2)  # the reply redone once, plus the prompt
    turns = sessions.turns_of(repo, s.session_id)
    assert [t["text"] for t in turns] == ["first question about the flaky importer",
                                         "part one of the reply\n$ make test", "second question"]
    assert [t["tools"][0]["command"] for t in turns if t["tools"]] == ["make test"]
    assert sessions.index(repo, path).unchanged == 1


def test_a_rewritten_file_is_redone(repo: str, tmp_path: str) -> None:
    s = Session("cccc0000-0000-4000-8000-000000000002")
    s.user("original text of a long prompt")
    path = s.write(os.path.join(str(tmp_path), "rw.jsonl"))
    sessions.index(repo, path)
    t = Session("cccc0000-0000-4000-8000-000000000002")
    t.user("replaced")
    t.write(path)
    report = sessions.index(repo, path)
    assert (report.redone, report.turns) == (1, 1)
    assert [x["text"] for x in sessions.turns_of(repo, s.session_id)] == ["replaced"]
    assert sessions.search(repo, "original") == []


def test_search_ranks_the_turn_that_says_more_first(repo: str) -> None:
    sessions.index(repo, DATA)
    hits = sessions.search(repo, "image registry")
    # both words (the prompts) before one word (the replies); ties in index order
    assert [(h["session"][:8], h["snippet"]) for h in hits] == [
        ("bbbb1111", "ship the [image] to the [registry]"),
        ("bbbb2222", "ship the [image] to the [registry]"),
        ("bbbb1111", "$ docker push [registry].example.com/app:1.4.0"),
        ("bbbb1111", "Pushed the [image]; the deploy uses the new tag."),
        ("bbbb2222", "$ docker push [registry].example.com/app:1.5.0"),
        ("bbbb2222", "Pushed the [image]; the deploy uses the new tag.")]
    assert hits[0]["score"] < hits[2]["score"]
    assert sessions.search(repo, "registry", project="shop") == []
    assert sessions.search(repo, "registry", since="2027-01-01") == []
    assert len(sessions.search(repo, "registry", project="infra")) == 4


def test_l3_output_around_a_turn(repo: str) -> None:
    sessions.index(repo, DATA)
    turns = sessions.turns_of(repo, "aaaa1111-0000-4000-8000-000000000001")
    focus = next(t for t in turns if "alembic upgrade head" in t["text"])
    rows = sessions.around(repo, "aaaa1111", focus["uuid"], context=1)
    assert [r["text"] for r in rows] == ["[Edit] /home/user/shop/migrations/versions/1a2b_add_users.py",
                                        "$ alembic upgrade head", "$ pytest -x tests/test_users.py"]
    assert [r["focus"] for r in rows] == [False, True, False]
    result = CliRunner().invoke(cli, ["--repo", repo, "transcript", os.path.join(DATA, "migration-1.jsonl"), "--turn", focus["uuid"],
                                      "--context", "1"], catch_exceptions=False)
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "session aaaa1111-0000-4000-8000-000000000001 (shop)",
        f"  {turns[4]['uuid']} 2026-11-29T18:00:07.000Z assistant",
        "    [Edit] /home/user/shop/migrations/versions/1a2b_add_users.py",
        f"> {focus['uuid']} 2026-11-29T18:00:09.000Z assistant",
        "    $ alembic upgrade head",
        f"  {turns[6]['uuid']} 2026-11-29T18:00:11.000Z assistant",
        "    $ pytest -x tests/test_users.py",
    ]


def test_unknown_session_fails_with_a_hint(repo: str) -> None:
    result = CliRunner().invoke(cli, ["--repo", repo, "transcript", "nope"])
    assert result.exit_code == 1
    assert "no indexed session matches 'nope'" in result.output
    assert "memrepo transcripts index" in result.output


def test_secrets_and_private_spans_never_reach_the_index(repo: str, tmp_path: str) -> None:
    key = "sk-ant-api03-" + "Q7x9" * 20
    s = Session("cccc0000-0000-4000-8000-000000000003")
    s.user(f"deploy with key {key} <private>my pin is 4242</private> please")
    s.bash(f"curl -H 'x-api-key: {key}' https://api.example.com", "ok")
    path = s.write(os.path.join(str(tmp_path), "secret.jsonl"))
    sessions.index(repo, path)
    with open(sessions.db_path(repo), "rb") as fh:
        data = fh.read()
    assert key.encode() not in data and b"4242" not in data
    texts = [t["text"] for t in sessions.turns_of(repo, s.session_id)]
    assert "[REDACTED:" in texts[0] and "please" in texts[0]
    assert sessions.search(repo, "pin") == []


def test_cli_index_and_search_json(repo: str) -> None:
    runner = CliRunner()
    out = runner.invoke(cli, ["--repo", repo, "transcripts", "index", DATA], catch_exceptions=False)
    assert out.exit_code == 0
    assert out.stdout == "5 files (5 new, 0 grown, 0 rewritten, 0 unchanged), 32 turns added\n"
    out = runner.invoke(cli, ["--repo", repo, "transcripts", "search", "registry", "--json"], catch_exceptions=False)
    assert [h["session"][:8] for h in json.loads(out.stdout)] == ["bbbb1111", "bbbb2222"] * 2


def test_schema_version_mismatch_rebuilds(repo: str) -> None:
    sessions.index(repo, DATA)
    import sqlite3
    db = sqlite3.connect(sessions.db_path(repo))
    db.execute("PRAGMA user_version = 99")
    db.commit()
    db.close()
    assert sessions.stats(repo)["turns"] == 0
    assert sessions.index(repo, DATA).new == 5


def test_a_copied_transcript_is_not_indexed_twice(repo: str, tmp_path: str) -> None:
    import shutil
    copy = os.path.join(str(tmp_path), "copy.jsonl")
    shutil.copyfile(os.path.join(DATA, "docker-1.jsonl"), copy)
    sessions.index(repo, DATA)
    assert sessions.index(repo, copy).turns == 0
    assert len(sessions.search(repo, "ship")) == 2
