"""`memrepo mcp`: the memory as a stdio MCP server, for agents without prompt hooks."""

from __future__ import annotations

import importlib.util

import click

from memrepo.cli.main import _fail_friendly, _repo
from memrepo.errors import MemrepoError


@click.command()
@click.option("--read-only", is_flag=True, help="Serve recall, search, show, history and why only: no remember or forget.")
@click.pass_context
@_fail_friendly
def mcp(ctx: click.Context, read_only: bool) -> None:
    """Serve the memory over the Model Context Protocol on stdin/stdout.

    For agents that reach outside tools through MCP (Cursor, VS Code, Claude Desktop, Windsurf,
    Zed, Cline…): `recall` (the prompt hook's own decision), `search`, `show`, `history`, `why`,
    `remember` and `forget` (each a commit naming the agent), and each memory as a resource
    memrepo://memory/<id>. Needs the `mcp` extra.

    \b
    Example (an MCP client's server entry):
      {"command": "memrepo", "args": ["mcp"]}
      {"command": "memrepo", "args": ["--repo", "~/team-memory", "mcp", "--read-only"]}
    """
    from memrepo.store import memories as store

    if importlib.util.find_spec("mcp") is None:
        raise MemrepoError("memrepo mcp needs the MCP Python SDK, which is not installed",
                           hint="pip install 'memrepo[mcp]'")
    repo = store.require_repo(_repo(ctx))
    from memrepo.mcp import server

    server.serve(repo, read_only)


def register(group: click.Group) -> None:
    group.add_command(mcp)
