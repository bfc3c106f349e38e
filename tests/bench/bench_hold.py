"""What one lock hold of the group commit costs, step by step, in instructions (issue 44).

A memory repository of N generated memories (`--reuse DIR` keeps it); for each hold size K
(`--changes 1,4,10`) a copy of it, one ordinary `memrepo add` run in it (so memrepo's own index
and the cache are as a day of adds leaves them), then one process under callgrind (children
traced) that loads what `memrepo add` has loaded when it reaches the lock, makes K new memories
as `add` makes them, queues K - 1 of them as waiting writers' entries (`vcs.group.Entry.put`,
each flocked as a live writer's) and commits the first through `group.submit`: the lock hold
takes the K - 1 and commits K commits. The hold's Python is counted step by step (callgrind
dumps its counts each time the process calls `getppid`, which a marker around each wrapped
step does; the wrappers are set from outside memrepo) and every git it starts is counted whole
and charged to the step that started it. Printed: each step's instructions (Python, git, the
gits it ran), the hold's total, and from two sizes what a hold costs once and what each change
adds. The modules the hold imports are listed; `--preload` imports them before the lock, so the
hold's own count leaves them out and the imports show as one line.

    .venv/bin/python tests/bench/bench_hold.py [--memories 1000] [--changes 1,4,10] [--reuse DIR] [--preload] [--quick] [--out FILE]

Instructions do not change with the machine's load; the lock hold is what every waiter of a
burst waits behind, and issue 44's goal (ten writers <= 3x a lone add) needs a hold of four
changes to cost less than one lone commit did (docs/measurements.md).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

# Run in the counted process (`python -c INNER REPO K OUT PRELOAD`): markers around the hold's
# steps, the gits each step starts, the modules each step loads.
INNER = r'''
import os, sys, json, time
repo, k, out, preload = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
import memrepo.cli.main
from memrepo.format import catalogue, notes, validate
from memrepo.store import githooks, memories
from memrepo.vcs import gitcmd, group, lock, runs
from memrepo.vcs.change import Hooks
memories.require_repo(repo)
LOADED = ("memrepo.vcs.chain", "memrepo.vcs.commit", "memrepo.vcs.hookwire", "memrepo.vcs.journal",
          "memrepo.vcs.staging", "memrepo.store.index", "memrepo.store.cachefacts", "memrepo.vcs.gitops")
stack, segs, gits, loads = ["before"], [], [], []
def mark():
    segs.append(stack[-1])
    os.getppid()  # callgrind --dump-before=getppid: the counts so far are this segment's
if preload:
    mark(); stack.append("imports a hold loads (preloaded)")
    import importlib
    for name in LOADED:
        importlib.import_module(name)
    mark(); stack.pop()
def enter(label):
    mark(); stack.append(label)
    return set(sys.modules)
def leave(label, seen):
    mark(); stack.pop()
    new = sorted(set(sys.modules) - seen)
    if new:
        loads.append((label, new))
def around(owner, name, label):
    f = getattr(owner, name)
    def wrapped(*a, **kw):
        seen = enter(label)
        try:
            return f(*a, **kw)
        finally:
            leave(label, seen)
    setattr(owner, name, wrapped)
def wrap_late(module, name, label):
    # a module a hold imports itself: wrapped once the import system has loaded it
    if module in sys.modules:
        around(sys.modules[module], name, label)
        return
    pending.setdefault(module, []).append((name, label))
pending = {}
import builtins
_import = builtins.__import__
def hooked(name, globals=None, locals=None, fromlist=(), level=0):
    m = _import(name, globals, locals, fromlist, level)
    for mod in list(pending):
        for n, label in list(pending[mod]):
            if mod in sys.modules and hasattr(sys.modules[mod], n):  # not while it is still being run
                pending[mod].remove((n, label))
                around(sys.modules[mod], n, label)
        if not pending[mod]:
            del pending[mod]
    return m
builtins.__import__ = hooked
_run = gitcmd.run_git
def run_git(*args, **kw):
    gits.append((stack[-1], args[0] if args[0] != "-c" else args[2]))
    return _run(*args, **kw)
gitcmd.run_git = run_git
from memrepo import proc
_spawn = proc.spawn_detached
def spawn(argv, **kw):
    gits.append((stack[-1] + " (detached)", argv[1] if len(argv) > 1 else argv[0]))
    return _spawn(argv, **kw)
proc.spawn_detached = spawn
for owner, name, label in ((group, "_lead", "lead (the rest)"), (group.Entry, "settle", "settle"), (group, "claim", "claim"),
                           (group.Entry, "answer", "answers"), (group, "ring_all", "ring_all (after the lock)"),
                           (githooks, "_synced_to_head", "pre: the cache's facts"), (githooks, "_staged_blobs", "pre: staged blobs"),
                           (githooks, "_from_synced", "pre: from the cache"), (validate, "check_text", "pre: check_text"),
                           (validate, "check_graph", "pre: check_graph"), (githooks, "_keep_commit_graph", "post: commit-graph check"),
                           (githooks, "_refresh_merged", "post: merged caches"), (githooks, "pre_commit", "pre (the rest)")):
    around(owner, name, label)
from memrepo.vcs import staged
around(staged, "differ_from", "pre: diff-index")
for module, name, label in (("memrepo.vcs.journal", "recover", "journal.recover"), ("memrepo.vcs.journal", "write", "journal.write"),
                            ("memrepo.vcs.journal", "drop", "journal.drop"), ("memrepo.vcs.hookwire", "only_ours", "hookwire.only_ours"),
                            ("memrepo.vcs.chain", "commit_chain", "chain (the rest)"), ("memrepo.vcs.commit", "_changed_since", "plan: changed since read"),
                            ("memrepo.vcs.commit", "_tracked", "plan: tracked"), ("memrepo.vcs.commit", "refuse_in_progress", "in progress?"),
                            ("memrepo.vcs.commit", "_put", "write files"), ("memrepo.vcs.commit", "_stage", "stage (update-index)"),
                            ("memrepo.vcs.staging", "open_for", "staging.open_for"), ("memrepo.vcs.staging", "landed", "staging.landed"),
                            ("memrepo.vcs.commit", "chain_commits", "commits (fast-import)"), ("memrepo.vcs.commit", "tree_commit", "commit (write-tree, commit-tree)"),
                            ("memrepo.vcs.chain", "_reset", "reset"), ("memrepo.store.index", "update", "post: index.update"),
                            ("memrepo.store.rows", "load", "post: rows.load (parse, redact)"), ("memrepo.store.index", "_replace", "post: rows written"),
                            ("memrepo.store.synced", "after_commit", "post: synced.after_commit"), ("memrepo.store.index", "_set_meta", "post: meta"),
                            ("memrepo.store.index", "_set_techwords", "post: tech words"), ("memrepo.store.docstats", "current", "post: docstats.current"),
                            ("memrepo.store.cachefacts", "synced_facts", "pre: synced_facts")):
    wrap_late(module, name, label)
_held = lock.held
import contextlib
class Lock:
    def __getattr__(self, name):
        return getattr(lock, name)
    @contextlib.contextmanager
    def held(self, *a, **kw):
        with _held(*a, **kw) as h:
            mark(); stack.append("hold")
            try:
                yield h
            finally:
                mark(); stack.pop()
group.lock = Lock()
base = githooks.in_process()
def counted(name, f):
    def step(*a):
        seen = enter(name)
        try:
            return f(*a)
        finally:
            leave(name, seen)
    return step
hooks = Hooks(counted("pre (the rest)", base.pre_commit), counted("post (the rest)", base.post_commit))
changes = []
for i in range(k):
    note = notes.new_note(id=f"held-note-{k}-{i}-{time.time_ns()}", title=f"Held note {i} of a hold of {k}",
                          description=f"Written by the lock-hold benchmark, change {i} of {k}.", class_="fact",
                          source="user", created="2026-12-06")
    text = notes.serialize(note)
    rel = f"memory/{note.id}.md"
    changes.append(group.Change({rel: text}, {rel: None}, f"add: {note.id}",
                                {"Action": "add", "Run": runs.change_run_id("add", note.id), "Id": note.id}))
mark(); stack[-1] = "queue (the waiters' work)"
entries = [group.Entry.put(group.folder(repo), c) for c in changes[1:]]
mark(); stack[-1] = "submit"
sha, stale = group.submit(repo, changes[0], hooks)
mark(); stack[-1] = "exit"
with open(out, "w") as fh:
    json.dump({"segs": segs, "gits": gits, "loads": loads, "sha": sha,
               "answered": [e.answered() for e in entries if e is not None]}, fh)
'''

HOLD = "hold"


def count(where: str, main_pid: int) -> tuple[list[int], list[tuple[int, str, int]]]:
    """The counted process's dumps in order, and each child's (pid, git subcommand, instructions)."""
    dumps: dict[int, int] = {}
    children = []
    for name in os.listdir(where):
        if not name.startswith("cg."):
            continue
        head: dict[str, str] = {}
        with open(os.path.join(where, name), encoding="utf-8", errors="replace") as fh:
            for line in fh:  # the header: its `summary:` line comes after `cmd:` and `part:`
                key, _, value = line.partition(":")
                if key in ("cmd", "summary", "part"):
                    head[key] = value.strip()
                if key == "summary":
                    break
        ir = int(head.get("summary") or 0)
        pid = int(name.split(".")[1])
        if pid == main_pid:
            dumps[int(head.get("part", 0))] = ir
        else:
            cmd = head.get("cmd", "").split()
            sub = next((c for c in cmd[1:] if not c.startswith("-") and "=" not in c), cmd[0] if cmd else "?")
            children.append((pid, sub, ir))
    return [dumps[p] for p in sorted(dumps)], sorted(children)


def hold(repo: str, k: int, python: str, env: dict[str, str], preload: bool) -> dict[str, Any]:
    """One hold of k changes under callgrind: each step's Python and git instructions."""
    valgrind = shutil.which("valgrind")
    if not valgrind:
        raise SystemExit("bench_hold needs valgrind")
    where = tempfile.mkdtemp(prefix="memrepo-bench-hold-cg-")
    out = os.path.join(where, "marks.json")
    try:
        p = subprocess.Popen([valgrind, "--tool=callgrind", "--trace-children=yes", "--dump-before=getppid",
                              f"--callgrind-out-file={where}/cg.%p", python, "-c", INNER, repo, str(k), out,
                              "1" if preload else "0"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, err = p.communicate()
        if p.returncode != 0:
            raise RuntimeError(f"the counted hold exited {p.returncode}: {err.decode(errors='replace')[-3000:]}")
        with open(out, encoding="utf-8") as fh:
            marks = json.load(fh)
        dumps, children = count(where, p.pid)
    finally:
        if not os.environ.get("KEEP"):
            shutil.rmtree(where, ignore_errors=True)
    labels = marks["segs"] + ["exit"]
    if len(labels) != len(dumps):
        raise RuntimeError(f"{len(dumps)} dumps for {len(labels)} segments")
    steps: dict[str, dict[str, Any]] = {}
    for label, ir in zip(labels, dumps):
        steps.setdefault(label, {"py": 0, "git": 0, "gits": []})["py"] += ir
    gits = [tuple(g) for g in marks["gits"]]
    if len(gits) != len(children):
        raise RuntimeError(f"{len(children)} child processes for {len(gits)} gits started: {children} {gits}")
    for (label, sub), (_, seen, ir) in zip(gits, children):
        step = steps.setdefault(label, {"py": 0, "git": 0, "gits": []})
        step["git"] += ir
        step["gits"].append(sub if sub == seen else f"{sub}?{seen}")
    held = [label for label in steps if label not in ("before", "queue (the waiters' work)", "submit", "exit",
                                                       "ring_all (after the lock)", "imports a hold loads (preloaded)")]
    detached = sum(steps[s]["git"] for s in held if s.endswith("(detached)"))
    total = sum(steps[s]["py"] + steps[s]["git"] for s in held) - detached
    if not all(marks["answered"]) or not marks["sha"]:
        raise RuntimeError(f"the hold did not commit every change: {marks}")
    return {"changes": k, "steps": steps, "held_steps": held, "hold_ir": total, "detached_ir": detached, "loads": marks["loads"]}


def prepare(root: str, n: int, python: str, reuse: str | None) -> str:
    """The generated repository (made once, or reused), with one add done."""
    repo = os.path.join(reuse, str(n)) if reuse else os.path.join(root, "pristine")
    if not os.path.isdir(os.path.join(repo, "memory")):
        benchlib.make_repo(repo, n, seed=11, python=python)
        benchlib.run([python, "-m", "memrepo", "--repo", repo, "add", "--class", "fact", "--title", "First bench_hold add",
                      "-d", "Written before the holds are counted.", "--topic", "benchmark"], env=benchlib.bench_env(repo, python))
    return repo


def report(result: dict[str, Any]) -> list[str]:
    lines = [f"a lock hold of {result['changes']} change{'s' * (result['changes'] != 1)}: "
             f"{result['hold_ir'] / 1e6:.1f} M instructions ({result['hold_ir'] / result['changes'] / 1e6:.1f} M a change); "
             f"started detached: {result['detached_ir'] / 1e6:.1f} M (a commit-graph layer, after the lock)"]
    for label, step in sorted(result["steps"].items(), key=lambda kv: -(kv[1]["py"] + kv[1]["git"])):
        where = "" if label in result["held_steps"] and not label.endswith("(detached)") else "  [outside the hold]"
        gits = ", ".join(f"{g}" for g in step["gits"])
        lines.append(f"  {label:<36} {(step['py'] + step['git']) / 1e6:7.1f} M  (Python {step['py'] / 1e6:6.1f}, git "
                     f"{step['git'] / 1e6:6.1f}{': ' + gits if gits else ''}){where}")
    seen: set[str] = set()
    for label, mods in result["loads"]:  # a step's own imports, not those of the steps inside it
        own = [m for m in mods if m not in seen]
        seen.update(mods)
        if own:
            lines.append(f"  imported in {label}: {', '.join(own)}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--memories", type=int, default=1000)
    ap.add_argument("--changes", default="1,4,10", help="hold sizes, comma-separated (each a hold of that many changes)")
    ap.add_argument("--reuse", help="keep the generated repository as DIR/<memories> and use it again")
    ap.add_argument("--preload", action="store_true", help="import what a hold loads before the lock (counted apart)")
    ap.add_argument("--quick", action="store_true", help="300 memories, holds of 1 and 4")
    ap.add_argument("--out", help="write the figures as JSON here")
    args = ap.parse_args()
    n, sizes = (300, [1, 4]) if args.quick else (args.memories, [int(x) for x in args.changes.split(",")])
    python = sys.executable
    data: dict[str, Any] = {"machine": benchlib.machine(), "memories": n, "holds": []}
    root = tempfile.mkdtemp(prefix="memrepo-bench-hold-")
    try:
        pristine = prepare(root, n, python, args.reuse)
        for k in sizes:
            repo = os.path.join(root, f"hold-{k}")
            shutil.rmtree(repo, ignore_errors=True)
            shutil.copytree(pristine, repo, symlinks=True)
            env = benchlib.bench_env(repo, python)
            env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's interpreter keeps its bytecode: compiling is not what is measured
            benchlib.run([python, "-m", "memrepo", "--repo", repo, "add", "--class", "fact", "--title", f"Warm-up add {k}",
                          "-d", "Written before the hold is counted.", "--topic", "benchmark"], env=env)
            result = hold(repo, k, python, env, args.preload)
            data["holds"].append(result)
            print("\n".join(report(result)))
        if len(sizes) > 1:
            a, b = data["holds"][0], data["holds"][-1]
            per = (b["hold_ir"] - a["hold_ir"]) / (b["changes"] - a["changes"])
            once = a["hold_ir"] - per * a["changes"]
            data["per_change_ir"], data["per_hold_ir"] = round(per), round(once)
            print(f"{n:,} memories: a hold costs {once / 1e6:.1f} M instructions once and {per / 1e6:.1f} M a change "
                  f"(from holds of {a['changes']} and {b['changes']})")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if args.out:
        benchlib.write_json(args.out, data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
