"""Benchmark writes: `memrepo add` with 1 and with 10 concurrent writers, and `memrepo sync`.

add: a memory repository of N generated memories (default 1,000); each add is the whole CLI
process (`python -m memrepo add ...`: lock, validation, `git commit` through the repository's
hooks, the post-commit index update). One writer runs ADDS adds one after another; then 10
writers each run ADDS adds at once, and each add's latency (its wait for the lock included) is
recorded. Reported: median and p90 of per-add latency, adds per second, the CPU of the phase's
process trees per add, how many commits each lock hold made (the group commit, issue 44: a
holder commits every waiting writer's change as a chain), and the floor the CPU alone sets on
this machine: ten adds' CPU shared by its cores, over a lone add. `--compare` first runs the
ten writers with the group commit off (each add its own lock hold, as before it) and on,
interleaved ROUNDS times, so both are measured under the same load.

sync: a bare remote and two clones of a repository of 10,000 generated memories. Clone b makes
100 commits (each adds or edits one memory) and pushes them; clone a then runs `memrepo sync`,
timed, in two cases: a has no commit of its own (a fast-forward), and a has one (a merge commit
of the tree computed by `git merge-tree`, validated, then pushed). Each case is reset and run
ROUNDS times. Also `memrepo sync` with nothing to do.

    .venv/bin/python tests/bench/bench_writes.py [--memories 1000] [--adds 10] [--sync-memories 10000]
        [--remote-commits 100] [--rounds 5] [--reuse DIR] [--no-sync] [--compare] [--callgrind] [--timeline] [--out FILE]

Issue 44's goals are printed beside the figures: a lone add ≤ 0.3 s at 10,000 memories and ≤ 1 s
at 100,000; ten writers' median ≤ 3× a lone add. `--reuse DIR` keeps the generated repository
as DIR/<memories> for the next run (100,000 take minutes to make). Each add also reports the CPU
time of its whole process tree (user + system, the hooks and git included), a figure a loaded
machine inflates far less than wall time; what the adds start detached (a commit-graph layer)
is adopted by the bench (Linux), waited for after the ten writers and reported beside them, per
add. Run it from a folder that is no memory repository.

`--callgrind` also counts instructions (valgrind, children traced), which a loaded machine does
not change: a lone add's process tree (the CLI's own process, and git), then ten adds started at
once, each a process tree: which of them held the lock (its tree ran `git update-ref`) and which
only waited for a holder to commit its change, and the floor instructions set: ten adds' count
shared by this machine's cores, over a lone add's.

`--timeline` runs the ten writers once more, each add traced (tests/bench/writes_timeline.py,
wrappers set from outside memrepo): each add's segments (start, click, the change, the wait, the
lock hold, the exit), each lock hold's steps and the cores busy meanwhile, and how long a
waiter's answer lay written but unread.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
from benchlib import NO_HOOKS, fmt, summary  # noqa: E402

WRITERS = 10


def cli(repo: str, python: str, *args: str) -> list[str]:
    return [python, "-m", "memrepo", "--repo", repo, *args]


# `memrepo add` with the group commit off (a holder takes no waiter's change): the queue of lock
# holds as it was before, for --compare; a benchmark's switch, not a setting.
UNGROUPED = ("import sys; from memrepo.vcs import group; group.MAX_GROUP = 1; "
             "from memrepo.cli.main import main; sys.argv[0] = 'memrepo'; raise SystemExit(main())")


CPU: list[float] = []  # each add's CPU seconds, whole process tree


def one_add(repo: str, python: str, env: dict[str, str], tag: str, grouped: bool = True) -> float:
    import resource

    argv = cli(repo, python, "add", "--class", "fact", "--title", f"Bench note {tag}",
               "-d", f"Written by the write benchmark, {tag}.", "--topic", "benchmark")
    if not grouped:
        argv[1:3] = ["-c", UNGROUPED]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    elapsed, _ = benchlib.run(argv, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return elapsed


def p90(xs: list[float]) -> float:
    return sorted(xs)[max(0, int(round(0.9 * len(xs))) - 1)]


def _holds(repo: str) -> int:
    """HEAD's reflog entries: one per lock hold that moved HEAD (a group commit's chain is one)."""
    return len(subprocess.run(["git", "reflog", "--format=%H", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.split())


def adopt_orphans() -> bool:
    """Become the reaper of this process's orphaned descendants (Linux `PR_SET_CHILD_SUBREAPER`):
    what an add starts detached (a commit-graph layer) is then waited for here, and its CPU
    counted (`reap_orphans`). False where that is not possible."""
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def reap_orphans() -> int:
    """Wait for every child left (call when no add runs: only adopted orphans are); how many."""
    n = 0
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return n
        n += 1


def _cpu() -> float:
    import resource

    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def ten_writers(repo: str, python: str, env: dict[str, str], adds: int, grouped: bool) -> dict[str, Any]:
    """WRITERS writers at once, each `adds` adds in a row: each add's latency, the phase's wall
    time, the CPU of its process trees, the CPU of what they left running detached (waited for
    after the phase) and the lock holds that moved HEAD."""

    def writer(w: int) -> list[float]:
        return [one_add(repo, python, env, f"writer {w} add {time.time_ns()} {i}", grouped) for i in range(adds)]

    reap_orphans()  # what earlier adds left running is not this phase's
    holds, cpu = _holds(repo), _cpu()
    start = time.perf_counter()
    with ThreadPoolExecutor(WRITERS) as pool:
        lists = list(pool.map(writer, range(WRITERS)))
    wall = time.perf_counter() - start
    after = _cpu()
    detached = reap_orphans()
    return {"latencies": [x for xs in lists for x in xs], "wall": wall, "holds": _holds(repo) - holds,
            "cpu": after - cpu, "detached": detached, "detached_cpu": _cpu() - after}


def ten_summary(runs: list[dict[str, Any]], single: list[float]) -> dict[str, Any]:
    """Per-add latency (median, p90, beside a lone add's median), throughput, CPU per add (the
    phase's process trees over the adds), commits per lock hold, and the floor the CPU alone sets:
    WRITERS adds' CPU shared by this machine's cores, over a lone add's latency."""
    many = [x for run in runs for x in run["latencies"]]
    per_add = sum(run["cpu"] for run in runs) / len(many)
    lone = statistics.median(single)
    return {"latency_ms": summary(many), "p90_ms": round(p90(many) * 1000, 1),
            "adds_per_s": round(len(many) / sum(run["wall"] for run in runs), 2),
            "vs_one": round(statistics.median(many) / lone, 2), "cpu_s_per_add": round(per_add, 3),
            "commits_per_hold": round(len(many) / max(1, sum(run["holds"] for run in runs)), 2),
            "detached_per_add": round(sum(run["detached"] for run in runs) / len(many), 2),
            "detached_cpu_s_per_add": round(sum(run["detached_cpu"] for run in runs) / len(many), 3),
            "cpu_floor_vs_one": round(WRITERS * per_add / (os.cpu_count() or 1) / lone, 2)}


def _counted(where: str) -> dict[str, Any]:
    """The callgrind files of one process tree: its instructions, the CLI process's, whether it held the lock."""
    total = own = 0
    held = False
    for name in os.listdir(where):
        with open(os.path.join(where, name), encoding="utf-8", errors="replace") as fh:
            head = {k: v.strip() for k, _, v in (line.partition(":") for line in fh.read().splitlines()) if k in ("cmd", "summary", "totals")}
        count = int(head.get("summary") or head.get("totals") or 0)
        total += count
        own += count if " -m memrepo " in head.get("cmd", "") else 0
        held = held or " update-ref " in head.get("cmd", "")
    return {"ir": total, "cli_ir": own, "git_ir": total - own, "held": held}


def callgrind_adds(repo: str, python: str, env: dict[str, str], writers: int) -> list[dict[str, Any]]:
    """`writers` adds started at once, each under callgrind with its children: each one's counts."""
    valgrind = shutil.which("valgrind")
    if not valgrind:
        raise SystemExit("--callgrind needs valgrind")
    out = tempfile.mkdtemp(prefix="memrepo-bench-writes-cg-")
    try:
        procs = []
        for w in range(writers):
            os.makedirs(os.path.join(out, str(w)))
            argv = cli(repo, python, "add", "--class", "fact", "--title", f"Counted note {w} {time.time_ns()}",
                       "-d", f"Written by the write benchmark, counted {w}.", "--topic", "benchmark")
            procs.append(subprocess.Popen([valgrind, "--tool=callgrind", "--trace-children=yes",
                                           f"--callgrind-out-file={os.path.join(out, str(w))}/cg.%p", *argv],
                                          env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        for p in procs:
            _, err = p.communicate()
            if p.returncode != 0:
                raise RuntimeError(f"an add under callgrind exited {p.returncode}: {err.decode(errors='replace')[-1000:]}")
        return [_counted(os.path.join(out, str(w))) for w in range(writers)]
    finally:
        shutil.rmtree(out, ignore_errors=True)


def callgrind_summary(lone: list[dict[str, Any]], ten: list[dict[str, Any]]) -> dict[str, Any]:
    """Instructions of a lone add (the least of its runs) and of ten at once, and the floor they set."""
    one = min(lone, key=lambda c: c["ir"])
    per_add = sum(c["ir"] for c in ten) / len(ten)
    waiters = [c["ir"] for c in ten if not c["held"]]
    holders = [c["ir"] for c in ten if c["held"]]
    return {"lone": one, "ten_per_add_ir": round(per_add), "holds": len(holders),
            "waiter_ir_median": round(statistics.median(waiters)) if waiters else None,
            "holder_ir_median": round(statistics.median(holders)) if holders else None,
            "ir_floor_vs_one": round(len(ten) * per_add / (os.cpu_count() or 1) / one["ir"], 2)}


def bench_add(root: str, n: int, adds: int, python: str, reuse: str | None = None, compare: bool = False,
              rounds: int = 1, callgrind: bool = False, timeline: bool = False) -> dict[str, Any]:
    repo = os.path.join(reuse, str(n)) if reuse else os.path.join(root, "add-repo")
    info = {"n": n, "seed": 11} if os.path.isdir(os.path.join(repo, "memory")) else benchlib.make_repo(repo, n, seed=11, python=python)
    env = benchlib.bench_env(repo, python)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's interpreter keeps its bytecode: compiling every run is not what is measured
    result: dict[str, Any] = {"memories": n, "adds_per_writer": adds}
    one_add(repo, python, env, "warmup")
    start = time.perf_counter()
    CPU.clear()
    single = [one_add(repo, python, env, f"single {time.time_ns()} {i}") for i in range(adds)]
    result["one_writer"] = {"latency_ms": summary(single), "p90_ms": round(p90(single) * 1000, 1),
                            "adds_per_s": round(adds / (time.perf_counter() - start), 2),
                            "cpu_s_median": round(statistics.median(CPU), 3)}

    runs: dict[bool, list[dict[str, Any]]] = {False: [], True: []}
    for _ in range(rounds if compare else 1):  # interleaved: the machine's load changes under both alike
        for grouped in ((False, True) if compare else (True,)):
            runs[grouped].append(ten_writers(repo, python, env, adds, grouped))
    for grouped, key in ((True, "ten_writers"), (False, "ten_writers_ungrouped")):
        if runs[grouped]:
            result[key] = ten_summary(runs[grouped], single)
    if timeline:
        import writes_timeline

        result["timeline"] = writes_timeline.run(repo, python, env, WRITERS, adds, os.path.join(root, "timeline"))
    if callgrind:
        lone = [c for _ in range(2) for c in callgrind_adds(repo, python, env, 1)]
        result["callgrind"] = callgrind_summary(lone, callgrind_adds(repo, python, env, WRITERS))
    out = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout
    count = subprocess.run(["git", "log", "--format=%s"], cwd=repo, capture_output=True, text=True).stdout
    result["check"] = {"status_clean": out == "", "add_commits": sum(s.startswith("add: ") for s in count.splitlines()),
                       "expected": 1 + adds + WRITERS * adds * (2 * rounds if compare else 1)
                       + (2 + WRITERS if callgrind else 0) + (WRITERS * adds if timeline else 0)}
    if reuse:
        result["check"]["expected"] = "(a reused repository: all earlier runs' adds too)"
    result["repo"] = {k: info[k] for k in ("n", "seed")}
    return result


def _git(repo: str, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout.strip()


def _remote_commits(b: str, k: int) -> None:
    """k commits on b, each adding or editing one memory (hooks off: setup, not measured)."""
    from memrepo.format import notes

    names = sorted(f for f in os.listdir(os.path.join(b, "memory")) if f.endswith(".md"))
    for i in range(k):
        if i % 2:
            path = os.path.join(b, "memory", names[i * 37 % len(names)])
            note = notes.read(path)
            note.meta["topics"] = sorted(set(note.meta.get("topics") or []) | {f"synced-{i}"})
            text = notes.serialize(note)
        else:
            path = os.path.join(b, "memory", f"remote-note-{i}.md")
            text = notes.serialize(notes.new_note(id=f"remote-note-{i}", title=f"Remote note {i} about the sync bench",
                                                  description=f"Added on machine b, commit {i}.", class_="fact",
                                                  source="user", created="2026-11-30"))
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        _git(b, *NO_HOOKS, "add", "-A", "memory")
        _git(b, *NO_HOOKS, "commit", "-q", "--no-verify", "-m", f"remote change {i}")
    _git(b, *NO_HOOKS, "push", "-q", "origin", "HEAD:main")


def bench_sync(root: str, n: int, k: int, rounds: int, python: str) -> dict[str, Any]:
    from memrepo.store import index, repoinit

    a = os.path.join(root, "sync-a")
    benchlib.make_repo(a, n, seed=12, python=python)
    bare = os.path.join(root, "remote.git")
    _git(root, "init", "-q", "--bare", "-b", "main", bare)
    _git(a, "remote", "add", "origin", bare)
    _git(a, *NO_HOOKS, "push", "-q", "-u", "origin", "main")
    b = os.path.join(root, "sync-b")
    _git(root, "clone", "-q", bare, b)
    repoinit.init(b)
    env = benchlib.bench_env(a, python)
    start_a = _git(a, "rev-parse", "HEAD")
    _remote_commits(b, k)
    remote_tip = _git(bare, "rev-parse", "main")
    result: dict[str, Any] = {"memories": n, "remote_commits": k, "rounds": rounds}
    for case in ("fast-forward", "merge"):
        times = []
        for _ in range(rounds):
            # Back to the state before the sync: a at its old head, the remote at b's tip, the tracking ref old.
            _git(a, *NO_HOOKS, "reset", "-q", "--hard", start_a)
            _git(a, "update-ref", "refs/remotes/origin/main", start_a)
            _git(bare, "update-ref", "refs/heads/main", remote_tip)
            if case == "merge":
                path = os.path.join(a, "memory", "local-note.md")
                from memrepo.format import notes

                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(notes.serialize(notes.new_note(id="local-note", title="A note only machine a has",
                                                            description="Added on a before the sync.", class_="fact",
                                                            source="user", created="2026-11-30")))
                _git(a, *NO_HOOKS, "add", "memory/local-note.md")
                _git(a, *NO_HOOKS, "commit", "-q", "--no-verify", "-m", "local change")
            index.update(a)
            elapsed, proc = benchlib.run(cli(a, python, "sync", "--json"), env=env)
            times.append(elapsed)
        result[case] = {"seconds": summary(times, scale=1.0), "last_report": proc.stdout.decode().strip()}
    idle = [benchlib.run(cli(a, python, "sync"), env=env)[0] for _ in range(rounds)]
    result["nothing_to_do"] = {"seconds": summary(idle, scale=1.0)}
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--memories", type=int, default=1000)
    ap.add_argument("--adds", type=int, default=10, help="adds per writer")
    ap.add_argument("--sync-memories", type=int, default=10000)
    ap.add_argument("--remote-commits", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reuse", help="keep the add repository as DIR/<memories> and use it again on the next run")
    ap.add_argument("--no-sync", action="store_true", help="measure adds only")
    ap.add_argument("--compare", action="store_true",
                    help="run the ten writers with the group commit off (each add its own lock hold) and on, "
                         "interleaved, --rounds times each")
    ap.add_argument("--callgrind", action="store_true",
                    help="also count instructions (valgrind --tool=callgrind): a lone add, and ten at once")
    ap.add_argument("--timeline", action="store_true",
                    help="also run the ten writers traced once more: where each add's wall time goes, each lock hold's "
                         "steps, how long an answer lay unread (tests/bench/writes_timeline.py)")
    ap.add_argument("--out", help="write the figures as JSON here")
    args = ap.parse_args()
    python = sys.executable
    data: dict[str, Any] = {"machine": benchlib.machine()}
    data["machine"]["orphans_counted"] = adopt_orphans()
    root = tempfile.mkdtemp(prefix="memrepo-bench-writes-")
    try:
        data["add"] = add = bench_add(root, args.memories, args.adds, python, args.reuse, args.compare, args.rounds,
                                      args.callgrind, args.timeline)
        goal = {10000: "≤ 300 ms", 100000: "≤ 1,000 ms"}.get(args.memories, "≤ 300 ms at 10,000, ≤ 1,000 ms at 100,000")
        print(f"add, {args.memories:,} memories:")
        print(f"  1 writer   {fmt(add['one_writer']['latency_ms'])}  p90 {add['one_writer']['p90_ms']} ms, "
              f"{add['one_writer']['adds_per_s']} adds/s, CPU {add['one_writer']['cpu_s_median']:.3f} s  (goal {goal})")
        for key, label in (("ten_writers_ungrouped", "no group"), ("ten_writers", "10 writers")):
            if key in add:
                ten = add[key]
                print(f"  {label:<10} {fmt(ten['latency_ms'])}  p90 {ten['p90_ms']} ms, {ten['adds_per_s']} adds/s, "
                      f"median {ten['vs_one']}x one writer's (goal ≤ 3x); CPU {ten['cpu_s_per_add']:.3f} s per add, "
                      f"{ten['commits_per_hold']} commits per lock hold, CPU floor on {os.cpu_count()} cores {ten['cpu_floor_vs_one']}x; "
                      f"detached: {ten['detached_per_add']} processes, {ten['detached_cpu_s_per_add']:.3f} s CPU per add")
        if "callgrind" in add:
            cg, one = add["callgrind"], add["callgrind"]["lone"]
            print(f"  instructions: 1 writer {one['ir'] / 1e6:.0f} M (the CLI process {one['cli_ir'] / 1e6:.0f} M, git "
                  f"{one['git_ir'] / 1e6:.0f} M); 10 writers {cg['ten_per_add_ir'] / 1e6:.0f} M per add, {cg['holds']} lock "
                  f"holds, a holder {(cg['holder_ir_median'] or 0) / 1e6:.0f} M, a waiter {(cg['waiter_ir_median'] or 0) / 1e6:.0f} M "
                  f"(medians); floor on {os.cpu_count()} cores {cg['ir_floor_vs_one']}x a lone add (goal ≤ 3x)")
        if "timeline" in add:
            import writes_timeline

            print("\n".join(writes_timeline.report(add.pop("timeline"))))
        print(f"  check: {add['check']}")
        if not args.no_sync:
            data["sync"] = s = bench_sync(root, args.sync_memories, args.remote_commits, args.rounds, python)
            print(f"sync, {args.sync_memories:,} memories, {args.remote_commits} new commits on the remote:")
            for case in ("fast-forward", "merge", "nothing_to_do"):
                print(f"  {case:<14} {fmt(s[case]['seconds'], 's')}")
    finally:
        data["machine"]["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
        shutil.rmtree(root, ignore_errors=True)
    print(f"load average: start {data['machine']['loadavg_at_start']}, end {data['machine']['loadavg_at_end']}")
    if args.out:
        benchlib.write_json(args.out, data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
