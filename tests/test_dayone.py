"""What a user meets on day one (issue 39): short ids and any unique prefix of one, `--json` on
every writer, an empty option named as such, retired memories marked, an explanation that does
not run into the injected block."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from click.testing import CliRunner, Result

from helpers import ROOT, commit_all, git, head, write_memory
from memrepo.cli.main import cli
from memrepo.format import notes

LONG = "The staging database is refreshed from production every Sunday night at two"


def invoke(repo: str, *args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["--repo", repo, *args], input=input, catch_exceptions=False)


def add_json(repo: str, title: str, *extra: str) -> dict[str, str]:
    result = invoke(repo, "add", "--class", "fact", "--title", title, "-d", "one line", "--json", *extra)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)  # type: ignore[no-any-return]


def test_add_gives_a_short_id_and_prints_json(repo: str) -> None:
    added = add_json(repo, LONG)
    assert added == {"id": "staging-database-refreshed-production", "commit": head(repo), "run": added["run"],
                     "repo": repo}
    assert len(added["id"]) <= 40
    assert git(repo, "log", "-1", "--format=%(trailers:key=Memrepo-Run,valueonly)").stdout.strip() == added["run"]


def test_a_unique_prefix_names_a_memory_wherever_an_id_is_asked(repo: str) -> None:
    first = add_json(repo, "Staging host is web-2")["id"]
    second = add_json(repo, "Staging database lives on db-3")["id"]
    shown = invoke(repo, "show", "staging-h")
    assert shown.exit_code == 0 and f"id: {first}" in shown.output
    ambiguous = invoke(repo, "show", "staging")
    assert ambiguous.exit_code == 1
    assert f"'staging' is the start of 2 memory ids: {second}, {first}" in ambiguous.output \
        or f"'staging' is the start of 2 memory ids: {first}, {second}" in ambiguous.output
    assert "hint: give more of the id" in ambiguous.output
    retired = invoke(repo, "retire", "staging-d", "--reason", "moved to db-4", "--json")
    assert retired.exit_code == 0, retired.output
    assert json.loads(retired.output) == {"id": second, "commit": head(repo), "run": json.loads(retired.output)["run"]}
    assert notes.read(os.path.join(repo, "memory", f"{second}.md")).get("status") == "retired"
    assert invoke(repo, "show", "nothing-like-it").exit_code == 1


def test_every_writer_prints_json(repo: str, tmp_path) -> None:
    note_id = add_json(repo, "Deploys only Tuesday to Thursday")["id"]
    path = os.path.join(repo, "memory", f"{note_id}.md")
    changed = open(path, encoding="utf-8").read().replace("one line", "No deploys on Mondays or Fridays")
    edited = invoke(repo, "edit", note_id[:8], "--from", "-", "--json", input=changed)
    assert edited.exit_code == 0, edited.output
    data = json.loads(edited.output)
    assert data == {"id": note_id, "commit": head(repo), "run": data["run"]}
    now = open(path, encoding="utf-8").read()
    same = json.loads(invoke(repo, "edit", note_id, "--from", "-", "--json", input=now).output)
    assert same == {"id": note_id, "commit": None, "run": None}
    forgot = json.loads(invoke(repo, "forget", note_id, "--json").output)
    assert forgot["id"] == note_id and forgot["commit"] == head(repo)
    undone = json.loads(invoke(repo, "undo", forgot["run"], "--json").output)
    assert undone == {"run": forgot["run"], "commit": head(repo)}
    fresh = str(tmp_path / "fresh")
    made = CliRunner().invoke(cli, ["init", fresh, "--json"], catch_exceptions=False)
    assert made.exit_code == 0, made.output
    data = json.loads(made.output)
    assert data["path"] == fresh and data["git_init"] is True and data["adopted"] is None and data["indexed"] == 0


def test_an_empty_title_names_the_option(repo: str) -> None:
    result = invoke(repo, "add", "--class", "rule", "--title", "  ", "-d", "x")
    assert result.exit_code == 2
    assert "Invalid value for --title: is empty" in result.output
    assert "memory/" not in result.output
    result = invoke(repo, "add", "--class", "rule", "--title", "A title", "-d", "")
    assert "Invalid value for --description: is empty" in result.output


def test_list_marks_retired_and_superseded_memories(repo: str) -> None:
    write_memory(repo, "old-host", title="Staging host is web-1", status="retired", retired_reason="moved")
    write_memory(repo, "new-host", title="Staging host is web-2")
    assert commit_all(repo).returncode == 0
    lines = invoke(repo, "list").output.splitlines()
    assert [line.split()[0] for line in lines if "[retired]" in line] == ["old-host"]
    assert not any("[" in line for line in lines if line.startswith("new-host"))


def test_recall_explain_keeps_the_block_whole_and_apart(repo: str) -> None:
    write_memory(repo, "deploy-days", title="Deploys only Tuesday to Thursday", class_="rule",
                 description="No deploys on Fridays or Mondays", topics=["deploy"])
    assert commit_all(repo).returncode == 0
    env = {**os.environ, "MEMREPO_DIR": repo}
    out = subprocess.run([sys.executable, "-m", "memrepo", "recall", "--explain", "can I deploy on friday?"],
                         cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=True).stdout
    block_end = out.index("</memrepo-memories>")
    explained = out.index("terms: deploy friday")
    assert block_end < explained
    assert "`memrepo transcript <session>`.\n\nterms: deploy friday\n" in out
    # one memory: bm25's idf is clamped to 1e-06, and the trace shows the score it has, not 0.00
    assert "  1. deploy-days  score " in out and "score 0.00" not in out and "relevance 0.00" not in out


def test_transcripts_show_is_transcript() -> None:
    import click

    ctx = click.Context(cli)
    group = cli.get_command(ctx, "transcripts")
    assert group.commands["show"] is cli.get_command(ctx, "transcript")  # type: ignore[union-attr]
    assert "alias of `memrepo retire`" in cli.get_command(ctx, "forget").help  # type: ignore[operator,union-attr]
