"""`memrepo eval`: run a labeled prompt set through the prompt hook's own code path and score it,
beside the plain searches it must beat (`baseline`), with every miss put down to its cause.

Each prompt goes through `recall.decide` exactly as the hook calls it: its `cwd` made into a real
folder under a sandbox (`checkouts`), so the project comes from the same `.git` walk, and its
`previous` turns as the hook's transcript tail would read them. A miss of a prompt that expects
a memory is one of:

- `vocabulary`: no expected memory shares an indexed word with the prompt (no ranking of the
  words' matches finds it);
- `outranked`: recall's ranking, before its decision, does not have one in its first two;
- `silenced`: the ranking had one in its first two, and the decision stayed silent or left it out;
- `superseded first`: an update prompt whose superseded memory came before the newer one.

A silent kind's miss is `injected`.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import statistics
import tempfile
import time
from typing import Any

from memrepo.errors import MemrepoError
from memrepo.evaluation import baseline, checkouts
from memrepo.recall import decide as recall
from memrepo.base import paths
from memrepo.store import index

SILENT_KINDS = ("conversational", "offtopic", "general", "agent", "cross", "adversarial")
KINDS = ("answerable", "context", "update") + SILENT_KINDS
TOP = 2
REACH = 100_000  # the plain search's matches read for the vocabulary cause: all of them


def load_prompts(path: str) -> list[dict[str, Any]]:
    rows = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if line.strip():
                hint = 'one JSON object per line: {"prompt": "…", "expect": ["memory-id", …]}'
                try:
                    row = json.loads(line)
                except ValueError as exc:
                    raise MemrepoError(f"{path}:{n}: not JSON ({exc})", hint=hint) from None
                if not isinstance(row, dict) or not isinstance(row.get("prompt"), str):
                    raise MemrepoError(f"{path}:{n}: not a labeled prompt (an object with a \"prompt\" string)", hint=hint)
                rows.append(row)
    return rows


def previous_text(row: dict[str, Any]) -> str:
    """The labeled previous turn as the transcript tail returns it: the texts joined by lines."""
    return "\n".join(str(t.get("text", "")) for t in row.get("previous") or [] if isinstance(t, dict))


def run(prompts_path: str, repo: str | None = None, memory_dir: str | None = None, today: float | None = None,
        top: int = TOP) -> dict[str, Any]:
    """Score every prompt: hit@1/hit@2 for prompts expecting a memory, silence rate for the rest,
    the baselines beside them and the misses by cause."""
    rows = load_prompts(prompts_path)
    tmp = tempfile.mkdtemp(prefix="memrepo-eval-")
    try:
        if memory_dir:
            repo = os.path.join(tmp, "store")
            shutil.copytree(memory_dir, os.path.join(repo, "memory"))
            index.rebuild(repo)
        assert repo is not None
        return evaluate(repo, rows, today, os.path.join(tmp, "cwd"), top)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def evaluate(repo: str, rows: list[dict[str, Any]], today: float | None, sandbox: str, top: int = TOP) -> dict[str, Any]:
    """Score `rows` against the indexed repository `repo`; `sandbox` receives the prompts' cwds."""
    with sqlite3.connect(paths.index_db(repo)) as db:
        superseded = dict(db.execute("SELECT id, superseded_by FROM memories WHERE superseded_by IS NOT NULL"))
        where = checkouts.Checkouts.of_store(sandbox, db)
        results, latencies = [], []
        for row in rows:
            why: list[Any] = []
            cwd = where.cwd(row.get("cwd") if isinstance(row.get("cwd"), str) else None)
            start = time.perf_counter()
            d = recall.decide(repo, row["prompt"], cwd=cwd, previous=previous_text(row), today=today, explain=why)
            latencies.append((time.perf_counter() - start) * 1000.0)
            ranked = [h.id for h, _ in why if h is not None]
            results.append(_result(row, d, ranked, superseded, db, top))
    return {"summary": summarize(results, latencies), "results": results}


def _result(row: dict[str, Any], d: Any, ranked: list[str], superseded: dict[str, str], db: sqlite3.Connection,
            top: int) -> dict[str, Any]:
    ids = [h.id for h in d.hits]
    expect = [e for e in row.get("expect") or [] if isinstance(e, str)]
    kind = str(row["kind"]) if row.get("kind") in KINDS else ("answerable" if expect else "offtopic")
    plain = baseline.plain(db, row["prompt"], baseline.TOP)
    weighted = baseline.weighted(db, row["prompt"], baseline.TOP)
    ok = _score(kind, expect, ids, superseded, top)
    out = {"id": row.get("id"), "kind": kind, "expect": expect, "got": ids,
           "scores": [round(h.score, 3) for h in d.hits], "p": round(d.best.p if d.best else (d.hits[0].p if d.hits else 0.0), 3),
           "terms": list(d.terms), "pasted": list(d.pasted_terms), "context_terms": list(d.context_terms),
           "hit1": bool(expect) and bool(ids) and ids[0] in expect, "ok": ok,
           "ranked": ranked[:baseline.TOP], "plain": plain, "weighted": weighted, "cause": None}
    if not ok:
        out["cause"] = _cause(kind, expect, ids, ranked, row["prompt"], db, top)
    return out


def _score(kind: str, expect: list[str], ids: list[str], superseded: dict[str, str], top: int) -> bool:
    if kind in SILENT_KINDS or not expect:
        return not ids
    if not any(e in ids[:top] for e in expect):
        return False
    if kind == "update":
        for loser, winner in superseded.items():
            if winner in expect and loser in ids and winner in ids and ids.index(loser) < ids.index(winner):
                return False
    return True


def _cause(kind: str, expect: list[str], ids: list[str], ranked: list[str], prompt: str, db: sqlite3.Connection,
           top: int) -> str:
    if kind in SILENT_KINDS or not expect:
        return "injected"
    if any(e in ids[:top] for e in expect):
        return "superseded first"
    if not any(e in baseline.plain(db, prompt, REACH) for e in expect):
        return "vocabulary"
    if not any(e in ranked[:top] for e in expect):
        return "outranked"
    return "silenced"


def _rate(rows: list[dict[str, Any]], key: str) -> float | None:
    return round(sum(bool(r[key]) for r in rows) / len(rows), 4) if rows else None


def _reach(rows: list[dict[str, Any]], key: str, k: int) -> float | None:
    return round(sum(any(e in r[key][:k] for e in r["expect"]) for r in rows) / len(rows), 4) if rows else None


def summarize(results: list[dict[str, Any]], latencies: list[float], top: int = TOP) -> dict[str, Any]:
    per_kind: dict[str, Any] = {}
    for kind in KINDS:
        rs = [r for r in results if r["kind"] == kind]
        if not rs:
            continue
        if kind in SILENT_KINDS:
            per_kind[kind] = {"n": len(rs), "silence": _rate(rs, "ok")}
        else:
            per_kind[kind] = {"n": len(rs), "hit@1": _rate(rs, "hit1"), f"hit@{top}": _rate(rs, "ok"),
                              f"plain@{top}": _reach(rs, "plain", top), f"ranked@{top}": _reach(rs, "ranked", top)}
    expecting = [r for r in results if r["kind"] not in SILENT_KINDS and r["expect"]]
    silent = [r for r in results if r["kind"] in SILENT_KINDS]
    causes: dict[str, int] = {}
    for r in results:
        if r["cause"]:
            causes[r["cause"]] = causes.get(r["cause"], 0) + 1
    lat = sorted(latencies)

    def pct(p: float) -> float:
        return round(lat[min(len(lat) - 1, int(p * len(lat)))], 2) if lat else 0.0

    return {
        "prompts": len(results),
        "hit@1": _rate(expecting, "hit1"),
        f"hit@{top}": _rate(expecting, "ok"),
        "silence": _rate(silent, "ok"),
        "ranked": {f"top{top}": _reach(expecting, "ranked", top)},
        "plain": {f"top{top}": _reach(expecting, "plain", top), "top10": _reach(expecting, "plain", 10)},
        "weighted": {f"top{top}": _reach(expecting, "weighted", top), "top10": _reach(expecting, "weighted", 10)},
        "causes": causes,
        "per_kind": per_kind,
        "latency_ms": {"p50": round(statistics.median(lat), 2) if lat else 0.0, "p90": pct(0.9), "p99": pct(0.99),
                       "max": round(lat[-1], 2) if lat else 0.0},
    }


def report_lines(report: dict[str, Any], top: int = TOP, failures: bool = False) -> list[str]:
    """`memrepo eval`'s text: the summary, each kind, the baselines, the causes, the misses."""
    s = report["summary"]
    out = [f"{s['prompts']} prompts: hit@1 {s['hit@1']}, hit@{top} {s[f'hit@{top}']}, silence {s['silence']}"]
    for kind, k in s["per_kind"].items():
        out.append(f"  {kind:<15} n={k['n']:<4} " + "  ".join(f"{m} {v:.2f}" for m, v in k.items() if m != "n" and v is not None))
    out.append(f"baselines on the prompts expecting a memory: recall's ranking before its decision top{top} {s['ranked'][f'top{top}']};"
               f" plain BM25 top{top} {s['plain'][f'top{top}']}, top10 {s['plain']['top10']};"
               f" field-weighted BM25 top{top} {s['weighted'][f'top{top}']}, top10 {s['weighted']['top10']}")
    causes = ", ".join(f"{c} {n}" for c, n in sorted(s["causes"].items(), key=lambda kv: -kv[1])) or "none"
    out.append(f"misses by cause: {causes}")
    lat = s["latency_ms"]
    out.append(f"latency ms: p50 {lat['p50']}  p90 {lat['p90']}  p99 {lat['p99']}  max {lat['max']}")
    if failures:
        for r in report["results"]:
            if not r["ok"]:
                out.append(f"  MISS {r['id']} [{r['kind']}] {r['cause']}: expect {r['expect']} got {r['got']}"
                           f" (p {r['p']}) ranked {r['ranked'][:3]} plain {r['plain'][:3]} terms {r['terms']}")
    return out
