"""Codex CLI rollout reader: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*-<id>.jsonl` → turns.

Codex CLI 0.171 writes one `{"timestamp", "type", "payload"}` record per line
(tests/e2e/CODEX-NOTES.md §6, tests/fixtures/codex/rollout-sample.jsonl). Only what the model
saw is read: `response_item` records, whose payload is

- a `message`: role "user" (a prompt when its `content_item_kinds` say `user.text`; the CLI's
  own `<environment_context>` and Stop-hook `<hook_prompt>` messages are none), "assistant"
  (a reply), or "developer" (instructions and hooks' context, `hooks.additional_context`:
  never read, so memrepo's own recall does not feed back into capture);
- a `function_call` (`name`, `arguments` as a JSON string: the shell tool's `cmd`), joined to
  the reply it belongs to, or a `function_call_output` (a tool result).

`session_meta` (the first line) and `turn_context` give the session id and cwd; a `compacted`
record is where history was compacted. Text is cleaned as Claude Code's is (`turns.clean`).
"""

from __future__ import annotations

import json
from typing import IO, Any, Iterator

from memrepo.format import turns
from memrepo.format.turns import ToolCall, Turn

_NOT_A_PROMPT = ("<environment_context>", "<hook_prompt", "<user_instructions>", "<skills_instructions>")


def is_codex(first: dict[str, Any]) -> bool:
    """True when a file's first record is a Codex CLI rollout's session header."""
    return first.get("type") == "session_meta" and isinstance(first.get("payload"), dict)


def _texts(content: Any) -> list[str]:
    if not isinstance(content, list):
        return [content] if isinstance(content, str) else []
    return [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]


def _kinds(payload: dict[str, Any]) -> list[str]:
    meta = payload.get("internal_chat_message_metadata_passthrough")
    kinds = meta.get("content_item_kinds") if isinstance(meta, dict) else None
    return [str(k) for k in kinds] if isinstance(kinds, list) else []


def _tool(payload: dict[str, Any]) -> ToolCall:
    try:
        args = json.loads(payload.get("arguments") or "{}")
    except (TypeError, ValueError, RecursionError):
        args = {}
    args = args if isinstance(args, dict) else {}
    command = args.get("cmd") or args.get("command") or ""
    command = " ".join(map(str, command)) if isinstance(command, list) else str(command)
    paths = [turns.clean(str(args[k]))[: turns.MAX_TOOL_FIELD] for k in ("path", "file_path", "workdir")
             if isinstance(args.get(k), str) and args[k]]
    return ToolCall(str(payload.get("call_id") or ""), str(payload.get("name") or "?"),
                    turns.clean(command)[: turns.MAX_TOOL_FIELD], paths)


class _Session:
    __slots__ = ("id", "cwd")

    def __init__(self) -> None:
        self.id = ""
        self.cwd = ""

    def base(self, record: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
        return {"uuid": payload.get("id") or payload.get("call_id"), "timestamp": record.get("timestamp"),
                "sessionId": self.id, "cwd": self.cwd}


def _message(record: dict[str, Any], payload: dict[str, Any], n: int, s: _Session) -> Turn | None:
    role = payload.get("role")
    text = "\n".join(_texts(payload.get("content")))
    if role == "assistant":
        turn = Turn(s.base(record, payload), "assistant", "reply", turns.clean(text), n)
        turn.message_id = str(payload.get("id") or "")
        return turn
    if role != "user":
        return None  # developer: instructions, hooks' context
    kinds = _kinds(payload)
    if (kinds and "user.text" not in kinds) or text.lstrip().startswith(_NOT_A_PROMPT):
        return None
    text = turns.clean(text)
    return Turn(s.base(record, payload), "user", "prompt", text, n) if text else None


def read_stream(fh: IO[bytes], start_line: int = 0) -> Iterator[Turn]:
    """Turns after line `start_line`, in file order; a reply's tool calls are joined to it."""
    s = _Session()
    pending: Turn | None = None
    for n, data in turns.lines(fh, 0):
        record = turns.parse_line(data)
        payload = record.get("payload") if record is not None else None
        if record is None or not isinstance(payload, dict):
            continue
        kind = record.get("type")
        if kind in ("session_meta", "turn_context"):
            s.id = str(payload.get("session_id") or payload.get("id") or s.id) if kind == "session_meta" else s.id
            s.cwd = str(payload.get("cwd") or s.cwd)
            continue
        if n <= start_line:
            continue
        turn: Turn | None = None
        if kind == "compacted":
            turn = Turn(s.base(record, payload), "system", "compact_boundary", "auto", n)
        elif kind == "response_item" and payload.get("type") == "message":
            turn = _message(record, payload, n, s)
        elif kind == "response_item" and payload.get("type") == "function_call":
            if pending is None:
                pending = Turn(s.base(record, payload), "assistant", "reply", "", n)
            pending.tools.append(_tool(payload))
            pending.last_line = n
            continue
        elif kind == "response_item" and payload.get("type") == "function_call_output":
            output = payload.get("output")
            text = output if isinstance(output, str) else "\n".join(_texts(output.get("content") if isinstance(output, dict) else output))
            turn = Turn(s.base(record, payload), "tool", "tool_result", turns.clean(text), n)
            turn.tool_use_ids = [str(payload.get("call_id") or "")]
        if turn is None:
            continue
        if pending is not None:
            yield pending
            pending = None
        if turn.role == "assistant":
            pending = turn
        else:
            yield turn
    if pending is not None:
        yield pending
