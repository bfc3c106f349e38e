"""The previous turn of a Codex CLI rollout, read from its tail (stdlib only: the prompt path).

Reads `response_item` lines (CODEX-NOTES.md §6): user prompts (`user.text`), assistant
replies and the shell tool's commands; never developer messages (hooks' context). Any error
yields "" (hooks fail open).
"""

from memrepo.base import _fast
from memrepo.recall import transcript_tail

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _item(raw: bytes) -> "tuple[str, str] | None":
    if b'"response_item"' not in raw:
        return None
    try:
        record = _fast.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError, UnicodeDecodeError):
        return None
    payload = record.get("payload") if isinstance(record, dict) else None
    if not isinstance(payload, dict):
        return None
    if payload.get("type") == "function_call":
        try:
            args = _fast.loads(str(payload.get("arguments") or "{}"))
        except (ValueError, RecursionError):
            return None
        cmd = args.get("cmd") if isinstance(args, dict) else None
        return ("assistant", cmd.split("\n", 1)[0][: transcript_tail.MAX_TOOL_INPUT_CHARS]) if isinstance(cmd, str) else None
    if payload.get("type") != "message" or payload.get("role") not in ("user", "assistant"):
        return None
    meta: "Any" = payload.get("internal_chat_message_metadata_passthrough")
    kinds = meta.get("content_item_kinds") if isinstance(meta, dict) else None
    if payload["role"] == "user" and isinstance(kinds, list) and "user.text" not in kinds:
        return None  # <environment_context>, a Stop hook's prompt
    content = payload.get("content")
    texts = [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)] if isinstance(content, list) else []
    return (str(payload["role"]), "\n".join(texts).strip())


def previous_turn(transcript_path: str, current_prompt: str = "") -> str:
    """Text of the last prompt before `current_prompt` and the replies that followed, or ""."""
    try:
        items = [i for i in map(_item, transcript_tail.tail_lines(transcript_path)) if i is not None]
        return transcript_tail.previous_of(items, current_prompt)
    except Exception:  # noqa: BLE001 — fail open: a broken rollout never breaks the prompt
        return ""
