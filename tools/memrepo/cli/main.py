"""memrepo's command line: thin commands over the library."""

from __future__ import annotations

import os
import sys

import click

from memrepo import __version__
from memrepo.cli.common import _disk_fault, _fail_friendly, _json, _memory_id, _repo
from memrepo.cli.term import count, echo
from memrepo.base import paths

# The commands each area module registers (`register`), beside this module's own: a command's
# module is imported when that command is asked for, so `memrepo add` does not load the other
# twelve (issue 44). Keep this in step with the modules and the README's command table;
# tests/test_cli.py checks it against what each module registers.
AREAS = {
    "recall": ("demo", "eval", "install", "recall", "recall-log", "uninstall"),
    "lifecycle": ("edit", "forget", "retire"),
    "curate": ("curate", "review", "undo"),
    "verify": ("verify",),
    "capture": ("capture", "enrich", "stats", "sweep"),
    "profile": ("audit", "import", "profile"),
    "skills": ("skills", "transcript", "transcripts"),
    "sync": ("sync",),
    "sources": ("share", "sources", "team"),
    "serve": ("serve",),
    "mcp": ("mcp",),
    "export": ("export",),
}
# An area that adds subcommands to another's groups is loaded after it (mcp: `install codex`…).
EXTENDS = {"recall": ("mcp",)}
_AREA_OF = {name: area for area, names in AREAS.items() for name in names}
NO_REPO_OPTION = ("init", "demo", "install", "uninstall")  # commands without their own --repo


class _Commands(click.Group):
    """The `memrepo` group: an area's commands are registered when one of them is first asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *_AREA_OF})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in _AREA_OF:
            load_area(_AREA_OF[cmd_name])
        return super().get_command(ctx, cmd_name)


def load_area(area: str) -> None:
    """Import an area's module and register its commands (and those of the areas that extend it)."""
    import importlib

    for loaded in (area, *EXTENDS.get(area, ())):
        importlib.import_module(f"memrepo.cli.{loaded}").register(cli)
        for name in AREAS[loaded]:
            if name not in NO_REPO_OPTION:
                _repo_option(cli.commands[name])


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--repo", type=click.Path(file_okay=False), envvar=None,
              help="Memory repository (default: $MEMREPO_DIR, else ~/.memrepo).")
@click.version_option(__version__, prog_name="memrepo")
@click.pass_context
def cli(ctx: click.Context, repo: str | None) -> None:
    """memrepo: git-native memory for coding agents.

    Memories are markdown files in a git repository; a SQLite FTS5 cache under index/
    answers recall before every Claude Code prompt.
    """
    ctx.ensure_object(dict)
    ctx.obj["repo"] = paths.memory_repo(repo)
    ctx.obj["explicit"] = bool(repo or os.environ.get(paths.ENV_DIR))


def _repo_option(command: click.Command) -> None:
    """Give `command` (and a group's subcommands) its own `--repo`, which wins over the global one."""

    def take(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
        if value:
            ctx.ensure_object(dict)
            ctx.obj["repo"] = paths.memory_repo(value)
            ctx.obj["explicit"] = True

    if not any(p.name == "repo" for p in command.params):
        command.params.append(click.Option(["--repo"], type=click.Path(file_okay=False), expose_value=False,
                                           is_eager=True, callback=take, help="Memory repository (as the global --repo)."))
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _repo_option(sub)


@cli.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False))
@click.option("--from", "source", metavar="URL", help="Join the memory at this git URL (a second machine, a teammate): "
              "clone it into DIRECTORY, or add it as `origin` of an existing clone.")
@click.option("--branch", metavar="NAME", help="The remote's branch that holds the memory, when it holds memory on several.")
@click.option("--json", "as_json", is_flag=True, help="Print {path, joined, branch, commit, indexed, ...} as JSON.")
@click.pass_context
@_fail_friendly
def init(ctx: click.Context, directory: str | None, source: str | None, branch: str | None, as_json: bool) -> None:
    """Make DIRECTORY (default: the memory repository) a memory repository.

    Runs `git init` if needed, creates memory/, index/, .githooks/ (templates), installs
    the git hooks into this clone's untracked hooks directory (unsetting an old
    core.hooksPath=.githooks) and makes the first commit. Running it twice changes nothing.

    In a clone that holds no memory yet, init checks out the branch the remote holds memory
    on (whatever the remote's HEAD says) rather than starting a second history beside it.

    \b
    Examples:
      memrepo init ~/.memrepo
      memrepo init --from git@github.com:me/memory.git     (a second machine, a teammate)
    """
    from memrepo.store import repoinit

    report = repoinit.init(directory or _repo(ctx), source=source, branch=branch)
    if as_json:
        import dataclasses

        adopted = report["adopted"]
        return _json({**report, "adopted": dataclasses.asdict(adopted) if adopted is not None else None})
    verb = "Created" if report["git_init"] else "Initialized"
    if report["joined"]:
        verb = "Joined"
    echo(f"{verb} memory repository at {report['path']}" + (f" ({report['joined']})" if report["joined"] else ""))
    adopted = report["adopted"]
    if adopted is not None:
        echo(f"  branch: {adopted.branch}, tracking {adopted.remote}/{adopted.branch} "
             f"({adopted.memories} memor{'y' if adopted.memories == 1 else 'ies'})")
        if adopted.left:
            echo(f"  left branch {adopted.left} as it was (it held no memory)")
        if adopted.rescue:
            echo(f"  earlier commits of this clone kept as {adopted.rescue}")
    echo(f"  git hooks: {report['wiring']}")
    echo(f"  committed: {', '.join(report['committed'])}" if report["commit"] else "  nothing to commit: already set up")
    echo(f"  indexed: {count(report['indexed'], 'memory', 'memories')}")
    echo(f"  commit-graph: {report['commit_graph']}")


STDIN_MAX_CHARS = 1024 * 1024  # sixteen times the body limit: more is refused without reading it all


def _read_body(body: str | None, use_stdin: bool, edit: bool) -> str:
    if use_stdin:
        text = sys.stdin.read(STDIN_MAX_CHARS + 1)
        if len(text) > STDIN_MAX_CHARS:
            from memrepo.errors import MemrepoError
            from memrepo.format import spec

            raise MemrepoError(f"standard input is over {STDIN_MAX_CHARS:,} characters; a memory's body is at most"
                               f" {spec.MAX_BODY_BYTES:,} bytes", hint="split it into several memories or link to a file")
        return text
    if edit:
        text = click.edit("\n# Write the memory's body above. Lines starting with # are removed.\n", extension=".md")
        if text is None:
            raise click.ClickException("editor closed without saving; nothing added")
        return "\n".join(line for line in text.splitlines() if not line.startswith("# ")).strip() + "\n"
    return body or ""


@cli.command()
@click.option("--title", required=True, help="One line, at most 120 characters.")
@click.option("--description", "-d", required=True, help="One line recall shows, at most 200 characters.")
@click.option("--class", "cls", required=True, type=click.Choice(["rule", "preference", "fact", "project", "event", "reference"]),
              help="What kind of memory; sets how fast it decays.")
@click.option("--source", default="user", show_default=True, type=click.Choice(["user", "agent", "capture", "import"]),
              help="Who said it.")
@click.option("--id", "note_id", help="kebab-case id (default: from the title).")
@click.option("--topic", "topics", multiple=True, help="Subject word; repeatable.")
@click.option("--entity", "entities", multiple=True, help="Named thing (service, repo, person); repeatable.")
@click.option("--tech", multiple=True, help="Technology named; repeatable.")
@click.option("--alias", "aliases", multiple=True, help="Words a person would type to need this; repeatable.")
@click.option("--project", help="Scope to a project: its key, host/owner/name of its origin remote (else its folder name).")
@click.option("--body", help="The memory's markdown body.")
@click.option("--stdin", "use_stdin", is_flag=True, help="Read the body from standard input.")
@click.option("--edit", is_flag=True, help="Write the body in $EDITOR.")
@click.option("--json", "as_json", is_flag=True, help="Print {id, commit, run, repo} as JSON.")
@click.pass_context
@_fail_friendly
def add(ctx: click.Context, title: str, description: str, cls: str, source: str, note_id: str | None,
        topics: tuple[str, ...], entities: tuple[str, ...], tech: tuple[str, ...], aliases: tuple[str, ...],
        project: str | None, body: str | None, use_stdin: bool, edit: bool, as_json: bool) -> None:
    """Add a memory: write memory/<id>.md and commit it (trailer Memrepo-Action: add).

    \b
    Example:
      memrepo add --class rule --title "No deploys on Friday afternoon" \\
        -d "Production deploys are frozen on Fridays after 16:00 Lisbon time" \\
        --topic deploy --entity api --body "Ask in #ops for an exception."
    """
    from memrepo.format import notes
    from memrepo.store import memories as store

    for option, value in (("--title", title), ("--description", description)):
        if not value.strip():
            raise click.BadParameter("is empty; write one line that says what the memory holds", param_hint=option)
    note = notes.new_note(id=note_id, title=title, description=description, class_=cls, source=source,
                          topics=[t.lower() for t in topics], entities=list(entities), tech=list(tech),
                          aliases=list(aliases), project=project, body=_read_body(body, use_stdin, edit))
    new_id, sha, run = store.add(_repo(ctx), note)
    if as_json:
        return _json({"id": new_id, "commit": sha, "run": run, "repo": _repo(ctx)})
    echo(f"Added {new_id} to {_repo(ctx)} ({sha[:12]}; `memrepo undo {run}` takes it back)")


@cli.command()
@click.argument("note_id", metavar="ID")
@click.option("--source", metavar="NAME", help="Only this source: personal, a team's name, or project (default: all).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
@_fail_friendly
def show(ctx: click.Context, note_id: str, source: str | None, as_json: bool) -> None:
    """Print memory ID in full, then the commits that touched it. ID may be the start of an id.

    A memory of a team or of the project you are in is shown with its source."""
    from memrepo.store import memories as store, sources

    data = sources.show_any(store.require_repo(_repo(ctx)), os.getcwd(), note_id, source)
    if as_json:
        return _json(data)
    if data["source"] != "personal":
        echo(f"Source: {data['source']} ({data['root']})\n")
    echo(data["text"], nl=False)
    use = data["use"]
    echo(f"\nUse on this machine: injected {use['injected']} times, {use['judged']} judged by the reply, "
         f"used {use['used']}; last used: {use['last_used'] or 'never'}")
    echo("\nHistory:")
    for h in data["history"]:
        echo(f"  {h['commit'][:12]}  {h['date'][:10]}  {h['subject']}")


@cli.command("list")
@click.option("--class", "cls", type=click.Choice(["rule", "preference", "fact", "project", "event", "reference"]),
              help="Only this class.")
@click.option("--project", help="Only this project.")
@click.option("--status", type=click.Choice(["active", "superseded", "retired"]), help="Only this status.")
@click.option("--source", metavar="NAME", help="Only this source: personal, a team's name, or project (default: all).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
@_fail_friendly
def list_(ctx: click.Context, cls: str | None, project: str | None, status: str | None, source: str | None,
          as_json: bool) -> None:
    """List memories, most recently updated first; a team's or the project's say which."""
    from memrepo.store import cachefacts, sources

    rows = sources.list_all(_repo(ctx), os.getcwd(), source, cls=cls, project=project, status=status)
    several = any(r["source"] != "personal" for r in rows)
    if as_json:
        return _json(rows if several else [{k: v for k, v in r.items() if k != "source"} for r in rows])
    for r in rows:
        label = f"  [superseded by {r['superseded_by']}]" if r["superseded_by"] else \
            f"  [{r['status']}]" if r["status"] not in (None, "active") else ""
        where = f"{r['source']:<16} " if several else ""
        echo(f"{where}{r['id']:<40} {r['class']:<10} {r['updated'] or '':<10} {r['title']}{label}")
    for path, problem in cachefacts.skipped(_repo(ctx)):
        echo(f"not indexed: {path}: {problem}", err=True)
    named = ", ".join(f"{k} {v}" for k, v in (("class", cls), ("project", project), ("status", status)) if v)
    echo(f"{len(rows)} memor{'y' if len(rows) == 1 else 'ies'}" + (f" matching {named}" if named else ""), err=True)


@cli.command()
@click.argument("query")
@click.option("--limit", "-n", default=10, show_default=True, type=click.IntRange(min=1), help="Most results to show.")
@click.option("--project", help="Favour this project's memories.")
@click.option("--source", metavar="NAME", help="Only this source: personal, a team's name, or project (default: all).")
@click.option("--json", "as_json", is_flag=True, help="Print a list of {id, score, title, class, status, ...}.")
@click.pass_context
@_fail_friendly
def search(ctx: click.Context, query: str, limit: int, project: str | None, source: str | None, as_json: bool) -> None:
    """Ranked full-text search over the caches of every source (no silence floors).

    \b
    Example:
      memrepo search "friday deploy" --json
    """
    from memrepo.store import sources

    hits = sources.search_all(_repo(ctx), os.getcwd(), query, limit=limit, project=project, only=source)
    if as_json:
        return _json([dict(h.as_dict(), **({"source": h.source} if h.source else {})) for h in hits])
    for h in hits:
        labels = "".join(f"  [{label}]" for label in h.labels())
        where = f"  ({h.source})" if h.source else ""
        echo(f"{h.score:8.3f}  {h.id:<40} ({h.cls}) {h.title}{labels}{where}")
    if not hits:
        echo("no matches", err=True)


@cli.command("index")
@click.option("--rebuild", is_flag=True, help="Drop the cache and rebuild it from memory/.")
@click.pass_context
@_fail_friendly
def index_(ctx: click.Context, rebuild: bool) -> None:
    """Bring the cache up to date with memory/ (only changed files), or --rebuild it."""
    from memrepo.store import cachefacts, index, memories as store

    repo = store.require_repo(_repo(ctx))
    if rebuild:
        with click.progressbar(length=1, label="indexing", file=sys.stderr, show_pos=True) as bar:
            def progress(done: int, total: int) -> None:
                bar.length = total
                bar.update(1)
            report = index.rebuild(repo, progress=progress)
    else:
        report = index.update(repo)
    r = report.as_dict()
    echo(f"{'rebuilt' if r['rebuilt'] else 'updated'}: {r['added']} added, {r['updated']} updated, "
         f"{r['removed']} removed, {r['unchanged']} unchanged, {len(r['skipped'])} skipped in {r['seconds']:.2f}s")
    for path, problem in cachefacts.skipped(repo):  # skipped by an earlier update, and still unreadable
        if (path, problem) not in r["skipped"]:
            echo(f"not indexed: {path}: {problem}", err=True)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def doctor(ctx: click.Context, as_json: bool) -> None:
    """Check the repository, its hooks, cache and files, the model command, background jobs and
    setup, and how Claude Code runs memrepo; exit 1 with the fixing command when something is wrong.

    Warnings (`warn`) name something to look at and keep exit 0."""
    from memrepo.claude import session_start
    from memrepo.store import doctor as doc

    from memrepo.claude import doctor as claude_doctor
    from memrepo.passes import model
    from memrepo.passes.curate import conflicts
    from memrepo.worker import jobs

    repo = _repo(ctx)
    checks = doc.run(repo, always_on=session_start.always_on_text(repo))
    if len(checks) > 1 or checks[0].ok:  # (a missing repository is one failing check)
        if paths.recall_only(repo):
            checks.append(doc.Check("background passes", True, "off: recall-only mode (MEMREPO_RECALL_ONLY or "
                                    "`recall_only`); nothing is captured, enriched, curated or verified"))
        else:
            checks.extend(model.checks(repo))
        checks.extend(jobs.checks(repo))
        checks.extend(conflicts.checks(repo, doc.Check))  # conflicts across sources await review (issue 41)
    checks.extend(claude_doctor.checks(os.getcwd(), repo))
    from memrepo.agents import doctor as agents_doctor

    checks.extend(agents_doctor.checks())
    if as_json:
        _json([c.as_dict() for c in checks])
    else:
        for c in checks:
            detail = c.detail.replace("\n", "\n     ")  # one problem a line, under its check
            echo(f"{'FAIL' if not c.ok else 'warn' if c.warn else 'ok '} {c.name}: {detail}")
            if c.fix:
                echo(f"     fix: {c.fix}")
    ctx.exit(0 if all(c.ok for c in checks) else 1)


@cli.command()
@click.pass_context
@_fail_friendly
def recover(ctx: click.Context) -> None:
    """Undo what a memrepo commit killed mid-way (kill -9, a crash) left behind.

    Every memrepo write does this first; run it by hand when `memrepo doctor` reports an
    interrupted commit or a stale `.git/index.lock` (left by a git that was killed; removed
    when no git has touched it for ten seconds and no memrepo writer is running). Files a
    person changed since are left alone.
    """
    from memrepo.store import faults, index, memories as store
    from memrepo.vcs import journal, lock

    repo = store.require_repo(_repo(ctx))
    with lock.held(repo):
        cleared = faults.clear_stale_index_lock(repo)  # a git killed mid-commit (with its process group)
        if cleared:
            echo(f"removed {cleared}, left by a git that is no longer running")
        undone = journal.recover(repo)
    if undone or cleared:
        index.update(repo)  # the files put back are newer than the cache's record of them
    echo(f"rolled back {len(undone)} file(s): {', '.join(undone)}" if undone else "nothing to recover")


@cli.command()
@click.option("--limit", "-n", default=30, show_default=True, type=click.IntRange(min=1), help="Most entries to show.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--runs", is_flag=True, help="Group by run (curate, review, undo…): each run's decisions and what undid it.")
@click.pass_context
@_fail_friendly
def log(ctx: click.Context, limit: int, as_json: bool, runs: bool) -> None:
    """The Memrepo-* trailers of history, newest first."""
    from memrepo.vcs import trailers
    from memrepo.store import memories as store

    if runs:
        from memrepo.cli.curate import show_runs

        return show_runs(_repo(ctx), limit, as_json)
    entries = trailers.read(store.require_repo(_repo(ctx)), limit=limit)
    if as_json:
        return _json(entries)
    for e in entries:
        t = e["trailers"]
        extra = " ".join(f"{k}={v}" for k, v in t.items() if k not in ("Action", "Decision"))  # a batch commit lists its decisions in `log --runs`
        echo(f"{e['commit'][:12]}  {e['date'][:19]}  {t.get('Action', '?'):<10} {e['subject']}  {extra}".rstrip())


@cli.command()
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@click.option("--check", is_flag=True, help="Only report files that are not canonical; exit 1 if any.")
@click.pass_context
@_fail_friendly
def fmt(ctx: click.Context, files: tuple[str, ...], check: bool) -> None:
    """Rewrite memory files in canonical form (key order, quoting, one final newline)."""
    from memrepo.store import memories as store

    changed = store.fmt(_repo(ctx), list(files) or None, check=check)
    for path in changed:
        echo(f"{'would reformat' if check else 'reformatted'} {path}")
    if check and changed:
        ctx.exit(1)


for _command in cli.commands.values():
    if _command.name not in NO_REPO_OPTION:
        _repo_option(_command)


def main() -> int:
    """The console script: library errors exit 1 (via click), ^C 130, anything unexpected 3 with a log."""
    try:
        return _main()
    finally:
        # What is alive now is left to the exiting process: the interpreter's last collections
        # and teardown walked every object the imports made (~30 M instructions, a sixth of a
        # waiting `add`'s own work: issue 44). Every file was closed by the code that wrote it.
        import gc

        gc.freeze()


def _main() -> int:
    from memrepo.store import private

    private.restrict()  # what memrepo writes (index/, logs, memories) is this user's alone
    try:
        code = cli.main(prog_name="memrepo", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except (KeyboardInterrupt, click.exceptions.Abort):
        echo("interrupted", err=True)
        return 130
    except OSError as exc:
        refused = _disk_fault(exc, "")
        if refused is None:
            return _crash(exc)
        refused.show()
        return refused.exit_code
    except Exception as exc:  # noqa: BLE001 — a bug: keep the traceback, show one line
        return _crash(exc)
    # Without standalone mode click returns ctx.exit()'s code, or the command's return value.
    return code if isinstance(code, int) else 0


def _crash(exc: Exception) -> int:
    import tempfile
    import traceback

    try:
        fd, path = tempfile.mkstemp(prefix="memrepo-crash-", suffix=".log")
        # argv may hold bytes no UTF-8 decodes (lone surrogates): the log says them, escaped
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(f"memrepo {__version__} {' '.join(sys.argv[1:])}\n")
            traceback.print_exc(file=fh)
        where = f"The traceback is in {path}"
    except OSError as log_exc:  # a full or read-only /tmp: the one line still tells what happened
        where = f"The traceback could not be written ({log_exc.strerror})"
    echo(f"memrepo: unexpected {type(exc).__name__}: {exc}\n{where}; please report it.", err=True)
    return 3
