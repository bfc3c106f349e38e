"""The HTTP plumbing shared by the fake model APIs (``fakeapi.py``, ``fake_openai.py``,
``fake_gemini.py``) that end-to-end tests point the real agent CLIs at.

* :class:`RecordedRequest`: one request as received (credentials removed) and the status the
  fake answered with; each fake subclasses it with properties for its own routes.
* :class:`FakeHandler`: reads the body (``Content-Length`` or chunked), records the request,
  sends answers (JSON or server-sent events) and picks the scripted call a request gets; a
  fake subclasses it, names the headers that must never be recorded, answers in
  :meth:`FakeHandler.answer` and reads the newest user input of its request shape.
* :class:`FakeServer`: a threading HTTP server on 127.0.0.1:<free port> holding the recorded
  requests, the reply text and the scripted tool calls, behind one lock.
* :class:`FakeAPI`: the public context manager running a :class:`FakeServer` in a thread; a
  fake subclasses it with its handler, thread name and default reply.

:func:`new_id`, :func:`sse` and :func:`estimate_tokens` are small helpers for answers.
Only the standard library is used; the server binds to 127.0.0.1 only.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, Protocol, TypeVar
from urllib.parse import urlsplit

_ids = itertools.count(1)


def new_id(prefix: str) -> str:
    """A fresh identifier such as ``msg_fake_000042`` (one counter for all the fakes)."""
    return f"{prefix}_fake_{next(_ids):06d}"


def sse(event: str, data: dict[str, Any]) -> bytes:
    """One server-sent event with a name and compact JSON data."""
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def estimate_tokens(value: Any) -> int:
    """A rough, deterministic token estimate (4 characters a token) for usage numbers."""
    try:
        return max(1, len(json.dumps(value)) // 4)
    except (TypeError, ValueError):
        return 1


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


R = TypeVar("R", bound=RecordedRequest)


class ScriptedCall(Protocol):
    """A scripted tool call: made once, for the first request whose newest user text holds
    `trigger`."""

    trigger: str
    used: bool


C = TypeVar("C", bound=ScriptedCall)


class FakeServer(ThreadingHTTPServer, Generic[R, C]):
    """A threading HTTP server on 127.0.0.1:<free port> recording requests of type `R` and
    holding scripted calls of type `C`; `lock` guards the other attributes."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, handler: type[FakeHandler[R]], reply_text: str) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.lock = threading.Lock()
        self.requests: list[R] = []
        self.reply_text = reply_text
        self.calls: list[C] = []

    def take_call(self, text: str) -> C | None:
        """The first unused scripted call whose trigger is in `text`, now marked used."""
        with self.lock:
            for call in self.calls:
                if not call.used and call.trigger in text:
                    call.used = True
                    return call
        return None


class FakeHandler(BaseHTTPRequestHandler, Generic[R]):
    """Records every request as a `record_class` (an `R`), then answers it with :meth:`answer`."""

    protocol_version = "HTTP/1.1"
    server: FakeServer[R, Any]

    record_class: type[R]
    # Header names never recorded (lower case): the API key and anything else that authenticates.
    secret_headers: frozenset[str] = frozenset({"authorization", "proxy-authorization", "cookie"})
    request_id_header: str | None = None  # header carrying a fresh id on every answer, if any
    json_type = "application/json"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # keep pytest output clean; everything is in api.requests

    def _read_body(self) -> bytes:
        """The request body, sent with ``Content-Length`` or chunked (trailers skipped)."""
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

    def _record(self) -> R:
        """Read the body and keep the request in ``server.requests``, credentials removed."""
        text = self._read_body().decode("utf-8", errors="replace")
        try:
            body = json.loads(text) if text.strip() else None
        except ValueError:
            body = None
        secret = self.secret_headers
        headers = {k.lower(): v for k, v in self.headers.items() if k.lower() not in secret}
        rec = self.record_class(self.command, self.path, headers, body, text)
        with self.server.lock:
            self.server.requests.append(rec)
        return rec

    def _send(self, rec: RecordedRequest, status: int, payload: bytes, content_type: str) -> None:
        """Answer with `payload` (its ``Content-Length``; no body for HEAD) and note the status."""
        rec.status = status
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        if self.request_id_header:
            self.send_header(self.request_id_header, new_id("req"))
        if content_type.startswith("text/event-stream"):
            self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)
            self.wfile.flush()

    def _send_json(self, rec: RecordedRequest, status: int, obj: Any) -> None:
        """Answer with `obj` as JSON."""
        self._send(rec, status, json.dumps(obj).encode(), self.json_type)

    def _dispatch(self) -> None:
        """Every method: record the request, then answer it."""
        self.answer(self._record())

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _dispatch  # noqa: N815

    def answer(self, rec: R) -> None:
        """Answer one recorded request (any method); each fake defines its routes here."""
        raise NotImplementedError

    def scripted_call(self, body: dict[str, Any]) -> Any:
        """The scripted call this request answers with, if any: only for a request that declares
        tools and whose newest user input holds a trigger and no tool result yet."""
        if not self.declares_tools(body):
            return None
        text, answered = self.newest_user_input(body)
        return None if answered else self.server.take_call(text)

    def declares_tools(self, body: dict[str, Any]) -> bool:
        """Whether a request body declares tools (main-conversation requests do)."""
        return bool(body.get("tools"))

    def newest_user_input(self, body: dict[str, Any]) -> tuple[str, bool]:
        """(text of the newest user input, whether a tool result comes with it); each fake
        reads its own request shape."""
        raise NotImplementedError


A = TypeVar("A", bound="FakeAPI[Any]")


class FakeAPI(Generic[R]):
    """Context manager: a fake API serving on 127.0.0.1:<free port> in a thread. A fake sets
    `handler`, `thread_name` and `default_reply` (used when no `reply_text` is given)."""

    handler: type[FakeHandler[R]]
    thread_name = "fake-api"
    default_reply = "Fake API reply: acknowledged."

    def __init__(self, reply_text: str | None = None) -> None:
        self._reply_text = self.default_reply if reply_text is None else reply_text
        self._server: FakeServer[R, Any] | None = None
        self._thread: threading.Thread | None = None

    # lifecycle
    def start(self: A) -> A:
        """Serve in a daemon thread (a no-op when already serving)."""
        if self._server is not None:
            return self
        self._server = FakeServer(self.handler, self._reply_text)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=self.thread_name,
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Shut the server down and close its socket (a no-op when not serving)."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self: A) -> A:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # access
    def _started(self) -> FakeServer[R, Any]:
        assert self._server is not None, "fake API not started"
        return self._server

    @property
    def port(self) -> int:
        return int(self._started().server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def reply_text(self) -> str:
        """The text every model call is answered with (unless a scripted call answers it)."""
        return self._reply_text

    @reply_text.setter
    def reply_text(self, value: str) -> None:
        self._reply_text = value
        if self._server is not None:
            self._server.reply_text = value

    def _script(self, call: ScriptedCall) -> None:
        """Add a scripted call (a fake's ``script_*`` method builds it)."""
        server = self._started()
        with server.lock:
            server.calls.append(call)

    @property
    def requests(self) -> list[R]:
        """A snapshot of every request received so far, oldest first."""
        server = self._started()
        with server.lock:
            return list(server.requests)

    def clear(self) -> None:
        """Forget the requests received so far."""
        server = self._started()
        with server.lock:
            server.requests.clear()
