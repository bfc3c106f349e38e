"""Where things are: the memory repository and the files inside it (stdlib only)."""

from __future__ import annotations

import os

from memrepo import spec

ENV_DIR = "MEMREPO_DIR"
DEFAULT_DIR = "~/.memrepo"


def memory_repo(explicit: str | None = None) -> str:
    """The memory repository: `--repo`, else `$MEMREPO_DIR`, else `~/.memrepo`."""
    chosen = explicit or os.environ.get(ENV_DIR) or DEFAULT_DIR
    return os.path.abspath(os.path.expanduser(chosen))


def memory_dir(repo: str) -> str:
    return os.path.join(repo, spec.MEMORY_DIR)


def index_dir(repo: str) -> str:
    return os.path.join(repo, spec.INDEX_DIR)


def index_db(repo: str) -> str:
    return os.path.join(repo, spec.INDEX_DIR, spec.INDEX_FILE)


def stale_marker(repo: str) -> str:
    return os.path.join(repo, spec.INDEX_DIR, spec.STALE_MARKER)


def recall_log(repo: str) -> str:
    return os.path.join(repo, spec.INDEX_DIR, spec.RECALL_LOG)


def note_path(repo: str, note_id: str) -> str:
    return os.path.join(repo, spec.MEMORY_DIR, note_id + ".md")


def project_of(cwd: str | None) -> str | None:
    """The project a directory belongs to: the name of its git top-level (found without running git)."""
    if not cwd:
        return None
    cur = os.path.abspath(cwd)
    while True:
        if os.path.exists(os.path.join(cur, ".git")):
            return os.path.basename(cur) or None
        parent = os.path.dirname(cur)
        if parent == cur:
            return None
        cur = parent
