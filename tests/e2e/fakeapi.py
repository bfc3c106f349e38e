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

Only the standard library is used; the server binds to 127.0.0.1 only.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

DEFAULT_REPLY = "Fake API reply: acknowledged."

# Header names never recorded (lower case): the API key and anything else that authenticates.
_SECRET_HEADERS = frozenset({"x-api-key", "authorization", "proxy-authorization", "cookie"})

_ids = itertools.count(1)


@dataclass
class RecordedRequest:
    method: str
    path: str  # as sent, including any query string
    headers: dict[str, str]  # lower-cased names, credentials removed
    body: Any  # parsed JSON, or None
    raw_body: str = ""
    status: int = 0  # status code the fake answered with
    time: float = field(default_factory=time.time)

    @property
    def route(self) -> str:
        """The path without its query string."""
        return urlsplit(self.path).path

    @property
    def is_messages(self) -> bool:
        """A model call: POST /v1/messages (not count_tokens)."""
        return self.method == "POST" and self.route.rstrip("/") == "/v1/messages"


def _estimate_tokens(body: Any) -> int:
    """A rough, deterministic token estimate (4 characters a token) for usage numbers."""
    try:
        text = json.dumps(body)
    except (TypeError, ValueError):
        return 1
    return max(1, len(text) // 4)


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_Server"

    # -- plumbing -------------------------------------------------------------------------

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # keep pytest output clean; everything is in api.requests

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size_line = self.rfile.readline().strip()
                size = int(size_line.split(b";")[0] or b"0", 16)
                if size == 0:
                    # trailers until the blank line
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _record(self) -> RecordedRequest:
        raw = self._read_body()
        text = raw.decode("utf-8", errors="replace")
        try:
            body = json.loads(text) if text.strip() else None
        except ValueError:
            body = None
        headers = {
            k.lower(): v for k, v in self.headers.items() if k.lower() not in _SECRET_HEADERS
        }
        rec = RecordedRequest(self.command, self.path, headers, body, text)
        with self.server.lock:
            self.server.requests.append(rec)
        return rec

    def _send(self, rec: RecordedRequest, status: int, payload: bytes, content_type: str) -> None:
        rec.status = status
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("request-id", f"req_fake_{next(_ids):06d}")
        if content_type.startswith("text/event-stream"):
            self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)
            self.wfile.flush()

    def _send_json(self, rec: RecordedRequest, status: int, obj: Any) -> None:
        self._send(rec, status, json.dumps(obj).encode(), "application/json")

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

    def do_POST(self) -> None:
        rec = self._record()
        route = rec.route.rstrip("/")
        if route == "/v1/messages":
            self._messages(rec)
        elif route == "/v1/messages/count_tokens":
            self._send_json(rec, 200, {"input_tokens": _estimate_tokens(rec.body)})
        else:
            self._not_found(rec)

    def _other(self) -> None:
        self._not_found(self._record())

    do_GET = do_PUT = do_PATCH = do_DELETE = do_HEAD = _other  # noqa: N815

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
        tool = self.server.next_tool_call(body)
        if tool is not None and body.get("stream"):
            self._send_tool_use(rec, model, body, tool)
            return
        msg_id = f"msg_fake_{next(_ids):06d}"
        in_tokens = _estimate_tokens(body)
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
                _sse(
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
                _sse(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "text", "text": ""},
                    },
                ),
                _sse(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": 0,
                        "delta": {"type": "text_delta", "text": text},
                    },
                ),
                _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
                _sse(
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                        "usage": {"output_tokens": out_tokens},
                    },
                ),
                _sse("message_stop", {"type": "message_stop"}),
            ]
        )
        self._send(rec, 200, events, "text/event-stream; charset=utf-8")


    def _send_tool_use(self, rec: RecordedRequest, model: str, body: dict[str, Any], tool: ToolCall) -> None:
        """One streamed assistant message that calls a tool (stop_reason tool_use)."""
        msg_id = f"msg_fake_{next(_ids):06d}"
        block = {"type": "tool_use", "id": f"toolu_fake_{next(_ids):06d}", "name": tool.name, "input": {}}
        events = b"".join([
            _sse("message_start", {"type": "message_start", "message": {
                "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": _estimate_tokens(body), "output_tokens": 1}}}),
            _sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            _sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                         "delta": {"type": "input_json_delta", "partial_json": json.dumps(tool.input)}}),
            _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
            _sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                                   "usage": {"output_tokens": 20}}),
            _sse("message_stop", {"type": "message_stop"}),
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


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, reply_text: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.requests: list[RecordedRequest] = []
        self.reply_text = reply_text
        self.tool_calls: list[ToolCall] = []

    def next_tool_call(self, body: dict[str, Any]) -> ToolCall | None:
        """The scripted tool call this request answers with, if any (main conversation only)."""
        if not body.get("tools"):
            return None
        text, has_result = _last_user_text(body)
        if has_result:
            return None
        with self.lock:
            for call in self.tool_calls:
                if not call.used and call.trigger in text:
                    call.used = True
                    return call
        return None


class FakeMessagesAPI:
    """Context manager: a fake Messages API serving on 127.0.0.1:<free port> in a thread."""

    def __init__(self, reply_text: str = DEFAULT_REPLY) -> None:
        self._reply_text = reply_text
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # lifecycle
    def start(self) -> "FakeMessagesAPI":
        if self._server is not None:
            return self
        self._server = _Server(self._reply_text)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-messages-api",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> "FakeMessagesAPI":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # access
    @property
    def port(self) -> int:
        assert self._server is not None, "fake API not started"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def reply_text(self) -> str:
        return self._reply_text

    @reply_text.setter
    def reply_text(self, value: str) -> None:
        self._reply_text = value
        if self._server is not None:
            self._server.reply_text = value

    def script_bash(self, trigger: str, command: str, description: str = "Run memrepo") -> None:
        """Answer the first prompt holding `trigger` with a Bash tool call running `command`;
        the request that brings its result back gets `reply_text`."""
        assert self._server is not None, "fake API not started"
        with self._server.lock:
            self._server.tool_calls.append(ToolCall(trigger, "Bash", {"command": command, "description": description}))

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, oldest first."""
        assert self._server is not None, "fake API not started"
        with self._server.lock:
            return list(self._server.requests)

    def clear(self) -> None:
        assert self._server is not None, "fake API not started"
        with self._server.lock:
            self._server.requests.clear()
