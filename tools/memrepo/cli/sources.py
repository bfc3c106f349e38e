"""`memrepo team` and `memrepo sources`: the memory repositories one recall reads (issue 41)."""

from __future__ import annotations

import os

import click

from memrepo.cli.common import _fail_friendly, _json, _repo
from memrepo.cli.term import count, echo


@click.group()
def team() -> None:
    """Join a team's shared memory beside your own: recall reads both, writes go to yours."""


@team.command("add")
@click.argument("name")
@click.argument("url")
@click.option("--dir", "directory", type=click.Path(file_okay=False),
              help="Where to clone it (default: ~/.local/share/memrepo/teams/NAME).")
@click.option("--writable", is_flag=True, help="Let `memrepo sync` push to it (default: read-only on this machine).")
@click.option("--branch", metavar="NAME", help="The remote's branch that holds the memory, when it holds memory on several.")
@click.option("--json", "as_json", is_flag=True,
              help="Print {name, path, url, writable, memories, did, kept_writable} as JSON.")
@click.pass_context
@_fail_friendly
def team_add(ctx: click.Context, name: str, url: str, directory: str | None, writable: bool, branch: str | None,
             as_json: bool) -> None:
    """Clone the team memory at URL and recall from it as NAME.

    The clone is listed in this machine's index/local.json (never in a shared repository);
    `memrepo sync` pulls it with your own memory, and pushes to it only with --writable.

    \b
    Example:
      memrepo team add acme git@github.com:acme/memory.git
    """
    import dataclasses

    from memrepo.store import sources

    joined = sources.add_team(_repo(ctx), name, url, directory, writable, branch)
    if as_json:
        return _json(dataclasses.asdict(joined))
    mode = "writable" if joined.writable else "read-only"
    echo(f"team {name}: {count(joined.memories, 'memory', 'memories')} in {joined.path} ({mode}); recalled from the next prompt")
    if joined.kept_writable:
        echo(f"  kept writable, as it was joined: to make it read-only, `memrepo team remove {name}`, then add it again"
             " without --writable")


@team.command("remove")
@click.argument("name")
@click.pass_context
@_fail_friendly
def team_remove(ctx: click.Context, name: str) -> None:
    """Stop recalling from team NAME (its clone is left where it is)."""
    from memrepo.store import sources

    folder = sources.remove_team(_repo(ctx), name)
    echo(f"team {name}: no longer recalled; its clone is still in {folder}")


@team.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print {name: {path, writable}} as JSON.")
@click.pass_context
@_fail_friendly
def team_list(ctx: click.Context, as_json: bool) -> None:
    """The teams this machine recalls from."""
    from memrepo.store import sources

    known = sources.teams(_repo(ctx))
    if as_json:
        return _json(known)
    for name, entry in known.items():
        echo(f"{name}  {entry.get('path')}  {'writable' if entry.get('writable') else 'read-only'}")


@click.command("sources")
@click.option("--cwd", type=click.Path(file_okay=False), help="The folder a prompt comes from (its project memory).")
@click.option("--refresh", is_flag=True, help="Bring each team's and the project's cache up to date, then the merged cache of all of them.")
@click.option("--json", "as_json", is_flag=True, help="Print [{kind, name, root, cache, fresh}] as JSON.")
@click.pass_context
@_fail_friendly
def sources_(ctx: click.Context, cwd: str | None, refresh: bool, as_json: bool) -> None:
    """The memory sources recall reads for a prompt in CWD: personal, teams, project.

    \b
    Example:
      memrepo sources --cwd ~/src/shop --refresh
    """
    from memrepo.store import sources

    rows = sources.describe(_repo(ctx), os.path.abspath(cwd or os.getcwd()), refresh)
    if as_json:
        return _json(rows)
    for row in rows:
        echo(f"{row['kind']:<8} {row['name']:<16} {row['root']}  ({row['state']})")


@click.command("share")
@click.argument("note_id", metavar="ID")
@click.option("--to", "to", required=True, metavar="TEAM|project",
              help="A team's name (a branch and a pull request there), or `project` (a file in the code repository's .memrepo/).")
@click.option("--cwd", type=click.Path(file_okay=False), help="The code repository, for --to project (default: here).")
@click.option("--forge", "forge_name", metavar="HOST/OWNER/REPO", help="The team remote's forge, when its URL names none.")
@click.option("--json", "as_json", is_flag=True, help="Print {id, to, path, url, manual} as JSON.")
@click.pass_context
@_fail_friendly
def share(ctx: click.Context, note_id: str, to: str, cwd: str | None, forge_name: str | None, as_json: bool) -> None:
    """Propose your memory ID to a team (by pull request) or to the project (a file to commit).

    Nothing is written into a team's memory until someone merges the pull request; a project's
    memory is committed and reviewed with the code.

    \b
    Examples:
      memrepo share deploy-freeze --to acme
      memrepo share checkout-flag --to project && git commit .memrepo -m "memory: checkout flag"
    """
    from memrepo.passes import share as share_lib

    done = share_lib.share(_repo(ctx), note_id, to, os.path.abspath(cwd or os.getcwd()), forge_name)
    if as_json:
        return _json(done.as_dict())
    where = f" as {done.path}" if done.path else ""
    echo(f"proposed {done.id} to {done.to}{where}" + (f": {done.url}" if done.url else ""))
    for line in done.manual:
        echo(f"  {line}")


def register(cli: click.Group) -> None:
    cli.add_command(team)
    cli.add_command(sources_)
    cli.add_command(share)
