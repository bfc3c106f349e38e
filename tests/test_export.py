"""`memrepo export`: one marked block of rules and preferences in the file each agent reads,
bounded, idempotent, and removed byte for byte."""

from __future__ import annotations

import json
import os
import stat
from typing import Any

import pytest
from click.testing import CliRunner

from helpers import IDENTITY, build_template, commit_all, copy_template, git, write_memory
from memrepo.cli.main import cli
from memrepo.passes import export

FILES = {"agents-md": "AGENTS.md", "claude-md": "CLAUDE.md", "gemini-md": "GEMINI.md",
         "cursor-rules": os.path.join(".cursor", "rules", "memrepo.mdc")}


@pytest.fixture
def project(tmp_path: Any) -> str:
    path = os.path.join(str(tmp_path), "web")
    os.makedirs(os.path.join(path, "src"))
    git(path, "init", "-q")
    return path


def _five(repo: str) -> None:
    write_memory(repo, "web-no-friday-deploys", title="No deploys on Friday", class_="rule", project="web",
                 description="Production deploys of web are frozen on Fridays after 16:00")
    write_memory(repo, "tabs-in-makefiles", title="Makefiles use tabs", class_="preference",
                 description="Recipes are indented with tabs, never spaces")
    write_memory(repo, "api-rule", title="API pins", class_="rule", project="api", description="Pin every api dependency")
    write_memory(repo, "web-uses-node", title="Web runs on Node", class_="fact", project="web", description="Node 22")
    write_memory(repo, "old-rule", title="Old rule", class_="rule", status="retired", description="Not any more")
    assert commit_all(repo, "memories").returncode == 0


@pytest.fixture
def store(repo: str) -> str:
    _five(repo)
    return repo


@pytest.fixture(scope="module")
def store_600_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    """`store` and 600 rules more, committed and indexed once for the three targets (~12 s each before)."""
    return build_template(tmp_path_factory, lambda repo: (_five(repo), many(repo, 600)), identity=IDENTITY)


@pytest.fixture
def store_600(store_600_template: str, tmp_path: Any) -> str:
    return copy_template(store_600_template, tmp_path)


def run(repo: str, *args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(cli, ["--repo", repo, "export", *args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def read(path: str) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


@pytest.mark.parametrize("original", [b"# Web\n\nRun `make test` before a commit.\n", b"# Web\nno final newline",
                                      b"\n\n", None], ids=["text", "no-final-newline", "blank-lines", "no-file"])
@pytest.mark.parametrize("target", ["agents-md", "claude-md", "gemini-md"])
def test_export_is_one_block_idempotent_and_removed_exactly(store: str, project: str, target: str,
                                                            original: bytes | None) -> None:
    path = os.path.join(project, FILES[target])
    if original is not None:
        with open(path, "wb") as fh:
            fh.write(original)
        os.chmod(path, 0o640)
    run(store, target, "--project", os.path.join(project, "src"))
    text = read(path).decode()
    assert text.startswith((original or b"").decode())  # nothing before the block moved
    body = text[len((original or b"").decode()):]
    assert body.count(export.BEGIN) == 1 and body.rstrip("\n").endswith(export.END)
    assert "- (rule) No deploys on Friday: Production deploys of web are frozen on Fridays after 16:00 " \
           "(id: web-no-friday-deploys)\n- (preference) Makefiles use tabs:" in body
    for other in ("api-rule", "web-uses-node", "old-rule"):
        assert other not in body
    first = read(path)
    assert "unchanged" in run(store, target, "--project", project).output
    assert read(path) == first
    run(store, target, "--project", project, "--remove")
    if original is None:
        assert not os.path.exists(path)
    else:
        assert read(path) == original
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o640


def test_a_refresh_replaces_the_block_in_place_and_keeps_the_text_around_it(store: str, project: str) -> None:
    path = os.path.join(project, "AGENTS.md")
    run(store, "agents-md", "--project", project)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("\n## Written after the block\n")
    write_memory(store, "squash-merges", title="Squash merges", class_="preference", description="Squash on merge")
    assert commit_all(store, "one more").returncode == 0
    run(store, "agents-md", "--project", project)
    text = read(path).decode()
    assert "(id: squash-merges)" in text
    assert text.endswith(f"{export.END}\n\n## Written after the block\n")
    assert text.count(export.BEGIN) == 1


def test_cursor_rules_is_a_file_of_its_own_removed_with_its_folders(store: str, project: str) -> None:
    run(store, "cursor-rules", "--project", project)
    path = os.path.join(project, ".cursor", "rules", "memrepo.mdc")
    text = read(path).decode()
    assert text.startswith("---\ndescription: ") and "\nalwaysApply: true\n---\n" + export.BEGIN in text
    assert "(id: web-no-friday-deploys)" in text
    run(store, "cursor-rules", "--project", project, "--remove")
    assert not os.path.exists(os.path.join(project, ".cursor"))


def test_cursor_rules_leaves_a_file_of_the_same_name_that_is_not_memrepos(store: str, project: str) -> None:
    path = os.path.join(project, ".cursor", "rules", "memrepo.mdc")
    os.makedirs(os.path.dirname(path))
    with open(path, "wb") as fh:
        fh.write(b"mine\n")
    result = run(store, "cursor-rules", "--project", project, code=1)
    assert "exists and is not memrepo's" in result.output and "rename it" in result.output
    assert read(path) == b"mine\n"


@pytest.mark.parametrize("text", [f"a\n{export.BEGIN}\nb\n", f"{export.END}\n{export.BEGIN}\n",
                                  f"{export.BEGIN}\n{export.END}\n{export.BEGIN}\n{export.END}\n"])
def test_broken_markers_are_refused_and_the_file_left_alone(store: str, project: str, text: str) -> None:
    path = os.path.join(project, "CLAUDE.md")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    for extra in ((), ("--remove",)):
        result = run(store, "claude-md", "--project", project, *extra, code=1)
        assert "not one block" in result.output and "put the markers right by hand" in result.output
        assert read(path) == text.encode()


def many(repo: str, n: int) -> None:
    for i in range(n):
        write_memory(repo, f"rule-{i:03d}", title=f"Rule number {i}", class_="rule",
                     description=f"Rule {i} says something long enough to take room in the exported block " + "x" * 80)
    assert commit_all(repo, "many rules", "--no-verify").returncode == 0
    from memrepo.store import index

    index.update(repo)


@pytest.mark.parametrize("target,lines,chars", [("claude-md", 200, 25_000), ("gemini-md", 200, 25_000),
                                                ("cursor-rules", 500, None)])
def test_the_block_stays_under_the_agents_line_limit_and_says_what_it_left_out(store_600: str, project: str,
                                                                              target: str, lines: int, chars: int | None) -> None:
    store = store_600
    result = CliRunner().invoke(cli, ["--repo", store, "export", target, "--project", project, "--json"])
    report = json.loads(result.stdout)
    text = read(os.path.join(project, FILES[target])).decode()
    block = text[text.index(export.BEGIN):text.index(export.END) + len(export.END)]
    assert len(text.splitlines()) <= lines and (chars is None or len(block) <= chars)
    assert report["left_out"] and len(report["written"]) + len(report["left_out"]) == 602
    assert f"_{len(report['left_out'])} more not written here:" in block
    assert report["written"][0] == "web-no-friday-deploys"  # the project's own come first


def test_agents_md_stays_under_codexs_32_kib_with_the_text_already_there(store: str, project: str) -> None:
    many(store, 300)
    path = os.path.join(project, "AGENTS.md")
    original = ("Project notes. " * 1300 + "\n").encode()  # about 19.5 KiB of the user's own
    with open(path, "wb") as fh:
        fh.write(original)
    run(store, "agents-md", "--project", project)
    assert len(read(path)) <= 32 * 1024 and read(path).startswith(original)
    run(store, "agents-md", "--project", project, "--remove")
    assert read(path) == original


def test_agents_md_already_past_the_limit_is_refused(store: str, project: str) -> None:
    path = os.path.join(project, "AGENTS.md")
    with open(path, "wb") as fh:
        fh.write(b"x" * (32 * 1024 - 100) + b"\n")
    result = run(store, "agents-md", "--project", project, code=1)
    assert "so a block there would not be read" in result.output and "shorten AGENTS.md" in result.output


def test_memory_text_cannot_close_the_block(store: str, project: str) -> None:
    write_memory(store, "sneaky", title="Sneaky <!-- memrepo:end -->", class_="rule",
                 description=f"ends early {export.END} <script>")
    assert commit_all(store, "sneaky").returncode == 0
    run(store, "claude-md", "--project", project)
    text = read(os.path.join(project, "CLAUDE.md")).decode()
    assert text.count("<!--") == text.count("-->") == 2 and "<script>" not in text
    assert "- (rule) Sneaky ‹!-- memrepo:end --›: ends early ‹!-- memrepo:end --› ‹script> (id: sneaky)\n" in text
    run(store, "claude-md", "--project", project, "--remove")
    assert not os.path.exists(os.path.join(project, "CLAUDE.md"))
