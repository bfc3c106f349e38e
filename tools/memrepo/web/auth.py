"""Who may use `memrepo serve`: the owner, and no other local user (issue 38, part 5).

Any process on the machine can connect to 127.0.0.1, so the port proves nothing. What proves
the owner is a secret in a per-user file of mode 0600 (`secret_path`), which another uid cannot
read. From it come one-time login codes: `memrepo serve` prints a URL holding one to the
owner's terminal (as Jupyter does), and `memrepo serve --login-url` mints another for a server
already running. Opening the URL trades the code, once, for a session cookie (HttpOnly,
SameSite=Strict); every page and every action needs that cookie. A page never holds the secret
or a code; the forms' CSRF token is derived from the session, so a page fetched without the
cookie (which holds nothing) cannot leak it.

A code is `<issued ms>.<nonce>.<mac>`, the mac an HMAC of the first two under the secret. A
server accepts a code once, and only one issued since it started: a login URL left in a
browser's history opens nothing after a restart.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
import threading
import time

from memrepo.errors import MemrepoError

SECRET_FILE = "serve-secret"
SECRET_BYTES = 32
MAX_SESSIONS = 64  # logins kept per server; the oldest is forgotten first
MAX_USED = 4096  # codes remembered as used; older ones are refused by their issue time anyway


def secret_path() -> str:
    """The owner's secret: `$XDG_CONFIG_HOME/memrepo/serve-secret` (default `~/.config/...`)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "memrepo", SECRET_FILE)


def _check(path: str, st: os.stat_result) -> None:
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
        raise MemrepoError(f"{path} is not a file of yours: memrepo serve will not trust it",
                           hint=f"remove it (rm {path}); the next `memrepo serve` writes a new one")
    if st.st_mode & 0o077:
        raise MemrepoError(f"{path} can be read by other users (mode {stat.S_IMODE(st.st_mode):o}): "
                           "whoever read it can open your memory", hint=f"remove it (rm {path}); the next "
                           "`memrepo serve` writes a new one, mode 600")


def load_secret(create: bool = True) -> bytes:
    """The owner's secret, written (mode 0600, never over another file) when missing and `create`."""
    path = secret_path()
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        if not create:
            raise MemrepoError(f"no {path}: no memrepo serve has run as this user",
                               hint="start one with `memrepo serve`") from None
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError:  # another serve wrote it just now: read theirs
            return load_secret(create=False)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_hex(SECRET_BYTES).encode())
        return load_secret(create=False)
    except OSError as exc:
        raise MemrepoError(f"cannot read {path}: {exc.strerror}",
                           hint=f"remove it (rm {path}); the next `memrepo serve` writes a new one") from None
    with os.fdopen(fd, "rb") as fh:
        _check(path, os.fstat(fh.fileno()))
        raw = fh.read(4 * SECRET_BYTES + 1).strip()
    if len(raw) < SECRET_BYTES:
        raise MemrepoError(f"{path} holds no secret (empty or cut short)",
                           hint=f"remove it (rm {path}); the next `memrepo serve` writes a new one")
    return raw


def _mac(secret: bytes, message: str) -> str:
    return hmac.new(secret, message.encode(), hashlib.sha256).hexdigest()


def same(given: str, expected: str) -> bool:
    """`given` (from a request: any text) equals `expected`, compared in constant time."""
    return hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode("utf-8"))


def mint(secret: bytes) -> str:
    """A new one-time login code."""
    head = f"{time.time_ns() // 1_000_000}.{secrets.token_hex(12)}"
    return f"{head}.{_mac(secret, 'login:' + head)}"


class Gate:
    """One server's logins: the codes it took and the sessions they opened."""

    def __init__(self, secret: bytes) -> None:
        self.secret = secret
        self.started = time.time_ns() // 1_000_000
        self._used: dict[str, None] = {}
        self._sessions: dict[str, None] = {}
        self._lock = threading.Lock()

    def login(self, code: str) -> str | None:
        """A new session for a good code never used before; None for anything else."""
        issued, _, rest = code.partition(".")
        nonce, _, mac = rest.partition(".")
        if not (issued.isascii() and issued.isdigit() and len(issued) < 20 and nonce and mac):
            return None
        if int(issued) < self.started or not same(mac, _mac(self.secret, f"login:{issued}.{nonce}")):
            return None
        with self._lock:
            if code in self._used:
                return None
            self._used[code] = None
            while len(self._used) > MAX_USED:
                self._used.pop(next(iter(self._used)))
            session = secrets.token_urlsafe(32)
            self._sessions[session] = None
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.pop(next(iter(self._sessions)))
        return session

    def known(self, session: str) -> bool:
        with self._lock:
            return any(same(session, s) for s in self._sessions)

    def csrf(self, session: str) -> str:
        """The token this session's forms carry."""
        return _mac(self.secret, "csrf:" + session)
