"""A proposal of the curator across sources (issue 41, part 4), as `memrepo review` shows and accepts it.

Such a proposal names both memories with their sources in its trailers: `Id` and `Source` (the
memory that would give way), `Winner` and `Winner-Source` (the one that would stay). `review show`
puts both side by side, each as it stands in its own source (`sides`); accepting one where another
source's memory gives way proposes the retirement there, as `memrepo forget` does (`accept_forget`):
nothing is ever written into a team's branch or a checkout's history.
"""

from __future__ import annotations

import os
from typing import Any

from memrepo.base import paths
from memrepo.errors import MemrepoError
from memrepo.recall import sources as rs
from memrepo.vcs import commit, runs, trees

FORWARDED = "Forwarded: "  # the line of an accept's body that says where the retirement was proposed


def key(label: str, note_id: str) -> str:
    """A memory named with its source: `personal: my-spaces`, `team acme: team-tabs`."""
    return f"{label}: {note_id}"


def pair_of(t: dict[str, Any]) -> frozenset[str] | None:
    """The two memories a proposal's (or a reject's) trailers name with their sources, or None
    when it is no proposal across sources."""
    if not t.get("Source") or not t.get("Winner-Source"):
        return None
    return frozenset((key(str(t["Source"]), str(t.get("Id", ""))), key(str(t["Winner-Source"]), str(t.get("Winner", "")))))


def is_across(p: dict[str, Any]) -> bool:
    return pair_of(p["trailers"]) is not None


def _source(repo: str, label: str) -> rs.Source | None:
    from memrepo.store import checkouts

    return next((s for s in checkouts.compared(repo, os.getcwd()) if s.label == label), None)


def _text(repo: str, label: str, note_id: str, rev: str = "HEAD") -> str:
    if label == rs.PERSONAL:
        return (trees.file_at(repo, rev, f"{paths.MEMORY_DIR}/{note_id}.md") or b"").decode("utf-8", "replace")
    src = _source(repo, label)
    path = paths.note_path(src.root, note_id) if src is not None else ""
    if not path or not os.path.exists(path):
        return f"({note_id} is not in {label} on this machine: not joined here, or gone since)"
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read(64 * 1024)


def sides(repo: str, p: dict[str, Any]) -> None:
    """Fill `summary`, `loser` and `winner` of proposal `p` across sources: each memory as it
    stands in its own source, with that source named."""
    t = p["trailers"]
    lose, win = str(t.get("Source")), str(t.get("Winner-Source"))
    what = "retire it here" if lose == rs.PERSONAL else f"propose retiring it in {lose}"
    p["summary"] = (f"conflict across sources: {t.get('Relation', '?')}, {win}'s {t.get('Winner', '?')} would stay and "
                    f"{lose}'s {t.get('Id', '?')} give way (confidence {t.get('Confidence', '?')}); accept: {what}; "
                    "reject: both stand, and this pair is not proposed again")
    p["loser"] = {"id": t.get("Id", ""), "source": lose, "text": _text(repo, lose, str(t.get("Id", ""))),
                  "role": f"{lose}, would give way"}
    p["winner"] = {"id": t.get("Winner", ""), "source": win, "text": _text(repo, win, str(t.get("Winner", ""))),
                   "role": f"{win}, would stay"}


def accept_forget(repo: str, p: dict[str, Any], forge_name: str | None = None) -> str:
    """Accept a proposal whose giving-way memory is another source's: propose its retirement there
    (`memrepo forget`'s proposal), then record the accept (an empty commit); returns its sha."""
    from memrepo.passes import share

    t = p["trailers"]
    src = _source(repo, str(t["Source"]))
    if src is None:
        raise MemrepoError(f"{t['Source']} is not a source on this machine, so {t.get('Id')} can't be proposed there",
                            hint="join the team (`memrepo team add`) or run this from the code repository; "
                                 f"or `memrepo review reject {p['id']}`")
    top = os.path.dirname(src.root) if src.kind == rs.PROJECT else None
    done = share.forget(repo, str(t.get("Id", "")), top, str(t.get("Reason", "")), forge_name, only=src.label)
    there = "; ".join(filter(None, [done.url, done.path, *done.manual])) or "nothing to do: it is retired there already"
    keep = {k: t[k] for k in ("Action", "Id", "Source", "Winner", "Winner-Source", "Relation", "Confidence", "Reason") if k in t}
    keep.update({"Run": runs.fresh_run_id(repo, "review"), "Proposal": p["commit"], "Proposed-In": p["run"]})
    return commit.record(repo, f"review: propose retiring {t.get('Id')} in {src.label} (proposal {p['commit'][:12]})",
                         keep, f"{FORWARDED}{there}")


def forwarded(repo: str, sha: str) -> str:
    """Where the accept `sha` proposed a retirement (its body's Forwarded line), or ""."""
    for line in trees.message(repo, sha).splitlines():
        if line.startswith(FORWARDED):
            return line[len(FORWARDED):]
    return ""
