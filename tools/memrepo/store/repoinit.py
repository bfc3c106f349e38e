"""`memrepo init`: make (or complete) a memory repository. Running it twice changes nothing."""

from __future__ import annotations

import os
from typing import Any

from memrepo.vcs import commit as vcs_commit, gitops, hookwire, status
from memrepo.store import index, join, private
from memrepo.base import paths
from memrepo.errors import MemrepoError

INDEX_GITIGNORE = index.GITIGNORE
INDEX_README = index.README
# Committed: LF in memory files, and merges through memrepo's driver. The driver's command lives
# only in the untracked .git/config (`hookwire.wire_merge_driver`), so nothing pulled can run code.
GITATTRIBUTES_LINES = ("memory/*.md text eol=lf", f"memory/*.md merge={hookwire.MERGE_DRIVER}")


def _write_if_changed(path: str, text: str) -> bool:
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            if fh.read() == text:
                return False
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    return True


def _gitattributes(root: str) -> bool:
    path = os.path.join(root, ".gitattributes")
    current = ""
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            current = fh.read()
    missing = [line for line in GITATTRIBUTES_LINES if line not in current.splitlines()]
    if not missing:
        return False
    sep = "" if not current or current.endswith("\n") else "\n"
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(current + sep + "".join(line + "\n" for line in missing))
    return True


def layout(root: str) -> list[str]:
    """Create the memory repository's files; returns the repo-relative paths written."""
    os.makedirs(paths.memory_dir(root), exist_ok=True)
    os.makedirs(paths.index_dir(root), exist_ok=True)
    changed = []
    keep = os.path.join(paths.memory_dir(root), ".gitkeep")
    if not os.listdir(paths.memory_dir(root)):
        open(keep, "w").close()
        changed.append(f"{paths.MEMORY_DIR}/.gitkeep")
    for rel, text in ((f"{paths.INDEX_DIR}/.gitignore", INDEX_GITIGNORE), (f"{paths.INDEX_DIR}/README.md", INDEX_README)):
        if _write_if_changed(os.path.join(root, rel), text):
            changed.append(rel)
    changed += hookwire.write_shims(root)
    private.tighten(paths.index_dir(root))  # a clone made it 0755 with the user's umask
    if _gitattributes(root):
        changed.append(".gitattributes")
    return changed


def _uncommitted(root: str) -> list[str]:
    """Layout files that differ from HEAD: just written, or left uncommitted by a run that failed."""
    rels = [f"{paths.MEMORY_DIR}/.gitkeep", f"{paths.INDEX_DIR}/.gitignore", f"{paths.INDEX_DIR}/README.md",
            ".gitattributes"] + [f"{hookwire.HOOKS_DIR}/{h}" for h in hookwire.HOOKS]
    rels = [r for r in rels if os.path.exists(os.path.join(root, r))]
    return sorted(status.dirty_paths(root, *rels) or ()) if rels else []


def init(path: str, source: str | None = None, branch: str | None = None) -> dict[str, Any]:
    """Make `path` a memory repository: git init if needed, layout, hook and merge driver wiring,
    first commit, index.

    `source`, a remote's URL, joins memory that already exists there (a second machine, a
    teammate): `path` is cloned from it, or an existing clone gets it as `origin`. With or
    without it, a clone that holds no memory of its own checks out the branch its remote holds
    memory on (`join.adopt`) instead of committing a second, unrelated history.
    """
    root = os.path.abspath(os.path.expanduser(path))
    joined = join.clone_or_attach(source, root) if source else None
    created = gitops.init_repo(root)
    adopted = join.adopt(root, branch)
    if branch is not None and adopted is None and join.current_branch(root) != branch:
        raise MemrepoError(f"{root} holds memories of its own on {join.current_branch(root)!r}, so init did not switch to {branch!r}",
                           hint=f"merge them with `memrepo sync`, or check out {branch!r} yourself")
    # Wire first: when it refuses (core.hooksPath owned by another tool) nothing has been written.
    wiring = hookwire.wire(root)
    changed = layout(root)
    hookwire.record_python(root)
    merge_driver = hookwire.wire_merge_driver(root)
    commit = None
    pending = _uncommitted(root)
    if pending:
        if not gitops.has_identity(root):
            raise MemrepoError("git has no user name/email here, so memrepo cannot commit",
                               hint='run `git config --global user.name "You"` and `git config --global user.email you@example.com`')
        commit = vcs_commit.commit_paths(root, pending, "memrepo: init memory repository", {"Action": "init"})
    report = index.update(root)
    # `written`: what this run wrote; `committed`: what its commit holds, which includes what a
    # run that failed before committing (no git identity yet) wrote and left behind.
    return {"path": root, "git_init": created, "written": changed, "committed": _in_order(changed, pending) if commit else [],
            "wiring": wiring, "merge_driver": merge_driver, "commit": commit,
            "indexed": report.added + report.updated + report.unchanged,
            "commit_graph": _commit_graph(root), "joined": joined, "adopted": adopted}


def _in_order(written: list[str], pending: list[str]) -> list[str]:
    """`pending` with what this run wrote first, in the order it wrote them."""
    return [r for r in written if r in pending] + [r for r in pending if r not in written]


def _commit_graph(root: str) -> str:
    """Write the commit-graph with changed-path filters (fast history); a failure is one line, not a failed init."""
    try:
        n = gitops.write_commit_graph(root)["commits"]
    except MemrepoError as exc:
        return f"not written: {exc}"
    return f"written ({n} commit{'s' * (n != 1)})"
