"""Sharing a memory with a team by pull request (issue 41, part 3), end to end: `memrepo share`
through the real `gh` CLI against the fake GitHub REST API on 127.0.0.1 (`tests/e2e/fake_github.py`,
as tests/test_e2e_review_pr.py uses it), a bare git repository as the team's remote, the forge's
Merge button, then `memrepo sync` on the member who shared it: the team's memory holds it. Skips without
`gh` or `openssl`, and fails instead under MEMREPO_E2E_REQUIRE=1.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from helpers import commit_all, git, write_memory
from memrepo.store import repoinit, sync

# The fake forge, the check for gh and openssl (an error under MEMREPO_E2E_REQUIRE=1) and the CLI
# runner of the review-by-pull-request tests.
from test_e2e_review_pr import NEEDS, FakeGitHub, memrepo  # noqa: E402

if NEEDS:
    pytestmark = pytest.mark.skip(reason=f"needs {', '.join(NEEDS)} (Debian: apt install gh openssl)")


def test_a_shared_memory_is_a_pull_request_and_merging_it_is_the_accept(repo: str, tmp_path: Any,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    bare = str(tmp_path / "team.git")
    git(str(tmp_path), "init", "-q", "--bare", "-b", "main", bare)
    alice = str(tmp_path / "alice")
    repoinit.init(alice)
    git(alice, "remote", "add", "origin", bare)
    sync.sync(alice)
    out = memrepo(repo, "team", "add", "acme", bare)
    assert out.returncode == 0, out.stderr
    write_memory(repo, "my-redis", title="Redis sessions expire after thirty minutes",
                 description="Session keys in Redis expire after thirty minutes <img src=x> of inactivity.",
                 topics=["redis", "sessions"])
    assert commit_all(repo, "redis").returncode == 0
    certs = tmp_path / "certs"
    certs.mkdir()
    with FakeGitHub(bare, str(certs)) as hub:
        env = {"GH_CONFIG_DIR": str(tmp_path / "gh-config"), "GH_ENTERPRISE_TOKEN": hub.token, "SSL_CERT_FILE": hub.cert}
        out = memrepo(repo, "share", "my-redis", "--to", "acme", "--forge", f"{hub.host}/{hub.owner}/{hub.repo}",
                      "--json", env=env)
        assert out.returncode == 0, out.stderr + out.stdout
        done = json.loads(out.stdout)
        created = hub.calls("POST", "/pulls")
        assert [r.status for r in created] == [201]
        sent = created[0].body
        assert sent["head"] == "memrepo/share/my-redis" and sent["base"] == "main" and done["url"].endswith("/pull/1")
        assert "<img" not in sent["body"] and "Redis sessions expire" in sent["body"]
        # shared again while open: the same pull request, no second one
        assert memrepo(repo, "share", "my-redis", "--to", "acme", "--forge", f"{hub.host}/{hub.owner}/{hub.repo}",
                       env=env).returncode == 0
        assert len(hub.calls("POST", "/pulls")) == 1
        assert git(bare, "cat-file", "-e", "main:memory/my-redis.md", check=False).returncode != 0
        hub.merge(1)
    assert memrepo(repo, "sync").returncode == 0
    members = json.loads(memrepo(repo, "list", "--source", "acme", "--json").stdout)
    assert [m["id"] for m in members] == ["my-redis"]
    log = git(bare, "log", "-1", "--format=%B", "main^2").stdout
    assert "Memrepo-Action: share" in log
