"""Memory sources off the prompt path (issue 41): joining a team, refreshing each source's cache,
syncing the teams, and what doctor says of each. Which sources one recall reads, and how, is
`memrepo.recall.sources`.

A team is a clone of the team's remote, made the way a second machine joins (`join`), listed in
the personal repository's untracked `index/local.json` under `teams` (machine configuration:
never in a shared repository). It is read-only on this machine unless added with `writable`:
`memrepo sync` then pulls it and never pushes. Project memory is `.memrepo/memory/` in a code
repository; its cache is built into the user's cache folder (`recall.sources.project_index_dir`).

Every source but the personal one is untrusted input exactly as a synced repository is: the git
hooks git runs in a team clone are memrepo's own shims in the untracked `.git/hooks`; nothing in
a code repository runs (memrepo installs no hook there); no settings are read from either; their
memory files are validated by the same index build that skips a malformed one; their text is
fenced and escaped like any memory's (`recall.fence`).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from memrepo.errors import MemrepoError
from memrepo.base import paths
from memrepo.recall import sources as rs
from memrepo.store import config, index, join

NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")


def data_home() -> str:
    """Where team clones go by default: `$XDG_DATA_HOME/memrepo/teams`, else `~/.local/share/memrepo/teams`."""
    base = os.environ.get("XDG_DATA_HOME") or ""
    if not os.path.isabs(base):
        base = os.path.expanduser("~/.local/share")
    return os.path.join(base, "memrepo", "teams")


def _write_local(repo: str, key: str, value: Any) -> None:
    """Set one key of this machine's `index/local.json` (atomically, 0600)."""
    path = os.path.join(repo, config.LOCAL)
    data = config.local(repo) if os.path.exists(path) else {}
    if value is None:
        data.pop(key, None)
    else:
        data[key] = value
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    os.replace(tmp, path)


def teams(repo: str) -> dict[str, dict[str, Any]]:
    """This machine's teams: name -> {"path", "writable"} (from `index/local.json` only)."""
    value = config.local(repo).get(rs.TEAMS_KEY)
    return {k: dict(v) for k, v in value.items() if isinstance(v, dict)} if isinstance(value, dict) else {}


@dataclass
class Joined:
    name: str
    path: str
    url: str
    writable: bool
    memories: int = 0
    did: list[str] = field(default_factory=list)
    kept_writable: bool = False  # joined again without --writable, it keeps the pushes it had


def add_team(repo: str, name: str, url: str, directory: str | None = None, writable: bool = False,
             branch: str | None = None) -> Joined:
    """Join a team's memory: clone `url` (as a second machine joins), wire memrepo's git hooks in
    the clone, build its cache, and list it in this machine's settings."""
    from memrepo.store import repoinit
    from memrepo.vcs import hookwire

    if not NAME.match(name) or name == rs.PERSONAL:
        raise MemrepoError(f"{name!r} cannot name a team", hint="use lowercase letters, digits and dashes, e.g. `acme`")
    known = teams(repo)
    root = os.path.abspath(os.path.expanduser(directory or os.path.join(data_home(), name)))
    if name in known and os.path.abspath(os.path.expanduser(str(known[name].get("path")))) != root:
        raise MemrepoError(f"team {name!r} is already joined at {known[name].get('path')}",
                           hint=f"`memrepo team remove {name}` first, or pick another name")
    if os.path.abspath(root) == os.path.abspath(repo):
        raise MemrepoError("a team's clone cannot be the personal repository", hint="name another --dir")
    again = os.path.isdir(os.path.join(root, ".git"))  # a clone left by `team remove`, or joined twice
    kept = not writable and name in known and known[name].get("writable") is True
    writable = writable or kept  # joined again without --writable: it keeps the pushes it had
    out = Joined(name, root, url, writable, kept_writable=kept)
    if writable:
        report = repoinit.init(root, source=url, branch=branch)
        out.did.append(str(report.get("joined") or "joined"))
    else:
        # Read-only: nothing is committed here (a layout commit of its own would set this clone apart
        # from the team's branch for good); only the untracked wiring and the cache are made.
        out.did.append(join.clone_or_attach(url, root))
        adopted = join.adopt(root, branch)
        if join.memory_count(root, "HEAD") < 0 and adopted is None:
            raise MemrepoError(f"{url} holds no memory repository yet",
                               hint=f"one member runs `memrepo team add {name} {url} --writable`, then `memrepo sync`")
        hookwire.wire(root)
        hookwire.record_python(root)
        hookwire.wire_merge_driver(root)
        index.update(root)
    mark_joined(root, repo)
    # An absolute path: the prompt hook may run under another HOME (an agent's sandbox), and this
    # file is this machine's alone, never committed.
    _write_local(repo, rs.TEAMS_KEY, {**known, name: {"path": root, "writable": writable}})
    if again:
        _catch_up(name, root)
    out.memories = _count(root)
    return out


def _catch_up(name: str, root: str) -> None:
    """Bring a clone joined again up to its remote (validated, as sync merges; nothing pushed):
    it stood where `team remove` left it, and what the team pushed since was not recalled."""
    from memrepo.store import sync as sync_lib

    try:
        sync_lib.sync(root, push=False)
    except MemrepoError as exc:
        raise MemrepoError(f"team {name} is joined again, but its clone stays as it was: {exc}",
                           hint=exc.hint or "run `memrepo sync`") from exc


def mark_joined(root: str, repo: str | None = None) -> None:
    """Mark `root` as a team this machine joined (`recall.sources.joined_here`), in its git dir:
    never committed, never pushed. It names the personal repository `repo` that joined it, so a
    commit in the clone refreshes that repository's merged caches (`store.githooks`)."""
    from memrepo.vcs import refs

    with open(refs.git_path(root, rs.TEAM_MARK), "w", encoding="utf-8") as fh:
        fh.write("listed by `memrepo team add` on this machine: the prompt hook reads this clone\n")
        if repo:
            fh.write(f"personal\t{os.path.abspath(repo)}\n")


def _count(root: str) -> int:
    from memrepo.format import files

    return len(files.memory_files(paths.memory_dir(root)))


def remove_team(repo: str, name: str) -> str:
    """Stop recalling from a team; its clone stays where it is (returned), for the user to delete."""
    known = teams(repo)
    if name not in known:
        raise MemrepoError(f"no team named {name!r}", hint="`memrepo team list` shows them")
    folder = str(known.pop(name).get("path"))
    _write_local(repo, rs.TEAMS_KEY, known or None)
    return folder


# -- caches ---------------------------------------------------------------------------------------

def place(src: rs.Source) -> None:
    """Tell `paths` where a project source keeps its cache (this process)."""
    if src.kind == rs.PROJECT:
        paths.place_index(src.root, os.path.dirname(src.db))


def project_problem(src: rs.Source) -> str | None:
    """Why a project's `.memrepo/` is not read (a link that came with a clone may point anywhere)."""
    if os.path.islink(src.root) or os.path.islink(paths.memory_dir(src.root)):
        return f"{src.root} (or its memory/) is a symbolic link, so memrepo does not read it"
    return None


def needs_refresh(src: rs.Source) -> str | None:
    """Why a source's cache must be rebuilt or updated, or None when it is fresh."""
    from memrepo.store import freshness

    if src.kind == rs.PROJECT:
        if project_problem(src):
            return None
        place(src)
        info = index.status(src.root)
        if not info["exists"]:
            return "index missing"
        if not info["schema_ok"]:
            return "index schema or unreadable"
        if info.get("changed_files"):
            return f"{len(info['changed_files'])} memory files changed since indexing"
        return None
    if not os.path.isdir(src.root):
        return "clone missing"
    return freshness.needs_refresh(src.root)


def refresh(src: rs.Source) -> index.Report | None:
    """Bring a source's cache up to date (None when it was fresh or cannot be read)."""
    if src.kind == rs.PROJECT and not project_problem(src):
        note_checkout(src)  # so the sweep knows this checkout (`store.checkouts`, issue 41, part 4)
    if not needs_refresh(src) or (src.kind == rs.PROJECT and project_problem(src)):
        return None
    if src.kind == rs.TEAM and not os.path.isdir(src.root):
        return None
    place(src)
    return index.update(src.root)


CHECKOUT = "checkout.json"  # beside a project's cache: the checkout it is the cache of


def note_checkout(src: rs.Source) -> None:
    """Record, beside project source `src`'s cache, the checkout it is the cache of."""
    folder = os.path.dirname(src.db)
    path = os.path.join(folder, CHECKOUT)
    top = os.path.dirname(src.root)
    if checkout_of(path) == top:
        return
    os.makedirs(folder, mode=0o700, exist_ok=True)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump({"top": top}, fh)
    os.replace(tmp, path)


def checkout_of(path: str) -> str | None:
    """The checkout a project cache's `checkout.json` names, or None."""
    try:
        with open(path, "rb") as fh:
            data = json.loads(fh.read(4096).decode("utf-8"))
    except (OSError, ValueError):
        return None
    top = data.get("top") if isinstance(data, dict) else None
    return top if isinstance(top, str) and os.path.isabs(top) else None


def refresh_all(repo: str, cwd: str | None = None) -> list[tuple[rs.Source, index.Report]]:
    """Refresh every source but the personal one (whose cache its own git hooks keep), then the
    merged cache of the prompt context of `cwd` (`store.merged`)."""
    done = []
    for src in rs.found(repo, cwd, all_known=True)[1:]:
        report = refresh(src)
        if report is not None:
            done.append((src, report))
    refresh_merged(repo, cwd)
    return done


def refresh_merged(repo: str, cwd: str | None) -> Any:
    """The merged cache of the prompt context of `cwd`, built unless current (a `merged.Built`, or
    None). Never fails a caller: a merged cache that cannot be built leaves the prompt hook
    reading each source's own cache, and doctor says so."""
    import sqlite3

    from memrepo.store import merged

    try:
        return merged.refresh(repo, cwd)
    except (OSError, sqlite3.Error, MemrepoError):
        return None


def sync_teams(repo: str) -> list[tuple[str, Any]]:
    """`memrepo sync` of each team clone: pull, validate, merge, reindex; push only a writable one.
    Returns (name, SyncReport or the MemrepoError that stopped it)."""
    from memrepo.store import sync as sync_lib

    out: list[tuple[str, Any]] = []
    for name, folder, writable in rs.team_entries(repo):
        try:
            out.append((name, sync_lib.sync(folder, push=writable)))
        except sync_lib.SyncStopped as exc:
            if not writable and exc.rescue:
                # A merge by hand here would be a commit this clone never pushes, apart from the
                # team's branch for good: the fix belongs on the remote (h32's walk).
                exc.hint = (f"team {name} is read-only here: ask a member who pushes to it to fix what is named above "
                            "on its remote; until then recall reads this clone as it stood, and `memrepo sync` takes "
                            "the fix when it lands")
            out.append((name, exc))
        except MemrepoError as exc:
            out.append((name, exc))
    refresh_known(repo)  # a team that moved leaves every merged cache stale: built again here
    return out


def refresh_known(repo: str) -> None:
    """Bring every merged cache this machine keeps up to date (`merged.refresh_known`); never fails."""
    import sqlite3

    from memrepo.store import merged

    try:
        merged.refresh_known(repo)
    except (OSError, sqlite3.Error, MemrepoError):
        pass


def source_of(repo: str, cwd: str | None, name: str) -> rs.Source:
    """The source `name` names (`personal`, a team's name, `project`)."""
    for src in rs.found(repo, cwd, all_known=True):
        if name in (src.name, src.label, src.kind):
            place(src)
            return src
    raise MemrepoError(f"no source named {name!r} here",
                       hint="`memrepo team list` names the teams; `project` is the code repository you are in")


def describe(repo: str, cwd: str | None, do_refresh: bool = False) -> list[dict[str, Any]]:
    """Each source recall reads for a prompt in `cwd`, and its cache's state (refreshed first when asked)."""
    out = []
    for src in rs.found(repo, cwd, all_known=True):
        place(src)
        problem = project_problem(src) if src.kind == rs.PROJECT else None
        if do_refresh and src.kind != rs.PERSONAL and not problem:
            refresh(src)
    if do_refresh:
        refresh_merged(repo, cwd)
    for src in rs.found(repo, cwd, all_known=True):
        problem = project_problem(src) if src.kind == rs.PROJECT else None
        why = problem or (freshness_of(src))
        out.append({"kind": src.kind, "name": src.name, "root": src.root, "cache": src.db,
                    "fresh": why is None, "state": why or "fresh"})
    return out


def freshness_of(src: rs.Source) -> str | None:
    from memrepo.store import freshness

    return freshness.needs_refresh(src.root) if src.kind == rs.PERSONAL else needs_refresh(src)


# -- what list, search and show read (issue 41, part 6) --------------------------------------------

def others(repo: str, cwd: str | None, only: str | None = None) -> list[rs.Source]:
    """The team and project sources with a cache to read (placed), or the one `only` names."""
    out = []
    for src in rs.found(repo, cwd)[1:]:
        if (only in (None, "all", src.name, src.label, src.kind)) and not (src.kind == rs.PROJECT and project_problem(src)):
            place(src)
            out.append(src)
    return out


def _read_only(src: rs.Source) -> Any:
    import sqlite3

    return sqlite3.connect(f"file:{src.db}?mode=ro", uri=True)


def wants_personal(only: str | None) -> bool:
    return only in (None, "all", rs.PERSONAL)


def list_all(repo: str, cwd: str | None, only: str | None = None, fresh: bool = True, **filters: Any) -> list[dict[str, Any]]:
    """`memories.list_memories` over every source (or the one `only` names); each row says its
    `source`. `fresh`: as `memories.fresh_db`, for the personal cache."""
    import contextlib

    from memrepo.store import memories

    rows = ([dict(r, source=rs.PERSONAL) for r in memories.list_memories(repo, fresh=fresh, **filters)]
            if wants_personal(only) else [])
    for src in others(repo, cwd, only):
        with contextlib.closing(_read_only(src)) as db:
            rows += [dict(r, source=src.label) for r in memories.list_rows(db, **filters)]
    return rows


def search_all(repo: str, cwd: str | None, text: str, limit: int = 10, project: str | None = None,
               only: str | None = None, fresh: bool = True) -> list[Any]:
    """`finder.search_memories` over every source: each source's best, then all by score (each hit's
    `source` says where it lives)."""
    import contextlib

    from memrepo.recall import rank
    from memrepo.store import finder

    hits = finder.search_memories(repo, text, limit, project, fresh=fresh) if wants_personal(only) else []
    terms = finder.search_terms(text)
    for src in others(repo, cwd, only) if terms else []:
        with contextlib.closing(_read_only(src)) as db:
            found = rank.rank(db, [(t, 1.0) for t in terms], project=project, limit=limit, floors=False)
        for h in found:
            h.source = src.label
        hits += found
    return sorted(hits, key=lambda h: -h.score)[:limit]


def show_any(repo: str, cwd: str | None, note_id: str, only: str | None = None) -> dict[str, Any]:
    """`memories.show` of the memory `note_id` in the first source that holds it (personal first),
    with its `source` and the folder it lives in."""
    from memrepo.errors import AmbiguousId, NoteNotFound
    from memrepo.format import notes
    from memrepo.recall import usage
    from memrepo.store import memories
    from memrepo.vcs import gitops

    if wants_personal(only):
        try:
            return dict(memories.show(repo, memories.resolve(repo, note_id)), source=rs.PERSONAL, root=repo)
        except AmbiguousId:  # the start of several of yours: name them, not "no memory in any source"
            raise
        except NoteNotFound:
            if only == rs.PERSONAL or not others(repo, cwd):
                raise
    for src in others(repo, cwd, only):
        if notes.is_id(note_id) and os.path.exists(paths.note_path(src.root, note_id)):
            # Its use is this machine's recall log's, which is the personal repository's (issue 43).
            return {"id": note_id, "text": memories.read_text(src.root, note_id), "source": src.label, "root": src.root,
                    "history": gitops.history(*in_git(src, note_id)), "use": usage.memory_use(repo, note_id)}
    raise NoteNotFound(f"no memory with id {note_id!r} in any source", hint="find ids with `memrepo list` or `memrepo search`")


def in_git(src: "rs.Source", note_id: str) -> tuple[str, str]:
    """(the git repository, the path in it) of a team's or the project's memory `note_id`: a
    project's memory is history of the code repository it sits in."""
    if src.kind == rs.TEAM:
        return src.root, f"{paths.MEMORY_DIR}/{note_id}.md"
    return os.path.dirname(src.root), f"{rs.PROJECT_DIR}/{paths.MEMORY_DIR}/{note_id}.md"


# -- doctor (issue 41, part 6) ----------------------------------------------------------------------

def checks(repo: str, cwd: str | None, check: Any) -> list[Any]:
    """doctor's lines for each team and the project of `cwd`: the cache's freshness, and for a team
    its clone, remote, branch and git hooks. `check` is doctor's Check class."""
    from memrepo.vcs import hookwire

    out = []
    for src in rs.found(repo, cwd, all_known=True)[1:]:
        name = f"source {src.label}"
        if src.kind == rs.TEAM and not os.path.isdir(os.path.join(src.root, ".git")):
            out.append(check(name, False, f"no clone at {src.root}", f"memrepo team remove {src.name}, then "
                             f"memrepo team add {src.name} URL"))
            continue
        if src.kind == rs.TEAM and not rs.joined_here(src.root):
            out.append(check(name, False, f"{src.root} is listed but `memrepo team add` on this machine did not make it "
                             "a team clone (a list that came with a commit?): recall does not read it",
                             f"memrepo team remove {src.name}, then memrepo team add {src.name} URL"))
            continue
        problem = project_problem(src) if src.kind == rs.PROJECT else None
        if problem:
            out.append(check(name, False, problem, f"replace {src.root} with a real folder, or remove it"))
            continue
        why = needs_refresh(src)
        detail = [f"{src.root}: cache " + (why or "fresh")]
        fix = "memrepo sources --refresh" if why else ""
        ok = True
        behind = 0
        if src.kind == rs.TEAM:
            remote = join.default_remote(src.root)
            url = _remote_url(src.root, remote) if remote else None
            branch = join.current_branch(src.root)
            detail.append(f"remote {url or 'none'}, branch {branch or 'detached'}, "
                          f"{'writable' if teams(repo).get(src.name, {}).get('writable') else 'read-only'}")
            wired, how = hookwire.wiring(src.root)
            if not wired:
                ok, fix = False, f"memrepo init {src.root}"
                detail.append(f"git hooks: {how}")
            if url is None:
                ok, fix = False, f"git -C {src.root} remote add origin URL"
            behind = _behind(src.root, remote, branch) if remote and branch else 0
            if behind:  # the last sync fetched and stopped: recall reads the clone as it stood
                detail.append(f"{behind} commit{'s' if behind > 1 else ''} behind its remote: the last sync stopped, "
                              "and recall reads the clone as it stood")
                fix = fix or "memrepo sync (it says why it stopped)"
        else:
            detail.append("no git hook of memrepo's runs in a code repository: the cache is refreshed at session "
                          "start and by `memrepo sources --refresh`")
        out.append(check(name, ok, "; ".join(detail), fix, warn=ok and (bool(why) or behind > 0)))
    if len(rs.found(repo, cwd, all_known=True)) > 1:
        out.append(_merged_check(repo, cwd, check))
    return out


def _behind(root: str, remote: str, branch: str) -> int:
    """Commits the clone's remote-tracking branch has that its HEAD lacks (what the last fetch
    brought and no merge took in); 0 when it cannot tell."""
    from memrepo.errors import GitError
    from memrepo.vcs import remote as rem

    try:
        return rem.count(root, f"HEAD..refs/remotes/{remote}/{branch}")
    except (GitError, ValueError):
        return 0


def _merged_check(repo: str, cwd: str | None, check: Any) -> Any:
    """doctor's line for the merged cache of the prompt context of `cwd` (issue 41, part 2)."""
    from memrepo.store import merged

    state = merged.state(repo, cwd)
    srcs = rs.found(repo, cwd)
    where = rs.merged_db(srcs) if len(srcs) > 1 else ""
    if state in ("current", "single"):
        return check("merged cache", True, f"{where}: current" if state == "current" else
                     "one source has a cache: nothing to merge")
    reads = ("it as it stands until its refresh (started after each commit)" if state == "stale"
             else "each source's own cache until it is built")
    return check("merged cache", True, f"{where}: {state}; the prompt hook reads {reads}",
                 "memrepo sources --refresh", warn=True)


def _remote_url(root: str, remote: str) -> str | None:
    from memrepo.vcs import refs

    return refs.remote_url(root, remote) or None
