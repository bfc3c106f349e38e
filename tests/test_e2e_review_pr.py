"""Review by pull request, end to end: `memrepo review push` through the real `gh` CLI (Debian's
package, installed by `.ci/run`) against a fake GitHub REST API over HTTPS on 127.0.0.1
(`tests/e2e/fake_github.py`, a self-signed certificate trusted through SSL_CERT_FILE), with a
bare git repository as the remote and two clones of it as two machines.

The curator's verdicts come from the hand-written labeled pairs (`tests/data/curate/`), the
same fake model `tests/test_curate.py` runs. Skips without `gh` or `openssl`, and fails instead
under MEMREPO_E2E_REQUIRE=1.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from typing import Any

import pytest

from helpers import git, write_memory, commit_all
from memrepo.passes.curate import review
from memrepo.store import repoinit, sync
from memrepo.recall import decide as recall
from test_curate import fake, ids, store  # noqa: F401  (fixture)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "e2e"))
from fake_github import FakeGitHub  # noqa: E402

NEEDS = [tool for tool in ("gh", "openssl") if not shutil.which(tool)]
if NEEDS:
    if os.environ.get("MEMREPO_E2E_REQUIRE") == "1":
        raise RuntimeError(f"MEMREPO_E2E_REQUIRE=1 but {', '.join(NEEDS)} is not installed (`.ci/run` installs gh)")
    pytestmark = pytest.mark.skip(reason=f"needs {', '.join(NEEDS)} (Debian: apt install gh openssl)")


def memrepo(repo: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memrepo", "--repo", repo, *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=180)


@pytest.fixture
def team(tmp_path: Any) -> dict[str, Any]:
    """A bare remote, machine a (pushes, has gh) and machine b (a clone, syncs), a fake forge."""
    bare = str(tmp_path / "remote.git")
    git(str(tmp_path), "init", "-q", "--bare", "-b", "main", bare)
    a = str(tmp_path / "a")
    repoinit.init(a)
    git(a, "remote", "add", "origin", bare)
    return {"bare": bare, "a": a, "tmp": tmp_path}


def _forge(team: dict[str, Any]) -> FakeGitHub:
    certs = team["tmp"] / "certs"
    certs.mkdir(exist_ok=True)
    return FakeGitHub(team["bare"], str(certs))


def _gh_env(hub: FakeGitHub, tmp: Any) -> dict[str, str]:
    return {"GH_CONFIG_DIR": str(tmp / "gh-config"), "GH_ENTERPRISE_TOKEN": hub.token, "SSL_CERT_FILE": hub.cert}


def _set_forge(repo: str, hub: FakeGitHub) -> None:
    path = os.path.join(repo, "index", "local.json")
    settings = json.load(open(path)) if os.path.exists(path) else {}
    settings["forge"] = f"{hub.host}/{hub.owner}/{hub.repo}"
    with open(path, "w") as fh:
        json.dump(settings, fh)


def _machine_b(team: dict[str, Any]) -> str:
    b = str(team["tmp"] / "b")
    subprocess.run(["git", "clone", "-q", team["bare"], b], check=True, capture_output=True)
    repoinit.init(b)
    return b


def test_a_curate_run_becomes_pull_requests_and_their_decisions_flow_back(team: dict[str, Any], fake) -> None:  # noqa: F811
    a, bare, tmp = team["a"], team["bare"], team["tmp"]
    store(a, "p13", "p15")
    sync.sync(a)  # the remote has main
    git(a, "branch", "--set-upstream-to", "origin/main")
    b = _machine_b(team)
    fake("p13", "p15")
    out = memrepo(a, "curate")
    assert out.returncode == 0, out.stderr
    proposals = {p["trailers"]["Id"]: p for p in review.proposals(a)}
    assert sorted(proposals) == ["p13-no-force-push", "p15-migrations-in-tx"]
    with _forge(team) as hub:
        _set_forge(a, hub)
        env = _gh_env(hub, tmp)
        out = memrepo(a, "review", "push", env=env)
        assert out.returncode == 0, out.stderr + out.stdout
        created = hub.calls("POST", "/pulls")
        assert [r.status for r in created] == [201, 201]
        bodies = {r.body["head"]: r.body for r in created}
        assert sorted(bodies) == sorted(f"memrepo/proposal/{p['id']}" for p in proposals.values())
        p13 = proposals["p13-no-force-push"]
        sent = bodies[f"memrepo/proposal/{p13['id']}"]
        assert sent["base"] == "main" and sent["title"] == "memrepo review: supersede p13-no-force-push by p13-cloud-sessions"
        body = sent["body"]
        # both memories' title and description, side by side, the verdict, the guard, the commands
        loser_text = open(os.path.join(a, "memory", "p13-no-force-push.md")).read()
        from memrepo.format import notes
        loser, winner = notes.parse(loser_text), notes.parse(open(os.path.join(a, "memory", "p13-cloud-sessions.md")).read())
        assert "| | would be superseded | would stay in force |" in body
        title_row = next(line for line in body.splitlines() if line.startswith("| **title** |"))
        assert loser.get("title").split()[0] in title_row and winner.get("title").split()[0] in title_row
        assert "| **description** |" in body
        assert f"relation **contradicts**, confidence **{p13['trailers']['Confidence']}**, scope **full**." in body
        assert "**Held back by:** class: reference cannot supersede rule" in body
        assert f"memrepo review accept {p13['id']}" in body and f"memrepo review reject {p13['id']}" in body
        assert "pull request" in out.stdout and out.stdout.count(" opened") == 2
        # each pull request branch is on the remote: one commit on main with the accept's message
        head = git(bare, "rev-parse", f"memrepo/proposal/{p13['id']}").stdout.strip()
        assert git(bare, "rev-parse", f"{head}^").stdout.strip() == git(bare, "rev-parse", "main").stdout.strip()
        assert f"Memrepo-Proposal: {p13['commit']}" in git(bare, "log", "-1", "--format=%B", head).stdout

        # a memory changes; the re-push updates the same pull request instead of opening another
        path = os.path.join(a, "memory", "p13-cloud-sessions.md")
        note = notes.read(path)
        note.meta["description"] = "Cloud sessions push to their own branch only; the main branch is protected."
        notes.write(note, path)
        assert commit_all(a, "edit the winner").returncode == 0
        out = memrepo(a, "review", "push", env=env)
        assert out.returncode == 0, out.stderr
        assert len(hub.calls("POST", "/pulls")) == 2 and len(hub.pulls) == 2
        patched = hub.calls("PATCH")
        assert len(patched) == 1 and "the main branch is protected" in patched[0].body["body"]
        number13 = next(n for n, pr in hub.pulls.items() if pr.head.endswith(p13["id"]))
        assert patched[0].route.endswith(f"/pulls/{number13}")
        assert " updated" in out.stdout and " unchanged" in out.stdout
        sync.sync(a)

        # machine b sees the two proposals the team pushed
        sync.sync(b)
        assert sorted(p["id"] for p in review.proposals(b)) == sorted(p["id"] for p in proposals.values())

        # the reviewer merges p13's pull request on the forge: every machine has it after sync
        p15 = proposals["p15-migrations-in-tx"]
        number15 = next(n for n, pr in hub.pulls.items() if pr.head.endswith(p15["id"]))
        hub.merge(number13)
        hub.merge(number15)
        for machine in (b, a):
            assert memrepo(machine, "sync").returncode == 0
            assert notes.read(os.path.join(machine, "memory", "p13-no-force-push.md")).get("superseded_by") == "p13-cloud-sessions"
            assert notes.read(os.path.join(machine, "memory", "p15-migrations-in-tx.md")).get("superseded_by") == "p15-migration-42"
            assert review.proposals(machine) == []
            assert memrepo(machine, "review").stderr == "0 open proposals\n"
            hits = recall.decide(machine, "may I git push --force to main").hits
            assert ("p13-no-force-push", ["superseded by p13-cloud-sessions"]) in [(h.id, h.labels()) for h in hits]

        # a second run's pull request is closed unmerged on the forge: the next push records the reject
        store(a, "p16")
        fake("p13", "p15", "p16")
        out = memrepo(a, "curate", "--json")
        assert out.returncode == 0, out.stderr
        (p16,) = review.proposals(a)
        assert p16["trailers"]["Id"] == "p16-http-timeout-30" and p16["run"] == json.loads(out.stdout)["run_id"]
        assert memrepo(a, "sync").returncode == 0
        out = memrepo(a, "review", "push", env=env)
        assert out.returncode == 0 and " opened" in out.stdout, out.stderr
        number16 = next(n for n, pr in hub.pulls.items() if pr.head.endswith(p16["id"]))
        hub.close(number16)
        out = memrepo(a, "review", "push", env=env)
        assert out.returncode == 0, out.stderr
        assert f"proposal {p16['id']}: pull request #{number16}" in out.stdout and "rejected" in out.stdout
        assert review.proposals(a) == []
        listed = memrepo(a, "review", "--all")
        assert any(line.startswith("reject") and p16["id"] in line for line in listed.stdout.splitlines())
        assert any(line.startswith("accepted") and p13["id"] in line for line in listed.stdout.splitlines())
        reject = git(a, "log", "-1", "--format=%B").stdout
        assert f"Memrepo-Proposal: {p16['commit']}" in reject and f"/pull/{number16}" in reject
        # the next curate does not propose the pair again, here or on machine b after sync
        assert memrepo(a, "sync").returncode == 0 and memrepo(b, "sync").returncode == 0
        for machine in (a, b):
            out = memrepo(machine, "curate", "--json")
            assert out.returncode == 0, out.stderr
            assert json.loads(out.stdout)["review"] == []
        assert review.proposals(b) == []
        assert len(hub.pulls) == 3  # nothing reopened, nothing opened twice


def test_a_proposal_decided_here_closes_its_pull_request(team: dict[str, Any], fake) -> None:  # noqa: F811
    a, tmp = team["a"], team["tmp"]
    store(a, "p13", "p15")
    sync.sync(a)
    fake("p13", "p15")
    assert memrepo(a, "curate").returncode == 0
    first, second = review.proposals(a)
    with _forge(team) as hub:
        _set_forge(a, hub)
        env = _gh_env(hub, tmp)
        assert memrepo(a, "review", "push", env=env).returncode == 0
        assert memrepo(a, "review", "accept", first["id"]).returncode == 0
        assert memrepo(a, "review", "reject", second["id"], "--reason", "the migration note is a one-off").returncode == 0
        out = memrepo(a, "review", "push", env=env)
        assert out.returncode == 0, out.stderr
        assert {pr.state for pr in hub.pulls.values()} == {"closed"} and all(pr.merged_at is None for pr in hub.pulls.values())
        comments = {pr.head.rsplit("/", 1)[1]: pr.comments for pr in hub.pulls.values()}
        assert "Accepted in memrepo" in comments[first["id"]][0] and "Rejected in memrepo" in comments[second["id"]][0]
        assert out.stdout.count(" closed: decided here") == 2
        # pushing again changes nothing on the forge
        before = len(hub.requests)
        assert memrepo(a, "review", "push", env=env).returncode == 0
        assert [r.method for r in hub.requests[before:]] == ["GET"]


def test_memory_text_cannot_inject_markdown_into_the_pull_request(team: dict[str, Any], fake) -> None:  # noqa: F811
    a, tmp = team["a"], team["tmp"]
    hostile = {"title": "Never push | --force ![x](https://evil.example/p.png) @everyone <img src=x onerror=alert(1)>",
               "description": "See [the policy](javascript:alert(1)) and `code` | new | row | www.evil.example"}
    store(a, "p13", extra=None)
    path = os.path.join(a, "memory", "p13-no-force-push.md")
    from memrepo.format import notes
    note = notes.read(path)
    note.meta.update(hostile)
    notes.write(note, path)
    assert commit_all(a, "hostile text").returncode == 0
    sync.sync(a)
    fake("p13")
    assert memrepo(a, "curate").returncode == 0
    with _forge(team) as hub:
        _set_forge(a, hub)
        assert memrepo(a, "review", "push", env=_gh_env(hub, tmp)).returncode == 0
        (pr,) = hub.pulls.values()
    body = pr.body
    for bad in ("![x](", "](javascript", "<img", "@everyone", "| new | row |", "`code`", "https://evil", "www.evil"):
        assert not re.search(r"(?<!\\)" + re.escape(bad), body), bad  # only its escaped form is there
    title_row = next(line for line in body.splitlines() if line.startswith("| **title** |"))
    assert title_row.count(" | ") == 2  # still three cells: the pipe in the title is escaped


def _path_without_gh(tmp: Any) -> str:
    """A PATH with every command of this one but `gh` (links in one folder)."""
    farm = tmp / "bin-without-gh"
    farm.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        if os.path.isdir(folder):
            for name in os.listdir(folder):
                if name != "gh" and not (farm / name).exists():
                    os.symlink(os.path.join(folder, name), farm / name)
    return str(farm)


@pytest.mark.parametrize("case", ["no gh", "logged out", "offline"])
def test_without_a_forge_push_still_pushes_and_says_how_to_open_the_pull_request(team: dict[str, Any], fake, case: str) -> None:  # noqa: F811
    a, bare, tmp = team["a"], team["bare"], team["tmp"]
    store(a, "p13")
    sync.sync(a)
    fake("p13")
    assert memrepo(a, "curate").returncode == 0
    (p,) = review.proposals(a)
    hub = _forge(team).__enter__()
    _set_forge(a, hub)
    env, host = _gh_env(hub, tmp), hub.host
    if case == "no gh":
        env["PATH"] = _path_without_gh(tmp)
    elif case == "logged out":
        env["GH_ENTERPRISE_TOKEN"] = ""
    else:
        hub.__exit__(None, None, None)  # offline: nothing listens on the forge's port any more
    try:
        out = memrepo(a, "review", "push", env=env)
        assert out.returncode == 0, out.stderr
        why = {"no gh": "`gh` is not installed", "logged out": f"`gh` is not logged in to {host}", "offline": f"{host} can't be reached"}
        assert why[case] in out.stderr
        assert f"https://{host}/acme/memory/compare/main...memrepo/proposal/{p['id']}?expand=1" in out.stdout
        assert git(bare, "rev-parse", "--verify", f"memrepo/proposal/{p['id']}").returncode == 0
        assert git(bare, "rev-parse", "--verify", p["branch"]).returncode == 0
        assert review.proposals(a)[0]["id"] == p["id"]  # nothing decided
        assert all(r.status == 401 for r in hub.requests)  # nothing but a refused call reached the forge
    finally:
        if case != "offline":
            hub.__exit__(None, None, None)


def test_a_remote_that_is_not_a_forge_gets_the_command_to_run(team: dict[str, Any], fake) -> None:  # noqa: F811
    a, bare = team["a"], team["bare"]
    store(a, "p13")
    sync.sync(a)
    fake("p13")
    assert memrepo(a, "curate").returncode == 0
    (p,) = review.proposals(a)
    out = memrepo(a, "review", "push")
    assert out.returncode == 0, out.stderr
    assert "is not a forge's; name the forge with --forge HOST/OWNER/REPO" in out.stderr
    assert f"memrepo review show {p['id']} --markdown | gh pr create --repo HOST/OWNER/REPO --head memrepo/proposal/{p['id']}" in out.stdout
    shown = memrepo(a, "review", "show", p["id"], "--markdown")
    assert shown.returncode == 0 and "| | would be superseded | would stay in force |" in shown.stdout
    assert git(bare, "rev-parse", "--verify", f"memrepo/proposal/{p['id']}").returncode == 0
