"""A sweep on a machine without the project's checkout and without a model, over N memories
another machine stamped (issue 37, part 2): how many stamps it changes and what it commits.

Machine A has the checkout of project `shop`: a third of the memories cite a file that exists
(verified), a third one that does not (unverified, with its `failed:` evidence), a third an
absolute path inside the checkout (verified; another machine cannot place it). A pushes its
verifier run to a bare remote; the laptop clones it, runs `memrepo init` and
`memrepo sweep --no-model` through the CLI, and the stamps of both are compared.

    .venv/bin/python tests/bench/bench_verdicts.py --n 10000 [--out FILE]

Before issue 37 the laptop's sweep committed "verify: restamp N memories", turning every
verdict into `unchecked`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

sys.path.insert(0, os.path.join(benchlib.ROOT, "tools"))

from memrepo.format import files, notes  # noqa: E402
from memrepo.passes.verify import verifier  # noqa: E402
from memrepo.store import repoinit, sync  # noqa: E402

IDENTITY = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
            "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


def _git(cwd: str, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def stamps(repo: str) -> dict[str, Any]:
    mem = os.path.join(repo, "memory")
    return {name: notes.read(os.path.join(mem, name)).meta.get("verification") for name in files.memory_files(mem)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--out", help="write the figures as JSON here")
    args = ap.parse_args(argv)
    os.environ.update(IDENTITY)
    with tempfile.TemporaryDirectory() as tmp:
        shop = os.path.join(tmp, "src", "shop")
        _write(os.path.join(shop, "src/shop/app.py"), "# app\n")
        _git(tmp, "init", "-q", "-b", "main", shop)
        bare = os.path.join(tmp, "team.git")
        _git(tmp, "init", "-q", "--bare", "-b", "main", bare)
        a = os.path.join(tmp, "a")
        repoinit.init(a)
        _git(a, "remote", "add", "origin", bare)
        _write(os.path.join(a, "index", "local.json"), json.dumps({"projects": {"shop": shop}}))
        for n in range(args.n):
            cited = ("`src/shop/app.py`", f"`src/shop/gone_{n}.py`", f"`{shop}/src/shop/app.py`")[n % 3]
            _write(os.path.join(a, "memory", f"m-{n:05d}.md"),
                   f"---\nid: m-{n:05d}\nclass: fact\ntitle: Shop module {n}\ndescription: Where module {n} lives\n"
                   f"project: shop\nsource: user\ncreated: '2026-12-01'\n---\nModule {n} is {cited}.\n")
        _git(a, "add", "-A")
        _git(a, "commit", "-q", "--no-verify", "-m", f"{args.n} memories")
        t = time.monotonic()
        report = verifier.run(a, use_model=False, today="2026-12-01")
        skipped = {r.skipped for r in report.results if r.skipped}
        if skipped:
            raise SystemExit(f"machine a skipped memories: {sorted(skipped)[:3]}")
        stamp_s = time.monotonic() - t
        sync.sync(a)
        made = stamps(a)
        laptop = os.path.join(tmp, "laptop")
        _git(tmp, "clone", "-q", bare, laptop)
        repoinit.init(laptop)
        before = _git(laptop, "rev-parse", "HEAD").strip()
        t = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "memrepo", "--repo", laptop, "sweep", "--no-model"],
                              capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.path.join(benchlib.ROOT, "tools")})
        sweep_s = time.monotonic() - t
        after = stamps(laptop)
        commits = _git(laptop, "log", "--format=%s", f"{before}..HEAD").splitlines()
        counts: dict[str, int] = {}
        for v in made.values():
            status = v.get("status") if isinstance(v, dict) else "none"
            counts[str(status)] = counts.get(str(status), 0) + 1
        out = {"memories": args.n, "stamped_by_a": counts, "a_commit": report.commit,
               "laptop_sweep_exit": proc.returncode, "laptop_commits": commits,
               "stamps_changed_by_laptop": sum(1 for k in made if made[k] != after.get(k)),
               "a_verify_s": round(stamp_s, 1), "laptop_sweep_s": round(sweep_s, 1)}
    print(json.dumps(out, indent=2))
    if args.out:
        benchlib.write_json(args.out, out)
    return 0 if out["stamps_changed_by_laptop"] == 0 and proc.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
