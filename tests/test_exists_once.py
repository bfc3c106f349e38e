"""docs/design.md's "Each mechanism exists once" list as a test: each mechanism it names is found,
by scanning the source (AST), in its one home and nowhere else.

A mechanism: the process runner, the git runner, the commit, the trailer reader, the front
matter reader and the YAML emitter, the locks. Each rule says what marks the mechanism in the
code (an import, a call, a literal) and the files allowed to hold it.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable, Iterator

import pytest

from test_layers import PARSED, ROOT

# (file, rule) -> why it is there still: each test fails on any other find, and on an entry that
# no longer happens (delete it then).
KNOWN = {
    ("tools/memrepo/web/html.py", "front matter fences"): "a diff's `--- a/path` header line, not front matter",
}

FENCES = ("---", "\n---", "---\n", b"---", b"\n---", b"---\n")
RUNNERS = ("run_git", "run_git_writing", "git_ok", "_git")
CHILD_CALLS = ("fork", "forkpty", "system", "popen", "posix_spawn", "posix_spawnp", "spawnl", "spawnle", "spawnlp",
               "spawnlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe")


def _attr(node: ast.AST, owner: str, names: tuple[str, ...]) -> bool:
    """`owner.name(...)` for a name of `names`."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names
            and isinstance(node.func.value, ast.Name) and node.func.value.id == owner)


def _imports(node: ast.AST, names: tuple[str, ...]) -> bool:
    if isinstance(node, ast.Import):
        return any(a.name.split(".")[0] in names for a in node.names)
    return isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in names and not node.level


def _first_arg(node: ast.AST) -> object:
    if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
        return node.args[0].value
    return None


def _runner_call(node: ast.AST) -> bool:
    func = node.func if isinstance(node, ast.Call) else None
    return (isinstance(func, ast.Attribute) and func.attr in RUNNERS) or (isinstance(func, ast.Name) and func.id in RUNNERS)


def _git_argv(node: ast.AST) -> bool:
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
        first = node.elts[0]
        return isinstance(first, ast.Constant) and first.value == "git"
    return _first_arg(node) == "git" and not _runner_call(node)


def _commit(node: ast.AST) -> bool:
    """A git commit made: `commit` or `commit-tree` run by a git runner."""
    return _runner_call(node) and _first_arg(node) in ("commit", "commit-tree")


def _trailer_parse(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and (
        "%(trailers" in node.value or "interpret-trailers" in node.value)


def _fence_split(node: ast.AST) -> bool:
    """Front matter split by hand: `text.split("---")`, `line == "---"`, `.startswith("---\\n")`."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("split", "rsplit", "partition", "startswith", "index", "find")):
        return any(isinstance(a, ast.Constant) and a.value in FENCES for a in node.args)
    if isinstance(node, ast.Compare):
        return any(isinstance(c, ast.Constant) and c.value in FENCES for c in [node.left, *node.comparators])
    return False


RULES: dict[str, tuple[tuple[str, ...], Callable[[ast.AST], bool]]] = {
    "process runner": (("tools/memrepo/proc.py",),
                       lambda n: _imports(n, ("subprocess", "pty", "multiprocessing")) or _attr(n, "os", CHILD_CALLS)),
    "git runner": (("tools/memrepo/vcs/gitcmd.py",), _git_argv),
    "commit": (("tools/memrepo/vcs/commit.py", "tools/memrepo/vcs/remote.py", "tools/memrepo/vcs/branches.py"), _commit),
    "trailers": (("tools/memrepo/vcs/trailers.py",), _trailer_parse),
    "front matter reader": (("tools/memrepo/format/notes.py",),
                            lambda n: _attr(n, "yaml", ("load", "safe_load", "full_load", "load_all", "safe_load_all"))),
    "foreign front matter": (("tools/memrepo/format/foreign.py",), lambda n: _imports(n, ("frontmatter",))),
    "front matter fences": (tuple(p for p, _ in PARSED.values() if p.startswith("tools/memrepo/format/")), _fence_split),
    "yaml emitter": (("tools/memrepo/format/notes.py",), lambda n: _attr(n, "yaml", ("dump", "safe_dump", "dump_all", "safe_dump_all"))),
    "locks": (("tools/memrepo/vcs/lock.py",), lambda n: _attr(n, "fcntl", ("flock", "lockf"))),
}
# What docs/design.md names as the home of each rule's mechanism.
DOCUMENTED = {"process runner": "proc.run", "git runner": "vcs/gitcmd.py", "commit": "vcs/commit.py",
              "trailers": "vcs/trailers.log", "front matter reader": "format/notes.py", "foreign front matter": "format/foreign.py",
              "front matter fences": "format/", "yaml emitter": "format/notes.py", "locks": "vcs/lock.wait_for"}


def _found(rule: str, trees: dict[str, ast.AST]) -> Iterator[tuple[str, int]]:
    homes, marks = RULES[rule]
    for path, tree in trees.items():
        if path not in homes:
            yield from ((path, node.lineno) for node in ast.walk(tree) if marks(node) and hasattr(node, "lineno"))


SOURCE = {path: tree for path, tree in PARSED.values()}


@pytest.mark.parametrize("rule", sorted(RULES))
def test_each_mechanism_exists_in_its_home_only(rule: str) -> None:
    found = list(_found(rule, SOURCE))
    new = sorted(f"{path}:{line}" for path, line in found if (path, rule) not in KNOWN)
    stale = sorted(path for (path, r) in KNOWN if r == rule and path not in {p for p, _ in found})
    assert (new, stale) == ([], [])


@pytest.mark.parametrize("rule", sorted(RULES))
def test_each_home_holds_its_mechanism(rule: str) -> None:
    homes, marks = RULES[rule]
    assert any(marks(node) for path in homes for node in ast.walk(SOURCE[path])), rule


BROKEN = {
    "process runner": "import subprocess\nsubprocess.run(['ls'])",
    "git runner": "from memrepo import proc\nproc.run(['git', 'status'], cwd='.')",
    "commit": "from memrepo.vcs import gitcmd\ngitcmd.run_git('commit-tree', 'abc', cwd='.')",
    "trailers": "FORMAT = '%(trailers:only,unfold)'",
    "front matter reader": "import yaml\nmeta = yaml.safe_load(text)",
    "foreign front matter": "import frontmatter",
    "front matter fences": "head, _, body = text.partition('\\n---')",
    "yaml emitter": "import yaml\ntext = yaml.safe_dump({'a': 1})",
    "locks": "import fcntl\nfcntl.flock(fd, fcntl.LOCK_EX)",
}


@pytest.mark.parametrize("rule", sorted(RULES))
def test_each_rule_catches_its_mechanism_written_again_elsewhere(rule: str) -> None:
    assert list(_found(rule, {"tools/memrepo/web/elsewhere.py": ast.parse(BROKEN[rule])})) != []


def test_docs_design_names_each_home() -> None:
    with open(os.path.join(ROOT, "docs", "design.md"), encoding="utf-8") as fh:
        text = fh.read()
    section = text.split("Each mechanism exists once", 1)[1].split("\n## ", 1)[0]
    assert [rule for rule, home in DOCUMENTED.items() if home not in section] == []
