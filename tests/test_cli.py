"""The CLI through click's CliRunner: exact outputs and exit codes, real git underneath."""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import stat
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from helpers import build_template, commit_all, git, head, write_file, write_memory

from memrepo.store import memories as store
from memrepo.base import paths
from memrepo.cli.main import cli

TODAY = datetime.date.today().isoformat()


def invoke(repo: str | None, *args: str, input: str | None = None) -> Result:
    prefix = ["--repo", repo] if repo else []
    return CliRunner().invoke(cli, prefix + list(args), input=input, catch_exceptions=False)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> str:
    """`memrepo init` once per module (it runs real git hooks); each test gets a copy."""
    return build_template(tmp_path_factory)


@pytest.fixture
def mem(template: str, tmp_path: os.PathLike[str]) -> str:
    path = os.path.join(str(tmp_path), "mem")
    shutil.copytree(template, path, symlinks=True)
    return path


@pytest.fixture
def stocked(mem: str) -> str:
    """Four memories of different classes, projects and statuses, committed and indexed."""
    write_memory(mem, "deploy-freeze", class_="rule", title="No deploys on Friday", topics=["deploy"],
                 updated="2026-03-01", description="Production deploys freeze on Fridays after 16:00.")
    write_memory(mem, "deploy-freeze-old", class_="rule", title="No deploys on Friday afternoons", topics=["deploy"],
                 status="superseded", superseded_by="deploy-freeze", updated="2026-01-01")
    write_memory(mem, "api-port", title="The API listens on 8080", project="api", updated="2026-02-01")
    write_memory(mem, "web-build", class_="project", title="The web build uses Vite", project="web", updated="2026-02-15")
    assert commit_all(mem, "stock").returncode == 0
    return mem


def test_init_creates_a_repository_and_is_idempotent(tmp_path: os.PathLike[str]) -> None:
    target = os.path.join(str(tmp_path), "fresh")
    first = invoke(None, "init", target)
    assert first.exit_code == 0
    assert first.stdout == (
        f"Created memory repository at {target}\n"
        "  git hooks: shims\n"
        "  committed: memory/.gitkeep, index/.gitignore, index/README.md, .githooks/pre-commit, .githooks/pre-merge-commit, "
        ".githooks/post-commit, .githooks/post-merge, .githooks/post-checkout, .githooks/post-rewrite, .gitattributes\n"
        "  indexed: 0 memories\n  commit-graph: written (1 commit)\n")
    assert git(target, "config", "--get", "core.hooksPath", check=False).stdout == ""
    assert os.access(os.path.join(target, ".git", "hooks", "post-merge"), os.X_OK)
    sha = head(target)
    again = invoke(None, "init", target)
    assert again.exit_code == 0
    assert again.stdout == (f"Initialized memory repository at {target}\n  git hooks: already\n"
                            "  nothing to commit: already set up\n  indexed: 0 memories\n  commit-graph: written (1 commit)\n")
    assert head(target) == sha
    assert git(target, "status", "--porcelain").stdout == ""
    assert invoke(target, "add", "--class", "fact", "--title", "The only one", "-d", "One memory").exit_code == 0
    once = invoke(None, "init", target)
    assert "  indexed: 1 memory\n" in once.stdout  # one memory, not "1 memories"


def test_init_defaults_to_memrepo_dir(tmp_path: os.PathLike[str], monkeypatch: pytest.MonkeyPatch) -> None:
    target = os.path.join(str(tmp_path), "from-env")
    monkeypatch.setenv("MEMREPO_DIR", target)
    assert invoke(None, "init").stdout.startswith(f"Created memory repository at {target}\n")
    assert os.path.isdir(os.path.join(target, "memory"))


def test_add_from_flags_writes_and_commits(mem: str) -> None:
    result = invoke(mem, "add", "--class", "rule", "--title", "No deploys on Friday",
                    "-d", "Production deploys freeze on Fridays", "--topic", "Deploy", "--entity", "api",
                    "--tech", "Kubernetes", "--alias", "friday release", "--project", "web", "--body", "Ask in #ops.")
    assert result.exit_code == 0
    sha = head(mem)
    run = git(mem, "log", "-1", "--format=%(trailers:key=Memrepo-Run,valueonly)").stdout.strip()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-add-[0-9a-f]{6}", run), run
    assert result.stdout == f"Added no-deploys-friday to {mem} ({sha[:12]}; `memrepo undo {run}` takes it back)\n"
    with open(paths.note_path(mem, "no-deploys-friday"), encoding="utf-8") as fh:
        assert fh.read() == (
            "---\nid: no-deploys-friday\ntitle: No deploys on Friday\ndescription: Production deploys freeze on Fridays\n"
            f"class: rule\nsource: user\ncreated: '{TODAY}'\ntopics: [deploy]\nentities: [api]\ntech: [Kubernetes]\n"
            "aliases: [friday release]\nproject: web\n---\nAsk in #ops.\n")
    assert git(mem, "log", "-1", "--format=%B").stdout == (
        f"add: no-deploys-friday\n\nMemrepo-Action: add\nMemrepo-Run: {run}\nMemrepo-Id: no-deploys-friday\n\n")
    assert git(mem, "show", "--name-status", "--format=", "HEAD").stdout == "A\tmemory/no-deploys-friday.md\n"
    assert git(mem, "status", "--porcelain").stdout == ""
    # committed through the hooks: post-commit indexed it
    assert [h["id"] for h in json.loads(invoke(mem, "search", "friday", "--json").stdout)] == ["no-deploys-friday"]


def test_add_ids_fold_accents_and_give_non_latin_titles_a_stable_id(mem: str) -> None:
    result = invoke(mem, "add", "--class", "rule", "--title", "Ação rápida no deploy", "-d", "Deploy só com aprovação")
    assert result.exit_code == 0 and result.stdout.startswith(f"Added acao-rapida-no-deploy to {mem} (")
    result = invoke(mem, "add", "--class", "fact", "--title", "日本語のメモ", "-d", "A note titled in Japanese")
    expected = store.slugify("日本語のメモ")
    assert expected.startswith("memory-") and result.stdout.startswith(f"Added {expected} to {mem} (")
    assert os.path.exists(paths.note_path(mem, expected))


def test_add_body_from_stdin_with_explicit_id(mem: str) -> None:
    result = invoke(mem, "add", "--class", "fact", "--title", "Stdin one", "-d", "From stdin", "--id", "from-stdin",
                    "--source", "agent", "--stdin", input="First line.\n\n- a list item\n")
    assert result.exit_code == 0
    assert result.stdout.startswith(f"Added from-stdin to {mem} ({head(mem)[:12]}; ")
    with open(paths.note_path(mem, "from-stdin"), encoding="utf-8") as fh:
        assert fh.read() == ("---\nid: from-stdin\ntitle: Stdin one\ndescription: From stdin\nclass: fact\n"
                             f"source: agent\ncreated: '{TODAY}'\n---\nFirst line.\n\n- a list item\n")


def test_add_refuses_standard_input_past_a_megabyte_without_reading_it_all(mem: str) -> None:
    """`yes | memrepo add --stdin` must end: past 1,048,576 characters the body is refused unread,
    with what a body may be and the fix, and nothing is committed."""
    before = head(mem)
    result = invoke(mem, "add", "--class", "fact", "--title", "Piped", "-d", "Too much", "--stdin",
                    input="y\n" * (512 * 1024) + "the rest")
    assert result.exit_code == 1
    assert result.stderr == ("Error: standard input is over 1,048,576 characters; a memory's body is at most 65,536 bytes\n"
                             "hint: split it into several memories or link to a file\n")
    assert head(mem) == before


def test_add_body_from_editor(mem: str, tmp_path: os.PathLike[str], monkeypatch: pytest.MonkeyPatch) -> None:
    editor = write_file(str(tmp_path), "editor.sh", '#!/bin/sh\nprintf "Written in the editor.\\n" > "$1"\n')
    os.chmod(editor, os.stat(editor).st_mode | stat.S_IXUSR)
    monkeypatch.setenv("EDITOR", editor)
    monkeypatch.delenv("VISUAL", raising=False)
    result = invoke(mem, "add", "--class", "fact", "--title", "Edited", "-d", "From the editor", "--edit")
    assert result.exit_code == 0
    with open(paths.note_path(mem, "edited"), encoding="utf-8") as fh:
        assert fh.read().endswith("---\nWritten in the editor.\n")


def test_add_id_from_title_avoids_a_taken_id(mem: str) -> None:
    assert invoke(mem, "add", "--class", "fact", "--title", "Same title!", "-d", "one").exit_code == 0
    result = invoke(mem, "add", "--class", "fact", "--title", "Same title!", "-d", "two")
    assert re.match(r"Added same-title-[0-9a-f]{6} to ", result.stdout), result.stdout  # never -2: see test_ids.py


@pytest.mark.parametrize(("args", "problems"), [
    (["--title", "Two lines", "-d", "first\nsecond"],
     ["memory/two-lines.md:4: `description` must be one line — join the lines"]),
    (["--title", "A token", "-d", "x", "--body", "use ghp_abcdefghijklmnopqrstuvwxyz0123456789 here"],
     ["memory/token.md:9: looks like a secret (github-token: ghp_…6789) — remove it and keep secrets in a "
      "secrets manager, or add `memrepo: allow-secret` to the line if it is not one"]),
    (["--title", "T" * 121, "-d", "x", "--id", "long-title"],
     ["memory/long-title.md:3: `title` is 121 characters, over 120 — shorten it; details go in the body"]),
    (["--title", "Bad id", "-d", "x", "--id", "Bad_Id"],
     ["memory/Bad_Id.md:2: id 'Bad_Id' is not kebab-case [a-z0-9-] of at most 80 characters — "
      "use lowercase letters, digits and single hyphens"]),
], ids=["newline-in-description", "secret-in-body", "long-title", "bad-id"])
def test_invalid_add_writes_nothing_and_lists_every_problem(mem: str, args: list[str], problems: list[str]) -> None:
    before = head(mem)
    result = invoke(mem, "add", "--class", "fact", *args)
    assert result.exit_code == 1
    rel = problems[0].split(":")[0]
    assert result.stderr == "\n".join(problems) + (
        f"\nError: {rel} is not a valid memory\nhint: fix the fields named above and run it again\n")
    assert result.stdout == ""
    assert os.listdir(paths.memory_dir(mem)) == [".gitkeep"]
    assert head(mem) == before
    assert git(mem, "status", "--porcelain").stdout == ""


def test_add_of_an_existing_id_is_refused(stocked: str) -> None:
    result = invoke(stocked, "add", "--class", "fact", "--title", "x", "-d", "y", "--id", "api-port")
    assert result.exit_code == 1
    assert result.stderr == ("Error: a memory with id 'api-port' already exists\n"
                             "hint: choose another --id, or edit the file and commit it\n")


def test_add_whose_commit_fails_leaves_nothing_behind(mem: str, tmp_path: os.PathLike[str]) -> None:
    hooks = os.path.join(str(tmp_path), "refusing-hooks")
    write_file(hooks, "pre-commit", "#!/bin/sh\necho 'refused by policy' >&2\nexit 1\n")
    os.chmod(os.path.join(hooks, "pre-commit"), 0o755)
    git(mem, "config", "core.hooksPath", hooks)
    result = invoke(mem, "add", "--class", "fact", "--title", "Refused", "-d", "x")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: git commit failed:\n")
    assert "refused by policy" in result.stderr
    assert result.stderr.endswith("hint: fix the problems above, then run the command again\n")
    assert os.listdir(paths.memory_dir(mem)) == [".gitkeep"]
    assert git(mem, "status", "--porcelain").stdout == ""  # not left staged either


def test_show_prints_the_memory_and_its_history(stocked: str) -> None:
    write_memory(stocked, "api-port", title="The API listens on 8081", project="api", updated="2026-02-01")
    assert commit_all(stocked, "port moved").returncode == 0
    result = invoke(stocked, "show", "api-port")
    assert result.exit_code == 0
    log = git(stocked, "log", "--format=%h %ad", "--date=short", "--abbrev=12", "--", "memory/api-port.md").stdout.split("\n")
    (new_sha, new_date), (old_sha, old_date) = (line.split() for line in log[:2])
    with open(paths.note_path(stocked, "api-port"), encoding="utf-8") as fh:
        text = fh.read()
    assert result.stdout == (f"{text}\nUse on this machine: injected 0 times, 0 judged by the reply, used 0; last used: never\n"
                             f"\nHistory:\n  {new_sha}  {new_date}  port moved\n  {old_sha}  {old_date}  stock\n")
    data = json.loads(invoke(stocked, "show", "api-port", "--json").stdout)
    assert (data["id"], data["text"], [h["subject"] for h in data["history"]]) == ("api-port", text, ["port moved", "stock"])


def test_show_of_an_unknown_id(stocked: str) -> None:
    result = invoke(stocked, "show", "nope")
    assert result.exit_code == 1
    assert result.stderr == (f"Error: no memory with id 'nope' in {stocked}\n"
                             "hint: find ids with `memrepo list` or `memrepo search`\n")


LINES = {
    "deploy-freeze": "deploy-freeze                            rule       2026-03-01 No deploys on Friday",
    "web-build": "web-build                                project    2026-02-15 The web build uses Vite",
    "api-port": "api-port                                 fact       2026-02-01 The API listens on 8080",
    "deploy-freeze-old": "deploy-freeze-old                        rule       2026-01-01 No deploys on Friday afternoons"
                         "  [superseded by deploy-freeze]",
}


@pytest.mark.parametrize(("filters", "expected"), [
    ([], ["deploy-freeze", "web-build", "api-port", "deploy-freeze-old"]),
    (["--class", "rule"], ["deploy-freeze", "deploy-freeze-old"]),
    (["--class", "event"], []),
    (["--project", "api"], ["api-port"]),
    (["--status", "superseded"], ["deploy-freeze-old"]),
    (["--status", "active"], ["deploy-freeze", "web-build", "api-port"]),
    (["--class", "rule", "--status", "active"], ["deploy-freeze"]),
])
def test_list_filters(stocked: str, filters: list[str], expected: list[str]) -> None:
    result = invoke(stocked, "list", *filters)
    assert result.exit_code == 0
    assert result.stdout == "".join(LINES[i] + "\n" for i in expected)
    named = [f"{k[2:]} {v}" for k, v in zip(filters[::2], filters[1::2])]
    count = f"{len(expected)} memor{'y' if len(expected) == 1 else 'ies'}"
    assert result.stderr == (f"{count} matching {', '.join(named)}\n" if named else f"{count}\n")
    rows = json.loads(invoke(stocked, "list", *filters, "--json").stdout)
    assert [r["id"] for r in rows] == expected


def test_list_rejects_an_unknown_status(stocked: str) -> None:
    result = invoke(stocked, "list", "--status", "gone")
    assert result.exit_code == 2
    assert "'gone' is not one of 'active', 'superseded', 'retired'" in result.stderr


def test_search_json(stocked: str) -> None:
    result = invoke(stocked, "search", "friday deploy", "--json")
    assert result.exit_code == 0
    hits = json.loads(result.stdout)
    assert [h["id"] for h in hits] == ["deploy-freeze", "deploy-freeze-old"]
    for hit in hits:
        assert {"id", "score", "title", "class", "status"} <= set(hit)
        assert isinstance(hit["score"], float) and hit["score"] > 0
    assert [(h["title"], h["class"], h["status"]) for h in hits] == [
        ("No deploys on Friday", "rule", "active"), ("No deploys on Friday afternoons", "rule", "superseded")]
    assert hits[0]["score"] > hits[1]["score"]
    assert hits[1]["labels"] == ["superseded by deploy-freeze"]


def test_search_limit_and_text(stocked: str) -> None:
    one = json.loads(invoke(stocked, "search", "friday deploy", "--json", "--limit", "1").stdout)
    assert [h["id"] for h in one] == ["deploy-freeze"]
    text = invoke(stocked, "search", "friday deploy", "-n", "1")
    assert text.stdout == f"{one[0]['score']:8.3f}  {'deploy-freeze':<40} (rule) No deploys on Friday\n"


def test_search_without_matches(stocked: str) -> None:
    result = invoke(stocked, "search", "kubernetes", "--json")
    assert (result.exit_code, json.loads(result.stdout)) == (0, [])
    plain = invoke(stocked, "search", "kubernetes")
    assert (plain.exit_code, plain.stdout, plain.stderr) == (0, "", "no matches\n")


def test_search_sees_uncommitted_edits(stocked: str) -> None:
    write_memory(stocked, "api-port", title="The API listens on kubernetes port 8080", project="api")
    assert [h["id"] for h in json.loads(invoke(stocked, "search", "kubernetes", "--json").stdout)] == ["api-port"]


def test_index_and_rebuild(stocked: str) -> None:
    result = invoke(stocked, "index")
    assert result.exit_code == 0
    assert result.stdout.startswith("updated: 0 added, 0 updated, 0 removed, 4 unchanged, 0 skipped in ")
    write_memory(stocked, "new-one")
    os.remove(paths.note_path(stocked, "web-build"))
    result = invoke(stocked, "index")
    assert result.stdout.startswith("updated: 1 added, 0 updated, 1 removed, 3 unchanged, 0 skipped in ")
    result = invoke(stocked, "index", "--rebuild")
    assert result.exit_code == 0
    assert result.stdout.startswith("rebuilt: 4 added, 0 updated, 0 removed, 0 unchanged, 0 skipped in ")
    assert result.stdout.endswith("s\n")
    assert "indexing" in result.stderr  # the progress bar goes to stderr


def test_log_lists_trailers_newest_first(stocked: str) -> None:
    invoke(stocked, "add", "--class", "fact", "--title", "First added", "-d", "x")
    invoke(stocked, "add", "--class", "fact", "--title", "Second added", "-d", "y")
    result = invoke(stocked, "log", "--json")
    entries = json.loads(result.stdout)
    # "stock" was a plain commit without trailers, so it is not listed
    for e in entries[:2]:  # each add is a run of its own: `memrepo undo RUN` takes it back
        assert re.fullmatch(r".*-add-[0-9a-f]{6}", e["trailers"].pop("Run"))
    assert [(e["subject"], e["trailers"]) for e in entries] == [
        ("add: second-added", {"Action": "add", "Id": "second-added"}),
        ("add: first-added", {"Action": "add", "Id": "first-added"}),
        ("memrepo: init memory repository", {"Action": "init"}),
    ]
    shas = git(stocked, "log", "--format=%H").stdout.split()
    assert [e["commit"] for e in entries] == [shas[0], shas[1], shas[3]]
    lines = invoke(stocked, "log").stdout.splitlines()
    assert [line.split("  ", 2)[0] for line in lines] == [shas[0][:12], shas[1][:12], shas[3][:12]]
    assert re.search(r"  add        add: second-added  Run=\S+-add-[0-9a-f]{6} Id=second-added$", lines[0]), lines[0]
    assert lines[2].endswith("  init       memrepo: init memory repository")
    assert invoke(stocked, "log", "-n", "1").stdout.splitlines() == lines[:1]


def test_fmt_check_and_rewrite(stocked: str) -> None:
    path = paths.note_path(stocked, "api-port")
    with open(path, encoding="utf-8") as fh:
        canonical = fh.read()
    assert (invoke(stocked, "fmt", "--check").exit_code, invoke(stocked, "fmt", "--check").stdout) == (0, "")
    scrambled = canonical.replace("class: fact\n", "").replace("---\nid:", "---\nclass: fact\nid:") + "\n\n"
    write_file(stocked, "memory/api-port.md", scrambled)
    check = invoke(stocked, "fmt", "--check")
    assert (check.exit_code, check.stdout) == (1, f"would reformat {path}\n")
    with open(path, encoding="utf-8") as fh:
        assert fh.read() == scrambled  # --check writes nothing
    done = invoke(stocked, "fmt")
    assert (done.exit_code, done.stdout) == (0, f"reformatted {path}\n")
    with open(path, encoding="utf-8") as fh:
        assert fh.read() == canonical
    assert invoke(stocked, "fmt", path).stdout == ""


def test_fmt_reports_an_unparsable_file(stocked: str) -> None:
    write_file(stocked, "memory/broken.md", "no front matter here\n")
    result = invoke(stocked, "fmt")
    assert result.exit_code == 1
    broken = os.path.join(paths.memory_dir(stocked), "broken.md")
    assert result.stderr == (
        f"{broken}:1: no front matter — start the file with a `---` line, the YAML keys, then `---`\n"
        "Error: 1 file(s) could not be read, so fmt left them alone\n"
        "hint: fix their front matter by hand, then run `memrepo fmt` again\n")


@pytest.mark.parametrize("args", [
    ["list"], ["search", "x"], ["show", "x"], ["index"], ["index", "--rebuild"], ["log"], ["fmt"],
    ["add", "--class", "fact", "--title", "x", "-d", "y"],
])
def test_commands_on_a_non_repository_name_memrepo_init(tmp_path: os.PathLike[str], args: list[str]) -> None:
    nowhere = os.path.join(str(tmp_path), "nowhere")
    result = invoke(nowhere, *args)
    assert result.exit_code == 1
    assert result.stderr == (f"Error: no memory repository at {nowhere}\n"
                             f"hint: run `memrepo init {nowhere}`, or point --repo / MEMREPO_DIR at one\n")
    assert not os.path.exists(nowhere)


def test_memrepo_dir_names_the_repository(stocked: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMREPO_DIR", stocked)
    assert [r["id"] for r in json.loads(invoke(None, "list", "--class", "project", "--json").stdout)] == ["web-build"]


def test_version() -> None:
    from memrepo import __version__

    assert invoke(None, "--version").stdout == f"memrepo, version {__version__}\n"


def test_each_area_registers_the_commands_main_lists_for_it() -> None:
    import click
    import importlib

    from memrepo.cli import main

    for area, names in main.AREAS.items():
        group = click.Group("memrepo")
        importlib.import_module(f"memrepo.cli.{area}").register(group)
        assert tuple(sorted(group.commands)) == names, area
    listed = cli.list_commands(click.Context(cli))
    assert [name for name in listed if cli.get_command(click.Context(cli), name) is None] == []
    assert "codex" in cli.get_command(click.Context(cli), "install").commands  # type: ignore[union-attr]  # mcp's


def test_add_loads_no_other_command_s_module(repo: str) -> None:
    import subprocess
    import sys

    env = {**os.environ, "MEMREPO_DIR": repo}
    add = ["-m", "memrepo", "add", "--class", "fact", "-d", "What an add loads", "--title"]
    subprocess.run([sys.executable, *add, "First"], env=env, check=True, capture_output=True)  # records the secret gates
    out = subprocess.run([sys.executable, "-X", "importtime", *add, "Imports"], env=env, capture_output=True, text=True, check=True)
    loaded = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines() if "|" in line}
    assert sorted(m for m in loaded if m.startswith("memrepo.cli.")) == ["memrepo.cli.common", "memrepo.cli.main", "memrepo.cli.term"]
    assert not {"detect_secrets", "requests", "memrepo.format.mention_context"} & loaded


def test_a_crash_with_an_argument_no_utf8_decodes_still_writes_its_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    # A byte of argv that is no UTF-8 arrives as a lone surrogate: the crash log escapes it, it does not crash too.
    from memrepo.cli import main as cli_main

    monkeypatch.setattr(sys, "argv", ["memrepo", "add", "--title", "caf\udce9"])
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    try:
        raise RuntimeError("a bug")
    except RuntimeError as exc:
        assert cli_main._crash(exc) == 3
    [log] = tmp_path.glob("memrepo-crash-*.log")
    text = log.read_text(encoding="utf-8")
    assert "add --title caf\\udce9" in text and "RuntimeError: a bug" in text
    assert "The traceback is in" in capsys.readouterr().err
