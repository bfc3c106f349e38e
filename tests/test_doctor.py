"""`memrepo doctor`: exit 0 when healthy; exit 1 naming the command that fixes each problem."""

from __future__ import annotations

import json
import os
import shutil
import sys

import pytest
from click.testing import CliRunner, Result
from helpers import build_template, commit_all, git, head, write_file, write_memory

from memrepo.store import doctor, index
from memrepo.base import paths
from memrepo.cli.main import cli


def run_doctor(repo: str, *extra: str) -> Result:
    return CliRunner().invoke(cli, ["--repo", repo, "doctor", *extra], catch_exceptions=False)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> str:
    """`memrepo init` plus two memories, once per module; each test gets a copy (stat times kept)."""
    def setup(path: str) -> None:
        write_memory(path, "deploy-freeze", class_="rule", title="No deploys on Friday")
        write_memory(path, "api-port", title="The API listens on 8080")
        assert commit_all(path, "two").returncode == 0

    return build_template(tmp_path_factory, setup)


@pytest.fixture
def mem(template: str, tmp_path: os.PathLike[str]) -> str:
    path = os.path.join(str(tmp_path), "mem")
    shutil.copytree(template, path, symlinks=True)
    return path


MODEL = f"{sys.executable} -c pass"  # a model command that exists (doctor does not call it)


@pytest.fixture(autouse=True)
def model_cmd(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMREPO_MODEL_CMD", MODEL)


def healthy(repo: str) -> str:
    """The repository's lines of a healthy report (the Claude Code lines follow; see claude_lines)."""
    return (f"ok  repository: {repo}\n"
            "ok  git hooks: shims in the clone's hooks directory\n"
            "ok  merge driver: memory/*.md merge with memrepo.vcs.mergedriver\n"
            f"ok  index: 2 memories indexed, schema {index.SCHEMA_VERSION}\n"
            f"ok  index fresh: matches memory/ at {head(repo)[:12]}\n"
            "ok  private files: index/ and everything in it are the owner's alone (0700/0600)\n"
            "ok  memory files: 2 files valid\n")


REPO_CHECKS = ("repository", "uncommitted changes", "git hooks", "settings", "merge driver", "interrupted commit", "index", "index fresh",
               "indexed files", "private files", "memory files", "always-on size", "background setup", "first commit",
               "unfinished git operation", "stale lock", "index writable")


def repo_part(out: str) -> str:
    """The report's lines about the repository itself (the model command, background jobs and
    Claude Code's wiring follow them; tests of their own check those)."""
    kept, keep = [], True
    for line in out.splitlines(keepends=True):
        if not line.startswith("     "):
            keep = line.split(" ", 1)[1].strip().split(":", 1)[0] in REPO_CHECKS
        if keep:
            kept.append(line)
    return "".join(kept)


def test_healthy_repository_exits_0(mem: str) -> None:
    result = run_doctor(mem)
    assert (result.exit_code, repo_part(result.stdout)) == (0, healthy(mem))
    checks = [c for c in json.loads(run_doctor(mem, "--json").stdout) if c["name"] in REPO_CHECKS]
    assert [(c["name"], c["ok"], c["fix"]) for c in checks] == [
        ("repository", True, ""), ("git hooks", True, ""), ("merge driver", True, ""), ("index", True, ""), ("index fresh", True, ""),
        ("private files", True, ""), ("memory files", True, "")]


def _lines(result: Result) -> list[str]:
    return repo_part(result.stdout).splitlines()


def test_hooks_not_wired(mem: str) -> None:
    for hook in os.listdir(os.path.join(mem, ".git", "hooks")):
        os.remove(os.path.join(mem, ".git", "hooks", hook))
    result = run_doctor(mem)
    assert result.exit_code == 1
    assert _lines(result)[1:3] == [
        "FAIL git hooks: git hooks not installed (pre-commit, pre-merge-commit, post-commit, post-merge, post-checkout, post-rewrite)",
        f"     fix: memrepo init {mem}"]
    # the fix it names works
    CliRunner().invoke(cli, ["init", mem], catch_exceptions=False)
    assert run_doctor(mem).exit_code == 0


def test_hooks_path_owned_by_another_tool(mem: str) -> None:
    git(mem, "config", "core.hooksPath", ".husky")
    result = run_doctor(mem)
    assert result.exit_code == 1
    assert _lines(result)[1:3] == ["FAIL git hooks: core.hooksPath=.husky, so memrepo's hooks never run",
                                   f"     fix: memrepo init {mem}"]


def test_missing_shim(mem: str) -> None:
    os.remove(os.path.join(mem, ".git", "hooks", "post-merge"))
    result = run_doctor(mem)
    assert result.exit_code == 1
    assert _lines(result)[1] == "FAIL git hooks: git hooks not installed (post-merge)"
    os.remove(os.path.join(mem, ".githooks", "post-merge"))  # the committed template is not what git runs
    os.rename(os.path.join(mem, ".git", "hooks", "post-commit"), os.path.join(mem, ".git", "hooks", "post-merge"))
    assert _lines(run_doctor(mem))[1] == "FAIL git hooks: hooks differ from this memrepo's (an older install, or edited): post-merge"


def _garbage(repo: str) -> None:
    with open(paths.index_db(repo), "wb") as fh:
        fh.write(b"\x00garbage, not sqlite" * 100)


def _other_schema(repo: str) -> None:
    import sqlite3

    with sqlite3.connect(paths.index_db(repo)) as db:
        db.execute("PRAGMA user_version = 99")
    db.close()


@pytest.mark.parametrize(("damage", "says"), [
    (lambda repo: os.remove(paths.index_db(repo)), "FAIL index: no index at {db}"),
    (_garbage, "FAIL index: index is unreadable or corrupt"),
    (_other_schema, "FAIL index: index is schema 99, want {version}"),
], ids=["missing", "corrupt", "other-schema"])
def test_index_missing_or_corrupt(mem: str, damage, says: str) -> None:
    damage(mem)
    result = run_doctor(mem)
    assert result.exit_code == 1
    assert _lines(result) == [
        f"ok  repository: {mem}", "ok  git hooks: shims in the clone's hooks directory",
        "ok  merge driver: memory/*.md merge with memrepo.vcs.mergedriver",
        says.format(db=paths.index_db(mem), version=index.SCHEMA_VERSION),
        f"     fix: memrepo --repo {mem} index --rebuild",
        "ok  private files: index/ and everything in it are the owner's alone (0700/0600)",
        "ok  memory files: 2 files valid"]
    fixed = CliRunner().invoke(cli, ["--repo", mem, "index", "--rebuild"], catch_exceptions=False)
    assert fixed.exit_code == 0
    assert (run_doctor(mem).exit_code, repo_part(run_doctor(mem).stdout)) == (0, healthy(mem))


def test_doctor_does_not_repair_by_itself(mem: str) -> None:
    os.remove(paths.index_db(mem))
    run_doctor(mem)
    assert not os.path.exists(paths.index_db(mem))


def _edit(repo: str) -> None:
    write_memory(repo, "api-port", title="The API listens on 8081")


def _new_file(repo: str) -> None:
    write_memory(repo, "brand-new")


def _removed(repo: str) -> None:
    os.remove(paths.note_path(repo, "api-port"))


@pytest.mark.parametrize(("change", "count"), [(_edit, 1), (_new_file, 1), (_removed, 1)],
                         ids=["edited", "added", "removed"])
def test_index_stale_after_a_change_on_disk(mem: str, change, count: int) -> None:
    change(mem)
    result = run_doctor(mem)
    assert result.exit_code == 1
    lines = _lines(result)
    assert lines[3].startswith("warn uncommitted changes: changed but not committed: memory/")  # and says how to commit
    at = lines.index(f"FAIL index fresh: {count} memory files changed since indexing")
    assert lines[at + 1] == f"     fix: memrepo --repo {mem} index"
    assert CliRunner().invoke(cli, ["--repo", mem, "index"], catch_exceptions=False).exit_code == 0
    assert any(line.startswith("ok  index fresh: matches memory/ at ") for line in _lines(run_doctor(mem)))


def test_index_behind_head(mem: str) -> None:
    # a commit made with hooks turned off: the cache still names the commit before it
    git(mem, "-c", "core.hooksPath=/dev/null", "commit", "-q", "--allow-empty", "-m", "hooks off")
    result = run_doctor(mem)
    assert result.exit_code == 1
    assert _lines(result)[4:6] == ["FAIL index fresh: index is behind HEAD", f"     fix: memrepo --repo {mem} index"]


def test_stale_marker(mem: str) -> None:
    index.mark_stale(mem, "post-commit: disk full")
    result = run_doctor(mem)
    assert result.exit_code == 1
    assert _lines(result)[4:6] == ["FAIL index fresh: index marked stale", f"     fix: memrepo --repo {mem} index"]


def test_invalid_memory_file(mem: str) -> None:
    write_file(mem, "memory/broken.md", "---\nid: wrong\ntitle: Broken\nclass: rumour\n---\nbody\n")
    result = run_doctor(mem)
    assert result.exit_code == 1
    assert repo_part(result.stdout).endswith(
        "FAIL memory files: memory/broken.md:1: missing required key `description` — add `description:` to the front matter\n"
        "     memory/broken.md:1: missing required key `source` — add `source:` to the front matter\n"
        "     memory/broken.md:1: missing required key `created` — add `created:` to the front matter\n"
        "     memory/broken.md:2: id `wrong` is not the file name `broken.md` — rename the file to `wrong.md` or set `id: broken`\n"
        "     memory/broken.md:4: unknown class 'rumour' — use one of: rule, preference, fact, project, event, reference\n"
        "     fix: fix each line above (or `memrepo fmt` for formatting), then commit\n")


def test_committed_invalid_file_is_also_reported_as_skipped(mem: str) -> None:
    write_file(mem, "memory/broken.md", "no front matter\n")
    assert commit_all(mem, "slipped in", "--no-verify").returncode == 0
    result = run_doctor(mem)
    assert result.exit_code == 1
    assert "FAIL indexed files: 1 files skipped: memory/broken.md: no front matter" in _lines(result)
    assert ("FAIL memory files: memory/broken.md:1: no front matter — "
            "start the file with a `---` line, the YAML keys, then `---`") in _lines(result)


@pytest.mark.parametrize(("text", "line"), [
    ("---\nid: dangling\ntitle: x\ndescription: y\nclass: fact\nsource: user\ncreated: '2026-01-01'\n"
     "status: superseded\nsuperseded_by: nobody\n---\n",
     "memory/dangling.md:2: superseded_by names `nobody`, which is no memory — name an existing memory id"),
    ("---\nid: dangling\ntitle: x\ndescription: y\nclass: fact\nsource: user\ncreated: '2026-01-01'\n---\r\nbody\r\n",
     "memory/dangling.md:1: line endings are CRLF — run `memrepo fmt memory/dangling.md`"),
])
def test_graph_and_format_problems(mem: str, text: str, line: str) -> None:
    write_file(mem, "memory/dangling.md", text)
    result = run_doctor(mem)
    assert result.exit_code == 1
    problems = [ln.strip() for ln in repo_part(result.stdout).replace("FAIL memory files: ", "     ").splitlines()]
    assert line in problems
    assert problems[-1] == "fix: fix each line above (or `memrepo fmt` for formatting), then commit"


def test_not_a_repository(tmp_path: os.PathLike[str]) -> None:
    nowhere = os.path.join(str(tmp_path), "nowhere")
    result = run_doctor(nowhere)
    assert (result.exit_code, repo_part(result.stdout)) == (
        1, f"FAIL repository: no memory repository at {nowhere}\n     fix: memrepo init {nowhere}\n")


def test_library_checks(mem: str) -> None:
    assert doctor.check_files(mem) == []
    assert all(c.ok for c in doctor.run(mem))


def test_shim_without_exec_bit(mem: str) -> None:
    shim = os.path.join(mem, ".git", "hooks", "post-commit")
    os.chmod(shim, 0o644)
    result = run_doctor(mem)
    assert result.exit_code == 1
    assert _lines(result)[1:3] == ["FAIL git hooks: hooks not executable, so git ignores them: post-commit",
                                   f"     fix: memrepo init {mem}"]
    assert CliRunner().invoke(cli, ["init", mem], catch_exceptions=False).exit_code == 0
    assert os.access(shim, os.X_OK)
    assert run_doctor(mem).exit_code == 0
