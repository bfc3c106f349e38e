"""Citations checked on the prompt path (stdlib only, `lstat` alone): before recall injects a
memory, the paths it cites inside the prompt's project must still be there (issue 43).

The cache holds each memory's citations (its `citations` table, filled by
`memrepo.format.mentions.citations`: the paths the verifier would claim exist now, with the line
or symbol where the memory names one). For the memories recall is about to inject (three at
most), `check` looks at those citations that lie inside the checkout the prompt is in (the
top-level folder holding `.git` at or above `cwd`, as `memrepo.recall.projects` finds it):

- a relative path, when the memory belongs to that project (`project:` names it); a global
  memory's or another project's relative path names no checkout here, and is not checked;
- an absolute path under that top-level folder, whichever memory cites it; any other absolute
  path is another checkout's or another machine's, and is not checked.

A checked path is looked up one component at a time with `lstat`, from the top-level folder
down: a missing component makes the citation gone (a renamed file is gone under its old name);
a symbolic link ends the walk with the citation counted present, so nothing outside the project
is ever looked at. A memory whose every checked citation is gone is left out (the explain trace
and the recall log say why); one with some gone is injected with a label naming what no longer
exists. Lines and symbols are kept in the cache but not checked here: that would read files.
Bounded: at most MAX_CHECKED citations per memory, MAX_DEPTH components per path.
"""

from memrepo.recall import _fast, projects

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3

    from memrepo.recall import rank

MAX_CHECKED = 32  # the cache stores at most as many (format.mentions.MAX_CITATIONS)
MAX_DEPTH = 32
MAX_NAMED = 3  # gone paths a label names; the rest are counted
_S_IFMT, _S_IFLNK = 0o170000, 0o120000
_MISSING, _THERE, _LINK = 0, 1, 2


def check(db: "sqlite3.Connection", hits: "list[rank.Hit]", cwd: "str | None",
          scope: "str | projects.Project | None",
          explain: "list[tuple[rank.Hit | None, str | None]] | None" = None
          ) -> "tuple[list[rank.Hit], list[tuple[rank.Hit | None, str]]]":
    """(the hits to inject, [(hit, why)] of those left out because every path they cite is gone).

    Each kept hit's `gone` lists its cited paths that no longer exist; `explain`'s entries for
    the hits left out get the reason.
    """
    root = projects.top_level(cwd) if cwd and hits else None
    if not root:
        return hits, []
    cites = _citations(db, [h.id for h in hits])
    if not cites:
        return hits, []
    project = scope if isinstance(scope, projects.Project) else projects.identify(cwd)
    kept: "list[rank.Hit]" = []
    dropped: "list[tuple[rank.Hit | None, str]]" = []
    seen: "dict[str, int]" = {}
    for hit in hits:
        checked = _inside(cites.get(hit.id, ()), root, project is not None and project.owns(hit.project))
        gone = [shown for shown, rel in checked if not _present(root, rel, seen)]
        if checked and len(gone) == len(checked):
            dropped.append((hit, "every path it cites is gone from this checkout: " + _names(gone)))
        else:
            hit.gone = tuple(gone)
            kept.append(hit)
    if explain is not None and dropped:
        why = {id(h): w for h, w in dropped}
        explain[:] = [(h, why.get(id(h), cut)) for h, cut in explain]
    return kept, dropped


def _citations(db: "sqlite3.Connection", ids: "list[str]") -> "dict[str, list[str]]":
    marks = ",".join("?" * len(ids))
    out: "dict[str, list[str]]" = {}
    try:
        rows = db.execute(f"SELECT m.id, c.path FROM citations c JOIN memories m ON m.rowid = c.rowid"
                          f" WHERE m.id IN ({marks}) LIMIT {MAX_CHECKED * len(ids)}", ids).fetchall()
    except Exception:  # sqlite3.Error, without importing the package: a damaged cache checks nothing
        return out
    for note_id, path in rows:
        found = out.setdefault(note_id, [])
        if len(found) < MAX_CHECKED and isinstance(path, str):
            found.append(path)
    return out


def _inside(paths: "list[str] | tuple[()]", root: str, own: bool) -> "list[tuple[str, str]]":
    """(path as cited, path relative to `root`) of the citations this checkout can answer for."""
    out = []
    prefix = root.rstrip("/") + "/"
    for path in paths:
        if path.startswith("/"):
            norm = _fast.abspath(path)  # already normalized by the cache; never trusted
            if norm.startswith(prefix):
                out.append((path, norm[len(prefix):]))
        elif own and path not in (".", "") and ".." not in path.split("/"):
            out.append((path, path))
    return out


def _present(root: str, rel: str, seen: "dict[str, int]") -> bool:
    """Whether `rel` exists under `root`, walking down with lstat and never through a link."""
    parts = [p for p in rel.split("/") if p and p != "."]
    if not parts or len(parts) > MAX_DEPTH or ".." in parts:
        return True  # nothing this walk can answer: not gone
    cur = root
    for part in parts:
        cur = cur + "/" + part
        known = seen.get(cur)
        if known is None:
            try:
                mode = _fast.stat(cur, follow_symlinks=False).st_mode
                known = _LINK if (mode & _S_IFMT) == _S_IFLNK else _THERE
            except (OSError, ValueError):
                known = _MISSING
            seen[cur] = known
        if known != _THERE:
            # A link is counted present and never followed: it may lead out of the project.
            return known == _LINK
    return True


def _names(gone: "list[str]") -> str:
    shown = ", ".join(gone[:MAX_NAMED])
    return shown + (f" (+{len(gone) - MAX_NAMED} more)" if len(gone) > MAX_NAMED else "")


def label(gone: "tuple[str, ...]") -> str:
    """The note a partly stale memory carries: what it cites that no longer exists."""
    return "no longer exists: " + _names(list(gone))
