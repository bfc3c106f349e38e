"""The code checkouts this machine knows, for the sweep's curator across sources (issue 41, part 4).

A project's cache lives in the user's cache folder under a hash of the checkout's path
(`recall.sources.project_index_dir`), which can't be read back; so whenever a session start or
`memrepo sources --refresh` refreshes one, a small `checkout.json` beside it names the checkout.
The sweep compares your memory with the project memory of those checkouts that still hold
`.memrepo/memory/`, at most MAX_PROJECTS of them, the most recently refreshed first: bounded,
and nothing is searched for on disk.
"""

from __future__ import annotations

import os

from memrepo.base import paths, projects
from memrepo.recall import sources as rs
from memrepo.store import sources

MAX_PROJECTS = 8


def known(limit: int = MAX_PROJECTS) -> list[rs.Source]:
    """The project sources of the checkouts this machine knows: each cache that names its checkout,
    is where that checkout's cache belongs, and whose checkout still holds project memory."""
    home = os.path.join(rs.cache_home(), "projects")
    try:
        folders = [os.path.join(home, name) for name in sorted(os.listdir(home))]
    except OSError:
        return []
    found = []
    for folder in folders:
        top = sources.checkout_of(os.path.join(folder, sources.CHECKOUT))
        db = os.path.join(folder, paths.INDEX_FILE)
        if top is None or rs.project_index_dir(top) != folder or rs.project_top(top) != top or not os.path.exists(db):
            continue
        src = rs.Source(rs.PROJECT, projects.label_of(os.path.basename(top)), os.path.join(top, rs.PROJECT_DIR), db)
        if not sources.project_problem(src):
            found.append((-os.path.getmtime(db), top, src))
    return [src for *_, src in sorted(found, key=lambda t: t[:2])[:limit]]


def compared(repo: str, cwd: str | None) -> list[rs.Source]:
    """The sources your memory is compared with: each team this machine joined, the project of
    `cwd`, and the projects of the checkouts it knows, each once (placed: `sources.place`)."""
    out = sources.others(repo, cwd)
    roots = {os.path.realpath(s.root) for s in out}
    for src in known():
        if os.path.realpath(src.root) not in roots:
            roots.add(os.path.realpath(src.root))
            sources.place(src)
            out.append(src)
    return out
