"""`memrepo serve` over HTTP: a real server on 127.0.0.1 over a real repository, driven with urllib.

What a browser would do, request by request: search, a memory's history with the supersession
commit's diff, a review proposal accepted by its button's POST, a run undone byte for byte,
`<script>` in a memory shown as text, a POST without the token refused, a foreign Host refused.
Every request logs in first, by the one-time URL; what happens without the login is in
test_serve_auth.py.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import signal
import subprocess
import sys
import threading
import urllib.parse
from typing import Any, Iterator

import pytest

from helpers import IDENTITY, build_template, commit_all, copy_template, git, write_memory
from memrepo.web import server
from test_curate import fake, ids  # noqa: F401  (fixture)
from test_review import tensions


class Client:
    """A browser of one server: logged in by its one-time URL (as the owner would open it) unless
    `login` is False; a POST carries this server's Origin, as a browser's does."""

    def __init__(self, app: server.App, login: bool = True) -> None:
        self.app = app
        self.cookie = ""
        if login:
            status, headers, _ = self.request("GET", app.login_url().split(str(app.port), 1)[1])
            assert status == 303 and headers["location"] == "/", (status, headers)
            self.cookie = headers["set-cookie"].split(";", 1)[0]

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.app.port}"

    def request(self, method: str, path: str, form: dict[str, str] | None = None,
                host: str | None = None, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.app.port, timeout=60)
        body = urllib.parse.urlencode(form) if form is not None else None
        sent = {"Host": host or f"127.0.0.1:{self.app.port}"}
        if self.cookie:
            sent["Cookie"] = self.cookie
        if body is not None:
            sent["Content-Type"] = "application/x-www-form-urlencoded"
            sent["Origin"] = self.origin
        sent = {k: v for k, v in {**sent, **(headers or {})}.items() if v is not None}
        conn.request(method, path, body=body, headers=sent)
        resp = conn.getresponse()
        text = resp.read().decode("utf-8")
        conn.close()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, text

    def get(self, path: str, **kw: str) -> str:
        status, _, text = self.request("GET", path, **kw)  # type: ignore[arg-type]
        assert status == 200, (path, status, text[:500])
        return text

    def token(self, page: str) -> str:
        found = re.search(r'name="token" value="([^"]+)"', self.get(page))
        assert found, f"no form with a token on {page}"
        return found.group(1)


def _serve(repo: str, read_only: bool = False, **kw: Any) -> Iterator[Client]:
    srv = server.Server(server.App(repo, read_only, **kw), 0)
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield Client(srv.app)
    finally:
        srv.shutdown()
        srv.server_close()


def _two_memories(repo: str) -> None:
    write_memory(repo, "friday-freeze", class_="rule", title="No production deploys on Friday afternoon",
                 description="After 16:00 on Fridays nothing ships to production without an explicit OK.",
                 topics=["deploy"])
    write_memory(repo, "coffee-order", title="The team orders coffee from the corner roaster",
                 description="Beans come from the corner roaster every Monday.", topics=["coffee"])
    assert commit_all(repo, "memories").returncode == 0


@pytest.fixture(scope="module")
def store_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The two memories committed through the hooks once per module (test_serve_auth imports it too)."""
    return build_template(tmp_path_factory, _two_memories, identity=IDENTITY)


@pytest.fixture
def store(store_template: str, tmp_path: os.PathLike[str]) -> str:
    return copy_template(store_template, tmp_path)


@pytest.fixture
def client(store: str) -> Iterator[Client]:
    yield from _serve(store)


def test_search_finds_a_memory_and_filters_narrow_the_list(client: Client) -> None:
    page = client.get("/?q=" + urllib.parse.quote("can I deploy to production on friday?"))
    assert 'href="/m/friday-freeze"' in page and "coffee-order" not in page
    every = client.get("/")
    assert 'href="/m/friday-freeze"' in every and 'href="/m/coffee-order"' in every and "2 of 2 memories" in every
    rules = client.get("/?class=rule")
    assert 'href="/m/friday-freeze"' in rules and 'href="/m/coffee-order"' not in rules


def test_a_memory_page_shows_its_fields_text_and_history(client: Client, store: str) -> None:
    page = client.get("/m/friday-freeze")
    assert "No production deploys on Friday afternoon" in page and "After 16:00 on Fridays" in page
    assert '<span class="label">deploy</span>' in page and "<h2>History</h2>" in page and "memories" in page
    status, _, text = client.request("GET", "/m/no-such-memory")
    assert status == 404 and "no memory with id" in text


def test_the_history_shows_the_supersession_commit_s_diff_and_trailers(repo: str, fake) -> None:  # noqa: F811
    tensions(repo, fake, "p13")
    loser, winner = ids("p13")
    for client in _serve(repo):
        token = client.token("/review")
        pid = re.search(r'name="id" value="([0-9a-f]+)"', client.get("/review")).group(1)
        status, headers, _ = client.request("POST", "/review/accept", {"id": pid, "token": token})
        assert status == 303 and headers["location"].startswith("/review?done=")
        assert "accepted" in client.get(headers["location"])
        # the click did what `memrepo review accept` does: a commit with its trailers
        trailers = git(repo, "log", "-1", "--format=%(trailers:unfold,only)").stdout
        assert "Memrepo-Action: supersede\n" in trailers and f"Memrepo-Proposal: " in trailers
        page = client.get(f"/m/{loser}")
        assert f"curator: supersede {loser} by {winner}" in page
        assert '<span class="add">+superseded_by: ' in page and "Memrepo-" not in page.split("<h2>History</h2>")[0]
        assert "<td>Action</td><td>supersede</td>" in page
        assert f'href="/m/{winner}"' in page.split("<h2>Chain</h2>")[1]


def test_undo_by_its_button_restores_the_files_byte_for_byte(client: Client, store: str) -> None:
    path = os.path.join(store, "memory", "friday-freeze.md")
    before = open(path, "rb").read()
    from memrepo.store import lifecycle

    run = lifecycle.retire(store, "friday-freeze", "the freeze ended")[1]
    assert open(path, "rb").read() != before
    page = client.get("/runs")
    assert run in page
    assert "retire: friday-freeze" in page and "retire: retire" not in page  # issue 39: "add: add: …"
    status, headers, _ = client.request("POST", "/runs/undo", {"run": run, "token": client.token("/runs")})
    assert status == 303, headers
    assert open(path, "rb").read() == before
    assert git(store, "status", "--porcelain").stdout == ""
    assert "undone by" in client.get("/runs")


def test_retired_memories_are_listed_only_when_asked_for(client: Client, store: str) -> None:
    from memrepo.store import lifecycle

    lifecycle.retire(store, "coffee-order", "we drink tea now")
    client.app.refresh()
    page = client.get("/")
    assert "/m/coffee-order" not in page and "1 retired not listed" in page
    assert "/m/friday-freeze" in page
    assert "/m/coffee-order" in client.get("/?status=retired")


def test_the_empty_review_page_claims_no_curator_run(client: Client) -> None:
    page = client.get("/review")
    assert "no open proposals." in page and "the curator was sure" not in page


def test_memory_text_is_shown_as_text_never_run(repo: str) -> None:
    write_memory(repo, "xss-probe", title="Probe <script>alert(1)</script>",
                 description='A "quoted" <img src=x onerror=alert(2)> description', topics=["probe"],
                 body="<script>document.title='owned'</script>\n")
    assert commit_all(repo, "probe").returncode == 0
    for client in _serve(repo):
        for page in (client.get("/"), client.get("/m/xss-probe"), client.get("/?q=probe")):
            assert "<script>" not in page and "<img" not in page and "&lt;script&gt;" in page
        _, headers, _ = client.request("GET", "/m/xss-probe")
        assert "default-src 'none'" in headers["content-security-policy"]


def test_control_and_bidirectional_characters_are_shown_as_escapes(repo: str) -> None:
    # A bidirectional override made Chromium show "<script>x</script>" reversed; an escape
    # sequence reached a `curl` of the page on a terminal as it was.
    write_memory(repo, "escapes", title="Escapes in the body", description="A body with controls", topics=["probe"],
                 body="clear \x1b[2J, C1 \x9b31m, bidi \u202egnirts\n")
    assert commit_all(repo, "escapes").returncode == 0
    for client in _serve(repo):
        page = client.get("/m/escapes")
        assert not {"\x1b", "\x9b", "\u202e"} & set(page)
        assert "clear \\x1b[2J, C1 \\x9b31m, bidi \\u202egnirts" in page


def test_too_many_fields_get_a_400_not_a_dropped_connection(client: Client, store: str) -> None:
    many = "&".join(f"f{n}=1" for n in range(server.MAX_FIELDS + 1))
    status, _, text = client.request("GET", "/?" + many)
    assert (status, text) == (400, f"too many fields: a page or a form here takes at most {server.MAX_FIELDS}\n")
    status, _, text = client.request("POST", "/runs/undo", form={f"f{n}": "1" for n in range(server.MAX_FIELDS + 1)})
    assert status == 400 and "too many fields" in text
    assert client.get("/?q=deploy")  # the server still answers


@pytest.mark.parametrize("damage", ["removed", "overwritten"])
def test_a_cache_lost_between_refreshes_is_rebuilt_not_a_500(client: Client, store: str, damage: str) -> None:
    from memrepo.base import paths

    assert "2 of 2 memories" in client.get("/")  # the refresh that follows is at most 10 s away
    db = paths.index_db(store)
    for name in (db, db + "-wal", db + "-shm"):
        if os.path.exists(name):
            os.remove(name)
    if damage == "overwritten":
        with open(db, "w") as fh:
            fh.write("not a database\n")
    assert "2 of 2 memories" in client.get("/")  # was: 500, "OperationalError: unable to open database file"
    assert 'href="/m/friday-freeze"' in client.get("/?q=friday+deploys")


def test_a_post_without_the_right_token_is_refused(client: Client, store: str) -> None:
    from memrepo.store import lifecycle

    run = lifecycle.retire(store, "friday-freeze", "the freeze ended")[1]
    head = git(store, "rev-parse", "HEAD").stdout
    for form in ({"run": run}, {"run": run, "token": "guessed"}):
        status, _, text = client.request("POST", "/runs/undo", form)
        assert status == 403 and "token" in text
    assert git(store, "rev-parse", "HEAD").stdout == head


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_request_with_a_foreign_host_is_refused(client: Client, method: str) -> None:
    """DNS rebinding: a page on evil.example whose name now points at 127.0.0.1."""
    for host in (f"evil.example:{client.app.port}", "127.0.0.1", f"127.0.0.1:{client.app.port + 1}"):
        status, _, text = client.request(method, "/", {} if method == "POST" else None, host=host)
        assert status == 421 and "answers only to" in text


def test_read_only_shows_no_button_and_refuses_every_post(store: str) -> None:
    from memrepo.store import lifecycle

    run = lifecycle.retire(store, "friday-freeze", "the freeze ended")[1]
    for client in _serve(store, read_only=True):
        page = client.get("/runs")
        assert run in page and "<form" not in page and "read-only" in page
        status, _, _ = client.request("POST", "/runs/undo",
                                      {"run": run, "token": client.app.gate.csrf(client.cookie.split("=", 1)[1])})
        assert status == 403


def test_the_server_listens_on_loopback_only(store: str) -> None:
    srv = server.Server(server.App(store), 0)
    try:
        assert srv.server_address[0] == "127.0.0.1"
    finally:
        srv.server_close()


def test_a_memory_a_hand_edit_broke_shows_its_problem_and_text(store: str) -> None:
    path = os.path.join(store, "memory", "coffee-order.md")
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    broken = text.replace("title: ", "title: [unclosed ", 1)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(broken)
    for client in _serve(store):
        page = client.get("/")  # was: the memory gone from the list without a word
        assert "1 of 1 memories" in page and 'not indexed: <a href="/m/coffee-order">memory/coffee-order.md</a>' in page
        status, _, page = client.request("GET", "/m/coffee-order")  # was: 500, "ParseError: front matter is not valid YAML"
        assert status == 200 and "memory/coffee-order.md:3: front matter is not valid YAML" in page
        assert "repair it with `memrepo edit coffee-order`" in page and "title: [unclosed The team" in page
        assert "<h2>History</h2><section><h3>" in page


def test_the_recall_page_shows_decisions_without_prompts(store: str) -> None:
    from memrepo.recall import decide, log

    prompt = "it's friday 17:00, can I still ship this hotfix to production?"
    log.log_decision(store, prompt, decide.decide(store, prompt), "s-1")
    log.log_decision(store, "ok, go ahead", decide.decide(store, "ok, go ahead"), "s-1", "codex")
    for client in _serve(store):
        page = client.get("/recall")
        assert 'href="/m/friday-freeze"' in page and "silent: conversational" in page and "<svg" in page
        assert prompt not in page and "codex" in page
        # each decision's trace, folded under it (issue 36): its terms, its candidates and what cut each
        trace = page.split("<details><summary>trace</summary><pre>", 1)[1].split("</pre>", 1)[0]
        assert trace.startswith("terms: ") and "friday" in trace.split("\n", 1)[0]
        assert "1. friday-freeze  score " in trace and "injected" in trace


def test_a_commit_made_elsewhere_shows_on_the_next_page(client: Client, store: str) -> None:
    """Another terminal's commit (the repository's hooks index it; the server also refreshes when HEAD moves)."""
    assert "brand-new-note" not in client.get("/")
    write_memory(store, "brand-new-note", title="A note written in another terminal", description="Made while serving.",
                 topics=["terminal"])
    assert commit_all(store, "another terminal").returncode == 0
    assert 'href="/m/brand-new-note"' in client.get("/")
    assert 'href="/m/brand-new-note"' in client.get("/?q=" + urllib.parse.quote("note written in another terminal"))


def test_a_file_edited_by_hand_shows_once_the_refresh_interval_passed(client: Client, store: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    client.get("/")
    write_memory(store, "hand-written", title="Written by hand, not committed yet", description="Still in the working tree.",
                 topics=["draft"])
    monkeypatch.setattr(server, "REFRESH_EVERY", 0.0)
    assert 'href="/m/hand-written"' in client.get("/")


def test_a_memory_page_shows_its_claims_and_their_last_check(repo: str) -> None:
    write_memory(repo, "runbook", title="The runbook lives in docs/runbook.md", description="Ops steps are in docs/runbook.md.",
                 topics=["ops"], verification={"status": "unverified", "checked": "2026-11-29", "reason": "path gone"},
                 claims=[{"probe": "path_exists", "args": {"path": "docs/runbook.md"}, "by": "text"}])
    assert commit_all(repo, "runbook").returncode == 0
    for client in _serve(repo):
        page = client.get("/m/runbook")
        claims = page.split("<h2>Claims</h2>")[1]
        assert "path_exists" in claims and "path=docs/runbook.md" in claims and "by: text" in claims
        assert '<span class="warn">unverified</span>, checked 2026-11-29, reason path gone' in claims


@contextlib.contextmanager
def serve_process(store: str, *args: str) -> Iterator[tuple[int, str]]:
    """`memrepo serve --port 0 ARGS` as a process: (its port, the login path it printed); it must
    stop cleanly on Ctrl-C (SIGINT) afterwards."""
    # Ctrl-C as a terminal sends it: a suite started in the background (`.ci/run &`) runs with SIGINT
    # ignored, which a child inherits and Python then never turns into KeyboardInterrupt.
    proc = subprocess.Popen([sys.executable, "-m", "memrepo", "--repo", store, "serve", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        url = re.search(r"open http://127\.0\.0\.1:(\d+)(/login\?code=\S+)", line)
        assert url, line + proc.stderr.read()  # type: ignore[union-attr]
        yield int(url.group(1)), url.group(2)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
            raise AssertionError(f"memrepo serve did not stop on SIGINT within 30 s; its stderr: {err[-2000:]}") from None
        assert code == 0


def test_memrepo_serve_from_the_command_line(store: str) -> None:
    """`memrepo serve --port 0 --read-only`: prints its login URL, serves who opened it, stops on Ctrl-C (SIGINT)."""
    with serve_process(store, "--read-only") as (port, login):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request("GET", login, headers={"Host": f"127.0.0.1:{port}"})
        resp = conn.getresponse()
        resp.read()
        cookie = resp.getheader("Set-Cookie", "").split(";", 1)[0]
        assert resp.status == 303 and cookie.startswith(f"memrepo-{port}="), resp.status
        conn.request("GET", "/", headers={"Host": f"127.0.0.1:{port}", "Cookie": cookie})
        page = conn.getresponse().read().decode()
        assert 'href="/m/friday-freeze"' in page and "read-only" in page


def test_the_list_pages_through_every_memory_keeping_the_filters(store: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from memrepo.web import pages

    for n in range(3):
        write_memory(store, f"extra-rule-{n}", class_="rule", title=f"Extra rule number {n}", description="One more rule.",
                     topics=["extra"])
    assert commit_all(store, "extras").returncode == 0
    monkeypatch.setattr(pages, "MAX_LIST", 2)
    for client in _serve(store):
        first = client.get("/?class=rule")
        seen = set(re.findall(r'href="/m/([a-z0-9-]+)"', first))
        assert len(seen) == 2 and "4 of 5 memories (1–2 shown)" in first
        nxt = re.search(r'href="(/\?[^"]*start=2[^"]*)">next', first).group(1).replace("&amp;", "&")
        assert "class=rule" in nxt
        second = client.get(nxt)
        seen |= set(re.findall(r'href="/m/([a-z0-9-]+)"', second))
        assert seen == {"friday-freeze", "extra-rule-0", "extra-rule-1", "extra-rule-2"} and "previous" in second


def test_reject_records_the_reason_typed_on_the_page(repo: str, fake) -> None:  # noqa: F811
    tensions(repo, fake, "p13")
    for client in _serve(repo):
        page = client.get("/review")
        assert 'name="reason"' in page
        pid = re.search(r'name="id" value="([0-9a-f]+)"', page).group(1)
        status, _, _ = client.request("POST", "/review/reject", {"id": pid, "token": client.token("/review"),
                                                                 "reason": "the rule still holds in cloud sessions"})
        assert status == 303
    message = git(repo, "log", "-1", "--format=%B").stdout
    assert "Memrepo-Action: reject" in message and "the rule still holds in cloud sessions" in message


def test_a_page_that_fails_says_why(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    from memrepo.web import pages

    def broken(repo: str) -> tuple[str, str]:
        raise OSError("disk on fire")

    monkeypatch.setattr(pages, "recall", broken)
    status, _, text = client.request("GET", "/recall")
    assert status == 500 and "OSError: disk on fire" in text
