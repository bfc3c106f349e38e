"""`memrepo init`: a new or existing repository becomes a memory repository, idempotently."""

from __future__ import annotations

import os
import stat

import pytest

from helpers import ROOT, commit_all, git, head, memory_text, write_file, write_memory
from memrepo.base import paths
from memrepo.vcs import hookwire
from memrepo.store import repoinit
from memrepo.errors import MemrepoError

SHIMS = [f".githooks/{h}" for h in hookwire.HOOKS]
TRACKED = sorted([".gitattributes", "index/.gitignore", "index/README.md", "memory/.gitkeep"] + SHIMS)
BAD_CLASS = "memory/a.md:5: unknown class 'wish' — use one of: rule, preference, fact, project, event, reference"
REJECTED_ONE = "memrepo: commit rejected: 1 problem in memory files (bypass once with `git commit --no-verify`)\n"


def tracked(repo: str) -> list[str]:
    return sorted(git(repo, "ls-files").stdout.splitlines())


def snapshot(repo: str) -> dict[str, bytes]:
    """Every file outside .git and the index cache, with its bytes."""
    found = {}
    for top, dirs, files in os.walk(repo):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            rel = os.path.relpath(os.path.join(top, name), repo)
            if not rel.startswith("index/") or rel in ("index/.gitignore", "index/README.md"):
                with open(os.path.join(repo, rel), "rb") as fh:
                    found[rel] = fh.read()
    return found


def test_init_on_an_empty_directory(tmp_path) -> None:
    path = str(tmp_path / "mem")
    report = repoinit.init(path)
    assert report["git_init"] is True
    assert report["wiring"] == "shims"
    assert sorted(report["written"]) == TRACKED
    assert report["commit"] == head(path)
    assert git(path, "rev-list", "--count", "HEAD").stdout == "1\n"
    assert git(path, "log", "-1", "--format=%s%n%n%b").stdout == "memrepo: init memory repository\n\nMemrepo-Action: init\n\n"
    assert git(path, "log", "-1", "--format=%(trailers:key=Memrepo-Action,valueonly)").stdout.strip() == "init"
    assert git(path, "branch", "--show-current").stdout == "main\n"
    assert git(path, "config", "--get", "core.hooksPath", check=False).stdout == ""
    assert tracked(path) == TRACKED
    for hook in hookwire.HOOKS:  # git runs these untracked copies, never the committed templates
        installed = os.path.join(path, ".git", "hooks", hook)
        assert os.access(installed, os.X_OK), hook
        with open(installed, encoding="utf-8") as fh:
            assert fh.read() == hookwire.shim_text(hook)
    assert hookwire.wiring(path) == (True, "shims in the clone's hooks directory")
    assert git(path, "status", "--porcelain").stdout == ""
    for rel in SHIMS:
        mode = os.stat(os.path.join(path, rel)).st_mode
        assert mode & stat.S_IXUSR, rel
        with open(os.path.join(path, rel), encoding="utf-8") as fh:
            assert fh.read() == hookwire.shim_text(rel.split("/")[1])
        assert git(path, "ls-files", "-s", rel).stdout.startswith("100755 ")
    with open(os.path.join(path, ".gitattributes"), encoding="utf-8") as fh:
        assert fh.read() == "memory/*.md text eol=lf\nmemory/*.md merge=memrepo\n"
    with open(os.path.join(path, "index", ".gitignore"), encoding="utf-8") as fh:
        assert fh.read() == repoinit.INDEX_GITIGNORE
    with open(os.path.join(path, ".git", hookwire.PYTHON_RECORD), encoding="utf-8") as fh:
        assert os.path.isabs(fh.read().strip())
    assert os.path.isfile(paths.index_db(path))


def test_init_twice_changes_nothing(repo: str) -> None:
    before_head, before_files = head(repo), snapshot(repo)
    report = repoinit.init(repo)
    assert (report["git_init"], report["written"], report["wiring"], report["commit"]) == (False, [], "already", None)
    assert head(repo) == before_head
    assert snapshot(repo) == before_files
    assert git(repo, "rev-list", "--count", "HEAD").stdout == "1\n"
    assert git(repo, "status", "--porcelain").stdout == ""


def test_init_restores_a_deleted_shim_without_a_new_commit(repo: str) -> None:
    os.remove(os.path.join(repo, ".githooks", "post-merge"))
    report = repoinit.init(repo)
    assert (report["written"], report["commit"]) == ([".githooks/post-merge"], None)
    assert git(repo, "rev-list", "--count", "HEAD").stdout == "1\n"
    assert git(repo, "status", "--porcelain").stdout == ""


def test_init_commits_a_shim_that_drifted(repo: str) -> None:
    write_file(repo, ".githooks/post-merge", "#!/bin/sh\nexit 0\n")
    git(repo, "commit", "-q", "-am", "break a shim")
    report = repoinit.init(repo)
    assert report["written"] == [".githooks/post-merge"]
    assert git(repo, "diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD").stdout == ".githooks/post-merge\n"
    assert git(repo, "status", "--porcelain").stdout == ""


def test_init_that_failed_before_committing_commits_on_the_next_run(tmp_path, monkeypatch) -> None:
    path = str(tmp_path / "mem")
    os.makedirs(path)
    git(path, "init", "-q")
    git(path, "config", "user.useConfigOnly", "true")
    for key in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(key)
    with pytest.raises(MemrepoError) as err:
        repoinit.init(path)
    assert str(err.value) == "git has no user name/email here, so memrepo cannot commit"
    git(path, "config", "user.name", "Late Identity")
    git(path, "config", "user.email", "late@example.com")
    report = repoinit.init(path)
    assert (report["written"], report["commit"]) == ([], head(path))
    assert tracked(path) == TRACKED
    assert git(path, "status", "--porcelain").stdout == ""


def _existing_repo(tmp_path) -> str:
    path = str(tmp_path / "existing")
    os.makedirs(path)
    git(path, "init", "-q", "-b", "trunk")
    write_file(path, "README.md", "# notes\n")
    write_file(path, "src/app.py", "print('hi')\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "first")
    write_file(path, "README.md", "# notes\n\nmore\n")
    git(path, "commit", "-q", "-am", "second")
    return path


def test_init_on_an_existing_repository_keeps_its_history(tmp_path) -> None:
    path = _existing_repo(tmp_path)
    old = git(path, "rev-list", "HEAD").stdout.split()
    report = repoinit.init(path)
    assert (report["git_init"], report["wiring"]) == (False, "shims")
    assert git(path, "rev-list", "HEAD~1").stdout.split() == old
    assert git(path, "log", "-1", "--format=%s").stdout == "memrepo: init memory repository\n"
    assert git(path, "diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD").stdout.split() == TRACKED
    assert tracked(path) == sorted(TRACKED + ["README.md", "src/app.py"])
    assert git(path, "branch", "--show-current").stdout == "trunk\n"
    again = head(path)
    repoinit.init(path)
    assert head(path) == again


def test_init_appends_to_an_existing_gitattributes(tmp_path) -> None:
    path = _existing_repo(tmp_path)
    write_file(path, ".gitattributes", "*.png binary")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "attrs")
    repoinit.init(path)
    assert git(path, "show", "HEAD:.gitattributes").stdout == "*.png binary\nmemory/*.md text eol=lf\nmemory/*.md merge=memrepo\n"


def test_init_keeps_existing_memories_and_they_are_validated_from_then_on(tmp_path) -> None:
    path = _existing_repo(tmp_path)
    write_memory(path, "kept")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "a memory before init")
    report = repoinit.init(path)
    assert "memory/.gitkeep" not in report["written"]
    assert report["indexed"] == 1
    write_file(path, "memory/a.md", memory_text("a", class_="wish"))
    result = commit_all(path, "bad")
    assert (result.returncode, result.stderr) == (1, BAD_CLASS + "\n" + REJECTED_ONE)


FOREIGN_MARKER_HOOK = """#!/bin/sh
# someone else's pre-commit
echo ran >> "$(git rev-parse --show-toplevel)/../foreign-ran"
exit 0
"""
FOREIGN_BLOCKING_HOOK = """#!/bin/sh
# someone else's pre-commit: refuses while a BLOCK file exists
if [ -e "$(git rev-parse --show-toplevel)/BLOCK" ]; then
    echo "foreign hook says no" >&2
    exit 1
fi
exit 0
"""


def _with_foreign_hook(tmp_path, text: str) -> str:
    path = _existing_repo(tmp_path)
    hook = os.path.join(path, ".git", "hooks", "pre-commit")
    write_file(path, ".git/hooks/pre-commit", text)
    os.chmod(hook, 0o755)
    return path


def _marker_count(path: str) -> int:
    marker = os.path.join(os.path.dirname(path), "foreign-ran")
    if not os.path.exists(marker):
        return 0
    with open(marker, encoding="utf-8") as fh:
        return len(fh.read().splitlines())


def test_init_with_a_foreign_pre_commit_hook_chains_it(tmp_path) -> None:
    path = _with_foreign_hook(tmp_path, FOREIGN_MARKER_HOOK)
    report = repoinit.init(path)
    assert report["wiring"] == "forwarders"
    assert git(path, "config", "--get", "core.hooksPath", check=False).stdout == ""
    hooks = os.path.join(path, ".git", "hooks")
    with open(os.path.join(hooks, "pre-commit.legacy"), encoding="utf-8") as fh:
        assert fh.read() == FOREIGN_MARKER_HOOK
    for hook in hookwire.HOOKS:
        with open(os.path.join(hooks, hook), encoding="utf-8") as fh:
            assert fh.read() == (hookwire.forwarder_text(hook) if hook == "pre-commit" else hookwire.shim_text(hook))
    assert "/.githooks" not in hookwire.forwarder_text("pre-commit") and "$top/" not in hookwire.forwarder_text("pre-commit")
    assert hookwire.wiring(path) == (True, "shims in the clone's hooks directory, chaining the existing hooks")
    ran_at_init = _marker_count(path)
    assert ran_at_init == 1  # init's own commit went through the chain

    # A valid commit runs the foreign hook and memrepo's.
    write_memory(path, "ok")
    result = commit_all(path, "valid")
    assert (result.returncode, result.stderr) == (0, "")
    assert _marker_count(path) == ran_at_init + 1

    # A bad memory: the foreign hook still runs, and memrepo still rejects.
    before = head(path)
    write_file(path, "memory/a.md", memory_text("a", class_="wish"))
    result = commit_all(path, "bad")
    assert (result.returncode, result.stderr) == (1, BAD_CLASS + "\n" + REJECTED_ONE)
    assert _marker_count(path) == ran_at_init + 2
    assert head(path) == before


def test_init_twice_with_forwarders_changes_nothing(tmp_path) -> None:
    path = _with_foreign_hook(tmp_path, FOREIGN_MARKER_HOOK)
    repoinit.init(path)
    before_head, before_hooks = head(path), sorted(os.listdir(os.path.join(path, ".git", "hooks")))
    report = repoinit.init(path)
    assert (report["written"], report["wiring"], report["commit"]) == ([], "already", None)
    assert head(path) == before_head
    assert sorted(os.listdir(os.path.join(path, ".git", "hooks"))) == before_hooks


def test_a_foreign_pre_commit_that_fails_still_blocks(tmp_path) -> None:
    path = _with_foreign_hook(tmp_path, FOREIGN_BLOCKING_HOOK)
    assert repoinit.init(path)["wiring"] == "forwarders"
    before = head(path)
    write_file(path, "BLOCK", "")
    write_memory(path, "valid")
    result = commit_all(path, "blocked by the other hook")
    assert (result.returncode, result.stderr) == (1, "foreign hook says no\n")
    assert head(path) == before
    os.remove(os.path.join(path, "BLOCK"))
    result = commit_all(path, "now allowed")
    assert (result.returncode, result.stderr) == (0, "")


def test_an_inactive_hook_is_kept_as_legacy_and_stays_inactive(tmp_path) -> None:
    path = _existing_repo(tmp_path)
    write_file(path, ".git/hooks/pre-commit", FOREIGN_MARKER_HOOK)  # not executable: git would not run it
    assert repoinit.init(path)["wiring"] == "forwarders"
    assert os.path.isfile(os.path.join(path, ".git", "hooks", "pre-commit.legacy"))
    write_memory(path, "ok")
    assert commit_all(path, "valid").returncode == 0
    assert _marker_count(path) == 0  # the forwarder runs a legacy hook only when it is executable


@pytest.mark.parametrize("scope", ["--local", "--global"])
def test_hooks_path_set_elsewhere_is_refused_with_a_hint(tmp_path, scope: str) -> None:
    path = _existing_repo(tmp_path)
    git(path, "config", scope, "core.hooksPath", ".husky")
    before_head, before_files = head(path), snapshot(path)
    with pytest.raises(MemrepoError) as err:
        repoinit.init(path)
    assert str(err.value) == "core.hooksPath is already set to '.husky' by another tool, so git would not run memrepo's hooks"
    assert err.value.hint == ("unset it with `git config --unset core.hooksPath` (memrepo chains the hooks it finds in "
                              "`git rev-parse --git-path hooks`) and run `memrepo init` again")
    assert head(path) == before_head
    assert snapshot(path) == before_files


def test_legacy_hook_left_in_the_way_is_refused(tmp_path) -> None:
    path = _with_foreign_hook(tmp_path, FOREIGN_MARKER_HOOK)
    write_file(path, ".git/hooks/pre-commit.legacy", "#!/bin/sh\nexit 0\n")
    with pytest.raises(MemrepoError) as err:
        repoinit.init(path)
    hook = os.path.join(path, ".git", "hooks", "pre-commit")
    assert str(err.value) == f"{hook} and {hook}.legacy both exist; memrepo will not overwrite either"


def test_this_repositorys_committed_shims_match_shim_text() -> None:
    for hook in hookwire.HOOKS:
        with open(os.path.join(ROOT, ".githooks", hook), encoding="utf-8") as fh:
            assert fh.read() == hookwire.shim_text(hook), f".githooks/{hook} drifted: run `memrepo init .`"
        assert os.access(os.path.join(ROOT, ".githooks", hook), os.X_OK)


@pytest.mark.parametrize("hook", hookwire.HOOKS)
def test_shims_hold_no_absolute_paths(hook: str) -> None:
    text = hookwire.shim_text(hook)
    assert text.startswith("#!/bin/sh\n" + hookwire.MARKER + "\n")
    assert ROOT not in text and "/home/" not in text and "/usr/" not in text
