"""A fake OpenAI Responses API on 127.0.0.1 for end-to-end tests of the real Codex CLI.

Start it with ``with FakeOpenAIAPI() as api:`` and point a custom Codex model provider at
``api.base_url + "/v1"`` with ``wire_api = "responses"`` (the whole offline config is in
``tests/e2e/CODEX-NOTES.md``). Codex 0.171.0 sends one streamed ``POST /v1/responses`` per
model call and nothing else.

Every request is recorded in ``api.requests`` as a :class:`RecordedRequest`: method, path
(with query string), headers (credentials removed) and the parsed JSON body (``None`` when the
body is empty or not JSON; the raw text is kept in ``raw_body``; a gzip body is decoded).

Answers:

* ``POST /v1/responses``: one assistant message, ``reply_text``, as server-sent events
  (``response.created``, ``response.in_progress``, ``response.output_item.added``,
  ``response.output_text.delta``, ``response.output_item.done``, ``response.completed`` with
  usage) when the body has ``"stream": true``, as one JSON response object otherwise.
* a scripted shell call (``script_shell``): the first request with tools whose newest user
  input holds the trigger gets a ``function_call`` of the shell tool the request declares
  (``exec_command`` in 0.171.0); the request bringing its ``function_call_output`` back gets
  ``reply_text``.
* ``GET /v1/models``: a one-model list.
* anything else: 404 with an OpenAI-shaped error body, so a probe the CLI makes fails
  quickly and visibly in ``requests`` instead of hanging.

:func:`input_text` joins every text the model would see in a request body, for assertions.
Every answer carries an ``x-request-id`` header. The HTTP plumbing shared with the other fakes
(recording, body reading, the server thread, the context manager) is in ``fakeserver.py``.
Only the standard library is used; the server binds to 127.0.0.1 only.
"""

from __future__ import annotations

import gzip
import json
import time
from dataclasses import dataclass
from typing import Any

from . import fakeserver
from .fakeserver import new_id

DEFAULT_REPLY = "Fake API reply: acknowledged."
DEFAULT_MODEL = "gpt-fake"


class RecordedRequest(fakeserver.RecordedRequest):
    """One request the fake received, and the status it answered with."""

    @property
    def is_responses(self) -> bool:
        """A model call: POST /v1/responses."""
        return self.method == "POST" and self.route.rstrip("/") == "/v1/responses"


# -- request bodies -------------------------------------------------------------------------


def _texts(value: Any) -> list[str]:
    """A string, or the ``text`` of each part of a content list."""
    if isinstance(value, str):
        return [value]
    parts = value if isinstance(value, list) else []
    return [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]


def _item_texts(item: Any) -> list[str]:
    """Every text in one Responses ``input`` item (message content, tool output, call args)."""
    if not isinstance(item, dict):
        return _texts(item)
    return _texts(item.get("content")) + _texts(item.get("output")) + _texts(item.get("arguments"))


def input_text(body: Any) -> str:
    """Every text the model would see in a ``/v1/responses`` body: ``instructions``, then the
    text of each ``input`` item in order (messages of any role, tool calls and outputs)."""
    if not isinstance(body, dict):
        return ""
    texts: list[str] = []
    if isinstance(body.get("instructions"), str):
        texts.append(body["instructions"])
    items = body.get("input")
    for item in items if isinstance(items, list) else [items]:
        texts.extend(_item_texts(item))
    return "\n".join(texts)


def _newest_user_input(body: dict[str, Any]) -> tuple[str, bool]:
    """(text of the user-role messages after the last assistant output, whether a tool output
    follows it). Codex 0.171.0 sends the prompt as a user message; hook context comes as
    developer messages, which do not count."""
    items = [i for i in body.get("input") or [] if isinstance(i, dict)]
    outputs = ("function_call", "custom_tool_call")
    last = max(
        (n for n, i in enumerate(items) if i.get("role") == "assistant" or i.get("type") in outputs),
        default=-1,
    )
    texts, has_output = [], False
    for item in items[last + 1:]:
        has_output = has_output or str(item.get("type", "")).endswith("_call_output")
        if item.get("role") == "user":
            texts.extend(_item_texts(item))
    return "\n".join(texts), has_output


def _usage(body: Any, output_tokens: int) -> dict[str, Any]:
    """Responses-API usage with a rough, deterministic input estimate (4 characters a token)."""
    in_tokens = max(1, len(json.dumps(body, default=str)) // 4)
    return {
        "input_tokens": in_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": in_tokens + output_tokens,
    }


def _sse(data: dict[str, Any]) -> bytes:
    """One server-sent event named after the data's ``type``."""
    return fakeserver.sse(data["type"], data)


# -- scripted tool calls --------------------------------------------------------------------


@dataclass
class ShellCall:
    """A scripted shell call: made once, in reply to the first request whose newest user
    input holds `trigger` (and no tool output yet)."""

    trigger: str
    command: str
    used: bool = False


def _shell_call_item(body: dict[str, Any], command: str) -> dict[str, Any]:
    """A ``function_call`` output item running `command` in whichever shell tool the request
    declares (``exec_command``, ``shell_command`` or the older ``shell``)."""
    names = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
    if "exec_command" in names:
        name, args = "exec_command", {"cmd": command}
    elif "shell_command" in names:
        name, args = "shell_command", {"command": command}
    else:
        name, args = "shell", {"command": ["bash", "-lc", command]}
    return {
        "type": "function_call",
        "id": new_id("fc"),
        "call_id": new_id("call"),
        "name": name,
        "arguments": json.dumps(args),
        "status": "completed",
    }


@dataclass
class FunctionCall:
    """A scripted call of a named function tool (an MCP server's tool as the CLI declares it)."""

    trigger: str
    name: str
    arguments: dict[str, Any]
    namespace: str | None = None  # Codex declares an MCP server's tools in a namespace tool (`mcp__<server>`)
    used: bool = False


def _function_call_item(call: FunctionCall) -> dict[str, Any]:
    item = {"type": "function_call", "id": new_id("fc"), "call_id": new_id("call"), "name": call.name,
            "arguments": json.dumps(call.arguments), "status": "completed"}
    return {**item, "namespace": call.namespace} if call.namespace else item


# -- the HTTP server --------------------------------------------------------------------------


class _Handler(fakeserver.FakeHandler[RecordedRequest]):
    server: fakeserver.FakeServer[RecordedRequest, "ShellCall | FunctionCall"]

    record_class = RecordedRequest
    secret_headers = frozenset(
        {"authorization", "proxy-authorization", "cookie", "x-api-key", "openai-api-key"}
    )
    request_id_header = "x-request-id"

    def _read_body(self) -> bytes:
        raw = super()._read_body()
        if self.headers.get("Content-Encoding", "").lower() == "gzip":
            raw = gzip.decompress(raw)
        return raw

    def _error(self, rec: RecordedRequest, status: int, kind: str, message: str) -> None:
        self._send_json(
            rec, status, {"error": {"type": kind, "code": kind, "message": message, "param": None}}
        )

    # routes

    def answer(self, rec: RecordedRequest) -> None:
        route = (rec.method, rec.route.rstrip("/"))
        if route == ("POST", "/v1/responses"):
            self._responses(rec)
        elif route == ("GET", "/v1/models"):
            model = {"id": DEFAULT_MODEL, "object": "model", "created": 0, "owned_by": "fake"}
            self._send_json(rec, 200, {"object": "list", "data": [model]})
        else:
            self._error(rec, 404, "not_found", f"fake API: no route {rec.method} {rec.path}")

    def newest_user_input(self, body: dict[str, Any]) -> tuple[str, bool]:
        return _newest_user_input(body)

    def _responses(self, rec: RecordedRequest) -> None:
        body = rec.body if isinstance(rec.body, dict) else {}
        if "input" not in body:
            self._error(rec, 400, "invalid_request_error", "input: required")
            return
        call = self.scripted_call(body)
        if call is not None:
            item = _function_call_item(call) if isinstance(call, FunctionCall) else _shell_call_item(body, call.command)
            out_tokens = 20
        else:
            text = self.server.reply_text
            content = [{"type": "output_text", "text": text, "annotations": []}]
            item = {"type": "message", "id": new_id("msg"), "role": "assistant",
                    "status": "completed", "content": content}
            out_tokens = max(1, len(text) // 4)
        response = {
            "id": new_id("resp"),
            "object": "response",
            "created_at": int(time.time()),
            "model": body.get("model") or DEFAULT_MODEL,
            "status": "completed",
            "output": [item],
            "usage": _usage(body, out_tokens),
        }
        if not body.get("stream"):
            self._send_json(rec, 200, response)
            return
        pending = dict(response, status="in_progress", output=[], usage=None)
        events = [
            {"type": "response.created", "response": pending},
            {"type": "response.in_progress", "response": pending},
            {"type": "response.output_item.added", "output_index": 0, "item": item},
        ]
        if item["type"] == "message":
            delta = {"item_id": item["id"], "output_index": 0, "content_index": 0,
                     "delta": item["content"][0]["text"]}
            events.append({"type": "response.output_text.delta", **delta})
        events += [
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": response},
        ]
        payload = b"".join(_sse(dict(e, sequence_number=n)) for n, e in enumerate(events))
        self._send(rec, 200, payload, "text/event-stream; charset=utf-8")


class FakeOpenAIAPI(fakeserver.FakeAPI[RecordedRequest]):
    """Context manager: a fake OpenAI Responses API serving on 127.0.0.1:<free port>. Codex's
    provider ``base_url`` is its ``base_url`` plus ``/v1``."""

    handler = _Handler
    thread_name = "fake-openai-api"
    default_reply = DEFAULT_REPLY

    def script_shell(self, trigger: str, command: str) -> None:
        """Answer the first request whose newest user input holds `trigger` with a call of
        Codex's shell tool running `command`; the request bringing its output back gets
        `reply_text`."""
        self._script(ShellCall(trigger, command))

    def script_tool(self, trigger: str, name: str, arguments: dict[str, Any], namespace: str | None = None) -> None:
        """Answer the first request whose newest user input holds `trigger` with a call of the
        function tool `name` (in `namespace`, when the tool is declared in one); the request
        bringing its output back gets `reply_text`."""
        self._script(FunctionCall(trigger, name, arguments, namespace))
