"""Benchmark the UserPromptSubmit hook reading three sources (issue 41): a personal store, one team
store and one project store of N generated memories each, against a bare `python -I -S -c pass`.

Builds three memory repositories of generated memories (tests/bench/genmem.py, three seeds): the
personal one, a team one listed in the personal repository's `index/local.json` (`teams`), and
one whose cache is put where a code repository's project memory keeps it (a checkout with
`.memrepo/memory/`, its cache in the user's cache folder: `memrepo.recall.sources`). Then, for a
prompt the personal store answers and one the team store answers (cwd in the code repository,
so all three caches are read), runs the hook and the baseline interleaved, and with
`--callgrind` counts their instructions (valgrind), which a loaded machine does not change.

Target (issue 41): hook/baseline <= 2x with three stores of 10,000, on the median of the pair
ratios and on instructions.

    .venv/bin/python tests/bench/bench_sources.py [--size 10000] [--pairs 30] [--callgrind] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_hook as bh  # noqa: E402
import benchlib as bl  # noqa: E402

TARGET = 2.0


def build(workdir: str, n: int, python: str, reuse: bool) -> tuple[str, str, str]:
    """(personal repo, team repo, project repo): three stores of n memories."""
    from memrepo.store import index

    stores = []
    for name, seed in (("personal", 7), ("team", 11), ("project", 13)):
        repo = os.path.join(workdir, f"{name}-{n}")
        if not (reuse and index.status(repo).get("count") == n):
            shutil.rmtree(repo, ignore_errors=True)
            bl.make_repo(repo, n, seed, python)
        stores.append(repo)
    return stores[0], stores[1], stores[2]


def with_project(cwd: str, project: str) -> None:
    """Make the checkout `cwd` is in hold project memory: `.memrepo/memory/`, and `project`'s cache
    where recall looks for that checkout's (the user's cache folder)."""
    from memrepo.base import paths, projects
    from memrepo.recall import sources

    top = projects.top_level(cwd)
    assert top is not None
    os.makedirs(os.path.join(top, sources.PROJECT_DIR, paths.MEMORY_DIR), exist_ok=True)
    cache = sources.project_index_dir(top)
    os.makedirs(cache, exist_ok=True)
    shutil.copyfile(paths.index_db(project), os.path.join(cache, paths.INDEX_FILE))


def alone(settings: str, cwd: str) -> None:
    """Undo what the three-source rounds set up: no team listed, no project memory where `cwd` is."""
    from memrepo.base import projects
    from memrepo.recall import sources

    if os.path.exists(settings):
        with open(settings, encoding="utf-8") as fh:
            kept = {k: v for k, v in json.load(fh).items() if k != "teams"}
        with open(settings, "w", encoding="utf-8") as fh:
            json.dump(kept, fh)
    top = projects.top_level(cwd)
    if top is not None:
        shutil.rmtree(os.path.join(top, sources.PROJECT_DIR), ignore_errors=True)
        shutil.rmtree(sources.project_index_dir(top), ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=10000, help="memories per store (default 10000)")
    ap.add_argument("--pairs", type=int, default=30, help="interleaved rounds per prompt (default 30)")
    ap.add_argument("--python", default=os.path.join(bl.ROOT, ".venv", "bin", "python"),
                    help="interpreter for MEMREPO_PYTHON and the baseline (default: the repo .venv's python)")
    ap.add_argument("--workdir", help="where to build the stores (default: a new temp dir)")
    ap.add_argument("--reuse", action="store_true", help="reuse stores already built in --workdir")
    ap.add_argument("--callgrind", action="store_true", help="also count instructions (valgrind --tool=callgrind)")
    ap.add_argument("--quick", action="store_true", help="sanity run: 300 memories a store, 6 rounds")
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "memrepo-bench-sources.json"),
                    help="JSON results path (default /tmp/memrepo-bench-sources.json)")
    args = ap.parse_args(argv)
    if args.quick:
        args.size, args.pairs = 300, 6
    workdir = args.workdir or tempfile.mkdtemp(prefix="memrepo-bench-sources-")
    os.environ.setdefault("XDG_CACHE_HOME", os.path.join(workdir, "cache"))
    personal, team, project = build(workdir, args.size, args.python, args.reuse)
    env = bl.bench_env(personal, args.python)
    results: dict[str, Any] = {"machine": bl.machine(), "size": args.size, "prompts": {}}
    settings = os.path.join(personal, "index", "local.json")
    # First the personal store alone (no team listed, no project memory where the prompt is asked):
    # the figure bench_hook.py measures, here for comparison on the same machine at the same time.
    # Each prompt is asked from the checkout of the project its memory belongs to (bench_hook's
    # generator), which then holds the project memory.
    for kind, store in (("personal alone", personal), ("personal answers", personal), ("team answers", team)):
        prompt, cwd, _ = bh.answerable_prompt(store, workdir)
        if kind == "personal alone":
            alone(settings, cwd)  # with --reuse, what the last run listed and placed is still there
        else:
            with open(settings, "w", encoding="utf-8") as fh:
                json.dump({"teams": {"acme": {"path": team, "writable": False}}}, fh)
            from memrepo.store import sources as joined

            joined.mark_joined(team)  # as `memrepo team add` marks the clone it lists
            with_project(cwd, project)
        ev = bh.event(prompt, cwd, "")
        cmds = {k: v for k, v in bh.commands(args.python).items() if k in ("baseline", "hook", "hook_direct", "baseline_site")}
        check = bh.check_outputs(cmds, env, ev, True)
        samples = bh.interleaved(cmds, env, ev, args.pairs)
        entry = {"prompt": prompt, **check, **bh.ratios(samples)}
        line = (f"{kind}: injects {check['injected_ids']}; pair ratio {entry['median_of_pair_ratios']:.2f}x "
                f"(target {TARGET}x; hook {entry['hook']['median']:.1f} ms, baseline {entry['baseline']['median']:.1f} ms, "
                f"load {os.getloadavg()[0]:.1f})")
        if args.callgrind:
            ins = bh.instructions(cmds, env, ev)
            entry["instructions"] = ins
            if ins:
                line += f"; instructions {ins['ratio']:.2f}x ({min(ins['hook_ir']):,} / {min(ins['baseline_ir']):,})"
        print(line)
        results["prompts"][kind] = entry
    bl.write_json(args.out, results)
    print(f"results: {args.out}")
    if not args.workdir:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
