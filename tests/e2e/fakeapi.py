"""A fake Anthropic Messages API on 127.0.0.1 for end-to-end tests of the real Claude Code CLI.

Start it with ``with FakeMessagesAPI() as api:`` (or the ``fake_api`` pytest fixture in
``e2e.harness``) and point the CLI at ``api.base_url`` through ``ANTHROPIC_BASE_URL``.

Every request is recorded in ``api.requests`` as a :class:`RecordedRequest`: method, path
(with query string), headers (credentials removed) and the parsed JSON body (``None`` when the
body is empty or not JSON; the raw text is kept in ``raw_body``).

Answers:

* ``POST /v1/messages`` (any query string, e.g. ``?beta=true``): one assistant text message,
  ``reply_text``, as server-sent events when the body has ``"stream": true`` and as one JSON
  message otherwise. ``stop_reason`` is ``end_turn``.
* a scripted tool call (``script_bash``): the first main-conversation request (one with tools)
  whose last user turn holds the trigger is answered with that ``tool_use`` instead (streamed);
  the request that brings the tool's result back gets ``reply_text``.
* ``POST /v1/messages/count_tokens``: ``{"input_tokens": <rough estimate>}``.
* anything else: 404 with an Anthropic-shaped ``not_found_error`` body, so a probe the CLI
  makes fails quickly and visibly in ``requests`` instead of hanging.

Every answer carries a ``request-id`` header. The HTTP plumbing shared with the other fakes
(recording, body reading, the server thread, the context manager) is in ``fakeserver.py``.
Only the standard library is used; the server binds to 127.0.0.1 only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from . import fakeserver
from .fakeserver import estimate_tokens, new_id, sse

DEFAULT_REPLY = "Fake API reply: acknowledged."


class RecordedRequest(fakeserver.RecordedRequest):
    """One request the fake received, and the status it answered with."""

    @property
    def is_messages(self) -> bool:
        """A model call: POST /v1/messages (not count_tokens)."""
        return self.method == "POST" and self.route.rstrip("/") == "/v1/messages"


class _Handler(fakeserver.FakeHandler[RecordedRequest]):
    server: fakeserver.FakeServer[RecordedRequest, ToolCall]

    record_class = RecordedRequest
    secret_headers = frozenset({"x-api-key", "authorization", "proxy-authorization", "cookie"})
    request_id_header = "request-id"

    def _not_found(self, rec: RecordedRequest) -> None:
        self._send_json(
            rec,
            404,
            {
                "type": "error",
                "error": {"type": "not_found_error", "message": f"fake API: no route {rec.path}"},
            },
        )

    # -- routes -----------------------------------------------------------------------------

    def answer(self, rec: RecordedRequest) -> None:
        route = rec.route.rstrip("/")
        if rec.method == "POST" and route == "/v1/messages":
            self._messages(rec)
        elif rec.method == "POST" and route == "/v1/messages/count_tokens":
            self._send_json(rec, 200, {"input_tokens": estimate_tokens(rec.body)})
        else:
            self._not_found(rec)

    def newest_user_input(self, body: dict[str, Any]) -> tuple[str, bool]:
        return _last_user_text(body)

    def _messages(self, rec: RecordedRequest) -> None:
        body = rec.body if isinstance(rec.body, dict) else {}
        if not isinstance(body.get("messages"), list):
            self._send_json(
                rec,
                400,
                {
                    "type": "error",
                    "error": {"type": "invalid_request_error", "message": "messages: required"},
                },
            )
            return
        model = body.get("model") or "claude-fake"
        text = self.server.reply_text
        tool = self.scripted_call(body)
        if tool is not None and body.get("stream"):
            self._send_tool_use(rec, model, body, tool)
            return
        msg_id = new_id("msg")
        in_tokens = estimate_tokens(body)
        out_tokens = max(1, len(text) // 4)
        if not body.get("stream"):
            self._send_json(
                rec,
                200,
                {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [{"type": "text", "text": text}],
                    "stop_reason": "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": in_tokens, "output_tokens": out_tokens},
                },
            )
            return
        events = b"".join(
            [
                sse(
                    "message_start",
                    {
                        "type": "message_start",
                        "message": {
                            "id": msg_id,
                            "type": "message",
                            "role": "assistant",
                            "model": model,
                            "content": [],
                            "stop_reason": None,
                            "stop_sequence": None,
                            "usage": {"input_tokens": in_tokens, "output_tokens": 1},
                        },
                    },
                ),
                sse(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "text", "text": ""},
                    },
                ),
                sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": text},
                    },
                ),
                sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
                sse(
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                        "usage": {"output_tokens": out_tokens},
                    },
                ),
                sse("message_stop", {"type": "message_stop"}),
            ]
        )
        self._send(rec, 200, events, "text/event-stream; charset=utf-8")

    def _send_tool_use(self, rec: RecordedRequest, model: str, body: dict[str, Any], tool: ToolCall) -> None:
        """One streamed assistant message that calls a tool (stop_reason tool_use)."""
        msg_id = new_id("msg")
        block = {"type": "tool_use", "id": new_id("toolu"), "name": tool.name, "input": {}}
        events = b"".join([
            sse("message_start", {"type": "message_start", "message": {
                "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": estimate_tokens(body), "output_tokens": 1}}}),
            sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "input_json_delta", "partial_json": json.dumps(tool.input)}}),
            sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
            sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                                  "usage": {"output_tokens": 20}}),
            sse("message_stop", {"type": "message_stop"}),
        ])
        self._send(rec, 200, events, "text/event-stream; charset=utf-8")


@dataclass
class ToolCall:
    """A scripted tool call: made once, in reply to the first main-conversation request whose
    last user turn holds `trigger` (and no tool result yet)."""

    trigger: str
    name: str
    input: dict[str, Any]
    used: bool = False


def _last_user_text(body: dict[str, Any]) -> tuple[str, bool]:
    """(text of the messages after the last assistant turn, whether they carry a tool result).

    Claude Code 2.1.332 sends the prompt as a user message and the hooks' context as a
    system-role message after it; both count."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    texts, result = [], False
    for m in messages[last + 1:]:
        content = m.get("content")
        if isinstance(content, str):
            texts.append(content)
            continue
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict):
                result = result or block.get("type") == "tool_result"
                if isinstance(block.get("text"), str):
                    texts.append(block["text"])
    return "\n".join(texts), result


class FakeMessagesAPI(fakeserver.FakeAPI[RecordedRequest]):
    """Context manager: a fake Messages API serving on 127.0.0.1:<free port> in a thread."""

    handler = _Handler
    thread_name = "fake-messages-api"
    default_reply = DEFAULT_REPLY

    def script_bash(self, trigger: str, command: str, description: str = "Run memrepo") -> None:
        """Answer the first prompt holding `trigger` with a Bash tool call running `command`;
        the request that brings its result back gets `reply_text`."""
        self._script(ToolCall(trigger, "Bash", {"command": command, "description": description}))

    def script_tool(self, trigger: str, name: str, arguments: dict[str, Any]) -> None:
        """Answer the first prompt holding `trigger` with a call of tool `name` (an MCP server's
        tool is `mcp__<server>__<tool>`); the request that brings its result back gets `reply_text`."""
        self._script(ToolCall(trigger, name, arguments))
