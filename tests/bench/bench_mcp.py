"""Benchmark `memrepo mcp`: the server's start time and a `recall` call's latency, over stdio.

A memory repository of N generated memories (genmem, one commit, indexed) is served by
`python -m memrepo --repo R mcp`, driven by the MCP SDK's own client. Timed per round: from
spawning the server to the end of the initialize handshake (start), the first `tools/list`,
then `recall` calls on a fixed set of prompts (each call's round trip, as the agent sees it).
The decision inside the call is the hook's own and is logged with its own `ms`, also reported.

    .venv/bin/python tests/bench/bench_mcp.py [--memories 1000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

sys.path.insert(0, os.path.join(benchlib.ROOT, "tools"))

PROMPTS = [
    "how do I deploy the service to production?",
    "the build fails with a timeout on the integration tests",
    "what's the retry policy for the payments client",
    "thanks, go ahead",
    "rename the config loader and update its callers",
]


async def _round(repo: str, env: dict[str, str]) -> dict[str, Any]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "memrepo", "--repo", repo, "mcp"], env=env, cwd=repo)
    out: dict[str, Any] = {"recall": []}
    start = time.perf_counter()
    async with Client(params, mode="legacy") as client:
        out["start"] = time.perf_counter() - start
        t = time.perf_counter()
        await client.list_tools()
        out["list_tools"] = time.perf_counter() - t
        for prompt in PROMPTS:
            t = time.perf_counter()
            await client.call_tool("recall", {"prompt": prompt, "cwd": repo})
            out["recall"].append(time.perf_counter() - t)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--memories", type=int, default=1000, help="generated memories in the repository")
    ap.add_argument("--rounds", type=int, default=5, help="server starts to time")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        repo = os.path.join(tmp, "mem")
        benchlib.make_repo(repo, args.memories, 7, sys.executable)
        env = benchlib.bench_env(repo, sys.executable)
        rounds = [asyncio.run(_round(repo, env)) for _ in range(args.rounds)]
        from memrepo.recall import log

        decided = [float(e["ms"]) / 1000 for e in log.read_all(repo)]
    print(f"memrepo mcp, {args.memories} memories, {args.rounds} rounds ({benchlib.machine()})")
    print(f"  start (spawn to initialized): {benchlib.fmt(benchlib.summary([r['start'] for r in rounds]))}")
    print(f"  tools/list:                   {benchlib.fmt(benchlib.summary([r['list_tools'] for r in rounds]))}")
    print(f"  recall call (round trip):     {benchlib.fmt(benchlib.summary([s for r in rounds for s in r['recall']]))}")
    print(f"  recall decision (logged ms):  {benchlib.fmt(benchlib.summary(decided))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
