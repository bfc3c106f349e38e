"""The curator's, enrichment's and the usage judge's reports say where their verdicts, aliases and labels come
from (issues 16 and 17)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from helpers import ROOT

BENCH = os.path.join(ROOT, "tests", "bench")


def report(name: str) -> tuple[dict, str]:
    """The script's figures (run once, `--json`) and the text it prints for them: its `render`
    of those figures, not a second run (the runs are the suite's slowest tests)."""
    as_json = subprocess.run([sys.executable, os.path.join(BENCH, name), "--json"], capture_output=True, text=True, timeout=600)
    assert as_json.returncode == 0, as_json.stderr
    data = json.loads(as_json.stdout)
    spec = importlib.util.spec_from_file_location(f"bench_{name[:-3]}", os.path.join(BENCH, name))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    saved = list(sys.path)
    try:
        spec.loader.exec_module(module)  # the script puts tests/bench and tools first on sys.path
    finally:
        sys.path[:] = saved
    return data, module.render(data)


def test_the_curate_report_says_its_verdicts_are_hand_written() -> None:
    data, text = report("report_curate.py")
    assert text.splitlines()[0] == data["source"] and "hand-written" in data["source"] and "no real model" in data["source"]
    assert data["agree"] >= 37 and data["pairs"] == 40


def test_the_enrich_report_says_its_aliases_are_scripted() -> None:
    data, text = report("report_enrich.py")
    assert text.splitlines()[0] == data["source"] and "scripted fake-model replies" in data["source"]
    assert data["before"]["hit@2"] <= 0.25 and data["after"]["hit@2"] == 1.0


def test_the_usage_report_says_its_labels_are_hand_written() -> None:
    data, text = report("report_usage.py")
    assert text.splitlines()[0] == data["source"] and "written blind by hand" in data["source"]
    assert data["cases"] == 64 and data["pairs"] == 100
    # A regression guard at the measured level (issue 17, part 6), not a target.
    assert data["precision"] >= 0.8 and data["recall"] >= 0.7


def test_recall_quality_reports_each_set_beside_plain_bm25_and_the_stores_common_words() -> None:
    """Every set's figures come with how it stands to the fit, plain BM25's top two and top ten on
    the same store, recall's ranking before its decision, and the misses by cause (issue 36)."""
    out = subprocess.run([sys.executable, os.path.join(BENCH, "recall_quality.py"), "--sets", "recall", "--json"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    (m,) = json.loads(out.stdout)
    assert m["note"] == "fitted on" and m["top"] == 2
    s = m["summary"]
    # measured at the commit that added it: 56 of 58 expecting prompts in plain BM25's first ten
    assert round(s["plain"]["top10"] * 58) == 56
    assert s["plain"]["top2"] < s["ranked"]["top2"]  # recall's ranking beats plain BM25 on this set
    assert sum(s["causes"].values()) == sum(round(v["n"] * (1 - v.get("hit@2", v.get("silence", 1)))) for v in s["per_kind"].values())
    common = m["common"]
    assert common["share"] == 0.25 and common["count"] >= len(common["top"]) > 0
    assert all(share > 0.25 and not word.isdigit() for word, share in common["top"])


def test_the_decision_s_constants_are_what_the_fitting_script_fits() -> None:
    """recall/calibrate.py's coefficients are reproducible: a fresh fit on the fitting sets
    (tests/bench/fit_recall.py, issue 36) gives them digit for digit."""
    fitting = [os.path.join(os.path.dirname(ROOT), "shared", "eval", "dev"),
               os.path.join(os.path.dirname(ROOT), "shared", "data", "locomo-train")]
    if not all(os.path.isdir(p) for p in fitting):
        pytest.skip("the fitting sets in ../shared are not on this machine")
    out = subprocess.run([sys.executable, os.path.join(BENCH, "fit_recall.py"), "--check"], capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "calibrate.py holds these constants" in out.stderr


def test_the_offline_alternatives_start_from_what_recall_gives_now() -> None:
    """Each alternative's line starts from recall's own figure on the same candidates (its ranking's
    first two, or its decision's hit and silence), and says how its set stands to the fit (issue 36)."""
    out = subprocess.run([sys.executable, os.path.join(BENCH, "recall_offline.py"), "--sets", "recall",
                          "--only", "own-first", "--only", "threshold"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("own-first: ranking's first k")
    # recall's ranking has 54 of tests/data/recall's 58 expecting prompts in its first two
    assert lines[1].split() == ["recall", "(fitted", "on)", "0.931", "->", "0.931"]
    decision = [line for line in lines if line.startswith("  recall")][1:]
    assert len(decision) == 3 and all(" hit 0.84->" in line for line in decision)  # one per threshold tried


def test_the_ceiling_report_reproduces_the_hook_and_bounds_it() -> None:
    """recall_ceiling.py runs every prompt once with the decision always speaking and keeps its p:
    at the threshold in force that gives what the hook gives (fit_recall.py's and `memrepo eval`'s
    figures for tests/data/recall), and no threshold gives more hits than always speaking (issue 36)."""
    out = subprocess.run([sys.executable, os.path.join(BENCH, "recall_ceiling.py"), "--sets", "recall", "--json"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    (s,) = json.loads(out.stdout)
    assert s["set"] == "recall" and s["note"] == "fitted on" and s["expecting"] == 58
    # the hook at the threshold in force: 49 of 58 recalled, 35 of 36 silent prompts left silent
    assert round(s["now"]["hit"] * 58) == 49 and round(s["now"]["silence"] * 36) == 35
    assert s["always"]["hit"] >= s["now"]["hit"] and s["always"]["silence"] <= s["now"]["silence"]
    best = s["best_hit"]
    assert best["general"] == "-" and best["conversational"] <= s["always"]["hit"]
    assert round(s["plain"]["top10"] * 58) == 56
    floor = s["plain_floor"]
    assert floor["hit"] <= s["plain"]["topk"] and 0.0 <= floor["silence"] <= 1.0
