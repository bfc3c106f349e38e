"""The group commit's chain: many writers' changes committed in one lock hold, one commit each (issue 44).

`commit_chain` takes the steps of `commit.commit_files` + `commit_staged` (the journal and its
restore, the atomic writes, memrepo's own index, the in-process validation) once for a list of
changes, each checked as `commit_if_unchanged` checks it, and commits each on the one before it
with `commit-tree`: one journal, one staging of the real index, one compare-and-swap of HEAD and
one cache update for them all. `vcs.group` collects the changes; this module only commits them.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from memrepo.errors import GitError
from memrepo.vcs import commit, gitcmd, staging
from memrepo.vcs.change import Change, Hooks, Outcome
from memrepo.vcs.commit import HEAD_MOVED_TRIES, message, transaction
from memrepo.vcs.journal import FROM_STDIN, Snapshot, nul, read, restore

def commit_chain(repo: str, changes: list[Change], hooks: Hooks,
                 landing: Callable[[list[Outcome]], None] = lambda _: None) -> list[Outcome]:
    """Commit each change as its writer's `commit_if_unchanged` would, as a chain of commits on
    HEAD: one per change (its own message, trailers, run), with one journal, one staging of the
    real index, one compare-and-swap of HEAD and one cache update for them all.

    Call holding the lock, where `hookwire.only_ours` (the validation runs here) and with no two
    changes touching one path. A change that fails validation is put back and gets its error;
    the others land. `landing` is told the shas just before HEAD moves to them (a waiter's
    holder records them, so a holder killed right after is not taken for one that failed).
    """
    outcomes = [Outcome() for _ in changes]
    plans: list[tuple[int, dict[str, str | None]]] = []
    for i, change in enumerate(changes):
        outcomes[i].stale = sorted(rel for rel in change.files if commit._changed_since(repo, rel, change.expect.get(rel)))
        keep = {rel: data for rel, data in change.files.items() if rel not in outcomes[i].stale
                and (data is not None or os.path.lexists(os.path.join(repo, rel)) or commit._tracked(repo, rel))}
        if keep:
            plans.append((i, keep))
    rels = sorted(rel for _, keep in plans for rel in keep)
    if not rels:
        return outcomes
    after = {rel: None if data is None else commit._as_bytes(data) for _, keep in plans for rel, data in keep.items()}
    with transaction(repo, rels, after=after) as journaled:
        before = {rel: read(repo, rel) for rel in rels}
        for rel in rels:
            commit._put(repo, rel, after[rel], before[rel])
        commit._stage(repo, rels)
        for attempt in range(HEAD_MOVED_TRIES):
            # First the HEAD the journal names (asked a moment ago, under the lock); a person's
            # commit since then fails the compare-and-swap below, and the next try asks git again.
            base = journaled if attempt == 0 else gitcmd.head(repo)
            env = staging.open_for(repo, base)
            tip = _at_once(repo, changes, plans, outcomes, hooks, base, env, after) if len(plans) > 1 else None
            if tip is None:
                tip = _chain(repo, changes, plans, outcomes, hooks, base, env, before)
            if tip == base:
                return outcomes  # every change was refused
            landing(outcomes)
            rc, _, _ = gitcmd.run_git("update-ref", "-m", f"commit: {changes[plans[-1][0]].subject}", "HEAD", tip or "",
                                      base or "0" * len(tip or ""), cwd=repo)
            if rc == 0:
                staging.landed(repo, tip or "")
                hooks.post_commit(repo, sorted(rel for i, keep in plans if outcomes[i].sha for rel in keep), base, tip or "")
                return outcomes
    raise GitError("HEAD kept moving while memrepo committed (another git is committing in this repository)",
                   hint="run the command again once the other commits are done")


def _at_once(repo: str, changes: list[Change], plans: list[tuple[int, dict[str, str | None]]], outcomes: list[Outcome],
             hooks: Hooks, base: str | None, env: dict[str, str], after: dict[str, bytes | None]) -> str | None:
    """Every planned change staged and validated together, then committed one on another by one
    `git fast-import` (`commit.chain_commits`); the last sha. None, with memrepo's index back at
    `base`, when the validation refuses any of them: then `_chain` finds which, one at a time."""
    if any(outcomes[i].error for i, _ in plans):
        return None  # one was refused on an earlier try (HEAD moved since): its files are back
    rels = sorted(rel for _, keep in plans for rel in keep)
    commit._stage(repo, rels, env)
    try:
        commit._validate(repo, hooks, {**env, commit.EXPECT_HEAD: base or ""})
    except GitError:
        _reset(repo, rels, base, env)
        return None
    msgs = [message(changes[i].subject, changes[i].trailers, changes[i].body).encode("utf-8") for i, _ in plans]
    shas = commit.chain_commits(repo, base, [(msg, {rel: after[rel] for rel in keep}) for msg, (_, keep) in zip(msgs, plans)])
    for (i, _), sha in zip(plans, shas):
        outcomes[i].sha = sha
    return shas[-1]


def _chain(repo: str, changes: list[Change], plans: list[tuple[int, dict[str, str | None]]], outcomes: list[Outcome],
           hooks: Hooks, base: str | None, env: dict[str, str], before: Snapshot) -> str | None:
    """Stage, validate and commit each planned change on the one before it; the last commit's sha
    (`base` when none was made). A change its validation refuses is put back, files and index."""
    tip = base
    for i, keep in plans:
        outcomes[i].sha = ""
        if outcomes[i].error is not None:
            continue  # refused on an earlier try: already put back
        paths = sorted(keep)
        commit._stage(repo, paths, env)
        try:
            commit._validate(repo, hooks, {**env, commit.EXPECT_HEAD: base or ""})
        except GitError as exc:
            outcomes[i].error = (str(exc), exc.hint)
            restore(repo, {rel: before[rel] for rel in paths}, base)
            _reset(repo, paths, tip, env)
            continue
        msg = message(changes[i].subject, changes[i].trailers, changes[i].body).encode("utf-8")
        outcomes[i].sha = tip = commit.tree_commit(repo, env, tip, msg)
    return tip


def _reset(repo: str, rels: list[str], rev: str | None, env: dict[str, str]) -> None:
    """Index entries of `rels` (in the index `env` names) back to commit `rev`'s (None: no commit yet)."""
    args = ("reset", "-q", rev) if rev else ("rm", "--cached", "-q", "--ignore-unmatch")
    rc, out, err = gitcmd.run_git_writing(*args, *FROM_STDIN, cwd=repo, input=nul(rels), env=env)
    if rc != 0:
        raise GitError(f"git {args[0]} failed: {(err or out).decode('utf-8', 'replace').strip()}",
                       hint="check the repository with `git status` and `memrepo doctor`")
