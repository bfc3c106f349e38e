"""Benchmark the UserPromptSubmit hook reading three sources (issue 41): a personal store, one team
store and one project store of N generated memories each, against a bare `python -I -S -c pass`.

Builds three memory repositories of generated memories (tests/bench/genmem.py, three seeds): the
personal one, a team one listed in the personal repository's `index/local.json` (`teams`), and
one whose cache is put where a code repository's project memory keeps it (a checkout with
`.memrepo/memory/`, its cache in the user's cache folder: `memrepo.recall.sources`). Then, for a
prompt the personal store answers and one the team store answers (cwd in the code repository,
so all three caches are read), runs the hook and the baseline interleaved, and with
`--callgrind` counts their instructions (valgrind), which a loaded machine does not change.

Each three-source prompt is measured twice: with the merged cache (`memrepo.store.merged`, one
cache for the three, ranked once as one store, as the refresh leaves it) and without it (the three
caches, as the hook reads them before a prompt context's first refresh). The prompt path's bundle is written first, as SessionStart
writes it. `--agree N` also compares the two paths' answers on generated prompts.

Target (issue 41): hook/baseline <= 2x with three stores of 10,000, on the median of the pair
ratios and on instructions.

    .venv/bin/python tests/bench/bench_sources.py [--size 10000] [--pairs 30] [--callgrind] [--agree 20] [--quick]
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
    target = os.path.join(cache, paths.INDEX_FILE)
    if not (os.path.exists(target) and os.path.getsize(target) == os.path.getsize(paths.index_db(project))):
        shutil.copyfile(paths.index_db(project), target)


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


def bundle_ready(python: str) -> str:
    """Write the prompt path's bundle where the hook run as `python -I -S hooks/…` finds it (as
    SessionStart and the installers write it), unless it is current: the hook as installed."""
    import subprocess

    from memrepo.base import bundle

    tools = os.path.join(bl.ROOT, "tools")
    if bundle.current(bundle.path(tools), tools):
        return "current"
    subprocess.run([python, "-I", "-S", os.path.join(tools, "memrepo", "base", "bundle.py")], check=True,
                   capture_output=True)
    return "written"


def merged_on(personal: str, cwd: str, on: bool) -> None:
    """Build the merged cache of the prompt context of `cwd` (on), or take it away (the hook then
    reads the three caches, as it does before the first refresh)."""
    from memrepo.recall import sources as rs
    from memrepo.store import merged

    srcs = rs.found(personal, cwd)
    if on:
        if merged.state(personal, cwd) != "current":
            merged.build(srcs)
    elif os.path.exists(rs.merged_db(srcs)):
        os.remove(rs.merged_db(srcs))


def agreement(personal: str, team: str, project: str, workdir: str, n: int) -> dict[str, Any]:
    """The merged cache's answers against the three caches' for generated prompts about n memories
    of each store (bench_hook's prompt shapes, each asked from its memory's project checkout, whose
    merged cache is built once): how many recall the same memories in the same order, and each
    kind of difference."""
    import sqlite3

    from memrepo.base import paths
    from memrepo.recall import decide as recall, sources as rs
    from memrepo.store import merged

    asked: dict[str, list[str]] = {}
    for store in (personal, team, project):
        with sqlite3.connect(f"file:{paths.index_db(store)}?mode=ro", uri=True) as db:
            rows = db.execute("SELECT m.id, m.title, m.project, f.entities FROM memories m JOIN fts f ON f.rowid = m.rowid"
                              " ORDER BY m.id").fetchall()
        for k, (_, title, proj, entities) in enumerate(rows[::max(1, len(rows) // n)][:n]):
            entity = (entities or title).split(" ; ")[0]
            prompt = bh.PROMPT_SHAPES[k % len(bh.PROMPT_SHAPES)].format(title=title, title_lc=title.lower(), entity=entity)
            asked.setdefault(bh.project_dir(workdir, proj), []).append(prompt)
    kinds = ("same", "same memories, other order", "one silent", "other memories")
    counts: dict[str, Any] = {"prompts": 0, "silent_both": 0, "built": 0, **dict.fromkeys(kinds, 0),
                             "differ_with_the_same_candidates": 0, "examples": []}
    real = rs._union
    for cwd, prompts in asked.items():
        with_project(cwd, project)
        if merged.state(personal, cwd) != "current":
            merged.refresh(personal, cwd)
            counts["built"] += 1
        assert merged.state(personal, cwd) == "current"
        for prompt in prompts:
            read: list[bool] = []
            seen: list[Any] = [[], []]  # every candidate each path judged (explain)
            rs._union = lambda *a, **kw: read.append(True) or real(*a, **kw)  # type: ignore[assignment]
            try:
                a = [(h.id, h.source) for h in recall.decide(personal, prompt, cwd=cwd, explain=seen[0]).hits]
                rs._union = lambda *a, **kw: None  # type: ignore[assignment]  # the three caches, as before the first refresh
                b = [(h.id, h.source) for h in recall.decide(personal, prompt, cwd=cwd, explain=seen[1]).hits]
            finally:
                rs._union = real  # type: ignore[assignment]
            same_candidates = len({frozenset((h.id, h.source) for h, _ in e if h is not None) for e in seen}) == 1
            assert read, "the merged cache was not read"
            counts["prompts"] += 1
            counts["silent_both"] += not a and not b
            kind = ("same" if a == b else "same memories, other order" if sorted(a) == sorted(b)
                    else "one silent" if not a or not b else "other memories")
            counts[kind] += 1
            if kind != "same":
                counts["differ_with_the_same_candidates"] += same_candidates
            if kind != "same" and len(counts["examples"]) < 8:
                counts["examples"].append({"kind": kind, "prompt": prompt, "merged": a, "three": b,
                                           "same_candidates": same_candidates})
    print(f"agreement on {counts['prompts']} generated prompts ({counts['built']} merged caches built): "
          + ", ".join(f"{k} {counts[k]}" for k in kinds) + f" (silent both {counts['silent_both']}; of the differences, with the same candidates in both:"
          f" {counts['differ_with_the_same_candidates']})")
    for ex in counts["examples"]:
        print(f"  {ex['kind']}{'' if ex['same_candidates'] else ' (other candidates)'}: {ex['prompt']!r}\n    merged {ex['merged']}\n    three  {ex['three']}")
    return counts


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
    ap.add_argument("--agree", type=int, default=0, metavar="N",
                    help="also compare the merged cache's answers with the three caches' on N generated prompts a store")
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
    results["bundle"] = bundle_ready(args.python)
    print(f"prompt path's bundle: {results['bundle']}")
    rounds = [("personal alone", personal, "")] + [(f"{k} ({how})", store, how) for k, store in
                                                   (("personal answers", personal), ("team answers", team))
                                                   for how in ("merged", "three caches")]
    for kind, store, how in rounds:
        prompt, cwd, _ = bh.answerable_prompt(store, workdir)
        if kind == "personal alone":
            alone(settings, cwd)  # with --reuse, what the last run listed and placed is still there
        else:
            with open(settings, "w", encoding="utf-8") as fh:
                json.dump({"teams": {"acme": {"path": team, "writable": False}}}, fh)
            from memrepo.store import sources as joined

            joined.mark_joined(team)  # as `memrepo team add` marks the clone it lists
            with_project(cwd, project)
            merged_on(personal, cwd, how == "merged")
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
    if args.agree:
        results["agreement"] = agreement(personal, team, project, workdir, args.agree)
    bl.write_json(args.out, results)
    print(f"results: {args.out}")
    if not args.workdir:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
