"""Recall's output, byte for byte, on the labeled sets: a speed change must leave it identical.

For every prompt of each labeled set under `tests/data/` the exact block the hook would inject
(`recall.format_context`) is hashed, with the ids and scores beside it for a readable diff, and
compared with `tests/data/recall_golden/<set>.jsonl`. A change meant to alter ranking (issue 17's
kind) rewrites the golden files on purpose, in its own commit, with

    MEMREPO_WRITE_GOLDEN=1 .venv/bin/python -m pytest -q tests/test_recall_golden.py

and says so; a speed change (issue 22's kind) never does.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import time
from typing import Any

import pytest

from memrepo.evaluation import checkouts, evaluate
from memrepo.base import paths
from memrepo.recall import decide as recall
from memrepo.store import index

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
GOLDEN = os.path.join(DATA, "recall_golden")
SETS = ("recall", "recall_held", "recall_blind", "recall_chat", "recall_sre", "recall_data", "recall_web")
TODAY = time.mktime(time.strptime("2026-11-30", "%Y-%m-%d"))


def _outputs(name: str, tmp: Any) -> list[dict[str, Any]]:
    repo = str(tmp / name)
    shutil.copytree(os.path.join(DATA, name, "memory"), os.path.join(repo, "memory"))
    index.rebuild(repo)
    with sqlite3.connect(paths.index_db(repo)) as db:
        where = checkouts.Checkouts.of_store(str(tmp / "cwd"), db)  # each cwd found as the hook finds it
    found = []
    for row in evaluate.load_prompts(os.path.join(DATA, name, "prompts.jsonl")):
        d = recall.decide(repo, row["prompt"], cwd=where.cwd(row.get("cwd")), previous=evaluate.previous_text(row),
                          today=TODAY)
        block = recall.format_context(d.hits) if d.hits else ""
        found.append({"id": row.get("id"), "ids": [h.id for h in d.hits], "scores": [round(h.score, 6) for h in d.hits],
                      "sha256": hashlib.sha256(block.encode("utf-8")).hexdigest()})
    return found


@pytest.mark.parametrize("name", SETS)
def test_recall_output_is_unchanged(name: str, tmp_path: Any) -> None:
    found = _outputs(name, tmp_path)
    path = os.path.join(GOLDEN, f"{name}.jsonl")
    if os.environ.get("MEMREPO_WRITE_GOLDEN") == "1":
        os.makedirs(GOLDEN, exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in found)
        pytest.skip(f"wrote {path}")
    with open(path, encoding="utf-8") as fh:
        golden = [json.loads(line) for line in fh if line.strip()]
    changed = [(g["id"], g["ids"], f["ids"], g["scores"], f["scores"]) for g, f in zip(golden, found) if g != f]
    assert len(golden) == len(found), f"{name}: {len(found)} prompts, the golden file has {len(golden)}"
    assert not changed, f"{name}: {len(changed)} prompts' recall changed, first: " + repr(changed[:3])
