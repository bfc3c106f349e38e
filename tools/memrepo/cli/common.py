"""What every command module shares: library errors as one message and its fix, the repository a
command works on, an ID argument's memory, JSON output. The command group is `cli.main`'s; this
module imports none of the command modules, so none of them imports back into `main` (issue 40)."""

from __future__ import annotations

import functools
import os
import time
from typing import Any, Callable

import click

from memrepo.cli.term import echo, json_text, safe
from memrepo.errors import MemrepoError, NoteInvalid
from memrepo.base import paths

F = Callable[..., Any]


def _fail_friendly(fn: F) -> F:
    """Library errors become one message plus the fix; exit 1."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except NoteInvalid as exc:
            for problem in exc.problems:
                echo(problem, err=True)
            raise click.ClickException(safe(str(exc) + (f"\nhint: {exc.hint}" if exc.hint else ""))) from None
        except MemrepoError as exc:
            raise click.ClickException(safe(str(exc) + (f"\nhint: {exc.hint}" if exc.hint else ""))) from None
        except OSError as exc:
            obj = click.get_current_context().find_object(dict) or {}
            refused = _disk_fault(exc, str(obj.get("repo") or ""))
            if refused is None:
                raise
            raise refused from None

    return wrapper


CHECK_MODEL = ("check the model command (MEMREPO_MODEL_CMD, or `model_cmd` in index/local.json); "
               "`memrepo stats` lists the failed calls")


def _model_calls_judged(what: str) -> None:
    """After a pass: name its failed model calls, and fail the command when none answered.

    A prose or invalid answer counts as a failed call (issue 37), so `memrepo enrich` against a
    model that only apologises exits 1 instead of saying there was nothing new. The pass starts
    its count with `model.Tally.reset()`.
    """
    from memrepo.passes import model

    tally = model.Tally
    if not tally.failed:
        return
    total = tally.ok + tally.failed
    echo(f"{what}: {tally.failed} of {total} model call{'s' * (total != 1)} failed "
         f"(last: {tally.last_error[:200]})", err=True)
    if not tally.ok:
        raise MemrepoError(f"{what}: no model call answered, so nothing was learned from the model", hint=CHECK_MODEL)


def _repo(ctx: click.Context) -> str:
    """The memory repository this command works on (a command's own --repo, the global one,
    $MEMREPO_DIR, else ~/.memrepo); warns once when the working directory is another one."""
    obj = ctx.find_object(dict) or {}
    if not obj.get("explicit") and not obj.get("warned"):
        obj["warned"] = True
        _warn_other_repo(str(obj["repo"]))
    return str(obj["repo"])


def _memory_id(ctx: click.Context, given: str) -> str:
    """The memory an ID argument names: the id, or the start of exactly one id."""
    from memrepo.store import memories

    return memories.resolve(memories.require_repo(_repo(ctx)), given)


def _json(data: Any) -> None:
    click.echo(json_text(data))


def _date(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return time.mktime(time.strptime(value, "%Y-%m-%d"))
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date like 2026-11-30") from None


def _warn_other_repo(chosen: str) -> None:
    """The working directory is another memory repository (a second clone) than the one memrepo
    uses: say so. The repository is never guessed from the working directory, since the hooks
    would not follow (they read $MEMREPO_DIR or ~/.memrepo): a memory added to the clone would
    never be recalled."""
    from memrepo.base import projects

    top = projects.top_level(os.getcwd())
    if top and os.path.realpath(top) != os.path.realpath(chosen) and os.path.isdir(paths.memory_dir(top)) \
            and os.path.isdir(os.path.join(top, ".githooks")):
        echo(f"memrepo: using the memory repository at {chosen}, not the one this directory is in ({top}); "
             f"pass --repo {top} (or set MEMREPO_DIR) to use that one", err=True)


def _disk_fault(exc: OSError, repo: str) -> click.ClickException | None:
    """A write the disk refused (full, read-only, immutable, over a size limit) is not a bug: the
    fault and its fix, for exit 1 (issue 38: `add` on a full disk exited 3 with a traceback).
    A memory write is one transactional commit (`vcs.commit`): a refused one leaves nothing half
    done. None for any other error. `repo` names where, when the error names no file."""
    from memrepo.store import faults

    where = str(exc.filename or "")
    if exc.errno not in faults.DISK or not (where or repo):
        return None
    folder = (where if os.path.isdir(where) else os.path.dirname(where)) if where else repo
    why, fix, _ = faults.disk_fix(folder, exc)
    return click.ClickException(f"cannot write {where or 'in ' + repo}: {exc.strerror}: {why}\n"
                                f"hint: {fix}, then run the command again (`memrepo doctor` checks the repository)")
