"""`memrepo eval`: run a labeled prompt set through recall's own code path and score it."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import tempfile
import time
from typing import Any

from memrepo.errors import MemrepoError
from memrepo.store import index
from memrepo.recall import paths, projects, decide as recall

KINDS = ("answerable", "context", "update", "conversational", "offtopic")
SILENT_KINDS = ("conversational", "offtopic")


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


def _previous_text(row: dict[str, Any]) -> str:
    return "\n".join(str(t.get("text", "")) for t in row.get("previous") or [])


def _project(cwd: str | None) -> projects.Project | None:
    # A labeled set's cwd usually does not exist here; it then stands for a checkout of that name
    # without an origin. One that exists is identified as the prompt hook identifies it.
    if cwd and not os.path.exists(cwd):
        name = os.path.basename(cwd.rstrip("/"))
        return projects.Project(name) if name else None
    return projects.identify(cwd)


def _score(row: dict[str, Any], ids: list[str], superseded: dict[str, str]) -> bool:
    expect = row.get("expect") or []
    if row.get("kind") in SILENT_KINDS or not expect:
        return not ids
    top2 = ids[:2]
    if not any(e in top2 for e in expect):
        return False
    if row.get("kind") == "update":
        for loser, winner in superseded.items():
            if winner in expect and loser in ids and winner in ids and ids.index(loser) < ids.index(winner):
                return False
    return True


def run(prompts_path: str, repo: str | None = None, memory_dir: str | None = None, today: float | None = None) -> dict[str, Any]:
    """Score every prompt: hit@1/hit@2 for prompts expecting a memory, silence rate for the rest."""
    rows = load_prompts(prompts_path)
    tmp = None
    if memory_dir:
        tmp = tempfile.mkdtemp(prefix="memrepo-eval-")
        shutil.copytree(memory_dir, os.path.join(tmp, "memory"))
        index.rebuild(tmp)
        repo = tmp
    assert repo is not None
    try:
        return _evaluate(repo, rows, today)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def _evaluate(repo: str, rows: list[dict[str, Any]], today: float | None) -> dict[str, Any]:
    import sqlite3

    with sqlite3.connect(paths.index_db(repo)) as db:
        superseded = dict(db.execute("SELECT id, superseded_by FROM memories WHERE superseded_by IS NOT NULL"))
    results, latencies = [], []
    for row in rows:
        start = time.perf_counter()
        d = recall.decide(repo, row["prompt"], previous=_previous_text(row), today=today,
                          project=_project(row.get("cwd")))
        latencies.append((time.perf_counter() - start) * 1000.0)
        ids = [h.id for h in d.hits]
        expect = row.get("expect") or []
        results.append({"id": row.get("id"), "kind": row.get("kind"), "expect": expect, "got": ids,
                        "scores": [round(h.score, 3) for h in d.hits], "terms": list(d.terms),
                        "hit1": bool(expect) and bool(ids) and ids[0] in expect,
                        "ok": _score(row, ids, superseded)})
    return {"summary": summarize(results, latencies), "results": results}


def summarize(results: list[dict[str, Any]], latencies: list[float]) -> dict[str, Any]:
    per_kind: dict[str, Any] = {}
    for kind in KINDS:
        rs = [r for r in results if r["kind"] == kind]
        if not rs:
            continue
        if kind in SILENT_KINDS:
            per_kind[kind] = {"n": len(rs), "silence": sum(r["ok"] for r in rs) / len(rs)}
        else:
            per_kind[kind] = {"n": len(rs), "hit@1": sum(r["hit1"] for r in rs) / len(rs),
                              "hit@2": sum(r["ok"] for r in rs) / len(rs)}
    expecting = [r for r in results if r["kind"] not in SILENT_KINDS and r["expect"]]
    silent = [r for r in results if r["kind"] in SILENT_KINDS]
    lat = sorted(latencies)

    def pct(p: float) -> float:
        return round(lat[min(len(lat) - 1, int(p * len(lat)))], 2) if lat else 0.0

    return {
        "prompts": len(results),
        "hit@1": round(sum(r["hit1"] for r in expecting) / len(expecting), 4) if expecting else None,
        "hit@2": round(sum(r["ok"] for r in expecting) / len(expecting), 4) if expecting else None,
        "silence": round(sum(r["ok"] for r in silent) / len(silent), 4) if silent else None,
        "per_kind": per_kind,
        "latency_ms": {"p50": round(statistics.median(lat), 2) if lat else 0.0, "p90": pct(0.9), "p99": pct(0.99), "max": round(lat[-1], 2) if lat else 0.0},
    }
