"""Shared helpers for the benchmark scripts: timing, statistics, memory repositories to test on."""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Callable, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
NO_HOOKS = ("-c", "core.hooksPath=/dev/null")


def summary(samples: Sequence[float], scale: float = 1000.0) -> dict[str, Any]:
    """Median, min, max (and n) of samples in seconds, scaled (default: to ms)."""
    xs = [s * scale for s in samples]
    return {"median": round(statistics.median(xs), 4), "min": round(min(xs), 4), "max": round(max(xs), 4), "n": len(xs)}


def fmt(s: dict[str, Any], unit: str = "ms") -> str:
    d = 3 if unit == "s" else 1
    return f"{s['median']:>9.{d}f} {unit}  (min {s['min']:.{d}f}, max {s['max']:.{d}f}, n={s['n']})"


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def run(cmd: Sequence[str], cwd: str | None = None, env: dict[str, str] | None = None,
        stdin: bytes | None = None, check: bool = True) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    """Run a command, capturing output; returns (wall seconds, result)."""
    start = time.perf_counter()
    proc = subprocess.run(list(cmd), cwd=cwd, env=env, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-2000:]}")
    return elapsed, proc


def bench_env(repo: str, python: str) -> dict[str, str]:
    """The environment for subprocesses: the memory repository and the interpreter hooks must use."""
    env = dict(os.environ)
    env["MEMREPO_DIR"] = repo
    env["MEMREPO_PYTHON"] = python
    env.pop("CLAUDE_PLUGIN_DATA", None)
    return env


def git(repo: str, *args: str, env: dict[str, str] | None = None) -> float:
    elapsed, _ = run(["git", *args], cwd=repo, env=env)
    return elapsed


def make_repo(root: str, n: int, seed: int, python: str, log: Callable[[str], None] = print) -> dict[str, Any]:
    """A memory repository with n generated memories, committed in one commit and indexed.

    The bulk commit uses `--no-verify`: pre-commit validation of 10,000 new files is not what is
    measured here (genmem validates what it writes). The post-commit hook still runs and indexes.
    """
    import genmem
    from memrepo.store import index, repoinit

    info: dict[str, Any] = {"n": n, "seed": seed}
    env = bench_env(root, python)
    os.environ["MEMREPO_PYTHON"] = python
    info["init_s"], _ = timed(lambda: repoinit.init(root))
    gen = genmem.write_corpus(os.path.join(root, "memory"), n, seed, check="sample")
    if gen["problems"]:
        raise RuntimeError("generated memories are invalid:\n" + "\n".join(gen["problems"][:20]))
    info["generate"] = {k: v for k, v in gen.items() if k != "problems"}
    git(root, "add", "-A", "memory", env=env)
    info["bulk_commit_no_verify_s"] = round(git(root, "commit", "-q", "--no-verify", "-m", f"bench: {n} memories", env=env), 3)
    status = index.status(root)
    info["indexed_after_bulk_commit"] = status["count"]
    if status["count"] != n or status.get("commit") != head(root):
        log(f"  post-commit left {status['count']} of {n} indexed; rebuilding")
        index.rebuild(root)
    log(f"  repo {root}: {n} memories, bulk commit (--no-verify; post-commit indexed) {info['bulk_commit_no_verify_s']:.1f}s")
    return info


def head(repo: str) -> str:
    _, proc = run(["git", "rev-parse", "HEAD"], cwd=repo)
    return proc.stdout.decode().strip()


def index_bytes(repo: str) -> dict[str, int]:
    from memrepo.base import paths

    db = paths.index_db(repo)
    sizes = {}
    for suffix in ("", "-wal", "-shm"):
        try:
            sizes["db" + suffix] = os.path.getsize(db + suffix)
        except FileNotFoundError:
            pass
    sizes["total"] = sum(sizes.values())
    return sizes


def write_json(path: str, data: Any) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)
        fh.write("\n")


def machine() -> dict[str, Any]:
    """Facts that explain the numbers: cores, load, interpreter, sqlite."""
    import platform
    import sqlite3

    return {"cpus": os.cpu_count(), "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
            "python": sys.version.split()[0], "sqlite": sqlite3.sqlite_version, "platform": platform.platform()}


# -- the labeled-set reports (report_curate.py, report_enrich.py) -------------------------------

FAKE_MODEL = os.path.join(ROOT, "tests", "fake", "fakemodel.py")


def fake_model_env(who: str, **settings: str) -> "contextlib.AbstractContextManager[None]":
    """For the block: a git identity (`who` Report) unless one is set, the fake model as the model
    command, and `settings` (FAKE_MODEL_RULES=…); the environment is put back afterwards."""
    identity = {"GIT_AUTHOR_NAME": f"{who} Report", "GIT_AUTHOR_EMAIL": "report@example.com",
                "GIT_COMMITTER_NAME": f"{who} Report", "GIT_COMMITTER_EMAIL": "report@example.com",
                "GIT_CONFIG_NOSYSTEM": "1"}

    @contextlib.contextmanager
    def scope() -> Any:
        changed = {**{k: v for k, v in identity.items() if k not in os.environ},
                   "MEMREPO_MODEL_CMD": f"{sys.executable} {FAKE_MODEL}", **settings}
        saved = {k: os.environ.get(k) for k in changed}
        os.environ.update(changed)
        try:
            yield
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    return scope()


def report_main(doc: str, prefix: str, evaluate: Callable[[str], dict[str, Any]],
                render: Callable[[dict[str, Any]], str]) -> int:
    """A report's command line: run `evaluate` in a throwaway folder, print `render` of it or JSON."""
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        result = evaluate(tmp)
    print(json.dumps(result, indent=1) if args.json else render(result))
    return 0
