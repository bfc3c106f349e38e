"""Gemini CLI session file reader: `~/.gemini/tmp/<project>/chats/session-*.jsonl` → turns.

Gemini CLI 0.61 appends one JSON record per line (tests/e2e/GEMINI-NOTES.md §6,
tests/fixtures/gemini/):

- a metadata record (`sessionId`, `projectHash`, `startTime`, `kind`), again at each resume;
- a message record with an `id`: `type` "user" (`content` a list of parts; `displayContent`
  the same without the BeforeAgent hook's `<hook_context>` part) or "gemini" (`content` the
  reply text, `toolCalls` [{id, name, args, result}]). A later record with the same id
  replaces the earlier one (a reply is written once without its tool calls, once with them);
  a user message of `functionResponse` parts is a tool result;
- `{"$set": {...}}` updates the metadata; `$set.messages` rewrites the history on resume (turns
  already in the file, so they are not read twice); `{"$rewindTo": id}` cuts history.

The turns are cleaned as Claude Code's are (`turns.clean`): hook context, private spans,
base64 and secrets removed. The CLI's own first message (`<session_context>`) is no prompt.
"""

from __future__ import annotations

from typing import IO, Any, Iterator

from memrepo.format import turns
from memrepo.format.turns import ToolCall, Turn
from memrepo.recall.spans import strip_tag

HOOK_TAG = "hook_context"
_OWN_CONTEXT = "<session_context>"


def is_gemini(first: dict[str, Any]) -> bool:
    """True when a file's first record is a Gemini CLI session's metadata."""
    return "projectHash" in first and "sessionId" in first


def _texts(parts: Any) -> list[str]:
    if isinstance(parts, str):
        return [parts]
    if not isinstance(parts, list):
        return []
    return [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]


def _clean(text: str) -> str:
    return turns.clean(strip_tag(text, HOOK_TAG))


def _tool(call: dict[str, Any]) -> ToolCall:
    _args = call.get("args")
    args: dict[str, Any] = _args if isinstance(_args, dict) else {}
    command = args.get("command") if isinstance(args.get("command"), str) else ""
    paths = [_clean(args[k])[: turns.MAX_TOOL_FIELD] for k in ("file_path", "dir_path", "path")
             if isinstance(args.get(k), str) and args[k]]
    desc = args.get("description") if isinstance(args.get("description"), str) else ""
    return ToolCall(str(call.get("id") or ""), str(call.get("name") or "?"), _clean(str(command))[: turns.MAX_TOOL_FIELD],
                    paths, _clean(str(desc))[: turns.MAX_TOOL_FIELD])


def _turn(raw: dict[str, Any], n: int, session: str) -> Turn | None:
    base = {"uuid": raw.get("id"), "timestamp": raw.get("timestamp"), "sessionId": session}
    if raw.get("type") == "gemini":
        turn = Turn(base, "assistant", "reply", _clean("\n".join(_texts(raw.get("content")))), n)
        turn.message_id = str(raw.get("id") or "")
        calls = raw.get("toolCalls")
        turn.tools = [_tool(c) for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []
        return turn if turn.text or turn.tools else None
    parts = raw.get("content")
    results = [p["functionResponse"] for p in parts if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)] \
        if isinstance(parts, list) else []
    if results:
        outputs = [r.get("response") for r in results]
        texts = [str(o.get("output") if isinstance(o, dict) and "output" in o else o) for o in outputs]
        text = "\n".join(texts).replace("<untrusted_context>", "").replace("</untrusted_context>", "")
        turn = Turn(base, "tool", "tool_result", _clean(text), n)
        turn.tool_use_ids = [str(r.get("id") or "") for r in results]
        turn.is_error = any(isinstance(o, dict) and "error" in o for o in outputs)
        return turn
    shown = raw.get("displayContent") if raw.get("displayContent") is not None else parts
    text = "\n".join(_texts(shown))
    if text.lstrip().startswith(_OWN_CONTEXT):
        return None
    text = _clean(text)
    return Turn(base, "user", "prompt", text, n) if text else None


def read_stream(fh: IO[bytes], start_line: int = 0) -> Iterator[Turn]:
    """Turns after line `start_line`, in file order; a reply rewritten under its id is read once, whole."""
    pending: Turn | None = None
    session = ""
    for n, data in turns.lines(fh, start_line):
        raw = turns.parse_line(data)
        if raw is None:
            continue
        if is_gemini(raw):
            session = str(raw.get("sessionId") or session)
            continue
        if "id" not in raw or raw.get("type") not in ("user", "gemini"):
            continue  # $set / $rewindTo / info, warning and error lines
        turn = _turn(raw, n, session)
        if pending is not None and turn is not None and turn.role == "assistant" and turn.message_id == pending.message_id:
            turn.line = pending.line
            pending = turn
            continue
        if pending is not None and (turn is not None or raw.get("id") != pending.message_id):
            yield pending
            pending = None
        if turn is None:
            continue
        if turn.role == "assistant":
            pending = turn
        else:
            yield turn
    if pending is not None:
        yield pending
