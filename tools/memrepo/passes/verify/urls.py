"""A run's URL probes: made side by side, each host looked up once, all within one time budget.

The verifier asked one URL after another, and a host that does not resolve cost its lookup again
for every memory naming it: 93 % of a 10,000-memory sweep was `socket.getaddrinfo` (issue 44).
Here a few threads make the requests a run's claims need, each distinct URL once and each host
looked up once (`fetch.resolve`, with its checks, on the first URL that names it). What has not
answered when the run's budget is spent was *not made*: `status` raises `NotMade`, which the
verifier counts and never turns into a verdict. The threads are daemons: a resolver that hangs
holds one of them, never the run or the process.
"""

from __future__ import annotations

import queue
import threading
import time
import urllib.parse
from typing import Any, Callable

from memrepo.errors import MemrepoError
from memrepo.passes.verify import fetch

WORKERS = 16
BUDGET = 30.0  # seconds for all of a run's URL probes (`url_probe_budget`)
MAX_BUDGET = 3600.0

# (url, timeout, resolver) -> the status it answered, None when nothing answered; fetch.Refused
Ask = Callable[[str, float, Callable[..., fetch.Address]], "int | None"]


class NotMade(Exception):
    """The probe was not made before the run's budget for URL probes ran out."""


Host = tuple[str, int]


def host_of(url: str) -> Host | None:
    """(host, port) as `fetch.head` looks it up, or None for a URL it cannot read."""
    try:
        parts = urllib.parse.urlsplit(url)
        return (parts.hostname or "").lower(), parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None


class _Slot:
    """One answer, filled once by whichever thread makes the request or the lookup."""

    __slots__ = ("done", "value", "error")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None


class UrlProbes:
    """The URL probes of one run. `submit` queues URLs early (the verifier submits every claim's
    before it checks the first memory); `status` waits for one, at most until the deadline.

    The first URL of a host is asked alone; the host's other URLs wait for it, then go to the
    queue with its lookup cached, or all take its answer at once when the host did not resolve, is
    refused or answered nothing. No worker ever waits on another's lookup."""

    def __init__(self, ask: Ask, budget: float = BUDGET, timeout: float = 5.0, workers: int = WORKERS) -> None:
        self._ask = ask
        self.budget = budget
        self._timeout = timeout
        self._workers = workers
        self._lock = threading.Lock()
        self._urls: dict[str, _Slot] = {}
        self._hosts: dict[Host, _Slot] = {}
        self._asked: set[Host] = set()
        self._waiting: dict[Host, list[str]] = {}  # URLs queued behind their host's first URL
        self._queue: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._threads = 0
        self._started: float | None = None
        self._last = 0.0
        self.not_made: set[str] = set()

    def _left(self) -> float:
        return (self._started or time.monotonic()) + self.budget - time.monotonic()

    def submit(self, urls: list[str]) -> None:
        """Queue each URL not asked for yet; the clock starts with the first."""
        with self._lock:
            if self._started is None:
                self._started = time.monotonic()
            for url in dict.fromkeys(urls):
                if url in self._urls:
                    continue
                self._urls[url] = _Slot()
                host = host_of(url)
                if host is not None and host in self._waiting:
                    self._waiting[host].append(url)
                    continue
                if host is not None and host not in self._asked:
                    self._asked.add(host)
                    self._waiting[host] = []  # the host's first URL: the others wait for its lookup
                self._queue.put(url)
            while self._threads < min(self._workers, len(self._urls)):
                threading.Thread(target=self._work, name="memrepo-url-probe", daemon=True).start()
                self._threads += 1

    def status(self, url: str) -> int | None:
        """The status `url` answered (None: nothing answered); fetch.Refused for an internal host,
        NotMade when it was not answered within the budget."""
        self.submit([url])
        slot = self._urls[url]
        if not slot.done.wait(max(0.0, self._left())):
            self.not_made.add(url)
            raise NotMade(url)
        if isinstance(slot.error, fetch.Refused):
            raise fetch.Refused(str(slot.error))
        return int(slot.value) if slot.value is not None else None

    def _work(self) -> None:
        while True:
            url = self._queue.get()
            left = self._left()
            if left <= 0:
                continue  # left undone: its waiter times out and counts it as not made
            slot = self._urls[url]
            try:
                slot.value = self._ask(url, min(self._timeout, left), self.resolve)
            except fetch.Refused as exc:
                slot.error = exc
            except Exception:  # noqa: BLE001 — one odd URL is no answer, never a dead worker
                slot.value = None
            self._last = time.monotonic()
            slot.done.set()
            self._release(url)

    def _release(self, first: str) -> None:
        """After a host's first URL: when the host did not resolve, was refused or answered nothing,
        its other URLs take that answer at once; else they go to the queue."""
        host = host_of(first)
        with self._lock:
            waiting = self._waiting.pop(host, []) if host is not None else []
        asked = self._urls[first]
        for url in waiting:
            if asked.value is None:
                slot = self._urls[url]
                slot.error = asked.error
                slot.done.set()
            else:
                self._queue.put(url)

    def resolve(self, host: str, port: int, allow: Any = ()) -> fetch.Address:
        """`fetch.resolve`, once per host and port in this run."""
        with self._lock:
            slot = self._hosts.get((host, port))
        if slot is None:
            slot = _Slot()
            try:
                slot.value = fetch.resolve(host, port, allow)
            except (OSError, fetch.Refused) as exc:
                slot.error = exc
            with self._lock:
                slot = self._hosts.setdefault((host, port), slot)
        if slot.error is not None:
            raise (fetch.Refused if isinstance(slot.error, fetch.Refused) else OSError)(str(slot.error))
        return slot.value  # type: ignore[no-any-return]

    def figures(self) -> dict[str, Any]:
        """What the summary reports: the budget, the URLs and hosts asked, how many answered, how
        many were not made, and how long the probes ran."""
        answered = sum(1 for slot in self._urls.values() if slot.done.is_set() and slot.value is not None)
        spent = max(0.0, self._last - self._started) if self._started is not None else 0.0
        if self.not_made:
            spent = self.budget
        return {"budget_s": self.budget, "urls": len(self._urls), "hosts": len(self._asked), "answered": answered,
                "not_made": len(self.not_made), "spent_s": round(min(spent, self.budget), 2)}


def budget(settings: dict[str, Any]) -> float:
    """Seconds a run's URL probes may take: `url_probe_budget` (0: none is made), else BUDGET."""
    raw = settings.get("url_probe_budget", BUDGET)
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not 0 <= raw <= MAX_BUDGET:
        raise MemrepoError(f"url_probe_budget {raw!r} is not a number of seconds from 0 to {MAX_BUDGET:.0f}",
                           hint="fix `url_probe_budget` in index/local.json")
    return float(raw)
