"""A pass never writes back a stale copy: a person's commit made while the pass waited stands.

The model command here is honest about the memories it is asked about; while it "thinks", a
person edits one of them and commits (the race that reverted 4 of 4 edits before).
"""

from __future__ import annotations

import os
import sys
import textwrap

import pytest
from helpers import commit_all, git, head, memory_text, write_file, write_memory

from memrepo.passes import enrich
from memrepo.vcs import commit

PERSON = "A person rewrote this while the model was answering."


@pytest.fixture
def racing_model(repo: str, tmp_path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A model command that edits memory `deploy-freeze` and commits, then answers honestly."""
    script = write_file(str(tmp_path), "racing_model.py", textwrap.dedent(f"""
        import json, subprocess, sys
        sys.stdin.read()
        repo = {repo!r}
        text = {memory_text("deploy-freeze", title="No deploys on Friday", description=PERSON)!r}
        with open(repo + "/memory/deploy-freeze.md", "w", encoding="utf-8") as fh:
            fh.write(text)
        subprocess.run(["git", "-C", repo, "commit", "-q", "-am", "person: reword deploy-freeze"], check=True)
        answer = {{"memories": [
            {{"id": "deploy-freeze", "aliases": ["ship on fridays", "weekend release"]}},
            {{"id": "backups-nightly", "aliases": ["restore yesterday's data", "how long are snapshots kept"]}}]}}
        print(json.dumps({{"type": "result", "subtype": "success", "is_error": False, "result": json.dumps(answer)}}))
    """))
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {script}")
    write_memory(repo, "deploy-freeze", title="No deploys on Friday", description="Production deploys freeze on Fridays.")
    write_memory(repo, "backups-nightly", title="Nightly backups", description="The database is backed up every night.")
    commit_all(repo, "two memories")
    return repo


def test_enrich_leaves_a_memory_changed_during_the_model_call_as_the_person_wrote_it(racing_model: str) -> None:
    repo = racing_model
    report = enrich.run(repo)
    with open(os.path.join(repo, "memory", "deploy-freeze.md"), encoding="utf-8") as fh:
        assert fh.read() == memory_text("deploy-freeze", title="No deploys on Friday", description=PERSON)
    assert report["skipped_changed"] == ["deploy-freeze"]
    assert sorted(report["enriched"]) == ["backups-nightly"]
    assert git(repo, "show", "--name-only", "--format=%s", "HEAD").stdout.split() == [
        "enrich:", "aliases", "for", "1", "memory", "memory/backups-nightly.md"]
    assert git(repo, "status", "--porcelain").stdout == ""
    assert "deploy-freeze" in [n.id for n in enrich.needs_enrichment(repo)]  # asked again next time


def test_commit_if_unchanged_commits_only_what_still_holds_what_was_read(repo: str) -> None:
    write_memory(repo, "a")
    write_memory(repo, "b")
    commit_all(repo, "a and b")
    read = {f"memory/{i}.md": memory_text(i) for i in ("a", "b")}
    write_memory(repo, "b", description="Edited by hand.")
    commit_all(repo, "edit b")
    before = head(repo)
    sha, stale = commit.commit_if_unchanged(
        repo, {"memory/a.md": memory_text("a", description="A new a."), "memory/b.md": memory_text("b", description="A new b.")},
        read, lambda kept: f"update {len(kept)}", {"Action": "test"})
    assert stale == ["memory/b.md"] and sha == head(repo) != before
    assert git(repo, "show", "--name-only", "--format=%s", "HEAD").stdout.split() == ["update", "1", "memory/a.md"]
    with open(os.path.join(repo, "memory", "b.md"), encoding="utf-8") as fh:
        assert fh.read() == memory_text("b", description="Edited by hand.")
    assert commit.commit_if_unchanged(repo, {"memory/b.md": "x"}, {"memory/b.md": None}, "s", {}) == ("", ["memory/b.md"])
