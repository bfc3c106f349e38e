"""Each of the ranking's heuristics switched off in turn, on every labeled set, beside plain BM25.

    python tests/bench/ablate_recall.py [--sets dev,recall,...] [--only decay,standing,...]

Issue 36: a heuristic on top of field-weighted BM25 (decay, the standing instructions' prior, a
session's share to its turns, the superseded and unverified penalties, the other-project factor,
the previous turn's half weight) stays only where it beats going without it on sets it was not
tuned on. Each line runs a set through the hook's own path (`memrepo eval`'s,
`evaluation.evaluate`) with one of `rank`'s constants made neutral (a factor 1, a share 0) and the decision's fitted constants as they are (not refitted), and
prints recall's ranking before its decision in its first two (three on LoCoMo), the hit and the
silence through the decision, beside the same with every heuristic in force and plain BM25's
first two. Every set says how it stands to the fitted decision (`labeled.note`). Decay is
evaluated as of 2026-11-30. A few minutes.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import labeled  # noqa: E402

from memrepo.evaluation import evaluate  # noqa: E402
from memrepo.recall import rank  # noqa: E402

TODAY = time.mktime((2026, 11, 30, 0, 0, 0, 0, 0, -1))
# The heuristic -> the constant of `rank` that makes it, and the value that makes it do nothing.
HEURISTICS = {
    "decay": ("DECAY_FLOOR", 1.0),
    "standing": ("STANDING", 1.0),
    "session": ("SESSION_LEND", 0.0),
    "superseded": ("SUPERSEDED_PENALTY", 1.0),
    "unverified": ("UNVERIFIED_PENALTY", 1.0),
    "other-project": ("OTHER_PROJECT", 1.0),
    "previous-turn": ("CONTEXT_ONLY", 1.0),
}


def measure(name: str, tmp: str) -> dict[str, float]:
    """Ranking top-k, hit and silence of set `name` with `rank`'s constants as they are now."""
    k = 3 if labeled.is_locomo(name) else 2
    tmp = tempfile.mkdtemp(dir=tmp)  # each run builds its stores anew
    rows: list[dict[str, Any]] = []
    for store, repo, prompts in labeled.stores(name, os.path.join(tmp, "s", name)):
        rows += evaluate.evaluate(repo, prompts, TODAY, os.path.join(tmp, "cwd", name, store), top=k)["results"]
    s = evaluate.summarize(rows, [0.0], top=k)
    return {"ranked": s["ranked"][f"top{k}"], "hit": s[f"hit@{k}"], "silence": s["silence"], "plain": s["plain"][f"top{k}"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default=",".join(labeled.SETS), help="sets to run (default: all that exist here)")
    ap.add_argument("--only", help=f"comma-separated heuristics to switch off (default: all of {', '.join(HEURISTICS)})")
    args = ap.parse_args(argv)
    names = labeled.available(args.sets.split(","))
    off = args.only.split(",") if args.only else list(HEURISTICS)
    unknown = [h for h in off if h not in HEURISTICS]
    if unknown:
        ap.error(f"unknown heuristics {unknown}: choose from {', '.join(HEURISTICS)}")
    print("set | how it stands | heuristic off | ranking top k: with it -> without | hit | silence | plain BM25 top k")
    for name in names:
        with tempfile.TemporaryDirectory(prefix="memrepo-ablate-") as tmp:
            now = measure(name, tmp)
            print(f"{name} | {labeled.note(name)} | none | {now['ranked']:.3f} | {now['hit']:.3f} | {now['silence']:.3f}"
                  f" | {now['plain']:.3f}", flush=True)
            for heuristic in off:
                constant, neutral = HEURISTICS[heuristic]
                kept = getattr(rank, constant)
                setattr(rank, constant, neutral)
                try:
                    got = measure(name, tmp)
                finally:
                    setattr(rank, constant, kept)
                print(f"{name} | {labeled.note(name)} | {heuristic} ({kept:g} -> {neutral:g}) | {now['ranked']:.3f} -> "
                      f"{got['ranked']:.3f} | {now['hit']:.3f} -> {got['hit']:.3f} | {now['silence']:.3f} -> "
                      f"{got['silence']:.3f} | {got['plain']:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
