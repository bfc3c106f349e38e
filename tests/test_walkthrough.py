"""What a demanding new user met on a walk through README.md and docs/cli.md (h28): each a
traceback, a wrong hint or an output that lied, now an error that names its fix."""

from __future__ import annotations

import json
import os
import socket
import stat

import pytest
from click.testing import CliRunner, Result

from helpers import commit_all, git, head, write_file, write_memory
from memrepo.base import paths
from memrepo.cli.main import cli
from test_in_progress import _conflict

IDENTITY_VARS = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")
BROKEN_TITLE = 'title: "Deploy with: [kamal\n'


def invoke(repo: str, *args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["--repo", repo, *args], input=input, catch_exceptions=False)


def read(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def no_identity(monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    """git cannot name a committer in `path`, whatever the machine's host name is."""
    git(path, "config", "user.useConfigOnly", "true")
    for key in IDENTITY_VARS:
        monkeypatch.delenv(key, raising=False)


@pytest.fixture
def store(repo: str) -> str:
    write_memory(repo, "deploy-kamal", title="Deploy with kamal", description="Deploys go through kamal.")
    write_memory(repo, "deploy-staging-first", title="Deploy staging first", description="Staging before production.")
    assert commit_all(repo, "memories").returncode == 0
    return repo


def break_by_hand(repo: str, note_id: str) -> str:
    """The memory's title edited by hand into YAML that does not parse (not committed)."""
    path = paths.note_path(repo, note_id)
    text = "".join(BROKEN_TITLE if line.startswith("title:") else line for line in read(path).splitlines(keepends=True))
    write_file(repo, f"memory/{note_id}.md", text)
    return text


def test_recall_without_a_cache_names_the_command_that_builds_it(store: str) -> None:
    for name in os.listdir(paths.index_dir(store)):
        if name.startswith(os.path.basename(paths.index_db(store))):
            os.remove(os.path.join(paths.index_dir(store), name))
    result = invoke(store, "recall", "how do we deploy with kamal?")
    assert result.exit_code == 1
    assert "no cache at" in result.stderr and f"memrepo --repo {store} index" in result.stderr
    assert "Traceback" not in result.output
    assert invoke(store, "index").exit_code == 0
    assert invoke(store, "recall", "how do we deploy with kamal?").exit_code == 0


def test_a_writer_without_a_git_identity_says_how_to_set_one(store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    no_identity(monkeypatch, store)
    before = head(store)
    result = invoke(store, "add", "--class", "fact", "--title", "The VPN drops at noon", "-d", "Reconnect after 12:00")
    assert result.exit_code == 1
    assert "git has no user name/email here, so memrepo cannot commit" in result.stderr
    assert "git config --global user.email" in result.stderr and "git status" not in result.stderr
    assert head(store) == before and git(store, "status", "--porcelain").stdout == ""
    result = invoke(store, "retire", "deploy-kamal", "-r", "moved to a PaaS")
    assert result.exit_code == 1 and "git has no user name/email here" in result.stderr


def test_init_again_after_a_run_without_identity_lists_what_it_committed(tmp_path: os.PathLike[str],
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(tmp_path / "mem")
    os.makedirs(path)
    git(path, "init", "-q")
    no_identity(monkeypatch, path)
    first = invoke(path, "init", path)
    assert first.exit_code == 1 and "git has no user name/email here" in first.stderr
    git(path, "config", "user.name", "Late Identity")
    git(path, "config", "user.email", "late@example.com")
    again = invoke(path, "init", path)
    assert again.exit_code == 0, again.output
    committed = [line for line in again.stdout.splitlines() if line.startswith("  committed:")]
    assert committed and "memory/.gitkeep" in committed[0] and ".githooks/pre-commit" in committed[0], again.stdout
    report = json.loads(invoke(path, "init", path, "--json").stdout)
    assert (report["commit"], report["committed"]) == (None, [])


def test_forget_of_the_start_of_several_ids_names_them(store: str) -> None:
    result = invoke(store, "forget", "deploy")
    assert result.exit_code == 1
    assert "'deploy' is the start of 2 memory ids: deploy-kamal, deploy-staging-first" in result.stderr
    assert "in any source" not in result.stderr


def test_retire_of_a_memory_broken_by_hand_names_the_problem_and_touches_nothing(store: str) -> None:
    text = break_by_hand(store, "deploy-kamal")
    before = head(store)
    result = invoke(store, "retire", "deploy-kamal", "-r", "moved to a PaaS")
    assert result.exit_code == 1
    assert "memory/deploy-kamal.md cannot be read, so it was not retired" in result.stderr
    assert "memory/deploy-kamal.md:3: front matter is not valid YAML" in result.stderr
    assert "memrepo edit deploy-kamal" in result.stderr and "Traceback" not in result.output
    assert head(store) == before and read(paths.note_path(store, "deploy-kamal")) == text


def test_an_edit_that_repairs_a_memory_broken_by_hand_is_committed(store: str, tmp_path: os.PathLike[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    break_by_hand(store, "deploy-kamal")
    script = write_file(str(tmp_path), "editor.sh", "#!/bin/sh\nsed -i 's/^title: .*/title: Deploy with kamal 2/' \"$1\"\n")
    os.chmod(script, os.stat(script).st_mode | stat.S_IXUSR)
    monkeypatch.setenv("EDITOR", script)
    monkeypatch.delenv("VISUAL", raising=False)
    result = invoke(store, "edit", "deploy-kamal")
    assert result.exit_code == 0, result.output
    assert "title: Deploy with kamal 2\n" in git(store, "show", "HEAD:memory/deploy-kamal.md").stdout
    assert git(store, "status", "--porcelain").stdout == ""


def test_an_edit_that_changes_nothing_says_the_memory_is_still_broken(store: str, tmp_path: os.PathLike[str],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    text = break_by_hand(store, "deploy-kamal")
    script = write_file(str(tmp_path), "editor.sh", "#!/bin/sh\nexit 0\n")  # closes without saving
    os.chmod(script, os.stat(script).st_mode | stat.S_IXUSR)
    monkeypatch.setenv("EDITOR", script)
    monkeypatch.delenv("VISUAL", raising=False)
    for args in (("edit", "deploy-kamal"), ("edit", "deploy-kamal", "--from", write_file(str(tmp_path), "same.md", text))):
        result = invoke(store, *args)
        assert result.exit_code == 0 and result.stdout.startswith("No change to deploy-kamal")
        assert "memory/deploy-kamal.md:3: front matter is not valid YAML" in result.stderr
        assert "is still not a valid memory" in result.stderr and "git checkout -- memory/deploy-kamal.md" in result.stderr
    assert read(paths.note_path(store, "deploy-kamal")) == text


def test_enrich_of_a_memory_broken_by_hand_names_the_problem(store: str) -> None:
    text = break_by_hand(store, "deploy-kamal")
    result = invoke(store, "enrich", "deploy-kamal")
    assert result.exit_code == 1
    assert "memory/deploy-kamal.md cannot be read, so it was not enriched" in result.stderr
    assert "Traceback" not in result.output and read(paths.note_path(store, "deploy-kamal")) == text


def test_undo_during_a_merge_says_a_merge_is_in_progress(store: str) -> None:
    result = invoke(store, "add", "--class", "fact", "--title", "The VPN drops at noon", "-d", "Reconnect after 12:00")
    run = result.stdout.split("`memrepo undo ")[1].split("`")[0]
    _conflict(store, "merge")  # the merge waits for the person
    result = invoke(store, "undo", run)
    assert result.exit_code == 1
    assert "a merge is in progress" in result.stderr and "git restore --staged" not in result.stderr


@pytest.mark.parametrize("args", [("search", "kamal", "-n", "0"), ("log", "-n", "-5"), ("log", "--runs", "-n", "0"),
                                  ("recall-log", "-n", "0"), ("transcripts", "search", "kamal", "-n", "-1")])
def test_a_limit_below_one_is_refused(store: str, args: tuple[str, ...]) -> None:
    result = invoke(store, *args)
    assert result.exit_code == 2 and "x>=1" in result.stderr, result.output


def test_search_with_a_limit_finds_what_it_says(store: str) -> None:
    assert "deploy-kamal" in invoke(store, "search", "kamal", "-n", "1").stdout


@pytest.mark.parametrize(("agent", "rel", "event"), [("claude", ".claude/settings.json", "UserPromptSubmit"),
                                                     ("gemini", ".gemini/settings.json", "BeforeAgent"),
                                                     ("codex", ".codex/hooks.json", "Stop")])
def test_install_refuses_a_hooks_event_that_is_not_a_list(isolated_env: str, agent: str, rel: str, event: str) -> None:
    text = json.dumps({"hooks": {event: "echo mine"}}) + "\n"
    path = write_file(isolated_env, rel, text)
    result = CliRunner().invoke(cli, ["install", agent], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    assert f"`hooks.{event}` in {path} is not a list" in result.stderr and "fix the file by hand" in result.stderr
    assert read(path) == text


def test_serve_on_a_port_another_program_holds_says_so(store: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = invoke(store, "serve", "--port", str(port))
    assert result.exit_code == 1
    assert f"port {port} on 127.0.0.1 is taken by another program" in result.stderr and "--port" in result.stderr
    assert "Traceback" not in result.output
