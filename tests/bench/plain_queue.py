"""What a queue without a group commit gives on this machine: plain `git commit`s behind one flock (issue 44).

No memrepo at all: a copy of a git repository (`--repo DIR`, else N generated memories), its
hooks off (`core.hooksPath=/dev/null`). One writer commits one new file ADDS times in a row
(`flock LOCK sh -c 'git add F && git commit -q -m M'`, the file written before the lock is
taken); then ten writers do the same at once, each commit waiting for the one lock. Reported:
each commit's latency (its wait included), median and p90, ten writers' median over a lone
commit's, and the CPU per commit, beside the floor the CPU alone sets on this machine's cores
(ten commits' CPU shared by the cores, over a lone commit's wall time). memrepo's own ten
writers are `bench_writes.py`'s; this is the line a plain lock draws under them.

    python tests/bench/plain_queue.py [--repo DIR | --memories 1000] [--adds 5] [--rounds 3] [--quick]
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

WRITERS = 10
CPU: list[float] = []


def one_commit(repo: str, lock: str, tag: str) -> float:
    import resource

    rel = f"memory/plain-{tag}.md"
    start = time.perf_counter()
    with open(os.path.join(repo, rel), "w", encoding="utf-8") as fh:
        fh.write(f"---\nid: plain-{tag}\ntitle: Plain commit {tag}\n---\nA plain git commit, no memrepo.\n")
    script = f"git -c core.hooksPath=/dev/null add -- {rel} && git -c core.hooksPath=/dev/null commit -q -m 'plain: {tag}'"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(["flock", lock, "sh", "-c", script], cwd=repo, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return time.perf_counter() - start


def _cpu() -> float:
    import resource

    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", help="a git repository to copy (e.g. bench_writes' --reuse DIR/1000)")
    ap.add_argument("--memories", type=int, default=1000, help="without --repo: generate this many memories")
    ap.add_argument("--adds", type=int, default=5, help="commits per writer")
    ap.add_argument("--rounds", type=int, default=3, help="lone and ten-writer phases, interleaved")
    ap.add_argument("--quick", action="store_true", help="200 memories, 2 commits per writer, 1 round")
    args = ap.parse_args()
    if args.quick:
        args.memories, args.adds, args.rounds, args.repo = 200, 2, 1, None
    root = tempfile.mkdtemp(prefix="memrepo-bench-plain-")
    try:
        repo = os.path.join(root, "repo")
        if args.repo:
            shutil.copytree(args.repo, repo, symlinks=True)
        else:
            benchlib.make_repo(repo, args.memories, seed=11, python=sys.executable)
        lock = os.path.join(root, "lock")
        one_commit(repo, lock, "warmup")
        lone: list[float] = []
        ten: list[float] = []
        lone_cpu: list[float] = []
        ten_cpu: list[float] = []
        loads = [os.getloadavg()[0]]
        for r in range(args.rounds):
            CPU.clear()
            lone += [one_commit(repo, lock, f"{r}-lone-{i}") for i in range(args.adds)]
            lone_cpu += CPU
            before = _cpu()
            with ThreadPoolExecutor(WRITERS) as pool:
                for xs in pool.map(lambda w: [one_commit(repo, lock, f"{r}-w{w}-{i}") for i in range(args.adds)], range(WRITERS)):
                    ten += xs
            ten_cpu.append((_cpu() - before) / (WRITERS * args.adds))  # the phase's CPU: threads share RUSAGE_CHILDREN
            loads.append(os.getloadavg()[0])
        one, many = statistics.median(lone), statistics.median(ten)
        floor = WRITERS * statistics.mean(ten_cpu) / (os.cpu_count() or 1) / one
        print(f"plain git commit behind one flock, {len(lone)} lone and {len(ten)} among {WRITERS} writers:")
        print(f"  1 writer   {one * 1000:7.1f} ms median, CPU {statistics.median(lone_cpu) * 1000:.1f} ms")
        print(f"  10 writers {many * 1000:7.1f} ms median, p90 {sorted(ten)[int(0.9 * len(ten)) - 1] * 1000:.1f} ms, "
              f"{many / one:.2f}x a lone commit; CPU {statistics.mean(ten_cpu) * 1000:.1f} ms per commit, "
              f"CPU floor on {os.cpu_count()} cores {floor:.2f}x")
        print(f"  load average (1 min) over the rounds: {min(loads):.2f}-{max(loads):.2f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
