"""Write Claude Code transcripts in the real JSONL shape (2.1.3xx) for the capture tests.

Field names and nesting follow the real fixtures in tests/fixtures/claude-code/: every message
line has uuid, parentUuid, isSidechain, sessionId, cwd, version, gitBranch, timestamp, type and
message; one assistant reply is split over several lines sharing `message.id`; hook output
is an `attachment` line.
"""

from __future__ import annotations

import json
import uuid as _uuid
import zlib
from typing import Any


class Session:
    def __init__(self, session_id: str = "5e55a0b1-0000-4000-8000-000000000001", cwd: str = "/home/user/project") -> None:
        self.session_id = session_id
        self.cwd = cwd
        self.lines: list[dict[str, Any]] = []
        self.parent: str | None = None
        self.n = 0

    def _base(self, kind: str, **extra: Any) -> dict[str, Any]:
        self.n += 1
        uid = str(_uuid.UUID(int=self.n + zlib.crc32(self.session_id.encode()) * 10**6))
        line = {"parentUuid": self.parent, "isSidechain": False, "userType": "external", "cwd": self.cwd,
                "sessionId": self.session_id, "version": "2.1.332", "gitBranch": "main", "type": kind,
                "uuid": uid, "timestamp": f"2026-11-29T18:{self.n // 60:02d}:{self.n % 60:02d}.000Z", **extra}
        self.parent = uid
        self.lines.append(line)
        return line

    def user(self, content: Any, **extra: Any) -> dict[str, Any]:
        return self._base("user", message={"role": "user", "content": content}, **extra)

    def assistant(self, *blocks: dict[str, Any], msg_id: str | None = None) -> list[dict[str, Any]]:
        """One reply; each block on its own line with the same message id, as Claude Code writes it."""
        mid = msg_id or f"msg_{self.n:04d}"
        return [self._base("assistant", message={"id": mid, "type": "message", "role": "assistant", "model": "claude-test",
                                                 "content": [b], "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}},
                           requestId=f"req_{mid}") for b in blocks]

    def say(self, text: str) -> list[dict[str, Any]]:
        return self.assistant({"type": "text", "text": text})

    def bash(self, command: str, output: str, is_error: bool = False) -> None:
        tid = f"toolu_{self.n:04d}"
        self.assistant({"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": command, "description": "run"}})
        self.user([{"tool_use_id": tid, "type": "tool_result", "content": output, "is_error": is_error}])

    def attachment(self, kind: str, content: Any) -> None:
        self._base("attachment", attachment={"type": kind, "content": content, "hookEvent": "UserPromptSubmit"})

    def raw(self, line: dict[str, Any]) -> None:
        self.lines.append(line)

    def text(self) -> str:
        return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in self.lines)

    def write(self, path: str, start: int = 0) -> str:
        with open(path, "a" if start else "w", encoding="utf-8") as fh:
            fh.write("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in self.lines[start:]))
        return path
