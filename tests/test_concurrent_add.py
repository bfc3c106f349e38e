"""Terminals adding at once: every `memrepo add` lands, once, under its own id (real processes)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from helpers import git

N = 8


def test_parallel_adds_of_one_title_all_land_under_distinct_ids(repo: str) -> None:
    argv = [sys.executable, "-m", "memrepo", "--repo", repo, "add", "--class", "fact", "--title", "Same title everywhere"]
    procs = [subprocess.Popen(argv + ["-d", f"Written by terminal {i}."], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for i in range(N)]
    results = [(p.wait(timeout=120), p.stdout.read(), p.stderr.read()) for p in procs]  # type: ignore[union-attr]
    assert [r[0] for r in results] == [0] * N, results
    ids = sorted(out.split()[1] for _, out, _ in results)
    assert len(set(ids)) == N and ids[0] == "same-title-everywhere"
    assert all(re.fullmatch(r"same-title-everywhere-[0-9a-f]{6}", i) for i in ids[1:]), ids
    descriptions = set()
    for note_id in ids:
        with open(os.path.join(repo, "memory", f"{note_id}.md"), encoding="utf-8") as fh:
            descriptions.add(next(line for line in fh if line.startswith("description:")))
    assert len(descriptions) == N  # no add overwrote another's file
    subjects = git(repo, "log", "--format=%s").stdout.splitlines()
    assert sorted(s for s in subjects if s.startswith("add: ")) == sorted(f"add: {i}" for i in ids)
    assert git(repo, "status", "--porcelain").stdout == ""
