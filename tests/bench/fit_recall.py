"""Fit recall's decision to speak (memrepo.recall.calibrate) on the fitting sets, and report it
on every set beside plain BM25.

    python tests/bench/fit_recall.py            # fit, print the constants, report every set
    python tests/bench/fit_recall.py --write    # ... and write the constants into calibrate.py
    python tests/bench/fit_recall.py --check    # exit 1 when calibrate.py differs from a fresh fit
    python tests/bench/fit_recall.py --grid STANDING=1,1.1,1.2   # the fitting sets' objective for
                                                # each value of one of rank's priors, each with its own fit

The fitting sets are `labeled.FIT`: the development set (../shared/eval/dev), tests/data/recall
and tests/data/recall_held, and LoCoMo's training half (../shared/data/locomo-train). Every other
set is judged only, and the report says which is which. For each prompt the hook's own code path
(`memrepo.recall.decide`, its cwd made real by `memrepo.evaluation.checkouts`) ranks the
candidates; the best one's features (`calibrate.features`) are one example, labeled 1 when the
prompt expects a memory and 0 when it expects silence (LoCoMo's adversarial questions, which
have no target, are left out). Each set weighs the same in the fit, whatever its size.

The model is an L2-regularised logistic regression over standardised features, solved by
Newton's method (deterministic: the same sets give the same constants). Each coefficient must
have the sign its feature's meaning gives it (`calibrate.SIGNS`), by an active set: while a
fitted coefficient has the wrong sign, the worst such feature is left out (its coefficient 0);
a left-out feature whose gradient says it would enter with its own sign is taken back. The threshold is the
one that maximises, averaged over the fitting sets, the mean of the share of expecting prompts
recalled (hit@2; R@3 on LoCoMo) and the share of silent prompts left silent.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sqlite3
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import labeled  # noqa: E402

from memrepo.evaluation import checkouts, evaluate  # noqa: E402
from memrepo.base import paths
from memrepo.recall import calibrate, decide, rank  # noqa: E402

TODAY = time.mktime((2026, 11, 30, 0, 0, 0, 0, 0, -1))
L2 = 1.0
CALIBRATE = os.path.join(labeled.ROOT, "tools", "memrepo", "recall", "calibrate.py")


def top_k(name: str) -> int:
    return 3 if labeled.is_locomo(name) else 2


def collect(name: str, tmp: str) -> list[dict[str, Any]]:
    """One record per prompt: its kind, what it expects and the candidates in score order."""
    out = []
    for store, repo, rows in labeled.stores(name, os.path.join(tmp, name)):
        with sqlite3.connect(paths.index_db(repo)) as db:
            where = checkouts.Checkouts.of_store(os.path.join(tmp, "cwd", name, store), db)
        for row in rows:
            why: list[Any] = []
            decide.decide(repo, row["prompt"], cwd=where.cwd(row.get("cwd")), previous=evaluate.previous_text(row),
                          today=TODAY, explain=why)
            cands = [(h.id, h.score, h.features, h.scope) for h, _ in why if h is not None]
            out.append({"set": name, "kind": row["kind"], "expect": row.get("expect") or [], "cands": cands})
    return out


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c and m[r][c]:
                f = m[r][c] / m[c][c]
                for k in range(c, n + 1):
                    m[r][k] -= f * m[c][k]
    return [m[i][n] / m[i][i] for i in range(n)]


def fit(x: list[list[float]], y: list[float], w: list[float], l2: float = L2) -> list[float]:
    """Weighted L2 logistic regression by Newton's method; [intercept, *coefficients]."""
    n = len(x[0]) + 1
    beta = [0.0] * n
    for _ in range(50):
        g = [0.0] * n
        h = [[0.0] * n for _ in range(n)]
        for xi, yi, wi in zip(x, y, w):
            row = [1.0] + xi
            z = sum(b * v for b, v in zip(beta, row))
            p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
            for i in range(n):
                g[i] += wi * (p - yi) * row[i]
                for j in range(i, n):
                    h[i][j] += wi * p * (1.0 - p) * row[i] * row[j]
        for i in range(n):
            for j in range(i):
                h[i][j] = h[j][i]
            if i:
                h[i][i] += l2
                g[i] += l2 * beta[i]
        step = _solve(h, g)
        beta = [b - s for b, s in zip(beta, step)]
        if max(abs(s) for s in step) < 1e-10:
            break
    return beta


def _gradient(beta: list[float], active: list[int], z: list[list[float]], y: list[float],
              w: list[float]) -> dict[int, float]:
    """d(loss)/d(coefficient) of each left-out feature at the fitted `beta` (all at 0)."""
    out = {j: 0.0 for j in range(len(z[0])) if j not in active}
    for row, yi, wi in zip(z, y, w):
        t = beta[0] + sum(b * row[j] for b, j in zip(beta[1:], active))
        err = wi * (1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, t)))) - yi)
        for j in out:
            out[j] += err * row[j]
    return out


def fitted(records: list[dict[str, Any]]) -> tuple[float, dict[str, float]]:
    """The intercept and raw-feature coefficients fitted on `records`."""
    examples = [r for r in records if r["cands"] and r["kind"] != "adversarial"]
    per_set: dict[str, int] = {}
    for r in examples:
        per_set[r["set"]] = per_set.get(r["set"], 0) + 1
    y = [0.0 if r["kind"] in evaluate.SILENT_KINDS or not r["expect"] else 1.0 for r in examples]
    w = [1000.0 / per_set[r["set"]] for r in examples]
    names = list(calibrate.FEATURES)
    raw = [[r["cands"][0][2][k] for k in names] for r in examples]
    mean = [sum(col) / len(col) for col in zip(*raw)]
    sd = [max(1e-9, math.sqrt(sum((v - m) ** 2 for v in col) / len(col))) for col, m in zip(zip(*raw), mean)]
    z = [[(v - m) / s for v, m, s in zip(row, mean, sd)] for row in raw]
    # An active set: fit the features in it; leave out the one most against its sign, or take
    # back the left-out one whose gradient says it would enter with its sign; until neither.
    active = list(range(len(names)))
    for _ in range(4 * len(names)):
        beta = fit([[row[j] for j in active] for row in z], y, w)
        wrong = [(-b * calibrate.SIGNS[names[j]], j) for j, b in zip(active, beta[1:]) if b * calibrate.SIGNS[names[j]] < 0]
        if wrong:
            active.remove(max(wrong)[1])
            continue
        grad = _gradient(beta, active, z, y, w)
        back = [(-g * calibrate.SIGNS[names[j]], j) for j, g in grad.items() if g * calibrate.SIGNS[names[j]] < -1e-6]
        if not back:
            break
        active = sorted(active + [max(back)[1]])
    feats = [names[j] for j in active]
    sd = [sd[j] for j in active]
    mean = [mean[j] for j in active]
    coef = dict.fromkeys(calibrate.FEATURES, 0.0)
    coef.update({k: b / s for k, b, s in zip(feats, beta[1:], sd)})
    intercept = beta[0] - sum(b * m / s for b, m, s in zip(beta[1:], mean, sd))
    return intercept, coef


def _p(intercept: float, coef: dict[str, float], f: dict[str, float]) -> float:
    z = intercept + sum(coef[k] * f[k] for k in coef)
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def objective(records: list[dict[str, Any]], intercept: float, coef: dict[str, float], threshold: float) -> float:
    """Mean over sets of (share recalled + share silent) / 2, as the decision would inject."""
    by: dict[str, list[list[int]]] = {}
    for r in records:
        if r["kind"] == "adversarial":
            continue
        silent = r["kind"] in evaluate.SILENT_KINDS or not r["expect"]
        speaks = bool(r["cands"]) and _p(intercept, coef, r["cands"][0][2]) >= threshold
        if silent:
            ok = not speaks
        else:
            best = r["cands"][0][1] if r["cands"] else 0.0
            shown = [c[0] for i, c in enumerate(r["cands"])
                     if not i or (c[1] >= calibrate.RUNNER_UP * best and c[3] == 1.0)][:top_k(r["set"])]
            ok = speaks and any(e in shown for e in r["expect"])
        pair = by.setdefault(r["set"], [[0, 0], [0, 0]])[silent]
        pair[0] += ok
        pair[1] += 1
    return sum((h[0] / max(1, h[1]) + s[0] / max(1, s[1])) / 2 for h, s in by.values()) / len(by)


def best_threshold(records: list[dict[str, Any]], intercept: float, coef: dict[str, float]) -> float:
    grid = [i / 100 for i in range(5, 96)]
    scores = [(objective(records, intercept, coef, t), -abs(t - 0.5), t) for t in grid]
    return max(scores)[2]


def constants(intercept: float, coef: dict[str, float], threshold: float) -> str:
    lines = [f"INTERCEPT = {intercept:.4f}", "COEF = {"]
    lines += [f"    {k!r}: {coef[k]:.4f}," for k in calibrate.FEATURES]
    lines += ["}", f"THRESHOLD = {threshold:.2f}  # inject when p_inject of the best match reaches it"]
    return "\n".join(lines)


_BLOCK = re.compile(r"INTERCEPT = .*?\nTHRESHOLD = [^\n]*", re.S)


def write(text: str) -> None:
    with open(CALIBRATE, encoding="utf-8") as fh:
        source = fh.read()
    with open(CALIBRATE, "w", encoding="utf-8") as fh:
        fh.write(_BLOCK.sub(lambda _: text, source, count=1))


def current() -> str:
    with open(CALIBRATE, encoding="utf-8") as fh:
        found = _BLOCK.search(fh.read())
    return found.group(0) if found else ""


def report(names: list[str], tmp: str) -> None:
    """Each set through the hook's path with the constants in force, beside the baselines."""
    for name in names:
        k = top_k(name)
        rows: list[dict[str, Any]] = []
        for store, repo, prompts in labeled.stores(name, os.path.join(tmp, "report", name)):
            result = evaluate.evaluate(repo, prompts, TODAY, os.path.join(tmp, "report-cwd", name, store), top=k)
            rows += result["results"]
        s = evaluate.summarize(rows, [0.0], top=k)
        kinds = "; ".join(f"{kind} " + (f"silence {v['silence']:.2f}" if "silence" in v else f"hit@{k} {v[f'hit@{k}']:.2f}")
                          + f" (n={v['n']})" for kind, v in s["per_kind"].items())
        print(f"{name} ({labeled.note(name)}): hit@{k} {s[f'hit@{k}']}, silence {s['silence']} | {kinds}")
        print(f"    ranking before the decision top{k} {s['ranked'][f'top{k}']}; plain BM25 top{k} {s['plain'][f'top{k}']}"
              f", top10 {s['plain']['top10']}; field-weighted BM25 top{k} {s['weighted'][f'top{k}']}")
        print(f"    misses by cause: {s['causes']}")


PRIORS = ("STANDING", "SESSION_LEND")  # rank's constants chosen by `grid`


def grid(name: str, values: list[float]) -> int:
    """A prior of the ranking (`rank.STANDING`, `rank.SESSION_LEND`) is chosen as the decision's
    constants are: on the fitting sets alone, by the objective their own fit reaches with it (the
    judged sets are never read here)."""
    best = None
    for i, value in enumerate(values):
        setattr(rank, name, value)
        with tempfile.TemporaryDirectory(prefix="memrepo-fit-") as tmp:
            records = [r for name in labeled.FIT for r in collect(name, tmp)]
            intercept, coef = fitted(records)
            score = objective(records, intercept, coef, best_threshold(records, intercept, coef))
        print(f"{name} = {value:g}: objective on the fitting sets {score:.4f}", flush=True)
        best = max(best or (score, -i, value), (score, -i, value))
    assert best is not None
    print(f"best: {name} = {best[2]:g}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help="write the fitted constants into calibrate.py")
    ap.add_argument("--check", action="store_true", help="exit 1 when calibrate.py holds other constants")
    ap.add_argument("--report", default=",".join(labeled.SETS), help="sets to report (default: all that exist here)")
    ap.add_argument("--grid", metavar="NAME=V1,V2,...", help=f"values of one of rank's priors ({', '.join(PRIORS)}): "
                    "fit at each and print the fitting sets' objective, nothing else")
    ap.add_argument("--locomo", action="append", default=[], metavar="DIR",
                    help="also report a folder in LoCoMo's format (another half: judged, never fitted on); "
                         "../shared/data/locomo-* folders are found without it")
    args = ap.parse_args(argv)
    extra = [labeled.add_locomo(d) for d in args.locomo]
    args.report = ",".join([*args.report.split(","), *(n for n in extra if n not in args.report.split(","))])
    missing = [n for n in labeled.FIT if n not in labeled.available(list(labeled.FIT))]
    if missing:
        print(f"fit_recall: the fitting sets {missing} are not here ({[labeled.SETS[n] for n in missing]})", file=sys.stderr)
        return 2
    if args.grid:
        name, _, values = args.grid.partition("=")
        if name not in PRIORS or not values:
            ap.error(f"--grid wants NAME=V1,V2,... with NAME one of {', '.join(PRIORS)}")
        return grid(name, [float(v) for v in values.split(",")])
    with tempfile.TemporaryDirectory(prefix="memrepo-fit-") as tmp:
        records = [r for name in labeled.FIT for r in collect(name, tmp)]
        intercept, coef = fitted(records)
        threshold = best_threshold(records, intercept, coef)
        text = constants(intercept, coef, threshold)
        print(text)
        print(f"# objective on the fitting sets: {objective(records, intercept, coef, threshold):.4f}")
        if args.check:
            same = current() == text
            print("calibrate.py holds these constants" if same else "calibrate.py differs: run with --write", file=sys.stderr)
            return 0 if same else 1
        if args.write:
            write(text)
        calibrate.INTERCEPT, calibrate.COEF, calibrate.THRESHOLD = intercept, coef, threshold
        report(labeled.available(args.report.split(",")), tmp)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
