"""Commands that change one memory at a person's request: edit, retire, forget."""

from __future__ import annotations

import os
import tempfile
import typing

import click

from memrepo.cli.common import _fail_friendly, _json, _memory_id, _repo
from memrepo.cli.term import echo


def _draft_path(note_id: str) -> str:
    fd, path = tempfile.mkstemp(prefix=f"memrepo-edit-{note_id}-", suffix=".md")
    os.close(fd)
    return path


@click.command()
@click.argument("note_id", metavar="ID")
@click.option("--from", "source", type=click.File("r", encoding="utf-8"),
              help="Take the new text from FILE ('-' for standard input) instead of opening $EDITOR.")
@click.option("--json", "as_json", is_flag=True, help="Print {id, commit, run} as JSON (commit and run null: no change).")
@click.pass_context
@_fail_friendly
def edit(ctx: click.Context, note_id: str, source: "typing.IO[str] | None", as_json: bool) -> None:
    """Edit memory ID in $EDITOR, validate it and commit it (Memrepo-Action: edit).

    An invalid result is not committed: the problems are printed and your text is kept in a
    file you can fix and pass back with --from. `memrepo undo RUN` reverts the edit.

    \b
    Example:
      memrepo edit deploy-freeze-friday
      memrepo edit deploy-freeze-friday --from fixed.md
    """
    from memrepo.errors import NoteInvalid
    from memrepo.store import lifecycle, memories

    repo = memories.require_repo(_repo(ctx))
    note_id = _memory_id(ctx, note_id)
    before = memories.read_text(repo, note_id)
    if source is not None:
        text = source.read()
    else:
        edited = click.edit(before, extension=".md", require_save=True)
        if edited is None:
            if as_json:
                return _json({"id": note_id, "commit": None, "run": None})
            echo(f"No change to {note_id}: the editor closed without saving.")
            _say_if_broken(before, note_id)
            return
        text = edited
    try:
        done = lifecycle.edit(repo, note_id, text, before)
    except NoteInvalid:
        draft = _draft_path(note_id)
        with open(draft, "w", encoding="utf-8") as fh:
            fh.write(text)
        echo(f"Your text is kept in {draft}; fix it, then: memrepo edit {note_id} --from {draft}", err=True)
        raise
    if as_json:
        return _json({"id": note_id, "commit": done[0] if done else None, "run": done[1] if done else None})
    if done is None:
        echo(f"No change to {note_id}.")
        _say_if_broken(before, note_id)
        return
    sha, run = done
    echo(f"Edited {note_id} in {repo} ({sha[:12]}, run {run}; `memrepo undo {run}` reverts it)")


def _say_if_broken(text: str, note_id: str) -> None:
    """An edit that changed nothing leaves a memory a hand edit broke as broken: say so, and how to
    repair it or take the hand edit back."""
    from memrepo.errors import NoteInvalid
    from memrepo.store import lifecycle

    try:
        lifecycle.validated(text, note_id)
    except NoteInvalid as exc:
        rel = f"memory/{note_id}.md"
        for problem in exc.problems:
            echo(problem, err=True)
        echo(f"{rel} is still not a valid memory (a hand edit left it so, uncommitted): fix the lines above with"
             f" `memrepo edit {note_id}`, or take the hand edit back with `git checkout -- {rel}`", err=True)


def _retire(ctx: click.Context, note_id: str, reason: str, as_json: bool) -> None:
    from memrepo.store import lifecycle

    note_id = _memory_id(ctx, note_id)
    sha, run = lifecycle.retire(_repo(ctx), note_id, reason)
    if as_json:
        return _json({"id": note_id, "commit": sha, "run": run})
    echo(f"Retired {note_id} ({sha[:12]}): recall will not inject it again. "
               f"The file stays, marked retired; `memrepo undo {run}` brings it back.")


@click.command()
@click.argument("note_id", metavar="ID")
@click.option("--reason", "-r", required=True, help="Why it no longer holds; kept in the memory and the commit.")
@click.option("--json", "as_json", is_flag=True, help="Print {id, commit, run} as JSON.")
@click.pass_context
@_fail_friendly
def retire(ctx: click.Context, note_id: str, reason: str, as_json: bool) -> None:
    """Retire memory ID: never deleted, never recalled again (status: retired, with the reason).

    Neither a re-import nor a later capture brings it back. `memrepo forget ID` is the same with a
    default reason (what /memrepo:forget runs).

    \b
    Example:
      memrepo retire staging-uses-nginx --reason "staging moved to Caddy in November"
    """
    _retire(ctx, note_id, reason, as_json)


@click.command()
@click.argument("note_id", metavar="ID")
@click.option("--reason", "-r", help="Why (default: forgotten at the user's request).")
@click.option("--source", metavar="NAME",
              help="Whose memory ID is, when yours and a team's or the project's share it: personal, a team's "
                   "name, or project (default: yours, else the one that holds it).")
@click.option("--json", "as_json", is_flag=True, help="Print {id, commit, run} as JSON.")
@click.pass_context
@_fail_friendly
def forget(ctx: click.Context, note_id: str, reason: str | None, source: str | None, as_json: bool) -> None:
    """Forget memory ID: an alias of `memrepo retire` whose reason is optional. The file and its
    history stay in git.

    A team's memory is not yours to retire: forgetting one proposes it to the team (a branch and
    a pull request); a project's is retired in the code repository for you to commit.

    \b
    Example:
      memrepo forget my-old-laptop-hostname
      memrepo forget deploy-freeze --source acme     (the team's, not your copy)
    """
    from memrepo.errors import AmbiguousId, NoteNotFound
    from memrepo.passes import share
    from memrepo.store import lifecycle, memories

    reason = reason or lifecycle.DEFAULT_FORGET_REASON
    if source in (None, "personal"):
        try:
            memories.resolve(memories.require_repo(_repo(ctx)), note_id)
            mine = True
        except AmbiguousId:
            raise
        except NoteNotFound:
            if source == "personal":
                raise
            mine = False
        if mine:
            return _retire(ctx, note_id, reason, as_json)
    done = share.forget(_repo(ctx), note_id, os.getcwd(), reason, only=source)  # issue 41: a proposal there
    if as_json:
        return _json(done.as_dict())
    echo(f"proposed retiring {done.id} to {done.to}" + (f" as {done.path}" if done.path else "")
         + (f": {done.url}" if done.url else ""))
    for line in done.manual:
        echo(f"  {line}")


def register(group: click.Group) -> None:
    """Add this module's commands to the `memrepo` group."""
    for command in (edit, retire, forget):
        group.add_command(command)
