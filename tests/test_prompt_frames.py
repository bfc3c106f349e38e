"""Text no person typed is never a query (issue 36, part 4), on every prompt-hook stdin the real
CLIs sent (tests/fixtures/prompt-frames: Claude Code 2.1.332, Codex 0.171.0, Gemini 0.61.0,
recorded by tests/e2e/record_prompt_frames.py against fake model APIs on loopback).

Each recorded stdin goes through that agent's real hook entry point, as a subprocess, into a
memory repository whose memories share words with every recorded prompt; the recall log says
whether the prompt was taken as typed, and with which terms.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import commit_all, write_memory
from memrepo.agents.codex import install as codex_install
from memrepo.agents.gemini import commands, handlers as gemini_handlers, install as gemini_install
from memrepo.recall import frames, query, transcript_tail
from memrepo.store import index

ROOT = Path(__file__).resolve().parent.parent
FRAMES = ROOT / "tests" / "fixtures" / "prompt-frames"
RECORDINGS = {"claude": "claude-2.1.332.jsonl", "codex": "codex-0.171.0.jsonl", "gemini": "gemini-0.61.0.jsonl"}
PROMPT_EVENTS = {"claude": "UserPromptSubmit", "codex": "UserPromptSubmit", "gemini": "BeforeAgent"}

# The calls nobody typed, by (case, which prompt-hook call of the case), from SOURCES.md's tables.
NOT_TYPED = {
    "claude": {("p-bg-bash", 2), ("p-subagent-bg", 2), ("tui-builtin-review", 2), ("tui-bg-bash-notification", 2),
               ("tui-subagent-bg", 2), ("tui-subagent-fg", 2), ("tui-loop-wakeup", 2)},
    "codex": {("exec-review", 1), ("tui-slash-review", 1), ("tui-slash-init", 1), ("exec-subagent", 2), ("tui-subagent", 2)},
    "gemini": {("p-builtin-init", 1), ("tui-builtin-init", 1)},
}
# A `/loop` line is the same whether typed or scheduled: only the transcript tells them apart, and
# these calls are run without one (test_a_typed_loop_is_a_query_and_its_wake_ups_are_not runs
# them with it). Gemini's AfterAgent hook reason arrives as a plain prompt: no frame marks it.
TYPED_BUT_SILENT = {("claude", "tui-loop-wakeup", 1)}
UNRECOGNISED = {("gemini", "p-afteragent-deny", 2)}
# Gemini sends a custom command's expanded template: only the arguments are the user's.
GEMINI_COMMANDS = {
    "notes.toml": 'prompt = "Summarise the notes about {{args}} in three bullet points."\n',
    "release.toml": 'prompt = "Check that the release checklist is complete."\n',
    "gitstatus.toml": 'prompt = """Summarise this git status:\n!{git status --short}\n"""\n',
}
GEMINI_USER_COMMANDS = {"team/standup.toml": 'prompt = "Write the stand-up note for: {{args}}"\n'}


def calls() -> list[tuple[str, str, int, dict[str, Any]]]:
    out = []
    for agent, name in RECORDINGS.items():
        seen: dict[str, int] = {}
        for line in (FRAMES / name).read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            stdin = rec.get("stdin")
            if rec.get("event") != PROMPT_EVENTS[agent] or not isinstance(stdin, dict) or "prompt" not in stdin:
                continue
            seen[rec["case"]] = seen.get(rec["case"], 0) + 1
            out.append((agent, rec["case"], seen[rec["case"]], stdin))
    return out


CALLS = calls()


def command(agent: str) -> list[str]:
    if agent == "claude":
        return ["sh", str(ROOT / "hooks" / "run"), "user_prompt_submit"]
    install = codex_install if agent == "codex" else gemini_install
    return shlex.split(install.command(sys.executable, PROMPT_EVENTS[agent]))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A memory repository whose memories hold the words of every recorded prompt, a project
    folder with Gemini's command files, and a HOME with the user's."""
    base = tmp_path_factory.mktemp("frames")
    home = base / "home"
    project = base / "project"
    repo = base / "mem"
    for folder, files in ((project / ".gemini" / "commands", GEMINI_COMMANDS), (home / ".gemini" / "commands", GEMINI_USER_COMMANDS)):
        for rel, text in files.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_text(text, encoding="utf-8")
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    for key, value in (("user.email", "t@example.invalid"), ("user.name", "t"), ("commit.gpgsign", "false")):
        subprocess.run(["git", "-C", str(repo), "config", key, value], check=True)
    (repo / "memory").mkdir()
    (repo / "index").mkdir()
    write_memory(str(repo), "build-system", title="The build system is make with a release checklist",
                 description="Notes about the build: `make check` runs the tests; the release checklist lives in RELEASE.md.",
                 topics=["build system", "tests", "release"], aliases=["test command", "lint command", "slow build"])
    write_memory(str(repo), "code-review", title="Code review: findings first, prioritized",
                 description="Reviews of code changes list prioritized findings; staged and untracked files too.",
                 topics=["code review", "changes"], aliases=["review the current code changes"])
    write_memory(str(repo), "repo-layout", title="The repository and its files, explored",
                 description="List of the files in the repository: a contributor guide, AGENTS.md, the parser work.",
                 topics=["repository", "files", "agents.md", "contributor guide", "parser", "stand-up"])
    assert commit_all(str(repo), "memories").returncode == 0
    index.rebuild(str(repo))
    return {"repo": str(repo), "home": str(home), "project": str(project)}


def _run(agent: str, stdin: dict[str, Any], world: dict[str, str], transcript: str = "") -> dict[str, Any]:
    event = dict(stdin, cwd=world["project"], transcript_path=transcript)
    env = dict(os.environ, MEMREPO_DIR=world["repo"], HOME=world["home"], MEMREPO_PYTHON=sys.executable)
    log = Path(world["repo"]) / "index" / "recall-log.jsonl"
    before = log.read_text(encoding="utf-8").count("\n") if log.exists() else 0
    proc = subprocess.run(command(agent), input=json.dumps(event).encode(), capture_output=True, env=env, timeout=60)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    lines = log.read_text(encoding="utf-8").splitlines()
    assert len(lines) == before + 1, "one decision logged per prompt"
    return json.loads(lines[-1])


@pytest.mark.parametrize(("agent", "case", "n", "stdin"), CALLS, ids=[f"{a}-{c}-{n}" for a, c, n, _ in CALLS])
def test_every_recorded_prompt_is_read_as_who_wrote_it(agent: str, case: str, n: int, stdin: dict[str, Any],
                                                       world: dict[str, str]) -> None:
    entry = _run(agent, stdin, world)
    if (case, n) in NOT_TYPED[agent] or (agent, case, n) in TYPED_BUT_SILENT:
        assert (entry["silent"], entry["injected"], entry["terms"]) == ("not-typed", [], [])
        assert entry["why"].startswith("no person typed it: ")
        return
    assert entry["silent"] != "not-typed"
    typed = stdin["prompt"]
    if agent == "gemini":
        typed = gemini_handlers.own_prompt(typed)
        expanded = None if (agent, case, n) in UNRECOGNISED else commands.typed_part(typed, world["project"], world["home"])
        typed = typed if expanded is None else expanded
    # the terms come from what the user typed, never from a template or a file the agent added
    assert entry["terms"] == list(query.build_query(frames.classify(typed)[1]).terms)


def _loop_transcript(stdin: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorded session of `/loop` and its wake-up (the transcript as it ended)."""
    for line in (FRAMES / RECORDINGS["claude"]).read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec["case"] == "tui-loop-wakeup" and rec.get("stdin") == stdin:
            return list(rec["transcript_lines"])
    raise AssertionError("no recorded transcript for the /loop call")


def _cut(lines: list[dict[str, Any]], prompt_id: str, with_prompt: bool) -> list[dict[str, Any]]:
    """The transcript when the hook of the prompt `prompt_id` runs: up to its first line (that line
    too when `with_prompt`: Claude Code may have written it already)."""
    first = next(i for i, entry in enumerate(lines) if entry.get("promptId") == prompt_id and entry.get("type") == "user")
    return lines[: first + 1 if with_prompt else first]


@pytest.mark.parametrize("with_prompt", [False, True], ids=["before-its-line", "after-its-line"])
def test_a_typed_loop_is_a_query_and_its_wake_ups_are_not(with_prompt: bool, world: dict[str, str], tmp_path: Path) -> None:
    # Claude Code 2.1.332 sends `/loop check the build status` typed, then the same line at each
    # wake-up; the transcript holds a `scheduled_task_fire` line before a wake-up's prompt.
    typed, woken = [stdin for agent, case, _, stdin in CALLS if agent == "claude" and case == "tui-loop-wakeup"]
    assert typed["prompt"] == woken["prompt"] == "/loop check the build status"
    lines = _loop_transcript(typed)
    for stdin, expect_typed in ((typed, True), (woken, False)):
        path = tmp_path / f"{stdin['prompt_id']}.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in _cut(lines, stdin["prompt_id"], with_prompt)), encoding="utf-8")
        entry = _run("claude", stdin, world, str(path))
        if expect_typed:
            assert entry["silent"] != "not-typed" and entry["terms"] == list(query.build_query("check the build status").terms), entry
        else:
            assert (entry["silent"], entry["why"], entry["terms"]) == ("not-typed", "no person typed it: a scheduled wake-up", [])


@pytest.mark.parametrize(("lines", "fired"), [
    ([], False),  # a session's first prompt
    ([{"type": "system", "subtype": "turn_duration"}, {"type": "system", "subtype": "scheduled_task_fire"}], True),
    ([{"type": "system", "subtype": "scheduled_task_fire"}, {"type": "assistant", "message": {"content": "ok"}}], False),
    ([{"type": "system", "subtype": "scheduled_task_fire"}, {"type": "user", "origin": {"kind": "human"},
                                                              "message": {"content": "/loop x"}}], False),
])
def test_a_wake_up_is_told_by_its_fire_line_since_the_turn_before(lines: list[dict[str, Any]], fired: bool, tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines), encoding="utf-8")
    assert transcript_tail.scheduled(str(path)) is fired
    assert transcript_tail.scheduled(str(tmp_path / "missing.jsonl")) is True  # unreadable: silent, as before
    assert frames.classify("/loop x", lambda: fired) == (("a scheduled wake-up", "") if fired else (None, "x"))
    assert frames.classify("/loop x") == ("a scheduled wake-up", "")  # no transcript: silent


@pytest.mark.parametrize(("prompt", "terms"), [
    ("/notes the build system", ["build", "system"]),  # Claude Code: the raw line; its arguments are the query
    ("/usercheck release 1.2", ["release", "1.2"]),
    ("$notes-skill the build system", ["build", "system"]),  # Codex: a skill mention
    ("@README.md what does this say?\n--- Content from referenced files ---\nContent from @README.md:\n# build system\n",
     ["readme", "md"]),  # Gemini: a referenced file's content is not the user's words
])
def test_only_the_typed_part_of_a_command_is_a_query(prompt: str, terms: list[str]) -> None:
    assert list(query.build_query(frames.classify(prompt)[1]).terms) == terms


def test_a_gemini_command_is_matched_against_its_file_and_only_its_arguments_count() -> None:
    notes = 'Summarise the notes about {{args}} in three bullet points.'
    assert commands.arguments("Summarise the notes about the build system in three bullet points.", notes) == "the build system"
    assert commands.arguments("Summarise the notes about x in two bullet points.", notes) is None
    release = "Check that the release checklist is complete."
    assert commands.arguments(release, release) == ""
    assert commands.arguments(release + "\n\n/release for 1.2", release) == "for 1.2"
    assert commands.arguments(release + " and also the docs", release) is None
    shell = "Summarise this git status:\n!{git status --short}\n"
    assert commands.arguments("Summarise this git status:\n?? .gemini/\n", shell) == ""
    assert commands.arguments("anything at all", "{{args}}") is None  # a template of holes alone matches nothing


def test_gemini_command_files_are_read_bounded(tmp_path: Path) -> None:
    folder = tmp_path / ".gemini" / "commands"
    folder.mkdir(parents=True)
    (folder / "big.toml").write_text('prompt = "' + "x" * (commands.MAX_BYTES + 10) + '"\n', encoding="utf-8")
    (folder / "bad.toml").write_text('prompt = "unclosed\n', encoding="utf-8")
    (folder / "ok.toml").write_text('prompt = "Explain {{args}} briefly."\n', encoding="utf-8")
    assert commands.templates(str(folder)) == ["Explain {{args}} briefly."]
    (tmp_path / "sub").mkdir()
    assert commands.typed_part("Explain the parser briefly.", str(tmp_path / "sub"), None) == "the parser"
    assert commands.typed_part("Explain the parser briefly.", str(tmp_path.parent), None) is None  # not above the folder


@pytest.mark.parametrize("text", [*GEMINI_COMMANDS.values(), *GEMINI_USER_COMMANDS.values(),
                                  "description = 'x'\nprompt = '''lit {{args}}\n'''\n", 'prompt = "a \\"q\\" b\\n"\n'])
def test_without_tomllib_a_command_file_reads_the_same(text: str) -> None:
    # Python 3.10 has no tomllib: the small reader gives what tomllib gives for the strings it knows
    tomllib = pytest.importorskip("tomllib")
    assert commands._plain_prompt(text) == tomllib.loads(text)["prompt"]
