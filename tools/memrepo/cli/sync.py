"""`memrepo sync`: share memory through a git remote (pull, validate, reindex, push)."""

from __future__ import annotations

import click

from memrepo.cli.common import _fail_friendly, _json, _repo
from memrepo.cli.term import echo


@click.command("sync")
@click.option("--remote", help="Remote to sync with (default: the branch's upstream, else `origin`).")
@click.option("--no-push", is_flag=True, help="Pull and merge only; push nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print what happened as JSON.")
@click.option("-v", "--verbose", is_flag=True, help="Say so even when there was nothing to do.")
@click.pass_context
@_fail_friendly
def sync(ctx: click.Context, remote: str | None, no_push: bool, as_json: bool, verbose: bool) -> None:
    """Pull memories from the remote, validate and merge them, update the index, push yours.

    Merges (never rebases, never force-pushes). Stops with the repository unchanged, your side
    saved under refs/memrepo/rescue/, and the commands to run when the two sides conflict, when
    the merge would fail validation, or when the server's branch was rewritten. Prints nothing
    when there is nothing to do, so it is safe in cron; the daily sweep runs it when
    `index/local.json` says {"sync": {"auto": true}}.

    \b
    Example:
      git -C ~/.memrepo remote add origin git@github.com:me/memory.git
      memrepo sync
      */30 * * * * memrepo sync     (crontab)
    """
    from memrepo.store import sync as sync_lib

    report = sync_lib.sync(_repo(ctx), remote=remote, push=not no_push)
    if as_json:
        _json(report.as_dict())
    elif report.changed:
        echo(report.summary())
    elif verbose:
        echo(f"sync with {report.remote}: up to date")


def register(cli: click.Group) -> None:
    cli.add_command(sync)
