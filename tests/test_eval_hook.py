"""`memrepo eval` equals the hook, prompt for prompt (issue 36, part 5): every prompt of a labeled
set goes through the real UserPromptSubmit hook as a subprocess, its cwd a real folder and its
previous turn in a real transcript, and injects exactly what `evaluate` reports for it."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from memrepo.evaluation import checkouts, evaluate
from memrepo.base import paths
from memrepo.store import index

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"


def _transcript(path: Path, previous: list[dict[str, str]]) -> str:
    """A Claude Code transcript holding the labeled previous turn, as the tail reader reads it."""
    lines = []
    for n, turn in enumerate(previous):
        if turn.get("role") == "user":
            lines.append({"type": "user", "uuid": f"u{n}", "message": {"role": "user", "content": turn["text"]}})
        else:
            lines.append({"type": "assistant", "uuid": f"a{n}", "message": {"id": f"m{n}", "role": "assistant",
                                                                          "content": [{"type": "text", "text": turn["text"]}]}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return str(path)


def _hook(repo: str, prompt: str, cwd: str | None, transcript: str) -> list[str]:
    event = {"session_id": "s-eval", "transcript_path": transcript, "cwd": cwd or "/", "hook_event_name": "UserPromptSubmit",
             "prompt": prompt}
    env = dict(os.environ, MEMREPO_DIR=repo, MEMREPO_PYTHON=sys.executable)
    proc = subprocess.run(["sh", str(ROOT / "hooks" / "run"), "user_prompt_submit"], input=json.dumps(event).encode(),
                          capture_output=True, env=env, timeout=60)
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    if not proc.stdout:
        return []
    return re.findall(r"\(id: ([a-z0-9-]+)\)", json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"])


@pytest.mark.parametrize("name", ["recall", "recall_held"])
def test_eval_injects_what_the_hook_injects(name: str, tmp_path: Path) -> None:
    repo = str(tmp_path / "store")
    shutil.copytree(DATA / name / "memory", os.path.join(repo, "memory"))
    index.rebuild(repo)
    rows = evaluate.load_prompts(str(DATA / name / "prompts.jsonl"))
    sandbox = str(tmp_path / "cwd")
    report = evaluate.evaluate(repo, rows, None, sandbox)
    with sqlite3.connect(paths.index_db(repo)) as db:
        where = checkouts.Checkouts.of_store(sandbox, db)  # the same folders eval made
    differ = []
    for n, (row, result) in enumerate(zip(rows, report["results"])):
        transcript = _transcript(tmp_path / f"t{n}.jsonl", row["previous"]) if row.get("previous") else ""
        got = _hook(repo, row["prompt"], where.cwd(row.get("cwd")), transcript)
        if got != result["got"]:
            differ.append((row["id"], got, result["got"]))
    assert differ == []
    assert len(report["results"]) == len(rows) > 90


def test_a_prompt_from_a_subfolder_is_scoped_to_its_project(tmp_path: Path) -> None:
    # The cwd's checkout is the folder named like a project of the store, not the cwd's last part.
    where = checkouts.Checkouts(str(tmp_path), {"github.com/acme/fernweh-api", "orla-site"})
    deep = where.cwd("/home/ana/work/fernweh-api/src/handlers")
    assert deep is not None and os.path.isdir(os.path.join(str(tmp_path), "home", "ana", "work", "fernweh-api", ".git"))
    from memrepo.base import projects

    found = projects.identify(deep)
    assert found is not None and found.owns("fernweh-api")
    scratch = where.cwd("/home/ana/work/scratch")
    assert projects.identify(scratch).key == "scratch"  # type: ignore[union-attr]
