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

The HTTP plumbing shared with the other fakes (recording, body reading, the server thread, the
context manager) is in ``fakeserver.py``.
Only the standard library is used; the server binds to 127.0.0.1 only.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from . import fakeserver
from .fakeserver import estimate_tokens

DEFAULT_REPLY = "Fake Gemini reply: acknowledged."
SHELL_TOOL = "run_shell_command"  # the shell tool's declared name in Gemini CLI 0.61.0

# /v1beta/models/gemini-2.5-flash:streamGenerateContent -> ("gemini-2.5-flash", "streamGenerateContent")
_MODEL_CALL = re.compile(r"^/v[^/]*/models/([^/:]+):([A-Za-z]+)$")
_MODEL_GET = re.compile(r"^/v[^/]*/models(?:/([^/:]+))?$")
_MODELS = ("gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite")
_VECTOR = [0.1, 0.2, 0.3]


class RecordedRequest(fakeserver.RecordedRequest):
    """One request the fake received, and the status it answered with."""

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
    prompt, out = estimate_tokens(body), estimate_tokens(parts)
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


class _Handler(fakeserver.FakeHandler[RecordedRequest]):
    server: fakeserver.FakeServer[RecordedRequest, ToolCall]

    record_class = RecordedRequest
    secret_headers = frozenset({"x-goog-api-key", "authorization", "proxy-authorization", "cookie"})
    json_type = "application/json; charset=utf-8"

    def _error(self, rec: RecordedRequest, code: int, status: str, message: str) -> None:
        self._send_json(rec, code, {"error": {"code": code, "message": message, "status": status}})

    def _not_found(self, rec: RecordedRequest) -> None:
        self._error(rec, 404, "NOT_FOUND", f"fake Gemini API: no route {rec.path}")

    # -- routes -----------------------------------------------------------------------------

    def answer(self, rec: RecordedRequest) -> None:
        if rec.method == "POST":
            self._post(rec)
        elif rec.method == "GET":
            self._get(rec)
        else:
            self._not_found(rec)

    def _post(self, rec: RecordedRequest) -> None:
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
            self._send_json(rec, 200, {"totalTokens": estimate_tokens(body)})
        elif method == "embedContent":
            self._send_json(rec, 200, {"embedding": {"values": _VECTOR}})
        elif method == "batchEmbedContents":
            n = len(body.get("requests") or [])
            self._send_json(rec, 200, {"embeddings": [{"values": _VECTOR}] * n})
        else:
            self._error(rec, 404, "NOT_FOUND", f"fake Gemini API: no method {method}")

    def _get(self, rec: RecordedRequest) -> None:
        m = _MODEL_GET.match(unquote(rec.route))
        if m is None:
            self._not_found(rec)
        elif m.group(1):
            self._send_json(rec, 200, _model_info(m.group(1)))
        else:
            self._send_json(rec, 200, {"models": [_model_info(n) for n in _MODELS]})

    def declares_tools(self, body: dict[str, Any]) -> bool:
        return _has_tools(body)

    def newest_user_input(self, body: dict[str, Any]) -> tuple[str, bool]:
        return _newest_user(body)

    def _answer_parts(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        """The parts of the model's answer to one generate request."""
        call = self.scripted_call(body)
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


class FakeGeminiAPI(fakeserver.FakeAPI[RecordedRequest]):
    """Context manager: a fake Gemini API serving on 127.0.0.1:<free port> in a thread."""

    handler = _Handler
    thread_name = "fake-gemini-api"
    default_reply = DEFAULT_REPLY

    def script_shell(self, trigger: str, command: str, description: str = "Run memrepo") -> None:
        """Answer the first main request whose newest user content holds `trigger` with a
        ``run_shell_command`` call running `command`; the request that brings its
        functionResponse back gets `reply_text`. In ``gemini -p`` the CLI only declares (and
        runs) its shell tool with ``--yolo``/``--approval-mode=yolo`` or ``--allowed-tools``."""
        self._script(ToolCall(trigger, SHELL_TOOL, {"command": command, "description": description}))

    def script_tool(self, trigger: str, name: str, args: dict[str, Any]) -> None:
        """Answer the first main request holding `trigger` with a call of function `name` (an MCP
        server's tool, under the name the CLI declared it with)."""
        self._script(ToolCall(trigger, name, args))
