"""LoCoMo's judging half runs through the same path as its training half (issue 36): a folder in
LoCoMo's format beside the training half is a judged set, and `tests/bench/labeled.py --convert`
writes it out as labeled stores that `memrepo eval` scores through the hook's own decision."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memrepo.format import notes

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "tests" / "bench"

TURNS = {  # id -> (session, speaker, text)
    "conv-90-d1-1": (1, "Ines", "I finally adopted a grey greyhound called Pimenta from the shelter in Braga."),
    "conv-90-d1-2": (1, "Tomas", "That's lovely! How is she settling in?"),
    "conv-90-d2-1": (2, "Ines", "Pimenta learned to open the fridge door, I had to buy a child lock."),
}
QUERIES = [
    {"id": "conv-90-q000", "conversation": "conv-90", "query": "What is the name of Ines's greyhound?",
     "relevant": ["conv-90-d1-1"], "category": "single-hop", "kind": "answerable"},
    {"id": "conv-90-q001", "conversation": "conv-90", "query": "What did Tomas adopt from the shelter?",
     "relevant": [], "category": "adversarial", "kind": "abstain"},
]
CROSS = [{"id": "conv-80-q000-in-conv-90", "conversation": "conv-90", "query": "Which violin concerto did Rui rehearse?",
          "relevant": [], "category": "cross-conversation", "kind": "abstain"}]


def _locomo(folder: Path, cross: bool = True) -> Path:
    (folder / "memories").mkdir(parents=True)
    for mid, (session, speaker, text) in TURNS.items():
        dia = "D" + mid.split("-d")[1].replace("-", ":")
        (folder / "memories" / f"{mid}.md").write_text(
            f'---\nid: {mid}\ntitle: "{speaker} ({dia})"\ncreated: 2023-05-0{session}T13:56:00\ntopics: []\n'
            f'entities: []\nsource: locomo10\nconversation: conv-90\nsession: {session}\ndia_id: "{dia}"\n'
            f'speaker: "{speaker}"\n---\n{speaker}: {text}\n', encoding="utf-8")
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUERIES), encoding="utf-8")
    if cross:
        (folder / "queries_cross.jsonl").write_text("".join(json.dumps(q) + "\n" for q in CROSS), encoding="utf-8")
    return folder


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_convert_writes_labeled_stores_memrepo_eval_scores(tmp_path: Path) -> None:
    src = _locomo(tmp_path / "locomo-test")
    dest = tmp_path / "stores"
    done = _run(str(BENCH / "labeled.py"), "--convert", str(src), str(dest))
    assert done.returncode == 0, done.stderr
    store = dest / "conv-90"
    assert "memrepo eval" in done.stdout and str(store / "prompts.jsonl") in done.stdout
    # Each turn is a memrepo event in its LoCoMo session, as the training half is converted.
    first = notes.read(str(store / "memory" / "conv-90-d1-1.md"))
    assert (first.meta["class"], first.meta["source"], first.meta["session"]) == ("event", "import", "conv-90-s1")
    assert first.meta["title"] == "Ines (D1:1)"
    rows = [json.loads(line) for line in (store / "prompts.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["id"], r["kind"], r["expect"]) for r in rows] == [
        ("conv-90-q000", "answerable", ["conv-90-d1-1"]), ("conv-90-q001", "adversarial", []),
        ("conv-80-q000-in-conv-90", "cross", [])]
    scored = subprocess.run([sys.executable, "-m", "memrepo", "eval", str(store / "prompts.jsonl"), "--memory",
                             str(store / "memory"), "--top", "3", "--today", "2026-11-30", "--json"],
                            capture_output=True, text=True, timeout=120, env=dict(os.environ, HOME=str(tmp_path)))
    assert scored.returncode == 0, scored.stderr
    results = {r["id"]: r for r in json.loads(scored.stdout)["results"]}
    assert "conv-90-d1-1" in results["conv-90-q000"]["got"]
    assert results["conv-80-q000-in-conv-90"]["got"] == []


def test_convert_refuses_to_write_over_a_store(tmp_path: Path) -> None:
    src = _locomo(tmp_path / "locomo-test")
    (tmp_path / "stores" / "conv-90").mkdir(parents=True)
    done = _run(str(BENCH / "labeled.py"), "--convert", str(src), str(tmp_path / "stores"))
    assert done.returncode != 0 and "exists" in done.stderr
    assert not (tmp_path / "stores" / "conv-90" / "prompts.jsonl").exists()


def test_another_half_is_a_judged_set_read_like_the_training_half(tmp_path: Path) -> None:
    sys.path.insert(0, str(BENCH))
    try:
        import labeled
    finally:
        sys.path.remove(str(BENCH))
    name = labeled.add_locomo(str(_locomo(tmp_path / "locomo-test", cross=False)))
    try:
        assert name == "locomo-test" and labeled.is_locomo(name) and name not in labeled.FIT
        assert labeled.note(name).startswith("not fitted on")
        built = labeled.stores(name, str(tmp_path / "built"))
        assert [(conv, len(rows)) for conv, _, rows in built] == [("conv-90", 2)]  # no cross file: its own questions
        with pytest.raises(SystemExit, match="not LoCoMo's format"):
            labeled.add_locomo(str(tmp_path / "built"))
    finally:
        labeled.SETS.pop(name, None)
        labeled.NOTES.pop(name, None)
