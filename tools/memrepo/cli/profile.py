"""Commands of the profile area: the always-on profile, the MEMORY.md / CLAUDE.md audit, importers."""

from __future__ import annotations

from typing import Any

import click

from memrepo.cli.common import _fail_friendly, _json, _repo
from memrepo.cli.term import count, echo


@click.group()
def profile() -> None:
    """The always-on profile: short lines about the user, injected at every session start."""


@profile.command("add")
@click.argument("text")
@click.option("--user", "source", flag_value="user", default=True, help="The person said it (the default).")
@click.option("--inferred", "source", flag_value="inferred", help="An agent concluded it; demoted before anything the user said.")
@click.pass_context
@_fail_friendly
def profile_add(ctx: click.Context, text: str, source: str) -> None:
    """Add a line; when the profile would pass its bound, demote the weakest lines to memories.

    Never fails for lack of room: inferred lines go before anything the user said, then the
    least used, then the oldest, each into a searchable memory in the same commit.

    \b
    Example:
      memrepo profile add "Works in Lisbon time; no meetings before 09:30"
      memrepo profile add --inferred "Prefers small pull requests"
    """
    from memrepo.passes import profile as prof

    r = prof.add(_repo(ctx), text, source)
    echo(f"Added ({r['commit'][:12]})" if r["added"] else "Already in the profile; nothing to do")
    for d in r["demoted"]:
        echo(f"  demoted to memory {d['id']}: {d['text']}")
    echo(f"profile: {r['size']:,} of {r['bound']:,} characters", err=True)


@profile.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
@_fail_friendly
def profile_show(ctx: click.Context, as_json: bool) -> None:
    """Numbered profile lines with provenance, date added and recall uses, then size and bound.

    \b
    Example:
      memrepo profile show
    """
    from memrepo.passes import profile as prof

    data = prof.show(_repo(ctx))
    if as_json:
        return _json(data)
    for n, e in enumerate(data["entries"], start=1):
        echo(f"{n:3}. [{e['source']:<8} {e['added'] or '?':<10} used {e['uses']:>3}] {e['text']}")
    echo(f"{count(len(data['entries']), 'line')}, {data['size']:,} of {data['bound']:,} characters ({data['path']})")


@profile.command("remove")
@click.argument("n", type=int)
@click.pass_context
@_fail_friendly
def profile_remove(ctx: click.Context, n: int) -> None:
    """Remove line N (see `profile show`); git history keeps it.

    \b
    Example:
      memrepo profile remove 3
    """
    from memrepo.passes import profile as prof

    r = prof.remove(_repo(ctx), n)
    echo(f"Removed: {r['removed']['text']} ({r['commit'][:12]})")


@profile.command("demote")
@click.argument("n", type=int)
@click.pass_context
@_fail_friendly
def profile_demote(ctx: click.Context, n: int) -> None:
    """Move line N out of the profile into a searchable memory (class preference).

    \b
    Example:
      memrepo profile demote 3
    """
    from memrepo.passes import profile as prof

    r = prof.demote(_repo(ctx), n)
    echo(f"Demoted to memory {r['demoted']['id']} ({r['commit'][:12]})")


@click.group()
def audit() -> None:
    """Audits of what other tools load into an agent's context."""


@audit.command("claude")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
@_fail_friendly
def audit_claude(ctx: click.Context, paths: tuple[str, ...], as_json: bool) -> None:
    """What of MEMORY.md / CLAUDE.md reaches a session; exit 1 when something is cut.

    Without PATHs: every ~/.claude/projects/*/memory/MEMORY.md, ~/.claude/CLAUDE.md and the
    CLAUDE.md files from here up. Lists every entry that never loads, newest first.

    \b
    Example:
      memrepo audit claude
      memrepo audit claude ~/.claude/projects/-home-ann-src-app/memory/MEMORY.md
    """
    from memrepo.claude import audit as au

    results = au.run(list(paths) or None)
    if as_json:
        _json([r.as_dict() for r in results])
    else:
        _render_audit(results)
    ctx.exit(1 if any(r.is_cut for r in results) else 0)


def _render_audit(results: list[Any]) -> None:
    if not results:
        echo("no MEMORY.md or CLAUDE.md found", err=True)
    for r in results:
        state = f"CUT, {len(r.cut)} entries never reach a session" if r.is_cut else "loads whole"
        echo(f"{r.path}: {state}: {r.lines_loaded} of {r.lines_present} lines, "
             f"{r.units_loaded:,} of {r.units_present:,} characters (UTF-16 units) load")
        for note in r.notes:
            echo(f"  note: {note}")
        if r.cut:
            echo("  never loaded, newest first:")
        for n, text in r.cut:
            echo(f"  line {n}: {text if len(text) <= 100 else text[:99] + '…'}")


@click.group("import")
def import_() -> None:
    """Import memories from Claude Code auto memory, memsearch or Hermes (one undoable commit per run)."""


def _render_import(report: Any, as_json: bool) -> None:
    if as_json:
        return _json(report.as_dict())
    for where, why in report.skipped:
        echo(f"skipped {where}: {why}", err=True)
    if report.commit:
        echo(f"Imported {count(len(report.added), 'memory', 'memories')}"
             + (f" and {count(len(report.profile), 'profile line')}" if report.profile else "")
             + f" from {report.tool} ({report.commit[:12]}, run {report.run}; `memrepo undo {report.run}` reverts it)")
        for i in report.demoted:
            echo(f"  demoted from the profile: {i}")
    else:
        echo(f"Nothing new from {report.tool}")
    if report.already:
        echo(f"{report.already} already imported", err=True)


@import_.command("claude-code")
@click.argument("dirs", nargs=-1, type=click.Path(exists=True, file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
@_fail_friendly
def import_claude_code(ctx: click.Context, dirs: tuple[str, ...], as_json: bool) -> None:
    """Import Claude Code auto-memory topic files (default: every ~/.claude/projects/*/memory).

    Types map to classes: user → preference, feedback → rule, project → project,
    reference → reference. A second run adds nothing.

    \b
    Example:
      memrepo import claude-code ~/.claude/projects/-home-ann-src-app/memory
    """
    from memrepo.importers import claude_code

    from memrepo.cli.progress import Reporter

    shown = Reporter()
    report = claude_code.run(_repo(ctx), list(dirs) or None, progress=shown)
    shown.close()
    _render_import(report, as_json)


@import_.command("memsearch")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
@_fail_friendly
def import_memsearch(ctx: click.Context, directory: str, as_json: bool) -> None:
    """Import memsearch daily journals: one event memory per `###` turn.

    \b
    Example:
      memrepo import memsearch ~/src/app/.memsearch/memory
    """
    from memrepo.importers import memsearch

    _render_import(memsearch.run(_repo(ctx), directory), as_json)


@import_.command("hermes")
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
@_fail_friendly
def import_hermes(ctx: click.Context, directory: str, as_json: bool) -> None:
    """Import Hermes MEMORY.md entries as memories and USER.md entries into the profile.

    \b
    Example:
      memrepo import hermes ~/.hermes/memories
    """
    from memrepo.importers import hermes

    _render_import(hermes.run(_repo(ctx), directory), as_json)


def register(group: click.Group) -> None:
    """Add this module's commands to the `memrepo` group."""
    for command in (profile, audit, import_):
        group.add_command(command)
