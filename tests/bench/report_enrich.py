#!/usr/bin/env python3
"""Enrichment on tests/data/capture/enrich with the fake model: aliases written, then recall.

Builds a throwaway memory repository with the 8 memories there, measures recall (`memrepo
eval`) on the 8 prompts of `prompts.jsonl`, runs `enrich.run` once, measures again and prints
the figures with each memory's kept and dropped aliases. `--json` prints them as JSON.

    .venv/bin/python tests/bench/report_enrich.py
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, TESTS)
sys.path.insert(0, os.path.join(os.path.dirname(TESTS), "tools"))
sys.path.insert(0, HERE)
from benchlib import fake_model_env, report_main  # noqa: E402

DATA = os.path.join(TESTS, "data", "capture", "enrich")
TODAY = time.mktime((2026, 11, 29, 0, 0, 0, 0, 0, -1))
SOURCE = ("aliases: scripted fake-model replies (tests/data/capture/enrich/aliases-rules.json), not a model's; "
          "for each memory one scripted alias is, nearly word for word, the test prompt that must find it, so the "
          "figures show that aliases are filtered, committed, indexed and matched — not how well a model guesses "
          "the words people type")


def evaluate(workdir: str) -> dict[str, Any]:
    from helpers import commit_all
    from memrepo.evaluation import evaluate as ev
    from memrepo.passes import enrich
    from memrepo.store import repoinit

    repo = os.path.join(workdir, "enrich")
    with fake_model_env("Enrich", FAKE_MODEL_RULES=os.path.join(DATA, "aliases-rules.json")):
        repoinit.init(repo)
        for name in sorted(os.listdir(os.path.join(DATA, "memory"))):
            shutil.copy(os.path.join(DATA, "memory", name), os.path.join(repo, "memory", name))
        if commit_all(repo, "enrich set").returncode != 0:
            raise SystemExit("commit of the enrich set failed")
        prompts = os.path.join(DATA, "prompts.jsonl")
        before = ev.run(prompts, repo=repo, today=TODAY)["summary"]
        report = enrich.run(repo)
        after = ev.run(prompts, repo=repo, today=TODAY)["summary"]
    return {"source": SOURCE, "before": {k: before[k] for k in ("hit@1", "hit@2")},
            "after": {k: after[k] for k in ("hit@1", "hit@2")}, "model_calls": report["model_calls"],
            "kept": report["enriched"], "dropped": report.get("dropped", {})}


def render(result: dict[str, Any]) -> str:
    lines = [result["source"], ""]
    for mid in sorted(set(result["kept"]) | set(result["dropped"])):
        lines.append(f"{mid}: kept {result['kept'].get(mid, [])}; dropped {result['dropped'].get(mid, [])}")
    b, a = result["before"], result["after"]
    lines += ["", f"hit@1 {b['hit@1']:.2f} -> {a['hit@1']:.2f}; hit@2 {b['hit@2']:.2f} -> {a['hit@2']:.2f} "
                  f"(8 prompts); model calls: {result['model_calls']}"]
    return "\n".join(lines)


def main() -> int:
    return report_main(__doc__ or "", "memrepo-enrich-report-", evaluate, render)


if __name__ == "__main__":
    raise SystemExit(main())
