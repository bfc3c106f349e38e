"""The verifier's fixed registry of typed probes: checking a claim against it, then running it.

A claim is a call of one registered probe with arguments that passed its schema. Nothing
here ever builds a shell command or takes a command from a memory or a model: processes are
argument lists fixed in this module (git, gh) or written by the user in settings
(`providers`), started by `_spawn` with a timeout and a bounded read. Every side effect a
probe has goes through `_spawn`, `_fetch` (`fetch.head`), `_which` or `_exists`, and `check` (with the
argument types of `argtypes`) runs before any of them.
"""

from __future__ import annotations

import enum
import os
import re
import shutil
from typing import Any, Callable, NamedTuple

from memrepo import proc
from memrepo.passes.verify import fetch
from memrepo.passes.verify.argtypes import (
    ClaimRejected, NotHere, branch_name, command_name, gh_repo, http_url, instance_id, pr_number, project_name, provider_name,
    rel_path, repo_path, secret_name,
)
from memrepo.passes.verify.urls import NotMade
from memrepo.store import config
from memrepo.vcs import status

TIMEOUT = 10.0
URL_TIMEOUT = 5.0
MAX_OUTPUT = 64 * 1024


class Verdict(enum.Enum):
    TRUE = "true"
    FALSE = "false"
    UNKNOWN = "unknown"


class Liveness(enum.Enum):
    """What `url_alive` can say. A URL that does not answer from this machine proves nothing,
    so this type has no member that means dead (DESIGN rule 5)."""

    ALIVE = Verdict.TRUE
    UNKNOWN = Verdict.UNKNOWN


class Presence(enum.Enum):
    """What `command_exists` can say. "Needs `gh`" is a claim about the project, not about this
    laptop: a command missing from this machine's PATH proves nothing, so no member means absent."""

    PRESENT = Verdict.TRUE
    UNKNOWN = Verdict.UNKNOWN


class Outcome(NamedTuple):
    verdict: Verdict
    detail: str


class Context(NamedTuple):
    """What a probe may resolve against: the user's settings and the memory's own project."""

    projects: dict[str, str]
    providers: dict[str, Any]
    project: str | None = None
    allow_hosts: tuple[str, ...] = ()  # internal hosts `url_alive` may fetch (`fetch.ALLOW_KEY`, local only)
    urls: Any = None  # the run's `urls.UrlProbes`: concurrent, cached per host, within a budget


class Call(NamedTuple):
    """A validated claim: a registered probe and arguments that passed its schema."""

    probe: str
    args: dict[str, Any]


# -- the registry ----------------------------------------------------------------------

Checker = Callable[[Any], Any]


class Probe(NamedTuple):
    name: str
    required: dict[str, Checker]
    optional: dict[str, Checker]
    doc: str


REGISTRY: dict[str, Probe] = {p.name: p for p in (
    Probe("path_exists", {"path": rel_path}, {"project": project_name},
          "a file or directory exists, relative to the project's root"),
    Probe("git_branch_exists", {"branch": branch_name}, {"project": project_name, "repo": repo_path},
          "a branch exists (local or remote-tracking) in the project's git repository, or in `repo` inside it"),
    Probe("pr_merged", {"repo": gh_repo, "number": pr_number}, {},
          "a GitHub pull request owner/name#number is merged"),
    Probe("url_alive", {"url": http_url}, {}, "an http(s) URL answers"),
    Probe("command_exists", {"name": command_name}, {},
          "a command the memory says is needed or used is on PATH (missing here proves nothing: unknown)"),
    Probe("secret_present", {"provider": provider_name, "name": secret_name}, {},
          "a secret exists in a provider configured in settings"),
    Probe("instance_exists", {"provider": provider_name, "id": instance_id}, {},
          "an instance exists in a provider configured in settings"),
)}
PROVIDER_PROBES = {"secret_present": "name", "instance_exists": "id"}


def check(probe: Any, args: Any, providers: dict[str, Any] | None = None) -> Call:
    """Validate a claim against the registry and settings; ClaimRejected says why it may not run."""
    if not isinstance(probe, str) or probe not in REGISTRY:
        raise ClaimRejected(f"unknown probe {str(probe)[:40]!r}")
    spec = REGISTRY[probe]
    if not isinstance(args, dict):
        raise ClaimRejected(f"{probe}: arguments must be a mapping")
    extra = sorted(str(k)[:40] for k in args if k not in spec.required and k not in spec.optional)
    if extra:
        raise ClaimRejected(f"{probe}: unexpected argument {extra[0]!r}")
    missing = [k for k in spec.required if k not in args]
    if missing:
        raise ClaimRejected(f"{probe}: missing argument {missing[0]!r}")
    clean = {k: (spec.required.get(k) or spec.optional[k])(v) for k, v in args.items()}
    if probe in PROVIDER_PROBES:
        template(providers or {}, clean["provider"], probe)
    return Call(probe, clean)


def template(providers: dict[str, Any], provider: str, probe: str) -> list[str]:
    """The user's argument-list template for `probe` at `provider`, checked for shape."""
    entry = providers.get(provider) if isinstance(providers, dict) else None
    argv = entry.get(probe) if isinstance(entry, dict) else None
    if argv is None:
        raise NotHere(f"{probe}: provider {provider!r} is not configured for it (settings `providers`)")
    placeholder = "{" + PROVIDER_PROBES[probe] + "}"
    if not (isinstance(argv, list) and argv and all(isinstance(a, str) and a for a in argv)):
        raise ClaimRejected(f"{probe}: providers.{provider}.{probe} must be a non-empty list of strings")
    if placeholder in argv[0] or not any(placeholder in a for a in argv[1:]):
        raise ClaimRejected(f"{probe}: providers.{provider}.{probe} must name a fixed program and use {placeholder} in an argument")
    return argv


def describe(call: Call, project: str | None = None) -> str:
    """`probe: args (project)`, as the stamp's `failed:` lists it and recall shows it."""
    a = call.args
    if call.probe == "pr_merged":
        text = f"{a['repo']}#{a['number']}"
    elif call.probe in PROVIDER_PROBES:
        text = f"{a['provider']} {a[PROVIDER_PROBES[call.probe]]}"
    else:
        text = str(a.get("path") or a.get("branch") or a.get("url") or a.get("name"))
        if a.get("repo"):
            text += f" in {a['repo']}"
    where = a.get("project") or project
    scoped = call.probe in ("path_exists", "git_branch_exists") and where
    return f"{call.probe}: {text}" + (f" ({where})" if scoped else "")


# -- effects: every process, request and file-system look-up goes through these ---------

def _spawn(argv: list[str], timeout: float = TIMEOUT, env: dict[str, str] | None = None,
           cwd: str | None = None) -> tuple[int | None, bytes]:
    """Run an argument list (never a shell); (exit code, or None when it did not start, ran out of
    time or printed more than MAX_OUTPUT; the first MAX_OUTPUT bytes of stdout)."""
    try:
        res = proc.run(argv, env=env, cwd=cwd, timeout=timeout, max_output=MAX_OUTPUT)
    except OSError:
        return None, b""
    return (None if res.timed_out or res.truncated else res.returncode), res.stdout


def _fetch(url: str, timeout: float = URL_TIMEOUT, allow: tuple[str, ...] = (),
           resolver: Callable[..., fetch.Address] | None = None) -> int | None:
    """The HTTP status a URL answers a HEAD with, or None when nothing answered; fetch.Refused
    when it resolves inside a network (loopback, private, link-local: see `fetch`)."""
    return fetch.head(url, timeout, allow, resolver).status


def _which(name: str) -> str | None:
    return shutil.which(name)


def _exists(path: str) -> bool:
    return os.path.lexists(path)


# -- the probes ------------------------------------------------------------------------

def _root(ctx: Context, project: str | None) -> tuple[str | None, str]:
    name = project or ctx.project
    if not name:
        return None, "no project to resolve the path against"
    root = config.root_of(ctx.projects, name) if isinstance(ctx.projects, dict) else None
    if not isinstance(root, str) or not root:
        return None, f"project {name!r} has no root on this machine (settings `projects`)"
    return os.path.realpath(os.path.expanduser(root)), ""


def _inside(root: str, rel: str) -> str | None:
    target = os.path.realpath(os.path.join(root, rel))
    return target if target == root or target.startswith(root + os.sep) else None


def _path_exists(ctx: Context, path: str, project: str | None = None) -> Outcome:
    root, why = _root(ctx, project)
    if root is None or not _exists(root):
        return Outcome(Verdict.UNKNOWN, why or f"project root {root} is missing")
    target = _inside(root, path)
    if target is None:
        return Outcome(Verdict.UNKNOWN, "the path leads outside the project through a link")
    return Outcome(Verdict.TRUE, "exists") if _exists(target) else Outcome(Verdict.FALSE, "missing")


def _git_branch_exists(ctx: Context, branch: str, project: str | None = None, repo: str | None = None) -> Outcome:
    root, why = _root(ctx, project)
    if root is None:
        return Outcome(Verdict.UNKNOWN, why)
    where = _inside(root, repo or ".")
    if where is None or not _exists(os.path.join(where, ".git")):
        return Outcome(Verdict.UNKNOWN, "no git repository there")
    found = status.branch_exists(where, branch, timeout=TIMEOUT)
    if found is None:
        return Outcome(Verdict.UNKNOWN, "git could not list branches")
    return Outcome(Verdict.TRUE, "exists") if found else Outcome(Verdict.FALSE, "no such branch")


def _pr_merged(ctx: Context, repo: str, number: int) -> Outcome:
    if _which("gh") is None:
        return Outcome(Verdict.UNKNOWN, "gh is not installed")
    rc, _ = _spawn(["gh", "auth", "status"])
    if rc != 0:
        return Outcome(Verdict.UNKNOWN, "gh is not authenticated")
    rc, out = _spawn(["gh", "pr", "view", str(number), "--repo", repo, "--json", "state"])
    state = re.search(rb'"state"\s*:\s*"([A-Z]+)"', out) if rc == 0 else None
    if state is None:
        return Outcome(Verdict.UNKNOWN, "gh could not read the pull request")
    merged = state.group(1) == b"MERGED"
    return Outcome(Verdict.TRUE if merged else Verdict.FALSE, state.group(1).decode().lower())


NOT_MADE = "not checked: the run's time budget for URL probes ran out (`url_probe_budget`)"


def _url_liveness(url: str, allow: tuple[str, ...] = (), probes: Any = None) -> Liveness:
    status = probes.status(url) if probes is not None else _fetch(url, allow=allow)
    # 401/403: something is there behind a login. 404, 5xx or silence prove nothing from here.
    return Liveness.ALIVE if status is not None and (status < 400 or status in (401, 403)) else Liveness.UNKNOWN


def _url_alive(ctx: Context, url: str) -> Outcome:
    try:
        state = _url_liveness(url, ctx.allow_hosts, ctx.urls)
    except fetch.Refused as exc:
        return Outcome(Verdict.UNKNOWN, f"not fetched: {exc}")
    except NotMade:
        return Outcome(Verdict.UNKNOWN, NOT_MADE)
    return Outcome(state.value, "answers" if state is Liveness.ALIVE else "no answer from here")


def _command_presence(name: str) -> Presence:
    return Presence.PRESENT if _which(name) else Presence.UNKNOWN


def _command_exists(ctx: Context, name: str) -> Outcome:
    state = _command_presence(name)
    detail = "on PATH" if state is Presence.PRESENT else "not on this machine's PATH (proves nothing)"
    return Outcome(state.value, detail)


def _provider(ctx: Context, probe: str, provider: str, value: str) -> Outcome:
    argv = [a.replace("{" + PROVIDER_PROBES[probe] + "}", value) for a in template(ctx.providers, provider, probe)]
    entry = ctx.providers[provider]
    timeout = entry.get("timeout", TIMEOUT)
    timeout = float(timeout) if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) else TIMEOUT
    absent = entry.get("absent_exit", [1])
    rc, _ = _spawn(argv, timeout=min(timeout, 60.0))  # output may hold the secret itself: read, bounded, dropped
    if rc == 0:
        return Outcome(Verdict.TRUE, "present")
    if rc is not None and isinstance(absent, list) and rc in absent:
        return Outcome(Verdict.FALSE, f"absent (exit {rc})")
    return Outcome(Verdict.UNKNOWN, "the provider command did not answer" if rc is None else f"exit {rc}")


def run(call: Call, ctx: Context) -> Outcome:
    """Run a claim; it is checked again here, so no hand-made `Call` skips validation."""
    call = check(call.probe, call.args, ctx.providers)
    a = call.args
    if call.probe == "path_exists":
        return _path_exists(ctx, a["path"], a.get("project"))
    if call.probe == "git_branch_exists":
        return _git_branch_exists(ctx, a["branch"], a.get("project"), a.get("repo"))
    if call.probe == "pr_merged":
        return _pr_merged(ctx, a["repo"], a["number"])
    if call.probe == "url_alive":
        return _url_alive(ctx, a["url"])
    if call.probe == "command_exists":
        return _command_exists(ctx, a["name"])
    return _provider(ctx, call.probe, a["provider"], a[PROVIDER_PROBES[call.probe]])
