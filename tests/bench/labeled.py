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

LoCoMo's other half, kept for judging, is a judged set as soon as it is in the same format beside
the training half: every `../shared/data/locomo-*` folder but `locomo-train` is a set named after
its folder (`locomo-test`), read and converted the same way and never fitted on. Another folder can
be named with `add_locomo(path)` (the benchmarks' `--locomo DIR`). `python tests/bench/labeled.py
--convert SRC DEST` writes such a folder out as ordinary labeled stores (`DEST/conv-26/memory/`,
`DEST/conv-26/prompts.jsonl`), for `memrepo eval ... --top 3`.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import sys
import tempfile
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
LOCOMO_TRAIN = "locomo-train"
NOTES = {
    "dev": "tuning set", "recall": "fitted on", "held": "fitted on", "locomo": "fitted on (LoCoMo's training half)",
    "sre": "fitted on", "small-fit": "fitted on: five of recall_small's stores",
    "small": "not fitted on: the other five of recall_small's stores",
}
# recall_small's ten stores, alternately in the fitting half and the judged half (by name).
HALVES = {"small-fit": 0, "small": 1}


def is_locomo(name: str) -> bool:
    """A LoCoMo set (its training half, or another half judged): R@3, not hit@2."""
    return name == "locomo" or name.startswith("locomo-")


def add_locomo(path: str) -> str:
    """Make a folder in LoCoMo's format (`memories/`, `queries.jsonl`, `queries_cross.jsonl`) a
    judged set; its name is `locomo-` and the folder's name (`locomo-test` stays `locomo-test`)."""
    path = os.path.abspath(path)
    for needed in ("memories", "queries.jsonl"):
        if not os.path.exists(os.path.join(path, needed)):
            raise SystemExit(f"{path}: not LoCoMo's format (no {needed}); see {SETS['locomo']}/README.md")
    base = os.path.basename(path.rstrip(os.sep))
    name = base if base.startswith("locomo-") else f"locomo-{base}"
    SETS[name] = path
    NOTES.setdefault(name, "not fitted on (LoCoMo, another half)")
    return name


for _other in sorted(glob.glob(os.path.join(SHARED, "data", "locomo-*"))):
    if os.path.basename(_other) != LOCOMO_TRAIN and os.path.isdir(os.path.join(_other, "memories")):
        add_locomo(_other)


def note(name: str) -> str:
    """How a set stands to the fitted decision, for every line that reports it."""
    return NOTES.get(name, "not fitted on")


def result_line(name: str, distractors: int, knob: str, s: dict[str, Any], top: int, digits: int = 2) -> str:
    """One line of an alternative's figures on a set (`evaluate.summarize`'s `s`), as the
    experiment scripts print them: hit, silence, the ranking's and plain BM25's reach."""
    return (f"{name} ({note(name)}) +{distractors} distractors {knob}: hit@{top} {s[f'hit@{top}']:.{digits}f},"
            f" silence {s['silence']:.{digits}f}, ranking top{top} {s['ranked'][f'top{top}']:.{digits}f},"
            f" plain BM25 top{top} {s['plain'][f'top{top}']:.{digits}f}")


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
    cross = os.path.join(base, "queries_cross.jsonl")
    questions = _prompts(os.path.join(base, "queries.jsonl")) + (_prompts(cross) if os.path.exists(cross) else [])
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
    if is_locomo(name):
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


def convert(src: str, dest: str) -> list[str]:
    """Write a LoCoMo-format folder out as labeled stores, one per conversation: DEST/CONV/memory/
    and DEST/CONV/prompts.jsonl (what `memrepo eval` reads). Returns the stores' folders."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for conv, built, rows in _locomo(os.path.abspath(src), tmp):
            target = os.path.join(dest, conv)
            if os.path.exists(target):
                raise SystemExit(f"{target} exists: convert into an empty folder")
            shutil.copytree(os.path.join(built, "memory"), os.path.join(target, "memory"))
            with open(os.path.join(target, "prompts.jsonl"), "w", encoding="utf-8") as fh:
                for row in rows:
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.append(target)
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description="The labeled recall sets: list them, or convert a folder in LoCoMo's "
                                             "format into labeled stores `memrepo eval` reads.")
    ap.add_argument("--convert", nargs=2, metavar=("SRC", "DEST"),
                    help="write LoCoMo-format SRC as DEST/<conversation>/{memory/,prompts.jsonl}")
    args = ap.parse_args(argv)
    if args.convert:
        for target in convert(*args.convert):
            print(f"{target}: memrepo eval {os.path.join(target, 'prompts.jsonl')} --memory "
                  f"{os.path.join(target, 'memory')} --top 3 --today 2026-11-30")
        return 0
    for name in SETS:
        print(f"{name:10s} {note(name):45s} {SETS[name]}{'' if os.path.isdir(SETS[name]) else ' (absent)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
