"""Adapters for agents other than Claude Code: Codex CLI (`codex`) and Gemini CLI (`gemini`).

Each is a thin translation of one agent's hook contract onto the handlers Claude Code's hooks
use (`memrepo.claude`): the same recall decision, the same fail-open rule, the same recall log
(with the agent named), the same capture queue. Per agent: `entry` (the hook command, one
event per argument: a script kept small, since a script run by path is compiled on every run),
`handlers` (what each event does), `install` (its user settings), `tail` (the previous turn of
its transcript, for follow-ups); Codex adds `trust` (the hash its hook trust expects).

May import: the standard library, `memrepo.errors`, `memrepo.proc`, and every layer below
(`base` … `claude`). `entry`, `handlers` and `tail` run on hook paths: standard library only
at import time, heavy layers only inside the handler that needs them. A prompt hook loads the
prompt path from its bundle first (`memrepo.base.bundle`, which holds these modules too).
"""
