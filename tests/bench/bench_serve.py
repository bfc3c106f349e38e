"""Benchmark `memrepo serve`: page loads over a generated repository (issue 20: the memories list
at 10,000 memories under 300 ms on this machine).

Builds a repository of N generated memories (tests/bench/genmem.py), starts the server in this
process, and times whole HTTP requests from a client socket (connect, request, full response)
for each page: the memories list, a search, one memory with its history, recall, review, runs.
Prints the median, p90 and min of each, with the machine's load before and after.

    .venv/bin/python tests/bench/bench_serve.py [--size 10000] [--rounds 30] [--out FILE]
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

TARGET_MS = 300.0


def get(port: int, path: str, cookie: str = "") -> tuple[float, int, int]:
    start = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("GET", path, headers={"Host": f"127.0.0.1:{port}", "Cookie": cookie})
    resp = conn.getresponse()
    size = len(resp.read())
    conn.close()
    return time.perf_counter() - start, resp.status, size


def login(port: int, url: str) -> str:
    """The session cookie, got as a browser gets it: by opening the one-time login URL."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("GET", url.split(str(port), 1)[1], headers={"Host": f"127.0.0.1:{port}"})
    resp = conn.getresponse()
    resp.read()
    conn.close()
    if resp.status != 303:
        raise RuntimeError(f"the login URL answered {resp.status}")
    return resp.getheader("Set-Cookie", "").split(";", 1)[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=10000, help="generated memories (default 10000)")
    ap.add_argument("--rounds", type=int, default=30, help="requests per page (default 30)")
    ap.add_argument("--seed", type=int, default=7, help="corpus seed (default 7)")
    ap.add_argument("--python", default=os.path.join(bl.ROOT, ".venv", "bin", "python"),
                    help="interpreter the repository's git hooks use (default .venv/bin/python)")
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "memrepo-bench-serve.json"),
                    help="where to write the JSON results")
    ap.add_argument("--quick", action="store_true", help="sanity run: 300 memories, 5 rounds")
    args = ap.parse_args(argv)
    if args.quick:
        args.size, args.rounds = 300, 5
    from memrepo.store import memories as store
    from memrepo.web import server

    workdir = tempfile.mkdtemp(prefix="memrepo-bench-serve-")
    try:
        repo = os.path.join(workdir, "repo")
        setup = bl.make_repo(repo, args.size, args.seed, args.python)
        first = store.list_memories(repo)[0]
        srv = server.Server(server.App(repo, read_only=True), 0)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        cookie = login(srv.app.port, srv.app.login_url())
        pages = {"memories list": "/", "search": "/?q=" + "+".join(str(first["title"]).split()[:4]),
                 "one memory": f"/m/{first['id']}", "recall": "/recall", "review": "/review", "runs": "/runs"}
        load = [round(x, 2) for x in os.getloadavg()]
        rows = {}
        for name, path in pages.items():
            get(srv.app.port, path, cookie)  # warm: the first request brings the cache up to date
            samples = []
            for _ in range(args.rounds):
                elapsed, status, size = get(srv.app.port, path, cookie)
                if status != 200:
                    raise RuntimeError(f"{path} answered {status}")
                samples.append(elapsed)
            p90 = statistics.quantiles(samples, n=10)[-1] * 1000 if len(samples) >= 2 else samples[0] * 1000
            rows[name] = {**bl.summary(samples), "p90": round(p90, 4), "bytes": size, "path": path}
        srv.shutdown()
        result = {"machine": bl.machine(), "size": args.size, "rounds": args.rounds, "setup": setup,
                  "loadavg": {"before": load, "after": [round(x, 2) for x in os.getloadavg()]}, "pages": rows}
        bl.write_json(args.out, result)
        print(f"{args.size} memories, {args.rounds} requests a page, load {load[0]} -> {result['loadavg']['after'][0]}")
        print(f"{'page':<15} {'median ms':>10} {'p90 ms':>8} {'min ms':>8} {'bytes':>9}")
        for name, r in rows.items():
            print(f"{name:<15} {r['median']:>10.1f} {r['p90']:>8.1f} {r['min']:>8.1f} {r['bytes']:>9}")
        met = rows["memories list"]["median"] <= TARGET_MS
        print(f"memories list: median {rows['memories list']['median']:.1f} ms, target {TARGET_MS:.0f} ms: "
              f"{'met' if met else 'MISSED'} (results in {args.out})")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
