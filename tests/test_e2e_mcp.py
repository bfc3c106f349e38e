"""End-to-end: real agent CLIs with `memrepo mcp` as their MCP server and no memrepo hooks.

Claude Code: the pinned CLI runs with `--mcp-config` naming `python -m memrepo --repo R mcp` (and
`--strict-mcp-config`, so nothing else is loaded) against the fake Messages API (tests/e2e). The
fake answers the prompt with a scripted call of the server's tool, the CLI calls it over stdio,
and the test asserts on what the fake received back (the tool's result, in the model's next
request) and on the memory repository. Gemini CLI: the same through `mcpServers` in its
settings.json, against the fake Gemini API; Codex CLI through `mcp_servers` in its config.toml,
against the fake Responses API. This is what an agent without prompt hooks gets.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from e2e import agents  # noqa: E402
from e2e.fake_gemini import FakeGeminiAPI  # noqa: E402
from e2e.fake_openai import FakeOpenAIAPI  # noqa: E402
from e2e.harness import GIT_IDENTITY_ENV, claude_bin, fake_api, result_json, run_claude  # noqa: E402,F401  (fixtures)
from test_e2e_claude import MEMORIES, _run, _setup_env  # noqa: E402
from test_e2e_plugin_loop import _tool_results  # noqa: E402

pytestmark = pytest.mark.e2e

TIMEOUT = 120


@pytest.fixture
def memories(tmp_path: Path) -> Path:
    env = _setup_env(tmp_path)
    repo = tmp_path / "memories"
    _run([sys.executable, "-m", "memrepo", "init", str(repo)], cwd=tmp_path, env=env)
    for mem_id, text in MEMORIES.items():
        (repo / "memory" / f"{mem_id}.md").write_text(textwrap.dedent(text), encoding="utf-8")
    _run(["git", "-C", str(repo), "add", "-A"], cwd=tmp_path, env=env)
    _run(["git", "-C", str(repo), "commit", "-q", "-m", "e2e: memories"], cwd=tmp_path, env=env)
    return repo


def _claude(prompt: str, repo: Path, cwd: Path, fake_api, claude_bin: str, tools: str) -> list:
    config = cwd.parent / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"memrepo": {
        "command": sys.executable, "args": ["-m", "memrepo", "--repo", str(repo), "mcp"]}}}), encoding="utf-8")
    # ENABLE_TOOL_SEARCH=false: MCP tools are declared to the model up front, not deferred behind ToolSearch.
    proc, reqs = run_claude(prompt, plugin_dir=None, cwd=cwd, fake_api=fake_api, claude_bin=claude_bin, timeout=TIMEOUT,
                            env_extra={"ENABLE_TOOL_SEARCH": "false"},
                            extra_args=["--mcp-config", str(config), "--strict-mcp-config", "--allowedTools", tools])
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-2000:])
    assert result_json(proc).get("is_error") is False, proc.stdout[-2000:]
    return reqs


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, timeout=30).stdout


def test_recall_over_mcp_reaches_the_models_next_request(tmp_path: Path, memories: Path, claude_bin: str,
                                                         fake_api) -> None:
    cwd = tmp_path / "project"
    cwd.mkdir()
    prompt = "it's friday 17:00, can I still ship this hotfix to production?"
    fake_api.script_tool(prompt, "mcp__memrepo__recall", {"prompt": prompt, "cwd": str(cwd)})
    reqs = _claude(prompt, memories, cwd, fake_api, claude_bin, "mcp__memrepo__recall")
    # The model saw the tool among its tools, with the description that says when to call it ...
    tools = {t.get("name"): t for r in reqs if isinstance(r.body, dict) for t in r.body.get("tools") or []}
    assert "before acting on a task" in tools["mcp__memrepo__recall"]["description"]
    # ... and the hook's own block came back in the next request as the tool's result.
    out = _tool_results(reqs)
    assert "\n<memrepo-memories>\n- (rule) Production deploys are frozen on Fridays after 16:00: " in out, out
    assert "(id: deploy-freeze-friday)\n" in out, out
    log = [json.loads(line) for line in (memories / "index" / "recall-log.jsonl").read_text().splitlines()]
    assert log[-1]["agent"].startswith("mcp:") and log[-1]["injected"][0]["id"] == "deploy-freeze-friday"


def test_remember_over_mcp_commits_a_memory_naming_the_agent(tmp_path: Path, memories: Path, claude_bin: str,
                                                             fake_api) -> None:
    cwd = tmp_path / "project"
    cwd.mkdir()
    prompt = "remember: the office VPN gateway restarts every day at noon"
    fake_api.script_tool(prompt, "mcp__memrepo__remember", {
        "title": "The VPN gateway restarts at noon", "cls": "fact", "topics": ["vpn"],
        "description": "The office VPN gateway restarts every day at 12:00; reconnect after 12:05"})
    reqs = _claude(prompt, memories, cwd, fake_api, claude_bin, "mcp__memrepo__remember")
    out = _tool_results(reqs)
    new_id = json.loads(out)["id"]
    note = (memories / "memory" / f"{new_id}.md").read_text(encoding="utf-8")
    assert "\nsource: agent\n" in note and "restarts every day at 12:00" in note
    message = _git(memories, "log", "-1", "--format=%B")
    assert message.startswith(f"add: {new_id}\n") and "\nMemrepo-Action: add\n" in message
    agent = [line for line in message.splitlines() if line.startswith("Memrepo-Agent: ")]
    assert agent and agent[0] != "Memrepo-Agent: mcp", message  # Claude Code named itself in the handshake
    assert _git(memories, "status", "--porcelain") == ""


def _gemini_responses(api: FakeGeminiAPI) -> list[dict]:
    """Every functionResponse the CLI sent back to the model."""
    return [p["functionResponse"] for r in api.requests if isinstance(r.body, dict) for c in r.body.get("contents") or []
            for p in c.get("parts") or [] if isinstance(p, dict) and "functionResponse" in p]


def test_gemini_cli_with_mcp_servers_recalls_and_remembers(tmp_path: Path, memories: Path) -> None:
    cwd = tmp_path / "project"
    cwd.mkdir()
    with FakeGeminiAPI("Noted.") as api:
        home = agents.gemini_home(tmp_path / "gemini")
        settings_path = home.home / ".gemini" / "settings.json"
        settings = json.loads(settings_path.read_text(encoding="utf-8"))
        # Gemini CLI hands an MCP server a filtered environment (no GIT_*): the identity goes in its entry,
        # as a person without a ~/.gitconfig would put it.
        settings["mcpServers"] = {"memrepo": {"command": sys.executable, "env": GIT_IDENTITY_ENV,
                                              "args": ["-m", "memrepo", "--repo", str(memories), "mcp"]}}
        settings_path.write_text(json.dumps(settings), encoding="utf-8")
        allow = ["--allowed-mcp-server-names", "memrepo", "--yolo"]

        prompt = "can I ship this hotfix to production on friday at 17:00?"
        api.script_tool(prompt, "mcp_memrepo_recall", {"prompt": prompt, "cwd": str(cwd)})
        proc = agents.run_gemini(home, prompt, cwd, api.base_url, extra_args=allow)
        assert proc.returncode == 0, (proc.stdout, proc.stderr[-3000:])
        first = json.dumps(api.requests[0].body)
        assert "Call `recall` with the user's request before you act on a task" in first  # the server's instructions
        out = _gemini_responses(api)[0]["response"]["output"]
        assert "<memrepo-memories>\n- (rule) Production deploys are frozen on Fridays after 16:00: " in out, out

        api.clear()
        prompt = "remember that the staging VPN restarts at noon"
        api.script_tool(prompt, "mcp_memrepo_remember", {
            "title": "The staging VPN restarts at noon", "cls": "fact",
            "description": "The staging VPN gateway restarts every day at 12:00; reconnect after 12:05"})
        proc = agents.run_gemini(home, prompt, cwd, api.base_url, extra_args=allow)
        assert proc.returncode == 0, (proc.stdout, proc.stderr[-3000:])
        out = _gemini_responses(api)[0]["response"]["output"]  # Gemini wraps it in <untrusted_context>
        new_id = json.loads(out[out.index("{"):out.rindex("}") + 1])["id"]
    assert "\nsource: agent\n" in (memories / "memory" / f"{new_id}.md").read_text(encoding="utf-8")
    message = _git(memories, "log", "-1", "--format=%B")
    assert message.startswith(f"add: {new_id}\n")
    assert [line for line in message.splitlines() if line.startswith("Memrepo-Agent: ")] != ["Memrepo-Agent: mcp"]


def _codex_outputs(api: FakeOpenAIAPI) -> str:
    """The text of every function call output Codex sent back to the model."""
    out = []
    for r in api.requests:
        for item in (r.body or {}).get("input") or [] if isinstance(r.body, dict) else []:
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                value = item.get("output")
                out += [v.get("text", "") for v in value if isinstance(v, dict)] if isinstance(value, list) else [str(value)]
    return "\n".join(out)


def test_codex_cli_with_mcp_servers_recalls_and_remembers(tmp_path: Path, memories: Path) -> None:
    cwd = tmp_path / "project"
    cwd.mkdir()
    with FakeOpenAIAPI("Noted.") as api:
        home = agents.codex_home(tmp_path / "codex", api.base_url)
        config = home.home / ".codex" / "config.toml"
        identity = ", ".join(f'{k} = "{v}"' for k, v in GIT_IDENTITY_ENV.items())
        # `required`: codex exec sends its first request without waiting for a server that is not,
        # and memrepo mcp takes about a second to start (the SDK's import). `approve`: exec runs
        # with approval policy never, which refuses an MCP call that would ask.
        config.write_text(config.read_text(encoding="utf-8") + f"""
[mcp_servers.memrepo]
command = {json.dumps(sys.executable)}
args = ["-m", "memrepo", "--repo", {json.dumps(str(memories))}, "mcp"]
env = {{ {identity} }}
required = true
default_tools_approval_mode = "approve"
""", encoding="utf-8")

        prompt = "can I ship this hotfix to production on friday at 17:00?"
        api.script_tool(prompt, "recall", {"prompt": prompt, "cwd": str(cwd)}, namespace="mcp__memrepo")
        proc = agents.run_codex(home, prompt, cwd)
        assert proc.returncode == 0, (proc.stdout, proc.stderr[-3000:])
        tools = {t.get("name"): t for t in api.requests[0].body.get("tools") or []}
        recall = {t["name"]: t for t in tools["mcp__memrepo"]["tools"]}["recall"]
        assert "before acting on a task" in recall["description"]
        out = _codex_outputs(api)
        assert "<memrepo-memories>\n- (rule) Production deploys are frozen on Fridays after 16:00: " in out, out

        api.clear()
        prompt = "remember that the staging VPN restarts at noon"
        api.script_tool(prompt, "remember", {
            "title": "The staging VPN restarts at noon", "cls": "fact",
            "description": "The staging VPN gateway restarts every day at 12:00; reconnect after 12:05"}, namespace="mcp__memrepo")
        proc = agents.run_codex(home, prompt, cwd)
        assert proc.returncode == 0, (proc.stdout, proc.stderr[-3000:])
        out = _codex_outputs(api)
        new_id = json.loads(out[out.index("{"):out.rindex("}") + 1])["id"]
    assert "\nsource: agent\n" in (memories / "memory" / f"{new_id}.md").read_text(encoding="utf-8")
    message = _git(memories, "log", "-1", "--format=%B")
    assert message.startswith(f"add: {new_id}\n") and "\nMemrepo-Agent: codex-mcp-client\n" in message
