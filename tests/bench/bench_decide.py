"""Recall's in-process decision over many generated prompts of one memory repository, for one or
more checkouts side by side (each checkout's own `tools/` in a process of its own).

Prompts come from the repository's memories, every (N/40)th by id: four shapes (the title as a
question, the first entity asked about, entity + a title word, "before I touch ...") and 16 long
prompts (two to six titles run together). Each prompt is decided three times in one process and
its best time kept (the first call also pays the imports). Prints the median, p90 and slowest
decision for each group, how many prompts inject anything, and how often the memory a prompt was
made from is among those injected. Decay is evaluated as of a fixed day.

    python tests/bench/bench_decide.py --repo /tmp/bench/repo-100000 [--checkouts .,/tmp/before]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TODAY = 1.7e9
ONE = r'''
import json, sqlite3, sys
sys.path.insert(0, sys.argv[1] + "/tools")
from memrepo.base import paths
from memrepo.recall import decide
repo = sys.argv[2]
with sqlite3.connect(f"file:{paths.index_db(repo)}?mode=ro", uri=True) as db:
    rows = db.execute("SELECT m.id, m.title, f.entities FROM memories m JOIN fts f ON f.rowid = m.rowid"
                      " ORDER BY m.id").fetchall()
    titles = [r[0] for r in db.execute("SELECT title FROM memories ORDER BY rowid LIMIT 2000")][::97]
step = max(1, len(rows) // 40)
shaped = []
for k, (mid, title, ent) in enumerate(rows[::step][:40]):
    e = (ent or title).split(" ; ")[0]
    shapes = [f"{title} — is that still how it works?", f"what do we know about {e}?",
              f"{e} {title.split()[-1]}", f"before I touch {e}: {title.lower()}?"]
    shaped.append((shapes[k % 4], mid))
long = [(" ".join(titles[i:i + k]), None) for k in (2, 3, 4, 6) for i in range(0, 12, 3)]
out = {}
for group, prompts in (("shaped", shaped), ("long", long)):
    res = []
    for prompt, source in prompts:
        times = []
        for _ in range(3):
            d = decide.decide(repo, prompt, cwd="/", today=float(sys.argv[3]))
            times.append(d.ms)
        ids = [h.id for h in d.hits]
        res.append({"prompt": prompt, "ms": min(times), "ids": ids, "source": source})
    out[group] = res
print(json.dumps(out))
'''


def run(checkout: str, repo: str) -> dict[str, list[dict[str, object]]]:
    proc = subprocess.run([sys.executable, "-c", ONE, os.path.abspath(checkout), repo, str(TODAY)],
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", required=True, help="a memory repository with its cache built")
    ap.add_argument("--checkouts", default=ROOT, help="comma-separated memrepo checkouts (default: this one)")
    ap.add_argument("--out", help="write every prompt's result as JSON to this file")
    args = ap.parse_args(argv)
    results = {}
    for checkout in args.checkouts.split(","):
        results[checkout] = got = run(checkout, args.repo)
        for group, res in got.items():
            ms = sorted(float(r["ms"]) for r in res)  # type: ignore[arg-type]
            injecting = sum(1 for r in res if r["ids"])
            found = sum(1 for r in res if r["source"] and r["source"] in r["ids"])  # type: ignore[operator]
            print(f"{checkout}: {group:<6} {len(res)} prompts, decision median {statistics.median(ms):.2f} ms,"
                  f" p90 {ms[int(len(ms) * 0.9)]:.2f} ms, slowest {ms[-1]:.2f} ms; {injecting} inject"
                  + (f", the source memory among them {found}" if group == "shaped" else ""))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
