"""An alternative to recall's scoring, measured and not kept: each term's bm25 weighed by how few
of the prompt's candidates hold it (an idf local to the candidates), so that words a store's
generated distractors made common still tell the right memory's siblings apart.

    python tests/bench/try_local_idf.py [--sets dev,held,recall,sre] [--alphas 0,0.3,0.6,1] [--distractors 0,10000]
    python tests/bench/try_local_idf.py --alphas 0 --capped 0.5,1,2    # the words past the cap only

A term's contribution becomes s × (1 − a + a·f), f = ln(1 + m/c) / ln(1 + m), with m the candidates
and c those holding the term; a = 0 is recall as it is. `--capped` leaves the scored terms as
they are and scores the words recall leaves out (in more than `search.COMMON_DF_SHARE` of the
store) in the candidates holding them, at beta × their weight × ln(1 + m/c). The scoring is swapped in this process only
(`search.relevance`), everything else is the hook's path (`memrepo eval`'s). Run on the fitting
sets only (`labeled.FIT`): an alternative that does not help them is not taken to the judged ones.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import genmem  # noqa: E402
import labeled  # noqa: E402

from memrepo.evaluation import evaluate  # noqa: E402
from memrepo.recall import search  # noqa: E402

TODAY = time.mktime((2026, 11, 30, 0, 0, 0, 0, 0, -1))
ALPHA = {"a": 0.0, "capped": 0.0}


def relevance(db: Any, terms: list[tuple[str, float]], limit: int = search.CANDIDATES,
              own: frozenset[str] | set[str] = frozenset(), lookups: Any = None, together: int = 1) -> dict[int, Any]:
    """`search.relevance` with each term's share weighed by the candidates holding it."""
    if not terms:
        return {}
    facts = lookups or search.Lookups(db, [t for t, _ in terms])
    cap = max(search.COMMON_DF_MIN, int(facts.n * search.COMMON_DF_SHARE))
    active = [(t, w) for t, w in terms if 0 < facts.dfs[t] <= cap]
    seeds = search._seeds(active, facts.dfs, facts.n) if active else []
    rowids = search._candidates(db, seeds, [t for t, _ in active], facts.dfs, limit, together) if seeds else []
    if not rowids:
        return {}
    found = {row[0]: search.Evidence(row) for row in db.execute(
        f"SELECT rowid, subjects, {search._COLUMNS} FROM memories WHERE rowid IN ({search._marks(len(rowids))})", rowids)}
    parts: list[tuple[int, str, float]] = []
    for i, rowid, s, where in search._hits(db, facts, active, rowids, None):
        term, weight = active[i]
        ev = found[rowid]
        parts.append((rowid, term, weight * s))
        ev.matched[term] = where
        ev.own = ev.own or term in own
    m, held = len(found), {}  # type: ignore[var-annotated]
    for _, term, _ in parts:
        held[term] = held.get(term, 0) + 1
    a = ALPHA["a"]
    for rowid, term, s in parts:
        f = math.log(1 + m / held[term]) / math.log(1 + m) if m > 1 else 1.0
        found[rowid].score += s * (1 - a + a * f)
    beta = ALPHA["capped"]
    for term, weight in terms if beta else []:
        if facts.dfs[term] <= cap:
            continue
        # a word past the cap scores nothing in recall; here the candidates holding it gain
        # beta x its weight x ln(1 + m / c): the fewer of them hold it, the more it tells apart
        holders = [r[0] for r in db.execute(f"SELECT rowid FROM fts WHERE fts MATCH ? AND rowid IN ({search._marks(m)})",
                                            [search.quote(term), *found])]
        for rowid in holders:
            found[rowid].score += beta * weight * math.log(1 + m / len(holders))
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default="dev,held,recall,sre")
    ap.add_argument("--alphas", default="0,0.3,0.6,1")
    ap.add_argument("--distractors", default="0,10000")
    ap.add_argument("--capped", default="0", help="betas for the words past the scoring cap, each with a = 0"
                    " (they then score beta x weight x ln(1 + m / c) in the candidates holding them)")
    args = ap.parse_args(argv)
    search.relevance = relevance  # type: ignore[assignment]
    knobs = [("a", float(x)) for x in args.alphas.split(",")]
    knobs += [("capped", float(x)) for x in args.capped.split(",") if float(x)]
    with tempfile.TemporaryDirectory(prefix="memrepo-localidf-") as tmp:
        corpus = os.path.join(tmp, "distractors")
        for name in labeled.available(args.sets.split(",")):
            for n in [int(x) for x in args.distractors.split(",")]:
                if n:
                    shutil.rmtree(corpus, ignore_errors=True)
                    os.makedirs(corpus)
                    genmem.write_corpus(corpus, n=n, seed=7, check="sample")
                built = labeled.stores(name, os.path.join(tmp, f"{name}-{n}"), corpus if n else None)
                top = 3 if labeled.is_locomo(name) else 2
                for knob, value in knobs:
                    ALPHA.update({"a": 0.0, "capped": 0.0})
                    ALPHA[knob] = value
                    rows: list[dict[str, Any]] = []
                    for store, repo, prompts in built:
                        rows += evaluate.evaluate(repo, prompts, TODAY,
                                                  os.path.join(tmp, f"cwd-{name}-{n}-{knob}{value}", store), top=top)["results"]
                    s = evaluate.summarize(rows, [0.0], top=top)
                    print(labeled.result_line(name, n, f"{knob}={value:.2f}", s, top), flush=True)
                shutil.rmtree(os.path.join(tmp, f"{name}-{n}"), ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
