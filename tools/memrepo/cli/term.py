"""The CLI's one way to print repository text: `echo`, with terminal controls shown, never obeyed.

See `memrepo.format.terminal` (issue 38, part 8). Every command prints through `echo`, and
`--json` through `json_text`; newlines and tabs stay as they are.
"""

from __future__ import annotations

import click

from memrepo.format.terminal import json_text, safe

__all__ = ["count", "echo", "json_text", "safe"]


def echo(message: object = "", nl: bool = True, err: bool = False) -> None:
    """`click.echo` of `safe(message)`."""
    click.echo(safe(message), nl=nl, err=err)


def count(n: int, noun: str, plural: str = "") -> str:
    """`n` and its noun, singular for one: "1 memory", "3 memories", "1 line"."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
