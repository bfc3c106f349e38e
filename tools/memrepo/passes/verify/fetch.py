"""`url_alive`'s one request: HEAD to a public address, pinned to the address that was checked.

A URL in a memory came from a teammate's push or a model, so it may aim at this machine's
network: loopback services, the cloud metadata endpoint at 169.254.169.254, a router at
192.168.1.1, written as `2130706433`, `0x7f.1` or `127.1` to slip past a text check. So the
host is resolved first, every address it resolves to must be global (not private, loopback,
link-local, shared, reserved or multicast), and the connection goes to that checked address
(no second lookup for DNS rebinding to change). A host or network the user lists in this
machine's `index/local.json` (`url_allow_hosts`) is allowed. No proxy, no redirect followed,
HEAD first (GET only when the server refuses HEAD), and no body read.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import urllib.parse
from typing import Any, Callable, Iterable, NamedTuple

ALLOW_KEY = "url_allow_hosts"
NOT_HEAD = (405, 501)  # the server does not do HEAD: then, and only then, a GET (body unread)
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class Refused(Exception):
    """The URL leads somewhere `url_alive` does not go; the message says where and how to allow it."""


class Answer(NamedTuple):
    status: int | None  # None: nothing answered
    method: str


def internal(ip: Address) -> str:
    """Why an address is inside a network rather than on the internet, or "" when it is global."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return internal(ip.ipv4_mapped)
    for label, flag in (("a loopback", ip.is_loopback), ("a link-local", ip.is_link_local),
                        ("a private", ip.is_private), ("a multicast", ip.is_multicast),
                        ("an unspecified", ip.is_unspecified), ("a reserved", ip.is_reserved)):
        if flag:
            return f"{label} address"
    return "" if ip.is_global else "a non-public address"


def _allowed(host: str, ip: Address, allow: Iterable[str]) -> bool:
    for entry in allow:
        entry = entry.strip().lower()
        if entry and entry == host:
            return True
        try:
            if ip in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue
    return False


def resolve(host: str, port: int, allow: Iterable[str] = ()) -> Address:
    """The address to connect to: the first one `host` resolves to, when every one may be reached."""
    allow = list(allow)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise OSError(f"{host} does not resolve") from exc
    addresses = [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]
    for ip in addresses:
        why = internal(ip)
        if why and not _allowed(host, ip, allow):
            raise Refused(f"{host} resolves to {ip}, {why}; allow it with `{ALLOW_KEY}` in index/local.json")
    if not addresses:
        raise OSError(f"{host} does not resolve")
    return addresses[0]


class _Pinned(http.client.HTTPConnection):
    """An HTTP connection to an address checked in advance, with the URL's host in `Host:`."""

    def __init__(self, host: str, port: int, ip: Address, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self._ip = str(ip)

    def connect(self) -> None:
        self.sock = socket.create_connection((self._ip, self.port), self.timeout)


class _PinnedTLS(http.client.HTTPSConnection):
    """The same over TLS: the certificate is checked against the URL's host name."""

    def __init__(self, host: str, port: int, ip: Address, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._ip = str(ip)

    def connect(self) -> None:
        sock = socket.create_connection((self._ip, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]


def _ask(parts: urllib.parse.SplitResult, ip: Address, method: str, timeout: float) -> int:
    port = parts.port or (443 if parts.scheme == "https" else 80)
    kind: Any = _PinnedTLS if parts.scheme == "https" else _Pinned
    conn = kind(parts.hostname or "", port, ip, timeout)
    try:
        target = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
        conn.request(method, target, headers={"User-Agent": "memrepo-verify", "Accept": "*/*"})
        return int(conn.getresponse().status)  # the body is never read
    finally:
        conn.close()


def head(url: str, timeout: float, allow: Iterable[str] = (),
         resolver: Callable[[str, int, Iterable[str]], Address] | None = None) -> Answer:
    """The status `url` answers a HEAD with (a GET only if HEAD is refused); Refused for internal hosts.
    `resolver` stands in for `resolve` (a run's URL probes look each host up once: `urls`)."""
    try:  # argtypes.http_url has read `url` already; a caller that skipped it gets no answer, not a crash
        parts = urllib.parse.urlsplit(url)
        host = (parts.hostname or "").lower()
        port = parts.port or (443 if parts.scheme == "https" else 80)
        ip = (resolver or resolve)(host, port, allow)  # Refused passes through: it is an answer about the URL
        status = _ask(parts, ip, "HEAD", timeout)
        if status in NOT_HEAD:
            return Answer(_ask(parts, ip, "GET", timeout), "GET")
        return Answer(status, "HEAD")
    except (OSError, http.client.HTTPException, ValueError):
        return Answer(None, "HEAD")
