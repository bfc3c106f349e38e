"""The ten writers' timeline, for `bench_writes.py --timeline` (issue 44): where each add's wall time goes.

Each add runs as `python -c TRACED --repo R add ...`: the CLI exactly as `memrepo add` runs it,
with marks written around the group commit's steps by wrapping its functions from outside, so
memrepo itself carries no timing code. A mark is one line appended to the file the environment
variable MEMREPO_BENCH_TIMELINE names (read by TRACED only): the monotonic clock (one clock for
every process on Linux), the pid, the event. The bench adds each process's spawn and reaped
times, and samples the machine's CPU use (/proc/stat) meanwhile, so a lock hold that leaves a
core idle shows.

Events: python (the interpreter and `site` are up), cli (`memrepo.cli.main` imported: click),
submit (the change is made: the note, its validation, the secret scan, PyYAML), queued (its
entry is in `memrepo-group/`), answered (a waiter saw its holder's answer), locked (this process
holds the commit lock), claimed N (the holder took N waiting changes), pre / pre-end (the
validation), post / post-end (the cache update), answer NAME (the holder wrote a waiter's final
answer), unlocked, detached MODULE (a process started that no one waits for), exit (atexit).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

ENV = "MEMREPO_BENCH_TIMELINE"

TRACED = r'''
import os, sys, time
_out = os.environ["MEMREPO_BENCH_TIMELINE"]
def mark(what, extra=""):
    fd = os.open(_out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, f"{time.monotonic():.6f} {os.getpid()} {what} {extra}\n".encode())
    finally:
        os.close(fd)
mark("python")
from memrepo.cli.main import main
mark("cli")
import atexit, contextlib
from memrepo import proc
from memrepo.store import githooks
from memrepo.vcs import group, lock

def around(owner, name, before=None, after=None):
    f = getattr(owner, name)
    def wrapped(*a, **k):
        if before:
            mark(*before(*a, **k)) if callable(before) else mark(before)
        r = f(*a, **k)
        if after:
            mark(*after(r)) if callable(after) else mark(after)
        return r
    setattr(owner, name, wrapped)
    return wrapped

around(group, "submit", "submit")
around(group.Entry, "put", after=lambda e: ("queued",) if e is not None else ("unqueued",))
around(group.Entry, "answered", after=lambda r: ("answered",) if r else ("poll",))
around(group.Entry, "answer", before=lambda e, o, final=True: ("answer", f"{e.name} {int(final)}"))
around(group, "claim", after=lambda t: ("claimed", str(len(t))))
around(proc, "spawn_detached", before=lambda argv, **k: ("detached", " ".join(argv)[-60:].replace(" ", "_")))
_hooks = githooks.in_process
def traced_hooks():
    h = _hooks()
    pre_commit, post_commit = h.pre_commit, h.post_commit
    def pre(*a):
        mark("pre"); r = pre_commit(*a); mark("pre-end"); return r
    def post(*a):
        mark("post"); r = post_commit(*a); mark("post-end"); return r
    h.pre_commit, h.post_commit = pre, post  # the rest (the renderer of an add's fields) as it is
    return h
githooks.in_process = traced_hooks
_held = lock.held
@contextlib.contextmanager
def held(*a, **k):
    with _held(*a, **k) as h:
        mark("locked" if h else "not-locked")
        try:
            yield h
        finally:
            if h:
                mark("unlocked")
lock.held = held
atexit.register(mark, "exit")
sys.argv[0] = "memrepo"
raise SystemExit(main())
'''


class CpuSampler:
    """The machine's busy share over time, from /proc/stat every `every` seconds (10 ms ticks)."""

    def __init__(self, every: float = 0.02) -> None:
        self.every, self.samples, self._stop = every, [], threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _read(self) -> tuple[float, int, int]:
        with open("/proc/stat", encoding="ascii") as fh:
            fields = [int(x) for x in fh.readline().split()[1:]]
        idle = fields[3] + fields[4]
        return time.monotonic(), sum(fields) - idle, sum(fields)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append(self._read())
            time.sleep(self.every)

    def __enter__(self) -> CpuSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def busy(self, start: float, end: float) -> float | None:
        """The cores busy on average between `start` and `end` (None: too short to say)."""
        inside = [s for s in self.samples if start <= s[0] <= end]
        if len(inside) < 2 or inside[-1][2] == inside[0][2]:
            return None
        cores = os.cpu_count() or 1
        return cores * (inside[-1][1] - inside[0][1]) / (inside[-1][2] - inside[0][2])


def run(repo: str, python: str, env: dict[str, str], writers: int, adds: int, out: str) -> dict[str, Any]:
    """`writers` writers at once, each `adds` traced adds in a row: every add's marks and times."""
    env = {**env, ENV: out}
    spawned: list[tuple[int, float, float]] = []

    def writer(w: int) -> None:
        for i in range(adds):
            argv = [python, "-c", TRACED, "--repo", repo, "add", "--class", "fact", "--title",
                    f"Traced note {w} {time.time_ns()} {i}", "-d", f"Written by the write benchmark, traced {w} {i}.",
                    "--topic", "benchmark"]
            start = time.monotonic()
            p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            _, err = p.communicate()
            end = time.monotonic()
            if p.returncode != 0:
                raise RuntimeError(f"a traced add exited {p.returncode}: {err.decode(errors='replace')[-1000:]}")
            spawned.append((p.pid, start, end))

    with CpuSampler() as cpu, ThreadPoolExecutor(writers) as pool:
        list(pool.map(writer, range(writers)))
    marks: dict[int, list[tuple[float, str, str]]] = {}
    with open(out, encoding="utf-8") as fh:
        for line in fh:
            t, pid, what, extra = (line.rstrip("\n").split(" ", 3) + [""])[:4]
            marks.setdefault(int(pid), []).append((float(t), what, extra))
    return analyse(spawned, marks, cpu)


def _first(events: list[tuple[float, str, str]], what: str) -> float | None:
    return next((t for t, w, _ in events if w == what), None)


def _last(events: list[tuple[float, str, str]], what: str) -> float | None:
    return next((t for t, w, _ in reversed(events) if w == what), None)


def _gap(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else b - a


def analyse(spawned: list[tuple[int, float, float]], marks: dict[int, list[tuple[float, str, str]]],
            cpu: CpuSampler) -> dict[str, Any]:
    """Each add's segments (seconds), each lock hold's, and how long a waiter's answer lay unread."""
    adds, holds = [], []
    answered_at: dict[int, float] = {}
    for pid, ev in marks.items():
        t = _first(ev, "answered")
        if t is not None:
            answered_at[pid] = t
    written: dict[int, float] = {}
    for pid, start, end in spawned:
        ev = marks.get(pid, [])
        held = _first(ev, "locked")
        seg = {"start": _gap(start, _first(ev, "python")), "cli": _gap(_first(ev, "python"), _first(ev, "cli")),
               "change": _gap(_first(ev, "cli"), _first(ev, "submit")), "exit": _gap(_first(ev, "exit"), end)}
        if held is not None:
            seg["wait"] = _gap(_first(ev, "submit"), held)
            seg["hold"] = _gap(held, _last(ev, "unlocked"))
            seg["after"] = _gap(_last(ev, "unlocked"), _first(ev, "exit"))
            final = [(t, x.split()[0]) for t, w, x in ev if w == "answer" and x.endswith(" 1")]
            for t, name in final:
                written[int(name.rsplit("-", 1)[1])] = t
            hold = {"at": held - min(s for _, s, _ in spawned), "taken": int(next((x for _, w, x in ev if w == "claimed"), 0)),
                    "before": _gap(held, _first(ev, "pre")), "validate": _gap(_first(ev, "pre"), _first(ev, "pre-end")),
                    "commit": _gap(_first(ev, "pre-end"), _first(ev, "post")), "cache": _gap(_first(ev, "post"), _first(ev, "post-end")),
                    "answers": _gap(_first(ev, "post-end"), _last(ev, "unlocked")), "total": seg["hold"],
                    "detached": [x for _, w, x in ev if w == "detached"],
                    "cores_busy": cpu.busy(held, _last(ev, "unlocked") or held)}
            holds.append(hold)
        else:
            seg["wait"] = _gap(_first(ev, "submit"), _first(ev, "answered"))
            seg["after"] = _gap(_first(ev, "answered"), _first(ev, "exit"))
        adds.append({"pid": pid, "latency": end - start, "held": held is not None, "seg": seg})
    unread = [answered_at[pid] - t for pid, t in written.items() if pid in answered_at]
    return {"adds": adds, "holds": holds, "unread": unread,
            "span": (min(s for _, s, _ in spawned), max(e for _, _, e in spawned)),
            "cores_busy": cpu.busy(min(s for _, s, _ in spawned), max(e for _, _, e in spawned))}


SEGMENTS = ("start", "cli", "change", "wait", "hold", "after", "exit")


def _ms(x: float | None) -> str:
    return "   -" if x is None else f"{x * 1000:4.0f}"


def report(t: dict[str, Any]) -> list[str]:
    """Lines: the median add's segments, each kind's medians, every lock hold, the unread answers."""
    adds = sorted(t["adds"], key=lambda a: a["latency"])
    mid = adds[len(adds) // 2]
    lines = ["  timeline (ms; start: spawn -> interpreter up; cli: click imported; change: the note made and checked; "
             "wait: for the lock or a holder's answer; hold: the lock held; after: to atexit; exit: atexit -> reaped)"]

    def row(label: str, segs: dict[str, float | None], latency: float) -> str:
        return f"    {label:<22} " + " ".join(f"{k} {_ms(segs.get(k))}" for k in SEGMENTS) + f"  = {latency * 1000:.0f}"

    lines.append(row(f"median add ({'holder' if mid['held'] else 'waiter'})", mid["seg"], mid["latency"]))
    for held, label in ((False, "waiters, medians"), (True, "holders, medians")):
        group = [a for a in adds if a["held"] == held]
        if group:
            med = {k: statistics.median(v) if (v := [a["seg"][k] for a in group if a["seg"].get(k) is not None]) else None
                   for k in SEGMENTS}
            lines.append(row(f"{label} ({len(group)})", med, statistics.median(a["latency"] for a in group)))
    for h in t["holds"]:
        lines.append(f"    hold at {h['at'] * 1000:5.0f}: {h['taken'] + 1:2d} changes, before {_ms(h['before'])} validate "
                     f"{_ms(h['validate'])} commit {_ms(h['commit'])} cache {_ms(h['cache'])} answers+unlock "
                     f"{_ms(h['answers'])} = {_ms(h['total'])}; cores busy {h['cores_busy'] or 0:.2f}"
                     + (f"; detached: {', '.join(h['detached'])}" if h["detached"] else ""))
    if t["unread"]:
        lines.append(f"    a waiter's answer lay unread {_ms(statistics.median(t['unread']))} ms median, "
                     f"{_ms(max(t['unread']))} at most ({len(t['unread'])} answers)")
    lines.append(f"    all adds: {(t['span'][1] - t['span'][0]) * 1000:.0f} ms, cores busy {t['cores_busy'] or 0:.2f} on average")
    return lines
