"""`memrepo mcp` driven by the MCP SDK's own client over stdio: the server is `memrepo mcp` in a
subprocess against a real memory repository, every write a real commit through the git hooks."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
from typing import Any, Awaitable, Callable

import pytest
from click.testing import CliRunner

from helpers import git, write_memory, commit_all
from test_sources import _dirs, code, me, team  # noqa: F401  (fixtures)

mcp = pytest.importorskip("mcp")
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from mcp.types import Implementation  # noqa: E402

AGENT = "test-agent"
READERS = ["recall", "search", "show", "history", "why"]
PROMPT = "can I deploy the billing api to production on friday afternoon?"


@pytest.fixture
def store(repo: str) -> str:
    write_memory(repo, "no-friday-deploys", title="No deploys on Friday afternoon", class_="rule",
                 description="Production deploys of the billing api are frozen on Fridays after 16:00",
                 topics=["deploy"], entities=["billing-api"])
    write_memory(repo, "tabs-in-makefiles", title="Makefiles use tabs", class_="preference",
                 description="Recipes in Makefiles are indented with tabs, never spaces", topics=["make"])
    assert commit_all(repo, "two memories").returncode == 0
    return repo


def session(repo: str, steps: Callable[[Any], Awaitable[Any]], *extra: str, name: str = AGENT) -> Any:
    """Spawn `memrepo --repo REPO mcp EXTRA…`, initialize as client `name`, run `steps(client)`."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "memrepo", "--repo", repo, "mcp", *extra],
                                   env=dict(os.environ), cwd=repo)

    async def main() -> Any:
        async with Client(params, client_info=Implementation(name=name, version="1.0"), read_timeout_seconds=60) as client:
            return await steps(client)

    return asyncio.run(main())


def text(result: Any) -> str:
    return "".join(c.text for c in result.content)


def test_initialize_lists_every_tool_with_a_description_for_the_model(store: str) -> None:
    async def steps(client: Any) -> Any:
        return client.server_info if hasattr(client, "server_info") else None, (await client.list_tools()).tools

    _, listed = session(store, steps)
    tools = {t.name: t for t in listed}
    assert sorted(tools) == sorted(READERS + ["remember", "forget"])
    assert "before acting on a task" in tools["recall"].description
    assert "description" in tools["remember"].description and "secrets" in tools["remember"].description
    assert tools["remember"].input_schema["properties"]["cls"]["enum"] == \
        ["rule", "preference", "fact", "project", "event", "reference"]
    assert tools["recall"].input_schema["required"] == ["prompt"]


def test_recall_returns_the_hooks_own_block_and_nothing_when_silent(store: str) -> None:
    from memrepo.recall import decide

    async def steps(client: Any) -> Any:
        return (await client.call_tool("recall", {"prompt": PROMPT, "cwd": store}),
                await client.call_tool("recall", {"prompt": "thanks, go ahead", "cwd": store}))

    hit, silent = session(store, steps)
    expected = decide.format_context(decide.decide(store, PROMPT, cwd=store).hits)
    assert "(id: no-friday-deploys)" in expected
    assert not hit.is_error and text(hit) == expected
    assert not silent.is_error and text(silent) == ""
    # Each decision is logged like a hook's, with the agent named.
    from memrepo.recall import log

    assert [e.get("agent") for e in log.read_all(store)][-2:] == [f"mcp:{AGENT}", f"mcp:{AGENT}"]


def test_search_show_history_and_why(store: str) -> None:
    async def steps(client: Any) -> Any:
        await client.call_tool("recall", {"prompt": PROMPT, "cwd": store})
        return [await client.call_tool(name, args) for name, args in (
            ("search", {"query": "makefile tabs"}), ("show", {"memory_id": "no-friday"}),
            ("history", {"memory_id": "no-friday-deploys"}), ("why", {"prompt": PROMPT}), ("why", {}))]

    found, shown, hist, why, latest = session(store, steps)
    assert [h["id"] for h in json.loads(text(found))][0] == "tabs-in-makefiles"
    shown_data = json.loads(text(shown))
    with open(os.path.join(store, "memory", "no-friday-deploys.md"), encoding="utf-8") as fh:
        assert shown_data["text"] == fh.read()
    assert [h["subject"] for h in shown_data["history"]] == ["two memories"]
    assert [(h["subject"], h["trailers"]) for h in json.loads(text(hist))] == [("two memories", {})]
    assert "injected: no-friday-deploys" in text(why)
    assert text(latest) == text(why)


def test_bad_arguments_are_tool_errors_that_name_the_fix(store: str) -> None:
    async def steps(client: Any) -> Any:
        return [await client.call_tool(name, args) for name, args in (
            ("recall", {}), ("recall", {"prompt": "  "}), ("show", {"memory_id": "no-such-memory"}),
            ("search", {"query": "deploy", "limit": 0}),
            ("remember", {"title": "x", "description": "y", "cls": "opinion"}),
            ("remember", {"title": " ", "description": "y", "cls": "fact"}),
            ("forget", {"memory_id": "no-friday-deploys", "reason": " "}),
            ("why", {"prompt": "never asked"}),
            ("history", {"memory_id": "no-friday-deploys", "limit": 0}),
            ("search", {"query": "  "}),
            ("remember", {"title": "CI token", "cls": "fact", "description": "The CI bot's token",
                          "body": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8\n"}))]

    results = session(store, steps)
    assert all(r.is_error for r in results)
    messages = [text(r) for r in results]
    assert "prompt" in messages[0]
    assert "pass the task as `prompt`" in messages[1]
    # An agent over MCP has tools, not the CLI: the fix names the tool (it named `memrepo list`).
    assert "no memory with id 'no-such-memory'" in messages[2] and messages[2].endswith("fix: find ids with the `search` tool")
    assert "ask for 1 to 50 results" in messages[3]
    assert "'rule', 'preference'" in messages[4]
    assert "title is empty" in messages[5]
    assert "a retire needs a reason" in messages[6]
    assert "call `recall` with the prompt first" in messages[7]
    assert "limit 0 is out of range" in messages[8] and "ask for 1 to 100 commits" in messages[8]  # was: one commit
    assert "search needs words to look for" in messages[9]  # was: [] as if nothing matched
    assert "is not a valid memory\n" in messages[10] and "looks like a secret (github-token: ghp_…q7R8)" in messages[10]
    assert git(store, "log", "-1", "--format=%s").stdout.strip() == "two memories"


def test_remember_and_forget_commit_with_the_agent_named(store: str) -> None:
    async def steps(client: Any) -> Any:
        added = await client.call_tool("remember", {
            "title": "Use uv for Python installs", "cls": "preference", "topics": ["Python"],
            "description": "The user installs Python packages with uv, never with pip", "body": "Said on 2026-12-06.\n"})
        new_id = json.loads(text(added))["id"]
        recalled = await client.call_tool("recall", {"prompt": "install the python packages with pip", "cwd": store})
        forgot = await client.call_tool("forget", {"memory_id": "tabs-in", "reason": "the team moved to just"})
        return new_id, recalled, forgot

    new_id, recalled, forgot = session(store, steps, name="Cursor Agent\nX")
    with open(os.path.join(store, "memory", f"{new_id}.md"), encoding="utf-8") as fh:
        note = fh.read()
    assert "\nsource: agent\n" in note and "\ntopics: [python]\n" in note
    assert f"(id: {new_id})" in text(recalled)  # the post-commit hook indexed it
    log = git(store, "log", "-2", "--format=%s%n%(trailers:only)--").stdout
    add_msg, retire_msg = log.split("--\n")[1], log.split("--\n")[0]
    assert add_msg.startswith(f"add: {new_id}\n") and "Memrepo-Action: add\n" in add_msg
    assert "Memrepo-Agent: Cursor Agent X\n" in add_msg
    assert retire_msg.startswith("retire: tabs-in-makefiles\n")
    assert "Memrepo-By: agent\nMemrepo-Agent: Cursor Agent X\nMemrepo-Reason: the team moved to just\n" in retire_msg
    assert json.loads(text(forgot))["id"] == "tabs-in-makefiles"
    assert git(store, "status", "--porcelain").stdout == ""


def test_read_only_has_no_writing_tools_and_writes_nothing(store: str) -> None:
    async def steps(client: Any) -> Any:
        listed = [t.name for t in (await client.list_tools()).tools]
        refused = await client.call_tool("remember", {"title": "x", "description": "y", "cls": "fact"})
        return listed, refused

    listed, refused = session(store, steps, "--read-only")
    assert listed == READERS
    assert refused.is_error and "Unknown tool: remember" in text(refused)
    assert git(store, "log", "-1", "--format=%s").stdout.strip() == "two memories"


def test_memories_are_resources(store: str) -> None:
    async def steps(client: Any) -> Any:
        listed = (await client.list_resources()).resources
        templates = (await client.list_resource_templates()).resource_templates
        read = await client.read_resource("memrepo://memory/no-friday-deploys")
        return listed, templates, read

    listed, templates, read = session(store, steps)
    assert sorted(str(r.uri) for r in listed) == ["memrepo://memory/no-friday-deploys", "memrepo://memory/tabs-in-makefiles"]
    assert [t.uri_template for t in templates] == ["memrepo://memory/{memory_id}"]
    with open(os.path.join(store, "memory", "no-friday-deploys.md"), encoding="utf-8") as fh:
        assert read.contents[0].text == fh.read()


def test_without_the_sdk_the_command_names_the_extra(store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from memrepo.cli.main import cli

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else real(name, *a))
    result = CliRunner().invoke(cli, ["--repo", store, "mcp"])
    assert result.exit_code == 1
    assert "needs the MCP Python SDK" in result.output and "pip install 'memrepo[mcp]'" in result.output


def test_the_cli_and_the_prompt_path_never_load_the_sdk() -> None:
    code = ("import sys, memrepo.cli.main, memrepo.claude.prompt_hook, memrepo.mcp.tools; "
            "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_team_memory_recall_gives_is_found_shown_and_not_forgotten(me: str) -> None:
    prompt = "how long do our kafka topics keep retention of events?"

    async def steps(client: Any) -> Any:
        return [await client.call_tool(name, args) for name, args in (
            ("recall", {"prompt": prompt, "cwd": me}), ("search", {"query": "kafka retention"}),
            ("show", {"memory_id": "team-kafka-retention"}), ("history", {"memory_id": "team-kafka-retention"}),
            ("forget", {"memory_id": "team-kafka-retention", "reason": "we moved to pulsar"}),
            ("show", {"memory_id": "my-"}))]

    recalled, found, shown, hist, forgot, prefix = session(me, steps)
    assert "(id: team-kafka-retention; source: team acme)" in text(recalled)
    # Each was: [] (the user's own only), "no memory with id ... fix: find ids with `memrepo list`".
    assert [(h["id"], h["source"]) for h in json.loads(text(found))][0] == ("team-kafka-retention", "team acme")
    assert json.loads(text(shown))["source"] == "team acme" and "seven days" in json.loads(text(shown))["text"]
    assert [h["subject"] for h in json.loads(text(hist))] == ["team memory"]
    assert forgot.is_error and "not the user's own memory" in text(forgot) and "`memrepo forget team-kafka-retention`" in text(forgot)
    assert not prefix.is_error and json.loads(text(prefix))["id"] == "my-spaces" and "source" not in json.loads(text(prefix))
    assert git(me, "log", "-1", "--format=%s").stdout.strip() == "mine"


def test_control_characters_of_a_memory_reach_the_agent_as_escapes(store: str) -> None:
    body = "clear \x1b[2J, C1 \x9b31m, bidi \u202egnirts\n"
    write_memory(store, "escapes", title="Escapes in the body", description="A body with controls", body=body)
    assert commit_all(store, "escapes").returncode == 0

    async def steps(client: Any) -> Any:
        return await client.call_tool("show", {"memory_id": "escapes"}), await client.read_resource("memrepo://memory/escapes")

    shown, read = session(store, steps)
    for out in (text(shown), read.contents[0].text):  # was: \x9b and \u202e raw in show, all three in the resource
        assert not {"\x1b", "\x9b", "\u202e"} & set(out)
    assert json.loads(text(shown))["text"].endswith(body)  # the JSON still decodes to the file
    assert read.contents[0].text.endswith("clear \\x1b[2J, C1 \\x9b31m, bidi \\u202egnirts\n")
