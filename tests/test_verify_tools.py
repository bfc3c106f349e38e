"""A memory saying a tool is needed: "needs `gh`" is about the project, not about this laptop (issue 16, defect 6)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from typing import Any

import pytest

from helpers import ROOT, commit_all, write_file, write_memory
from memrepo.format import notes
from memrepo.passes.verify import probes, verifier as verify

FAKE = os.path.join(ROOT, "tests", "fake", "fakemodel.py")
BODY = "Cutting a release needs `gh` and `jq`; the notes come from `CHANGELOG.md`.\n"


@pytest.fixture
def laptop(repo: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    """A project `shop`, a memory naming two tools, and a PATH that has `jq` but no `gh`."""
    project = os.path.join(str(tmp_path), "shop")
    write_file(project, "CHANGELOG.md", "# changes\n")
    write_file(repo, "index/local.json", json.dumps({"projects": {"shop": project}}))
    write_memory(repo, "release-tools", title="Release tools", description="What cutting a release needs",
                 project="shop", body=BODY)
    assert commit_all(repo, "memory").returncode == 0
    bindir = tmp_path / "bin"
    bindir.mkdir()
    write_file(str(bindir), "jq", "#!/bin/sh\nexit 0\n")
    os.chmod(bindir / "jq", 0o755)
    # This machine's PATH for the probe: jq is installed here, gh is not.
    monkeypatch.setattr(probes, "_which", lambda name: shutil.which(name, path=str(bindir)))
    rules = os.path.join(str(tmp_path), "rules.json")
    with open(rules, "w") as fh:  # what an honest model reads in BODY
        json.dump([{"contains": "Memory id: release-tools\n", "reply": {"claims": [
            {"probe": "command_exists", "args": {"name": "gh"}, "quote": "needs `gh`"},
            {"probe": "command_exists", "args": {"name": "jq"}, "quote": "and `jq`"}]}}], fh)
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE}")
    monkeypatch.setenv("FAKE_MODEL_RULES", rules)
    monkeypatch.setenv("FAKE_MODEL_DEFAULT", '{"claims": []}')
    return repo


def test_a_tool_this_machine_lacks_is_unknown_not_a_failed_claim(laptop: str) -> None:
    report = verify.run(laptop, use_model=True, today="2026-11-29")
    result = report.results[0]
    assert [(c["claim"], c["verdict"], c["detail"]) for c in result.claims] == [
        ("path_exists: CHANGELOG.md (shop)", "true", "exists"),
        ("command_exists: gh", "unknown", "not on this machine's PATH (proves nothing)"),
        ("command_exists: jq", "true", "on PATH")]
    assert (result.status, result.failed()) == ("verified", [])
    meta = notes.read(os.path.join(laptop, "memory", "release-tools.md")).meta
    assert meta["verification"] == {"status": "verified", "checked": "2026-11-29"}


def test_command_exists_cannot_express_absence() -> None:
    assert {m.value for m in probes.Presence} == {probes.Verdict.TRUE, probes.Verdict.UNKNOWN}
