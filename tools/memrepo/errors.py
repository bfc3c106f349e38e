"""Errors raised by the library, written for the person reading them."""

from __future__ import annotations


class MemrepoError(Exception):
    """Base class: a message for the user and, optionally, the command that fixes it."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint


class RepoNotFound(MemrepoError):
    """The memory repository does not exist or is not a memrepo repository."""


class NoteInvalid(MemrepoError):
    """A memory file failed validation; `problems` holds every `path:line: problem — fix`."""

    def __init__(self, message: str, problems: list[str], hint: str | None = None) -> None:
        super().__init__(message, hint)
        self.problems = problems


class NoteNotFound(MemrepoError):
    """No memory with that id."""


class AmbiguousId(NoteNotFound):
    """What was given is the start of several memories' ids."""


class GitError(MemrepoError):
    """A git command failed."""


class Deferred(MemrepoError):
    """Work that must wait, not a failure: the worker puts the job back without counting an attempt."""


class CacheError(MemrepoError):
    """The cache is missing, corrupt or of another schema."""
