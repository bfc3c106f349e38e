"""Benchmark the memory repository: rebuild, incremental update, index size, search latency.

For each corpus size, makes a fresh memory repository with `memrepo.store.repoinit.init`, writes
generated memories (tests/bench/genmem.py) and commits them in one commit with `--no-verify`
(the post-commit hook still indexes them), then measures:

- full rebuild: `memrepo index --rebuild` as a subprocess (wall time and, through
  /usr/bin/time -v, peak RSS) and `index.rebuild` in-process;
- incremental update after a one-file commit: the post-commit hook's own work
  (`python -m memrepo.store.githooks post-commit` after a commit made with hooks off), the
  `.githooks/post-commit` shim as git runs it, and a whole `git commit` of one file with hooks;
- index size on disk;
- `memrepo search QUERY --json` as a subprocess, and `rank.rank` in-process over 20 queries.

Targets (issue 2): rebuild of 10,000 <= 20 s; incremental update of one file <= 0.5 s.

    .venv/bin/python tests/bench/bench_index.py [--sizes 1000,10000] [--runs 5] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

REBUILD_TARGET_S = 20.0
INCREMENTAL_TARGET_S = 0.5
GENERIC_QUERIES = (
    "postgres vacuum bloat on the primary",
    "who owns the payouts worker",
    "kafka consumer lag alert at night",
    "rotate the tls certificate before renewal fails",
    "terraform plan for the staging vpc",
    "flaky playwright tests in ci",
)


def time_v(cmd: list[str], env: dict[str, str], cwd: str) -> tuple[float, int | None]:
    """Wall seconds and peak RSS (KiB) of a command, via /usr/bin/time -v when available."""
    if os.path.exists("/usr/bin/time"):
        elapsed, proc = bl.run(["/usr/bin/time", "-v", *cmd], cwd=cwd, env=env)
        m = re.search(rb"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
        return elapsed, int(m.group(1)) if m else None
    import resource

    elapsed, _ = bl.run(cmd, cwd=cwd, env=env)
    return elapsed, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def bench_rebuild(repo: str, runs: int, memrepo_bin: str, env: dict[str, str]) -> dict[str, Any]:
    from memrepo.store import index

    walls, rss = [], []
    for _ in range(runs):
        wall, peak = time_v([memrepo_bin, "--repo", repo, "index", "--rebuild"], env, repo)
        walls.append(wall)
        if peak:
            rss.append(peak)
    inproc = []
    for _ in range(runs):
        elapsed, report = bl.timed(lambda: index.rebuild(repo))
        inproc.append(elapsed)
    import tracemalloc

    tracemalloc.start()
    index.rebuild(repo)
    heap_peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {"subprocess_s": bl.summary(walls, 1.0), "inprocess_s": bl.summary(inproc, 1.0),
            "peak_rss_mib": bl.summary([r / 1024 for r in rss], 1.0) if rss else None,
            "inprocess_python_heap_peak_mib": round(heap_peak / 2**20, 1), "added": report.added,
            "skipped": len(report.skipped)}


def _touch_one(repo: str, k: int) -> str:
    """Change one memory (its description) the way an edit would; returns its repo-relative path."""
    from memrepo.format import notes

    names = sorted(f for f in os.listdir(os.path.join(repo, "memory")) if f.endswith(".md"))
    rel = "memory/" + names[(k * 7919) % len(names)]
    note = notes.read(os.path.join(repo, rel))
    note.meta["description"] = (note.meta["description"][:170] + f" (edit {k})")
    notes.write(note, os.path.join(repo, rel))
    return rel


def bench_incremental(repo: str, runs: int, python: str, env: dict[str, str]) -> dict[str, Any]:
    from memrepo.store import index

    hook_py, shim, whole, precommit, noop_update = [], [], [], [], []
    for k in range(runs):
        rel = _touch_one(repo, 2 * k)
        bl.git(repo, *bl.NO_HOOKS, "commit", "-q", "-m", f"bench edit {k}", "--", rel, env=env)
        elapsed, _ = bl.run([python, "-m", "memrepo.store.githooks", "post-commit"], cwd=repo, env=env)
        hook_py.append(elapsed)
        _check_fresh(repo, rel)

        rel = _touch_one(repo, 2 * k + 1)
        bl.git(repo, *bl.NO_HOOKS, "commit", "-q", "-m", f"bench edit {k}b", "--", rel, env=env)
        elapsed, _ = bl.run(["sh", os.path.join(repo, ".githooks", "post-commit")], cwd=repo, env=env)
        shim.append(elapsed)
        _check_fresh(repo, rel)

        rel = _touch_one(repo, 10_000 + k)
        bl.git(repo, "add", "--", rel, env=env)
        elapsed, _ = bl.run([python, "-m", "memrepo.store.githooks", "pre-commit"], cwd=repo, env=env)
        precommit.append(elapsed)
        elapsed = bl.git(repo, "commit", "-q", "-m", f"bench edit {k}c", "--", rel, env=env)
        whole.append(elapsed)
        _check_fresh(repo, rel)

        elapsed, _ = bl.timed(lambda: index.update(repo))
        noop_update.append(elapsed)
    return {
        "post_commit_python_s": bl.summary(hook_py, 1.0),
        "post_commit_shim_s": bl.summary(shim, 1.0),
        "pre_commit_python_s": bl.summary(precommit, 1.0),
        "git_commit_one_file_with_hooks_s": bl.summary(whole, 1.0),
        "inprocess_update_nothing_changed_s": bl.summary(noop_update, 1.0),
        "index_bytes_after": bl.index_bytes(repo),
    }


def _check_fresh(repo: str, rel: str) -> None:
    from memrepo.store import index

    st = index.status(repo)
    if st["commit"] != bl.head(repo) or st["changed_files"]:
        raise RuntimeError(f"index not fresh after committing {rel}: commit {st['commit']}, changed {st['changed_files'][:5]}")


def queries(repo: str) -> list[str]:
    """20 queries: 14 phrased after memories in the corpus, 6 generic ops questions."""
    import sqlite3

    from memrepo.base import paths

    with sqlite3.connect(f"file:{paths.index_db(repo)}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT title FROM memories ORDER BY id").fetchall()
    step = max(1, len(rows) // 14)
    picked = [rows[i * step][0] for i in range(14)]
    phrased = [f"how do we handle: {t.lower()}" if i % 2 else t.lower() for i, t in enumerate(picked)]
    return phrased + list(GENERIC_QUERIES)


def bench_search(repo: str, memrepo_bin: str, env: dict[str, str], cli_runs: int, inproc_runs: int) -> dict[str, Any]:
    from memrepo.base import paths
    from memrepo.recall import query, rank, search

    qs = queries(repo)
    cli = []
    for i in range(cli_runs):
        elapsed, proc = bl.run([memrepo_bin, "--repo", repo, "search", qs[i % len(qs)], "--json"], env=env)
        cli.append(elapsed)
    version = [bl.run([memrepo_bin, "--version"], env=env)[0] for _ in range(cli_runs)]
    term_sets = [[(t, 1.0) for t in query.build_query(q).terms] for q in qs]
    db = search.connect(paths.index_db(repo))
    try:
        hits = [rank.rank(db, ts, floors=False) for ts in term_sets]
        per_query: list[list[float]] = [[] for _ in qs]
        loops = max(1, inproc_runs // len(qs))
        all_s = []
        for _ in range(loops):
            for i, ts in enumerate(term_sets):
                elapsed, _ = bl.timed(lambda: rank.rank(db, ts))
                per_query[i].append(elapsed)
                all_s.append(elapsed)
    finally:
        db.close()
    worst = max(range(len(qs)), key=lambda i: statistics.median(per_query[i]))
    return {
        "cli_search_json_ms": bl.summary(cli),
        "cli_version_ms": bl.summary(version),
        "rank_inprocess_ms": bl.summary(all_s),
        "rank_slowest_query": {"query": qs[worst], "terms": len(term_sets[worst]), "ms": bl.summary(per_query[worst])},
        "queries_with_hits": sum(1 for h in hits if h),
        "queries": qs,
    }


def bench_size(n: int, args: argparse.Namespace, workdir: str) -> dict[str, Any]:
    repo = os.path.join(workdir, f"repo-{n}")
    python = args.python
    memrepo_bin = os.path.join(os.path.dirname(python), "memrepo")
    env = bl.bench_env(repo, python)
    print(f"N={n}: building repository")
    result: dict[str, Any] = {"setup": bl.make_repo(repo, n, args.seed, python)}
    result["index_bytes"] = bl.index_bytes(repo)
    print(f"N={n}: rebuild x{args.runs}")
    result["rebuild"] = bench_rebuild(repo, args.runs, memrepo_bin, env)
    result["index_bytes_after_rebuild"] = bl.index_bytes(repo)
    print(f"N={n}: incremental x{args.runs}")
    result["incremental"] = bench_incremental(repo, args.runs, python, env)
    print(f"N={n}: search")
    result["search"] = bench_search(repo, memrepo_bin, env, args.cli_runs, args.rank_runs)
    if not args.keep:
        shutil.rmtree(repo, ignore_errors=True)
    return result


def report(results: dict[str, Any]) -> None:
    print()
    print(f"machine: {results['machine']}")
    for n, r in results["sizes"].items():
        rb, inc, se = r["rebuild"], r["incremental"], r["search"]
        ok_rb = rb["subprocess_s"]["median"] <= REBUILD_TARGET_S
        ok_inc = inc["post_commit_python_s"]["median"] <= INCREMENTAL_TARGET_S
        print(f"\n== {n} memories ({r['setup']['generate']['bytes'] / 1e6:.1f} MB of markdown)")
        print(f"  bulk commit --no-verify (post-commit indexes all) {r['setup']['bulk_commit_no_verify_s']:9.2f} s")
        print(f"  rebuild, `memrepo index --rebuild`       {bl.fmt(rb['subprocess_s'], 's')}"
              + (f"  target <= {REBUILD_TARGET_S:.0f} s {'met' if ok_rb else 'MISSED'}" if n == "10000" else ""))
        print(f"  rebuild, index.rebuild in-process        {bl.fmt(rb['inprocess_s'], 's')}")
        if rb["peak_rss_mib"]:
            print(f"  rebuild peak RSS (subprocess)            {bl.fmt(rb['peak_rss_mib'], 'MiB')}")
        print(f"  rebuild python heap peak (tracemalloc)   {rb['inprocess_python_heap_peak_mib']:9.1f} MiB")
        print(f"  post-commit, python -m memrepo.store.githooks  {bl.fmt(inc['post_commit_python_s'], 's')}"
              f"  target <= {INCREMENTAL_TARGET_S} s {'met' if ok_inc else 'MISSED'}")
        print(f"  post-commit, .githooks shim              {bl.fmt(inc['post_commit_shim_s'], 's')}")
        print(f"  pre-commit, python -m memrepo.store.githooks   {bl.fmt(inc['pre_commit_python_s'], 's')}")
        print(f"  git commit of one file, with hooks       {bl.fmt(inc['git_commit_one_file_with_hooks_s'], 's')}")
        print(f"  index.update, nothing changed            {bl.fmt(inc['inprocess_update_nothing_changed_s'], 's')}")
        print(f"  index on disk after rebuild              {r['index_bytes_after_rebuild']['total'] / 2**20:9.1f} MiB"
              f"  (after incremental commits: {inc['index_bytes_after']['total'] / 2**20:.1f} MiB incl. WAL)")
        print(f"  `memrepo search --json` (subprocess)     {bl.fmt(se['cli_search_json_ms'])}")
        print(f"  `memrepo --version` (CLI startup)        {bl.fmt(se['cli_version_ms'])}")
        print(f"  rank.rank in-process, 20 queries       {bl.fmt(se['rank_inprocess_ms'])}")
        print(f"  slowest query ({se['rank_slowest_query']['terms']} terms)               {bl.fmt(se['rank_slowest_query']['ms'])}"
              f"  {se['rank_slowest_query']['query'][:50]!r}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000", help="comma-separated corpus sizes (default 1000,10000)")
    ap.add_argument("--runs", type=int, default=5, help="repetitions of each rebuild/incremental timing (default 5)")
    ap.add_argument("--cli-runs", type=int, default=15, help="`memrepo search` subprocess runs (default 15)")
    ap.add_argument("--rank-runs", type=int, default=200, help="in-process rank.rank calls (default 200)")
    ap.add_argument("--seed", type=int, default=7, help="corpus seed (default 7)")
    ap.add_argument("--python", default=os.path.join(bl.ROOT, ".venv", "bin", "python"),
                    help="interpreter with memrepo installed, for subprocesses and hooks (default: the repo .venv)")
    ap.add_argument("--workdir", help="where to build the repositories (default: a new temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the generated repositories")
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "memrepo-bench-index.json"),
                    help="JSON results path (default /tmp/memrepo-bench-index.json)")
    ap.add_argument("--quick", action="store_true", help="sanity run: 300 memories, 2 runs, few searches")
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes, args.runs, args.cli_runs, args.rank_runs = "300", 2, 3, 20
    workdir = args.workdir or tempfile.mkdtemp(prefix="memrepo-bench-")
    results: dict[str, Any] = {"machine": bl.machine(), "args": vars(args), "sizes": {},
                               "started": time.strftime("%Y-%m-%dT%H:%M:%S")}
    for n in (int(s) for s in args.sizes.split(",")):
        results["sizes"][str(n)] = bench_size(n, args, workdir)
        bl.write_json(args.out, results)
    results["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    bl.write_json(args.out, results)
    report(results)
    print(f"\nresults: {args.out}")
    if not args.keep and not args.workdir:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
