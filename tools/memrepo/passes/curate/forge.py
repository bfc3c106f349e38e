"""The forge a review branch's pull requests live on, reached through the `gh` CLI's REST calls.

memrepo never holds a token: `gh` does (`gh auth login`, or `GH_TOKEN` / `GH_ENTERPRISE_TOKEN`),
and every call is `gh api` against GitHub's REST endpoints, so the same code works for
github.com and for GitHub Enterprise (`https://HOST/api/v3/`). The forge is taken from the
remote's URL (`git@HOST:OWNER/REPO.git`, `https://HOST/OWNER/REPO`, `ssh://git@HOST/OWNER/REPO`)
or, for a remote that is not a forge URL, from `"forge": "HOST/OWNER/REPO"` in this machine's
`index/local.json` (never the shared `memrepo.json`: a pulled setting must not choose where this
machine sends its requests).

Every failure is a `ForgeUnavailable` with the reason in words and the fix: no `gh`, not logged
in, the host unreachable, an answer that is not what GitHub sends. The caller then goes on
without the forge; nothing here changes the repository.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from memrepo import proc
from memrepo.errors import MemrepoError

TIMEOUT = 60.0
MAX_ANSWER = 8 * 1024 * 1024  # a page of pull requests is a few hundred kB; more is not GitHub
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")
_HOST = re.compile(r"^[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?$")


class ForgeUnavailable(MemrepoError):
    """The forge can't be used right now; `str()` says why and `hint` what to do."""


@dataclass(frozen=True)
class Forge:
    host: str  # github.com, or an Enterprise host (a port allowed)
    owner: str
    name: str

    @property
    def slug(self) -> str:
        return f"{self.host}/{self.owner}/{self.name}"

    def compare_url(self, base: str, head: str) -> str:
        """The page that opens a pull request of `head` into `base` by hand."""
        return f"https://{self.host}/{self.owner}/{self.name}/compare/{quote(base)}...{quote(head)}?expand=1"


def parse(text: str) -> Forge | None:
    """`HOST/OWNER/REPO` (a setting) as a Forge, or None when it is not one."""
    parts = text.strip().strip("/").split("/")
    if len(parts) != 3:
        return None
    host, owner, name = parts
    name = name[:-4] if name.endswith(".git") else name
    if not (_HOST.match(host) and _NAME.match(owner) and _NAME.match(name)) or {owner, name} & {".", ".."}:
        return None
    return Forge(host.lower(), owner, name)


def from_url(url: str) -> Forge | None:
    """The forge a git remote URL points at, or None (a path, a bundle, anything not HOST/OWNER/REPO).

    The URL is read as recall reads an origin (`projects.normalize_url`); an https URL keeps its
    port, which an Enterprise server may need."""
    from memrepo.base import projects

    found = projects.normalize_url(url)
    if not found:
        return None
    try:
        parts = urlsplit(url.strip())
        port = parts.port if parts.scheme in ("https", "http") else None
    except ValueError:  # a port that is not a number, an unclosed `[`: not a URL gh could use
        return None
    if port:
        found = found.replace("/", f":{port}/", 1)
    return parse(found)


def resolve(remote_url: str, setting: Any, override: str | None = None) -> tuple[Forge | None, str]:
    """The forge for this push and, when there is none, why (for the message that says what to do)."""
    for label, value in (("--forge", override), ('"forge" in index/local.json', setting)):
        if value:
            found = parse(value) if isinstance(value, str) else None
            if found is None:
                return None, f"{label} is {value!r}, not HOST/OWNER/REPO"
            return found, ""
    found = from_url(remote_url)
    if found is None:
        return None, (f"the remote's URL ({remote_url}) is not a forge's; name the forge with --forge HOST/OWNER/REPO "
                      'or "forge": "HOST/OWNER/REPO" in index/local.json')
    return found, ""


def _decode_pages(text: str) -> list[Any]:
    """`gh api --paginate` prints one JSON document per page, back to back."""
    decoder, pos = json.JSONDecoder(), 0
    found: list[Any] = []
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return found
        value, pos = decoder.raw_decode(text, pos)
        found.append(value)


class Gh:
    """`gh api` calls against one forge's REST API."""

    def __init__(self, forge: Forge, cwd: str, gh: str | None = None) -> None:
        self.forge = forge
        self.cwd = cwd
        found = gh or shutil.which("gh")
        if not found:
            raise ForgeUnavailable("the GitHub CLI `gh` is not installed",
                                   hint="install it (Debian/Ubuntu: `apt install gh`; see https://cli.github.com), then `gh auth login`")
        self.gh = found
        self.repo_path = f"repos/{quote(forge.owner)}/{quote(forge.name)}"

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(GH_HOST=self.forge.host, GH_PROMPT_DISABLED="1", GH_NO_UPDATE_NOTIFIER="1", NO_COLOR="1",
                   GH_PAGER="cat", CLICOLOR="0")
        env.pop("GH_REPO", None)  # every endpoint names its repository
        return env

    def call(self, method: str, endpoint: str, fields: dict[str, str] | None = None, paginate: bool = False) -> Any:
        """One REST call; the decoded answer (a list of pages' items when `paginate`)."""
        argv = [self.gh, "api", "--method", method, endpoint]
        if paginate:
            argv.append("--paginate")
        payload = None
        if fields:
            argv += ["--input", "-"]
            payload = json.dumps(fields).encode("utf-8")
        try:
            res = proc.run(argv, cwd=self.cwd, input=payload, env=self._env(), timeout=TIMEOUT, max_output=MAX_ANSWER)
        except OSError as exc:
            raise ForgeUnavailable(f"`gh` could not be started: {exc}", hint="check the `gh` installation (`gh --version`)") from exc
        if not res.ok:
            raise self._failure(res)
        try:
            pages = _decode_pages(res.text())
        except ValueError as exc:
            raise ForgeUnavailable(f"{self.forge.host} answered {method} {endpoint} with something that is not JSON",
                                   hint="check that the forge is GitHub or GitHub Enterprise") from exc
        if paginate:
            return [item for page in pages if isinstance(page, list) for item in page]
        return pages[0] if pages else None

    def _failure(self, res: proc.Result) -> ForgeUnavailable:
        said = " ".join((res.text("stderr") or res.text()).split())[:300]
        host = self.forge.host
        if res.timed_out:
            return ForgeUnavailable(f"{host} did not answer within {TIMEOUT:.0f} s", hint="check your network, then push again")
        if res.returncode == 4 or "gh auth login" in said or "HTTP 401" in said or "Bad credentials" in said:
            return ForgeUnavailable(f"`gh` is not logged in to {host}",
                                    hint=f"run `gh auth login --hostname {host}` (or set GH_TOKEN / GH_ENTERPRISE_TOKEN), then push again")
        if "error connecting" in said or "no such host" in said or "connection refused" in said.lower():
            return ForgeUnavailable(f"{host} can't be reached: {said}", hint="check your network, then push again")
        if "HTTP 404" in said:
            return ForgeUnavailable(f"{self.forge.slug} was not found, or this login may not see it: {said}",
                                    hint="check the forge name (--forge HOST/OWNER/REPO) and `gh auth status`")
        return ForgeUnavailable(f"gh api failed on {host}: {said or f'exit {res.returncode}'}",
                                hint="run the same with `gh api` by hand to see more, then push again")

    def open_pulls(self) -> list[dict[str, Any]]:
        found = self.call("GET", f"{self.repo_path}/pulls?state=open&per_page=100", paginate=True)
        return [p for p in found if isinstance(p, dict)]

    def pulls_of(self, head: str) -> list[dict[str, Any]]:
        """Pull requests of the branch `head` (this repository's), open or closed, newest first."""
        query = f"state=all&per_page=30&head={quote(self.forge.owner)}:{quote(head, safe='')}"
        found = self.call("GET", f"{self.repo_path}/pulls?{query}")
        return [p for p in found if isinstance(p, dict)] if isinstance(found, list) else []

    def create(self, head: str, base: str, title: str, body: str) -> dict[str, Any]:
        return self._pull(self.call("POST", f"{self.repo_path}/pulls", {"head": head, "base": base, "title": title, "body": body}))

    def update(self, number: int, **fields: str) -> dict[str, Any]:
        return self._pull(self.call("PATCH", f"{self.repo_path}/pulls/{int(number)}", fields))

    def comment(self, number: int, body: str) -> None:
        self.call("POST", f"{self.repo_path}/issues/{int(number)}/comments", {"body": body})

    def _pull(self, answer: Any) -> dict[str, Any]:
        if not isinstance(answer, dict) or not isinstance(answer.get("number"), int):
            raise ForgeUnavailable(f"{self.forge.host} answered without a pull request number",
                                   hint="check that the forge is GitHub or GitHub Enterprise")
        return answer


def head_ref(pull: dict[str, Any]) -> str:
    head = pull.get("head")
    ref = head.get("ref") if isinstance(head, dict) else None
    return ref if isinstance(ref, str) else ""


def merged(pull: dict[str, Any]) -> bool:
    return bool(pull.get("merged_at") or pull.get("merged"))
