"""What one ranking over every source's memories does to recall's answers (issue 41, part 2):
each labeled set's store split into three pseudo-sources, answered three ways.

    python tests/bench/split_sources.py [--sets dev,recall,held,...] [--quick]

For each set (`labeled.SETS`; the fitting sets are `labeled.FIT`: ../shared/eval/dev,
tests/data/recall, tests/data/recall_held, LoCoMo's training half, tests/data/recall_sre and five
of recall_small's stores; every other set — recall_blind, recall_chat, recall_data, recall_web,
the other five of recall_small — is judged only, and each line says which), the store is split by
a stable hash of each memory's id (CRC-32 mod 3) into a personal, a team and a project store,
each with its own cache, and every prompt is answered by the hook's own decision
(`memrepo.recall.decide`, as `memrepo.evaluation.evaluate` runs it):

- **single**: the whole store, as today;
- **three caches**: the three stores, each ranked over its own cache, their recalled memories
  merged by weighted p_inject (what the hook does before a prompt context's first refresh);
- **union**: the merged cache of the three (`memrepo.store.merged`), ranked once as one store
  (what the hook does once it is built).

It prints hit@2 (R@3 on LoCoMo) and silence (the share of prompts that expect nothing left
silent) of each, and how many prompts the union and the three caches answer exactly as the
single store does (the same ids in the same order). A memory superseded by one that lands in
another pseudo-source loses its successor there (a supersession stays inside its source), so
`update` prompts may differ for that reason alone.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import sqlite3
import sys
import tempfile
import zlib
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import labeled  # noqa: E402
from fit_recall import TODAY, top_k  # noqa: E402

from memrepo.base import paths  # noqa: E402
from memrepo.evaluation import checkouts, evaluate  # noqa: E402
from memrepo.recall import decide, sources as rs  # noqa: E402
from memrepo.store import index, merged  # noqa: E402

KINDS = (rs.PERSONAL, rs.TEAM, rs.PROJECT)


def split(repo: str, dest: str) -> list[rs.Source]:
    """The three pseudo-sources of the store `repo`, each indexed, under `dest`."""
    out = []
    for k, kind in enumerate(KINDS):
        root = os.path.join(dest, kind, ".memrepo") if kind == rs.PROJECT else os.path.join(dest, kind)
        os.makedirs(os.path.join(root, paths.MEMORY_DIR))
        for path in glob.glob(os.path.join(repo, paths.MEMORY_DIR, "*.md")):
            if zlib.crc32(os.path.basename(path)[:-3].encode()) % 3 == k:
                shutil.copy(path, os.path.join(root, paths.MEMORY_DIR))
        index.rebuild(root)
        out.append(rs.Source(kind, "pseudo", root, paths.index_db(root)))
    return out


def answers(repo: str, rows: list[dict[str, Any]], sandbox: str, top: int,
            srcs: list[rs.Source] | None) -> list[dict[str, Any]]:
    """evaluate.evaluate's results for the store `repo` (its cwds, supersessions and baselines),
    recall reading `srcs` instead when given."""
    real = rs.found
    if srcs is not None:
        rs.found = lambda *a, **kw: list(srcs)  # type: ignore[assignment]
    try:
        return list(evaluate.evaluate(repo, rows, TODAY, sandbox, top=top)["results"])
    finally:
        rs.found = real  # type: ignore[assignment]


def measure(name: str, tmp: str, quick: bool) -> None:
    k = top_k(name)
    got: dict[str, list[dict[str, Any]]] = {"single": [], "three caches": [], "union": []}
    for store, repo, rows in labeled.stores(name, os.path.join(tmp, name)):
        rows = rows[:40] if quick else rows
        srcs = split(repo, os.path.join(tmp, "split", name, store))
        sandbox = os.path.join(tmp, "cwd", name, store)
        got["single"] += answers(repo, rows, sandbox + "-1", k, None)
        if os.path.exists(rs.merged_db(srcs)):
            os.remove(rs.merged_db(srcs))
        got["three caches"] += answers(repo, rows, sandbox + "-3", k, srcs)
        merged.build(srcs)
        real, read = rs._union, []

        def union(*a: Any, **kw: Any) -> Any:
            out = real(*a, **kw)
            read.append(out is not None)
            return out

        rs._union = union  # type: ignore[assignment]
        try:
            got["union"] += answers(repo, rows, sandbox + "-u", k, srcs)
        finally:
            rs._union = real  # type: ignore[assignment]
        assert all(read) and read, "the union was not read from the merged cache"
    print(f"{name} ({labeled.note(name)}), {len(got['single'])} prompts:")
    for way, results in got.items():
        s = evaluate.summarize(results, [0.0], top=k)
        same = sum(a["got"] == b["got"] for a, b in zip(results, got["single"]))
        print(f"    {way:13} hit@{k} {s[f'hit@{k}']:.3f}  silence {s['silence']:.3f}  same answers as single {same}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default=",".join(n for n in labeled.SETS if not labeled.is_locomo(n)),
                    help="labeled sets (default: all but locomo, the slowest)")
    ap.add_argument("--quick", action="store_true", help="sanity run: the dev set, 40 prompts a store")
    args = ap.parse_args(argv)
    names = ["dev"] if args.quick else labeled.available(args.sets.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_CACHE_HOME"] = os.path.join(tmp, "cache")
        for name in names:
            measure(name, tmp, args.quick)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
