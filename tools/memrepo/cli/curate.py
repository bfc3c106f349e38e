"""Commands of the curate area: curate, review, undo (and the runs view of `memrepo log`)."""

from __future__ import annotations

from typing import Any

import click

from memrepo.cli.main import _fail_friendly, _json, _repo


def _decision_line(d: dict[str, Any]) -> str:
    ids = f"{d['loser']} -> {d['winner']}" if d.get("winner") and d.get("loser") else " ".join(d.get("ids", []))
    conf = f" ({d['confidence']:.2f})" if isinstance(d.get("confidence"), (int, float)) else ""
    return f"  {d.get('kind', '?'):<9} {ids}{conf}: {d.get('reason') or d.get('model_reason', '')}"


@click.command()
@click.option("--dry-run", is_flag=True, help="Decide and print, but commit nothing and make no review branch.")
@click.option("--no-model", is_flag=True, help="Only the deterministic pass (duplicates, missing paths, chains).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
@_fail_friendly
def curate(ctx: click.Context, dry_run: bool, no_model: bool, as_json: bool) -> None:
    """Find duplicates, dead paths and contradictions; apply what passes the guards.

    Each applied decision is a commit; a real tension that fails a guard becomes a
    proposal on the branch memrepo/review/<run>. Nothing is ever deleted.

    \b
    Example:
      memrepo curate --dry-run
      memrepo curate && memrepo review
    """
    from memrepo.passes.curate import curator as cur

    report = cur.run(_repo(ctx), dry_run=dry_run, use_model=not no_model).as_dict()
    if as_json:
        return _json(report)
    click.echo(f"run {report['run_id']}{' (dry run: nothing written)' if dry_run else ''}, {report['model_calls']} model calls")
    for title, key in (("applied", "applied"), ("sent to review", "review"), ("left alone", "skipped")):
        click.echo(f"{title}: {len(report[key])}")
        for d in report[key]:
            click.echo(_decision_line(d))


def _proposal_line(p: dict[str, Any]) -> str:
    t = p["trailers"]
    return f"{p['n']:>3}  {p['run']}  {p['subject']}  [{t.get('Confidence', '?')}] {t.get('Review', '')}".rstrip()


@click.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
@_fail_friendly
def review(ctx: click.Context, as_json: bool) -> None:
    """List open proposals on memrepo/review/* branches (what the curator was not sure of).

    \b
    Example:
      memrepo review
      memrepo review show 1
      memrepo review accept 1
    """
    if ctx.invoked_subcommand:
        return
    from memrepo.passes.curate import review as rev
    from memrepo.store import memories as store

    found = rev.proposals(store.require_repo(_repo(ctx)))
    if as_json:
        return _json(found)
    for p in found:
        click.echo(_proposal_line(p))
    click.echo(f"{len(found)} open proposal{'s' * (len(found) != 1)}", err=True)


@review.command("show")
@click.argument("n", type=int)
@click.pass_context
@_fail_friendly
def review_show(ctx: click.Context, n: int) -> None:
    """Print open proposal N: its message, trailers and diff.

    \b
    Example:
      memrepo review show 1
    """
    from memrepo.passes.curate import review as rev
    from memrepo.store import memories as store

    click.echo(rev.show(store.require_repo(_repo(ctx)), n)["patch"], nl=False)


@review.command("accept")
@click.argument("n", type=int)
@click.pass_context
@_fail_friendly
def review_accept(ctx: click.Context, n: int) -> None:
    """Bring proposal N onto the current branch as a commit (the hooks validate it).

    \b
    Example:
      memrepo review accept 2
    """
    from memrepo.passes.curate import review as rev
    from memrepo.store import memories as store

    sha = rev.accept(store.require_repo(_repo(ctx)), n)
    click.echo(f"Accepted proposal {n} as {sha[:12]}")


@review.command("reject")
@click.argument("n", type=int)
@click.option("--reason", default="", help="Why, recorded in the commit.")
@click.pass_context
@_fail_friendly
def review_reject(ctx: click.Context, n: int, reason: str) -> None:
    """Reject proposal N: an empty commit records it, and the curator never proposes it again.

    \b
    Example:
      memrepo review reject 1 --reason "the list still holds five open decisions"
    """
    from memrepo.passes.curate import review as rev
    from memrepo.store import memories as store

    sha = rev.reject(store.require_repo(_repo(ctx)), n, reason)
    click.echo(f"Rejected proposal {n} ({sha[:12]})")


@review.command("push")
@click.option("--remote", help="Remote to push to (default: \"remote\" in memrepo.json, else origin).")
@click.pass_context
@_fail_friendly
def review_push(ctx: click.Context, remote: str | None) -> None:
    """Push review branches with open proposals; open a pull request where `gh` is logged in.

    \b
    Example:
      memrepo review push --remote origin
    """
    from memrepo.passes.curate import review as rev
    from memrepo.store import memories as store

    results = rev.push(store.require_repo(_repo(ctx)), remote)
    for r in results:
        click.echo(f"pushed {r['branch']} to {r['remote']} ({r['proposals']} open)" + (f": {r['pr']}" if r["pr"] else ""))
    if not results:
        click.echo("no open proposals to push", err=True)


@click.command()
@click.argument("run_id", metavar="RUN", required=False)
@click.option("--last", is_flag=True, help="Undo the newest run that is not itself an undo and was not undone.")
@click.pass_context
@_fail_friendly
def undo(ctx: click.Context, run_id: str | None, last: bool) -> None:
    """Revert every commit of RUN, newest first, in one commit (Memrepo-Action: undo).

    \b
    Example:
      memrepo undo 2026-11-29T18-40-02-curate
      memrepo undo --last
    """
    from memrepo.vcs import runs
    from memrepo.store import memories as store

    repo = store.require_repo(_repo(ctx))
    if bool(run_id) == last:
        raise click.UsageError("give a RUN id or --last (one of them)")
    target = runs.last_run(repo) if last else str(run_id)
    shas = runs.undo(repo, target)
    from memrepo.store import index

    index.update(repo)  # an undo of proposals alone is an empty commit no post-commit hook saw
    click.echo(f"Undid run {target}" + (f" in {shas[0][:12]}" if shas else ": it changed no files"))


def show_runs(repo: str, limit: int, as_json: bool) -> None:
    """`memrepo log --runs`: runs, newest first, with each decision."""
    from memrepo.vcs import runs
    from memrepo.store import memories as store

    found = runs.list_runs(store.require_repo(repo), limit)
    if as_json:
        return _json(found)
    for r in found:
        undone = f"  (undone by {r['undone_by']})" if r["undone_by"] else ""
        click.echo(f"{r['run']}  {len(r['decisions'])} decision{'s' * (len(r['decisions']) != 1)}{undone}")
        for d in r["decisions"]:
            conf = f" [{d['confidence']}]" if d["confidence"] else ""
            click.echo(f"  {d['commit'][:12]}  {d['action']:<10} {d['subject']}{conf}" + (f" — {d['reason']}" if d["reason"] else ""))


def register(group: click.Group) -> None:
    """Add this module's commands to the `memrepo` group."""
    for command in (curate, review, undo):
        group.add_command(command)
