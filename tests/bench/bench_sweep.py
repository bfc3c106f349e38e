"""Benchmark the daily sweep without a model: `memrepo sweep --no-model` over N generated memories.

A memory repository of N memories (tests/bench/genmem.py, seed 7: about two in five name a wiki
or service URL on a project's `.internal` host, which does not resolve from here) is built once;
each round copies it and runs the whole CLI process (`python -m memrepo --repo R sweep --no-model
--json`), timed: wall seconds, and the CPU seconds of the process and its children (git). The
report prints the figure beside the goal (issue 44: <= 60 s at 10,000 on a 2-core machine with no
network; it was 289 s wall, 70 s CPU, 93 % of verify's time `socket.getaddrinfo` one URL after
another) and what the verifier's URL probes did within their budget. Each checkout named by
--checkouts runs on the same repository (its CLI imported through PYTHONPATH), so the code
before a change can be timed beside the code after it:

    git worktree add /tmp/wt-before <sha>
    .venv/bin/python tests/bench/bench_sweep.py [-n 10000] [--checkouts /tmp/wt-before,.] [--rounds 1]
        [--workdir DIR --reuse] [--out FILE] [--quick] [--offline]

`--offline` runs the CLI in a network namespace of its own (`unshare --net --map-root-user`): a
machine with no network, where a lookup fails at once. Without it the sweep asks this machine's
resolver, and what that costs is the resolver's: the one of the 2-core machine the figures were
measured on drops some of a burst of parallel queries and answers those after 5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

sys.path.insert(0, os.path.join(benchlib.ROOT, "tools"))

GOAL_S = {10_000: 60.0}  # issue 44
IDENTITY = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
            "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_sweep(checkout: str, base: str, scratch: str, python: str, offline: bool = False) -> dict[str, Any]:
    """Copy the built repository and sweep the copy with `checkout`'s CLI; the figures of that run."""
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(base, scratch, symlinks=True)
    env = {**benchlib.bench_env(scratch, python), **IDENTITY,
           "PYTHONPATH": os.path.join(os.path.abspath(checkout), "tools")}
    cpu = children_cpu()
    argv = [python, "-m", "memrepo", "--repo", scratch, "sweep", "--no-model", "--json"]
    if offline:
        argv = ["unshare", "--net", "--map-root-user", *argv]
    wall, proc = benchlib.run(argv, env=env, check=False)
    report = json.loads(proc.stdout.decode("utf-8") or "{}") if proc.stdout.strip() else {}
    verify = report.get("verify") or {}
    return {"wall_s": round(wall, 1), "cpu_s": round(children_cpu() - cpu, 1), "exit": proc.returncode,
            "changed": len(verify.get("changed") or []), "url_probes": verify.get("url_probes"),
            "errors": report.get("errors")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=10_000, help="memories (default 10000)")
    ap.add_argument("--seed", type=int, default=7, help="corpus seed (default 7)")
    ap.add_argument("--rounds", type=int, default=1, help="sweeps per checkout, each on a fresh copy (default 1)")
    ap.add_argument("--checkouts", default=".", help="comma-separated checkouts whose CLI to time (default: this one)")
    ap.add_argument("--python", default=os.path.join(benchlib.ROOT, ".venv", "bin", "python"))
    ap.add_argument("--workdir", help="where to build the repository (default: a new temp dir)")
    ap.add_argument("--reuse", action="store_true", help="reuse the repository already built in --workdir")
    ap.add_argument("--out", help="write the figures as JSON to this file")
    ap.add_argument("--quick", action="store_true", help="sanity run: 500 memories, one round")
    ap.add_argument("--offline", action="store_true", help="run the CLI in a network namespace of its own (no network)")
    args = ap.parse_args(argv)
    if args.offline and shutil.which("unshare") is None:
        ap.error("--offline needs unshare (util-linux)")
    if args.quick:
        args.n, args.rounds = 500, 1
    os.environ.update(IDENTITY)
    workdir = args.workdir or tempfile.mkdtemp(prefix="memrepo-bench-sweep-")
    base = os.path.join(workdir, f"repo-{args.n}")
    if not (args.reuse and os.path.isdir(os.path.join(base, "memory"))):
        shutil.rmtree(base, ignore_errors=True)
        benchlib.make_repo(base, args.n, args.seed, args.python)
    results: dict[str, Any] = {"machine": benchlib.machine(), "n": args.n, "seed": args.seed, "offline": args.offline,
                               "runs": {}}
    for checkout in args.checkouts.split(","):
        runs = [one_sweep(checkout, base, os.path.join(workdir, "sweep"), args.python, args.offline)
                for _ in range(args.rounds)]
        results["runs"][checkout] = runs
    results["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    goal = GOAL_S.get(args.n)
    print(f"\nmemrepo sweep --no-model at {args.n:,} memories (seed {args.seed})"
          f"{', no network' if args.offline else ''}; load {results['machine']['loadavg_at_start']}"
          f" -> {results['loadavg_at_end']}")
    for checkout, runs in results["runs"].items():
        for r in runs:
            met = "" if goal is None else f"  goal <= {goal:.0f} s: {'ok' if r['wall_s'] <= goal else 'MISS'}"
            print(f"  {checkout}: {r['wall_s']:>7.1f} s wall, {r['cpu_s']:>6.1f} s CPU, exit {r['exit']}, "
                  f"{r['changed']} stamps changed{met}")
            if r["url_probes"]:
                print(f"    URL probes: {json.dumps(r['url_probes'])}")
            if r["errors"]:
                print(f"    errors: {r['errors']}")
    if args.out:
        benchlib.write_json(args.out, results)
    if not args.workdir:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
