"""Conflicts across sources (issue 41, part 4) waiting for a person: which pairs have been
proposed (`seen`: open or decided, and a reject remembers the pair even once its branch is gone,
so the curator never proposes it again), and doctor's line while some await review. How such a
proposal reads and is accepted is `acrossview`.
"""

from __future__ import annotations

from typing import Any

from memrepo.errors import MemrepoError
from memrepo.passes.curate import acrossview, review
from memrepo.recall import sources as rs
from memrepo.vcs import runs, trailers as trailer_text


def seen(repo: str) -> set[frozenset[str]]:
    """Pairs across sources with a proposal on a review branch, open or decided, or with a reject."""
    found = {acrossview.pair_of(p["trailers"]) for p in review.proposals(repo, include_closed=True)}
    found.update(acrossview.pair_of(e["trailers"]) for e in runs.log(repo, grep=f"{trailer_text.PREFIX}Action: reject"))
    return {p for p in found if p is not None}


def open_count(repo: str) -> int:
    """Open proposals across sources: conflicts that wait for a person."""
    return sum(acrossview.is_across(p) for p in review.proposals(repo))


def checks(repo: str, check: Any) -> list[Any]:
    """doctor's line when conflicts across sources await review (a warning: nothing is wrong yet)."""
    try:
        n = open_count(repo)
    except MemrepoError:
        return []  # the repository's own checks say what is wrong with it
    if not n:
        return []
    return [check("conflicts across sources", True, f"{n} conflict{'s' * (n != 1)} between your memory and a team's or "
                  "a project's await review; nothing was changed in any source", "memrepo review", warn=True)]


def where(src: rs.Source) -> str:
    return ("a branch and pull request on the team's remote" if src.kind == rs.TEAM
            else "the file retired in the checkout, for you to commit with the code")
