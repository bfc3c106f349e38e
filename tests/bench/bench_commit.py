"""Benchmark a one-file commit with memrepo's hooks against the same commit with hooks off.

For each store size a repository of N generated memories is made (or reused with --reuse DIR/N),
then ROUNDS pairs are run, interleaved so both see the same machine: edit one memory's body,
`git add` it, and time `git commit` through the repository's hooks (pre-commit validates,
post-commit updates the cache), then the same edit committed with `-c core.hooksPath=/dev/null`
(git alone). The pre-commit and post-commit hooks are also timed alone, on the next edit.
Reported: medians and the median of the pair differences. The machine's load is printed.

    .venv/bin/python tests/bench/bench_commit.py [--sizes 1000,10000,100000] [--rounds 7] [--reuse DIR] [--out FILE]

An older revision is measured from a worktree of it: `git worktree add /tmp/before REV`, then
`PYTHONPATH=/tmp/before/tools .venv/bin/python tests/bench/bench_commit.py --reuse /tmp/bench-before`
(its own repositories, so their hook shims are that revision's too).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def _edit(repo: str, n: int) -> None:
    names = sorted(os.listdir(os.path.join(repo, "memory")))
    path = os.path.join(repo, "memory", names[(n * 7919) % len(names)])
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(f"\nA benchmark line, edit {n} at {time.time():.6f}.\n")
    subprocess.run(["git", "add", path], cwd=repo, check=True)


def _timed(cmd: list[str], repo: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    res = subprocess.run(cmd, cwd=repo, env=env, capture_output=True)
    elapsed = time.perf_counter() - start
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {res.stderr.decode(errors='replace')}")
    return elapsed


def bench(repo: str, rounds: int, python: str) -> dict[str, float]:
    env = {**os.environ, "MEMREPO_PYTHON": python}
    hooks, plain, pre, post = [], [], [], []
    for r in range(rounds):
        _edit(repo, 4 * r)
        hooks.append(_timed(["git", "commit", "-q", "-m", f"bench edit {r}"], repo, env))
        _edit(repo, 4 * r + 1)
        plain.append(_timed(["git", "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", f"bench plain {r}"], repo, env))
        _edit(repo, 4 * r + 2)  # the cache recorded the plain commit's parent? no: let one hooked commit catch it up
        _timed(["git", "commit", "-q", "-m", f"bench catch-up {r}"], repo, env)
        _edit(repo, 4 * r + 3)
        pre.append(_timed([python, "-m", "memrepo.store.githooks", "pre-commit"], repo, env))
        _timed(["git", "-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", f"bench hooks alone {r}"], repo, env)
        post.append(_timed([python, "-m", "memrepo.store.githooks", "post-commit"], repo, env))
    diffs = [h - p for h, p in zip(hooks, plain)]
    med = statistics.median
    return {"commit_with_hooks_s": round(med(hooks), 3), "commit_hooks_off_s": round(med(plain), 3),
            "hooks_cost_s": round(med(diffs), 3), "pre_commit_s": round(med(pre), 3), "post_commit_s": round(med(post), 3)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--reuse", help="a folder holding repositories named by size (DIR/100000), made on the first run")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    python = sys.executable
    results = {"machine": benchlib.machine(), "sizes": {}}
    for size in (int(s) for s in args.sizes.split(",")):
        root = os.path.join(args.reuse, str(size)) if args.reuse else os.path.join(tempfile.mkdtemp(prefix="memrepo-bench-"), "mem")
        if not os.path.isdir(os.path.join(root, "memory")):
            benchlib.make_repo(root, size, 7, python)
        from memrepo.store import index

        facts = getattr(index, "blob_facts", None)  # absent before the cache held git blob ids (an older revision)
        if facts is not None and not facts(root):
            index.rebuild(root)  # a cache from before git blob hashes: what `memrepo index --rebuild` does once
        subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "bench: settle"], cwd=root, env={**os.environ, "MEMREPO_PYTHON": python})
        figures = bench(root, args.rounds, python)
        figures["load"] = os.getloadavg()[0]
        results["sizes"][size] = figures
        print(f"{size:>7} memories: commit with hooks {figures['commit_with_hooks_s']:.3f} s, hooks off {figures['commit_hooks_off_s']:.3f} s, "
              f"hooks cost {figures['hooks_cost_s']:.3f} s (pre-commit {figures['pre_commit_s']:.3f} s, post-commit "
              f"{figures['post_commit_s']:.3f} s); load {figures['load']:.2f}", flush=True)
    if args.out:
        benchlib.write_json(args.out, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
