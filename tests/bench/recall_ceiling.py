"""How far recall's targets are from what its ranking, and plain BM25, could reach at best, on
every labeled set through the prompt hook's own path (issue 36).

    python tests/bench/recall_ceiling.py [--sets blind,chat,...] [--json]

Each prompt runs once through `memrepo eval`'s path (`evaluation.evaluate`: each cwd made real,
each previous turn as the transcript tail reads it) with the decision's threshold at 0, so every
prompt with a candidate speaks; the probability the decision gave it is kept beside what it would
inject. Whether it speaks at a threshold t is then p >= t, with the same memories in the same
order, so one run gives the decision's whole curve:

- **always speaks** (t = 0): the most hit@2 any decision over recall's ranking could reach, and
  the silence that is left (prompts with no candidate at all);
- **now**: at `calibrate.THRESHOLD` (what `fit_recall.py` reports);
- **conv ≥ 0.97, general ≥ 0.90, all silence targets**: the most hit@2 at any threshold where
  that silence target is met (issue 36's targets; "agent" ≥ 0.95 and LoCoMo's "cross" ≥ 0.90 are
  part of "all"), or "never" ("-": the set has no such prompt); **silence ≥ 0.90**: the same where
  all the set's silent prompts together are silent at 0.90 or more, to set beside the floor below;
- **plain BM25**: every word OR-ed, `bm25()` (`evaluation.baseline.plain_scored`), in its first
  two (three on LoCoMo) and first ten: the first ten is what a perfect reordering of its
  candidates would reach. **plain BM25 + floor**: the same with a floor on its best score, the floor
  chosen on the set itself (the best (hit + silence) / 2 it could have; an upper bound of that
  baseline), and the most hit@2 it reaches with its silence at 0.90 or more.

LoCoMo is scored by R@3 (an evidence turn among the first three); its adversarial questions
(no target) are left out, as `fit_recall.py` leaves them out. Decay as of 2026-11-30.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import labeled  # noqa: E402

from memrepo.base import paths  # noqa: E402
from memrepo.evaluation import baseline, evaluate  # noqa: E402
from memrepo.recall import calibrate, decide, rank  # noqa: E402

TODAY = time.mktime((2026, 11, 30, 0, 0, 0, 0, 0, -1))
TARGETS = {"conversational": 0.97, "general": 0.90, "agent": 0.95, "cross": 0.90}
HIT_TARGET = 0.90
GRID = [i / 100 for i in range(0, 101)]


def top_k(name: str) -> int:
    return 3 if labeled.is_locomo(name) else 2


def collect(name: str, tmp: str) -> list[dict[str, Any]]:
    """Each prompt of the set: its kind, whether what recall injects when it speaks is a hit, the
    decision's p, and plain BM25's best score and reach."""
    k = top_k(name)
    out: list[dict[str, Any]] = []
    judged: list[float | None] = []
    original_decide, original_p, threshold = decide.decide, rank._p_with_predecessors, calibrate.THRESHOLD

    def traced_decide(*args: Any, **kwargs: Any) -> Any:
        judged.append(None)
        return original_decide(*args, **kwargs)

    def traced_p(hits: Any, q: Any) -> float:
        p = original_p(hits, q)
        judged[-1] = p
        return p

    decide.decide, rank._p_with_predecessors, calibrate.THRESHOLD = traced_decide, traced_p, 0.0
    try:
        for store, repo, rows in labeled.stores(name, os.path.join(tmp, name)):
            judged.clear()
            result = evaluate.evaluate(repo, rows, TODAY, os.path.join(tmp, "cwd", name, store), top=k)
            with sqlite3.connect(paths.index_db(repo)) as db:
                for row, r, p in zip(rows, result["results"], judged):
                    if r["kind"] == "adversarial":
                        continue
                    plain = baseline.plain_scored(db, row["prompt"], baseline.TOP)
                    out.append({"kind": r["kind"], "expect": r["expect"], "ok_if_speaks": r["ok"] and bool(r["got"]),
                                "speaks_at_0": bool(r["got"]), "p": p if p is not None else -1.0,
                                "plain_best": plain[0][1] if plain else None,
                                "plain_topk": any(e in [i for i, _ in plain[:k]] for e in r["expect"]),
                                "plain_top10": any(e in [i for i, _ in plain] for e in r["expect"])})
    finally:
        decide.decide, rank._p_with_predecessors, calibrate.THRESHOLD = original_decide, original_p, threshold
    return out


def _expecting(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if r["kind"] not in evaluate.SILENT_KINDS and r["expect"]]


def _silent(rows: list[dict[str, Any]], kind: str | None = None) -> list[dict[str, Any]]:
    return [r for r in rows if r["kind"] in evaluate.SILENT_KINDS and (kind is None or r["kind"] == kind)]


def _share(n: int, d: int) -> float | None:
    return n / d if d else None


def at(rows: list[dict[str, Any]], t: float) -> dict[str, float | None]:
    """Hit and silence per kind when the decision speaks at p >= t."""
    def speaks(r: dict[str, Any]) -> bool:
        return r["speaks_at_0"] and r["p"] >= t
    exp = _expecting(rows)
    out = {"hit": _share(sum(speaks(r) and r["ok_if_speaks"] for r in exp), len(exp)),
           "silence": _share(sum(not speaks(r) for r in _silent(rows)), len(_silent(rows)))}
    for kind in sorted({r["kind"] for r in _silent(rows)}):
        out[kind] = _share(sum(not speaks(r) for r in _silent(rows, kind)), len(_silent(rows, kind)))
    return out


def _meets(point: dict[str, float | None], kinds: tuple[str, ...]) -> bool:
    return all(point.get(kind) is None or (point[kind] or 0.0) >= TARGETS[kind] for kind in kinds)


def best_hit(rows: list[dict[str, Any]], kinds: tuple[str, ...]) -> float | str | None:
    """The most hit@k at a threshold where every silence target of `kinds` is met (None: at none;
    "-" when the set has no prompt of those kinds)."""
    if not any(r["kind"] in kinds for r in rows):
        return "-"
    hits = [p["hit"] or 0.0 for p in (at(rows, t) for t in GRID) if _meets(p, kinds)]
    return max(hits) if hits else None


def plain_floor(rows: list[dict[str, Any]]) -> dict[str, float | None]:
    """Plain BM25 with a floor on its best score, the floor chosen on these rows."""
    exp, sil = _expecting(rows), _silent(rows)
    floors = sorted({r["plain_best"] for r in rows if r["plain_best"] is not None}) + [float("inf")]

    def point(f: float) -> tuple[float, float]:
        hit = sum(r["plain_topk"] and r["plain_best"] is not None and r["plain_best"] >= f for r in exp)
        quiet = sum(r["plain_best"] is None or r["plain_best"] < f for r in sil)
        return hit / max(1, len(exp)), quiet / max(1, len(sil))

    points = [point(f) for f in [float("-inf")] + floors]
    best = max(points, key=lambda hs: (hs[0] + hs[1]) / 2)
    quiet_enough = [h for h, s in points if s >= 0.90]
    return {"hit": best[0], "silence": best[1], "hit_at_silence_90": max(quiet_enough) if quiet_enough else None}


def best_hit_quiet(rows: list[dict[str, Any]], share: float = 0.90) -> float | None:
    """The most hit@k at a threshold where the set's silent prompts are silent at `share` or more."""
    hits = [p["hit"] or 0.0 for p in (at(rows, t) for t in GRID) if (p["silence"] or 0.0) >= share]
    return max(hits) if hits else None


def summary(name: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    exp = _expecting(rows)
    return {
        "set": name, "note": labeled.note(name), "expecting": len(exp), "silent": len(_silent(rows)),
        "always": at(rows, 0.0), "now": at(rows, calibrate.THRESHOLD),
        "best_hit": {"conversational": best_hit(rows, ("conversational",)), "general": best_hit(rows, ("general",)),
                     "all": best_hit(rows, tuple(TARGETS)), "silence90": best_hit_quiet(rows)},
        "plain": {"topk": _share(sum(r["plain_topk"] for r in exp), len(exp)),
                  "top10": _share(sum(r["plain_top10"] for r in exp), len(exp))},
        "plain_floor": plain_floor(rows),
    }


def _f(v: float | str | None) -> str:
    return "never" if v is None else v if isinstance(v, str) else f"{v:.2f}"


def table(sums: list[dict[str, Any]]) -> list[str]:
    lines = ["| set | | always speaks: hit / silence | now: hit / silence | most hit with conv ≥ 0.97 / general ≥ 0.90"
             " / all silence targets / silence ≥ 0.90 | plain BM25 top 2 / top 10 | plain BM25 + floor: hit / silence,"
             " hit at silence ≥ 0.90 |",
             "|---|---|---|---|---|---|---|"]
    for s in sums:
        a, n, b, pf = s["always"], s["now"], s["best_hit"], s["plain_floor"]
        lines.append(f"| {s['set']} ({s['expecting']}) | {s['note']} | {_f(a['hit'])} / {_f(a['silence'])}"
                     f" | {_f(n['hit'])} / {_f(n['silence'])} | {_f(b['conversational'])} / {_f(b['general'])} / {_f(b['all'])}"
                     f" / {_f(b['silence90'])}"
                     f" | {_f(s['plain']['topk'])} / {_f(s['plain']['top10'])}"
                     f" | {_f(pf['hit'])} / {_f(pf['silence'])}, {_f(pf['hit_at_silence_90'])} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default=",".join(labeled.SETS), help="comma-separated set names (default: every set here)")
    ap.add_argument("--json", action="store_true", help="print the summaries as JSON")
    args = ap.parse_args(argv)
    names = [n for n in args.sets.split(",") if n]
    unknown = [n for n in names if n not in labeled.SETS]
    if unknown:
        ap.error(f"unknown set(s) {', '.join(unknown)}; known: {', '.join(labeled.SETS)}")
    sums = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            if not os.path.isdir(labeled.SETS[name]):
                print(f"{name}: {labeled.SETS[name]} is not here; skipped", file=sys.stderr)
                continue
            sums.append(summary(name, collect(name, tmp)))
            print(f"{name}: done", file=sys.stderr)
    print(json.dumps(sums, indent=1) if args.json else "\n".join(table(sums)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
