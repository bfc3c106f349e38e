"""Progress of long work, reported by the library and shown by the CLI (stdlib only).

A pass takes `progress=`, a callable `(what, done, total)`; the default says nothing. The CLI
passes `memrepo.cli.progress.Reporter`, which prints to stderr once the work has taken a few
seconds: `verify` on 3,000 memories must not sit silent for two minutes.
"""

from __future__ import annotations

from typing import Callable

Progress = Callable[[str, int, int], None]


def silent(what: str, done: int, total: int) -> None:
    """The default: report nothing."""
