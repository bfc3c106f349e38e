#!/usr/bin/env python3
"""The guarded curator on the labeled pairs of tests/data/curate/pairs.json, with the fake model.

Builds a throwaway memory repository holding every pair, gives the fake model each pair's
verdict (pairs the curator relates across the set get "unrelated"), runs `curate.run` once
and prints, per pair, what the curator did (applied / review / left alone) against the label,
then the totals. `--json` prints the figures instead.

    .venv/bin/python tests/bench/report_curate.py
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, TESTS)
sys.path.insert(0, os.path.join(os.path.dirname(TESTS), "tools"))
sys.path.insert(0, HERE)
from benchlib import FAKE_MODEL, fake_model_env, report_main  # noqa: E402

PAIRS = os.path.join(TESTS, "data", "curate", "pairs.json")
FAKE = FAKE_MODEL  # tests/test_curate.py runs the same fake model
SOURCE = ("verdicts: hand-written, one per pair in tests/data/curate/pairs.json, answered by the fake model "
          "(tests/fake/fakemodel.py); no real model is asked, so these figures measure the guards on those "
          "verdicts, not a model's judgement")
OUTCOMES = ("applied", "review", "left alone")
UNRELATED = {"relation": "unrelated", "winner": "none", "confidence": 0.9, "scope": "partial", "reason": "different subjects"}


def load_pairs() -> list[dict[str, Any]]:
    with open(PAIRS, encoding="utf-8") as fh:
        return json.load(fh)  # type: ignore[no-any-return]


def rules(pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The fake model's fixtures: each labeled pair's verdict (or raw reply); anything else unrelated."""
    out = []
    for p in pairs:
        # Match the ids where the prompt introduces each note: a body may mention other ids.
        rule: dict[str, Any] = {"contains": [f'"id": "{p["a"]["id"]}"', f'"id": "{p["b"]["id"]}"']}
        rule.update({"reply_text": p["reply_text"]} if "reply_text" in p else {"reply": p["verdict"]})
        out.append(rule)
    return out


def build(repo: str, pairs: list[dict[str, Any]]) -> None:
    from helpers import commit_all, write_memory
    from memrepo.store import repoinit

    repoinit.init(repo)
    for p in pairs:
        for side in ("a", "b"):
            fields = dict(p[side])
            fields["class_"] = fields.pop("class")
            write_memory(repo, fields.pop("id"), **fields)
    result = commit_all(repo, "labeled pairs")
    if result.returncode != 0:
        raise SystemExit(f"commit of the labeled set failed:\n{result.stderr}")
    with open(os.path.join(repo, "memrepo.json"), "w", encoding="utf-8") as fh:
        json.dump({"curate": {"max_pairs": 1000}}, fh)


def _outcome(report: dict[str, Any], ids: frozenset[str]) -> str:
    for key, name in (("applied", "applied"), ("review", "review")):
        if any(frozenset(d["ids"]) == ids for d in report[key]):
            return name
    return "left alone"


def evaluate(workdir: str) -> dict[str, Any]:
    """Run the guarded curator on the labeled set inside `workdir`; returns the per-pair rows and totals."""
    from memrepo.passes.curate import curator as curate

    pairs = load_pairs()
    repo = os.path.join(workdir, "labeled")
    rules_path = os.path.join(workdir, "rules.json")
    with open(rules_path, "w", encoding="utf-8") as fh:
        json.dump(rules(pairs), fh)
    with fake_model_env("Curate", FAKE_MODEL_RULES=rules_path, FAKE_MODEL_DEFAULT=json.dumps(UNRELATED)):
        build(repo, pairs)
        report = curate.run(repo).as_dict()
    return tabulate(pairs, report)


def tabulate(pairs: list[dict[str, Any]], report: dict[str, Any]) -> dict[str, Any]:
    rows, labeled = [], set()
    matrix = {want: {got: 0 for got in OUTCOMES} for want in OUTCOMES}
    for p in pairs:
        ids = frozenset((p["a"]["id"], p["b"]["id"]))
        labeled.add(ids)
        got = _outcome(report, ids)
        matrix[p["expect"]][got] += 1
        rows.append({"name": p["name"], "kind": p["kind"], "expect": p["expect"], "got": got, "why": p["why"]})
    cross = {name: sum(1 for d in report[key] if frozenset(d["ids"]) not in labeled)
             for key, name in (("applied", "applied"), ("review", "review"), ("skipped", "left alone"))}
    return {"source": SOURCE, "pairs": len(pairs), "rows": rows, "matrix": matrix, "cross_pairs": cross,
            "agree": sum(matrix[o][o] for o in OUTCOMES), "model_calls": report["model_calls"]}


def render(result: dict[str, Any]) -> str:
    lines = [result["source"], "", f"{'pair':<5} {'kind':<10} {'label':<11} {'curator':<11} why"]
    for r in result["rows"]:
        mark = "" if r["expect"] == r["got"] else "  <-- differs"
        lines.append(f"{r['name']:<5} {r['kind']:<10} {r['expect']:<11} {r['got']:<11} {r['why']}{mark}")
    lines.append("")
    corner = "label / curator"
    lines.append(f"{corner:<16}" + "".join(f"{o:>12}" for o in OUTCOMES))
    for want in OUTCOMES:
        lines.append(f"{want:<16}" + "".join(f"{result['matrix'][want][got]:>12}" for got in OUTCOMES))
    lines.append("")
    lines.append(f"agree with the label: {result['agree']}/{result['pairs']}; model calls: {result['model_calls']}")
    c = result["cross_pairs"]
    lines.append(f"pairs across the set: {c['applied']} applied, {c['review']} review, {c['left alone']} left alone")
    return "\n".join(lines)


def main() -> int:
    return report_main(__doc__ or "", "memrepo-curate-report-", evaluate, render)


if __name__ == "__main__":
    raise SystemExit(main())
