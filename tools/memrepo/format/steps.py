"""A tool call of an agent's transcript reduced to its shape: the steps of a procedure.

A shell command keeps its program and leading sub-command words, and loses flags (with their
values), numbers, quoted arguments and paths (paths become one `<path>`); an edit keeps only
the tool's name and `<path>`. Reading and searching tools are not steps (they explore; they do
not do the procedure). A chained shell command (`a && b; c`) is several steps; `cd` is none.
The transcript index stores each call's step (`memrepo.store.sessions`); the skills pass counts
them (`memrepo.passes.skills.procedures`).
"""

from __future__ import annotations

import os
import re
import shlex

MAX_WORDS = 3
EDIT_TOOLS = ("Edit", "Write", "MultiEdit", "NotebookEdit")
_CHAIN = re.compile(r"\s*(?:&&|\|\||;|\n)\s*")
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_WORD = re.compile(r"^[A-Za-z][A-Za-z0-9_:-]*$")
_NUMBER = re.compile(r"^[+-]?\d[\d.,:]*[a-z%]{0,3}$", re.I)
_FILE = re.compile(r"\.[A-Za-z0-9]{1,6}$")
_PYTHON = re.compile(r"^python[0-9.]*$")
NOT_STEPS = ("cd", "pushd", "popd", "true", ":")


def _is_path(tok: str) -> bool:
    return "/" in tok or tok.startswith(("~", ".")) or bool(_FILE.search(tok)) and not _NUMBER.match(tok)


def normalize_segment(segment: str) -> str:
    """One simple shell command as a step: `pytest -x tests/a.py -k foo` → `pytest <path>`."""
    try:
        tokens = shlex.split(segment, comments=True)
    except ValueError:
        tokens = segment.split()
    while tokens and _ASSIGN.match(tokens[0]):
        tokens.pop(0)
    if not tokens:
        return ""
    prog = os.path.basename(tokens[0]) or tokens[0]
    prog = "python" if _PYTHON.match(prog) else prog
    if prog in NOT_STEPS:
        return ""
    words, has_path, flagged = [prog], False, False
    if prog == "python" and len(tokens) > 2 and tokens[1] == "-m":
        words, tokens = ["python", "-m", tokens[2]], tokens[2:]  # `python -m pytest` runs pytest, not python
    for tok in tokens[1:]:
        if tok.startswith("-"):
            flagged = True
        elif _NUMBER.match(tok):
            continue
        elif _is_path(tok):
            has_path = True
        elif _WORD.match(tok) and not flagged and len(words) <= MAX_WORDS:
            words.append(tok)
    return " ".join(words + (["<path>"] if has_path else []))


def normalize_command(command: str) -> list[str]:
    """A shell command line as its steps (a pipeline stays one step, its parts joined by ` | `)."""
    steps = []
    for part in _CHAIN.split(command.strip()):
        piped = [normalize_segment(p) for p in part.split("|")]
        step = " | ".join(p for p in piped if p)
        if step:
            steps.append(step)
    return steps


def step_of(name: str, command: str, paths: list[str]) -> str | None:
    """The step(s) of one tool call, newline-joined, or None when the call is not a step."""
    if name == "Bash" and command:
        steps = normalize_command(command)
        return "\n".join(steps) if steps else None
    if name in EDIT_TOOLS:
        return f"{name} <path>"
    return None
