"""The HTTP server of `memrepo serve`: the standard library's, bound to 127.0.0.1, small on purpose.

Safe by construction (issues 20 and 38):

- it listens on 127.0.0.1 only, and answers only requests whose Host header names that
  address or `localhost` with its port: a DNS-rebinding page on another name gets 421;
- nothing is shown or done without the owner's session cookie, which only the one-time login
  URL printed to the owner's terminal gives (`web.auth`): another local user, who can reach the
  port, gets 401 and a page that holds nothing of the repository;
- a request that changes the repository is a POST with the cookie, an Origin header naming
  this server (a page on another port of 127.0.0.1 is same-site, so SameSite alone is not
  enough) and the session's CSRF token from one of this server's forms; else 403;
- a POST without a usable Content-Length gets 400, 411 or 413 and the server keeps serving;
- `read_only` refuses every POST and shows no button;
- every value is escaped (`web.html.h`); pages hold no script, and nothing is fetched from
  the network.

A POST does exactly what the CLI does (`memrepo review accept|reject`, `memrepo undo`): a
commit through the repository's hooks, under its lock. On a team's or the project's memory,
`memrepo forget`'s proposal there; on one of yours, `memrepo share ID --to TEAM|project`'s.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import sys
import threading
import time
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qs, quote, unquote, urlsplit

from memrepo.errors import MemrepoError
from memrepo.web import auth, html, pages

MAX_BODY = 64 * 1024  # bytes of a form
MAX_FIELDS = 20  # fields of a query string or a form
REFRESH_EVERY = 10.0  # seconds


class App:
    """What the handler needs: the repository, its logins, read-only or not, and the port (for Host checks)."""

    def __init__(self, repo: str, read_only: bool = False, label: str | None = None,
                 forge: str | None = None, gh: str | None = None) -> None:
        self.repo = repo
        self.forge, self.gh = forge, gh  # for share's and forget's pull requests: `serve --forge`, the `gh` to run
        home = os.path.expanduser("~")
        self.label = label or ("~" + repo[len(home):] if home != "/" and repo.startswith(home + os.sep) else repo)
        self.read_only = read_only
        self.gate = auth.Gate(auth.load_secret())
        self.port = 0
        self.lock = threading.Lock()  # one write at a time from this server (the repository lock guards the rest)
        self._head = ""
        self._checked = 0.0

    def hosts(self) -> set[str]:
        return {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}

    @property
    def cookie(self) -> str:
        """The session cookie's name: one per port, as a browser sends 127.0.0.1's cookies to every port."""
        return f"memrepo-{self.port}"

    def login_url(self) -> str:
        """A one-time URL that logs a browser in (for the owner's terminal only)."""
        return f"http://127.0.0.1:{self.port}/login?code={auth.mint(self.gate.secret)}"

    def refresh(self, force: bool = False) -> None:
        """Bring the cache up to date when HEAD moved (a commit here or elsewhere), every
        REFRESH_EVERY seconds (edits not yet committed) or when `force`d: a scan of every memory
        file costs ~0.3 s at 10,000, too much for each page."""
        from memrepo.store import index
        from memrepo.vcs import gitcmd

        head = gitcmd.head(self.repo) or ""
        with self.lock:
            if force or head != self._head or time.monotonic() - self._checked > REFRESH_EVERY:
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
        # Not no-referrer: under it a browser sends `Origin: null` with the page's own POSTs.
        self.send_header("Referrer-Policy", "same-origin")
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

    def _session(self) -> str | None:
        """The session of this request's cookie, if this server opened it."""
        try:
            morsel = SimpleCookie(self.headers.get("Cookie", "")).get(self.app.cookie)
        except CookieError:
            return None
        return morsel.value if morsel is not None and self.app.gate.known(morsel.value) else None

    def _refuse(self, status: int, message: str, hint: str) -> None:
        """A page for a request without the right to see anything: it names the fix and holds nothing else."""
        self._send(status, html.bare("Not logged in" if status == 401 else "Refused", message, hint))

    def _login_hint(self) -> str:
        return (f"open the login URL that `memrepo serve` printed in its terminal, or run `memrepo serve --login-url "
                f"--port {self.app.port}` as the user who started it and open the URL it prints")

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        if not self._host_ok():
            return
        url = urlsplit(self.path)
        params = self._fields(url.query)
        if params is None:
            return
        route = unquote(url.path)
        if route == "/login":
            return self._login(params.get("code", ""))
        session = self._session()
        if session is None:
            return self._refuse(401, "this page needs a login: memrepo serve shows memory only to the user who started it",
                                self._login_hint())
        token = self.app.gate.csrf(session)
        done = params.pop("done", "")
        notice = f'<div class="ro done">{html.h(done)}</div>' if done else ""
        try:
            if route == "/" or route.startswith("/m/"):
                self.app.refresh()
            try:
                self._route(route, params, token, notice)
            except sqlite3.DatabaseError:
                # The cache went missing or bad since the last refresh (an `rm`, a crash): rebuild it and answer.
                self.app.refresh(force=True)
                self._route(route, params, token, notice)
        except MemrepoError as exc:
            self._error(404 if "no memory" in str(exc) else 500, str(exc), exc.hint or "")
        except Exception as exc:  # noqa: BLE001 — a page that fails says why instead of dropping the connection
            self._error(500, f"{type(exc).__name__}: {exc}", "`memrepo doctor` names most problems and their fix")

    def _route(self, route: str, params: dict[str, str], token: str, notice: str) -> None:
        if route == "/":
            self._page(*pages.memories(self.app.repo, params), "/", notice=notice)
        elif route.startswith("/m/"):
            self._page(*pages.memory(self.app.repo, route[3:], token, self.app.read_only), "/", notice=notice)
        elif route == "/recall":
            self._page(*pages.recall(self.app.repo), "/recall")
        elif route == "/review":
            self._page(*pages.review(self.app.repo, token, self.app.read_only), "/review", notice=notice)
        elif route == "/runs":
            self._page(*pages.runs(self.app.repo, token, self.app.read_only), "/runs", notice=notice)
        else:
            self._error(404, f"no page {route}")

    def _login(self, code: str) -> None:
        """Trade a one-time code for a session cookie, then leave the code's URL (so it stays out of sight)."""
        if self.command != "GET":  # a link preview's HEAD must not spend the code the owner is about to open
            return self._send(405, "open the login URL with GET\n", "text/plain; charset=utf-8", {"Allow": "GET"})
        if self._session() is not None:  # the owner opened the URL again in a browser it already logged in
            return self._send(303, "logged in already\n", "text/plain; charset=utf-8", {"Location": "/"})
        session = self.app.gate.login(code)
        if session is None:
            return self._refuse(403, "this login URL was used already, belongs to another start of the server, "
                                     "or is not one", self._login_hint())
        cookie = f"{self.app.cookie}={session}; Path=/; HttpOnly; SameSite=Strict"
        self._send(303, "logged in\n", "text/plain; charset=utf-8", {"Location": "/", "Set-Cookie": cookie})

    def _body(self) -> str | None:
        """The request's body, or None once a 400, 411 or 413 is sent (the connection then closes:
        what is left of a body nobody read must not be taken for the next request)."""
        raw = self.headers.get("Content-Length")
        problem = None
        if self.headers.get("Transfer-Encoding"):
            problem = (411, "send the form with a Content-Length, not a Transfer-Encoding")
        elif raw is None:
            problem = (411, "a POST needs a Content-Length header")
        elif not (raw.strip().isascii() and raw.strip().isdigit()) or len(raw.strip()) > 12:
            problem = (400, f"Content-Length must be a number of bytes, not {raw[:40]!r}")
        elif int(raw) > MAX_BODY:
            problem = (413, f"request too large: a form here is at most {MAX_BODY:,} bytes")
        if problem:
            self.close_connection = True
            self._send(problem[0], problem[1] + "\n", "text/plain; charset=utf-8", {"Connection": "close"})
            return None
        return self.rfile.read(int(raw or 0)).decode("utf-8", "replace")

    def _fields(self, query: str) -> dict[str, str] | None:
        """The fields of a query string or form (the last of each name), or None once a 400 is sent
        for more than MAX_FIELDS (parse_qs raised, and the connection dropped without an answer)."""
        try:
            return {k: v[-1] for k, v in parse_qs(query, max_num_fields=MAX_FIELDS).items()}
        except ValueError:
            self._send(400, f"too many fields: a page or a form here takes at most {MAX_FIELDS}\n",
                       "text/plain; charset=utf-8")
            return None

    def _origin_ok(self) -> bool:
        """A write comes from this server's own page: its Origin names this server (a browser sends
        one with every POST). Another port of 127.0.0.1 is the same site, so SameSite is not enough."""
        origin = self.headers.get("Origin", "")
        fetch_site = self.headers.get("Sec-Fetch-Site", "same-origin")
        return origin in {f"http://{host}" for host in self.app.hosts()} and fetch_site == "same-origin"

    def do_POST(self) -> None:
        if not self._host_ok():
            return
        raw = self._body()
        if raw is None:
            return
        session = self._session()
        if session is None:
            return self._refuse(401, "changes need a login: memrepo serve takes them only from the user who started it",
                                self._login_hint())
        if not self._origin_ok():
            return self._refuse(403, "cross-origin request refused: changes come only from this server's own pages",
                                "reload the page and use its buttons")
        form = self._fields(raw)
        if form is None:
            return
        if self.app.read_only:
            return self._error(403, "this server is read-only (started with --read-only)")
        if not auth.same(form.get("token", ""), self.app.gate.csrf(session)):
            return self._error(403, "missing or wrong token: changes come only from this server's own pages",
                               "reload the page and use its buttons")
        actions: dict[str, tuple[Callable[[dict[str, str]], str], str]] = {
            "/review/accept": (self._accept, "/review"), "/review/reject": (self._reject, "/review"),
            "/runs/undo": (self._undo, "/runs"), "/m/forget": (self._forget, "/m/"), "/m/share": (self._share, "/m/")}
        route = urlsplit(self.path).path
        if route not in actions:
            return self._error(404, f"no action {route}")
        do, back = actions[route]
        if back == "/m/":  # an action on one memory: its id, from this server's own page, is a memory's id
            note_id = form.get("id", "")
            if not _memory_id(note_id):
                return self._error(400, f"not a memory id: {note_id[:80]!r}", "reload the page and use its buttons")
            back += quote(note_id)
        try:
            with self.app.lock:
                done = do(form)
        except MemrepoError as exc:
            return self._error(409, str(exc), exc.hint or "")
        except Exception as exc:  # noqa: BLE001 — an action that fails says why instead of dropping the connection
            return self._error(500, f"{type(exc).__name__}: {exc}", "`memrepo doctor` names most problems and their fix")
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


    def _forget(self, form: dict[str, str]) -> str:
        """`memrepo forget ID` of a team's or the project's memory: a proposal there (issue 41, part 6)."""
        from memrepo.passes import share
        from memrepo.store import lifecycle

        reason = " ".join(form.get("reason", "").split())[:300] or lifecycle.DEFAULT_FORGET_REASON
        done = share.forget(self.app.repo, form["id"], os.getcwd(), reason, self.app.forge, self.app.gh,
                            only=form.get("source") or None)
        return _proposal(f"proposed retiring {done.id} to {done.to}", done)

    def _share(self, form: dict[str, str]) -> str:
        """`memrepo share ID --to TEAM|project`: your memory proposed to a team or the project."""
        from memrepo.passes import share

        done = share.share(self.app.repo, form["id"], form.get("to", ""), os.getcwd(), self.app.forge, self.app.gh)
        return _proposal(f"proposed {done.id} to {done.to}", done)


def _memory_id(note_id: str) -> bool:
    from memrepo.format import notes

    return notes.is_id(note_id)


def _proposal(head: str, done: Any) -> str:
    """What the CLI prints for a proposal: where it went (the branch and the pull request, or the
    file), then what is left to do by hand."""
    where = (f" as {done.path}" if done.path else "") + (f": {done.url}" if done.url else "")
    return "\n".join([head + where, *(f"  {line}" for line in done.manual)])


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, app: App, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.app = app
        app.port = int(self.server_address[1])

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One line, not a traceback, for a request that broke (a client gone mid-answer, mostly)."""
        exc = sys.exc_info()[1]
        sys.stderr.write(f"memrepo serve: a request failed: {type(exc).__name__}: {exc}\n")


def serve(repo: str, port: int = 0, read_only: bool = False, ready: Callable[[str], None] | None = None,
          forge: str | None = None) -> None:
    """Serve until interrupted; `ready(url)` is called once the socket listens, with the one-time
    login URL (it belongs on the owner's terminal and nowhere else). `forge`: as `memrepo share --forge`."""
    try:
        server = Server(App(repo, read_only, forge=forge), port)
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise
        raise MemrepoError(f"port {port} on 127.0.0.1 is taken by another program",
                           hint=f"pick another with --port (0: any free one); if it is a memrepo serve already, "
                                f"`memrepo serve --login-url --port {port}` logs a browser into it") from None
    url = server.app.login_url()
    (ready or (lambda u: sys.stderr.write(f"memrepo serve: {u}\n")))(url)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
