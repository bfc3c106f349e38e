"""Alternatives to recall's ranking and decision, measured offline on every labeled set.

    python tests/bench/recall_offline.py                 # every alternative, every set
    python tests/bench/recall_offline.py --only shape    # one of them

Each set's prompts run once through the hook's own path (`recall.decide` with its cwd made real,
as `fit_recall.py` runs them), keeping the first JUDGED candidates of each with their scores and
decision features. Each alternative then re-ranks or re-decides those candidates in seconds, and
prints per set what it would give beside what recall gives now: hit@2 (R@3 on LoCoMo) of the
prompts that expect a memory, and silence per silent kind. Fitted alternatives are fitted on
`labeled.FIT` only; every line says whether its set was fitted on.

The alternatives are the ones issue 36 tried and did not keep (docs/recall.md, "Tried and not
kept"), so that the next attempt starts from their figures:

- `own-first`: a memory holding one of the prompt's own words ranks before every memory only the
  previous turn's words found (DESIGN's rule that the previous turn never replaces the subject,
  applied to the order, not only to what is kept);
- `reranker`: a pairwise logistic reranker over each candidate's features (relevance over the
  query's maximum, idf coverage and where it matched, priority, scope, own words), fitted on FIT;
- `proximity`: a bonus for pairs of consecutive prompt terms that occur within two tokens of each
  other in the memory (FTS5 `NEAR`);
- `shape`: four features of the prompt's shape added to the decision and refitted (first person
  singular, a demonstrative, a leading question word, a question mark);
- `threshold`: the decision's trade-off as its threshold moves;
- `fusion`: reciprocal-rank fusion of recall's candidates with plain BM25's first ten
  (`evaluation.baseline.plain`): each memory scores 1 / (c + its place) in recall's order plus w /
  (c + its place) in plain BM25's, for c in 1 and 5 and w in 0.25 and 0.5.
"""

from __future__ import annotations

import argparse
import math
import os
import sqlite3
import sys
import tempfile
from typing import Any, Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fit_recall  # noqa: E402
import labeled  # noqa: E402

from memrepo.evaluation import baseline, checkouts, evaluate  # noqa: E402
from memrepo.base import paths  # noqa: E402
from memrepo.recall import calibrate, decide, rank  # noqa: E402
from memrepo.recall.clean import split_prompt, tokenize  # noqa: E402

JUDGED = 15
SILENT = evaluate.SILENT_KINDS
ALTERNATIVES = ("own-first", "reranker", "proximity", "shape", "threshold", "fusion")

# Closed classes of function words in the languages recall reads (a fact of each language, not
# of any set): first person singular, demonstratives, and the words a question starts with.
MINE = frozenset("i me my mine myself im ive id eu meu minha meus minhas mim yo mi mis ik mijn mij ich mein meine"
                 " mich mir je moi mon ma mes".split())
DEICTIC = frozenset("this that these those here isso isto esse essa este esta aqui esto eso aca dit dat deze die hier"
                    " dies diese ceci cela ici".split())
ASKING = frozenset("what how why when where which who explain que como porque quando onde qual wat hoe waarom wanneer"
                   " waar welke was wie warum quoi comment pourquoi".split())


def collect(names: list[str], tmp: str) -> list[dict[str, Any]]:
    """One record per prompt: the set, kind, expected ids, terms, and the first JUDGED candidates."""
    rank.JUDGED = JUDGED
    out = []
    for name in names:
        for store, repo, rows in labeled.stores(name, os.path.join(tmp, name)):
            db_path = paths.index_db(repo)
            with sqlite3.connect(db_path) as db:
                where = checkouts.Checkouts.of_store(os.path.join(tmp, "cwd", name, store), db)
            for row in rows:
                why: list[Any] = []
                d = decide.decide(repo, row["prompt"], cwd=where.cwd(row.get("cwd")),
                                  previous=evaluate.previous_text(row), today=fit_recall.TODAY, explain=why)
                cands = [{"id": h.id, "score": h.score, "scope": h.scope, "priority": h.priority, "own": h.own,
                          "matched": dict(h.matched), "f": dict(h.features)} for h, _ in why if h is not None]
                out.append({"set": name, "db": db_path, "kind": row["kind"], "expect": row.get("expect") or [],
                            "prompt": row["prompt"], "terms": d.terms, "previous": d.context_terms, "cands": cands})
    return out


def expecting(r: dict[str, Any]) -> bool:
    return r["kind"] not in SILENT and bool(r["expect"])


def judge(records: list[dict[str, Any]], order: Callable[[dict[str, Any]], list[dict[str, Any]]] | None = None,
          speaks: Callable[[dict[str, Any]], bool] | None = None) -> dict[str, dict[str, float]]:
    """Per set: hit@k of expecting prompts and silence per silent kind, for a ranking and decision
    (None: recall's own), the runner-up rule as recall applies it."""
    tally: dict[str, dict[str, list[int]]] = {}
    for r in records:
        if r["kind"] == "adversarial":
            continue
        cands = order(r) if order else r["cands"]
        speak = bool(cands) and (speaks(r) if speaks else cands[0]["f"].get("lnrel") is not None
                                 and calibrate.p_inject(cands[0]["f"]) >= calibrate.THRESHOLD)
        t = tally.setdefault(r["set"], {})
        if expecting(r):
            best = cands[0]["score"] if cands else 0.0
            shown = [c["id"] for i, c in enumerate(cands)
                     if not i or (c["score"] >= calibrate.RUNNER_UP * best and c["scope"] == 1.0)][:fit_recall.top_k(r["set"])]
            cell = t.setdefault("hit", [0, 0])
            cell[0] += speak and any(e in shown for e in r["expect"])
        elif r["kind"] in SILENT:
            cell = t.setdefault(r["kind"], [0, 0])
            cell[0] += not speak
        else:
            continue
        cell[1] += 1
    return {s: {k: v[0] / v[1] for k, v in t.items() if v[1]} for s, t in tally.items()}


def ranking_reach(records: list[dict[str, Any]], order: Callable[[dict[str, Any]], list[dict[str, Any]]] | None = None
                  ) -> dict[str, float]:
    """Per set: the share of expecting prompts with a target in the ranking's first k, no decision."""
    got: dict[str, list[int]] = {}
    for r in records:
        if not expecting(r):
            continue
        ids = [c["id"] for c in (order(r) if order else r["cands"])][:fit_recall.top_k(r["set"])]
        cell = got.setdefault(r["set"], [0, 0])
        cell[0] += any(e in ids for e in r["expect"])
        cell[1] += 1
    return {s: v[0] / v[1] for s, v in got.items()}


def own_first(r: dict[str, Any]) -> list[dict[str, Any]]:
    return sorted(r["cands"], key=lambda c: not c["own"]) if r["previous"] else r["cands"]


RERANK = ("lnrel", "cov", "covall", "subj", "ent", "tech", "common", "owncov", "nm", "scope", "techw")


def _rerank_features(r: dict[str, Any], c: dict[str, Any]) -> list[float]:
    own = set(r["terms"])
    held = sum(1 for t in c["matched"] if t in own)
    return [c["f"][k] for k in RERANK] + [math.log(max(c["priority"], 1e-6)), float(c["own"]), held / max(1, len(own))]


def reranker(records: list[dict[str, Any]]) -> Callable[[dict[str, Any]], list[dict[str, Any]]]:
    """A pairwise logistic reranker of the judged candidates, fitted on FIT's expecting prompts."""
    x: list[list[float]] = []
    y: list[float] = []
    w: list[float] = []
    fit_rows = [r for r in records if r["set"] in labeled.FIT and expecting(r)]
    per_set = {s: sum(1 for r in fit_rows if r["set"] == s) for s in labeled.FIT}
    for r in fit_rows:
        judged = [c for c in r["cands"] if c["f"]]
        targets = [i for i, c in enumerate(judged) if c["id"] in r["expect"]][:1]
        others = [i for i in range(len(judged)) if i not in targets]
        for p in targets:
            fp = _rerank_features(r, judged[p])
            for n in others:
                d = [a - b for a, b in zip(fp, _rerank_features(r, judged[n]))]
                for sign in (1.0, -1.0):
                    x.append([sign * v for v in d])
                    y.append(1.0 if sign > 0 else 0.0)
                    w.append(100.0 / per_set[r["set"]] / len(others))
    beta = fit_recall.fit(x, y, w, l2=0.1)[1:]

    def order(r: dict[str, Any]) -> list[dict[str, Any]]:
        judged = [c for c in r["cands"] if c["f"]]
        rest = r["cands"][len(judged):]
        return sorted(judged, key=lambda c: -sum(b * v for b, v in zip(beta, _rerank_features(r, c)))) + rest
    return order


def proximity(alpha: float) -> Callable[[dict[str, Any]], list[dict[str, Any]]]:
    dbs: dict[str, sqlite3.Connection] = {}
    near: dict[tuple[int, str], int] = {}

    def pairs_near(r: dict[str, Any], c: dict[str, Any]) -> int:
        key = (id(r), c["id"])
        if key not in near:
            db = dbs.get(r["db"]) or dbs.setdefault(r["db"], sqlite3.connect(r["db"]))
            terms = [t for t in r["terms"] if "." not in t]
            n = 0
            for a, b in zip(terms, terms[1:]):
                expr = f'NEAR("{a}" "{b}", 2)'
                n += db.execute("SELECT 1 FROM fts JOIN memories m ON m.rowid = fts.rowid WHERE fts MATCH ? AND m.id = ?",
                                (expr, c["id"])).fetchone() is not None
            near[key] = n
        return near[key]

    def order(r: dict[str, Any]) -> list[dict[str, Any]]:
        judged = [c for c in r["cands"] if c["f"]]
        return sorted(judged, key=lambda c: -c["score"] * (1 + alpha * pairs_near(r, c))) + r["cands"][len(judged):]
    return order


def fusion(c: float, w: float) -> Callable[[dict[str, Any]], list[dict[str, Any]]]:
    dbs: dict[str, sqlite3.Connection] = {}
    plain: dict[int, list[str]] = {}

    def order(r: dict[str, Any]) -> list[dict[str, Any]]:
        if id(r) not in plain:
            db = dbs.get(r["db"]) or dbs.setdefault(r["db"], sqlite3.connect(r["db"]))
            plain[id(r)] = baseline.plain(db, r["prompt"])
        score: dict[str, float] = {}
        for i, cand in enumerate(r["cands"]):
            score[cand["id"]] = score.get(cand["id"], 0.0) + 1.0 / (c + i + 1)
        for i, mid in enumerate(plain[id(r)]):
            score[mid] = score.get(mid, 0.0) + w / (c + i + 1)
        by_id = {cand["id"]: cand for cand in r["cands"]}
        return [by_id.get(mid) or {"id": mid, "score": 0.0, "scope": 1.0, "f": {}}
                for mid in sorted(score, key=lambda mid: (-score[mid], mid))]
    return order


def shape_of(prompt: str) -> dict[str, float]:
    words = tokenize(split_prompt(prompt)[0])
    own = split_prompt(prompt)[0].rstrip()
    return {"mine": float(any(t in MINE for t in words)), "deictic": float(any(t in DEICTIC for t in words)),
            "asking": float(bool(words) and words[0] in ASKING), "question": float(own.endswith("?"))}


def shape(records: list[dict[str, Any]]) -> tuple[Callable[[dict[str, Any]], bool], str]:
    """The decision refitted with the prompt-shape features, by fit_recall's own fit."""
    extra = {"mine": 1, "deictic": 1, "asking": -1, "question": 0}
    features, signs = calibrate.FEATURES, calibrate.SIGNS
    calibrate.FEATURES = tuple(features) + tuple(extra)
    calibrate.SIGNS = dict(signs, **extra)
    try:
        fr = []
        for r in records:
            s = shape_of(r["prompt"])
            fr.append({"set": r["set"], "kind": r["kind"], "expect": r["expect"],
                       "cands": [(c["id"], c["score"], dict(c["f"], **s), c["scope"]) for c in r["cands"] if c["f"]]})
        fitting = [x for x in fr if x["set"] in labeled.FIT]
        intercept, coef = fit_recall.fitted(fitting)
        threshold = fit_recall.best_threshold(fitting, intercept, coef)
    finally:
        calibrate.FEATURES, calibrate.SIGNS = features, signs
    shapes = {id(r): shape_of(r["prompt"]) for r in records}

    def speaks(r: dict[str, Any]) -> bool:
        f = dict(r["cands"][0]["f"], **shapes[id(r)])
        return fit_recall._p(intercept, coef, f) >= threshold
    used = ", ".join(f"{k} {v:+.2f}" for k, v in coef.items() if k in extra)
    return speaks, f"refitted: {used}; threshold {threshold:.2f}"


def line(name: str, now: dict[str, float], alt: dict[str, float]) -> str:
    keys = ["hit"] + sorted(k for k in now if k != "hit")
    cells = " ".join(f"{k[:6]} {now[k]:.2f}->{alt.get(k, float('nan')):.2f}" for k in keys if k in now)
    return f"  {name:10s} ({'fitted on' if name in labeled.FIT else 'judged'}) {cells}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=ALTERNATIVES, action="append", help="run only these alternatives")
    ap.add_argument("--sets", default=",".join(labeled.SETS), help="sets to run (default: all that exist here)")
    args = ap.parse_args(argv)
    names = labeled.available(args.sets.split(","))
    wanted = args.only or list(ALTERNATIVES)
    with tempfile.TemporaryDirectory(prefix="memrepo-offline-") as tmp:
        records = collect(names, tmp)
        now = judge(records)
        reach = ranking_reach(records)
        for alt in wanted:
            if alt in ("own-first", "reranker", "proximity", "fusion"):
                orders = {"own-first": [("", own_first)], "reranker": [("", reranker(records))],
                          "proximity": [(f" alpha {a}", proximity(a)) for a in (0.1, 0.3)],
                          "fusion": [(f" c {c} w {w}", fusion(c, w)) for c in (1, 5) for w in (0.25, 0.5)]}[alt]
                for label, order in orders:
                    print(f"{alt}{label}: ranking's first k (no decision), now -> with it")
                    got = ranking_reach(records, order)
                    for name in names:
                        print(f"  {name:10s} ({'fitted on' if name in labeled.FIT else 'judged'}) "
                              f"{reach.get(name, 0):.3f} -> {got.get(name, 0):.3f}")
            elif alt == "shape":
                speaks, how = shape(records)
                print(f"shape ({how}): through the decision, now -> with it")
                alt_judged = judge(records, speaks=speaks)
                for name in names:
                    print(line(name, now[name], alt_judged[name]))
            else:
                for t in (0.5, 0.6, 0.8):
                    print(f"threshold {calibrate.THRESHOLD} -> {t}: through the decision, now -> with it")
                    at = judge(records, speaks=lambda r, t=t: calibrate.p_inject(r["cands"][0]["f"]) >= t)
                    for name in names:
                        print(line(name, now[name], at[name]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
