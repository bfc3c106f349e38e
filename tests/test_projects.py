"""Projects are repositories: keyed by their origin (else the main checkout's folder), found from files.

Real git repositories in tmp_path, real `git worktree add`; the prompt hook runs as a subprocess.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from helpers import ROOT, commit_all, git, write_memory
from memrepo.passes import capture
from memrepo.passes.curate import guards
from memrepo.passes.verify.argtypes import ClaimRejected, project_name
from memrepo.format import notes
from memrepo.base import paths, projects
from memrepo.recall import decide
from memrepo.store import config, sessions

RUN = os.path.join(ROOT, "hooks", "run")
DATA = os.path.join(ROOT, "tests", "data", "capture")
FAKE = os.path.join(ROOT, "tests", "fake", "fakemodel.py")
ACME = "github.com/acme/webapp"


def checkout(path: str, origin: str | None = None) -> str:
    """A git repository with one (empty) commit, and `origin` when given."""
    os.makedirs(path)
    git(path, "init", "-q", "-b", "main")
    if origin:
        git(path, "remote", "add", "origin", origin)
    git(path, "commit", "-q", "--allow-empty", "-m", "start")
    return path


def worktree(main: str, path: str) -> str:
    git(main, "worktree", "add", "-q", "-b", os.path.basename(path), path)
    return path


# -- the key of a remote URL -------------------------------------------------------------------

@pytest.mark.parametrize("url,key", [
    ("https://github.com/acme/webapp.git", ACME),
    ("https://github.com/acme/webapp", ACME),
    ("https://github.com/acme/webapp/", ACME),
    ("https://github.com/acme/webapp.git/", ACME),
    ("git@github.com:acme/webapp.git", ACME),
    ("git@github.com:acme/webapp", ACME),
    ("github.com:acme/webapp.git", ACME),
    ("ssh://git@github.com/acme/webapp.git", ACME),
    ("ssh://git@github.com:22/acme/webapp.git", ACME),
    ("git+ssh://git@github.com/acme/webapp", ACME),
    ("git://github.com/acme/webapp.git", ACME),
    ("https://ann@github.com/acme/webapp.git", ACME),
    ("https://ann:ghp_secret123@github.com/acme/webapp.git", ACME),  # credentials never reach a key
    ("HTTPS://GitHub.COM/Acme/WebApp.git", ACME),
    ("  https://github.com/acme/webapp.git\n", ACME),
    ("https://gitlab.example.com:8443/group/sub/tool.git", "gitlab.example.com/group/sub/tool"),
    ("ssh://git@[::1]:2222/acme/webapp.git", "[::1]/acme/webapp"),
    ("/srv/git/webapp.git", None),
    ("../webapp.git", None),
    ("file:///srv/git/webapp.git", None),
    ("C:/src/webapp", None),
    ("https://github.com/", None),
    ("https://github.com/acme/../webapp", None),
    ("", None),
    (None, None),
])
def test_remote_urls_normalize_to_host_owner_name(url: str | None, key: str | None) -> None:
    assert projects.normalize_url(url) == key


@pytest.mark.parametrize("config,url", [
    ('[core]\n\tbare = false\n[remote "origin"]\n\turl = git@github.com:acme/webapp.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n',
     "git@github.com:acme/webapp.git"),
    ('[remote "upstream"]\n\turl = https://github.com/up/webapp\n[remote "origin"]\n\tURL = "https://github.com/acme/webapp" # mine\n',
     "https://github.com/acme/webapp"),
    ('[remote "origin"] url = https://github.com/acme/webapp\n', "https://github.com/acme/webapp"),
    ("[remote.origin]\n  url=https://github.com/acme/webapp ; old syntax\n", "https://github.com/acme/webapp"),
    ('[remote "origin"]\n\tpushurl = https://push.example/x\n\turl = a\n\turl = b\n', "a"),
    ('[remote "Origin"]\n\turl = https://github.com/acme/webapp\n', None),  # subsections are case-sensitive
    ('[remote "upstream"]\n\turl = https://github.com/up/webapp\n', None),
    ('[core]\n\turl = https://github.com/acme/webapp\n', None),
    ("", None),
])
def test_origin_url_is_read_from_a_git_config(config: str, url: str | None) -> None:
    assert projects.origin_url(config) == url


# -- identify: a directory's project, from files -----------------------------------------------

def test_a_checkout_with_an_origin_is_keyed_by_it_from_any_subdirectory(tmp_path: str) -> None:
    repo = checkout(os.path.join(str(tmp_path), "web"), "git@github.com:acme/webapp.git")
    os.makedirs(os.path.join(repo, "src", "app"))
    found = projects.identify(os.path.join(repo, "src", "app"))
    assert (found.key, found.label, found.names) == (ACME, "webapp", {"webapp", "web"})
    assert paths.project_of(repo) == ACME


def test_a_checkout_without_an_origin_is_keyed_by_its_folder(tmp_path: str) -> None:
    repo = checkout(os.path.join(str(tmp_path), "scratch"))
    git(repo, "remote", "add", "upstream", "https://github.com/up/scratch")
    found = projects.identify(repo)
    assert (found.key, found.label) == ("scratch", "scratch")


@pytest.mark.parametrize("origin,key", [("https://github.com/acme/webapp.git", ACME), (None, "webapp")])
def test_a_linked_worktree_is_its_repository(tmp_path: str, origin: str | None, key: str) -> None:
    main = checkout(os.path.join(str(tmp_path), "webapp"), origin)
    wt = worktree(main, os.path.join(str(tmp_path), "webapp-login-fix"))
    assert os.path.isfile(os.path.join(wt, ".git"))
    found = projects.identify(wt)
    assert found.key == key == projects.identify(main).key
    assert "webapp-login-fix" in found.names  # memories written there before keys keep their scope


def test_a_worktree_of_a_bare_repository_takes_the_bare_name(tmp_path: str) -> None:
    bare = os.path.join(str(tmp_path), "tool.git")
    git(str(tmp_path), "init", "-q", "--bare", bare)
    seed = checkout(os.path.join(str(tmp_path), "seed"))
    git(seed, "push", "-q", bare, "main")
    wt = os.path.join(str(tmp_path), "tool-main")
    git(bare, "worktree", "add", "-q", wt, "main")
    assert projects.identify(wt).key == "tool"


def test_a_git_file_with_a_relative_gitdir_is_followed(tmp_path: str) -> None:
    # What a submodule has: `.git` is a file `gitdir: ../.git/modules/<name>`, relative to its folder.
    sub = os.path.join(str(tmp_path), "lib")
    os.makedirs(os.path.join(str(tmp_path), "store"))
    git(str(tmp_path), "init", "-q", "--separate-git-dir", os.path.join(str(tmp_path), "store", "lib.git"), sub)
    git(sub, "remote", "add", "origin", "https://git.example.org/team/lib.git")
    with open(os.path.join(sub, ".git"), "w") as fh:
        fh.write("gitdir: ../store/lib.git\n")
    assert git(sub, "rev-parse", "--git-dir").returncode == 0
    assert projects.identify(sub).key == "git.example.org/team/lib"


def test_a_config_too_big_or_unreadable_falls_back_to_the_folder_name(tmp_path: str) -> None:
    repo = checkout(os.path.join(str(tmp_path), "big"), "https://github.com/acme/big.git")
    cfg = os.path.join(repo, ".git", "config")
    assert projects.identify(repo).key == "github.com/acme/big"
    with open(cfg, "a") as fh:
        fh.write("# " + "x" * projects.CONFIG_LIMIT + "\n")
    assert projects.identify(repo).key == "big"
    os.remove(cfg)
    os.mkdir(cfg)
    assert projects.identify(repo).key == "big"


def test_a_broken_git_file_falls_back_to_the_folder_name(tmp_path: str) -> None:
    odd = os.path.join(str(tmp_path), "odd")
    os.makedirs(odd)
    with open(os.path.join(odd, ".git"), "w") as fh:
        fh.write("gitdir: ../nowhere\n")
    assert projects.identify(odd).key == "odd"


def test_outside_any_checkout_there_is_no_project(tmp_path: str) -> None:
    assert projects.identify(str(tmp_path)) is None
    assert projects.identify("") is None and projects.identify(None) is None


@pytest.mark.parametrize("project,scope,owned", [
    (projects.Project(ACME, ("webapp", "webapp-login-fix")), ACME, True),
    (projects.Project(ACME, ("webapp", "webapp-login-fix")), "webapp", True),  # a bare name from before keys
    (projects.Project(ACME, ("webapp", "webapp-login-fix")), "webapp-login-fix", True),
    (projects.Project(ACME, ("webapp",)), "github.com/other/webapp", False),
    (projects.Project(ACME, ("webapp",)), "billing", False),
    (projects.Project("webapp"), ACME, False),  # a checkout without origin owns no key
    (projects.Project("webapp"), "webapp", True),
    (projects.Project("webapp"), None, False),
])
def test_a_project_owns_its_key_and_its_bare_names(project: projects.Project, scope: str | None, owned: bool) -> None:
    assert project.owns(scope) is owned


@pytest.mark.parametrize("a,b,same", [
    (ACME, ACME, True), (ACME, "webapp", True), ("webapp", ACME, True), ("webapp", "webapp", True),
    (ACME, "github.com/other/webapp", False), ("webapp", "api", False), (ACME, None, False),
])
def test_two_scopes_name_one_project(a: str, b: str | None, same: bool) -> None:
    assert projects.same(a, b) is same


# -- recall through the prompt hook --------------------------------------------------------------

PROMPT = "how do staging deploys go through the release pipeline?"


def same_memory(repo: str, note_id: str, project: str) -> None:
    write_memory(repo, note_id, title="Staging deploys go through the release pipeline",
                 description="Every staging deploy runs the release pipeline and waits for a manual approval.",
                 topics=["staging", "deploy", "release pipeline"], project=project)


def recalled(repo: str, cwd: str, prompt: str = PROMPT) -> list[str]:
    """The ids the UserPromptSubmit hook injects for `prompt` typed in `cwd`."""
    payload = json.dumps({"session_id": "s-1", "transcript_path": "", "cwd": cwd,
                          "hook_event_name": "UserPromptSubmit", "prompt": prompt})
    env = dict(os.environ, MEMREPO_PYTHON=sys.executable, MEMREPO_DIR=repo)
    proc = subprocess.run(["sh", RUN, "user_prompt_submit"], input=payload.encode(), capture_output=True, env=env, timeout=30)
    assert (proc.returncode, proc.stderr) == (0, b"")
    if not proc.stdout:
        return []
    return re.findall(r"\(id: ([a-z0-9-]+)\)", json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"])


def test_recall_from_a_linked_worktree_finds_its_repository_s_memories(repo: str, tmp_path: str) -> None:
    main = checkout(os.path.join(str(tmp_path), "webapp"), "git@github.com:acme/webapp.git")
    wt = worktree(main, os.path.join(str(tmp_path), "webapp-login-fix"))
    same_memory(repo, "acme-deploys", ACME)
    same_memory(repo, "other-deploys", "github.com/other/api")
    assert commit_all(repo, "memories").returncode == 0
    assert recalled(repo, wt) == ["acme-deploys"]
    assert recalled(repo, main) == ["acme-deploys"]


def test_two_repositories_with_one_folder_name_do_not_share_memories(repo: str, tmp_path: str) -> None:
    a = checkout(os.path.join(str(tmp_path), "a", "api"), "https://github.com/a-org/api.git")
    b = checkout(os.path.join(str(tmp_path), "b", "api"), "git@github.com:b-org/api.git")
    same_memory(repo, "a-deploys", "github.com/a-org/api")
    same_memory(repo, "b-deploys", "github.com/b-org/api")
    assert commit_all(repo, "memories").returncode == 0
    assert recalled(repo, a) == ["a-deploys"]
    assert recalled(repo, b) == ["b-deploys"]


def test_a_memory_with_a_bare_legacy_name_still_matches(repo: str, tmp_path: str) -> None:
    main = checkout(os.path.join(str(tmp_path), "webapp"), "git@github.com:acme/webapp.git")
    wt = worktree(main, os.path.join(str(tmp_path), "webapp-login-fix"))
    same_memory(repo, "legacy-deploys", "webapp")
    same_memory(repo, "billing-deploys", "billing")
    assert commit_all(repo, "memories").returncode == 0
    assert recalled(repo, wt) == ["legacy-deploys"]


def test_a_prompt_naming_a_project_s_label_lifts_its_penalty(repo: str, tmp_path: str) -> None:
    main = checkout(os.path.join(str(tmp_path), "webapp"), "git@github.com:acme/webapp.git")
    same_memory(repo, "acme-deploys", ACME)
    same_memory(repo, "billing-deploys", "github.com/acme/billing")
    assert commit_all(repo, "memories").returncode == 0
    assert recalled(repo, main) == ["acme-deploys"]
    assert sorted(recalled(repo, main, PROMPT.replace("staging deploys", "billing staging deploys"))) == [
        "acme-deploys", "billing-deploys"]


def test_the_project_given_by_key_scopes_like_the_one_identified(repo: str) -> None:
    same_memory(repo, "acme-deploys", ACME)
    same_memory(repo, "other-deploys", "github.com/other/api")
    assert commit_all(repo, "memories").returncode == 0
    assert [h.id for h in decide.decide(repo, PROMPT, project=ACME).hits] == ["acme-deploys"]


# -- capture, sessions, settings, probes --------------------------------------------------------

def test_capture_from_a_linked_worktree_writes_the_key_and_recall_finds_it(repo: str, tmp_path: str,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    main = checkout(os.path.join(str(tmp_path), "shop"), "https://github.com/acme/shop.git")
    wt = worktree(main, os.path.join(str(tmp_path), "shop-fix-502"))
    monkeypatch.setenv("MEMREPO_MODEL_CMD", f"{sys.executable} {FAKE}")
    monkeypatch.setenv("FAKE_MODEL_RULES", os.path.join(DATA, "refute-rules.json"))
    path = os.path.join(str(tmp_path), "7c0ffee0-1111-4222-8333-444455556666.jsonl")
    with open(os.path.join(DATA, "refute-part1.jsonl"), encoding="utf-8") as src, open(path, "w", encoding="utf-8") as dst:
        dst.write(src.read().replace('"cwd": "/home/user/shop"', json.dumps({"cwd": wt})[1:-1]))
    report = capture.capture(repo, path)
    scoped = [notes.read(paths.note_path(repo, i)).get("project") for i in report.added]
    assert scoped == ["github.com/acme/shop", "github.com/acme/shop"]
    hits = decide.decide(repo, "the staging deploy fails with a 502, is it the nginx proxy timeout?", cwd=wt).hits
    assert hits and hits[0].id == report.added[0]


def test_transcript_turns_are_stored_under_the_key_and_found_by_label(repo: str, tmp_path: str) -> None:
    sys.path.insert(0, DATA)
    from ccbuild import Session

    main = checkout(os.path.join(str(tmp_path), "shop"), "https://github.com/acme/shop.git")
    wt = worktree(main, os.path.join(str(tmp_path), "shop-fix"))
    s = Session("dddd0000-0000-4000-8000-000000000001", cwd=wt)
    s.user("push the image to the registry")
    sessions.index(repo, s.write(os.path.join(str(tmp_path), "t.jsonl")))
    assert sessions.project_name(wt) == "github.com/acme/shop"
    assert [h["project"] for h in sessions.search(repo, "registry", project="shop")] == ["github.com/acme/shop"]
    assert len(sessions.search(repo, "registry", project="github.com/acme/shop")) == 1
    assert sessions.search(repo, "registry", project="hop") == sessions.search(repo, "registry", project="sho_") == []


def test_a_memory_s_key_finds_the_root_of_its_repository_in_settings(tmp_path: str) -> None:
    shop = checkout(os.path.join(str(tmp_path), "src", "shop"), "git@github.com:acme/shop.git")
    fork = checkout(os.path.join(str(tmp_path), "src", "shop-fork"), "git@github.com:ann/shop.git")
    plain = checkout(os.path.join(str(tmp_path), "src", "blog"))
    roots = {"shop": shop, "ann-shop": fork, "blog": plain}
    assert config.root_of(roots, "github.com/acme/shop") == os.path.realpath(shop)
    assert config.root_of(roots, "github.com/ann/shop") == os.path.realpath(fork)
    assert config.root_of(roots, "shop") == shop  # the entry of that name first
    assert config.root_of(roots, "blog") == plain
    assert config.root_of(roots, "github.com/acme/blog") is None
    assert config.root_of({"a": shop, "b": fork}, "shop") is None  # a bare name two roots fit: neither
    assert config.root_of(roots, None) is None


@pytest.mark.parametrize("value,ok", [("shop", True), (ACME, True), ("gitlab.example.com/g/sub/tool", True),
                                      ("github.com/../etc", False), ("github.com//x", False), ("/abs", False),
                                      ("a/./b", False), ("x" * 201, False)])
def test_a_claim_s_project_may_be_a_key(value: str, ok: bool) -> None:
    if ok:
        assert project_name(value) == value
    else:
        with pytest.raises(ClaimRejected):
            project_name(value)


def test_a_legacy_memory_and_a_keyed_one_of_one_project_pass_the_scope_guard() -> None:
    def note(note_id: str, project: str) -> notes.Note:
        return notes.new_note(id=note_id, title=note_id, description="d", class_="fact", source="user",
                              created="2026-01-01", topics=["a", "b"], project=project)

    verdict = {"confidence": 0.9, "scope": "full"}
    assert guards.failures(verdict, note("new", ACME), note("old", "webapp")) == []
    assert any(f.startswith("scope: project") for f in guards.failures(verdict, note("new", ACME), note("old", "billing")))
