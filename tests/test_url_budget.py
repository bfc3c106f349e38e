"""A run's URL probes (issue 44): side by side, each host looked up once, within one time budget
the summary reports; a probe not made in the budget is no verdict and moves no stamp."""

from __future__ import annotations

import http.server
import json
import socket
import threading
from typing import Any, Iterator

import pytest
from click.testing import CliRunner

from helpers import commit_all, memory_text, write_file, write_memory
from memrepo.cli.main import cli
from memrepo.format import notes
from memrepo.passes.verify import probes, verifier as verify

N_URLS = 6


class SlowServer:
    """A loopback server whose HEAD waits until a second request is in flight (or 5 s pass), and
    records the most requests it ever held at once."""

    def __init__(self) -> None:
        self.inflight = self.most = 0
        self.lock = threading.Lock()
        self.pair = threading.Barrier(2, timeout=5)
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_HEAD(self) -> None:  # noqa: N802
                with outer.lock:
                    outer.inflight += 1
                    outer.most = max(outer.most, outer.inflight)
                try:
                    outer.pair.wait()
                except threading.BrokenBarrierError:
                    outer.pair.reset()
                with outer.lock:
                    outer.inflight -= 1
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.httpd.server_address[1])
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture
def slow_server() -> Iterator[SlowServer]:
    s = SlowServer()
    yield s
    s.httpd.shutdown()
    s.httpd.server_close()


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[list[str], threading.Event]]:
    """Every name looked up; a lookup of a `*.hang.example` name hangs until the test ends."""
    seen: list[str] = []
    release = threading.Event()
    real = socket.getaddrinfo

    def getaddrinfo(host: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(host)
        if host.endswith("hang.example"):
            release.wait(60)
            raise socket.gaierror(socket.EAI_AGAIN, "temporary failure")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield seen, release
    release.set()


def test_url_probes_run_side_by_side_and_each_host_is_looked_up_once(repo: str, slow_server: SlowServer,
                                                                      lookups: tuple[list[str], threading.Event]) -> None:
    for i in range(N_URLS):  # two hosts: each one's first URL is asked alone, then the rest side by side
        host = ("localhost", "127.0.0.1")[i % 2]
        write_memory(repo, f"health-{i}", body=f"Service {i} answers on http://{host}:{slow_server.port}/health/{i} after a deploy.\n")
    write_file(repo, "index/local.json", json.dumps({"url_allow_hosts": ["localhost", "127.0.0.1"]}))
    assert commit_all(repo, "memories naming URLs").returncode == 0
    report = verify.run(repo, use_model=False, today="2026-11-29")
    assert [c["verdict"] for r in report.results for c in r.claims] == ["true"] * N_URLS
    assert slow_server.most >= 2  # two requests were held at once: they were made side by side
    assert lookups[0].count("localhost") == 1
    assert report.url_probes == {"budget_s": 30.0, "urls": N_URLS, "hosts": 2, "answered": N_URLS, "not_made": 0,
                                 "spent_s": report.url_probes["spent_s"], "claims_not_checked": 0}


def _stamped(repo: str, note_id: str, body: str, verification: dict[str, Any] | None) -> str:
    text = memory_text(note_id, body=body)
    if verification is not None:
        note = notes.parse(text, note_id)
        note.meta["verification"] = verification
        note.meta = {k: note.meta[k] for k in notes.ordered_keys(note.meta)}
        text = notes.serialize(note)
    return write_file(repo, f"memory/{note_id}.md", text)


def test_a_hanging_resolver_is_cut_off_by_the_budget_and_moves_no_verdict(
        repo: str, lookups: tuple[list[str], threading.Event]) -> None:
    before = {
        "was-verified": _stamped(repo, "was-verified", "Docs at https://docs.hang.example/start.\n",
                                 {"status": "verified", "checked": "2026-11-01"}),
        "never-stamped": _stamped(repo, "never-stamped", "Runbook at https://runbook.hang.example/oncall.\n", None),
        "was-unverified": _stamped(repo, "was-unverified", "See https://docs.hang.example/old and https://docs.hang.example/start.\n",
                                   {"status": "unverified", "checked": "2026-11-01", "failed": ["path_exists: src/gone.py (shop)"]}),
    }
    texts = {k: open(p, encoding="utf-8").read() for k, p in before.items()}
    write_file(repo, "index/local.json", json.dumps({"url_probe_budget": 0.5}))
    assert commit_all(repo, "memories naming URLs on a host whose lookup hangs").returncode == 0
    result = CliRunner().invoke(cli, ["--repo", repo, "sweep", "--no-model"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert ("verify: URL probes: 3 URLs on 2 hosts, 0 answered, in 0.5 s of a 0.5 s budget; 3 not checked in time "
            "(4 claims left without a verdict; raise `url_probe_budget` to check them)") in result.output
    assert {k: open(p, encoding="utf-8").read() for k, p in before.items()} == texts
    report = verify.run(repo, use_model=False, today="2026-11-29")
    claims = {r.id: [(c["verdict"], c["detail"]) for c in r.claims] for r in report.results}
    assert claims["never-stamped"] == [("unknown", probes.NOT_MADE)]
    assert {r.id: (r.status, r.changed) for r in report.results} == {
        "was-verified": ("verified", False), "never-stamped": (None, False), "was-unverified": ("unverified", False)}
    assert report.commit is None


def test_a_budget_of_zero_makes_no_request(repo: str, lookups: tuple[list[str], threading.Event]) -> None:
    write_memory(repo, "docs", body="Docs at https://docs.example.org/start.\n")
    write_file(repo, "index/local.json", json.dumps({"url_probe_budget": 0}))
    assert commit_all(repo, "a memory naming a URL").returncode == 0
    report = verify.run(repo, use_model=False, today="2026-11-29")
    assert lookups[0] == []
    assert (report.url_probes["not_made"], report.commit) == (1, None)


@pytest.mark.parametrize("value", [-1, "30", True, 99999])
def test_a_budget_that_is_no_number_of_seconds_is_refused_with_the_fix(repo: str, value: Any) -> None:
    write_file(repo, "index/local.json", json.dumps({"url_probe_budget": value}))
    with pytest.raises(Exception) as exc:
        verify.run(repo, use_model=False)
    assert "url_probe_budget" in str(exc.value) and "from 0 to 3600" in str(exc.value)
