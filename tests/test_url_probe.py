"""`url_alive` does not reach inside the network (issue 15): every internal address form is
refused after resolution, with nothing sent; the connection goes to the address that was
checked; HEAD is asked first; internal hosts are allowed only from this machine's settings.
"""

from __future__ import annotations

import http.server
import json
import os
import socket
import threading
from typing import Any, Iterator

import pytest

from helpers import commit_all, write_file, write_memory
from memrepo.passes.verify import fetch, probes, verifier as verify
from memrepo.passes.verify.probes import ClaimRejected, Context, Verdict
from memrepo.store import doctor

ALLOW_HINT = "allow it with `url_allow_hosts` in index/local.json"


class Server:
    """A loopback HTTP server that records the method of every request it gets."""

    def __init__(self, head_status: int = 200) -> None:
        self.methods: list[str] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self, status: int) -> None:
                outer.methods.append(self.command)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_HEAD(self) -> None:  # noqa: N802
                self._answer(head_status)

            def do_GET(self) -> None:  # noqa: N802
                self._answer(200)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.httpd.server_address[1])
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.close()


@pytest.fixture
def connects(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every TCP connection a probe opens (and then opens for real)."""
    seen: list[Any] = []
    real = socket.create_connection

    def record(address: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(address)
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", record)
    return seen


def alive(url: str, allow: tuple[str, ...] = ()) -> tuple[Verdict, str]:
    ctx = Context({}, {}, None, allow)
    out = probes.run(probes.check("url_alive", {"url": url}), ctx)
    return out.verdict, out.detail


# Each form names this machine's loopback service; the server must never see a request.
LOOPBACK_FORMS = ["127.0.0.1", "localhost", "2130706433", "0x7f000001", "0x7f.1", "127.1", "017700000001",
                  "0177.0.0.1", "127.0.0.2", "0.0.0.0"]


@pytest.mark.parametrize("host", LOOPBACK_FORMS)
def test_every_loopback_form_is_refused_after_resolution(server: Server, connects: list[Any], host: str) -> None:
    verdict, detail = alive(f"http://{host}:{server.port}/health")
    assert verdict is Verdict.UNKNOWN
    assert detail.startswith(f"not fetched: {host} resolves to ") and detail.endswith(ALLOW_HINT)
    assert ("a loopback address" in detail) or ("a private address" in detail)  # 0.0.0.0 is "this network"
    assert (server.methods, connects) == ([], [])


@pytest.mark.parametrize("host, why", [
    ("169.254.169.254", "a link-local address"),  # the cloud metadata endpoint
    ("10.0.0.1", "a private address"),
    ("172.16.5.4", "a private address"),
    ("192.168.1.1", "a private address"),
    ("100.64.0.1", "a non-public address"),  # carrier-grade NAT
    ("[::1]", "a loopback address"),
    ("[fe80::1]", "a link-local address"),
    ("[fd00::1]", "a private address"),
    ("224.0.0.1", "a multicast address"),
])
def test_internal_networks_are_refused(connects: list[Any], host: str, why: str) -> None:
    verdict, detail = alive(f"http://{host}/latest/meta-data/")
    shown = host.strip("[]")
    assert (verdict, detail) == (Verdict.UNKNOWN, f"not fetched: {shown} resolves to {shown}, {why}; {ALLOW_HINT}")
    assert connects == []


def test_an_ipv4_mapped_ipv6_loopback_is_refused_before_anything_runs(connects: list[Any]) -> None:
    with pytest.raises(ClaimRejected):
        probes.check("url_alive", {"url": "http://[::ffff:127.0.0.1]/"})
    assert fetch.internal(fetch.ipaddress.ip_address("::ffff:127.0.0.1")) == "a loopback address"
    assert connects == []


def test_a_name_resolving_to_a_public_and_an_internal_address_is_refused(monkeypatch: pytest.MonkeyPatch,
                                                                         connects: list[Any]) -> None:
    answers = [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", 80)),
               (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", 80))]
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: answers)
    assert alive("http://rebind.example/")[1] == f"not fetched: rebind.example resolves to 127.0.0.1, a loopback address; {ALLOW_HINT}"
    assert connects == []


def test_the_connection_goes_to_the_address_that_was_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    lookups: list[str] = []
    opened: list[Any] = []

    def getaddrinfo(host: str, *args: Any, **kwargs: Any) -> list[Any]:
        lookups.append(host)  # a second lookup could answer 127.0.0.1 (DNS rebinding)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", 80))]

    def create_connection(address: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(address)
        raise OSError("no network in tests")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket, "create_connection", create_connection)
    assert alive("http://docs.example/status") == (Verdict.UNKNOWN, "no answer from here")
    assert (lookups, opened) == (["docs.example"], [("93.184.216.34", 80)])


def test_an_allowed_host_is_asked_with_head_only(server: Server) -> None:
    assert alive(f"http://localhost:{server.port}/health", allow=("localhost",)) == (Verdict.TRUE, "answers")
    assert server.methods == ["HEAD"]


def test_an_allowed_network_covers_every_spelling_of_its_addresses(server: Server) -> None:
    assert alive(f"http://2130706433:{server.port}/", allow=("127.0.0.0/8",)) == (Verdict.TRUE, "answers")
    assert alive(f"http://127.1:{server.port}/", allow=("10.0.0.0/8", "not a network")) [0] is Verdict.UNKNOWN
    assert server.methods == ["HEAD"]


def test_get_only_when_the_server_refuses_head() -> None:
    s = Server(head_status=405)
    try:
        assert alive(f"http://127.0.0.1:{s.port}/", allow=("127.0.0.1",)) == (Verdict.TRUE, "answers")
        assert s.methods == ["HEAD", "GET"]
    finally:
        s.close()


def test_the_allow_list_counts_only_from_this_machine(repo: str, server: Server) -> None:
    url = f"http://localhost:{server.port}/health"
    write_memory(repo, "health", title="Health endpoint", description="The service answers on its health URL",
                 body=f"Check {url} after a deploy.\n")
    write_file(repo, "memrepo.json", json.dumps({"url_allow_hosts": ["localhost"]}))  # committed: came with a pull
    assert commit_all(repo, "memory and shared settings").returncode == 0
    report = verify.run(repo, use_model=False, today="2026-11-29")
    outcome = [o for r in report.results for o in r.as_dict().get("claims", [])]
    assert server.methods == [], outcome
    warnings = [c for c in doctor.run(repo) if c.name == "settings" and c.warn]
    assert any("`url_allow_hosts` in the committed memrepo.json is ignored" in c.detail for c in warnings)
    write_file(repo, "index/local.json", json.dumps({"url_allow_hosts": ["localhost"]}))
    verify.run(repo, use_model=False, today="2026-11-30")
    assert server.methods == ["HEAD"]
    assert os.path.exists(os.path.join(repo, "index", "local.json"))
