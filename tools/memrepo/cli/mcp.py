"""`memrepo mcp`: the memory as a stdio MCP server, for agents without prompt hooks."""

from __future__ import annotations

import importlib.util

import click

from memrepo.cli.common import _fail_friendly, _repo
from memrepo.cli.term import echo
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


CLIENTS = ["cursor", "vscode", "claude-desktop", "windsurf"]


def _install_command(client: str) -> click.Command:
    @click.command(client)
    @click.pass_context
    @_fail_friendly
    def install(ctx: click.Context) -> None:
        from memrepo.agents import mcp_clients

        repo = _repo(ctx)
        path, changed = mcp_clients.install(client, repo)
        echo(f"{'added memrepo mcp to' if changed else 'already in'} {path} (memory repository {repo}); "
                   f"`memrepo uninstall {client}` puts the file back")

    install.help = (f"Add `memrepo mcp` to {mcp_clients_label(client)}'s MCP servers (its user config file).\n\n"
                    "The entry runs this interpreter on the memory repository (--repo, $MEMREPO_DIR or ~/.memrepo). "
                    "The file's bytes and mode before are kept, so uninstall restores them exactly.")
    return install


def _uninstall_command(client: str) -> click.Command:
    @click.command(client)
    @_fail_friendly
    def uninstall() -> None:
        from memrepo.agents import mcp_clients

        path, done = mcp_clients.uninstall(client)
        echo({"restored": f"restored {path} as it was before install", "deleted": f"deleted {path} (install created it)",
                    "entry removed": f"removed the memrepo entry from {path} (it changed since install; the rest is kept)",
                    "absent": f"no memrepo entry in {path}"}[done])

    uninstall.help = f"Remove `memrepo mcp` from {mcp_clients_label(client)}: the file's bytes and mode as before install."
    return uninstall


def mcp_clients_label(client: str) -> str:
    return {"cursor": "Cursor", "vscode": "VS Code", "claude-desktop": "Claude Desktop", "windsurf": "Windsurf"}[client]


def register(group: click.Group) -> None:
    group.add_command(mcp)
    # `memrepo install claude|codex|gemini` (cli/recall.py) installs hooks; these clients get the MCP server.
    for name, make in (("install", _install_command), ("uninstall", _uninstall_command)):
        parent = group.commands.get(name)
        if isinstance(parent, click.Group):
            for client in CLIENTS:
                parent.add_command(make(client))
