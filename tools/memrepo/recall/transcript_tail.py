"""The previous turn of a Claude Code transcript, read from its tail (stdlib only: hot path).

The recall hook runs before every prompt, so this reads a bounded number of bytes from the
end of the file and never the whole transcript, and any error yields "" (hooks fail open).
"""

from memrepo.base import _fast
from memrepo.recall.spans import strip_private, strip_tag

# `typing` stays unloaded at runtime; mypy treats this name as always true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Entry = dict[str, Any]

# stat.S_ISREG's bits: `import stat` costs a follow-up prompt two modules (~0.34 M instructions, issue 44)
_S_IFMT, _S_IFREG = 0o170000, 0o100000
MAX_BYTES = 262144
MAX_CHARS = 4000
# From a tool call only these inputs are kept (a command's first line, a path): they name the
# subject of a turn whose assistant text often only says "Let me check".
TOOL_INPUT_KEYS = ("command", "file_path")
MAX_TOOL_INPUT_CHARS = 200

# User lines that Claude Code writes itself: slash commands and their output, `!` shell
# output, and interrupt notices. None of them is a prompt a person typed.
_NOT_A_PROMPT = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-",
    "<bash-stdout>",
    "<bash-stderr>",
    "[Request interrupted by user",
)
# Injected context inside user text (older builds put hook output there, see anthropics/claude-code#11906):
# memrepo's own recall must never feed back into the next query.
_INJECTED_TAGS = ("system-reminder", "user-prompt-submit-hook", "hook_context")
# The lines `scheduled` looks at: a wake-up's fire, and what ends a turn or starts a typed one.
_TURN_MARKS = (b"scheduled_task_fire", b'"assistant"', b"turn_duration", b"stop_hook_summary", b'"human"')
_TURN_ENDS = ("turn_duration", "stop_hook_summary")
_FLAGS_TO_SKIP = ("isMeta", "isSidechain", "isCompactSummary", "isVisibleInTranscriptOnly")


def previous_turn(
    transcript_path: str,
    current_prompt: str = "",
    max_bytes: int = MAX_BYTES,
    max_chars: int = MAX_CHARS,
) -> str:
    """Text of the last human prompt and the assistant reply that followed, joined by "\\n".

    Reads at most the last `max_bytes` of the JSONL transcript. When the last prompt equals
    `current_prompt` and nothing has answered it yet, Claude Code has already written the
    prompt being submitted, so the turn before is used. If the tail holds a reply but not its
    prompt, the reply alone is returned. The prompt keeps at most half of `max_chars`; the
    result at most `max_chars`. Returns "" when there is no turn or on any error.
    """
    try:
        lines = _tail_lines(transcript_path, max_bytes)
        prompt, replies = _last_turn(lines, _normalize(current_prompt or ""))
        parts = [prompt[: max_chars // 2]] if prompt else []
        parts.extend(_reply_parts(replies))
        return "\n".join(parts)[:max_chars]
    except Exception:  # fail open: a broken transcript must never break the user's prompt
        return ""


def scheduled(transcript_path: str, max_bytes: int = MAX_BYTES) -> bool:
    """Whether the prompt being submitted was fired by Claude Code's scheduler (a `/loop`
    wake-up), not typed: the transcript holds a `scheduled_task_fire` line since the last turn
    ended (an assistant message, the turn's closing system lines) or a person last typed
    (`origin.kind` "human"). Claude Code writes the fire line before the prompt it fires, and the
    prompt itself before the hook runs (tests/fixtures/prompt-frames, `tui-loop-wakeup`). A
    transcript that cannot be read says True: silent, as when nothing told them apart.
    """
    try:
        for raw in reversed(_tail_lines(transcript_path, max_bytes)):
            if not any(mark in raw for mark in _TURN_MARKS):
                continue
            entry = _fast.loads(raw.decode("utf-8"))
            if not isinstance(entry, dict):
                continue
            kind = entry.get("type")
            if kind == "system" and entry.get("subtype") == "scheduled_task_fire":
                return True
            origin = entry.get("origin")
            if (kind == "assistant" or (kind == "system" and entry.get("subtype") in _TURN_ENDS)
                    or (kind == "user" and isinstance(origin, dict) and origin.get("kind") == "human")):
                return False
        return False  # a session's first prompt: nothing was scheduled before it
    except Exception:  # unreadable: keep the silence a `/loop` line had before its transcript was read
        return True


def _tail_lines(path: str, max_bytes: int) -> list[bytes]:
    """Complete lines in the last `max_bytes` of a regular file (a FIFO would block)."""
    if max_bytes <= 0 or (_fast.stat(path).st_mode & _S_IFMT) != _S_IFREG:
        return []
    with open(path, "rb") as f:
        size = _fast.fstat(f.fileno()).st_size
        start = max(0, size - max_bytes)
        if start == 0:
            return f.read(max_bytes).split(b"\n")
        # One byte before the window tells whether the window begins on a line boundary.
        f.seek(start - 1)
        chunk = f.read(max_bytes + 1)
    cut = chunk.find(b"\n")
    return [] if cut < 0 else chunk[cut + 1 :].split(b"\n")


def _last_turn(lines: list[bytes], current: str) -> "tuple[str, list[Entry]]":
    """Walk back to the last human prompt; return it and the assistant messages after it."""
    replies: "list[Entry]" = []
    skipped_current = False
    for raw in reversed(lines):
        entry = _parse(raw)
        if entry is None:
            continue
        message = entry["message"]
        if entry.get("type") == "assistant":
            replies.append(message)
            continue
        text = _prompt_text(message.get("content"))
        if text is None:
            continue
        # A prompt nothing has answered yet can be the one being submitted right now; an
        # answered one equal to it is a repeat ("continue") and is the real previous turn.
        if current and not replies and not skipped_current and _normalize(text) == current:
            skipped_current = True
            continue
        replies.reverse()
        return text, replies
    replies.reverse()
    return "", replies


def _parse(raw: bytes) -> "Entry | None":
    """A user or assistant line of the main conversation with a message dict, else None."""
    if b'"user"' not in raw and b'"assistant"' not in raw:
        return None
    try:
        entry = _fast.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(entry, dict) or entry.get("type") not in ("user", "assistant"):
        return None
    if any(entry.get(flag) is True for flag in _FLAGS_TO_SKIP):
        return None
    if "toolUseResult" in entry or not isinstance(entry.get("message"), dict):
        return None
    return entry


def _prompt_text(content: object) -> str | None:
    """The typed text of a user message, or None when the line is not a human prompt."""
    if isinstance(content, str):
        text = _strip_injected(content).strip()
        return text if text and not text.startswith(_NOT_A_PROMPT) else None
    if not isinstance(content, list):
        return None
    texts = []
    has_image = False
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "tool_result":
            return None  # tool output, even when text blocks ride along with it
        if kind == "image":
            has_image = True
        elif kind == "text" and isinstance(block.get("text"), str):
            text = _strip_injected(block["text"]).strip()
            if text:
                texts.append(text)
    joined = "\n".join(texts)
    if joined.startswith(_NOT_A_PROMPT):
        return None
    return joined if joined or has_image else None


def _reply_parts(messages: "list[Entry]") -> list[str]:
    """Text blocks and chosen tool inputs, in order, each once per message id.

    One API response is split over several lines sharing `message.id` (CLAUDE-CODE.md §4);
    a line repeated with the same block must not double it.
    """
    parts: list[str] = []
    seen: set[tuple[object, str]] = set()
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            continue
        for block in content:
            part = _block_text(block)
            key = (message.get("id"), part)
            if part and key not in seen:
                seen.add(key)
                parts.append(part)
    return parts


def _block_text(block: object) -> str:
    if not isinstance(block, dict):
        return ""
    value = block.get("text")
    if block.get("type") == "text" and isinstance(value, str):
        return value.strip()
    if block.get("type") == "tool_use" and isinstance(block.get("input"), dict):
        values = (block["input"].get(key) for key in TOOL_INPUT_KEYS)
        words = [v.strip().split("\n", 1)[0] for v in values if isinstance(v, str) and v.strip()]
        return "\n".join(w[:MAX_TOOL_INPUT_CHARS] for w in words)
    return ""  # thinking, redacted_thinking, server tool blocks


def _strip_injected(text: str) -> str:
    for tag in _INJECTED_TAGS:
        text = strip_tag(text, tag)
    return strip_private(text)  # a private span of the last turn must not become a query term


def _normalize(text: str) -> str:
    return " ".join(text.split())


# -- other agents' transcripts -------------------------------------------------------------------
# Codex CLI's and Gemini CLI's readers (`memrepo.agents.*.tail`) parse their own lines into
# (role, text) items and share the walk back to the previous turn.


def tail_lines(path: str, max_bytes: int = MAX_BYTES) -> list[bytes]:
    """Complete lines in the last `max_bytes` of a regular file."""
    return _tail_lines(path, max_bytes)


def previous_of(items: "list[tuple[str, str]]", current_prompt: str = "", max_chars: int = MAX_CHARS) -> str:
    """The previous turn from (role "user" | "assistant", text) items in file order: the last
    prompt (unless it is the one being submitted, still unanswered) and the replies after it."""
    current = _normalize(current_prompt or "")
    replies: "list[str]" = []
    skipped_current = False
    prompt = ""
    for role, text in reversed(items):
        if role == "assistant":
            replies.append(text)
            continue
        text = _strip_injected(text).strip()
        if not text:
            continue
        if current and not replies and not skipped_current and _normalize(text) == current:
            skipped_current = True
            continue
        prompt = text
        break
    replies.reverse()
    parts = [prompt[: max_chars // 2]] if prompt else []
    parts.extend(r for r in replies if r)
    return "\n".join(parts)[:max_chars]
