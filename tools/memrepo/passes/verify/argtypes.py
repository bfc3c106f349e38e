"""The argument types of the verifier's probes: each checks one value a model filled in.

A value passes only in the narrow form its probe needs: plain ASCII, no character a shell, an
option parser or a terminal gives meaning to, bounded lengths, no `..`, no leading `-`; URLs
are http(s) with a plain host and no credentials. ClaimRejected says which rule failed.
"""

from __future__ import annotations

import posixpath
import re
import urllib.parse
from typing import Any

from memrepo.errors import MemrepoError
from memrepo.format import redact

MAX_NUMBER = 10_000_000


class ClaimRejected(MemrepoError):
    """A claim's probe or arguments failed validation; nothing was run."""


class NotHere(ClaimRejected):
    """A well-formed claim this machine cannot check (a path outside every project root it knows,
    a provider it has not configured): another machine may, so its verdict there stands."""


# Characters a shell, an option parser or a terminal would give meaning to; none is needed
# by any argument a probe takes (URLs have their own, narrower check).
_META = set(";|&$`<>(){}[]*?!'\"\\#~^%,= \t\r\n") | {chr(c) for c in range(32)} | {"\x7f"}


def _plain(value: Any, what: str, limit: int, pattern: str) -> str:
    if not isinstance(value, str):
        raise ClaimRejected(f"{what} must be text, not {type(value).__name__}")
    if not value:
        raise ClaimRejected(f"{what} is empty")
    if len(value) > limit:
        raise ClaimRejected(f"{what} is {len(value)} characters, over {limit}")
    odd = next((ch for ch in value if ord(ch) > 126), None)
    if odd is not None:
        # Look-alikes (Cyrillic а for Latin a, fullwidth ／) would pass a visual review.
        raise ClaimRejected(f"{what} has a non-ASCII character U+{ord(odd):04X}")
    if value.startswith("-"):
        raise ClaimRejected(f"{what} starts with '-' (it would be read as an option)")
    bad = next((ch for ch in value if ch in _META), None)
    if bad is not None:
        raise ClaimRejected(f"{what} has a forbidden character {bad!r}")
    if not re.fullmatch(pattern, value):
        raise ClaimRejected(f"{what} {value!r} is not of the allowed form")
    return value


def rel_path(value: Any, what: str = "path") -> str:
    """A relative path inside a project: no absolute paths, no `..`, normalized."""
    text = _plain(value, what, 300, r"[A-Za-z0-9._/@+-]+")
    if text.startswith("/"):
        raise ClaimRejected(f"{what} {text!r} is absolute; claims name paths inside a project")
    if ".." in text.split("/"):
        raise ClaimRejected(f"{what} {text!r} climbs out with '..'")
    norm = posixpath.normpath(text)
    return "." if norm in ("", ".") else norm


def abs_path(value: Any, what: str = "path") -> str:
    """An absolute path as a memory or a transcript writes it, before it is mapped to a project (`scope`)."""
    text = _plain(value, what, 1000, r"/[A-Za-z0-9._/@+-]*")
    return text


def repo_path(value: Any) -> str:
    return rel_path(value, "repo")


def project_name(value: Any) -> str:
    """A project: a bare name, or a key `host/owner/name` (memrepo.base.projects)."""
    text = _plain(value, "project", 200, r"[A-Za-z0-9][A-Za-z0-9._-]*(?:/[A-Za-z0-9._-]+)*")
    if any(part in (".", "..") for part in text.split("/")):
        raise ClaimRejected(f"project {text!r} has a '.' or '..' segment")
    return text


def branch_name(value: Any) -> str:
    text = _plain(value, "branch", 200, r"[A-Za-z0-9._/-]+")
    parts = text.split("/")
    if ".." in text or "//" in text or text.endswith((".lock", ".", "/")) or text.startswith("/") \
            or any(p.startswith(".") for p in parts) or text == "HEAD":
        raise ClaimRejected(f"branch {text!r} is not a valid git branch name")
    return text


def gh_repo(value: Any) -> str:
    text = _plain(value, "repo", 140, r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")
    if text.split("/")[1] in (".", ".."):
        raise ClaimRejected(f"repo {text!r} is not owner/name")
    return text


def pr_number(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ClaimRejected(f"number must be an integer, not {type(value).__name__}")
    if not 1 <= value <= MAX_NUMBER:
        raise ClaimRejected(f"number {value} is out of range")
    return value


def command_name(value: Any) -> str:
    return _plain(value, "name", 64, r"[A-Za-z0-9._+-]+")


def secret_name(value: Any) -> str:
    text = _plain(value, "name", 200, r"[A-Za-z0-9._/-]+")
    if ".." in text:
        raise ClaimRejected(f"name {text!r} has '..'")
    return text


def instance_id(value: Any) -> str:
    text = _plain(value, "id", 200, r"[A-Za-z0-9._:/-]+")
    if ".." in text:
        raise ClaimRejected(f"id {text!r} has '..'")
    return text


def provider_name(value: Any) -> str:
    return _plain(value, "provider", 40, r"[a-z0-9][a-z0-9_-]*")


_URL_BAD = set(" \t\r\n`$|;<>\\\"'{}^") | {chr(c) for c in range(32)} | {"\x7f"}
_URL_SECRET_PARAM = re.compile(r"(?i)(?:^|[?&;])(?:[a-z_-]*token|secret|password|passwd|pwd|api[_-]?key|access[_-]?key"
                               r"|key|sig|signature|auth|credentials?|x-amz-[a-z-]+)=")


def http_url(value: Any) -> str:
    """An http(s) URL with a plain host, no credentials and nothing a shell or terminal reads."""
    if not isinstance(value, str) or not value:
        raise ClaimRejected("url must be non-empty text")
    if len(value) > 2048:
        raise ClaimRejected(f"url is {len(value)} characters, over 2048")
    odd = next((ch for ch in value if ord(ch) > 126), None)
    if odd is not None:
        raise ClaimRejected(f"url has a non-ASCII character U+{ord(odd):04X}")
    bad = next((ch for ch in value if ch in _URL_BAD), None)
    if bad is not None:
        raise ClaimRejected(f"url has a forbidden character {bad!r}")
    try:  # `http://[::1` or `http://[zz]/` in a memory's text is no URL, not a crash (issue 38)
        parts = urllib.parse.urlsplit(value)
        host = parts.hostname or ""
    except ValueError as exc:
        raise ClaimRejected(f"url cannot be read ({exc})") from None
    if parts.scheme.lower() not in ("http", "https"):
        raise ClaimRejected(f"url scheme {parts.scheme or '(none)'!r} is not http or https")
    if "@" in parts.netloc:
        raise ClaimRejected("url carries credentials (user@host)")
    if _URL_SECRET_PARAM.search("?" + parts.query) or redact.find_secrets(value):
        raise ClaimRejected("url carries a credential in its query")
    if not re.fullmatch(r"[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?|[0-9a-f:]+", host) or ("[" in parts.netloc) != (":" in host):
        raise ClaimRejected(f"url host {host!r} is not a plain host name")
    try:
        parts.port
    except ValueError:
        raise ClaimRejected("url port is not a number from 0 to 65535") from None
    return value
