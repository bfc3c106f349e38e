"""Commands of the skills area: the transcript index (`transcripts`, `transcript`) and skill drafts (`skills`)."""

from __future__ import annotations

import click

from memrepo.cli.common import _fail_friendly, _json, _repo
from memrepo.cli.term import echo


@click.group()
def transcripts() -> None:
    """Index and search Claude Code session transcripts (the third level of recall)."""


@transcripts.command("index")
@click.argument("directory", required=False, type=click.Path(exists=True))
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
@_fail_friendly
def transcripts_index(ctx: click.Context, directory: str | None, as_json: bool) -> None:
    """Add new turns of the transcripts under DIRECTORY (default: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects) to index/transcripts.sqlite3.

    Incremental: unchanged files are skipped, grown ones read from where they stopped.

    \b
    Example:
      memrepo transcripts index ~/.claude/projects/-home-ann-src-app
    """
    from memrepo.store import sessions, memories as store

    from memrepo.cli.progress import Reporter

    shown = Reporter()
    report = sessions.index(store.require_repo(_repo(ctx)), directory, progress=shown)
    shown.close()
    if as_json:
        return _json(report.as_dict())
    echo(f"{report.files} files ({report.new} new, {report.grown} grown, {report.redone} rewritten, "
         f"{report.unchanged} unchanged), {report.turns} turns added"
         + (f"; {report.own} of memrepo's own model calls left out" if report.own else ""))


@transcripts.command("search")
@click.argument("query")
@click.option("--project", help="Only turns of this project.")
@click.option("--since", help="Only turns on or after this date (YYYY-MM-DD).")
@click.option("-n", "--limit", default=10, show_default=True, type=click.IntRange(min=1), help="At most this many turns.")
@click.option("--json", "as_json", is_flag=True, help="Print the hits as JSON.")
@click.pass_context
@_fail_friendly
def transcripts_search(ctx: click.Context, query: str, project: str | None, since: str | None, limit: int, as_json: bool) -> None:
    """Rank indexed turns for QUERY; shows session, time, turn and a snippet.

    \b
    Example:
      memrepo transcripts search "alembic upgrade" --project shop --since 2026-11-01
    """
    from memrepo.store import sessions, memories as store

    hits = sessions.search(store.require_repo(_repo(ctx)), query, project, since, limit)
    if as_json:
        return _json(hits)
    for h in hits:
        echo(f"{h['session'][:8]} {h['time'][:16]} {h['project'] or '-'} {h['role']} {h['uuid']}\n    {h['snippet']}")
    if not hits:
        echo("no turns match (run `memrepo transcripts index` to add new sessions)")


@click.command()
@click.argument("path_or_session")
@click.option("--turn", "turn_uuid", help="Show this turn (uuid or its prefix) and its neighbours.")
@click.option("--context", default=3, show_default=True, help="Turns to show either side of --turn.")
@click.option("--json", "as_json", is_flag=True, help="Print the turns as JSON.")
@click.pass_context
@_fail_friendly
def transcript(ctx: click.Context, path_or_session: str, turn_uuid: str | None, context: int, as_json: bool) -> None:
    """Print an indexed session's turns, or one turn and its neighbours (the third level of recall).

    `memrepo transcript` and `memrepo transcripts show` are the same command: the short one is what
    the recalled block names.

    \b
    Example:
      memrepo transcript 9f9ec6e8 --turn 4d1c0a2e --context 2
    """
    from memrepo.store import sessions, memories as store

    rows = sessions.around(store.require_repo(_repo(ctx)), path_or_session, turn_uuid, context)
    if as_json:
        return _json(rows)
    echo(f"session {rows[0]['session']} ({rows[0]['project'] or '-'})")
    for r in rows:
        echo(f"{'>' if r.get('focus') else ' '} {r['uuid']} {r['time']} {r['role']}")
        echo("\n".join("    " + line for line in r["text"].splitlines()))


@click.group()
def skills() -> None:
    """Recurring procedures and inert skill drafts (never loaded; a person promotes them)."""


@skills.command("detect")
@click.option("--json", "as_json", is_flag=True, help="Print the candidates as JSON.")
@click.pass_context
@_fail_friendly
def skills_detect(ctx: click.Context, as_json: bool) -> None:
    """List procedures seen in 3 or more sessions of the transcript index, with their sessions.

    \b
    Example:
      memrepo transcripts index && memrepo skills detect
    """
    from memrepo.passes.skills import procedures
    from memrepo.store import memories as store

    found = procedures.candidates(store.require_repo(_repo(ctx)))
    if as_json:
        return _json(found)
    for c in found:
        echo(f"{c['n']}. [{c['id']}] {' → '.join(c['steps'])}")
        echo(f"   seen in {len(c['sessions'])} sessions: {', '.join(c['sessions'])}")
    if not found:
        echo("no procedure recurs in 3 or more indexed sessions")


@skills.command("draft")
@click.argument("numbers", nargs=-1, type=int, metavar="[N]...")
@click.option("--all", "all_", is_flag=True, help="Draft every candidate.")
@click.option("--json", "as_json", is_flag=True, help="Print the outcomes as JSON.")
@click.pass_context
@_fail_friendly
def skills_draft(ctx: click.Context, numbers: tuple[int, ...], all_: bool, as_json: bool) -> None:
    """Have the model draft SKILL.md for candidates N (from `skills detect`), gate and commit each.

    \b
    Example:
      memrepo skills draft 1
    """
    from memrepo.passes.skills import drafts as sk

    if not numbers and not all_:
        raise click.UsageError("give candidate numbers (see `memrepo skills detect`) or --all")
    outcomes = sk.draft(_repo(ctx), None if all_ else list(numbers))
    if as_json:
        return _json(outcomes)
    for o in outcomes:
        echo(f"{'drafted' if o['admitted'] else 'rejected'} {o['name'] or '-'}"
             + ("" if o["admitted"] else ": " + "; ".join(o["reasons"])))


@skills.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the drafts as JSON.")
@click.pass_context
@_fail_friendly
def skills_list(ctx: click.Context, as_json: bool) -> None:
    """List skill drafts and rejected drafts with the gate's reasons.

    \b
    Example:
      memrepo skills list
    """
    from memrepo.passes.skills import drafts as sk

    rows = sk.list_skills(_repo(ctx))
    if as_json:
        return _json(rows)
    for r in rows:
        tail = "; ".join(r["reasons"]) if r["reasons"] else ("promoted" if r["promoted"] else "")
        echo(f"{r['state']:8} {r['name']} ({r['sessions']} sessions){': ' + tail if tail else ''}")
    if not rows:
        echo("no skill drafts yet: `memrepo skills detect` finds recurring procedures, "
             "`memrepo skills draft` drafts them", err=True)


@skills.command("show")
@click.argument("name")
@click.pass_context
@_fail_friendly
def skills_show(ctx: click.Context, name: str) -> None:
    """Print a draft's SKILL.md (and, for a rejected one, the gate's reasons).

    \b
    Example:
      memrepo skills show alembic-migration
    """
    from memrepo.passes.skills import drafts as sk

    found = sk.show(_repo(ctx), name)
    echo(found["text"], nl=False)
    for reason in found["record"].get("reasons", []):
        echo(f"rejected: {reason}")


@skills.command("promote")
@click.argument("name")
@click.option("--project", "project_dir", type=click.Path(exists=True, file_okay=False),
              help="Install into DIR/.claude/skills/ instead of ~/.claude/skills/.")
@click.pass_context
@_fail_friendly
def skills_promote(ctx: click.Context, name: str, project_dir: str | None) -> None:
    """Copy an admitted draft into Claude Code's skills folder (a person's decision) and commit the record.

    \b
    Example:
      memrepo skills promote alembic-migration --project ~/src/shop
    """
    from memrepo.passes.skills import drafts as sk

    echo(f"promoted {name} to {sk.promote(_repo(ctx), name, project_dir)}")


def register(group: click.Group) -> None:
    """Add this module's commands to the `memrepo` group."""
    transcripts.add_command(transcript, "show")
    group.add_command(transcripts)
    group.add_command(transcript)
    group.add_command(skills)
