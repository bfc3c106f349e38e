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
    from memrepo.errors import MemrepoError
    from memrepo.store import join, sources, sync as sync_lib

    repo = _repo(ctx)
    has_teams = bool(sources.teams(repo)) and remote is None
    report, failed = None, []
    try:
        # A personal repository kept on this machine alone, beside teams: only the teams sync.
        if not has_teams or join.default_remote(repo) is not None:
            report = sync_lib.sync(repo, remote=remote, push=not no_push)
    except MemrepoError as exc:
        if not has_teams:
            raise
        failed.append(("personal", exc))
    teams = sources.sync_teams(repo) if has_teams else []  # each team's clone too (issue 41): read-only ones never push
    failed += [(name, r) for name, r in teams if isinstance(r, MemrepoError)]
    done = [("", report)] if report is not None else []
    done += [(f"team {name}: ", r) for name, r in teams if not isinstance(r, MemrepoError)]
    if as_json:
        _json(report.as_dict() if not has_teams and report is not None else
              {"personal": report.as_dict() if report is not None else None,
               "teams": {name: (r.as_dict() if not isinstance(r, MemrepoError) else {"error": str(r)}) for name, r in teams}})
    else:
        for prefix, r in done:
            if r.changed:
                echo(prefix + r.summary())
            elif verbose:
                echo(f"{prefix}sync with {r.remote}: up to date")
    if failed:
        raise MemrepoError("; ".join(f"{name}: {exc}" for name, exc in failed),
                           hint=next((exc.hint for _, exc in failed if exc.hint), None) or "see the message above")


def register(cli: click.Group) -> None:
    cli.add_command(sync)
