"""A labeled set's working directories as real folders, so its prompts find their project the
way the prompt hook finds it (`memrepo.base.projects.identify`, from a `.git` walking up).

A labeled prompt's `cwd` names a folder on the machine it was written for, which does not exist
here. Taking its last segment as the project (as `memrepo eval` once did) scopes a prompt from
`~/work/api/src` to a project called `src` (issue 36). Instead, each `cwd` is made under a
sandbox folder, with a checkout (an empty `.git` folder: no origin, so the key is the folder's
name) at the deepest folder of the path named like a project of the store's memories, or at the
`cwd` itself when none is (a checkout without project memories, such as a scratch folder).
"""

from __future__ import annotations

import os


class Checkouts:
    """Sandboxed working directories for the cwds of one labeled set."""

    def __init__(self, root: str, projects: set[str]) -> None:
        self.root = root
        self.projects = {p.rstrip("/").rsplit("/", 1)[-1] for p in projects if p}
        self._made: dict[str, str] = {}

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
        self._made[cwd] = path
        return path
