"""The previous turn of a Gemini CLI session file, read from its tail (stdlib only: the prompt path).

Reads message records (GEMINI-NOTES.md §6): a user message's `displayContent` (without the
BeforeAgent hook's context) or `content`, a reply's text and its shell commands. A record
rewritten under the same id counts once. Any error yields "" (hooks fail open).
"""

from memrepo.base import _fast
from memrepo.recall import transcript_tail

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _texts(parts: "Any") -> "list[str]":
    if isinstance(parts, str):
        return [parts]
    return [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)] if isinstance(parts, list) else []


def _item(raw: bytes) -> "tuple[str, str, str] | None":
    if b'"type"' not in raw or b'"id"' not in raw:
        return None
    try:
        record = _fast.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError, UnicodeDecodeError):
        return None
    if not isinstance(record, dict) or record.get("type") not in ("user", "gemini"):
        return None
    rid = str(record.get("id") or "")
    if record["type"] == "gemini":
        texts = _texts(record.get("content"))
        calls = record.get("toolCalls")
        for call in calls if isinstance(calls, list) else []:
            args = call.get("args") if isinstance(call, dict) else None
            cmd = args.get("command") if isinstance(args, dict) else None
            if isinstance(cmd, str) and cmd.strip():
                texts.append(cmd.strip().split("\n", 1)[0][: transcript_tail.MAX_TOOL_INPUT_CHARS])
        return (rid, "assistant", "\n".join(texts).strip())
    shown = record.get("displayContent") if record.get("displayContent") is not None else record.get("content")
    text = "\n".join(_texts(shown)).strip()
    if not text or text.startswith("<session_context>"):
        return None  # a tool result (functionResponse parts), or the CLI's own first message
    return (rid, "user", text)


def previous_turn(transcript_path: str, current_prompt: str = "") -> str:
    """Text of the last prompt before `current_prompt` and the replies that followed, or ""."""
    try:
        items: "list[tuple[str, str]]" = []
        last_id = ""
        for item in map(_item, transcript_tail.tail_lines(transcript_path)):
            if item is None:
                continue
            rid, role, text = item
            if rid and rid == last_id and items:
                items[-1] = (role, text)  # the same message written again, whole
            else:
                items.append((role, text))
            last_id = rid
        return transcript_tail.previous_of(items, current_prompt)
    except Exception:  # noqa: BLE001 — fail open
        return ""
