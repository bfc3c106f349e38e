"""Write the skills test transcripts (run from the repo root: python tests/data/skills/make_transcripts.py).

Uses tests/data/capture/ccbuild.py, so the files have Claude Code 2.1.3xx's real JSONL shape.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "capture"))

from ccbuild import Session  # noqa: E402


def edit(s: Session, path: str) -> None:
    tid = f"toolu_{s.n:04d}"
    s.assistant({"type": "tool_use", "id": tid, "name": "Edit",
                 "input": {"file_path": path, "old_string": "pass", "new_string": "op.add_column()"}})
    s.user([{"tool_use_id": tid, "type": "tool_result", "content": "The file has been updated."}])


def migration(sid: str, table: str, msg_flag: str, test_flags: str, noise: str) -> Session:
    """The recurring procedure: new alembic revision, edit it, upgrade, run that table's tests."""
    s = Session(sid, cwd="/home/user/shop")
    s.user(f"add a {table} table; remember the migration has to be upgraded before the tests run")
    s.bash(noise, "ok")
    s.say(f"I'll generate an alembic revision for {table}.")
    s.bash(f"alembic revision --autogenerate {msg_flag} \"add {table}\"", f"Generating migrations/versions/1a2b_add_{table}.py ... done")
    edit(s, f"/home/user/shop/migrations/versions/1a2b_add_{table}.py")
    s.bash("alembic upgrade head", "INFO  [alembic.runtime.migration] Running upgrade -> 1a2b")
    s.bash(f"pytest {test_flags} tests/test_{table}.py", "3 passed in 0.41s")
    s.say(f"The {table} table exists and its tests pass; without the upgrade the tests hit a missing table.")
    return s


def docker(sid: str, tag: str) -> Session:
    """A procedure seen in only two sessions."""
    s = Session(sid, cwd="/home/user/infra")
    s.user("ship the image to the registry")
    s.bash(f"docker build -t app:{tag} .", "Successfully built")
    s.bash(f"docker push registry.example.com/app:{tag}", "pushed")
    s.say("Pushed the image; the deploy uses the new tag.")
    return s


SESSIONS = [
    ("migration-1.jsonl", migration("aaaa1111-0000-4000-8000-000000000001", "users", "-m", "-x", "git status")),
    ("migration-2.jsonl", migration("aaaa2222-0000-4000-8000-000000000002", "orders", "--message", "-q -k order", "ls migrations")),
    ("migration-3.jsonl", migration("aaaa3333-0000-4000-8000-000000000003", "invoices", "-m", "--maxfail=2 -vv", "make lint")),
    ("docker-1.jsonl", docker("bbbb1111-0000-4000-8000-000000000001", "1.4.0")),
    ("docker-2.jsonl", docker("bbbb2222-0000-4000-8000-000000000002", "1.5.0")),
]


def main() -> None:
    out = os.path.join(HERE, "transcripts")
    os.makedirs(out, exist_ok=True)
    for name, session in SESSIONS:
        session.write(os.path.join(out, name))


if __name__ == "__main__":
    main()
