"""Benchmark history: `memrepo show <old id>` in a repository of 1,000 memories and 10,000 commits,
and what one commit's tree costs at 100,000 memories, flat or sharded.

show: the repository is built with `git fast-import` (one commit adds the memories, then each
commit changes one of them, with `Memrepo-*` trailers), not 10,000 `git commit`s. The memory
asked about is touched only by the first commit, so git walks all of history for it (the worst
case). Timed: the whole CLI process (`python -m memrepo --repo R show ID`), and the `git log`
it runs, without and then with a commit-graph with changed-path filters. Each checkout named by
--checkouts is timed on the same repository (its CLI imported through PYTHONPATH), so the code
before a change can be compared with the code after it:

    git worktree add /tmp/wt-before <sha>
    .venv/bin/python tests/bench/bench_history.py --checkouts /tmp/wt-before,. [--commits 10000]
        [--memories 1000] [--rounds 7] [--shard-entries 100000] [--out FILE]

shard: a tree of N entries in memory/ (flat) and the same N under 256 two-character folders
(sharded); a one-file change is written with plumbing into a temporary index (`read-tree`,
`update-index`, `write-tree`), as `git commit` does. Reported: the median `write-tree` time and
the bytes of new tree objects one such commit adds.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

TOOLS = os.path.join(benchlib.ROOT, "tools")
sys.path.insert(0, TOOLS)
IDENT = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
         "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    return {**os.environ, **IDENT, **(extra or {})}


def _git(repo: str, *args: str, input: bytes | None = None, env: dict[str, str] | None = None) -> bytes:
    proc = subprocess.run(["git", *args], cwd=repo, input=input, env=env or _env(), capture_output=True)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args[:3])} failed: {proc.stderr.decode(errors='replace')[-1500:]}")
    return proc.stdout


def _text(i: int, rev: int) -> bytes:
    from memrepo.format import notes

    note = notes.new_note(id=f"hist-{i:05d}", title=f"History note {i}", description=f"What note {i} says.",
                          class_="fact", source="user", created="2026-01-15", topics=["history", f"topic-{i % 37}"],
                          body=f"Note {i}, revision {rev}: the build of service {i % 53} runs on runner {rev % 11}.\n")
    return notes.serialize(note).encode()


def build(root: str, n_memories: int, n_commits: int) -> dict[str, Any]:
    """A memory repository whose main holds n_commits commits, made with one `git fast-import`."""
    from memrepo.store import index, repoinit

    os.environ.update(IDENT)
    start = time.perf_counter()
    repoinit.init(root)
    # Drop the graph init wrote: the first timings are without one.
    for name in ("commit-graph", "commit-graphs"):
        subprocess.run(["rm", "-rf", os.path.join(root, ".git", "objects", "info", name)], check=True)
    parent = _git(root, "rev-parse", "HEAD").decode().strip()
    out = bytearray()
    when = 1767225600  # 2026-01-01

    def commit(mark: int, message: str, files: dict[str, bytes], frm: str | None) -> None:
        msg = message.encode()
        out.extend(f"commit refs/heads/main\nmark :{mark}\ncommitter Bench <bench@example.com> {when + mark} +0000\n".encode())
        out.extend(f"data {len(msg)}\n".encode() + msg + b"\n")
        if frm:
            out.extend(f"from {frm}\n".encode())
        for rel, data in files.items():
            out.extend(f"M 100644 inline {rel}\ndata {len(data)}\n".encode() + data + b"\n")
        out.extend(b"\n")

    commit(1, f"bench: {n_memories} memories\n\nMemrepo-Action: import\nMemrepo-Run: 2026-01-01T00-00-00-import\n",
           {f"memory/hist-{i:05d}.md": _text(i, 0) for i in range(n_memories)}, parent)
    for k in range(2, n_commits + 1):
        i = 1 + (k * 7919) % (n_memories - 1)  # never memory 0: it is the old one asked about
        run = f"2026-01-01T00-00-{k % 60:02d}-edit"
        commit(k, f"edit: hist-{i:05d}\n\nMemrepo-Action: edit\nMemrepo-Run: {run}\nMemrepo-Id: hist-{i:05d}\n",
               {f"memory/hist-{i:05d}.md": _text(i, k)}, None)
    _git(root, "fast-import", "--quiet", "--force", input=bytes(out))
    _git(root, "reset", "-q", "--hard", "main")
    index.rebuild(root)
    count = int(_git(root, "rev-list", "--count", "HEAD").decode())
    return {"commits": count, "memories": n_memories, "build_s": round(time.perf_counter() - start, 2)}


def _median(cmd: list[str], cwd: str, env: dict[str, str], rounds: int) -> float:
    subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, check=True)  # warm the page cache
    xs = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, check=True)
        xs.append(time.perf_counter() - t0)
    return round(statistics.median(xs), 4)


def time_show(repo: str, checkouts: list[str], note_id: str, rounds: int, graph: bool) -> dict[str, Any]:
    rel = f"memory/{note_id}.md"
    found: dict[str, Any] = {"git log (path-limited)": _median(["git", "log", "-n20", "--format=%H", "--", rel], repo, _env(), rounds),
                             "git log --follow": _median(["git", "log", "-n20", "--follow", "--format=%H", "--", rel], repo, _env(), rounds)}
    for checkout in checkouts:
        tools = os.path.join(os.path.abspath(checkout), "tools")
        env = _env({"PYTHONPATH": tools, "MEMREPO_DIR": repo})
        found[f"memrepo show ({checkout})"] = _median([sys.executable, "-m", "memrepo", "--repo", repo, "show", note_id],
                                                      repo, env, rounds)
    return {"commit_graph": graph, "seconds": found}


# -- sharding ------------------------------------------------------------------

def _mktree(repo: str, entries: dict[str, tuple[str, str]]) -> str:
    """A tree object of {name: (mode, sha)} (mode 040000: a tree), written with `git mktree`."""
    lines = [f"{mode} {'tree' if mode == '040000' else 'blob'} {sha}\t{name}\n" for name, (mode, sha) in sorted(entries.items())]
    return _git(repo, "mktree", input="".join(lines).encode()).decode().strip()


def _loose_bytes(repo: str, sha: str) -> int:
    data = _git(repo, "cat-file", "tree", sha)
    return len(zlib.compress(f"tree {len(data)}\0".encode() + data))


def shard_bench(tmp: str, n: int, rounds: int) -> dict[str, Any]:
    repo = os.path.join(tmp, "shard")
    subprocess.run(["git", "init", "-q", repo], check=True, env=_env())
    blob = _git(repo, "hash-object", "-w", "--stdin", input=b"a memory\n").decode().strip()
    new_blob = _git(repo, "hash-object", "-w", "--stdin", input=b"a changed memory\n").decode().strip()
    names = [f"memory-{hashlib.sha1(str(i).encode()).hexdigest()[:16]}-note.md" for i in range(n)]
    flat_mem = _mktree(repo, {name: ("100644", blob) for name in names})
    shards: dict[str, dict[str, tuple[str, str]]] = {}
    for name in names:
        shards.setdefault(name[7:9], {})[name] = ("100644", blob)
    sharded_mem = _mktree(repo, {d: ("040000", _mktree(repo, files)) for d, files in shards.items()})
    result: dict[str, Any] = {"entries": n, "shards": len(shards)}
    target = names[n // 2]
    for layout, mem_tree, path in (("flat", flat_mem, f"memory/{target}"),
                                   ("sharded", sharded_mem, f"memory/{target[7:9]}/{target}")):
        root = _mktree(repo, {"memory": ("040000", mem_tree)})
        env = _env({"GIT_INDEX_FILE": os.path.join(tmp, f"index-{layout}")})
        xs = []
        new_root = ""
        for _ in range(rounds):
            _git(repo, "read-tree", root, env=env)
            _git(repo, "update-index", "--cacheinfo", f"100644,{new_blob},{path}", env=env)
            t0 = time.perf_counter()
            new_root = _git(repo, "write-tree", env=env).decode().strip()
            xs.append(time.perf_counter() - t0)
        changed = [new_root, _git(repo, "rev-parse", f"{new_root}:memory").decode().strip()]
        if layout == "sharded":
            changed.append(_git(repo, "rev-parse", f"{new_root}:memory/{target[7:9]}").decode().strip())
        result[layout] = {"write_tree_median_ms": round(statistics.median(xs) * 1000, 1),
                          "new_tree_objects": len(changed),
                          "new_tree_bytes_zlib": sum(_loose_bytes(repo, s) for s in changed),
                          "memory_tree_bytes": len(_git(repo, "cat-file", "tree", changed[1]))}
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkouts", default=".", help="comma-separated checkouts whose CLI to time (default: this one)")
    ap.add_argument("--memories", type=int, default=1000)
    ap.add_argument("--commits", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--shard-entries", type=int, default=100000, help="0 skips the sharding measurement")
    ap.add_argument("--out", help="write the figures as JSON to this file")
    args = ap.parse_args()
    checkouts = [c for c in args.checkouts.split(",") if c]
    result: dict[str, Any] = {"machine": benchlib.machine()}
    with tempfile.TemporaryDirectory(prefix="memrepo-bench-history-") as tmp:
        repo = os.path.join(tmp, "mem")
        result["repo"] = build(repo, args.memories, args.commits)
        print(f"built {result['repo']}", file=sys.stderr)
        result["without_graph"] = time_show(repo, checkouts, "hist-00000", args.rounds, graph=False)
        from memrepo.vcs import gitops

        t0 = time.perf_counter()
        gitops.write_commit_graph(repo)
        result["commit_graph_write_s"] = round(time.perf_counter() - t0, 3)
        result["with_graph"] = time_show(repo, checkouts, "hist-00000", args.rounds, graph=True)
        if args.shard_entries:
            result["shard"] = shard_bench(tmp, args.shard_entries, args.rounds)
    print(f"repository: {result['repo']['memories']} memories, {result['repo']['commits']} commits "
          f"(built in {result['repo']['build_s']} s); commit-graph write {result['commit_graph_write_s']} s")
    for key in ("without_graph", "with_graph"):
        print(f"{key.replace('_', ' ')}:")
        for what, secs in result[key]["seconds"].items():
            print(f"  {what:<60} {secs * 1000:8.1f} ms (median of {args.rounds})")
    if "shard" in result:
        s = result["shard"]
        print(f"one-file commit tree at {s['entries']} entries ({s['shards']} shards):")
        for layout in ("flat", "sharded"):
            d = s[layout]
            print(f"  {layout:<8} write-tree {d['write_tree_median_ms']:7.1f} ms; new tree objects {d['new_tree_objects']}, "
                  f"{d['new_tree_bytes_zlib'] / 1024:.0f} KiB compressed (memory/ tree {d['memory_tree_bytes'] / 1024:.0f} KiB)")
    if args.out:
        benchlib.write_json(args.out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
