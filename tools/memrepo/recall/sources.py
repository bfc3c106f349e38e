"""Memory sources on the prompt path (stdlib only): which caches one recall reads, and how their
candidates make one decision (issue 41, part 2).

A machine recalls from
- its *personal* repository (`MEMREPO_DIR`), the target of every write;
- each *team* repository this machine's own settings list (`teams` in the personal
  repository's `index/local.json`, written by `memrepo team add`: a clone of the team's remote,
  with its own `index/`);
- the *project* memory of the code repository the prompt comes from: `.memrepo/memory/` at the
  top level of the checkout `cwd` is in. Its cache is never in the code repository (a cache in
  the working tree is one `git add -A` away from being committed, and a cache that came with a
  clone would be read without ever passing validation): it lives in the user's cache folder,
  one per checkout (`project_index_dir`), so two worktrees on two branches keep a cache each.

Each source's cache is read as it is: a missing one is skipped (a `stat`), a stale one answers
as it stands; both are refreshed off the prompt path (`memrepo.store.sources`).

One decision: recall over every source is recall over one store of all their memories. The
merged cache (`store.merged`, built and refreshed off the prompt path) holds every source's rows
with the union's statistics, and `rank.rank` runs once over it: one candidate search, one set of
candidates, the same floors, each candidate's score weighted by its source (`WEIGHT`, a tie-breaker
as decay is) so that between comparable matches the user's own memory comes before a project's and
a project's before a team's; then a personal rule on the same subject comes with any team or
project memory recalled (`own_rules_first`): a team note never outranks a personal rule it
contradicts. At most MAX memories in all. Before a prompt context's first refresh there is no
merged cache: each source then ranks its own candidates and their recalled memories are merged in
the order of their best match's weighted p_inject (`_each`, `_merge`).
"""

from memrepo.base import _fast as _os, paths, projects

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Callable

    from memrepo.recall import rank, search

    Groups = tuple[list[tuple[float, "Source", list[rank.Hit]]], list[tuple["rank.Hit | None", "str | None"]],
                   list[tuple["rank.Hit | None", str]]]

PERSONAL, TEAM, PROJECT = "personal", "team", "project"
PROJECT_DIR = ".memrepo"  # at the top level of a code repository: memory/ inside it, reviewed with the code
WEIGHT = {PERSONAL: 1.0, PROJECT: 0.95, TEAM: 0.9}
MAX_TEAMS = 16  # a settings file listing more is read up to here: the prompt path stays bounded
TEAMS_KEY = "teams"
# In a team clone's git dir, written by this machine's `memrepo team add`: the prompt hook reads a
# listed team only where it finds it (`joined_here`).
TEAM_MARK = "memrepo-team"


class Source:
    """One memory source: its kind, its name, the folder holding its `memory/`, its cache file."""

    __slots__ = ("kind", "name", "root", "db")

    def __init__(self, kind: str, name: str, root: str, db: str) -> None:
        self.kind, self.name, self.root, self.db = kind, name, root, db

    @property
    def label(self) -> str:
        """How recall names it: `personal`, `team acme`, `project shop`."""
        return self.kind if self.kind == PERSONAL else f"{self.kind} {self.name}"

    def __repr__(self) -> str:
        return f"Source({self.kind!r}, {self.name!r}, {self.root!r})"


def team_entries(repo: str) -> "list[tuple[str, str, bool]]":
    """(name, folder, writable) of each team this machine lists, in the order written.

    Read from the personal repository's `index/local.json` only: a committed `memrepo.json`
    never adds a source (it would make every clone read a folder a teammate chose)."""
    teams = paths._settings(_os.join(repo, paths.SETTINGS_FILES[1])).get(TEAMS_KEY)
    out = []
    for name, value in list(teams.items())[:MAX_TEAMS] if isinstance(teams, dict) else []:
        folder = value.get("path") if isinstance(value, dict) else None
        if isinstance(name, str) and name and isinstance(folder, str) and folder:
            out.append((name, _os.abspath(_os.expanduser(folder)), bool(value.get("writable") is True)))
    return out


def joined_here(folder: str) -> bool:
    """Whether `memrepo team add` on this machine made `folder` a team clone (its git dir holds
    TEAM_MARK). The commands refuse a `teams` list that git tracks; the prompt hook can't ask git,
    so a list that arrived in a commit (a teammate's force-added `index/local.json`) names folders
    no `team add` here marked, and recall reads none of them (issue 41, part 5)."""
    mark = team_mark(folder)
    return bool(mark) and _os.exists(mark)


def team_mark(folder: str) -> str:
    """Where TEAM_MARK is in `folder`'s git dir (it may not exist), or "" without a git dir."""
    dot = _os.join(folder, ".git")
    try:
        with open(dot, "rb") as fh:  # a gitfile (`gitdir: <path>`): a worktree or a separate git dir
            line = fh.read(4096).decode("utf-8", "replace").strip()
    except IsADirectoryError:
        return _os.join(dot, TEAM_MARK)
    except OSError:
        return ""
    if not line.startswith("gitdir:"):
        return ""
    gitdir = line[len("gitdir:"):].strip()
    return _os.join(gitdir if gitdir.startswith("/") else _os.join(folder, gitdir), TEAM_MARK)


def joined_by(folder: str) -> "str | None":
    """The personal repository whose `memrepo team add` marked the team clone `folder` (its
    merged caches hold the team's memory), as the mark records it; None when unmarked or older."""
    mark = team_mark(folder)
    try:
        with open(mark, encoding="utf-8") as fh:
            lines = fh.read(8192).splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    return next((line[len("personal\t"):] for line in lines if line.startswith("personal\t/")), None)


def cache_home() -> str:
    """The user's cache folder for memrepo: `$XDG_CACHE_HOME/memrepo`, else `~/.cache/memrepo`."""
    base = _os.getenv("XDG_CACHE_HOME") or ""
    if not base.startswith("/"):
        base = _os.expanduser("~/.cache")
    return _os.join(base, "memrepo")


def _fnv(text: str) -> str:
    """A short stable hash of a path (FNV-1a, 64 bits): no hashlib on the prompt path."""
    h = 0xCBF29CE484222325
    for b in text.encode("utf-8", "surrogateescape"):
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def project_index_dir(top: str) -> str:
    """The cache folder of the project memory of the checkout at `top` (outside the checkout)."""
    name = "".join(c if c.isalnum() else "-" for c in _os.basename(top))[:40] or "root"
    return _os.join(cache_home(), "projects", f"{name}-{_fnv(top)}")


def project_top(cwd: "str | None") -> "str | None":
    """The top level of the checkout `cwd` is in, when it holds project memory (`.memrepo/memory/`)."""
    top = projects.top_level(cwd) if cwd else None
    if top is None:
        return None
    return top if projects._is_dir(_os.join(top, PROJECT_DIR, paths.MEMORY_DIR)) else None


def found(repo: str, cwd: "str | None" = None, all_known: bool = False) -> "list[Source]":
    """The sources one recall reads: personal, each listed team, the project of `cwd`.

    Only those whose cache exists (a missing one costs a `stat` and is skipped), unless
    `all_known` (doctor, the refresh)."""
    out = [Source(PERSONAL, PERSONAL, repo, paths.index_db(repo))]
    for name, folder, _ in team_entries(repo):
        if all_known or joined_here(folder):
            out.append(Source(TEAM, name, folder, paths.index_db(folder)))
    top = project_top(cwd)
    if top is not None and _os.abspath(top) != _os.abspath(repo):
        out.append(Source(PROJECT, projects.label_of(_os.basename(top)), _os.join(top, PROJECT_DIR),
                          _os.join(project_index_dir(top), paths.INDEX_FILE)))
    return out if all_known else [s for s in out if s.kind == PERSONAL or _os.exists(s.db)]


def rank_all(sources: "list[Source]", terms: "list[tuple[str, float]]", limit: int,
             explain: "list[tuple[rank.Hit | None, str | None]]", silence: "list[tuple[rank.Hit | None, str]]",
             check: "Callable[[Any, list[rank.Hit], Any, Any], list[rank.Hit]] | None" = None,
             **kw: "Any") -> "list[rank.Hit]":
    """One decision over every source's candidates (see the module's docstring); `kw` goes to `rank.rank`.

    `check(db, hits, explain, silence)`, when given, filters the recalled hits while the cache
    they came from is open (the citation check reads each memory's citations from it). With the
    personal source alone this is `rank.rank` (and `check`) itself, unchanged. With several, one
    `rank.rank` over the merged cache when there is one (`_union`), else each source's own."""
    from memrepo.recall import rank, search

    if len(sources) == 1:
        db = search.connect(sources[0].db)
        try:
            hits = rank.rank(db, terms, limit=limit, explain=explain, silence=silence, **kw)
            return check(db, hits, explain, silence) if check is not None else hits
        finally:
            db.close()
    got = _union(sources, terms, limit, check, kw)
    if got is None:
        groups, why, quiet = _each(sources, terms, limit, check, kw)
        got = _merge(groups), why, quiet
    hits, why, quiet = got
    explain += why
    merged, copies = once(own_rules_first(hits, [h for h, _ in explain if h is not None and not h.source], limit))
    chosen = {id(h) for h in merged}
    explain[:] = [(h, None if h is not None and id(h) in chosen else copies.get(id(h)) if h is not None and id(h) in copies
                   else "beyond the recalled across sources" if h is not None and r is None else r) for h, r in explain]
    if not merged and quiet:
        silence.append(max(quiet, key=lambda e: e[0].p if e[0] is not None else -1.0))
    return merged


def _each(sources: "list[Source]", terms: "list[tuple[str, float]]", limit: int,
          check: "Callable[[Any, list[rank.Hit], Any, Any], list[rank.Hit]] | None", kw: "dict[str, Any]") -> "Groups":
    """Each source's decision, from its own cache (no merged cache yet): `rank.rank` over its
    candidates. (weighted best p, source, recalled hits) of each source that speaks, every
    source's explanation, and the silences."""
    from memrepo.recall import rank, search

    groups: "list[tuple[float, Source, list[rank.Hit]]]" = []
    explain: "list[tuple[rank.Hit | None, str | None]]" = []
    quiet: "list[tuple[rank.Hit | None, str]]" = []
    for src in sources:
        why: "list[tuple[rank.Hit | None, str | None]]" = []
        hush: "list[tuple[rank.Hit | None, str]]" = []
        try:
            db = search.connect(src.db)
        except Exception:  # noqa: BLE001 — another source's damaged cache never silences the personal one
            if src.kind == PERSONAL:
                raise
            continue
        try:
            hits = rank.rank(db, terms, limit=limit, explain=why, silence=hush, **kw)
            hits = check(db, hits, why, hush) if check is not None else hits
        except Exception:  # noqa: BLE001 — same: a team's or project's cache is untrusted input (part 5)
            if src.kind == PERSONAL:
                raise
            continue
        finally:
            db.close()
        for h, _ in why + hush:
            if h is not None:
                h.source = "" if src.kind == PERSONAL else src.label
        explain += [(h, r) if h is not None else (None, f"{src.label}: {r}") for h, r in why]
        quiet += hush
        if hits:
            groups.append((hits[0].p * WEIGHT[src.kind], src, hits))
    return groups, explain, quiet


def _merge(groups: "list[tuple[float, Source, list[rank.Hit]]]") -> "list[rank.Hit]":
    """The sources' recalled memories in one order: each by its group's weighted best p times its
    score relative to that best, never above the memory before it in its own source (a live
    successor stays before the memory it supersedes)."""
    keyed: "list[tuple[float, int, rank.Hit]]" = []
    for key, _, hits in groups:
        top = hits[0].score or 1.0
        cap = key
        for i, h in enumerate(hits):
            cap = min(cap, key * (h.score / top))
            keyed.append((-cap, len(keyed), h))
    return [h for _, _, h in sorted(keyed, key=lambda t: (t[0], t[1]))]


OWN = ("rule", "preference")
SAME_SUBJECT = 2  # query terms both memories hold in their subject fields (title, aliases, topics)


def _subject_terms(h: "rank.Hit") -> "set[str]":
    return {t for t, bits in h.matched.items() if bits & 1}


def once(hits: "list[rank.Hit]") -> "tuple[list[rank.Hit], dict[int, str]]":
    """Each memory once: `memrepo share` copies one word for word into a team's or the project's
    memory, and both copies would take two of the three places. The first copy's place is kept,
    held by the user's own copy when it is among them. Also returns {id(a copy left out): why}."""
    out: "list[rank.Hit]" = []
    at: "dict[tuple[str, str], int]" = {}
    left: "dict[int, str]" = {}
    for h in hits:
        key = (" ".join(str(h.title or "").split()).lower(), " ".join(str(h.description or "").split()).lower())
        i = at.get(key)
        if i is None:
            at[key] = len(out)
            out.append(h)
            continue
        kept = out[i]
        if kept.source and not h.source:  # the user's own copy speaks for both
            out[i], kept, h = h, h, kept
        left[id(h)] = f"the same memory as {kept.id}, recalled once"
    return out, left


def own_rules_first(merged: "list[rank.Hit]", personal: "list[rank.Hit]", limit: int) -> "list[rank.Hit]":
    """A team's or a project's memory never speaks over the user's own rule on the same subject
    (issue 41, part 4): when one is recalled and a personal rule or preference that the same
    prompt found on the same subject (SAME_SUBJECT of its words in both memories' subject fields)
    was not, the rule comes with it, just before it; the block names both sources. What the two
    say is not judged here (no model on the prompt path): the curator's cross-source pass is where
    a contradiction goes to review."""
    shown = {id(h) for h in merged}
    out: "list[rank.Hit]" = []
    for h in merged:
        if h.source:
            words = _subject_terms(h)
            for p in personal:
                if (id(p) not in shown and p.cls in OWN and p.status not in ("superseded", "retired")
                        and len(words & _subject_terms(p)) >= SAME_SUBJECT):
                    shown.add(id(p))
                    out.append(p)
        out.append(h)
    return out[:limit]


# -- the merged cache (issue 41, part 2's budget) ---------------------------------------------------
# One cache per prompt context holding every source's rows, built off the prompt path from the
# sources' own caches (`memrepo.store.merged`); a team's or the project's memory under a tagged id.
MERGED_DIR = "merged"
MERGED_SUFFIX = ".merged.sqlite3"
MERGED_FORMAT = "u1"  # in the signature: a merged cache of another layout is rebuilt, never read


def tag(src: Source) -> str:
    """The prefix of a source's ids in the merged cache: "" for the personal source, `team-NAME:`,
    `project:` (`:` is in no memory id, so a tagged id is never another memory's)."""
    return "" if src.kind == PERSONAL else ("project:" if src.kind == PROJECT else f"team-{src.name}:")


def merged_db(sources: "list[Source]") -> str:
    """The merged cache of these sources: in the personal repository's private `index/merged/`,
    named for the project's checkout (like `project_index_dir`), or `none`."""
    top = _checkout(sources)
    name = "none"
    if top:
        name = "".join(c if c.isalnum() else "-" for c in _os.basename(top))[:40] + "-" + _fnv(top)
    return _os.join(_os.dirname(sources[0].db), MERGED_DIR, name + MERGED_SUFFIX)


def _checkout(sources: "list[Source]") -> str:
    return next((_os.dirname(s.root) for s in sources if s.kind == PROJECT), "")


def _stamp(path: str, wal: bool = False) -> str:
    try:
        st = _os.stat(path)
    except OSError:
        return "-"
    # a reader may leave an empty -wal behind: only a write puts bytes in it
    return "-" if wal and not st.st_size else f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


def _heading(sources: "list[Source]") -> str:
    return f"v{paths.SCHEMA_VERSION}{MERGED_FORMAT}\t{_checkout(sources)}"


def signature(sources: "list[Source]") -> str:
    """What the merged cache of `sources` must have recorded to be current: the layout, the
    checkout, and each source's cache file (and its write-ahead log) as it stands. A write to
    any source's cache, a team joined or removed, another checkout: another signature."""
    lines = [_heading(sources)]
    for s in sources:
        lines.append(f"{tag(s)}\t{s.db}\t{_stamp(s.db)}\t{_stamp(s.db + '-wal', True)}")
    return "\n".join(lines)


def same_sources(recorded: str, sources: "list[Source]") -> bool:
    """Whether a recorded signature is of these sources, in this layout, current or not (no `stat`)."""
    lines = recorded.split("\n")
    return (len(lines) == len(sources) + 1 and lines[0] == _heading(sources)
            and all(line.startswith(f"{tag(s)}\t{s.db}\t") for line, s in zip(lines[1:], sources)))


def checkout_in(recorded: str) -> str:
    """The checkout a recorded signature names ("" for none)."""
    return recorded.split("\n", 1)[0].partition("\t")[2]


def _tagged(noisy: "Any", sources: "list[Source]") -> "Any":
    """The noisy ids (`recall.noisy.Usage`, read from the personal repository's log, where a team's
    or a project's memory is named by its own id) as every source's ids read in the merged cache."""
    tags = [tag(s) for s in sources if tag(s)]
    if not noisy and not getattr(noisy, "renewed", None):
        return noisy
    ids = set(noisy) | {t + i for t in tags for i in noisy}
    if not hasattr(noisy, "renewed"):
        return frozenset(ids)
    renewed = dict(noisy.renewed)
    renewed.update({t + i: day for t in tags for i, day in noisy.renewed.items()})
    return type(noisy)(ids, renewed)


def _union(sources: "list[Source]", terms: "list[tuple[str, float]]", limit: int,
           check: "Callable[[Any, list[rank.Hit], Any, Any], list[rank.Hit]] | None",
           kw: "dict[str, Any]") -> "tuple[list[rank.Hit], list[tuple[rank.Hit | None, str | None]], list[tuple[rank.Hit | None, str]]] | None":
    """One `rank.rank` over the merged cache of `sources`, as over a single store: (recalled hits,
    explanation, silences), each hit named for its source. A stale merged cache answers as it
    stands (its refresh is under way: `store.merged`); None when there is none, it is of other
    sources or another layout, or it is damaged: the caller then reads each source's own cache."""
    path = merged_db(sources)
    if not terms or not _os.exists(path):
        return None
    from memrepo.recall import rank, search

    why: "list[tuple[rank.Hit | None, str | None]]" = []
    hush: "list[tuple[rank.Hit | None, str]]" = []
    try:
        db = search.connect(path)
    except Exception:  # noqa: BLE001 — a damaged merged cache: each source's own, as before
        return None
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'sources'").fetchone()
        if row is None or not isinstance(row[0], str) or not same_sources(row[0], sources):
            return None
        weights = {tag(s): WEIGHT[s.kind] for s in sources}
        hits = rank.rank(db, terms, limit=limit, explain=why, silence=hush,
                         **{**kw, "noisy": _tagged(kw.get("noisy"), sources), "weights": weights})
        hits = check(db, hits, why, hush) if check is not None else hits
    except Exception:  # noqa: BLE001 — the same: never silences the personal source
        return None
    finally:
        db.close()
    _relabel([h for h, _ in why + hush if h is not None] + hits, sources)
    return hits, why, hush


def _relabel(hits: "list[rank.Hit]", sources: "list[Source]") -> None:
    """The merged cache's hits under their own ids, named for their source (once each)."""
    by_tag = {tag(s): s for s in sources if tag(s)}
    for h in hits:
        t = h.id[:h.id.find(":") + 1]
        src = by_tag.get(t) if t else None
        if src is not None:
            h.id, h.source = h.id[len(t):], src.label
            if h.superseded_by and h.superseded_by.startswith(t):
                h.superseded_by = h.superseded_by[len(t):]
