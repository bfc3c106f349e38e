"""The HTTP server of `memrepo serve`: the standard library's, bound to 127.0.0.1, small on purpose.

Safe by construction (issue 20):

- it listens on 127.0.0.1 only, and answers only requests whose Host header names that
  address or `localhost` with its port: a DNS-rebinding page on another name gets 421;
- every request that changes the repository is a POST carrying the token this server made at
  start (in each form it serves): a cross-site form post cannot know it, and gets 403;
- `read_only` refuses every POST and shows no button;
- every value is escaped (`web.html.h`); pages hold no script, and nothing is fetched from
  the network.

A POST does exactly what the CLI does (`memrepo review accept|reject`, `memrepo undo`): a
commit through the repository's hooks, under its lock.
"""

from __future__ import annotations

import hmac
import os
import secrets
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qs, quote, unquote, urlsplit

from memrepo.errors import MemrepoError
from memrepo.web import html, pages

MAX_BODY = 64 * 1024
REFRESH_EVERY = 10.0  # seconds


class App:
    """What the handler needs: the repository, the token, read-only or not, and the port (for Host checks)."""

    def __init__(self, repo: str, read_only: bool = False, token: str | None = None, label: str | None = None) -> None:
        self.repo = repo
        home = os.path.expanduser("~")
        self.label = label or ("~" + repo[len(home):] if home != "/" and repo.startswith(home + os.sep) else repo)
        self.read_only = read_only
        self.token = token or secrets.token_urlsafe(24)
        self.port = 0
        self.lock = threading.Lock()  # one write at a time from this server (the repository lock guards the rest)
        self._head = ""
        self._checked = 0.0

    def hosts(self) -> set[str]:
        return {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}

    def refresh(self) -> None:
        """Bring the cache up to date when HEAD moved (a commit here or elsewhere) or every
        REFRESH_EVERY seconds (edits not yet committed): a scan of every memory file costs ~0.3 s
        at 10,000, too much for each page."""
        from memrepo.store import index
        from memrepo.vcs import gitcmd

        rc, out, _ = gitcmd.run_git("rev-parse", "-q", "--verify", "HEAD", cwd=self.repo)
        head = out.decode().strip() if rc == 0 else ""
        with self.lock:
            if head != self._head or time.monotonic() - self._checked > REFRESH_EVERY:
                index.update(self.repo)
                self._head, self._checked = head, time.monotonic()


class Handler(BaseHTTPRequestHandler):
    server: "Server"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 — the stdlib signature
        pass  # a local tool: nothing to log per request

    @property
    def app(self) -> App:
        return self.server.app

    def _send(self, status: int, body: str, content_type: str = "text/html; charset=utf-8",
              headers: dict[str, str] | None = None) -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        # No script runs on these pages; nothing may frame them or be fetched from elsewhere.
        self.send_header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; "
                         "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _page(self, title: str, body: str, active: str, status: int = 200, notice: str = "") -> None:
        self._send(status, html.page(title, body, active, self.app.label, self.app.read_only, notice))

    def _error(self, status: int, message: str, hint: str = "") -> None:
        text = f'<div class="error">{html.h(message)}</div>' + (f"<p>{html.h(hint)}</p>" if hint else "")
        self._page("Error", text, "", status)

    def _host_ok(self) -> bool:
        if self.headers.get("Host", "") in self.app.hosts():
            return True
        self._send(421, "this memrepo server answers only to 127.0.0.1 and localhost\n", "text/plain; charset=utf-8")
        return False

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        if not self._host_ok():
            return
        url = urlsplit(self.path)
        params = {k: v[-1] for k, v in parse_qs(url.query, max_num_fields=20).items()}
        route = unquote(url.path)
        done = params.pop("done", "")
        notice = f'<div class="ro">{html.h(done)}</div>' if done else ""
        try:
            if route == "/" or route.startswith("/m/"):
                self.app.refresh()
            if route == "/":
                self._page(*pages.memories(self.app.repo, params), "/", notice=notice)
            elif route.startswith("/m/"):
                self._page(*pages.memory(self.app.repo, route[3:]), "/")
            elif route == "/recall":
                self._page(*pages.recall(self.app.repo), "/recall")
            elif route == "/review":
                self._page(*pages.review(self.app.repo, self.app.token, self.app.read_only), "/review", notice=notice)
            elif route == "/runs":
                self._page(*pages.runs(self.app.repo, self.app.token, self.app.read_only), "/runs", notice=notice)
            else:
                self._error(404, f"no page {route}")
        except MemrepoError as exc:
            self._error(404 if "no memory" in str(exc) else 500, str(exc), exc.hint or "")
        except Exception as exc:  # noqa: BLE001 — a page that fails says why instead of dropping the connection
            self._error(500, f"{type(exc).__name__}: {exc}", "`memrepo doctor` names most problems and their fix")

    def _form(self) -> dict[str, str] | None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self._error(413, "request too large")
            return None
        raw = self.rfile.read(length).decode("utf-8", "replace") if length > 0 else ""
        return {k: v[-1] for k, v in parse_qs(raw, max_num_fields=20).items()}

    def do_POST(self) -> None:
        if not self._host_ok():
            return
        form = self._form()
        if form is None:
            return
        if self.app.read_only:
            return self._error(403, "this server is read-only (started with --read-only)")
        if not hmac.compare_digest(form.get("token", ""), self.app.token):
            return self._error(403, "missing or wrong token: changes come only from this server's own pages",
                               "reload the page and use its buttons")
        actions: dict[str, tuple[Callable[[dict[str, str]], str], str]] = {
            "/review/accept": (self._accept, "/review"), "/review/reject": (self._reject, "/review"),
            "/runs/undo": (self._undo, "/runs")}
        route = urlsplit(self.path).path
        if route not in actions:
            return self._error(404, f"no action {route}")
        do, back = actions[route]
        try:
            with self.app.lock:
                done = do(form)
        except MemrepoError as exc:
            return self._error(409, str(exc), exc.hint or "")
        self._send(303, f"{done}\n", "text/plain; charset=utf-8", {"Location": f"{back}?done={quote(done)}"})

    def _accept(self, form: dict[str, str]) -> str:
        from memrepo.passes.curate import review

        return f"accepted {form.get('id', '')} as {review.accept(self.app.repo, form.get('id', ''))[:12]}"

    def _reject(self, form: dict[str, str]) -> str:
        from memrepo.passes.curate import review

        reason = " ".join(form.get("reason", "").split())[:300] or "rejected in memrepo serve"
        sha = review.reject(self.app.repo, form.get("id", ""), reason)
        return f"rejected {form.get('id', '')} ({sha[:12]})"

    def _undo(self, form: dict[str, str]) -> str:
        from memrepo.vcs import runs

        return f"undid {form.get('run', '')}: {len(runs.undo(self.app.repo, form.get('run', '')))} commit(s)"


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, app: App, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.app = app
        app.port = int(self.server_address[1])


def serve(repo: str, port: int = 0, read_only: bool = False, ready: Callable[[str], None] | None = None) -> None:
    """Serve until interrupted; `ready(url)` is called once the socket listens."""
    server = Server(App(repo, read_only), port)
    url = f"http://127.0.0.1:{server.app.port}/"
    (ready or (lambda u: sys.stderr.write(f"memrepo serve: {u}\n")))(url)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
