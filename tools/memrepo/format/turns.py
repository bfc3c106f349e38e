"""The turns every transcript reader yields (Claude Code's, Codex CLI's, Gemini CLI's), the
cleaning each turn's text gets before it leaves a reader, and the bounded line reading they share.
`transcript` dispatches to the readers; the readers import this, never `transcript` (issue 40)."""

from __future__ import annotations

import json
import re
from typing import IO, Any, Iterator

from memrepo.format import catalogue
from memrepo.recall.spans import strip_tag

MAX_LINE_BYTES = 8 * 1024 * 1024  # a longer line (a pasted image) is skipped without being held
MAX_TEXT_CHARS = 20000  # per turn; the rest is cut with a marker
MAX_TOOL_FIELD = 500
_BASE64 = re.compile(r"(?:data:[\w/+.-]+;base64,)?[A-Za-z0-9+/]{200,}={0,2}")
_MEMREPO_PREAMBLE = re.compile(r"memrepo recalled \d+ notes? from the user's memory repository[^\n]*\n?")
_DROPPED_TAGS = ("memrepo-memories", "system-reminder", "user-prompt-submit-hook", "private")


class ToolCall:
    """A tool call of an assistant reply: its name and the command or paths it names (redacted)."""

    __slots__ = ("id", "name", "command", "paths", "description")

    def __init__(self, id: str, name: str, command: str = "", paths: list[str] | None = None, description: str = "") -> None:
        self.id = id
        self.name = name
        self.command = command
        self.paths = paths or []
        self.description = description

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "command": self.command, "paths": self.paths,
                "description": self.description}


class Turn:
    """One conversation turn. Fields:

    uuid (of the turn's first line), parent_uuid, session_id, role, kind (see the module
    docstring), text (clean), tools ([ToolCall]), tool_use_ids (tool results: the calls they
    answer), is_error (a failed or rejected tool call), timestamp (ISO-8601 of the first line),
    line / last_line (1-based line numbers in the file), message_id (assistant), is_sidechain,
    agent_id, cwd, git_branch, prompt_id.
    """

    __slots__ = ("uuid", "parent_uuid", "session_id", "role", "kind", "text", "tools", "tool_use_ids", "is_error",
                 "timestamp", "line", "last_line", "message_id", "is_sidechain", "agent_id", "cwd", "git_branch",
                 "prompt_id")

    def __init__(self, raw: dict[str, Any], role: str, kind: str, text: str, line: int) -> None:
        self.uuid = str(raw.get("uuid") or "")
        self.parent_uuid = raw.get("parentUuid")
        self.session_id = str(raw.get("sessionId") or "")
        self.role = role
        self.kind = kind
        self.text = text
        self.tools: list[ToolCall] = []
        self.tool_use_ids: list[str] = []
        self.is_error = False
        self.timestamp = str(raw.get("timestamp") or "")
        self.line = self.last_line = line
        message = raw.get("message")
        self.message_id = str(message.get("id") or "") if isinstance(message, dict) else ""
        self.is_sidechain = bool(raw.get("isSidechain"))
        self.agent_id = str(raw.get("agentId") or "")
        self.cwd = str(raw.get("cwd") or "")
        self.git_branch = str(raw.get("gitBranch") or "")
        self.prompt_id = str(raw.get("promptId") or "")

    def as_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__slots__ if k != "tools"}
        out["tools"] = [t.as_dict() for t in self.tools]
        return out

    def __repr__(self) -> str:
        return f"Turn({self.line}, {self.role}/{self.kind}, {self.text[:40]!r})"


def clean(text: str) -> str:
    """Text as the reader passes it on: injected context, private spans, base64 and secrets removed."""
    for tag in _DROPPED_TAGS:
        text = strip_tag(text, tag)
    if "memrepo recalled" in text:
        text = _MEMREPO_PREAMBLE.sub("", text)
    if len(text) >= 200:
        text = _BASE64.sub("[base64]", text)
    text = catalogue.redact(text.strip())
    if len(text) > MAX_TEXT_CHARS:
        text = text[:MAX_TEXT_CHARS] + " […cut]"
    return text


def lines(fh: IO[bytes], start_line: int) -> Iterator[tuple[int, bytes | None]]:
    """(1-based line number, bytes or None when over MAX_LINE_BYTES), holding at most one capped line."""
    n = 0
    while True:
        data = fh.readline(MAX_LINE_BYTES + 1)
        if not data:
            return
        too_long = len(data) > MAX_LINE_BYTES and not data.endswith(b"\n")
        if not too_long and not data.endswith(b"\n") and parse_line(data) is None:
            return  # a line Claude Code is still writing: read it next time, whole
        n += 1
        while too_long and data and not data.endswith(b"\n"):
            data = fh.readline(MAX_LINE_BYTES)
        if n > start_line:
            yield n, None if too_long else data


def parse_line(data: bytes | None) -> dict[str, Any] | None:
    """A JSONL line as a JSON object, or None for a blank, malformed or non-object line."""
    if not data or not data.strip():
        return None
    try:
        raw = json.loads(data)
    except (ValueError, RecursionError):  # a line of thousands of nested brackets is malformed too
        return None
    return raw if isinstance(raw, dict) else None
