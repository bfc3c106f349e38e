"""`memrepo serve` shows and changes memory only for the user who started it (issue 38, part 5),
and a POST with a broken Content-Length gets an answer, not a dropped connection (part 7).

Another local user can reach 127.0.0.1 like anyone: every page and action without the owner's
login gets 401/403 and a page holding nothing of the repository; the login is a one-time URL
made from a secret in a 0600 file; writes also need this server's Origin and the session's token.
"""

from __future__ import annotations

import os
import re
import socket
import stat
import subprocess
import sys
import threading
import urllib.parse
from typing import Iterator

import pytest
from click.testing import CliRunner

from helpers import git
from memrepo.cli.main import cli
from memrepo.errors import MemrepoError
from memrepo.web import auth, server
from test_serve import Client, serve_process, store, store_template  # noqa: F401 — the same two memories as test_serve

PAGES = ["/", "/?q=friday", "/m/friday-freeze", "/m/coffee-order", "/recall", "/review", "/runs", "/no-such-page"]
ACTIONS = ["/runs/undo", "/review/accept", "/review/reject"]
MEMORY_TEXT = ["friday-freeze", "Friday afternoon", "coffee", "roaster"]


@pytest.fixture
def srv(store: str) -> Iterator[server.Server]:
    running = server.Server(server.App(store), 0)
    thread = threading.Thread(target=running.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield running
    finally:
        running.shutdown()
        running.server_close()


def _undoable(store: str) -> str:
    from memrepo.store import lifecycle

    return lifecycle.retire(store, "friday-freeze", "the freeze ended")[1]


def _holds_nothing(text: str, owner: Client) -> None:
    for secret in MEMORY_TEXT + [owner.app.gate.csrf(owner.cookie.split("=", 1)[1]), owner.app.gate.secret.decode()]:
        assert secret not in text, secret
    assert 'name="token"' not in text and "/login?code=" not in text


@pytest.mark.parametrize("cookie", [None, "memrepo-{port}=guessed", "memrepo-{port}={other}"])
def test_no_page_shows_anything_without_the_owner_s_login(srv: server.Server, store: str, cookie: str | None) -> None:
    """A stranger, a guessed cookie, and a session of another server (another port, same name)."""
    owner = Client(srv.app)
    other = server.Server(server.App(store), 0)
    other.server_close()
    stranger = Client(srv.app, login=False)
    stranger.cookie = (cookie or "").format(port=srv.app.port, other=other.app.gate.login(other.app.login_url()
                                                                                             .split("code=")[1]))
    for method in ("GET", "HEAD"):
        for path in PAGES:
            status, _, text = stranger.request(method, path)
            assert status == 401, (method, path, status)
            _holds_nothing(text, owner)
            if method == "GET":
                assert "login URL" in text and f"memrepo serve --login-url --port {srv.app.port}" in text
    assert owner.get("/runs") and "Friday afternoon" in owner.get("/")


def test_no_action_is_taken_without_the_owner_s_login(srv: server.Server, store: str) -> None:
    run = _undoable(store)
    owner = Client(srv.app)
    token = owner.token("/runs")
    head = git(store, "rev-parse", "HEAD").stdout
    stranger = Client(srv.app, login=False)
    for path in ACTIONS:
        for form in ({"run": run, "id": "x"}, {"run": run, "id": "x", "token": token}):
            status, _, text = stranger.request("POST", path, form)
            assert status == 401, (path, status)
            _holds_nothing(text, owner)
    assert git(store, "rev-parse", "HEAD").stdout == head
    status, _, _ = owner.request("POST", "/runs/undo", {"run": run, "token": token})
    assert status == 303 and git(store, "rev-parse", "HEAD").stdout != head


def test_the_login_url_works_once_and_sets_an_httponly_strict_cookie(srv: server.Server) -> None:
    path = srv.app.login_url().split(str(srv.app.port), 1)[1]
    browser = Client(srv.app, login=False)
    status, headers, _ = browser.request("HEAD", path)  # a link preview: it neither logs in nor spends the code
    assert status == 405 and "set-cookie" not in headers
    status, headers, text = browser.request("GET", path)
    assert status == 303 and headers["location"] == "/"
    cookie = headers["set-cookie"]
    assert cookie.startswith(f"memrepo-{srv.app.port}=")
    browser.cookie = cookie.split(";", 1)[0]
    status, headers, _ = browser.request("GET", path)  # the same browser again: it is in already
    assert status == 303 and headers["location"] == "/" and "set-cookie" not in headers
    assert {"HttpOnly", "SameSite=Strict", "Path=/"} <= {part.strip() for part in cookie.split(";")[1:]}
    again = Client(srv.app, login=False)
    status, headers, text = again.request("GET", path)
    assert status == 403 and "set-cookie" not in headers and "used already" in text
    for code in ("", "x", "1.2.3", path.split("code=")[1][:-1] + "0", "١٢٣.nonce.mac"):
        status, headers, _ = again.request("GET", "/login?code=" + urllib.parse.quote(code))
        assert status == 403 and "set-cookie" not in headers


def test_a_login_url_minted_before_the_server_started_is_refused(srv: server.Server) -> None:
    """A login URL left in a browser's history opens nothing once the server restarted."""
    issued = f"{srv.app.gate.started - 1}.{'ab' * 12}"
    old = f"{issued}.{auth._mac(srv.app.gate.secret, 'login:' + issued)}"
    status, headers, _ = Client(srv.app, login=False).request("GET", "/login?code=" + old)
    assert status == 403 and "set-cookie" not in headers


def test_no_page_holds_the_secret_or_a_login_code(srv: server.Server, store: str) -> None:
    _undoable(store)
    owner = Client(srv.app)
    secret = auth.load_secret(create=False).decode()
    for path in PAGES[:-1]:
        status, _, text = owner.request("GET", path)
        assert status == 200 and secret not in text and "/login?code=" not in text and "code=" not in text


@pytest.mark.parametrize("headers", [
    {"Origin": "http://127.0.0.1:1"},  # another server on this machine: same site, other origin
    {"Origin": "http://evil.example"},
    {"Origin": "null"},  # a file:// page, or a sandboxed frame
    {"Origin": None},
    {"Sec-Fetch-Site": "same-site"},
    {"Sec-Fetch-Site": "cross-site"},
])
def test_a_cross_origin_post_with_the_cookie_is_refused(srv: server.Server, store: str,
                                                        headers: dict[str, str | None]) -> None:
    run = _undoable(store)
    owner = Client(srv.app)
    token = owner.token("/runs")
    head = git(store, "rev-parse", "HEAD").stdout
    status, _, text = owner.request("POST", "/runs/undo", {"run": run, "token": token}, headers=headers)  # type: ignore[arg-type]
    assert status == 403 and "cross-origin request refused" in text
    assert git(store, "rev-parse", "HEAD").stdout == head


def test_the_secret_file_is_the_owner_s_alone(srv: server.Server) -> None:
    st = os.stat(auth.secret_path())
    assert stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == os.getuid()
    assert os.path.dirname(auth.secret_path()) == os.path.join(os.environ["XDG_CONFIG_HOME"], "memrepo")


def test_a_secret_file_others_can_read_is_refused_with_the_fix(store: str) -> None:
    auth.load_secret()
    os.chmod(auth.secret_path(), 0o644)
    with pytest.raises(MemrepoError, match="can be read by other users"):
        server.App(store)
    result = CliRunner().invoke(cli, ["serve", "--login-url", "--port", "8765"])  # the same check, and no server to hang
    assert result.exit_code == 1
    assert "can be read by other users (mode 644)" in result.output and f"rm {auth.secret_path()}" in result.output


@pytest.mark.parametrize("kind", ["symlink", "empty", "another user's"])
def test_a_secret_file_not_plainly_the_owner_s_is_refused_with_the_fix(store: str, tmp_path: str, kind: str) -> None:
    path = auth.secret_path()
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    if kind == "symlink":
        target = os.path.join(str(tmp_path), "elsewhere")
        open(target, "w").write("a" * 64)
        os.chmod(target, 0o600)
        os.symlink(target, path)
    else:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        os.write(fd, b"" if kind == "empty" else b"a" * 64)
        os.close(fd)
        if kind == "another user's":
            if os.getuid() != 0:
                pytest.skip("giving a file to another uid needs root")
            os.chown(path, 65534, 65534)
    with pytest.raises(MemrepoError) as refused:
        server.App(store)
    assert f"rm {path}" in (refused.value.hint or "")
    result = CliRunner().invoke(cli, ["serve", "--login-url", "--port", "8765"])  # the same check, and no server to hang
    assert result.exit_code == 1 and f"rm {path}" in result.output, result.output
    assert {"symlink": "cannot read", "empty": "holds no secret", "another user's": "not a file of yours"}[kind] in result.output


def test_login_url_mints_a_login_for_the_running_server(srv: server.Server) -> None:
    result = CliRunner().invoke(cli, ["serve", "--login-url", "--port", str(srv.app.port)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    url = result.output.strip()
    assert url.startswith(f"http://127.0.0.1:{srv.app.port}/login?code=")
    status, headers, _ = Client(srv.app, login=False).request("GET", url.split(str(srv.app.port), 1)[1])
    assert status == 303 and "HttpOnly" in headers["set-cookie"]


def test_login_url_without_a_secret_names_the_fix() -> None:
    result = CliRunner().invoke(cli, ["serve", "--login-url", "--port", "8765"])
    assert result.exit_code == 1 and "no memrepo serve has run as this user" in result.output


@pytest.mark.skipif(os.getuid() != 0, reason="switching to another uid needs root")
def test_another_uid_cannot_read_the_secret_or_a_page(srv: server.Server) -> None:
    """The issue's attack, as uid 65534: the pages and the secret file are both closed to it."""
    script = ("import http.client, sys\n"
              "try:\n    open(sys.argv[2]).read(); print('read the secret')\nexcept OSError: print('no secret')\n"
              "c = http.client.HTTPConnection('127.0.0.1', int(sys.argv[1]))\n"
              "c.request('GET', '/runs', headers={'Host': '127.0.0.1:' + sys.argv[1]})\n"
              "r = c.getresponse(); print(r.status, 'token' in r.read().decode())\n")
    run = subprocess.run(["/usr/bin/python3", "-I", "-c", script, str(srv.app.port), auth.secret_path()],
                         user=65534, group=65534, capture_output=True, text=True, timeout=60, cwd="/")
    assert run.stdout.split("\n")[:2] == ["no secret", "401 False"], run.stdout + run.stderr


def _raw(port: int, head: str, body: bytes = b"") -> bytes:
    """One request as raw bytes, and all the server answers before it closes or goes quiet."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head.replace("\n", "\r\n").encode() + b"\r\n" + body)
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


@pytest.mark.parametrize("length,status,says", [
    ("abc", 400, "Content-Length must be a number"),
    ("-5", 400, "Content-Length must be a number"),
    ("1e3", 400, "Content-Length must be a number"),
    ("99999999999999999999999", 400, "Content-Length must be a number"),
    (str(10**9), 413, "request too large"),
    (None, 411, "needs a Content-Length"),
])
def test_a_post_with_a_broken_content_length_is_answered_and_the_server_keeps_serving(
        srv: server.Server, length: str | None, status: int, says: str, capfd: pytest.CaptureFixture[str]) -> None:
    owner = Client(srv.app)
    port = srv.app.port
    head = (f"POST /runs/undo HTTP/1.1\nHost: 127.0.0.1:{port}\nCookie: {owner.cookie}\nOrigin: {owner.origin}\n"
            "Content-Type: application/x-www-form-urlencoded\n" + (f"Content-Length: {length}\n" if length else ""))
    answer = _raw(port, head, b"run=x")
    first = answer.split(b"\r\n", 1)[0].decode()
    assert first == f"HTTP/1.1 {status} " + {400: "Bad Request", 411: "Length Required",
                                             413: "Request Entity Too Large"}[status], answer[:300]
    assert says in answer.decode() and b"Connection: close" in answer
    assert "Friday afternoon" in owner.get("/")
    assert "Traceback" not in capfd.readouterr().err


def test_a_chunked_post_is_answered_411(srv: server.Server) -> None:
    owner = Client(srv.app)
    head = (f"POST /runs/undo HTTP/1.1\nHost: 127.0.0.1:{srv.app.port}\nCookie: {owner.cookie}\n"
            f"Origin: {owner.origin}\nTransfer-Encoding: chunked\n")
    answer = _raw(srv.app.port, head, b"5\r\nrun=x\r\n0\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 411 ") and b"not a Transfer-Encoding" in answer
    assert re.search(r"\d+ of \d+ memories", owner.get("/"))


def test_the_serve_help_says_how_to_open_the_page() -> None:
    text = CliRunner().invoke(cli, ["serve", "--help"]).output
    assert "one-time login URL: open it in your browser" in text and "--login-url" in text
    assert "other users of this machine" in text


def test_the_printed_url_logs_in_from_the_command_line(store: str) -> None:
    """The URL `memrepo serve` prints is the way in; the same URL a second time is not."""
    import http.client

    with serve_process(store) as (port, login):
        statuses = []
        for _ in range(2):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            conn.request("GET", login, headers={"Host": f"127.0.0.1:{port}"})
            resp = conn.getresponse()
            resp.read()
            statuses.append(resp.status)
        assert statuses == [303, 403]

