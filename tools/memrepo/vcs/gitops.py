"""Repository-level git operations for the CLI and the passes: open, init, identity, history.

Plain git through `gitcmd.run_git` (memrepo has no GitPython: see docs/how-it-works.md, "Plain git").
Commits are `vcs.commit`'s; trailers are `vcs.trailers`'.
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any

from memrepo.errors import GitError, RepoNotFound
from memrepo.vcs import gitcmd
from memrepo.vcs import trailers


def open_repo(path: str) -> str:
    """`path` when it is a git repository itself (not inside one), else RepoNotFound with the fix."""
    if not os.path.lexists(os.path.join(path, ".git")):
        raise RepoNotFound(f"{path} is not a memory repository (no .git)", hint=f"run `memrepo init {path}`")
    return path


def init_repo(path: str) -> bool:
    """`git init` the directory (branch `main`) when it is no repository yet; returns True when it did."""
    if os.path.exists(os.path.join(path, ".git")):
        return False
    os.makedirs(path, exist_ok=True)
    rc, _, err = gitcmd.run_git("-c", "init.defaultBranch=main", "init", "-q", path, cwd=path, env=gitcmd.no_git_env())
    if rc != 0:
        raise GitError(f"git init {path} failed: {err.decode('utf-8', 'replace').strip()}",
                       hint="check that the directory is writable")
    return True


def has_identity(path: str) -> bool:
    """True when git here knows who commits (user.name/email or GIT_COMMITTER_*)."""
    return gitcmd.run_git("var", "GIT_COMMITTER_IDENT", cwd=open_repo(path))[0] == 0


# The trailers of each commit as git parses them: one per \x1e, key and value apart by \x1d.


def _log_of(path: str, rel: str, limit: int) -> list[dict[str, Any]]:
    # Path-limited and without --follow (issue 22): a memory's id is its file name, so a file is
    # never renamed into another id. The one rename there is, `memrepo sync` giving a colliding
    # memory a new id, makes a new memory whose history starts at that commit (which names the
    # old id); --follow would walk on into the old path, which by then is the other machine's
    # memory, and git can answer a path-limited log from the commit-graph's changed-path filters.
    return [{k: e[k] for k in ("commit", "date", "author", "subject", "trailers")}
            for e in trailers.log(open_repo(path), paths=(rel,), limit=limit, only_trailers=False)]


def history(path: str, rel: str, limit: int = 20) -> list[dict[str, str]]:
    """Commits that touched one file, newest first: {commit, date, author, subject}."""
    return [{k: v for k, v in row.items() if k != "trailers"} for row in _log_of(path, rel, limit)]


# A path-limited `git log` (a memory's history) reads a changed-path Bloom filter per commit
# instead of diffing its tree: at 10,000 commits, 266 ms without the graph, 44 ms with it, for a
# memory only the first commit touched (tests/bench/bench_history.py).
COMMIT_GRAPH_TIMEOUT = 120.0
_GRAPH_CONFIG = (("core.commitGraph", "true"), ("fetch.writeCommitGraph", "true"))


def write_commit_graph(path: str, timeout: float = COMMIT_GRAPH_TIMEOUT) -> dict[str, Any]:
    """Turn the commit-graph on (and on after each fetch) and write it with changed-path filters.

    Returns {"commits": n} from the new graph; GitError when git refuses (the caller fails open).
    Later writes by `git fetch` or `git gc` keep the filters: git keeps them once a graph has them.
    """
    repo = open_repo(path)
    for key, value in _GRAPH_CONFIG:
        rc, out, _ = gitcmd.run_git("config", "--get", key, cwd=repo)
        if out.decode().strip() != value:
            gitcmd.run_git("config", key, value, cwd=repo)
    if gitcmd.head(repo) is None:
        return {"commits": 0}
    rc, _, err = gitcmd.run_git("commit-graph", "write", "--reachable", "--changed-paths", cwd=repo, timeout=timeout)
    if rc != 0:
        raise GitError(f"git commit-graph write failed: {err.decode('utf-8', 'replace').strip()}",
                       hint="history still works without it, only slower; `git commit-graph verify` says more")
    _mark_graph(repo, gitcmd.head(repo))
    rc, out, _ = gitcmd.run_git("rev-list", "--count", "--all", cwd=repo)
    return {"commits": int(out.decode().strip() or 0) if rc == 0 else 0}


# Each commit made after the graph was written costs a path-limited log ~50 ms at 100,000 memories
# (git diffs its tree to learn whether it touched the path; issue 44). After a commit that leaves
# more than GRAPH_SLACK commits beyond the last write, a new layer is written (`--split`: only
# the commits not in the graph yet are read), by a detached git, off the writer's critical path.
GRAPH_SLACK = 2
# While another writer's change waits in the group commit's queue, the layer waits for the holder
# that commits it, up to this many commits: ten writers at once started a detached write after
# nearly every lock hold (0.1-0.3 G instructions each at 10,000 memories), which took a core from
# the writers still starting (issue 44). The last holder of a burst finds no one queued and writes.
GRAPH_DEFER = 32
GRAPH_MARK = "memrepo-commit-graph.head"  # in the git dir: HEAD when the last layer was started
GRAPH_LOG = "memrepo-commit-graph.log"
gitcmd.ask_together(GRAPH_MARK, GRAPH_LOG)
GRAPH_LOG_MAX = 64 * 1024


def commits_outside_graph(path: str, head: str | None = None) -> int | None:
    """How many commits HEAD holds beyond the one the last graph layer was started at; None when
    unknown (no mark, or one git cannot read), which counts as too many. `head`: HEAD, when the
    caller knows it (a mark there is counted without git)."""
    repo = open_repo(path)
    mark = _git_path(repo, GRAPH_MARK)
    try:
        with open(mark, encoding="ascii") as fh:
            since = fh.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not since or not all(c in "0123456789abcdef" for c in since):
        return None
    if head and since == head:
        return 0
    # An upper bound even when `since` is no longer HEAD's ancestor (a reset): the layer started
    # there holds every commit reachable from it.
    rc, out, _ = gitcmd.run_git("rev-list", "--count", "HEAD", f"^{since}", cwd=repo)
    return int(out.decode().strip() or 0) if rc == 0 else None


def keep_commit_graph(path: str, head: str | None = None) -> bool:
    """Start a detached `git commit-graph write --split` when too many commits lie outside the
    graph (GRAPH_SLACK) and no writer's change waits to be committed next (GRAPH_DEFER); True
    when one was started. Never waits for it. `head`: HEAD, when the caller just made it."""
    repo = open_repo(path)
    head = head or gitcmd.head(repo)
    if head is None:
        return False
    outside = commits_outside_graph(repo, head)
    if outside is not None and outside <= GRAPH_SLACK:
        return False
    if outside is not None and outside <= GRAPH_DEFER:
        from memrepo.vcs import group

        if group.queued(repo):
            return False
    log = _bounded_log(repo, GRAPH_LOG)
    # Marked before it runs: a write that fails leaves at most GRAPH_SLACK more commits outside
    # before the next one starts, and that one reads every reachable commit the graph lacks.
    _mark_graph(repo, head)
    gitcmd.start_git("commit-graph", "write", "--reachable", "--changed-paths", "--split", cwd=repo, log_path=log)
    return True


# git runs `git maintenance run --auto` after a porcelain commit, merge or fetch; memrepo commits
# with plumbing (write-tree, commit-tree, fast-import), so nothing packed what its commits left:
# each lone add's trees stay loose (about 1 MB a commit at 100,000 memories, no deltas), and each
# group-commit hold leaves a pack of its own. After a commit, git's own thresholds are checked
# without starting git (gc.auto's 6,700 loose objects, estimated from `objects/17` as git does;
# gc.autoPackLimit's 50 packs) and, past one, a detached `git gc --auto` rechecks them with the
# user's own settings (gc.auto = 0 keeps it off) and packs (issue 44).
LOOSE_AUTO = 6700
PACKS_AUTO = 50
GC_LOG = "memrepo-gc.log"
gitcmd.ask_together("objects", GC_LOG)


def objects_to_pack(path: str) -> dict[str, int] | None:
    """The loose objects (estimated, as `git gc --auto` estimates them) and the packs, when either
    is past git's default threshold; None when neither is."""
    objects = _git_path(open_repo(path), "objects")
    in_17 = packs = 0
    with contextlib.suppress(OSError):
        in_17 = sum(1 for name in os.listdir(os.path.join(objects, "17")) if len(name) == 38)
    with contextlib.suppress(OSError):
        names = set(os.listdir(os.path.join(objects, "pack")))
        packs = sum(1 for n in names if n.endswith(".pack") and n[:-5] + ".keep" not in names)
    # As git tests them: more than gc.auto / 256 (rounded up: 27) in objects/17, more than 50 packs.
    if in_17 > -(-LOOSE_AUTO // 256) or packs > PACKS_AUTO:
        return {"loose": in_17 * 256, "packs": packs}
    return None


# git's own log of what its last detached gc warned of: while it is younger than gc.logExpiry
# (a day by default), `git gc --auto` refuses to run again.
GC_REFUSAL = "gc.log"
GC_LOG_EXPIRY = 86400.0
gitcmd.ask_together(GC_REFUSAL)


def gc_paused(path: str) -> tuple[str, str] | None:
    """(the file, its first line) when git's automatic gc is paused by what its last run warned of
    (`.git/gc.log`, younger than gc.logExpiry's default day); None when it is not."""
    log = _git_path(open_repo(path), GC_REFUSAL)
    try:
        if time.time() - os.stat(log).st_mtime > GC_LOG_EXPIRY:
            return None
        with open(log, encoding="utf-8", errors="replace") as fh:
            first = fh.read(4096).strip().splitlines()
    except OSError:
        return None
    return log, (first[0] if first else "")


def keep_objects_packed(path: str) -> bool:
    """Start a detached `git gc --auto --quiet` when the object store is past git's thresholds
    (`objects_to_pack`); True when one was started. Never waits for it."""
    repo = open_repo(path)
    if objects_to_pack(repo) is None:
        return False
    gitcmd.start_git("gc", "--auto", "--quiet", cwd=repo, log_path=_bounded_log(repo, GC_LOG))
    return True


def _bounded_log(repo: str, name: str) -> str:
    """The place of a detached git's log in the git dir, started afresh past GRAPH_LOG_MAX bytes."""
    log = _git_path(repo, name)
    with contextlib.suppress(OSError):
        if os.path.getsize(log) > GRAPH_LOG_MAX:
            os.remove(log)
    return log


def _mark_graph(repo: str, head: str | None) -> None:
    if head:
        with open(_git_path(repo, GRAPH_MARK), "w", encoding="ascii") as fh:
            fh.write(head + "\n")


def _git_path(repo: str, name: str) -> str:
    found = gitcmd.git_paths(repo, name)
    if found is None:
        raise GitError(f"{repo} is not a git repository", hint=f"run `memrepo init {repo}`")
    return found[0]


MAX_DIFF_CHARS = 20000


def changes(path: str, rel: str, limit: int = 30) -> list[dict[str, Any]]:
    """Each commit that touched one file, newest first, with its `Memrepo-*` trailers and the
    file's diff in that commit (cut at MAX_DIFF_CHARS): what `memrepo serve` shows as a memory's history."""
    rows: list[dict[str, Any]] = []
    for entry in _log_of(path, rel, limit):
        rc, out, _ = gitcmd.run_git("show", "--format=", "--patch", "--no-color", "--no-ext-diff", entry["commit"], "--", rel,
                                    cwd=open_repo(path))
        diff = out.decode("utf-8", "replace") if rc == 0 else ""
        if len(diff) > MAX_DIFF_CHARS:
            diff = diff[:MAX_DIFF_CHARS] + "\n[… diff cut]"
        rows.append({**entry, "diff": diff})
    return rows
