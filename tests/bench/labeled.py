"""The labeled recall sets, as indexed stores with their prompts, for the quality benchmarks.

    SETS: name -> where it lives; FIT: the sets recall's decision is fitted on (fit_recall.py);
    every other set is judged only.

A set is a folder with `memory/` and `prompts.jsonl`, or a folder of such folders (one store
each: `tests/data/recall_small`). `locomo` is ../shared/data/locomo-train, LoCoMo's training half
(CC BY-NC 4.0, see its NOTICE.md; read in place, never copied into this repository), converted
as its README says: each conversation its own store, each dialogue turn an `event` with `source:
import`, titled by speaker and turn id, described by its first 200 characters, in its LoCoMo
session (`session: conv-26-s2`). Its questions are
`answerable` (an evidence turn expected), `adversarial` (LoCoMo's unanswerable ones; no target)
and `cross` (a question about another conversation of the half: silence expected), each asked of
its own conversation's store.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from memrepo.format import notes  # noqa: E402
from memrepo.store import index  # noqa: E402

SHARED = os.path.join(os.path.dirname(ROOT), "shared")
DATA = os.path.join(ROOT, "tests", "data")
SETS = {
    "dev": os.path.join(SHARED, "eval", "dev"),
    "recall": os.path.join(DATA, "recall"),
    "held": os.path.join(DATA, "recall_held"),
    "locomo": os.path.join(SHARED, "data", "locomo-train"),
    "blind": os.path.join(DATA, "recall_blind"),
    "chat": os.path.join(DATA, "recall_chat"),
    "small-fit": os.path.join(DATA, "recall_small"),
    "small": os.path.join(DATA, "recall_small"),
    "sre": os.path.join(DATA, "recall_sre"),
    "data": os.path.join(DATA, "recall_data"),
    "web": os.path.join(DATA, "recall_web"),
}
FIT = ("dev", "recall", "held", "locomo", "sre", "small-fit")
NOTES = {
    "dev": "tuning set", "recall": "fitted on", "held": "fitted on", "locomo": "fitted on (LoCoMo's training half)",
    "sre": "fitted on", "small-fit": "fitted on: five of recall_small's stores",
    "small": "not fitted on: the other five of recall_small's stores",
}
# recall_small's ten stores, alternately in the fitting half and the judged half (by name).
HALVES = {"small-fit": 0, "small": 1}


def note(name: str) -> str:
    """How a set stands to the fitted decision, for every line that reports it."""
    return NOTES.get(name, "not fitted on")


def _prompts(path: str) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _locomo_note(path: str) -> notes.Note:
    import yaml

    with open(path, encoding="utf-8") as fh:
        head, _, body = fh.read().partition("\n---\n")
    meta = yaml.safe_load(head.lstrip("-\n"))
    turn = body.strip()
    desc = " ".join(turn.split())
    desc = desc if len(desc) <= 200 else desc[:199] + "…"
    # LoCoMo's sessions are the conversation's own (a day's chat): a turn keeps its session, as an
    # importer of any chat keeps the session a turn was said in.
    return notes.new_note(id=meta["id"], title=f"{meta['speaker']} ({meta['dia_id']})", description=desc,
                          source="import", created=str(meta["created"])[:10],
                          session=f"{meta['conversation']}-s{meta['session']}", body=turn + "\n", **{"class": "event"})


def _store(dest: str, files: list[str], convert: bool = False) -> str:
    os.makedirs(os.path.join(dest, "memory"))
    for f in files:
        if convert:
            n = _locomo_note(f)
            notes.write(n, os.path.join(dest, "memory", n.meta["id"] + ".md"))
        else:
            shutil.copy(f, os.path.join(dest, "memory"))
    return dest


def _locomo(base: str, tmp: str) -> list[tuple[str, str, list[dict[str, Any]]]]:
    questions = _prompts(os.path.join(base, "queries.jsonl")) + _prompts(os.path.join(base, "queries_cross.jsonl"))
    by: dict[str, list[str]] = {}
    for path in sorted(glob.glob(os.path.join(base, "memories", "*.md"))):
        by.setdefault(os.path.basename(path).split("-d")[0], []).append(path)
    out = []
    for conv, files in sorted(by.items()):
        rows = []
        for q in questions:
            if q["conversation"] == conv:
                kind = "answerable" if q["kind"] == "answerable" else ("adversarial" if q["category"] == "adversarial" else "cross")
                rows.append({"id": q["id"], "prompt": q["query"], "expect": q["relevant"], "kind": kind})
        out.append((conv, _store(os.path.join(tmp, conv), files, convert=True), rows))
    return out


def stores(name: str, tmp: str, extra: str | None = None) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """[(store name, indexed store, prompts)] of a set, built under `tmp`; `extra`, a folder of
    memory files added to every store (generated distractors)."""
    base = SETS[name]
    if name == "locomo":
        built = _locomo(base, tmp)
    elif os.path.exists(os.path.join(base, "prompts.jsonl")):
        built = [(name, _store(os.path.join(tmp, name), sorted(glob.glob(os.path.join(base, "memory", "*.md")))),
                  _prompts(os.path.join(base, "prompts.jsonl")))]
    else:
        subs = [sub for sub in sorted(os.listdir(base)) if os.path.exists(os.path.join(base, sub, "prompts.jsonl"))]
        if name in HALVES:
            subs = subs[HALVES[name]::2]
        built = [(sub, _store(os.path.join(tmp, sub), sorted(glob.glob(os.path.join(base, sub, "memory", "*.md")))),
                  _prompts(os.path.join(base, sub, "prompts.jsonl"))) for sub in subs]
    for _, repo, _ in built:
        if extra:
            for fname in os.listdir(extra):
                if not os.path.exists(os.path.join(repo, "memory", fname)):
                    shutil.copy(os.path.join(extra, fname), os.path.join(repo, "memory", fname))
        index.rebuild(repo)
    return built


def available(names: list[str]) -> list[str]:
    """The names whose folders exist here (../shared may be absent on another machine)."""
    return [n for n in names if os.path.isdir(SETS[n])]
