"""Recall quality on the labeled sets, side by side: memrepo's recall (the hook's code path) against
a naive "OR the words, top 3" full-text search that never abstains, on each set alone and with
generated distractor memories added (`genmem.py`).

    python tests/bench/recall_quality.py [--sets dev,recall,held,blind,chat] [--distractors 0,1000,10000]

`dev` is ../shared/eval/dev, the set recall was tuned on: its figures say so. Each set's
prompts are scored as `memrepo eval` scores them (hit@2, silence per kind) plus hit@3 (a
listed memory among the first three), for both searches. Decay is evaluated as of 2026-11-30.
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
from memrepo.recall import clean, paths  # noqa: E402
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


def naive_top(db: sqlite3.Connection, prompt: str, k: int = 3) -> list[str]:
    """The naive baseline: every word of the prompt OR'ed, FTS5's bm25 over all columns, top k."""
    words = sorted(set(clean.tokenize(prompt[:clean.MAX_INPUT_CHARS])))
    if not words:
        return []
    expr = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
    rows = db.execute("SELECT m.id FROM fts JOIN memories m ON m.rowid = fts.rowid WHERE fts MATCH ?"
                      " ORDER BY bm25(fts) LIMIT ?", (expr, k)).fetchall()
    return [r[0] for r in rows]


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
            naive = [naive_top(db, r["prompt"]) for r in rows]
        return {"set": name, "distractors": distractors, "summary": result["summary"],
                "memrepo": _score(rows, ours), "naive": _score(rows, naive)}
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
    finally:
        for corpus in corpora.values():
            shutil.rmtree(corpus, ignore_errors=True)
    if args.json:
        print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
