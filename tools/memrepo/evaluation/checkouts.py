"""A labeled set's working directories as real folders, so its prompts find their project the
way the prompt hook finds it (`memrepo.base.projects.identify`, from a `.git` walking up).

A labeled prompt's `cwd` names a folder on the machine it was written for, which does not exist
here. Taking its last segment as the project (as `memrepo eval` once did) scopes a prompt from
`~/work/api/src` to a project called `src` (issue 36). Instead, each `cwd` is made under a
sandbox folder, with a checkout (an empty `.git` folder: no origin, so the key is the folder's
name) at the deepest folder of the path named like a project of the store's memories, or at the
`cwd` itself when none is (a checkout without project memories, such as a scratch folder).

The prompt hook checks the paths a memory cites against the prompt's checkout (issue 43), and a
labeled set has no project's files: a checkout made here would lose every memory that cites one.
So each checkout named like a project holds a folder at each relative path that
project's memories cite (`of_store` reads them from the cache): the hook's check runs as it would
in the real checkout, where the cited files are.
"""

from __future__ import annotations

import os
import sqlite3


class Checkouts:
    """Sandboxed working directories for the cwds of one labeled set."""

    def __init__(self, root: str, projects: set[str], cited: dict[str, set[str]] | None = None) -> None:
        self.root = root
        self.projects = {_label(p) for p in projects if p}
        self.cited = {_label(p): rels for p, rels in (cited or {}).items() if p}  # project label -> relative paths
        self._made: dict[str, str] = {}

    @classmethod
    def of_store(cls, root: str, db: sqlite3.Connection) -> Checkouts:
        """The checkouts for a labeled store's cache: its projects, and what their memories cite."""
        projects = {r[0] for r in db.execute("SELECT DISTINCT project FROM memories WHERE project IS NOT NULL")}
        cited: dict[str, set[str]] = {}
        for project, path in db.execute("SELECT m.project, c.path FROM citations c JOIN memories m ON m.rowid = c.rowid"
                                        " WHERE m.project IS NOT NULL"):
            cited.setdefault(project, set()).add(path)
        return cls(root, projects, cited)

    def cwd(self, cwd: str | None) -> str | None:
        """The sandbox folder standing for `cwd` (made on first use); None for None."""
        if not cwd:
            return None
        if cwd in self._made:
            return self._made[cwd]
        parts = [p for p in cwd.replace("\\", "/").split("/") if p not in ("", ".", "..")]
        if not parts:
            return None
        top = next((i for i in range(len(parts), 0, -1) if parts[i - 1] in self.projects), len(parts))
        path = os.path.join(self.root, *parts)
        os.makedirs(path, exist_ok=True)
        os.makedirs(os.path.join(self.root, *parts[:top], ".git"), exist_ok=True)
        if top <= len(parts) and parts[top - 1] in self.cited:
            _plant(os.path.join(self.root, *parts[:top]), self.cited[parts[top - 1]])
        self._made[cwd] = path
        return path


def _label(project: str) -> str:
    return project.rstrip("/").rsplit("/", 1)[-1]


def _plant(top: str, rels: set[str]) -> None:
    """Something at each relative path under `top`: a folder, whether the path names a file or a
    folder (the hook's check asks only whether a path exists, and a labeled cwd may lie under a
    cited folder written without its `/`)."""
    for rel in rels:
        parts = [p for p in rel.replace("\\", "/").split("/") if p not in ("", ".")]
        if parts and not rel.startswith("/") and ".." not in parts:
            os.makedirs(os.path.join(top, *parts), exist_ok=True)
