"""Benchmark the prompt hook of each agent as a whole process, against a bare interpreter start.

The same generated memory repository and the same answerable prompt for every command, run
interleaved round by round (so a change of load hits all alike):

- baseline: `python -I -S -c pass` (the interpreter as hooks/run starts a hook);
- claude plugin: `sh hooks/run user_prompt_submit` (Claude Code's plugin hook);
- codex plugin: `sh hooks/run codex UserPromptSubmit` (the Codex plugin's hook, also -I -S);
- codex / gemini settings: what `memrepo install codex|gemini` registers, `python -I -S
  …/memrepo/agents/<agent>/entry.py <event>`; and, for comparison, the `-I -m` form the first
  installs wrote (no -S: `site` and its .pth files load);
- gemini extension: `memrepo-hook gemini BeforeAgent` (the console script).

Prints, per command, the median time and the median of the per-round ratios to the baseline.

    .venv/bin/python tests/bench/bench_agent_hooks.py [--size 1000] [--pairs 30] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import sys
import tempfile
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_hook as bh  # noqa: E402
import benchlib as bl  # noqa: E402

from memrepo.agents.codex import install as codex_install  # noqa: E402
from memrepo.agents.gemini import install as gemini_install  # noqa: E402


def commands(python: str) -> dict[str, list[str]]:
    run = os.path.join(bl.ROOT, "hooks", "run")
    hook_script = os.path.join(os.path.dirname(python), "memrepo-hook")
    cmds = {"baseline": [python, "-I", "-S", "-c", "pass"],
            "claude plugin": ["sh", run, "user_prompt_submit"],
            "codex plugin": ["sh", run, "codex", "UserPromptSubmit"],
            "codex settings": shlex.split(codex_install.command(python, "UserPromptSubmit")),
            "gemini settings": shlex.split(gemini_install.command(python, "BeforeAgent")),
            "codex settings -m": [python, "-I", "-m", "memrepo.agents.codex.entry", "UserPromptSubmit"]}
    if os.path.exists(hook_script):
        cmds["gemini extension"] = [hook_script, "gemini", "BeforeAgent"]
    return cmds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=1000, help="memories in the generated repository (default 1000)")
    ap.add_argument("--pairs", type=int, default=30, help="interleaved rounds (default 30)")
    ap.add_argument("--seed", type=int, default=7, help="corpus seed (default 7)")
    ap.add_argument("--python", default=os.path.join(bl.ROOT, ".venv", "bin", "python"),
                    help="interpreter with memrepo installed (default .venv/bin/python)")
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "memrepo-bench-agent-hooks.json"),
                    help="where to write the JSON results")
    ap.add_argument("--quick", action="store_true", help="sanity run: 300 memories, 5 rounds")
    args = ap.parse_args(argv)
    if args.quick:
        args.size, args.pairs = 300, 5
    workdir = tempfile.mkdtemp(prefix="memrepo-bench-agents-")
    try:
        repo = os.path.join(workdir, "repo")
        bl.make_repo(repo, args.size, args.seed, args.python)
        env = bl.bench_env(repo, args.python)
        prompt, cwd, expected = bh.answerable_prompt(repo, workdir)
        cmds = commands(args.python)
        ev = bh.event(prompt, cwd, "")
        for name, cmd in cmds.items():  # every hook answers, and answers the same
            if name == "baseline":
                continue
            _, proc = bl.run(cmd, env=env, stdin=ev)
            out = proc.stdout.decode("utf-8", "replace")
            if proc.returncode or not out.strip() or expected[0] not in out:
                raise RuntimeError(f"{name} did not inject {expected[0]}: rc={proc.returncode} {proc.stderr[-300:]!r}")
        load = [round(x, 2) for x in os.getloadavg()]
        samples = _interleaved(cmds, env, ev, args.pairs)
        base = samples["baseline"]
        rows: dict[str, Any] = {}
        for name, xs in samples.items():
            rows[name] = {**bl.summary(xs), "median_of_pair_ratios": round(statistics.median(x / b for x, b in zip(xs, base)), 3)}
        result = {"machine": bl.machine(), "size": args.size, "pairs": args.pairs, "prompt": prompt,
                  "loadavg": {"before": load, "after": [round(x, 2) for x in os.getloadavg()]}, "commands": rows}
        bl.write_json(args.out, result)
        print(f"{args.size} memories, {args.pairs} interleaved rounds, load {load[0]} -> {result['loadavg']['after'][0]}")
        print(f"{'command':<18} {'median ms':>10} {'min ms':>8} {'pair ratio':>11}")
        for name, r in rows.items():
            print(f"{name:<18} {r['median']:>10.1f} {r['min']:>8.1f} {r['median_of_pair_ratios']:>10.2f}x")
        print(f"(results in {args.out})")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


def _interleaved(cmds: dict[str, list[str]], env: dict[str, str], ev: bytes, pairs: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {k: [] for k in cmds}
    for i in range(pairs + 2):  # two warm-up rounds
        for name, cmd in cmds.items():
            elapsed, _ = bl.run(cmd, env=env, stdin=None if name == "baseline" else ev)
            if i >= 2:
                samples[name].append(elapsed)
    return samples


if __name__ == "__main__":
    raise SystemExit(main())
