"""A small fake of GitHub's REST API for pull requests, over HTTPS on 127.0.0.1, for the real `gh`.

`gh` treats any host but github.com as GitHub Enterprise and calls `https://HOST/api/v3/...`,
so pointing it here takes `GH_HOST=127.0.0.1:<port>`, a token in `GH_ENTERPRISE_TOKEN`, and
`SSL_CERT_FILE` naming the self-signed certificate this module makes (`make_cert`, with the
`openssl` CLI). What it serves is what `memrepo review push` calls, as GitHub answers it:

* ``GET    /api/v3/repos/O/R/pulls?state=open|closed|all&head=O:BRANCH&per_page=N&page=K``
* ``POST   /api/v3/repos/O/R/pulls`` (422 when the head branch is missing from the git remote,
  or an open pull request of that head exists, as GitHub does)
* ``PATCH  /api/v3/repos/O/R/pulls/N`` (title, body, state)
* ``POST   /api/v3/repos/O/R/issues/N/comments``
* ``GET    /api/v3/`` (the API root)

Anything without ``Authorization: token <the token>`` gets 401. Every request is recorded
(the token removed). `merge` does what the forge's Merge button does: a merge commit of the
head into the base in the bare git remote (`git merge-tree`, `commit-tree`, `update-ref`),
then marks the pull request merged; `close` closes one unmerged. Standard library only.
"""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

TOKEN = "ghp_fakeTokenForLoopbackTests0000000000"


def make_cert(where: str) -> tuple[str, str]:
    """A self-signed certificate for 127.0.0.1 and localhost: (cert.pem, key.pem) in `where`."""
    cert, key = os.path.join(where, "cert.pem"), os.path.join(where, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, capture_output=True)
    return cert, key


@dataclass
class Request:
    method: str
    path: str
    body: Any
    status: int = 0

    @property
    def route(self) -> str:
        return urlsplit(self.path).path


@dataclass
class Pull:
    number: int
    head: str
    base: str
    title: str
    body: str
    state: str = "open"
    merged_at: str | None = None
    comments: list[str] = field(default_factory=list)

    def json(self, host: str, owner: str, repo: str) -> dict[str, Any]:
        return {"number": self.number, "state": self.state, "title": self.title, "body": self.body,
                "merged_at": self.merged_at, "html_url": f"https://{host}/{owner}/{repo}/pull/{self.number}",
                "head": {"ref": self.head, "label": f"{owner}:{self.head}"}, "base": {"ref": self.base}}


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"

    def log_message(self, *args: Any) -> None:
        pass

    def _answer(self, req: Request, status: int, data: Any) -> None:
        req.status = status
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():  # `gh api --input -` streams its body
            raw = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return raw
                raw += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _handle(self) -> None:
        raw = self._read_body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        req = Request(self.command, self.path, body)
        fake = self.server.fake
        with fake.lock:
            fake.requests.append(req)
            if self.headers.get("Authorization") != f"token {fake.token}":
                return self._answer(req, 401, {"message": "Bad credentials"})
            status, data = fake.route(req)
        self._answer(req, status, data)

    do_GET = do_POST = do_PATCH = _handle


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: "FakeGitHub"


class FakeGitHub:
    """The fake forge for one repository OWNER/REPO whose git remote is the bare repository `bare`."""

    def __init__(self, bare: str, cert_dir: str, owner: str = "acme", repo: str = "memory", token: str = TOKEN) -> None:
        self.bare, self.owner, self.repo, self.token = bare, owner, repo, token
        self.cert, self.key = make_cert(cert_dir)
        self.lock = threading.Lock()
        self.requests: list[Request] = []
        self.pulls: dict[int, Pull] = {}
        self._server: _Server | None = None

    @property
    def host(self) -> str:
        assert self._server is not None
        return f"127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> "FakeGitHub":
        server = _Server(("127.0.0.1", 0), _Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.cert, self.key)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
        server.fake = self
        self._server = server
        threading.Thread(target=server.serve_forever, name="fake-github", daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    def env(self) -> dict[str, str]:
        """What `gh` needs to talk to this fake (and nothing else)."""
        return {"GH_HOST": self.host, "GH_ENTERPRISE_TOKEN": self.token, "SSL_CERT_FILE": self.cert}

    # --- what the forge's buttons do -------------------------------------------------------
    def _git(self, *args: str, input: str | None = None) -> str:
        return subprocess.run(["git", "-C", self.bare, *args], check=True, capture_output=True, text=True, input=input).stdout.strip()

    def merge(self, number: int) -> str:
        """Merge pull request `number` in the git remote as the Merge button does; the merge commit."""
        with self.lock:
            pr = self.pulls[number]
            assert pr.state == "open", pr
            base, head = self._git("rev-parse", f"refs/heads/{pr.base}"), self._git("rev-parse", f"refs/heads/{pr.head}")
            tree = self._git("merge-tree", "--write-tree", base, head).splitlines()[0]
            env_msg = f"Merge pull request #{number} from {self.owner}/{pr.head}\n\n{pr.title}\n"
            sha = self._git("-c", "user.name=Forge", "-c", "user.email=forge@example.invalid",
                            "commit-tree", tree, "-p", base, "-p", head, "-F", "-", input=env_msg)
            self._git("update-ref", f"refs/heads/{pr.base}", sha, base)
            pr.state, pr.merged_at = "closed", "2026-12-02T10:00:00Z"
            return sha

    def close(self, number: int) -> None:
        with self.lock:
            self.pulls[number].state = "closed"

    def calls(self, method: str, suffix: str = "") -> list[Request]:
        with self.lock:
            return [r for r in self.requests if r.method == method and r.route.endswith(suffix)]

    # --- the REST routes ---------------------------------------------------------------------
    def route(self, req: Request) -> tuple[int, Any]:
        parts = [unquote(p) for p in req.route.strip("/").split("/")]
        if parts[:2] != ["api", "v3"]:
            return 404, {"message": "Not Found"}
        parts = parts[2:]
        if not parts:
            return 200, {"current_user_url": f"https://{self.host}/api/v3/user"}
        if parts[:3] != ["repos", self.owner, self.repo]:
            return 404, {"message": "Not Found"}
        rest = parts[3:]
        if rest == ["pulls"] and req.method == "GET":
            return 200, self._list(parse_qs(urlsplit(req.path).query))
        if rest == ["pulls"] and req.method == "POST":
            return self._create(req.body)
        if len(rest) == 2 and rest[0] == "pulls" and rest[1].isdigit() and req.method == "PATCH":
            pr = self.pulls.get(int(rest[1]))
            if pr is None:
                return 404, {"message": "Not Found"}
            for key in ("title", "body", "state"):
                if isinstance(req.body, dict) and key in req.body:
                    setattr(pr, key, req.body[key])
            return 200, pr.json(self.host, self.owner, self.repo)
        if len(rest) == 3 and rest[0] == "issues" and rest[2] == "comments" and req.method == "POST":
            pr = self.pulls.get(int(rest[1])) if rest[1].isdigit() else None
            if pr is None or not isinstance(req.body, dict):
                return 404, {"message": "Not Found"}
            pr.comments.append(str(req.body.get("body", "")))
            return 201, {"id": len(pr.comments), "body": pr.comments[-1]}
        return 404, {"message": "Not Found"}

    def _list(self, query: dict[str, list[str]]) -> list[dict[str, Any]]:
        state = query.get("state", ["open"])[0]
        head = query.get("head", [""])[0]
        per_page = min(100, int(query.get("per_page", ["30"])[0]))
        page = int(query.get("page", ["1"])[0])
        found = [p for p in sorted(self.pulls.values(), key=lambda p: -p.number)
                 if (state == "all" or p.state == state) and (not head or f"{self.owner}:{p.head}" == head)]
        return [p.json(self.host, self.owner, self.repo) for p in found[(page - 1) * per_page: page * per_page]]

    def _create(self, body: Any) -> tuple[int, Any]:
        if not isinstance(body, dict) or not all(isinstance(body.get(k), str) for k in ("head", "base", "title")):
            return 422, {"message": "Validation Failed"}
        head, base = body["head"], body["base"]
        for ref in (head, base):
            if subprocess.run(["git", "-C", self.bare, "rev-parse", "--verify", "-q", f"refs/heads/{ref}"],
                              capture_output=True).returncode != 0:
                return 422, {"message": "Validation Failed", "errors": [{"field": "head" if ref == head else "base", "code": "invalid"}]}
        if any(p.head == head and p.state == "open" for p in self.pulls.values()):
            return 422, {"message": "Validation Failed", "errors": [{"message": f"A pull request already exists for {self.owner}:{head}."}]}
        pr = Pull(len(self.pulls) + 1, head, base, body["title"], str(body.get("body") or ""))
        self.pulls[pr.number] = pr
        return 201, pr.json(self.host, self.owner, self.repo)
