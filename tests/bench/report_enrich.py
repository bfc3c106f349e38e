#!/usr/bin/env python3
"""Enrichment on tests/data/capture/enrich with the fake model: aliases written, then recall.

Builds a throwaway memory repository with the 8 memories there, measures recall (`memrepo
eval`) on the 8 prompts of `prompts.jsonl`, runs `enrich.run` once, measures again and prints
the figures with each memory's kept and dropped aliases. `--json` prints them as JSON.

    .venv/bin/python tests/bench/report_enrich.py
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, TESTS)
sys.path.insert(0, os.path.join(os.path.dirname(TESTS), "tools"))

DATA = os.path.join(TESTS, "data", "capture", "enrich")
FAKE = os.path.join(TESTS, "fake", "fakemodel.py")
TODAY = time.mktime((2026, 11, 29, 0, 0, 0, 0, 0, -1))
SOURCE = ("aliases: scripted fake-model replies (tests/data/capture/enrich/aliases-rules.json), not a model's; "
          "for each memory one scripted alias is, nearly word for word, the test prompt that must find it, so the "
          "figures show that aliases are filtered, committed, indexed and matched — not how well a model guesses "
          "the words people type")
ENV = {"GIT_AUTHOR_NAME": "Enrich Report", "GIT_AUTHOR_EMAIL": "report@example.com",
       "GIT_COMMITTER_NAME": "Enrich Report", "GIT_COMMITTER_EMAIL": "report@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


def evaluate(workdir: str) -> dict[str, Any]:
    from helpers import commit_all
    from memrepo.evaluation import evaluate as ev
    from memrepo.passes import enrich
    from memrepo.store import repoinit

    repo = os.path.join(workdir, "enrich")
    saved = {k: os.environ.get(k) for k in (*ENV, "MEMREPO_MODEL_CMD", "FAKE_MODEL_RULES")}
    os.environ.update({k: v for k, v in ENV.items() if k not in os.environ})
    os.environ.update(MEMREPO_MODEL_CMD=f"{sys.executable} {FAKE}", FAKE_MODEL_RULES=os.path.join(DATA, "aliases-rules.json"))
    try:
        repoinit.init(repo)
        for name in sorted(os.listdir(os.path.join(DATA, "memory"))):
            shutil.copy(os.path.join(DATA, "memory", name), os.path.join(repo, "memory", name))
        if commit_all(repo, "enrich set").returncode != 0:
            raise SystemExit("commit of the enrich set failed")
        prompts = os.path.join(DATA, "prompts.jsonl")
        before = ev.run(prompts, repo=repo, today=TODAY)["summary"]
        report = enrich.run(repo)
        after = ev.run(prompts, repo=repo, today=TODAY)["summary"]
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memrepo-enrich-report-") as tmp:
        result = evaluate(tmp)
    print(json.dumps(result, indent=1) if args.json else render(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
