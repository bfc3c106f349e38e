"""The pre-commit hook, through real `git commit`s in a repository made by `memrepo init`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import Iterator

import pytest

from helpers import IDENTITY, commit_all, git, head, memory_text, write_file, write_memory
from memrepo.vcs import hookwire
from memrepo.store import repoinit
from test_validate import CASES

SKIPPED = "memrepo: skipped {rel}: {problem} — run `memrepo doctor` for every problem\n"
NO_VERIFY_HINT = "(bypass once with `git commit --no-verify`)"


def rejected(*lines: str) -> str:
    n = len(lines)
    return "".join(line + "\n" for line in lines) + (
        f"memrepo: commit rejected: {n} problem{'s' * (n != 1)} in memory files {NO_VERIFY_HINT}\n")


@pytest.fixture(scope="module")
def shared_repo(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One repository for the many single-file rejections (each leaves HEAD where it was)."""
    with pytest.MonkeyPatch.context() as mp:
        for key in list(os.environ):
            if key.startswith(("GIT_", "CLAUDE_")) or key.startswith("MEMREPO_"):
                mp.delenv(key)
        mp.setenv("HOME", str(tmp_path_factory.mktemp("shared-home")))
        mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
        for key, value in IDENTITY.items():
            mp.setenv(key, value)
        path = str(tmp_path_factory.mktemp("shared") / "mem")
        repoinit.init(path)
    return path


@pytest.fixture
def repo(shared_repo: str) -> str:
    """The shared repository back at its `memrepo init` commit, with nothing staged or untracked.

    Overrides conftest's `repo` here: one `init` for the module keeps these many real commits fast.
    """
    first = git(shared_repo, "rev-list", "--max-parents=0", "HEAD").stdout.split()[0]
    git(shared_repo, "reset", "-q", "--hard", first)
    git(shared_repo, "clean", "-fdq")
    return shared_repo


DANGLING_B = "memory/a.md:2: superseded_by names `b`, which is no memory — name an existing memory id"
# In a repository the graph is checked too: `b` names no memory there.
GIT_CASES = {k: (text, expected + [DANGLING_B] if k.startswith("superseded-by-") and k != "superseded-by-list" else expected)
             for k, (text, expected) in CASES.items() if k != "crlf"}


@pytest.mark.parametrize(("text", "expected"), GIT_CASES.values(), ids=GIT_CASES.keys())
def test_each_rejection_blocks_a_real_commit(repo: str, text: str, expected: list[str]) -> None:
    before = head(repo)
    write_file(repo, "memory/a.md", text)
    result = commit_all(repo, "bad memory")
    assert (result.returncode, result.stderr) == (1, rejected(*expected))
    assert head(repo) == before


def test_crlf_is_normalized_by_gitattributes_and_accepted(repo: str) -> None:
    write_file(repo, "memory/a.md", memory_text("a").replace("\n", "\r\n"))
    result = commit_all(repo, "crlf")
    assert (result.returncode, result.stderr) == (0, "")
    assert git(repo, "show", "HEAD:memory/a.md").stdout == memory_text("a")


def test_not_utf8_is_rejected(repo: str) -> None:
    before = head(repo)
    write_file(repo, "memory/a.md", memory_text("a").encode("utf-8").replace(b"Title", b"Titl\xe9"))
    result = commit_all(repo, "latin-1")
    assert (result.returncode, result.stderr) == (1, rejected("memory/a.md:1: file is not UTF-8 — save it as UTF-8"))
    assert head(repo) == before


def test_valid_memory_commits(repo: str) -> None:
    before = head(repo)
    write_memory(repo, "deploys-go-through-ci", class_="rule", topics=["deploys", "ci"],
                 body="Never from a laptop.\n")
    result = commit_all(repo, "add a memory")
    assert (result.returncode, result.stderr) == (0, "")
    assert git(repo, "rev-parse", "HEAD~1").stdout.strip() == before
    assert git(repo, "show", "HEAD:memory/deploys-go-through-ci.md").stdout == memory_text(
        "deploys-go-through-ci", class_="rule", topics=["deploys", "ci"], body="Never from a laptop.\n")


def test_files_outside_memory_are_not_validated(repo: str) -> None:
    write_file(repo, "notes/x.md", "not a memory\n")
    write_file(repo, "memory/sub/x.md", "nested, not a memory\n")
    write_file(repo, "memory/README.txt", "not markdown\n")
    result = commit_all(repo, "other files")
    assert (result.returncode, result.stderr) == (0, "")


def test_several_files_and_problems_are_all_listed(repo: str) -> None:
    before = head(repo)
    write_file(repo, "memory/a.md", memory_text("a").replace("class: fact", "class: wish").replace("source: user", "source: bot"))
    write_file(repo, "memory/b.md", "no front matter\n")
    write_memory(repo, "c")
    result = commit_all(repo, "three files")
    assert (result.returncode, result.stderr) == (1, rejected(
        "memory/a.md:5: unknown class 'wish' — use one of: rule, preference, fact, project, event, reference",
        "memory/a.md:6: unknown source 'bot' — use one of: user, agent, capture, import",
        "memory/b.md:1: no front matter — start the file with a `---` line, the YAML keys, then `---`",
    ))
    assert head(repo) == before


def test_duplicate_id_in_one_commit(repo: str) -> None:
    write_memory(repo, "a")
    write_file(repo, "memory/b.md", memory_text("a"))
    result = commit_all(repo, "duplicate")
    assert (result.returncode, result.stderr) == (1, rejected(
        "memory/b.md:2: id `a` is not the file name `b.md` — rename the file to `a.md` or set `id: b`",
        "memory/b.md:2: duplicate id `a` (also in memory/a.md) — give one of them another id",
    ))


def test_superseded_by_naming_no_memory(repo: str) -> None:
    write_memory(repo, "a", status="superseded", superseded_by="gone")
    result = commit_all(repo, "dangling")
    assert (result.returncode, result.stderr) == (1, rejected(
        "memory/a.md:2: superseded_by names `gone`, which is no memory — name an existing memory id"))


def test_superseded_by_an_existing_memory_commits(repo: str) -> None:
    write_memory(repo, "new")
    assert commit_all(repo, "new").returncode == 0
    write_memory(repo, "old", status="superseded", superseded_by="new")
    result = commit_all(repo, "old")
    assert (result.returncode, result.stderr) == (0, "")


def test_supersession_cycle_across_two_files_in_one_commit(repo: str) -> None:
    before = head(repo)
    write_memory(repo, "a", status="superseded", superseded_by="b")
    write_memory(repo, "b", status="superseded", superseded_by="a")
    result = commit_all(repo, "cycle")
    assert (result.returncode, result.stderr) == (1, rejected(
        "memory/a.md:2: supersession cycle: a → b → a — one memory in the cycle must stay active",
        "memory/b.md:2: supersession cycle: b → a → b — one memory in the cycle must stay active",
    ))
    assert head(repo) == before


def test_cycle_closed_by_editing_one_committed_file(repo: str) -> None:
    write_memory(repo, "a")
    write_memory(repo, "b", status="superseded", superseded_by="a")
    assert commit_all(repo, "a and b").returncode == 0
    before = head(repo)
    write_memory(repo, "a", status="superseded", superseded_by="b")
    result = commit_all(repo, "close the cycle")
    assert (result.returncode, result.stderr) == (1, rejected(
        "memory/a.md:2: supersession cycle: a → b → a — one memory in the cycle must stay active"))
    assert head(repo) == before


def test_three_cycle_across_files(repo: str) -> None:
    write_memory(repo, "a", status="superseded", superseded_by="b")
    write_memory(repo, "b", status="superseded", superseded_by="c")
    write_memory(repo, "c", status="superseded", superseded_by="a")
    result = commit_all(repo, "cycle of three")
    assert (result.returncode, result.stderr) == (1, rejected(
        "memory/a.md:2: supersession cycle: a → b → c → a — one memory in the cycle must stay active",
        "memory/b.md:2: supersession cycle: b → c → a → b — one memory in the cycle must stay active",
        "memory/c.md:2: supersession cycle: c → a → b → c — one memory in the cycle must stay active",
    ))


def test_deleting_a_memory_that_another_supersedes_to_is_rejected(repo: str) -> None:
    write_memory(repo, "new")
    write_memory(repo, "old", status="superseded", superseded_by="new")
    write_memory(repo, "other")
    assert commit_all(repo, "three").returncode == 0
    before = head(repo)
    git(repo, "rm", "-q", "memory/new.md")
    result = git(repo, "commit", "-q", "-m", "delete new", check=False)
    assert (result.returncode, result.stderr) == (1, rejected(
        "memory/old.md:2: superseded_by names `new`, which is no memory — name an existing memory id"))
    assert head(repo) == before
    git(repo, "reset", "-q", "--hard")
    git(repo, "rm", "-q", "memory/other.md")
    result = git(repo, "commit", "-q", "-m", "delete other", check=False)
    assert (result.returncode, result.stderr) == (0, "")


def test_deleting_both_ends_of_a_supersession_commits(repo: str) -> None:
    write_memory(repo, "new")
    write_memory(repo, "old", status="superseded", superseded_by="new")
    assert commit_all(repo, "two").returncode == 0
    git(repo, "rm", "-q", "memory/new.md", "memory/old.md")
    result = git(repo, "commit", "-q", "-m", "delete both", check=False)
    assert (result.returncode, result.stderr) == (0, "")


def test_a_file_committed_with_no_verify_does_not_block_other_commits(repo: str) -> None:
    write_file(repo, "memory/bad.md", "no front matter\n")
    result = commit_all(repo, "bad", "--no-verify")
    assert (result.returncode, result.stderr) == (0, SKIPPED.format(rel="memory/bad.md", problem="no front matter"))
    write_memory(repo, "good")
    result = commit_all(repo, "good")
    assert (result.returncode, result.stderr) == (0, "")  # post-commit reads what this commit changed, nothing else


BAD_CLASS = "memory/a.md:5: unknown class 'wish' — use one of: rule, preference, fact, project, event, reference"


def test_validates_staged_content_not_the_working_tree(repo: str) -> None:
    before = head(repo)
    write_file(repo, "memory/a.md", memory_text("a", class_="wish"))
    git(repo, "add", "memory/a.md")
    write_memory(repo, "a")  # fixed in the working tree only
    result = git(repo, "commit", "-q", "-m", "staged bad", check=False)
    assert (result.returncode, result.stderr) == (1, rejected(BAD_CLASS))
    assert head(repo) == before
    git(repo, "add", "memory/a.md")
    write_file(repo, "memory/a.md", "broken in the working tree only\n")
    result = git(repo, "commit", "-q", "-m", "staged good", check=False)
    # The post-commit hook indexes the working tree, and says it skipped the broken copy.
    assert (result.returncode, result.stderr) == (0, SKIPPED.format(rel="memory/a.md", problem="no front matter"))
    assert git(repo, "show", "HEAD:memory/a.md").stdout == memory_text("a")


def test_partial_commit_validates_what_it_commits(repo: str) -> None:
    """`git commit memory/a.md` commits a.md's working copy and leaves other staged files out."""
    before = head(repo)
    write_memory(repo, "a")
    write_file(repo, "memory/b.md", memory_text("b", class_="wish"))
    git(repo, "add", "memory/a.md", "memory/b.md")
    result = git(repo, "commit", "-q", "-m", "only a", "memory/a.md", check=False)
    assert (result.returncode, result.stderr) == (0, SKIPPED.format(rel="memory/b.md", problem="unknown class 'wish'"))
    assert git(repo, "diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD").stdout == "memory/a.md\n"
    assert git(repo, "diff", "--cached", "--name-only").stdout == "memory/b.md\n"
    after_a = head(repo)
    assert after_a != before
    # The other way round: a bad working copy of the named file is what would be committed.
    write_file(repo, "memory/a.md", memory_text("a", class_="wish"))
    result = git(repo, "commit", "-q", "-m", "only a again", "memory/a.md", check=False)
    assert (result.returncode, result.stderr) == (1, rejected(BAD_CLASS))
    assert head(repo) == after_a


def test_commit_all_flag_validates_tracked_changes(repo: str) -> None:
    write_memory(repo, "a")
    assert commit_all(repo, "a").returncode == 0
    before = head(repo)
    write_file(repo, "memory/a.md", memory_text("a", class_="wish"))
    result = git(repo, "commit", "-q", "-a", "-m", "commit -a", check=False)
    assert (result.returncode, result.stderr) == (1, rejected(BAD_CLASS))
    assert head(repo) == before


def test_rename_is_validated_under_its_new_name(repo: str) -> None:
    write_memory(repo, "a")
    assert commit_all(repo, "a").returncode == 0
    git(repo, "mv", "memory/a.md", "memory/b.md")
    result = git(repo, "commit", "-q", "-m", "rename", check=False)
    assert (result.returncode, result.stderr) == (1, rejected(
        "memory/b.md:2: id `a` is not the file name `b.md` — rename the file to `a.md` or set `id: b`"))


def test_no_verify_bypasses(repo: str) -> None:
    before = head(repo)
    write_file(repo, "memory/a.md", "no front matter\n")
    result = commit_all(repo, "bypass", "--no-verify")
    assert (result.returncode, result.stderr) == (0, SKIPPED.format(rel="memory/a.md", problem="no front matter"))
    assert git(repo, "rev-parse", "HEAD~1").stdout.strip() == before


# -- the shim when no interpreter has memrepo ------------------------------------

def _python_without_memrepo() -> str:
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3", shutil.which("python3") or ""):
        if candidate and os.path.exists(candidate) and subprocess.run(
                [candidate, "-c", "import memrepo"], capture_output=True).returncode != 0:
            return candidate
    pytest.skip("no Python without memrepo on this machine")


@pytest.fixture
def bare_env(repo: str, tmp_path) -> Iterator[dict[str, str]]:
    """PATH with git only, MEMREPO_PYTHON without memrepo, and no recorded interpreter."""
    record = os.path.join(repo, ".git", hookwire.PYTHON_RECORD)
    with open(record, encoding="utf-8") as fh:
        recorded = fh.read()
    os.remove(record)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    os.symlink(shutil.which("git"), bindir / "git")
    yield dict(os.environ, PATH=str(bindir), MEMREPO_PYTHON=_python_without_memrepo())
    with open(record, "w", encoding="utf-8") as fh:
        fh.write(recorded)


NOT_FOUND = "memrepo {hook}: no Python with memrepo installed was found; pip install memrepo, or set MEMREPO_PYTHON\n"


@pytest.mark.parametrize(("hook", "code"), [(h, 1 if h in hookwire.BLOCKING else 0) for h in hookwire.HOOKS])
def test_shim_without_memrepo_says_so(repo: str, bare_env: dict[str, str], hook: str, code: int) -> None:
    result = subprocess.run(["/bin/sh", os.path.join(repo, ".githooks", hook)], cwd=repo, env=bare_env,
                            input="", capture_output=True, text=True)
    assert (result.returncode, result.stdout, result.stderr) == (code, "", NOT_FOUND.format(hook=hook))


def test_commit_without_memrepo_is_refused_by_the_shim(repo: str, bare_env: dict[str, str]) -> None:
    before = head(repo)
    write_memory(repo, "a")
    git(repo, "add", "-A")
    result = subprocess.run([shutil.which("git") or "git", "commit", "-q", "-m", "no python"], cwd=repo,
                            env=bare_env, capture_output=True, text=True)
    assert (result.returncode, result.stderr) == (1, NOT_FOUND.format(hook="pre-commit"))
    assert head(repo) == before


def test_shim_tries_the_next_interpreter_when_one_lacks_memrepo(repo: str, bare_env: dict[str, str]) -> None:
    with open(os.path.join(repo, ".git", hookwire.PYTHON_RECORD), "w", encoding="utf-8") as fh:
        fh.write(sys.executable + "\n")  # MEMREPO_PYTHON (first) has no memrepo; the recorded one has
    write_file(repo, "memory/a.md", "no front matter\n")
    git(repo, "add", "-A")
    result = subprocess.run(["/bin/sh", os.path.join(repo, ".githooks", "pre-commit")], cwd=repo, env=bare_env,
                            capture_output=True, text=True)
    assert (result.returncode, result.stderr) == (1, rejected(
        "memory/a.md:1: no front matter — start the file with a `---` line, the YAML keys, then `---`"))


def test_shim_uses_memrepo_python_when_set(repo: str, bare_env: dict[str, str]) -> None:
    env = dict(bare_env, MEMREPO_PYTHON=sys.executable)
    write_file(repo, "memory/a.md", "no front matter\n")
    git(repo, "add", "-A")
    result = subprocess.run(["/bin/sh", os.path.join(repo, ".githooks", "pre-commit")], cwd=repo, env=env,
                            capture_output=True, text=True)
    assert (result.returncode, result.stderr) == (1, rejected(
        "memory/a.md:1: no front matter — start the file with a `---` line, the YAML keys, then `---`"))


# -- secrets in prose and in the providers' formats ---------------------------------

SECRET_HINT = "remove it and keep secrets in a secrets manager, or add `memrepo: allow-secret` to the line if it is not one"
SECRET_LINES = (
    "Created the staging user with password " + "S3cr3tPa55w0rd" + "X9q.\n",
    "The payment tests use " + "sk" + "_test_" + "4eC39Hq" * 4 + " in CI.\n",
    "The password reset flow keeps a token budget of 4000.\n",
)


def test_a_password_in_prose_and_a_stripe_test_key_block_a_real_commit(repo: str) -> None:
    before = head(repo)
    write_memory(repo, "a", body="".join(SECRET_LINES))
    result = commit_all(repo, "secrets in prose")
    assert (result.returncode, result.stderr) == (1, rejected(
        "memory/a.md:9: looks like a secret (secret-in-prose: …dX9q) — " + SECRET_HINT,
        "memory/a.md:10: looks like a secret (stripe-key: sk_test_…39Hq) — " + SECRET_HINT,
    ))
    assert head(repo) == before


def test_secret_lines_marked_allowed_commit(repo: str) -> None:
    marked = [line.replace(".\n", ". <!-- memrepo: allow-secret -->\n") for line in SECRET_LINES[:2]]
    write_memory(repo, "a", body="".join(marked) + SECRET_LINES[2])
    result = commit_all(repo, "allowed fixtures")
    assert (result.returncode, result.stderr) == (0, "")
