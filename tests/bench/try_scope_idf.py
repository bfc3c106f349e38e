"""An idf over the prompt's scope, measured against recall's idf over the whole store (issue 36).

Each term's idf is taken over the prompt's scope (the memories of the prompt's project, the global
ones and those of a project the prompt names) rather than over the whole store, so that a word rare in the user's project stays informative however
common it is in other projects' memories (issue 36: with 10,000 generated distractors, words like
"deploy", "tests" or "log" became common and stopped telling a set's own memories apart).

    python tests/bench/try_scope_idf.py [--sets dev,recall,held,sre,small-fit,locomo]
        [--lambdas 1,0.3,0] [--distractors 0,10000] [--no-refit] [--globals] [--quick]
    python tests/bench/try_scope_idf.py --cost 1000,10000   # what the counts would cost the hook
    python tests/bench/try_scope_idf.py --lost --sets dev,recall,held,sre   # why the distractors cost

A memory of another project counts λ in a term's document count and in the store's size:
df' = df_in + λ·df_out, N' = N_in + λ·N_out (at least 1 where the store holds the word at all);
λ = 1 is recall as it is, λ = 0 the scope alone. Scores (`search._stat_hits`) and the decision's
evidence (`calibrate.Query`: `lnrel`'s most attainable score, the idf mass) both read df' and N';
the candidate search keeps FTS5's own order over the seeds, so the candidates themselves barely
move. A word whose FTS5 token is not known here (non-ASCII, a version number: `search._token`) has
no per-project count: its count is scaled to the scope's size (N'/N), and its score stays FTS5's
`bm25()` over the whole store (held and sre have 6 and 7 prompts with such a word, dev and recall none).
`--globals` counts the global memories out of scope too (the prompt's project alone: a
diagnostic, since a personal store's memories are mostly global).

For each λ the decision is refitted on the fitting sets (`labeled.FIT`, no distractors:
`fit_recall.fitted`, as `fit_recall.py` fits it) unless `--no-refit`, and its objective printed;
then each set named is run through the hook's path (`memrepo eval`'s) with each count of
distractors (`genmem.py`, seed 7). The scoring is swapped in this process only. Run it on the
fitting sets first; only what helps them with distractors and costs nothing without is taken to
the judged ones (`--sets blind,chat,data,web,small`). `--quick`: the development set with 1,000
distractors, λ 1 and 0, no refit (or `--cost` on four prompts).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fit_recall  # noqa: E402
import genmem  # noqa: E402
import labeled  # noqa: E402

from memrepo.base import projects  # noqa: E402
from memrepo.evaluation import evaluate  # noqa: E402
from memrepo.recall import calibrate, rank, search  # noqa: E402

TODAY = fit_recall.TODAY
STATE: dict[str, Any] = {"lam": 1.0, "scope": None, "words": frozenset(), "globals": False}
_COUNTS: dict[tuple[str, float, int], tuple[dict[str, dict[str, int]], dict[str, int]]] = {}


def _per_project(db: Any) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    """token -> {project: df} and project -> memories, read once per cache file ("" is global)."""
    path = next(r[2] for r in db.execute("PRAGMA database_list") if r[1] == "main")
    st = os.stat(path)
    key = (path, st.st_mtime, st.st_size)
    if key not in _COUNTS:
        dfs: dict[str, dict[str, int]] = {}
        sizes: dict[str, int] = {}
        for text, project in db.execute("SELECT d.terms, coalesce(m.project, '') FROM docterms d"
                                        " JOIN memories m ON m.rowid = d.rowid"):
            sizes[project] = sizes.get(project, 0) + 1
            for part in text.split():
                per = dfs.setdefault(part.rsplit(":", 2)[0], {})
                per[project] = per.get(project, 0) + 1
        _COUNTS.clear()
        _COUNTS[key] = (dfs, sizes)
    return _COUNTS[key]


def _inside(project: str) -> bool:
    if not project:
        return not STATE["globals"]
    scope = STATE["scope"]
    return bool(scope is not None and scope.owns(project)) or projects.label_of(project).lower() in STATE["words"]


class ScopedLookups(search.Lookups):
    """`search.Lookups` with each known token's count and the store's size over the prompt's scope."""

    def __init__(self, db: Any, words: list[str]) -> None:
        super().__init__(db, words)
        lam = STATE["lam"]
        if lam == 1.0 or self.stats is None:  # type: ignore[has-type]
            return
        dfs, sizes = _per_project(db)
        n_in = sum(n for p, n in sizes.items() if _inside(p))
        n_eff = max(1.0, n_in + lam * (sum(sizes.values()) - n_in))
        rate = n_eff / sum(sizes.values())
        for w, token in self.tokens.items():
            if not self.dfs.get(w):
                continue
            if token is None:  # counted by FTS5 over the store, not per project: at the store's rate
                self.dfs[w] = min(n_eff, max(1.0, self.dfs[w] * rate))  # type: ignore[assignment]
                continue
            per = dfs.get(token, {})
            d_in = sum(n for p, n in per.items() if _inside(p))
            self.dfs[w] = min(n_eff, max(1.0, d_in + lam * (sum(per.values()) - d_in)))  # type: ignore[assignment]
        self.n = n_eff  # type: ignore[assignment]
        self.stats = (n_eff, self.stats[1])  # type: ignore[has-type, assignment]


_RANK = rank.rank


def _rank(db: Any, terms: list[tuple[str, float]], project: Any = None, **kw: Any) -> list[rank.Hit]:
    STATE["scope"] = projects.scope_of(project)
    STATE["words"] = frozenset(t for t, _ in terms)
    return _RANK(db, terms, project=project, **kw)


def refit(tmp: str) -> tuple[float, dict[str, float], float, float]:
    """The decision fitted on the fitting sets (no distractors) with the scoring in force."""
    records = [r for name in labeled.FIT for r in fit_recall.collect(name, tmp)]
    intercept, coef = fit_recall.fitted(records)
    threshold = fit_recall.best_threshold(records, intercept, coef)
    return intercept, coef, threshold, fit_recall.objective(records, intercept, coef, threshold)


def measure(built: list[tuple[str, str, list[dict[str, Any]]]], top: int, sandbox: str) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for store, repo, prompts in built:
        rows += evaluate.evaluate(repo, prompts, TODAY, os.path.join(sandbox, store), top=top)["results"]
    return evaluate.summarize(rows, [0.0], top=top)


# One process: the cache opened as the hook opens it, then each prompt's `search.Lookups`; with
# "scoped", also the in-scope counts as the cache could keep them (`scopeterms`, `scopesize`).
_COST = r'''
import sys
sys.path.insert(0, sys.argv[1])
from memrepo.base import projects
from memrepo.recall import search
db = search.connect(sys.argv[2])
scoped = sys.argv[3] == "scoped"
here = projects.Project(sys.argv[4])
for words in [w.split() for w in sys.argv[5:]]:
    facts = search.Lookups(db, words)
    if scoped:
        # summed by SQLite: two numbers a term (a row a project costs Python ~10,000 instructions)
        known = sorted({t for t in facts.tokens.values() if t})
        names = [here.key, *sorted(here.names)]
        inside = f"(project = '' OR project IN ({','.join('?' * len(names))}))"
        rows = db.execute(f"SELECT '', sum(n), sum(CASE WHEN {inside} THEN n ELSE 0 END) FROM scopesize"
                          f" UNION ALL SELECT term, sum(df), sum(CASE WHEN {inside} THEN df ELSE 0 END) FROM scopeterms"
                          f" WHERE term IN ({','.join('?' * len(known))}) GROUP BY term", names + names + known).fetchall()
'''


# issue 44's budget against a bare `python3 -I -S -c pass`, and the hook's ratio before this change
# (docs/recall.md, `bench_hook.py --sizes 1000,10000,100000 --pairs 2 --callgrind`)
BUDGET = {1000: "<= 1.6x, 1.576x today", 10000: "<= 2x, 1.633x today", 100000: "<= 2x, 1.854x today"}


def _ir(cmd: list[str]) -> int:
    import re
    import subprocess

    res = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
                         capture_output=True, check=True)
    found = re.search(rb"Collected : (\d+)", res.stderr)
    assert found, res.stderr[-300:]
    return int(found.group(1))


def cost(sizes: list[int], tmp: str, prompts: int = 12) -> None:
    """Instructions (callgrind) of one process opening the cache and looking up one prompt's words,
    with and without the in-scope counts, for `prompts` prompts (titles of generated memories) on a
    store of each size: the difference, beside a bare `python3 -I -S -c pass`."""
    import sqlite3

    from memrepo.base import paths
    from memrepo.store import index

    bare = min(_ir([sys.executable, "-I", "-S", "-c", "pass"]) for _ in range(2))
    tools = os.path.join(labeled.ROOT, "tools")
    for n in sizes:
        repo = os.path.join(tmp, f"cost-{n}")
        genmem.write_corpus(os.path.join(repo, "memory"), n=n, seed=7, check="sample")
        index.rebuild(repo)
        db_path = paths.index_db(repo)
        with sqlite3.connect(db_path) as db:
            dfs, per = _per_project(db)
            db.execute("CREATE TABLE scopeterms(term TEXT, project TEXT, df INTEGER, PRIMARY KEY (term, project))"
                       " WITHOUT ROWID")
            db.execute("CREATE TABLE scopesize(project TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID")
            db.executemany("INSERT INTO scopeterms VALUES (?, ?, ?)",
                           [(t, p, c) for t, ps in dfs.items() for p, c in ps.items()])
            db.executemany("INSERT INTO scopesize VALUES (?, ?)", list(per.items()))
            titles = [r[0] for r in db.execute("SELECT title FROM memories ORDER BY rowid")][:: max(1, n // prompts)][:prompts]
            project = db.execute("SELECT project FROM memories WHERE project IS NOT NULL GROUP BY project"
                                 " ORDER BY count(*) DESC LIMIT 1").fetchone()[0]
        words = [" ".join(w for w in (x.strip("().,:").lower() for x in t.split()) if w.isalnum()) for t in titles]
        base = [sys.executable, "-I", "-S", "-c", _COST, tools, db_path]
        # one prompt a process, as the hook runs: what a process pays once (a new table's pages) counts
        plain = [_ir([*base, "plain", project, w]) for w in words]
        scoped = [_ir([*base, "scoped", project, w]) for w in words]
        extra = sorted(b - a for a, b in zip(plain, scoped))
        rows = sum(len(ps) for ps in dfs.values())
        print(f"{n} memories ({len(per)} scopes, {rows} (term, project) rows), {len(words)} prompts: the in-scope counts"
              f" add {extra[len(extra) // 2] / 1e6:.3f} M instructions (median; {extra[0] / 1e6:.3f}-{extra[-1] / 1e6:.3f}),"
              f" {extra[len(extra) // 2] / bare:.4f}x a bare start ({bare / 1e6:.1f} M); the prompt path's budget:"
              f" {BUDGET.get(n, '?')}", flush=True)


def lost(names: list[str], tmp: str, n: int = 10000) -> None:
    """The prompts recall's ranking (before its decision) has in its first two without distractors
    and not with `n` of them, and how many of those name a word past the scoring cap (in more than
    `search.COMMON_DF_SHARE` of the memories: left out of the scores) in the whole store, and in
    the scope of the memory they expect (its project's memories and the global ones)."""
    from memrepo.recall import porter

    corpus = os.path.join(tmp, "lost-distractors")
    os.makedirs(corpus)
    genmem.write_corpus(corpus, n=n, seed=7, check="sample")
    for name in names:
        top = fit_recall.top_k(name)
        runs = []
        for extra in (None, corpus):
            built = labeled.stores(name, os.path.join(tmp, f"lost-{name}-{bool(extra)}"), extra)
            runs.append({(store, r["id"]): (r, repo) for store, repo, prompts in built for r in
                         evaluate.evaluate(repo, prompts, TODAY, os.path.join(tmp, f"lost-cwd-{name}-{bool(extra)}", store),
                                           top=top)["results"]})
        gone = [(key, r, repo) for key, (r, repo) in runs[1].items() if r["expect"] and r["kind"] not in evaluate.SILENT_KINDS
                and any(e in runs[0][key][0]["ranked"][:top] for e in r["expect"])
                and not any(e in r["ranked"][:top] for e in r["expect"])]
        generated = {f[:-3] for f in os.listdir(corpus)}
        beaten = sum(1 for _, r, _ in gone if any(i in generated for i in r["ranked"][:top]))
        past_store = past_scope = 0
        words: dict[str, int] = {}
        for _, r, repo in gone:
            import sqlite3

            from memrepo.base import paths
            with sqlite3.connect(paths.index_db(repo)) as db:
                dfs, sizes = _per_project(db)
                home = db.execute("SELECT coalesce(project, '') FROM memories WHERE id = ?", (r["expect"][0],)).fetchone()[0]
            n_all = sum(sizes.values())
            n_in = sizes.get(home, 0) + (sizes.get("", 0) if home else 0)
            terms = {porter.stem(t) for t in r["terms"] + r["pasted"] + r["context_terms"] if t.isascii() and t.isalnum()}
            common = [t for t in terms if sum(dfs.get(t, {}).values()) > search.COMMON_DF_SHARE * n_all]
            scoped = [t for t in terms if dfs.get(t, {}).get(home, 0) + (dfs.get(t, {}).get("", 0) if home else 0)
                      > search.COMMON_DF_SHARE * n_in]
            past_store += bool(common)
            past_scope += bool(scoped)
            for t in common:
                words[t] = words.get(t, 0) + 1
        often = ", ".join(f"{t} {k}" for t, k in sorted(words.items(), key=lambda kv: -kv[1])[:8])
        print(f"{name} ({labeled.note(name)}): {len(gone)} prompts leave the ranking's top{top} with {n} distractors;"
              f" {beaten} with a distractor in it; {past_store} name a word past the cap in the store,"
              f" {past_scope} in the expected memory's scope"
              f" ({often})", flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default=",".join(labeled.FIT), help="labeled sets (default: the fitting sets)")
    ap.add_argument("--lambdas", default="1,0.3,0", help="weights of another project's memories (1: recall as it is)")
    ap.add_argument("--distractors", default="0,10000", help="counts of generated memories added to each store")
    ap.add_argument("--quick", action="store_true", help="dev, 1,000 distractors, λ 1 and 0, no refit")
    ap.add_argument("--no-refit", action="store_true", help="keep calibrate.py's constants for every λ")
    ap.add_argument("--globals", action="store_true", help="count global memories out of scope too (diagnostic)")
    ap.add_argument("--cost", metavar="SIZES", help="only measure the counts' cost on stores of these sizes (callgrind)")
    ap.add_argument("--lost", action="store_true", help="only say why the ranking loses prompts to distractors")
    args = ap.parse_args(argv)
    if args.quick:
        args.sets, args.distractors, args.lambdas, args.no_refit = "dev", "0,1000", "1,0", True
    if args.lost:
        with tempfile.TemporaryDirectory(prefix="memrepo-scopeidf-") as tmp:
            lost(labeled.available(args.sets.split(",")), tmp)
        return 0
    if args.cost:
        with tempfile.TemporaryDirectory(prefix="memrepo-scopeidf-") as tmp:
            cost([int(x) for x in args.cost.split(",")], tmp, 4 if args.quick else 12)
        return 0
    search.Lookups = ScopedLookups  # type: ignore[misc]
    rank.rank = _rank  # type: ignore[assignment]
    STATE["globals"] = args.globals
    lambdas = [float(x) for x in args.lambdas.split(",")]
    fitted: dict[float, tuple[float, dict[str, float], float]] = {}
    with tempfile.TemporaryDirectory(prefix="memrepo-scopeidf-") as tmp:
        for lam in lambdas:
            STATE["lam"] = lam
            if args.no_refit:
                fitted[lam] = (calibrate.INTERCEPT, dict(calibrate.COEF), calibrate.THRESHOLD)
                continue
            start = time.time()
            intercept, coef, threshold, score = refit(os.path.join(tmp, f"fit-{lam}"))
            fitted[lam] = (intercept, coef, threshold)
            shutil.rmtree(os.path.join(tmp, f"fit-{lam}"), ignore_errors=True)
            print(f"λ={lam:g}: objective on the fitting sets {score:.4f}, threshold {threshold:.2f}, "
                  f"lnrel {coef['lnrel']:.3f} ({time.time() - start:.0f}s)", flush=True)
        for name in labeled.available(args.sets.split(",")):
            for n in [int(x) for x in args.distractors.split(",")]:
                corpus = os.path.join(tmp, f"distractors-{n}")
                if n and not os.path.isdir(corpus):
                    os.makedirs(corpus)
                    genmem.write_corpus(corpus, n=n, seed=7, check="sample")
                built = labeled.stores(name, os.path.join(tmp, f"{name}-{n}"), corpus if n else None)
                top = fit_recall.top_k(name)
                for lam in lambdas:
                    STATE["lam"] = lam
                    calibrate.INTERCEPT, calibrate.COEF, calibrate.THRESHOLD = fitted[lam]
                    s = measure(built, top, os.path.join(tmp, f"cwd-{name}-{n}-{lam}"))
                    print(labeled.result_line(name, n, f"λ={lam:g}", s, top, digits=3), flush=True)
                shutil.rmtree(os.path.join(tmp, f"{name}-{n}"), ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
