"""Recall quality on the labeled sets, side by side: memrepo's recall (the hook's code path) against
a naive "OR the words, top 3" full-text search that never abstains, on each set alone and with
generated distractor memories added (`genmem.py`).

    python tests/bench/recall_quality.py [--sets dev,recall,held,blind,chat] [--distractors 0,1000,10000]

`dev` is ../shared/eval/dev, the set recall was tuned on: its figures say so. Each set's
prompts are scored as `memrepo eval` scores them (hit@2, silence per kind) plus hit@3 (a
listed memory among the first three), for both searches. Decay is evaluated as of 2026-11-30.
Each line also gives the set's lexical reach (the naive search holds an expected memory among its
first 10, or at all: what no ranking of the words' matches exceeds) and the store's words past
recall's scoring cap (in more than 25% of the memories), which is where generated distractors
weigh most.
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
import benchlib  # noqa: E402,F401  (puts tools/ on the path)
import genmem  # noqa: E402

sys.path.insert(0, os.path.join(benchlib.ROOT, "tools"))
from memrepo.evaluation import evaluate  # noqa: E402
from memrepo.recall import clean, lexicon, paths, porter, search  # noqa: E402
from memrepo.store import index  # noqa: E402

SETS = {
    "dev": os.path.join(os.path.dirname(benchlib.ROOT), "shared", "eval", "dev"),
    "recall": os.path.join(benchlib.ROOT, "tests", "data", "recall"),
    "held": os.path.join(benchlib.ROOT, "tests", "data", "recall_held"),
    "blind": os.path.join(benchlib.ROOT, "tests", "data", "recall_blind"),
    "chat": os.path.join(benchlib.ROOT, "tests", "data", "recall_chat"),
}
TUNED = {"dev": "tuning set", "recall": "seen while tuning", "held": "seen while tuning (issue 17)"}
TODAY = time.mktime((2026, 11, 30, 0, 0, 0, 0, 0, -1))
SEED = 7
REACH_LIMIT = 100_000  # the naive search's matches read for lexical reach: all of them


def naive_top(db: sqlite3.Connection, prompt: str, k: int = 3) -> list[str]:
    """The naive baseline: every word of the prompt OR'ed, FTS5's bm25 over all columns, top k
    (with a large k, every memory holding one of the prompt's words, best first)."""
    words = sorted(set(clean.tokenize(prompt[:clean.MAX_INPUT_CHARS])))
    if not words:
        return []
    expr = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
    rows = db.execute("SELECT m.id FROM fts JOIN memories m ON m.rowid = fts.rowid WHERE fts MATCH ?"
                      " ORDER BY bm25(fts) LIMIT ?", (expr, k)).fetchall()
    return [r[0] for r in rows]


def _reach(rows: list[dict[str, Any]], found: list[list[str]]) -> dict[str, float]:
    """Lexical reach: the share of prompts expecting a memory for which the naive search holds
    one of them among its first 10, and anywhere (the memory shares a word with the prompt).
    No ranking of the words' matches does better than `anywhere`, and one that reorders only
    the first ten does no better than `top10`."""
    pairs = [(r, f) for r, f in zip(rows, found) if r["kind"] not in evaluate.SILENT_KINDS]
    if not pairs:
        return {}
    return {"n": len(pairs),
            "top10": sum(any(e in f[:10] for e in r["expect"]) for r, f in pairs) / len(pairs),
            "anywhere": sum(any(e in f for e in r["expect"]) for r, f in pairs) / len(pairs)}


def common_words(db: sqlite3.Connection, share: float = search.COMMON_DF_SHARE, top: int = 6) -> dict[str, Any]:
    """The store's words in more than `share` of its memories (recall's scoring cap), leaving out
    digits and the everyday words of `recall.lexicon`: how many, and the most frequent."""
    n = db.execute("SELECT count(*) FROM memories").fetchone()[0] or 1
    everyday = {porter.stem(w) for w in lexicon.COMMON}
    rows = db.execute("SELECT term, df FROM terms WHERE df > ? ORDER BY df DESC, term", (int(n * share),)).fetchall()
    words = [(t, df / n) for t, df in rows if not t.isdigit() and len(t) > 2 and t not in everyday]
    return {"share": share, "count": len(words), "top": [[t, round(f, 2)] for t, f in words[:top]]}


def _score(rows: list[dict[str, Any]], got: list[list[str]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in evaluate.KINDS:
        pairs = [(r, g) for r, g in zip(rows, got) if r["kind"] == kind]
        if not pairs:
            continue
        if kind in evaluate.SILENT_KINDS:
            out[kind] = {"n": len(pairs), "silence": sum(not g for _, g in pairs) / len(pairs)}
        else:
            out[kind] = {"n": len(pairs),
                         "hit@2": sum(any(e in g[:2] for e in r["expect"]) for r, g in pairs) / len(pairs),
                         "hit@3": sum(any(e in g[:3] for e in r["expect"]) for r, g in pairs) / len(pairs)}
    return out


def measure(name: str, distractors: int, corpus: str | None) -> dict[str, Any]:
    """One set, with the `distractors` generated memories in `corpus` added to its store."""
    base = SETS[name]
    rows = evaluate.load_prompts(os.path.join(base, "prompts.jsonl"))
    tmp = tempfile.mkdtemp(prefix="memrepo-quality-")
    try:
        shutil.copytree(os.path.join(base, "memory"), os.path.join(tmp, "memory"))
        if distractors and corpus:
            for fname in os.listdir(corpus):
                if not os.path.exists(os.path.join(tmp, "memory", fname)):
                    shutil.copy(os.path.join(corpus, fname), os.path.join(tmp, "memory", fname))
        index.rebuild(tmp)
        result = evaluate._evaluate(tmp, rows, TODAY)
        by_id = {r["id"]: r for r in result["results"]}
        ours = [by_id[r["id"]]["got"] for r in rows]
        with sqlite3.connect(paths.index_db(tmp)) as db:
            found = [naive_top(db, r["prompt"], REACH_LIMIT) for r in rows]
            common = common_words(db)
        return {"set": name, "distractors": distractors, "summary": result["summary"],
                "memrepo": _score(rows, ours), "naive": _score(rows, [f[:3] for f in found]),
                "reach": _reach(rows, found), "common": common}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _line(m: dict[str, Any], who: str) -> str:
    parts = []
    for kind, row in m[who].items():
        if "silence" in row:
            parts.append(f"{kind} silence {row['silence']:.2f}")
        else:
            parts.append(f"{kind} hit@2 {row['hit@2']:.2f} hit@3 {row['hit@3']:.2f}")
    return f"  {who:8} " + "; ".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default="dev,recall,held,blind,chat")
    ap.add_argument("--distractors", default="0", help="comma-separated counts of generated memories to add")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    counts = [int(x) for x in args.distractors.split(",")]
    corpora: dict[int, str] = {}
    for n in counts:
        if n:
            corpora[n] = tempfile.mkdtemp(prefix="memrepo-distractors-")
            genmem.write_corpus(corpora[n], n=n, seed=SEED, check="sample")
    out = []
    try:
        for name in args.sets.split(","):
            if not os.path.isdir(SETS[name]):
                print(f"{name}: not found at {SETS[name]}", file=sys.stderr)
                continue
            for n in counts:
                m = measure(name, n, corpora.get(n))
                out.append(m)
                if not args.json:
                    s = m["summary"]
                    note = f" ({TUNED[name]})" if name in TUNED else " (not tuned on)"
                    print(f"{name}{note} +{n} distractors: hit@2 {s['hit@2']}, silence {s['silence']}")
                    print(_line(m, "memrepo"))
                    print(_line(m, "naive"))
                    r, c = m["reach"], m["common"]
                    if r:
                        print(f"  reach    an expected memory among the naive search's first 10 {r['top10']:.2f},"
                              f" sharing a word with the prompt {r['anywhere']:.2f} (n={r['n']})")
                    print(f"  store    {c['count']} words in more than {c['share']:.0%} of the memories"
                          + (": " + ", ".join(f"{t} {f:.0%}" for t, f in c["top"]) if c["top"] else ""))
    finally:
        for corpus in corpora.values():
            shutil.rmtree(corpus, ignore_errors=True)
    if args.json:
        print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
