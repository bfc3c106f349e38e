"""The CLI's progress line on stderr: quiet for short work, then updates in place (a terminal)
or a line every tenth of the way (a log file)."""

from __future__ import annotations

import sys
import time

import click

QUIET_FOR = 2.0  # seconds of work that need no progress line (MEMREPO_PROGRESS_AFTER overrides)
LOG_EVERY = 0.1  # fraction of the work between two lines when stderr is not a terminal


class Reporter:
    """Call with (what, done, total) as work proceeds; `close()` ends the line."""

    def __init__(self, quiet_for: float | None = None) -> None:
        import os

        self.start = time.monotonic()
        try:
            after = float(os.environ.get("MEMREPO_PROGRESS_AFTER", QUIET_FOR))
        except ValueError:
            after = QUIET_FOR
        self.quiet_for = after if quiet_for is None else quiet_for
        self.tty = sys.stderr.isatty()
        self.shown = False
        self.last_step = -1.0
        self.what = ""

    def __call__(self, what: str, done: int, total: int) -> None:
        if time.monotonic() - self.start < self.quiet_for and done < total:
            return
        if not self.shown and done >= total and time.monotonic() - self.start < self.quiet_for:
            return  # finished before it needed a word
        if what != self.what:  # a new step of the work (verify: its claims read, then its memories checked)
            self.what, self.last_step = what, -1.0
        elapsed = time.monotonic() - self.start
        line = f"{what}: {done:,}/{total:,} ({elapsed:.0f} s)"
        if self.tty:
            click.echo("\r" + line + ("\n" if done >= total else ""), err=True, nl=False)
        else:
            step = done / total if total else 1.0
            if step - self.last_step < LOG_EVERY and done < total:
                return
            self.last_step = step
            click.echo(line, err=True)
        self.shown = True

    def close(self) -> None:
        if self.shown and self.tty:
            click.echo("", err=True)
