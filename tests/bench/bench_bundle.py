"""What loading the prompt path behind the import system's back would save: a measurement, not a
loading path memrepo ships (issue 22).

The hook imports about 20 small modules, and CPython's import system costs each of them ~280,000
instructions before its code runs. This script builds, in a temporary folder, the fastest honest
alternative: the modules the hook loads (in the order `-X importtime` reports them finished)
compiled into one marshal file, a loader that executes each into a module object by hand, and a
copy of `hooks/run` in front of it. It checks that the loader's output is byte-identical to the
hook's for the benchmark's answerable prompt, then times, interleaved with `python -I -S -c pass`:

- the hook as Claude Code runs it (`sh hooks/run user_prompt_submit`) and the hand-loaded one
  behind the same launcher;
- both without the launcher (`python -I -S SCRIPT`);
- the loader alone (the bundle read and its modules executed, then exit);
- `python -I -S -c "import math, _json, _sha256"` (`_sha2` since Python 3.12): the extension modules
  the prompt path loads.

Ratios are medians of per-round pair ratios to the baseline. memrepo does not ship this path: a
cache of compiled code must be invalidated when the code changes and kept out of reach of a
shared repository, and the measurement says what that would buy.

    python tests/bench/bench_bundle.py [--repo REPO] [--rounds 60] [--json] [--callgrind]

`--callgrind` also counts instructions (valgrind's Ir, a figure a loaded machine does not move) of
the baseline, the hook and the hand-loaded hook, each without the launcher, for the benchmark's
answerable prompt and for a silent one ("ok, go ahead"), which loads fewer modules through the
import system but all of them from the bundle.
"""

from __future__ import annotations

import argparse
import json
import marshal
import os
import re
import shutil
import statistics
import sys
import tempfile
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_hook  # noqa: E402
import benchlib as bl  # noqa: E402

SHA256 = "_sha2" if sys.version_info >= (3, 12) else "_sha256"  # CPython's own, renamed in 3.12

LOADER = '''import gc
import sys
import marshal
gc.disable()
with open({bundle!r}, "rb") as fh:
    items = marshal.loads(fh.read())
ModuleType = type(sys)
for name, package, path, code in items:
    m = ModuleType(name)
    m.__file__ = path
    m.__package__ = name if package else name.rpartition(".")[0]
    if package:
        m.__path__ = [path.rsplit("/", 1)[0]]
    sys.modules[name] = m
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, m)
    exec(code, m.__dict__)
{tail}
'''
RUN_HOOK = ('hookio = sys.modules["memrepo.claude.hookio"]\n'
            'hookio.exit_now(hookio.run("UserPromptSubmit", sys.modules["memrepo.claude.prompt_hook"].on_prompt))')
EXIT = "import posix\nposix._exit(0)"


def loaded_modules(python: str, env: dict[str, str], stdin: bytes, cwd: str) -> list[str]:
    """memrepo's modules the hook loads, in the order their imports finished."""
    _, proc = bl.run([python, "-X", "importtime", "-I", "-S", os.path.join(bl.ROOT, "hooks", "user_prompt_submit.py")],
                     cwd=cwd, env=env, stdin=stdin)
    names = re.findall(r"\|\s*(memrepo[\w.]*)\s*$", proc.stderr.decode("utf-8", "replace"), re.M)
    return list(dict.fromkeys(names))


def build(folder: str, modules: list[str]) -> None:
    """The bundle, the loader as hooks/user_prompt_submit.py would be, and a copy of hooks/run."""
    tools = os.path.join(bl.ROOT, "tools")
    items = []
    for name in modules:
        base = os.path.join(tools, *name.split("."))
        package = os.path.isdir(base)
        path = os.path.join(base, "__init__.py") if package else base + ".py"
        with open(path, encoding="utf-8") as fh:
            items.append((name, package, path, compile(fh.read(), path, "exec", dont_inherit=True)))
    bundle = os.path.join(folder, "prompt-path.marshal")
    with open(bundle, "wb") as fh:
        fh.write(marshal.dumps(items))
    for script, tail in (("user_prompt_submit.py", RUN_HOOK), ("load_only.py", EXIT)):
        with open(os.path.join(folder, script), "w", encoding="utf-8") as fh:
            fh.write(LOADER.format(bundle=bundle, tail=tail))
    shutil.copy(os.path.join(bl.ROOT, "hooks", "run"), os.path.join(folder, "run"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", help="a memory repository with its cache built (default: 1,000 generated memories)")
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--callgrind", action="store_true", help="also count instructions (valgrind --tool=callgrind)")
    args = ap.parse_args(argv)
    work = tempfile.mkdtemp(prefix="memrepo-bundle-")
    try:
        repo = args.repo
        if not repo:
            repo = os.path.join(work, "repo")
            os.makedirs(repo)
            bl.make_repo(repo, 1000, 7, args.python, log=lambda s: print(s, file=sys.stderr))
        prompt, cwd, _ = bench_hook.answerable_prompt(repo, work)
        stdin = bench_hook.event(prompt, cwd, bench_hook.TRANSCRIPT)
        env = bl.bench_env(repo, args.python)
        modules = loaded_modules(args.python, env, stdin, cwd)
        folder = os.path.join(work, "bundle")
        os.makedirs(folder)
        build(folder, modules)
        py = [args.python, "-I", "-S"]
        cmds = {
            "baseline": py + ["-c", "pass"],
            "hook, sh hooks/run": ["sh", os.path.join(bl.ROOT, "hooks", "run"), "user_prompt_submit"],
            "hand-loaded, same sh run": ["sh", os.path.join(folder, "run"), "user_prompt_submit"],
            "hook, no launcher": py + [os.path.join(bl.ROOT, "hooks", "user_prompt_submit.py")],
            "hand-loaded, no launcher": py + [os.path.join(folder, "user_prompt_submit.py")],
            "loader alone": py + [os.path.join(folder, "load_only.py")],
            "import math, _json, CPython's SHA-256": py + ["-c", f"import math, _json, {SHA256}"],
        }
        outputs = {k: bl.run(c, cwd=cwd, env=env, stdin=stdin)[1].stdout for k, c in cmds.items() if "hook" in k or "hand" in k}
        if len(set(outputs.values())) != 1 or not outputs["hook, sh hooks/run"]:
            raise RuntimeError("the hand-loaded hook's output differs from the hook's")
        load = os.getloadavg()[0]
        times: dict[str, list[float]] = {k: [] for k in cmds}
        for _ in range(args.rounds):
            for k, c in cmds.items():
                times[k].append(bl.run(c, cwd=cwd, env=env, stdin=stdin)[0])
        counted = _instructions(cmds, env, {"answerable": stdin, "silent": bench_hook.event("ok, go ahead", cwd, bench_hook.TRANSCRIPT)},
                                cwd) if args.callgrind else None
        base = times["baseline"]
        result: dict[str, Any] = {"machine": bl.machine(), "modules": modules, "rounds": args.rounds,
                                  "load": [round(load, 2), round(os.getloadavg()[0], 2)], "prompt": prompt,
                                  "commands": {k: {"median_ms": round(statistics.median(v) * 1000, 3),
                                                   "pair_ratio": round(statistics.median(x / b for x, b in zip(v, base)), 3)}
                                               for k, v in times.items()}, "instructions": counted}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"{len(modules)} modules hand-loaded; output byte-identical to the hook's; {args.rounds} interleaved rounds,"
          f" load {result['load'][0]} -> {result['load'][1]}; python {result['machine']['python']}")
    for k, r in result["commands"].items():
        print(f"  {k:<28} {r['median_ms']:7.2f} ms  {r['pair_ratio']:.3f}x")
    for prompt_kind, counts in (result["instructions"] or {}).items():
        base = counts["baseline"]
        print(f"  instructions, {prompt_kind} prompt: " + ", ".join(f"{k} {n / 1e6:.1f} M ({n / base:.3f}x)" for k, n in counts.items()))
    return 0


def _instructions(cmds: dict[str, list[str]], env: dict[str, str], events: dict[str, bytes], cwd: str) -> dict[str, dict[str, int]] | None:
    """Ir of the baseline, the hook and the hand-loaded hook (no launcher) for each event; None without valgrind."""
    import subprocess

    valgrind = shutil.which("valgrind")
    if not valgrind:
        return None
    out: dict[str, dict[str, int]] = {}
    for kind, stdin in events.items():
        out[kind] = {}
        for name in ("baseline", "hook, no launcher", "hand-loaded, no launcher"):
            res = subprocess.run([valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmds[name]], env=env,
                                 input=stdin, capture_output=True, cwd=cwd)
            found = re.search(rb"Collected : (\d+)", res.stderr)
            if res.returncode != 0 or not found:
                raise RuntimeError(f"callgrind on {name} failed: {res.stderr.decode(errors='replace')[-300:]}")
            out[kind][name] = int(found.group(1))
    return out


if __name__ == "__main__":
    raise SystemExit(main())
