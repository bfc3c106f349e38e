"""Recall quality on every labeled set, side by side, through the prompt hook's code path
(`memrepo eval`'s: each cwd made real, each previous turn as the transcript tail reads it), beside
plain BM25 on the same store, alone and with generated distractor memories added (`genmem.py`).

    python tests/bench/recall_quality.py [--sets dev,recall,...] [--distractors 0,1000,10000] [--json]

Every line says how its set stands to the fitted decision (`labeled.note`: the development set is
a tuning set; the fitting sets of `fit_recall.py` say "fitted on"; the rest were judged only).
Hit is hit@2 of the prompts that expect a memory (R@3 on LoCoMo: an evidence turn among the first
three); silence is per silent kind. Beside them: recall's ranking before its decision, plain BM25
(every word OR-ed, `bm25()`, never silent) in its first two (three) and first ten, the misses by
cause, and the store's words past recall's scoring cap (in more than 25% of the memories), which
is where distractors weigh most. Decay is evaluated as of 2026-11-30.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import genmem  # noqa: E402
import labeled  # noqa: E402

from memrepo.evaluation import evaluate  # noqa: E402
from memrepo.base import paths
from memrepo.recall import lexicon, porter, search  # noqa: E402

TODAY = time.mktime((2026, 11, 30, 0, 0, 0, 0, 0, -1))
SEED = 7


def common_words(db: sqlite3.Connection, share: float = search.COMMON_DF_SHARE, top: int = 6) -> dict[str, Any]:
    """The store's words in more than `share` of its memories (recall's scoring cap), leaving out
    digits and the everyday words of `recall.lexicon`: how many, and the most frequent."""
    n = db.execute("SELECT count(*) FROM memories").fetchone()[0] or 1
    everyday = {porter.stem(w) for w in lexicon.COMMON}
    rows = db.execute("SELECT term, df FROM terms WHERE df > ? ORDER BY df DESC, term", (int(n * share),)).fetchall()
    words = [(t, df / n) for t, df in rows if not t.isdigit() and len(t) > 2 and t not in everyday]
    return {"share": share, "count": len(words), "top": [[t, round(f, 2)] for t, f in words[:top]]}


def measure(name: str, distractors: int, corpus: str | None, tmp: str) -> dict[str, Any]:
    """One set, with the `distractors` generated memories in `corpus` added to each of its stores."""
    top = 3 if labeled.is_locomo(name) else 2
    rows: list[dict[str, Any]] = []
    common: dict[str, Any] = {}
    for store, repo, prompts in labeled.stores(name, os.path.join(tmp, f"{name}-{distractors}"), corpus):
        result = evaluate.evaluate(repo, prompts, TODAY, os.path.join(tmp, f"cwd-{name}-{distractors}", store), top=top)
        rows += result["results"]
        with sqlite3.connect(paths.index_db(repo)) as db:
            common = common_words(db)
    summary = evaluate.summarize(rows, [0.0], top=top)
    summary.pop("latency_ms")
    return {"set": name, "note": labeled.note(name), "distractors": distractors, "top": top, "summary": summary,
            "common": common}


def line(m: dict[str, Any]) -> list[str]:
    s, k = m["summary"], m["top"]
    kinds = "; ".join(f"{kind} " + (f"silence {v['silence']:.2f}" if "silence" in v else f"hit@{k} {v[f'hit@{k}']:.2f}")
                      + f" (n={v['n']})" for kind, v in s["per_kind"].items())
    c = m["common"]
    return [f"{m['set']} ({m['note']}) +{m['distractors']} distractors: hit@{k} {s[f'hit@{k}']}, silence {s['silence']}",
            f"  {kinds}",
            f"  ranking before the decision top{k} {s['ranked'][f'top{k}']}; plain BM25 top{k} {s['plain'][f'top{k}']},"
            f" top10 {s['plain']['top10']}; misses by cause {s['causes']}",
            f"  store    {c['count']} words in more than {c['share']:.0%} of the memories"
            + (": " + ", ".join(f"{t} {f:.0%}" for t, f in c["top"]) if c["top"] else "")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default=",".join(labeled.SETS))
    ap.add_argument("--distractors", default="0", help="comma-separated counts of generated memories to add")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--locomo", action="append", default=[], metavar="DIR",
                    help="also measure a folder in LoCoMo's format (another half: judged); "
                         "../shared/data/locomo-* folders are found without it")
    args = ap.parse_args(argv)
    extra = [labeled.add_locomo(d) for d in args.locomo]
    args.sets = ",".join([*args.sets.split(","), *(n for n in extra if n not in args.sets.split(","))])
    counts = [int(x) for x in args.distractors.split(",")]
    out = []
    with tempfile.TemporaryDirectory(prefix="memrepo-quality-") as tmp:
        corpora: dict[int, str] = {}
        for n in counts:
            if n:
                corpora[n] = os.path.join(tmp, f"distractors-{n}")
                os.makedirs(corpora[n])
                genmem.write_corpus(corpora[n], n=n, seed=SEED, check="sample")
        for name in args.sets.split(","):
            if name not in labeled.SETS or not os.path.isdir(labeled.SETS[name]):
                print(f"{name}: not found ({labeled.SETS.get(name, 'no such set')})", file=sys.stderr)
                continue
            for n in counts:
                m = measure(name, n, corpora.get(n), tmp)
                out.append(m)
                if not args.json:
                    print("\n".join(line(m)), flush=True)
                shutil.rmtree(os.path.join(tmp, f"{name}-{n}"), ignore_errors=True)
    if args.json:
        print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
