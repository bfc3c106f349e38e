"""`memrepo export`: the project's rules and preferences written where hook-less agents read them."""

from __future__ import annotations

import os

import click

from memrepo.cli.common import _fail_friendly, _json, _repo
from memrepo.cli.term import echo


@click.command()
@click.argument("target", type=click.Choice(["agents-md", "claude-md", "gemini-md", "cursor-rules"]))
@click.option("--project", "directory", type=click.Path(file_okay=False), default=None,
              help="The project's folder (default: the current one); the file goes at its git top level.")
@click.option("--remove", is_flag=True, help="Take the block out again, exactly as it was put in.")
@click.option("--json", "as_json", is_flag=True, help="Print {path, action, written, left_out, lines, chars, ...} as JSON.")
@click.pass_context
@_fail_friendly
def export(ctx: click.Context, target: str, directory: str | None, remove: bool, as_json: bool) -> None:
    """Write the project's rules and preferences into one marked block of TARGET's file.

    For agents without memrepo's prompt hooks: agents-md (AGENTS.md), claude-md (CLAUDE.md),
    gemini-md (GEMINI.md) or cursor-rules (.cursor/rules/memrepo.mdc). The block, between
    `<!-- memrepo:begin -->` and `<!-- memrepo:end -->`, holds the active rules and
    preferences of this project and the global ones, cut to stay under what that agent reads;
    text outside it is never touched. Run it again to refresh; --remove takes it out.

    \b
    Example:
      memrepo export agents-md --project ~/work/tallybird
      memrepo export cursor-rules --remove
    """
    from memrepo.passes import export as ex

    where = directory or os.getcwd()
    report = ex.remove(target, where) if remove else ex.export(_repo(ctx), target, where)
    if as_json:
        return _json(report.as_dict())
    if report.action in ("removed", "absent"):
        echo(f"{'removed the memrepo block from' if report.action == 'removed' else 'no memrepo block in'} {report.path}")
        return
    echo(f"{report.action} {report.path}: {len(report.written)} rules and preferences, "
               f"{report.lines} lines, {report.chars} characters ({report.bound})")
    if report.left_out:
        echo(f"left out to stay under that: {', '.join(report.left_out)}", err=True)


def register(group: click.Group) -> None:
    group.add_command(export)
