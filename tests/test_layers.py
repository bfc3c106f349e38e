"""The layering of tools/memrepo as a test: who may import whom, read from the source (AST).

Every import counts, at module top or inside a function: a lazy import is still a dependency.
The order is the one DESIGN.md ("Rooms") and each subpackage's `__init__` docstring state.
"""

from __future__ import annotations

import ast
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = os.path.join(ROOT, "tools", "memrepo")

# Bottom to top: a layer may import itself and the layers before it.
ORDER = ("base", "recall", "format", "vcs", "store", "passes", "importers", "worker", "claude", "agents", "evaluation", "web", "mcp", "cli")
# Root modules every layer but base and recall may import (those two: not even memrepo.errors).
SHARED = ("errors", "proc")
# The other root modules, and the layer each belongs to: compat entry points forward upward.
ROOT_MODULES = {"errors": "errors", "proc": "proc", "__init__": "root", "__main__": "cli",
                "hookio": "claude", "githooks": "store"}
# Third-party modules, and the only layer that may import each.
OWNED_IMPORTS = {"yaml": "format", "frontmatter": "format", "detect_secrets": "format", "git": "vcs", "click": "cli",
                 "mcp": "mcp"}
# Violations known, with the rule they break, as (file, what) -> rule: each test fails on any
# other violation, and on an entry here that no longer happens (delete it then).
KNOWN = {
}
# What the prompt hook may load: the base, the prompt path, and these entry points. The plugin's
# hooks/user_prompt_submit.py runs this file's compiled code (issue 44).
HOOK = "tools/memrepo/claude/prompt_main.py"
HOOK_ENTRY = {"memrepo", "memrepo.claude", "memrepo.claude.hookio", "memrepo.claude.prompt_hook"}


def _module_name(path: str) -> str:
    rel = os.path.relpath(path, os.path.dirname(PKG))[:-3].replace(os.sep, ".")
    return rel[: -len(".__init__")] if rel.endswith(".__init__") else rel


def _sources() -> dict[str, str]:
    out = {}
    for folder, dirs, files in os.walk(PKG):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                out[_module_name(path)] = path
    return out


SOURCES = _sources()


def layer_of(module: str) -> str:
    """The layer of a memrepo module name (`memrepo.recall.search` -> recall)."""
    parts = module.split(".")
    if len(parts) == 1:
        return "root"
    if parts[1] in ORDER:
        return parts[1]
    return ROOT_MODULES.get(parts[1], "root")


def allowed_layers(layer: str) -> set[str]:
    if layer == "base":
        return {"base"}
    if layer == "recall":
        return {"base", "recall"}
    if layer in ("errors", "root"):
        return {"errors", "root"}
    if layer == "proc":
        return {"errors", "proc", "root"}
    return set(ORDER[: ORDER.index(layer) + 1]) | set(SHARED) | {"root"}


def _resolve(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".")
    if not SOURCES[module].endswith("__init__.py"):
        package = package[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def imports(module: str, tree: ast.AST) -> list[tuple[int, str]]:
    """(line, imported module) for every import in the tree, functions and branches included.

    `from memrepo.x import y` yields `memrepo.x.y` when y is a module, else `memrepo.x`;
    `importlib.import_module("...")` and `__import__("...")` with a literal count too.
    """
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, node)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append((node.lineno, sub if sub in SOURCES else base))
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and ((isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                   or (isinstance(node.func, ast.Name) and node.func.id == "__import__"))):
            found.append((node.lineno, node.args[0].value))
    return found


def _parsed() -> dict[str, tuple[str, ast.AST]]:
    out = {}
    for module, path in sorted(SOURCES.items()):
        with open(path, encoding="utf-8") as fh:
            out[module] = (os.path.relpath(path, ROOT), ast.parse(fh.read(), path))
    return out


PARSED = _parsed()


def _where(module: str, line: int) -> str:
    return f"{PARSED[module][0]}:{line}"


def _check(found: list[tuple[str, int, str]], rule: str) -> None:
    """Fail on every (file, line, what) not in KNOWN, and on KNOWN entries of `rule` not found."""
    new = sorted(f"{path}:{line}: {what}" for path, line, what in found if (path, what) not in KNOWN)
    seen = {(path, what) for path, _, what in found}
    stale = sorted(k for k, r in KNOWN.items() if r == rule and k not in seen)
    assert (new, stale) == ([], [])


def _all_imports() -> list[tuple[str, int, str]]:
    return [(module, line, target) for module, (_, tree) in PARSED.items() for line, target in imports(module, tree)]


def test_the_walk_sees_every_layer_and_imports_inside_functions() -> None:
    assert {layer_of(m) for m in SOURCES} >= set(ORDER) | set(SHARED)
    # decide.py imports sources inside decide(), and sources imports search inside rank_all(): the walk must see both.
    assert ("memrepo.recall.sources" in {t for m, _, t in _all_imports() if m == "memrepo.recall.decide"})
    assert ("memrepo.recall.search" in {t for m, _, t in _all_imports() if m == "memrepo.recall.sources"})


# The standard library of any Python memrepo runs on: CPython's own SHA-256 is `_sha256` before
# 3.12 and `_sha2` since, and the prompt path imports whichever there is.
STDLIB = sys.stdlib_module_names | {"_sha2", "_sha256"}


@pytest.mark.parametrize("layer,may", [("base", ("base",)), ("recall", ("base", "recall"))])
def test_the_prompt_path_imports_only_the_standard_library_and_the_base(layer: str, may: tuple[str, ...]) -> None:
    stdlib = STDLIB
    bad = [(PARSED[m][0], line, target) for m, line, target in _all_imports() if layer_of(m) == layer
           and not (target.split(".")[0] in stdlib or any(target == f"memrepo.{x}" or target.startswith(f"memrepo.{x}.")
                                                          for x in may))]
    _check(bad, layer)


def _closure(start: set[str]) -> set[str]:
    """Every memrepo module `start` may load, lazy imports included, with each package above it."""
    seen: set[str] = set()
    todo = list(start)
    while todo:
        module = todo.pop()
        if module in seen or module not in PARSED:
            continue
        seen.add(module)
        parts = module.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        todo += [t for _, t in imports(module, PARSED[module][1]) if t.split(".")[0] == "memrepo"]
    return seen


def test_the_prompt_hook_loads_only_the_base_the_prompt_path_and_its_entry_points() -> None:
    with open(os.path.join(ROOT, HOOK), encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    start = {t for _, t in imports("memrepo", tree) if t.startswith("memrepo.")}
    reached = _closure(start)
    assert {"memrepo.recall.decide", "memrepo.recall.search", "memrepo.base.paths"} <= reached
    assert sorted(m for m in reached if layer_of(m) not in ("base", "recall") and m not in HOOK_ENTRY) == []


def test_every_layer_imports_only_the_layers_below_it() -> None:
    bad = []
    for m, line, target in _all_imports():
        if target.split(".")[0] != "memrepo":
            continue
        src, dst = layer_of(m), layer_of(target)
        if dst not in allowed_layers(src):
            bad.append((PARSED[m][0], line, f"{src} imports {target} ({dst})"))
    _check(bad, "layers")


@pytest.mark.parametrize("name,owner", sorted(OWNED_IMPORTS.items()))
def test_only_its_layer_imports(name: str, owner: str) -> None:
    bad = [(PARSED[m][0], line, name) for m, line, target in _all_imports()
           if target.split(".")[0] == name and layer_of(m) != owner]
    _check(bad, name)


def _git_argv(node: ast.AST) -> bool:
    """A list/tuple literal or a call whose first element is the string "git"."""
    if isinstance(node, (ast.List, ast.Tuple)):
        first = node.elts[0] if node.elts else None
    elif isinstance(node, ast.Call):
        first = node.args[0] if node.args else None
    else:
        return False
    return isinstance(first, ast.Constant) and first.value == "git"


def test_only_vcs_runs_git() -> None:
    bad = [(PARSED[m][0], node.lineno, "runs git") for m, (_, tree) in PARSED.items() if layer_of(m) != "vcs"
           for node in ast.walk(tree) if _git_argv(node)]
    _check(bad, "git argv")


# The git runner and its output parser (vcs/gitcmd.py), and vcs/remote.py's runner that raises:
# outside vcs/ git is asked through a function named for what it does, never run with arguments.
GIT_RUNNERS = ("run_git", "run_git_writing", "git_ok", "split_z")


def _runner_uses(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, name) for every import, call or mention of a git runner: `gitcmd.run_git(...)`,
    `from memrepo.vcs.gitcmd import run_git`, `getattr(gitcmd, "run_git")`, an alias passed on."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found += [(node.lineno, a.name) for a in node.names if a.name in GIT_RUNNERS]
        elif isinstance(node, ast.Attribute) and node.attr in GIT_RUNNERS:
            found.append((node.lineno, node.attr))
        elif isinstance(node, ast.Name) and node.id in GIT_RUNNERS:
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.Constant) and node.value in GIT_RUNNERS:
            found.append((node.lineno, node.value))
    return found


def test_only_vcs_imports_or_calls_the_git_runner() -> None:
    bad = [(PARSED[m][0], line, f"uses the git runner ({name})") for m, (_, tree) in PARSED.items()
           if layer_of(m) != "vcs" for line, name in _runner_uses(tree)]
    _check(bad, "git runner")


@pytest.mark.parametrize("source", [
    "from memrepo.vcs import gitcmd\ngitcmd.run_git('status', cwd='.')",
    "from memrepo.vcs.gitcmd import run_git as r\nr('status', cwd='.')",
    "from memrepo.vcs import remote\nremote.git_ok('.', 'fetch', what='', hint='')",
    "from memrepo.vcs import gitcmd\nrun = getattr(gitcmd, 'run_git_writing')",
    "from memrepo.vcs import gitcmd\nnames = gitcmd.split_z(b'')",
])
def test_the_git_runner_check_sees_each_way_to_reach_it(source: str) -> None:
    assert _runner_uses(ast.parse(source)) != []


def test_every_layer_states_what_it_may_import() -> None:
    for layer in ORDER:
        with open(os.path.join(PKG, layer, "__init__.py"), encoding="utf-8") as fh:
            doc = ast.get_docstring(ast.parse(fh.read())) or ""
        assert "May import:" in doc, layer


def test_the_plugin_hooks_import_only_the_standard_library_and_the_hook_layers() -> None:
    stdlib = sys.stdlib_module_names
    bad = []
    hooks = os.path.join(ROOT, "hooks")
    for name in sorted(os.listdir(hooks)):
        if name.endswith(".py"):
            path = os.path.join(hooks, name)
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read(), path)
            for node in ast.walk(tree):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    targets = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                    bad += [f"hooks/{name}:{node.lineno}: {t}" for t in targets
                            if t.split(".")[0] not in stdlib and layer_of(t) not in ("base", "claude", "agents", "worker")]
    assert bad == []


# Import circles known, each a sorted tuple of modules: the test fails on any other circle, and on
# an entry here that no longer is one. The installers are being changed by another engineer.
KNOWN_CIRCLES: set[tuple[str, ...]] = set()


def _circles() -> set[tuple[str, ...]]:
    """The import circles among memrepo's modules, lazy imports included (Tarjan's strongly
    connected components, iteratively)."""
    graph = {m: sorted({t for _, t in imports(m, tree) if t in PARSED and t != m}) for m, (_, tree) in PARSED.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: set[tuple[str, ...]] = set()
    for root in graph:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on.add(node)
            if i < len(graph[node]):
                work.append((node, i + 1))
                nxt = graph[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                part = []
                while True:
                    top = stack.pop()
                    on.discard(top)
                    part.append(top)
                    if top == node:
                        break
                if len(part) > 1:
                    found.add(tuple(sorted(part)))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def test_no_import_runs_in_a_circle() -> None:
    assert _circles() == KNOWN_CIRCLES
