"""How well the Stop hook's judge tells a used memory from an unused one, on a labeled set written
blind before the judge ran on it (tests/data/usage, over the memories of tests/data/recall_held).

    python tests/bench/report_usage.py [--json] [--failures]

Each case is a prompt, the memories recall injected, an honest agent's reply and the ids that
reply relied on (the labels). The judge is `memrepo.recall.usage.judge`, the code the Stop hook
runs, with the prompt's query terms as what the prompt already said. Prints precision and
recall of "used" over every (case, injected id) pair, and accuracy.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from memrepo.base import paths
from memrepo.recall import query, search, usage  # noqa: E402
from memrepo.store import index  # noqa: E402

DATA = os.path.join(ROOT, "tests", "data", "usage")
STORE = os.path.join(ROOT, "tests", "data", "recall_held", "memory")
SOURCE = ("labels: tests/data/usage, written blind by hand before the judge ran on them; "
          "replies are what an honest agent would write, not a model's output")


def measure() -> dict[str, Any]:
    cases = [json.loads(line) for line in open(os.path.join(DATA, "cases.jsonl"), encoding="utf-8") if line.strip()]
    tmp = tempfile.mkdtemp(prefix="memrepo-usage-")
    try:
        shutil.copytree(STORE, os.path.join(tmp, "memory"))
        index.rebuild(tmp)
        db = search.connect(paths.index_db(tmp))
        tp = fp = fn = tn = 0
        wrong = []
        try:
            for case in cases:
                said = usage.stems(query.build_query(case["prompt"]).terms)
                used, _ = usage.judge(db, case["injected"], said, case["reply"])
                for note_id in case["injected"]:
                    truth, guess = note_id in case["used"], note_id in used
                    tp += truth and guess
                    fp += guess and not truth
                    fn += truth and not guess
                    tn += not truth and not guess
                    if truth != guess:
                        wrong.append({"case": case["id"], "id": note_id, "labelled": truth, "judged": guess})
        finally:
            db.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    pairs = tp + fp + fn + tn
    return {"source": SOURCE, "cases": len(cases), "pairs": pairs, "tp": tp, "fp": fp, "fn": fn, "tn": tn,
            "precision": round(tp / (tp + fp), 3) if tp + fp else None,
            "recall": round(tp / (tp + fn), 3) if tp + fn else None,
            "accuracy": round((tp + tn) / pairs, 3) if pairs else None, "wrong": wrong}


def render(data: dict[str, Any], failures: bool = False) -> str:
    """The text report of `measure()`'s figures; `failures` lists the pairs the judge got wrong."""
    lines = [data["source"],
             f"{data['cases']} cases, {data['pairs']} (case, memory) pairs: precision of 'used' {data['precision']}, "
             f"recall {data['recall']}, accuracy {data['accuracy']} (tp {data['tp']}, fp {data['fp']}, fn {data['fn']}, tn {data['tn']})"]
    if failures:
        lines += [f"  {w['case']} {w['id']}: labelled {'used' if w['labelled'] else 'unused'}, judged "
                  f"{'used' if w['judged'] else 'unused'}" for w in data["wrong"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--failures", action="store_true", help="list the pairs the judge got wrong")
    args = ap.parse_args(argv)
    data = measure()
    print(json.dumps(data, indent=1) if args.json else render(data, failures=args.failures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
