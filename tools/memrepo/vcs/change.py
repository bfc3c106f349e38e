"""What a one-file writer hands the commit machinery, and what it gets back: a `Change`, the
`Hooks` whose work it does in-process, an `Outcome`.

Apart from `vcs.commit` and `vcs.chain` on purpose (issue 44): a writer that finds the lock held
leaves its change to the holder (`vcs.group`) and never commits, so it need not load the commit
machinery (the journal, the staging, hashlib, shutil) to say what it wants committed.
Plain classes, not dataclasses: every writer loads this module, and `dataclasses` with these three
classes cost ~12 M instructions of a waiting writer's ~240 M, where a lock holder's share of
one change is ~16 M (issue 44).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memrepo.errors import GitError, NoteInvalid

if TYPE_CHECKING:
    from collections.abc import Callable


class Change:
    """One writer's change as `commit_if_unchanged` takes it: files to write, what it read of them
    (None: absent), and its own message and trailers.

    `fields` holds files still to be rendered: path -> a memory's fields, which the lock holder
    renders and validates with `Hooks.render` (this writer's process when it gets the lock, or a
    holder's that commits it for this one), so a writer whose change another commits never loads
    the serializer and its YAML (issue 44)."""

    __slots__ = ("files", "expect", "subject", "trailers", "body", "fields")

    def __init__(self, files: dict[str, str | None], expect: dict[str, str | None], subject: str,
                 trailers: dict[str, Any], body: str = "", fields: dict[str, dict[str, Any]] | None = None) -> None:
        self.files, self.expect, self.subject, self.trailers = files, expect, subject, trailers
        self.body, self.fields = body, fields or {}

    def paths(self) -> set[str]:
        return set(self.files) | set(self.fields)

    def as_dict(self) -> dict[str, Any]:
        """What the group commit's queue holds of it (JSON)."""
        return {name: getattr(self, name) for name in self.__slots__}


class Outcome:
    """What became of one change: its commit (or ""), the paths skipped because they changed
    since its writer read them, or the error its commit raised (message, hint), with the
    problems of a file its fields rendered invalid (`NoteInvalid`, as its writer's own render
    raises it)."""

    __slots__ = ("sha", "stale", "error", "problems")

    def __init__(self, sha: str = "", stale: list[str] | None = None, error: tuple[str, str | None] | None = None,
                 problems: list[str] | None = None) -> None:
        self.sha, self.stale, self.error, self.problems = sha, stale or [], error, problems

    def result(self) -> tuple[str, list[str]]:
        """`commit_if_unchanged`'s return value, or its GitError (NoteInvalid for a refused render)."""
        if self.error is not None and self.problems is not None:
            raise NoteInvalid(self.error[0], self.problems, hint=self.error[1])
        if self.error is not None:
            raise GitError(self.error[0], hint=self.error[1])
        return self.sha, self.stale


class Hooks:
    """The work of memrepo's own pre-commit and post-commit hooks, for a writer to do itself.

    `store.githooks.in_process` is the one there is: the same validation and index update the
    shims run, passed down by the writers above this layer. Used only where those two shims are
    all `git commit` would run, with this interpreter (`hookwire.only_ours`); anywhere else git
    runs the hooks. A one-file `add` at 10,000 memories started three interpreters (issue 44).
    """

    __slots__ = ("pre_commit", "post_commit", "render")

    def __init__(self, pre_commit: Callable[[str, dict[str, str]], int],
                 post_commit: Callable[[str, list[str], str | None, str], object],
                 render: Callable[[str, dict[str, Any]], str] | None = None) -> None:
        self.pre_commit = pre_commit  # (repo, env naming the index) -> 0, or 1 with problems on stderr
        self.post_commit = post_commit  # (repo, the paths changed, the commit they were changed from, HEAD now)
        # (path, a memory's fields) -> the file's text, validated as its writer validates it, or
        # NoteInvalid: the one renderer of `Change.fields` (`store.githooks.render`)
        self.render = render
