"""Run the verifier over the fixture set in tests/data/verify and print what it found.

Builds the fictional world the fixture memories talk about in a temporary directory — the
`lantern` project (files, a git repository with some branches), a local HTTP server on
127.0.0.1 for the URLs, an `env` secret provider and a `fleet` instance provider — makes a
memory repository with the fixture memories, runs `verify.run` and prints claims extracted,
verified, unverified, unknown and refused, then each memory's stamp.

    .venv/bin/python tests/bench/report_verify.py [--model] [--json]

--model also runs the model extractor through tests/fake/fakemodel.py with
tests/data/verify/model-rules.json (no network).
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(ROOT, "tests", "data", "verify")
FAKE_MODEL = os.path.join(ROOT, "tests", "fake", "fakemodel.py")
sys.path.insert(0, os.path.join(ROOT, "tools"))

from memrepo.store import repoinit
from memrepo.passes.verify import verifier as verify  # noqa: E402


def _git(cwd: str, *args: str) -> None:
    subprocess.run(("git",) + args, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _project(base: str, world: dict[str, Any]) -> str:
    root = os.path.join(base, world["project"])
    for rel in world["files"]:
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        with open(os.path.join(root, rel), "w", encoding="utf-8") as fh:
            fh.write(f"# {rel}\n")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "-c", "commit.gpgsign=false", "commit", "-q", "--no-verify", "-m", "lantern")
    for branch in world["branches"]:
        _git(root, "branch", branch)
    for remote, branches in world["remote_branches"].items():
        for branch in branches:
            _git(root, "update-ref", f"refs/remotes/{remote}/{branch}", "HEAD")
    return root


def _server(paths: list[str]) -> http.server.ThreadingHTTPServer:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self.send_response(200 if self.path in paths else 404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class World:
    """The fixture world in `base`: project, HTTP server, memory repository. Close it when done."""

    def __init__(self, base: str, fixtures: str = FIXTURES) -> None:
        with open(os.path.join(fixtures, "world.json"), encoding="utf-8") as fh:
            self.spec = json.load(fh)
        self.project = _project(base, self.spec)
        self.server = _server(self.spec["http_paths"])
        self.env = dict(self.spec["env"])
        self.repo = os.path.join(base, "mem")
        repoinit.init(self.repo)
        port, closed = str(self.server.server_address[1]), str(closed_port())
        src = os.path.join(fixtures, "memory")
        for name in sorted(os.listdir(src)):
            with open(os.path.join(src, name), encoding="utf-8") as fh:
                text = fh.read().replace("127.0.0.1:CLOSEDPORT", "127.0.0.1:" + closed).replace("127.0.0.1:PORT", "127.0.0.1:" + port)
            with open(os.path.join(self.repo, "memory", name), "w", encoding="utf-8") as fh:
                fh.write(text)
        fleet = [sys.executable, os.path.join(fixtures, "fleet.py"), "{id}"]
        # The fixture's URLs stand for an intranet's: served on loopback, which the user allows here.
        local = {"projects": {self.spec["project"]: self.project}, "url_allow_hosts": ["127.0.0.1"],
                 "providers": {"env": {"secret_present": ["printenv", "{name}"]},
                               "fleet": {"instance_exists": fleet, "timeout": 10}}}
        with open(os.path.join(self.repo, "index", "local.json"), "w", encoding="utf-8") as fh:
            json.dump(local, fh, indent=2)
        _git(self.repo, "add", "memory")
        _git(self.repo, "commit", "-q", "-m", "fixture memories")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def model_env(fixtures: str = FIXTURES) -> dict[str, str]:
    return {"MEMREPO_MODEL_CMD": f"{sys.executable} {FAKE_MODEL}",
            "FAKE_MODEL_RULES": os.path.join(fixtures, "model-rules.json"), "FAKE_MODEL_DEFAULT": '{"claims": []}'}


def render(report: verify.VerifyReport) -> str:
    c = report.counts()
    lines = [f"memories checked {c['memories']} (of {len(report.results)}; {len(report.results) - c['memories']} skipped)",
             f"claims extracted {c['extracted']}: verified {c['verified']}, unverified {c['unverified']}, "
             f"unknown {c['unknown']}, refused {c['refused']}",
             f"stamps: verified {c['stamped_verified']}, unverified {c['stamped_unverified']}, "
             f"unchecked {c['stamped_unchecked']}, none {c['memories'] - c['stamped_verified'] - c['stamped_unverified'] - c['stamped_unchecked']}",
             f"commit {report.commit} run {report.run_id}", ""]
    for r in report.results:
        lines.append(f"{r.id:<28} {r.skipped and 'skipped' or (r.status or '-'):<11} "
                     + ", ".join(f"{x['claim']} = {x['verdict']}" for x in r.claims))
        lines.extend(f"{'':<28} refused: {f.claim} — {f.reason}" for f in r.refused)
    lines.extend(f"note: {n}" for n in report.model_notes)
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="store_true", help="also run the (fake) model extractor")
    parser.add_argument("--json", action="store_true", help="print the whole report as JSON")
    args = parser.parse_args()
    base = tempfile.mkdtemp(prefix="memrepo-verify-report-")
    world = World(base)
    try:
        os.environ.update(world.env)
        if args.model:
            os.environ.update(model_env())
        report = verify.run(world.repo, use_model=args.model)
        print(json.dumps(report.as_dict(), indent=2) if args.json else render(report))
    finally:
        world.close()
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
