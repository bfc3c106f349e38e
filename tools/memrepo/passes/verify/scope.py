"""Which project a path claim belongs to: only paths inside a configured project root are checked.

A relative path is the memory's project's (or the claim's `project`'s). An absolute path inside
a configured root (`config.project_roots`; Claude Code transcripts write absolute paths
everywhere) is that project's path: it becomes the path relative to that root, with `project`
naming the root when it is not the memory's own. An absolute path outside every configured root
is refused with the reason, never stamped false: it is another machine's file, or one of a
project this machine does not know.

`canonical` drops a `project` that is the memory's own and a `repo` of `.`, so one claim made
with and without them (the text rule, the model, the absolute form) is stored once.
"""

from __future__ import annotations

import os
from typing import Any

from memrepo.passes.verify.argtypes import NotHere, abs_path
from memrepo.passes.verify.probes import Call
from memrepo.store import config

PATH_ARGS = {"path_exists": "path", "git_branch_exists": "repo"}


owner = config.owner  # (project, relative path) of an absolute path inside a configured root


def place(probe: Any, args: Any, roots: dict[str, str]) -> Any:
    """`args` with an absolute path mapped to its project; NotHere outside every root."""
    key = PATH_ARGS.get(probe) if isinstance(probe, str) else None
    value = args.get(key) if key and isinstance(args, dict) else None
    if not isinstance(value, str) or not value.startswith("/"):
        return args
    path = abs_path(value, str(key))
    found = owner(path, roots)
    if found is None:
        raise NotHere(f"{key} {path!r} is outside every configured project root (settings `projects`); "
                            "not checked")
    return {**args, str(key): found[1], "project": found[0]}


def same_project(name: str, project: str | None, roots: dict[str, str]) -> bool:
    """`name` is the memory's project: the same name, or a name of the same root on this machine."""
    if not project:
        return False
    if name == project:
        return True
    mine, theirs = config.root_of(roots, project), config.root_of(roots, name)
    return bool(mine and theirs and os.path.realpath(mine) == os.path.realpath(theirs))


def canonical(call: Call, roots: dict[str, str], project: str | None) -> Call:
    """The one form of a validated call: no `project` that is the memory's own, no `repo` of `.`."""
    args = dict(call.args)
    if args.get("repo") == ".":
        del args["repo"]
    if isinstance(args.get("project"), str) and same_project(args["project"], project, roots):
        del args["project"]
    return call if args == call.args else Call(call.probe, args)
