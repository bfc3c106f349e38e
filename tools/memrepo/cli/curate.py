"""Commands of the curate area: curate, review, undo (and the runs view of `memrepo log`)."""

from __future__ import annotations

from typing import Any

import click

from memrepo.cli.common import _fail_friendly, _json, _model_calls_judged, _repo
from memrepo.cli.term import echo, safe


def _decision_line(d: dict[str, Any]) -> str:
    ids = f"{d['loser']} -> {d['winner']}" if d.get("winner") and d.get("loser") else " ".join(d.get("ids", []))
    conf = f" ({d['confidence']:.2f})" if isinstance(d.get("confidence"), (int, float)) else ""
    return f"  {d.get('kind', '?'):<9} {ids}{conf}: {d.get('reason') or d.get('model_reason', '')}"


@click.command()
@click.option("--dry-run", is_flag=True, help="Decide and print, but commit nothing and make no review branch.")
@click.option("--no-model", is_flag=True, help="Only the deterministic pass (duplicates, missing paths, chains).")
@click.option("--sources", "across", is_flag=True,
              help="Instead, judge your memories against each team's and this project's: conflicts become proposals, never changes.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
@_fail_friendly
def curate(ctx: click.Context, dry_run: bool, no_model: bool, across: bool, as_json: bool) -> None:
    """Find duplicates, dead paths and contradictions; apply what passes the guards.

    The deterministic decisions of a run (duplicates, dead paths, broken chains) are one
    commit; each model supersession is a commit of its own, so `git revert` can take back
    just that one; a real tension that fails a guard becomes a proposal on the branch
    memrepo/review/<run>. Nothing is ever deleted.

    \b
    Example:
      memrepo curate --dry-run
      memrepo curate && memrepo review
    """
    from memrepo.passes.curate import curator as cur

    from memrepo.cli.progress import Reporter

    from memrepo.passes import model

    if across:
        return _across(ctx, dry_run, as_json)
    shown = Reporter()
    model.Tally.reset()
    report = cur.run(_repo(ctx), dry_run=dry_run, use_model=not no_model, progress=shown).as_dict()
    shown.close()
    if as_json:
        _json(report)
    else:
        echo(f"run {report['run_id']}{' (dry run: nothing written)' if dry_run else ''}, {report['model_calls']} model calls"
                   + (f" ({report['remembered']} pairs not asked again: their verdict still holds)" if report["remembered"] else ""))
        for title, key in (("applied", "applied"), ("sent to review", "review"), ("left alone", "skipped")):
            echo(f"{title}: {len(report[key])}")
            for d in report[key]:
                echo(_decision_line(d))
    _model_calls_judged("curate")


def _across(ctx: click.Context, dry_run: bool, as_json: bool) -> None:
    """`curate --sources` (issue 41, part 4): each conflict with both sources named and where it was proposed."""
    import os

    from memrepo.passes import model
    from memrepo.passes.curate import across

    model.Tally.reset()
    report = across.run(_repo(ctx), os.getcwd(), dry_run=dry_run).as_dict()
    if as_json:
        _json(report)
    else:
        echo(f"run {report['run_id']}{' (dry run: nothing written)' if dry_run else ''}, {report['model_calls']} model calls")
        echo(f"conflicts across sources: {len(report['conflicts'])}")
        for c in report["conflicts"]:
            echo(f"  personal: {c['personal']} / {c['source']}: {c['other']}: {c['relation']}, {c['winner']} would stay"
                 f" ({c['confidence']:.2f}) — {c['proposal']}")
        echo(f"left alone: {len(report['skipped'])}" + (f"; not asked again: {report['remembered']}" if report["remembered"] else ""))
        for f in report["failed"]:
            echo(f"  failed: {' / '.join(f['ids'])}: {f['reason']}")
    _model_calls_judged("curate")


def _proposal_line(p: dict[str, Any]) -> str:
    t = p["trailers"]
    return f"{p['id']}  {p['run']}  {p['subject']}  [{t.get('Confidence', '?')}] {t.get('Review', '')}".rstrip()


def _wrap(text: str, width: int) -> list[str]:
    import textwrap

    out: list[str] = []
    for line in text.splitlines() or [""]:
        out.extend(textwrap.wrap(line, width, replace_whitespace=False, drop_whitespace=True) or [""])
    return out


def side_by_side(left: tuple[str, str], right: tuple[str, str], width: int) -> str:
    """Two texts in two columns under their headings, each wrapped to its half of `width`."""
    col = max(20, (width - 3) // 2)
    a, b = _wrap(left[1], col), _wrap(right[1], col)
    rows = [f"{left[0][:col]:<{col}} | {right[0][:col]}", f"{'-' * col}-+-{'-' * col}"]
    rows += [f"{a[i] if i < len(a) else '':<{col}} | {b[i] if i < len(b) else ''}".rstrip() for i in range(max(len(a), len(b)))]
    return "\n".join(rows)


def _state(state: str) -> str:
    """How `review --all` names a proposal's state: a deciding commit's own action means accepted."""
    return state if state in ("open", "reject", "undone", "merged") else "accepted"


@click.group(invoke_without_command=True)
@click.option("--all", "every", is_flag=True,
              help="List decided proposals too, each with its state: accepted, reject(ed), undone (its run was undone), "
                   "merged (the forge squashed or rebased it in).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
@_fail_friendly
def review(ctx: click.Context, every: bool, as_json: bool) -> None:
    """List open proposals on memrepo/review/* branches (what the curator was not sure of).

    Branches `memrepo sync` fetched from the remote (origin/memrepo/review/*) count too,
    so every machine of a team sees the same proposals.

    \b
    Example:
      memrepo review
      memrepo review show 3f2a1c9
      memrepo review accept 3f2a1c9
      memrepo review push
    """
    if ctx.invoked_subcommand:
        return
    from memrepo.passes.curate import review as rev
    from memrepo.store import memories as store

    found = rev.proposals(store.require_repo(_repo(ctx)), include_closed=every)
    if as_json:
        return _json(found)
    for p in found:
        echo(_proposal_line(p) if not every else f"{_state(p['state']):<9} {_proposal_line(p)}")
    shown = sum(p["state"] == "open" for p in found)
    echo(f"{shown} open proposal{'s' * (shown != 1)}" + (f", {len(found) - shown} decided" if every else ""), err=True)


@review.command("show")
@click.argument("proposal", metavar="ID")
@click.option("--diff", "as_diff", is_flag=True, help="Print the proposal's commit message and diff instead.")
@click.option("--markdown", "as_markdown", is_flag=True, help="Print the body of its pull request (what `review push` sends).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
@_fail_friendly
def review_show(ctx: click.Context, proposal: str, as_diff: bool, as_markdown: bool, as_json: bool) -> None:
    """Show open proposal ID: the two memories side by side, the model's verdict and the guard that held it.

    \b
    Example:
      memrepo review show 3f2a1c9
    """
    import shutil

    from memrepo.passes.curate import review as rev
    from memrepo.store import memories as store

    repo = store.require_repo(_repo(ctx))
    p = rev.show(repo, proposal)
    if as_json:
        return _json(p)
    if as_markdown:
        from memrepo.passes.curate import prbody

        return echo(prbody.render({**p, "files": rev.files_of(repo, p["commit"])}), nl=False)
    if as_diff:
        return echo(p["patch"], nl=False)
    t = p["trailers"]
    echo(f"proposal {p['id']} (run {p['run']}): {p['subject']}")
    echo(p["summary"])
    if t.get("Reason"):
        echo(f"reason: {t['Reason']}")
    echo(f"held back by: {t.get('Review', '?')}")
    echo("changes: " + (", ".join(f"{c['status']} {c['path']}" for c in p["changes"]) or "none in your memory"))
    if p["beyond"]:
        echo(f"WARNING: this proposal also {'; '.join(p['beyond'])} — beyond the memories it names; "
             f"`review accept` refuses it (`--diff` shows all of it)")
    echo("")
    width = shutil.get_terminal_size((120, 24)).columns
    # escaped before wrapping, so that a column is as wide as what the terminal shows
    left, right = ((safe(f"{side['id']} ({side['role']})"), safe(side["text"])) for side in (p["loser"], p["winner"]))
    echo(side_by_side(left, right, width))
    echo(f"\naccept: memrepo review accept {p['id']}\nreject: memrepo review reject {p['id']} --reason \"…\"")


@review.command("accept")
@click.argument("proposal", metavar="ID")
@click.pass_context
@_fail_friendly
def review_accept(ctx: click.Context, proposal: str) -> None:
    """Bring proposal ID onto the current branch as a commit (the hooks validate it).

    \b
    Example:
      memrepo review accept 3f2a1c9
    """
    from memrepo.passes.curate import review as rev
    from memrepo.store import memories as store

    from memrepo.passes.curate import acrossview

    repo = store.require_repo(_repo(ctx))
    sha = rev.accept(repo, proposal)
    echo(f"Accepted proposal {proposal} as {sha[:12]}")
    there = acrossview.forwarded(repo, sha)
    if there:
        echo(f"proposed there: {there}")


@review.command("reject")
@click.argument("proposal", metavar="[ID]", required=False)
@click.option("--reason", default="", help="Why, recorded in the commit.")
@click.option("--all", "every", is_flag=True, help="Reject every open proposal (one run: `memrepo undo RUN` reopens them).")
@click.option("--run", "run_id", help="Reject every open proposal of this curate or capture run.")
@click.pass_context
@_fail_friendly
def review_reject(ctx: click.Context, proposal: str | None, reason: str, every: bool, run_id: str | None) -> None:
    """Reject proposal ID (or --all, or --run RUN): an empty commit records each, and the curator never proposes it again.

    \b
    Example:
      memrepo review reject 3f2a1c9 --reason "the list still holds five open decisions"
      memrepo review reject --run 2026-11-29T18-40-02-curate
    """
    from memrepo.passes.curate import review as rev
    from memrepo.store import memories as store

    if sum(map(bool, (proposal, every, run_id))) != 1:
        raise click.UsageError("give one proposal ID, or --all, or --run RUN")
    repo = store.require_repo(_repo(ctx))
    if proposal:
        sha = rev.reject(repo, proposal, reason)
        echo(f"Rejected proposal {proposal} ({sha[:12]})")
        return
    done = rev.reject_many(repo, run_id, reason)
    for pid, sha in done:
        echo(f"Rejected proposal {pid} ({sha[:12]})")
    echo(f"{len(done)} proposal{'s' * (len(done) != 1)} rejected" if done else "no open proposals to reject", err=True)


@review.command("push")
@click.option("--remote", help="Remote to push to (default: \"remote\" in index/local.json, else origin).")
@click.option("--forge", "forge_name", metavar="HOST/OWNER/REPO",
              help="Where the pull requests go, when the remote's URL does not say (default: \"forge\" in index/local.json).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
@_fail_friendly
def review_push(ctx: click.Context, remote: str | None, forge_name: str | None, as_json: bool) -> None:
    """Push review branches, and keep one pull request per open proposal on the forge.

    Uses the GitHub CLI (`gh api`, GitHub or GitHub Enterprise) when it is installed and
    logged in: opens a pull request per new proposal (both memories side by side, the
    verdict, the guard that held it back), updates the ones already open, closes those
    decided here, and records a reject for each one closed unmerged on the forge. A pull
    request merged on the forge arrives with `memrepo sync`. Without `gh`, logged out or
    offline, the branches are still pushed and each pull request's address is printed.

    \b
    Example:
      memrepo review push
      memrepo review push --remote origin --forge github.example.com/platform/memory
    """
    from memrepo.passes.curate import publish
    from memrepo.store import memories as store

    report = publish.push(store.require_repo(_repo(ctx)), remote, forge_name)
    if as_json:
        return _json(report.as_dict())
    for branch, n in report.branches:
        echo(f"pushed {branch} to {report.remote} ({n} open)")
    for e in report.events:
        where = f" #{e['number']}" + (f" {e['url']}" if e.get("url") else "")
        detail = f": {e['detail']}" if e.get("detail") else ""
        echo(f"proposal {e['id']}: pull request{where} {e['action']}{detail}")
    for pid, why in report.unpushed:
        echo(f"proposal {pid}: no pull request: {why}")
    if report.offline and (report.manual or report.branches):
        echo(f"no pull requests opened: {report.offline}", err=True)
        if report.manual:
            echo("open them by hand:")
            for line in report.manual:
                echo(f"  {line}")
    if not (report.branches or report.events or report.unpushed):
        echo("no open proposals to push", err=True)


@click.command()
@click.argument("run_id", metavar="RUN", required=False)
@click.option("--last", is_flag=True, help="Undo the newest run that is not itself an undo and was not undone.")
@click.option("--json", "as_json", is_flag=True, help="Print {run, commit} as JSON (commit null: the run changed no files).")
@click.pass_context
@_fail_friendly
def undo(ctx: click.Context, run_id: str | None, last: bool, as_json: bool) -> None:
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
    if as_json:
        return _json({"run": target, "commit": shas[0] if shas else None})
    echo(f"Undid run {target}" + (f" in {shas[0][:12]}" if shas else ": it changed no files"))


def show_runs(repo: str, limit: int, as_json: bool) -> None:
    """`memrepo log --runs`: runs, newest first, with each decision."""
    from memrepo.vcs import runs
    from memrepo.store import memories as store

    found = runs.list_runs(store.require_repo(repo), limit)
    if as_json:
        return _json(found)
    if not found:
        echo("no runs yet: each capture, curate, verify, import, sweep, add, edit and retire is a run "
             "(`memrepo undo RUN` reverts one)", err=True)
    for r in found:
        undone = f"  (undone by {r['undone_by']})" if r["undone_by"] else ""
        echo(f"{r['run']}  {len(r['decisions'])} decision{'s' * (len(r['decisions']) != 1)}{undone}")
        for d in r["decisions"]:
            conf = f" [{d['confidence']}]" if d["confidence"] else ""
            echo(f"  {d['commit'][:12]}  {d['action']:<10} {d['subject']}{conf}" + (f" — {d['reason']}" if d["reason"] else ""))


def register(group: click.Group) -> None:
    """Add this module's commands to the `memrepo` group."""
    for command in (curate, review, undo):
        group.add_command(command)
