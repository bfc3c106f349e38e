"""Benchmark bulk work: `memrepo curate --no-model` over N memories that each cite a missing path.

Each memory of project `shop` cites a file that does not exist under the shop's configured root,
so the deterministic pass stamps every one of them unverified (issue 22: 2,500 such stamps took
33 minutes, one commit each, then hit the argument-length limit). Each round copies a fresh
repository (made once per size: `memrepo init`, N memories in one `--no-verify` commit, indexed)
and times the whole CLI process, the repository's hooks included. Reported per size: the median
wall time over the rounds, and the commits the run made.

To compare with another revision, run this script from a worktree of it (the CLI and the hooks
import the code of the checkout the script lives in, through PYTHONPATH):

    git worktree add /tmp/wt-before <sha>
    .venv/bin/python /tmp/wt-before/tests/bench/bench_bulk.py --sizes 200,2500 --rounds 3
    .venv/bin/python tests/bench/bench_bulk.py --sizes 200,2500 --rounds 3 [--timeout 1800] [--out FILE]

A round still running after --timeout seconds is killed and reported as "> timeout".
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

TOOLS = os.path.join(benchlib.ROOT, "tools")
sys.path.insert(0, TOOLS)


def env_for(repo: str) -> dict[str, str]:
    env = benchlib.bench_env(repo, sys.executable)
    env["PYTHONPATH"] = TOOLS + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("GIT_AUTHOR_NAME", "Bench")
    env.setdefault("GIT_AUTHOR_EMAIL", "bench@example.com")
    env.setdefault("GIT_COMMITTER_NAME", "Bench")
    env.setdefault("GIT_COMMITTER_EMAIL", "bench@example.com")
    return env


def make_store(root: str, n: int) -> None:
    """A memory repository of n memories, each citing `src/jobs/job<i>.py`, missing under the shop root."""
    from memrepo.format import notes
    from memrepo.store import index, repoinit

    os.environ.update({k: v for k, v in env_for(root).items() if k.startswith("GIT_") or k == "MEMREPO_PYTHON"})
    repoinit.init(root)
    shop = os.path.join(os.path.dirname(root), "shop")
    os.makedirs(os.path.join(shop, "src"), exist_ok=True)
    with open(os.path.join(root, "memrepo.json"), "w", encoding="utf-8") as fh:
        json.dump({"projects": {"shop": {"root": shop}}}, fh)
    for i in range(n):
        note = notes.new_note(id=f"bulk-{i:05d}", title=f"Nightly job {i}", description=f"Where nightly job {i} lives.",
                              class_="fact", source="user", created="2026-01-15", project="shop",
                              body=f"The nightly job {i} lives in `src/jobs/job{i}.py`.\n")
        with open(os.path.join(root, "memory", f"{note.id}.md"), "w", encoding="utf-8", newline="\n") as fh:
            fh.write(notes.serialize(note))
    env = env_for(root)
    benchlib.run(["git", "add", "-A", "memory", "memrepo.json"], cwd=root, env=env)
    benchlib.run(["git", "commit", "-q", "--no-verify", "-m", f"bench: {n} memories"], cwd=root, env=env)
    index.rebuild(root)


def one_round(template: str, work: str, timeout: float) -> dict[str, Any]:
    if os.path.exists(work):
        shutil.rmtree(work)
    shutil.copytree(template, work, symlinks=True)
    repo = os.path.join(work, "mem")
    env = env_for(repo)
    before = int(subprocess.check_output(["git", "rev-list", "--count", "HEAD"], cwd=repo, env=env))
    start = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-m", "memrepo", "--repo", repo, "curate", "--no-model", "--json"],
                              cwd=repo, env=env, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"seconds": None, "timed_out": True}
    seconds = time.perf_counter() - start
    after = int(subprocess.check_output(["git", "rev-list", "--count", "HEAD"], cwd=repo, env=env))
    result: dict[str, Any] = {"seconds": round(seconds, 3), "exit": proc.returncode, "commits": after - before}
    try:
        report = json.loads(proc.stdout)
        result.update(applied=len(report["applied"]), skipped=len(report["skipped"]))
    except (ValueError, KeyError):
        result["stderr"] = proc.stderr.decode("utf-8", "replace")[-1500:]
    return result


def bench(n: int, rounds: int, timeout: float, tmp: str) -> dict[str, Any]:
    template = os.path.join(tmp, f"template-{n}")
    make_store(os.path.join(template, "mem"), n)
    found = []
    for r in range(rounds):
        res = one_round(template, os.path.join(tmp, "work"), timeout)
        print(f"  n={n} round {r + 1}: {res}", file=sys.stderr)
        found.append(res)
        if res.get("timed_out"):
            break
    done = [x["seconds"] for x in found if x.get("seconds") is not None]
    return {"n": n, "rounds": found, "median_s": round(statistics.median(done), 3) if done else None,
            "timed_out": any(x.get("timed_out") for x in found)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="200,2500", help="comma-separated memory counts (default 200,2500)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds before a round is killed")
    ap.add_argument("--out", help="write the figures as JSON to this file")
    args = ap.parse_args()
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=benchlib.ROOT, capture_output=True, text=True).stdout.strip()
    result: dict[str, Any] = {"revision": rev, "checkout": benchlib.ROOT, "machine": benchlib.machine(), "sizes": []}
    with tempfile.TemporaryDirectory(prefix="memrepo-bench-bulk-") as tmp:
        for n in (int(x) for x in args.sizes.split(",")):
            result["sizes"].append(bench(n, args.rounds, args.timeout, tmp))
    for s in result["sizes"]:
        med = "> timeout" if s["median_s"] is None else f"{s['median_s']:.2f} s"
        commits = sorted({r.get("commits") for r in s["rounds"] if "commits" in r})
        print(f"{rev}  n={s['n']:>6}  curate --no-model median {med}  commits per run {commits}"
              + ("  (a round timed out)" if s["timed_out"] else ""))
    if args.out:
        benchlib.write_json(args.out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
