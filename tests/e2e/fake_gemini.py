"""A fake Gemini API (generativelanguage, v1beta) on 127.0.0.1 for end-to-end tests of the real
Gemini CLI (0.61.0).

Start it with ``with FakeGeminiAPI() as api:`` and point the CLI at ``api.base_url`` through
``GOOGLE_GEMINI_BASE_URL`` (with any dummy ``GEMINI_API_KEY``); ``GEMINI-NOTES.md`` here lists
the settings that keep the CLI fully offline.

Every request is recorded in ``api.requests`` as a :class:`RecordedRequest`: method, path
(with query string), headers (credentials such as ``x-goog-api-key`` removed) and the parsed
JSON body (``None`` when the body is empty or not JSON; the raw text is kept in ``raw_body``).

Answers (``<v>`` is any API version; the CLI uses ``v1beta``):

* ``POST /<v>/models/<model>:streamGenerateContent?alt=sse``: ``reply_text`` as one
  server-sent ``data:`` event holding a ``GenerateContentResponse`` (finishReason ``STOP``,
  ``usageMetadata``). The CLI sends every conversation turn this way.
* ``POST /<v>/models/<model>:generateContent``: the same response as one JSON object. When the
  request asks for JSON (``generationConfig.responseMimeType`` ``application/json``; the CLI
  does for its model router when no model is pinned) the text is a JSON value built from
  ``responseJsonSchema``/``responseSchema`` instead (first enum value, minimum numbers, and
  ``"user"`` for ``next_speaker`` so the CLI never keeps talking to itself).
* a scripted tool call (``script_shell``): the first main request (one declaring tools) whose
  newest user content holds the trigger is answered with a ``functionCall`` to the CLI's shell
  tool; the request that brings its ``functionResponse`` back gets ``reply_text``.
* ``POST ...:countTokens``, ``...:embedContent``, ``...:batchEmbedContents`` and ``GET
  /<v>/models[/<model>]``: small plausible answers (0.61.0 was not seen using them).
* anything else: 404 with a Google-shaped ``NOT_FOUND`` error, so a probe the CLI makes fails
  quickly and visibly in ``requests`` instead of hanging.

Only the standard library is used; the server binds to 127.0.0.1 only.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit

DEFAULT_REPLY = "Fake Gemini reply: acknowledged."
SHELL_TOOL = "run_shell_command"  # the shell tool's declared name in Gemini CLI 0.61.0

# Header names never recorded (lower case): the API key and anything else that authenticates.
_SECRET_HEADERS = frozenset({"x-goog-api-key", "authorization", "proxy-authorization", "cookie"})

# /v1beta/models/gemini-2.5-flash:streamGenerateContent -> ("gemini-2.5-flash", "streamGenerateContent")
_MODEL_CALL = re.compile(r"^/v[^/]*/models/([^/:]+):([A-Za-z]+)$")
_MODEL_GET = re.compile(r"^/v[^/]*/models(?:/([^/:]+))?$")
_MODELS = ("gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite")
_VECTOR = [0.1, 0.2, 0.3]


@dataclass
class RecordedRequest:
    """One request the fake received, and the status it answered with."""

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
    def model_method(self) -> tuple[str, str] | None:
        """(model, method) of a ``POST /<v>/models/<model>:<method>`` call, else None."""
        m = _MODEL_CALL.match(unquote(self.route))
        return (m.group(1), m.group(2)) if m and self.method == "POST" else None

    @property
    def is_generate(self) -> bool:
        """A model call: streamGenerateContent or generateContent."""
        mm = self.model_method
        return mm is not None and mm[1] in ("streamGenerateContent", "generateContent")

    @property
    def is_main(self) -> bool:
        """A main-conversation model call: one that declares tools (functionDeclarations)."""
        return self.is_generate and _has_tools(self.body)


def _has_tools(body: Any) -> bool:
    """Whether a request body declares functions (the CLI's main-conversation requests do)."""
    tools = body.get("tools") if isinstance(body, dict) else None
    return any(isinstance(t, dict) and t.get("functionDeclarations") for t in tools or [])


def _parts(content: Any) -> list[dict[str, Any]]:
    """The part objects of one ``Content`` (anything else: none)."""
    parts = content.get("parts") if isinstance(content, dict) else None
    return [p for p in parts or [] if isinstance(p, dict)]


def request_text(body: Any) -> str:
    """Every text the model would see in a request body: systemInstruction, then the text
    parts of all ``contents`` in order, joined by newlines."""
    if not isinstance(body, dict):
        return ""
    texts: list[str] = []
    system = body.get("systemInstruction")
    if isinstance(system, str):
        texts.append(system)
    for content in [system] + list(body.get("contents") or []):
        texts += [p["text"] for p in _parts(content) if isinstance(p.get("text"), str)]
    return "\n".join(texts)


def _newest_user(body: dict[str, Any]) -> tuple[str, bool]:
    """(text of the newest user content, whether it carries a functionResponse)."""
    contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]
    users = [c for c in contents if c.get("role", "user") == "user"]
    parts = _parts(users[-1]) if users else []
    text = "\n".join(p["text"] for p in parts if isinstance(p.get("text"), str))
    return text, any("functionResponse" in p for p in parts)


def _estimate_tokens(body: Any) -> int:
    """A rough, deterministic token estimate (4 characters a token) for usage numbers."""
    try:
        return max(1, len(json.dumps(body)) // 4)
    except (TypeError, ValueError):
        return 1


def _schema_example(schema: Any, name: str = "") -> Any:
    """A small value valid for a JSON schema (or a Gemini ``Schema`` with upper-case types)."""
    if not isinstance(schema, dict):
        return "fake"
    if name == "next_speaker":
        return "user"  # the next-speaker check: never make the CLI continue on its own
    if schema.get("enum"):
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return _schema_example(schema[key][0], name)
    kind = schema.get("type", "object")
    kind = (kind[0] if isinstance(kind, list) and kind else kind).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: _schema_example(v, k) for k, v in props.items()}
    if kind == "array":
        return [_schema_example(schema["items"], name)] if schema.get("minItems") else []
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return "fake"


def _response(parts: list[dict[str, Any]], body: Any) -> dict[str, Any]:
    """One GenerateContentResponse with a single candidate made of `parts`."""
    prompt, out = _estimate_tokens(body), _estimate_tokens(parts)
    usage = {"promptTokenCount": prompt, "candidatesTokenCount": out, "totalTokenCount": prompt + out}
    candidate = {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
    return {
        "candidates": [candidate],
        "usageMetadata": usage,
        "modelVersion": "fake-gemini",
        "responseId": f"fake-{time.time_ns()}",
    }


@dataclass
class ToolCall:
    """A scripted function call: made once, in reply to the first main request whose newest
    user content holds `trigger` (and no functionResponse)."""

    trigger: str
    name: str
    args: dict[str, Any]
    used: bool = False


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
                size = int(self.rfile.readline().strip().split(b";")[0] or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers until the blank line
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _record(self) -> RecordedRequest:
        text = self._read_body().decode("utf-8", errors="replace")
        try:
            body = json.loads(text) if text.strip() else None
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in self.headers.items() if k.lower() not in _SECRET_HEADERS}
        rec = RecordedRequest(self.command, self.path, headers, body, text)
        with self.server.lock:
            self.server.requests.append(rec)
        return rec

    def _send(self, rec: RecordedRequest, status: int, payload: bytes, content_type: str) -> None:
        rec.status = status
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        if content_type.startswith("text/event-stream"):
            self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)
            self.wfile.flush()

    def _send_json(self, rec: RecordedRequest, status: int, obj: Any) -> None:
        self._send(rec, status, json.dumps(obj).encode(), "application/json; charset=utf-8")

    def _error(self, rec: RecordedRequest, code: int, status: str, message: str) -> None:
        self._send_json(rec, code, {"error": {"code": code, "message": message, "status": status}})

    def _not_found(self, rec: RecordedRequest) -> None:
        self._error(rec, 404, "NOT_FOUND", f"fake Gemini API: no route {rec.path}")

    # -- routes -----------------------------------------------------------------------------

    def do_POST(self) -> None:
        rec = self._record()
        mm = rec.model_method
        if mm is None:
            self._not_found(rec)
            return
        method = mm[1]
        body = rec.body if isinstance(rec.body, dict) else {}
        if method in ("streamGenerateContent", "generateContent"):
            if not isinstance(body.get("contents"), list):
                self._error(rec, 400, "INVALID_ARGUMENT", "contents: required")
                return
            reply = _response(self._answer_parts(body), body)
            if method == "generateContent":
                self._send_json(rec, 200, reply)
            else:
                event = f"data: {json.dumps(reply, separators=(',', ':'))}\r\n\r\n".encode()
                self._send(rec, 200, event, "text/event-stream")
        elif method == "countTokens":
            self._send_json(rec, 200, {"totalTokens": _estimate_tokens(body)})
        elif method == "embedContent":
            self._send_json(rec, 200, {"embedding": {"values": _VECTOR}})
        elif method == "batchEmbedContents":
            n = len(body.get("requests") or [])
            self._send_json(rec, 200, {"embeddings": [{"values": _VECTOR}] * n})
        else:
            self._error(rec, 404, "NOT_FOUND", f"fake Gemini API: no method {method}")

    def do_GET(self) -> None:
        rec = self._record()
        m = _MODEL_GET.match(unquote(rec.route))
        if m is None:
            self._not_found(rec)
        elif m.group(1):
            self._send_json(rec, 200, _model_info(m.group(1)))
        else:
            self._send_json(rec, 200, {"models": [_model_info(n) for n in _MODELS]})

    def _other(self) -> None:
        self._not_found(self._record())

    do_PUT = do_PATCH = do_DELETE = do_HEAD = _other  # noqa: N815

    def _answer_parts(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The parts of the model's answer to one generate request."""
        call = self.server.next_tool_call(body)
        if call is not None:
            return [{"functionCall": {"name": call.name, "args": call.args}}]
        config = body.get("generationConfig") or {}
        if config.get("responseMimeType") == "application/json":
            schema = config.get("responseJsonSchema") or config.get("responseSchema")
            return [{"text": json.dumps(_schema_example(schema))}]
        return [{"text": self.server.reply_text}]


def _model_info(name: str) -> dict[str, Any]:
    """A minimal ``Model`` resource."""
    methods = ["generateContent", "streamGenerateContent", "countTokens"]
    return {"name": f"models/{name}", "displayName": name, "inputTokenLimit": 1048576,
            "outputTokenLimit": 65536, "supportedGenerationMethods": methods}


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
        """The scripted call this request answers with, if any (main requests only)."""
        if not _has_tools(body):
            return None
        text, has_result = _newest_user(body)
        if has_result:
            return None
        with self.lock:
            for call in self.tool_calls:
                if not call.used and call.trigger in text:
                    call.used = True
                    return call
        return None


class FakeGeminiAPI:
    """Context manager: a fake Gemini API serving on 127.0.0.1:<free port> in a thread."""

    def __init__(self, reply_text: str = DEFAULT_REPLY) -> None:
        self._reply_text = reply_text
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # lifecycle
    def start(self) -> "FakeGeminiAPI":
        if self._server is not None:
            return self
        self._server = _Server(self._reply_text)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-gemini-api",
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

    def __enter__(self) -> "FakeGeminiAPI":
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

    def script_shell(self, trigger: str, command: str, description: str = "Run memrepo") -> None:
        """Answer the first main request whose newest user content holds `trigger` with a
        ``run_shell_command`` call running `command`; the request that brings its
        functionResponse back gets `reply_text`. In ``gemini -p`` the CLI only declares (and
        runs) its shell tool with ``--yolo``/``--approval-mode=yolo`` or ``--allowed-tools``."""
        assert self._server is not None, "fake API not started"
        args = {"command": command, "description": description}
        with self._server.lock:
            self._server.tool_calls.append(ToolCall(trigger, SHELL_TOOL, args))

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
