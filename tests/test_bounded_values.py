"""Every number, URL and string a memory file holds is read within bounds (issue 38, parts 1 and 2).

A teammate's push (or `git commit --no-verify`) can bring any front matter and any body. One
memory with `x: <4,301 digits>` made every command that read the store exit 3 (Python's limit
on int-to-text conversion) and every post-commit index update fail; a body with
`http://[::1]:8080/f` stopped the daily sweep ("Invalid IPv6 URL"). Now the bad memory is named
and skipped, and the store goes on: index, doctor, list, stats, fmt, curate, verify and sweep.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from helpers import commit_all, memory_text, write_file
from memrepo.format import notes
from memrepo.passes.verify import argtypes, claims


def cli(repo: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memrepo", "--repo", repo, *args], capture_output=True, text=True,
                          timeout=600)


GOOD = ["no-production-deploys-on-friday-afternoon", "the-dev-server-listens-on-port-8080"]


def add_good_memories(repo: str) -> None:
    for title, description, body in (
        ("No production deploys on Friday afternoon", "After 16:00 on Fridays nothing ships.", "Ask the lead first."),
        ("The dev server listens on port 8080", "Run the dev server locally on port 8080",
         "It answers at http://[::1]:8080/f and http://localhost:8080/f."),
    ):
        added = cli(repo, "add", "--title", title, "--description", description, "--class", "fact", "--body", body)
        assert added.returncode == 0, added.stderr


MALFORMED_URLS = ["http://[::1", "http://[zz]/", "http://example.com:99999/", "http://[::1]:70000/x",
                  "http://example.com:-1/", "http://[1.2.3.4]/", "http://[v1.x]/"]


@pytest.mark.parametrize("url", ["http://[::1]:8080/f"] + MALFORMED_URLS)
def test_a_url_that_cannot_be_read_is_a_refused_claim_not_a_crash(url: str) -> None:
    note = notes.parse(memory_text("urls", body=f"The service answers at {url} today.\n"))
    found, _ = claims.from_text(note)
    assert [c.args for c in found if c.probe == "url_alive"] == [{"url": url}]
    if url == "http://[::1]:8080/f":
        assert argtypes.http_url(url) == url
        return
    with pytest.raises(argtypes.ClaimRejected, match="^url (cannot be read|host '.*' is not a plain host name|port is not)"):
        argtypes.http_url(url)


def test_bracketed_and_malformed_urls_leave_the_sweep_and_verify_running(repo: str) -> None:
    add_good_memories(repo)
    body = "Mirrors: " + ", ".join(MALFORMED_URLS) + ".\n"
    stored = [{"probe": "url_alive", "args": {"url": u}} for u in MALFORMED_URLS]
    note = notes.parse(memory_text("mirrors", title="Package mirrors", description="Where the mirrors answer", body=body))
    note.meta["claims"] = stored
    write_file(repo, "memory/mirrors.md", notes.serialize(note))
    assert commit_all(repo, "mirrors").returncode == 0
    swept = cli(repo, "sweep", "--no-model")
    assert swept.returncode == 0 and "Traceback" not in swept.stderr, swept.stderr
    verified = cli(repo, "verify", "--no-model", "--json")
    assert verified.returncode == 0, verified.stderr
    results = {r["id"]: r for r in json.loads(verified.stdout)["memories"]}
    assert results["the-dev-server-listens-on-port-8080"]["status"] in ("unchecked", None)
    refused = [r["claim"] for r in results["mirrors"]["refused"]]
    assert all(any(u in claim for claim in refused) for u in MALFORMED_URLS), refused
