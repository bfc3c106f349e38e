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

One decision: each source ranks its candidates and applies the same floors (`rank.rank`; the
decision's features mean the same in any store), then the sources' recalled memories are merged
in the order of their best match's p_inject, weighted so that between comparable matches the
user's own memory comes before a project's and a project's before a team's (`WEIGHT`): a team
note never outranks a personal rule it contradicts on equal evidence. At most MAX memories in all.
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
    dot = _os.join(folder, ".git")
    try:
        with open(dot, "rb") as fh:  # a gitfile (`gitdir: <path>`): a worktree or a separate git dir
            line = fh.read(4096).decode("utf-8", "replace").strip()
    except IsADirectoryError:
        return _os.exists(_os.join(dot, TEAM_MARK))
    except OSError:
        return False
    if not line.startswith("gitdir:"):
        return False
    gitdir = line[len("gitdir:"):].strip()
    return _os.exists(_os.join(gitdir if gitdir.startswith("/") else _os.join(folder, gitdir), TEAM_MARK))


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

    `check(db, hits, explain, silence)`, when given, filters each source's recalled hits while
    its cache is open (the citation check reads each memory's citations from its own cache).
    With the personal source alone this is `rank.rank` (and `check`) itself, unchanged. With
    several, each source's decision is read from the merged cache when it is current (`_merged`),
    else from each source's own cache: the same `rank.rank` over the same statistics either way."""
    from memrepo.recall import rank, search

    if len(sources) == 1:
        db = search.connect(sources[0].db)
        try:
            hits = rank.rank(db, terms, limit=limit, explain=explain, silence=silence, **kw)
            return check(db, hits, explain, silence) if check is not None else hits
        finally:
            db.close()
    got = _merged(sources, terms, limit, check, kw)
    groups, why, quiet = got if got is not None else _each(sources, terms, limit, check, kw)
    explain += why
    merged = own_rules_first(_merge(groups), [h for h, _ in explain if h is not None and not h.source], limit)
    chosen = {id(h) for h in merged}
    explain[:] = [(h, "beyond the recalled across sources" if h is not None and r is None and id(h) not in chosen else r)
                  for h, r in explain]
    if not merged and quiet:
        silence.append(max(quiet, key=lambda e: e[0].p if e[0] is not None else -1.0))
    return merged


def _each(sources: "list[Source]", terms: "list[tuple[str, float]]", limit: int,
          check: "Callable[[Any, list[rank.Hit], Any, Any], list[rank.Hit]] | None", kw: "dict[str, Any]",
          merged: "tuple[Any, list[search.Lookups]] | None" = None) -> "Groups":
    """Each source's decision: `rank.rank` over its candidates, from its own cache, or from the
    merged cache `merged` (its connection, each source's statistics) over the source's rowids
    with its own statistics. (weighted best p, source, recalled hits) of each source that speaks,
    every source's explanation, and the silences."""
    from memrepo.recall import rank, search

    groups: "list[tuple[float, Source, list[rank.Hit]]]" = []
    explain: "list[tuple[rank.Hit | None, str | None]]" = []
    quiet: "list[tuple[rank.Hit | None, str]]" = []
    for k, src in enumerate(sources):
        why: "list[tuple[rank.Hit | None, str | None]]" = []
        hush: "list[tuple[rank.Hit | None, str]]" = []
        args = kw
        if merged is not None:
            db, facts = merged
            args = {**kw, "lookups": facts[k], "within": within(k), "noisy": _tagged(kw.get("noisy"), tag(src))}
        else:
            try:
                db = search.connect(src.db)
            except Exception:  # noqa: BLE001 — another source's damaged cache never silences the personal one
                if src.kind == PERSONAL:
                    raise
                continue
        try:
            hits = rank.rank(db, terms, limit=limit, explain=why, silence=hush, **args)
            hits = check(db, hits, why, hush) if check is not None else hits
        except Exception:  # noqa: BLE001 — same: a team's or project's cache is untrusted input (part 5)
            if src.kind == PERSONAL or merged is not None:
                raise
            continue
        finally:
            if merged is None:
                db.close()
        if merged is not None:
            _relabel([h for h, _ in why + hush if h is not None] + hits, src)
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
SHIFT = 40  # a source's rows in a merged cache: rowid k << SHIFT | its rowid in its own cache


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


def signature(sources: "list[Source]") -> str:
    """What the merged cache of `sources` must have recorded to be current: the schema, the
    checkout, and each source's cache file (and its write-ahead log) as it stands. A write to
    any source's cache, a team joined or removed, another checkout: another signature."""
    lines = [f"v{paths.SCHEMA_VERSION}\t{_checkout(sources)}"]
    for s in sources:
        lines.append(f"{tag(s)}\t{s.db}\t{_stamp(s.db)}\t{_stamp(s.db + '-wal', True)}")
    return "\n".join(lines)


def checkout_in(recorded: str) -> str:
    """The checkout a recorded signature names ("" for none)."""
    return recorded.split("\n", 1)[0].partition("\t")[2]


def within(k: int) -> "tuple[int, int]":
    """The rowids of the `k`th source's rows in a merged cache: its own rowids, shifted."""
    return k << SHIFT, ((k + 1) << SHIFT) - 1


def _tagged(noisy: "Any", t: str) -> "Any":
    """The noisy ids (`recall.noisy.Usage`) as a tagged source's ids read in the merged cache."""
    if not t or not noisy and not getattr(noisy, "renewed", None):
        return noisy
    renewed = {t + i: day for i, day in getattr(noisy, "renewed", {}).items()}
    return type(noisy)((t + i for i in noisy), renewed) if hasattr(noisy, "renewed") else frozenset(t + i for i in noisy)


def _merged(sources: "list[Source]", terms: "list[tuple[str, float]]", limit: int,
            check: "Callable[[Any, list[rank.Hit], Any, Any], list[rank.Hit]] | None",
            kw: "dict[str, Any]") -> "Groups | None":
    """`_each` from the merged cache; None when it is missing, not current (a source changed since
    it was written, the sources differ) or damaged: the caller then reads each source's own cache
    (issue 41, part 2). One statement reads the signature and every source's statistics."""
    path = merged_db(sources)
    if not terms or not _os.exists(path):
        return None
    from memrepo.recall import search

    try:
        db = search.connect(path)
    except Exception:  # noqa: BLE001 — a damaged merged cache: each source's own, as before
        return None
    try:
        facts = _facts(db, sources, [t for t, _ in terms])
        return _each(sources, terms, limit, check, kw, (db, facts)) if facts is not None else None
    except Exception:  # noqa: BLE001 — the same: never silences the personal source
        return None
    finally:
        db.close()


def _facts(db: "Any", sources: "list[Source]", words: "list[str]") -> "list[search.Lookups] | None":
    """Each source's `search.Lookups` for `words` from its own statistics in the merged cache
    (`store.merged`), as its own cache gives them; None when the cache is not current."""
    from memrepo.recall import search

    tokens = {w: search._token(w) for w in words}
    known = sorted({t for t in tokens.values() if t is not None})
    slow = [i for i, w in enumerate(words) if tokens[w] is None]
    cap = f"(SELECT max({search.COMMON_DF_MIN}, CAST(count * {search.COMMON_DF_SHARE} AS INTEGER)) + 1 FROM src WHERE k = {{k}})"
    walks = "".join(f" UNION ALL SELECT 'd', {k}, {i}, (SELECT count(*) FROM (SELECT 1 FROM fts WHERE fts MATCH ?"
                    f" AND rowid BETWEEN {within(k)[0]} AND {within(k)[1]} LIMIT {cap.format(k=k)})), NULL"
                    for i in slow for k in range(len(sources)))
    marks = ",".join("?" * len(words))
    sql = ("SELECT 'm', NULL, value, NULL, NULL FROM meta WHERE key = 'sources'"
           " UNION ALL SELECT 's', k, count, averages, docstats FROM src"
           f" UNION ALL SELECT 't', k, word, NULL, NULL FROM srctech WHERE word IN ({marks})"
           + (f" UNION ALL SELECT 'f', k, term, df, NULL FROM srcterms WHERE term IN ({','.join('?' * len(known))})"
              if known else "") + walks)
    rows = db.execute(sql, words + known + [search.quote(words[i]) for i in slow for _ in sources]).fetchall()
    if next((v for kind, _, v, _, _ in rows if kind == "m"), None) != signature(sources):
        return None
    out = []
    for k in range(len(sources)):
        n, block, sig = next(((a, b, c) for kind, j, a, b, c in rows if kind == "s" and j == k), (0, None, None))
        most = max(search.COMMON_DF_MIN, int(n * search.COMMON_DF_SHARE)) + 1
        by_token = {t: min(int(df), most) for kind, j, t, df, _ in rows if kind == "f" and j == k}
        dfs = {w: by_token.get(t, 0) for w, t in tokens.items() if t is not None}
        dfs.update({words[i]: int(v) for kind, j, i, v, _ in rows if kind == "d" and j == k})
        stats = search._averages(block) if sig == search.DOCSTATS else None
        out.append(search.Lookups.given(int(n), {w for kind, j, w, _, _ in rows if kind == "t" and j == k}, dfs,
                                        dict(tokens) if stats is not None else dict.fromkeys(words), stats))
    return out


def _relabel(hits: "list[rank.Hit]", src: Source) -> None:
    """The merged cache's hits of `src` under their own ids, named for their source (once each)."""
    t = tag(src)
    if not t:
        return
    for h in hits:
        if h.id.startswith(t):
            h.id, h.source = h.id[len(t):], src.label
            if h.superseded_by and h.superseded_by.startswith(t):
                h.superseded_by = h.superseded_by[len(t):]
