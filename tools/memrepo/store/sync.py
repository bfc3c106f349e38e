"""`memrepo sync`: fetch, validate what arrived, merge, update the index, push.

The choice is *merge*, not rebase: local commits keep their shas (a rescue ref, a run id in a
trailer, a review branch stay valid) and nothing already shared is ever rewritten.

1. Under the repository lock, refuse during a merge/rebase in progress or with uncommitted
   memory files; fetch the remote branch without force (a force-pushed server branch stops
   sync instead of taking over: letta-code #2203 lost local memory that way).
2. Two machines that added *different* memories under one id: the local one is renamed to
   `<id>-<hash>` in its own commit first (`memories.suffixed`), so neither is lost.
3. The merge is computed in memory (`git merge-tree`, memrepo's merge driver for memory files).
   A conflict, a result pre-merge-commit would refuse (a supersession cycle, a dangling
   `superseded_by`, a malformed file), or a result that deletes memories (but those an arrived
   `memrepo undo` of their add took back) stops sync with the
   repository exactly as it was, the local side saved under `refs/memrepo/rescue/…`, and the
   commands to run.
4. Only then does HEAD move (a fast-forward, or a merge commit of the validated tree), the
   index is updated, and HEAD is pushed as a fast-forward; when the remote moved meanwhile,
   the whole round runs again, at most ROUNDS times. Never a force-push.

Running it again with nothing new changes nothing and prints nothing.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from typing import Any

from memrepo import proc
from memrepo.errors import MemrepoError
from memrepo.format import notes
from memrepo.base import paths
from memrepo.store import index, memories
from memrepo.vcs import commit, gitcmd, journal, lock, remote as rem, status, trailers

ROUNDS = 3
LOCK_WAIT = 120.0


class SyncStopped(MemrepoError):
    """Sync stopped before changing anything; the message says why and what to run. `rescue`: the
    ref that saved this side, when what the remote holds is what stopped it."""

    rescue: str | None = None


@dataclass
class SyncReport:
    remote: str = ""
    pulled: int = 0  # commits that arrived
    pushed: int = 0  # commits the remote did not have
    merged: bool = False  # a merge commit was made
    renamed: list[tuple[str, str]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.pulled or self.pushed or self.renamed)

    def as_dict(self) -> dict[str, Any]:
        return {"remote": self.remote, "pulled": self.pulled, "pushed": self.pushed, "merged": self.merged,
                "renamed": [list(r) for r in self.renamed]}

    def summary(self) -> str:
        parts = []
        if self.renamed:
            parts.append("renamed " + ", ".join(f"{a} → {b}" for a, b in self.renamed))
        if self.pulled:
            parts.append(f"pulled {self.pulled} commit{'s' * (self.pulled != 1)}" + (" (merged)" if self.merged else ""))
        if self.pushed:
            parts.append(f"pushed {self.pushed} commit{'s' * (self.pushed != 1)}")
        return f"sync with {self.remote}: " + "; ".join(parts)


def auto_enabled(repo: str) -> bool:
    """`{"sync": {"auto": true}}` in this machine's `index/local.json` (never the shared settings:
    a pulled `memrepo.json` must not start pushing this machine's memories anywhere)."""
    from memrepo.store import config

    setting = config.local(repo).get("sync")
    return isinstance(setting, dict) and setting.get("auto") is True


def sync(repo: str, remote: str | None = None, push: bool = True, wait: float = LOCK_WAIT) -> SyncReport:
    """Bring `repo` and its remote to the same memories; see the module docstring."""
    memories.require_repo(repo)
    with lock.held(repo, wait):
        journal.recover(repo)
        commit.refuse_in_progress(repo)
        dirty = sorted(status.dirty_paths(repo, paths.MEMORY_DIR) or ())
        if dirty:
            raise SyncStopped(f"{len(dirty)} memory file(s) have uncommitted changes: {', '.join(sorted(dirty)[:5])}",
                              hint=f"commit them (`git -C {repo} commit -- {paths.MEMORY_DIR}`) or put them back, then sync")
        t = rem.target(repo, remote)
        if gitcmd.head(repo) is None:
            raise SyncStopped(f"{repo} has no commit yet, so there is nothing to sync",
                              hint=f"run `memrepo init {repo}`: it checks out the memory {t.remote} holds, or starts one")
        report = SyncReport(remote=t.label)
        for n in range(ROUNDS):
            theirs = rem.fetch(repo, t)
            if n == 0:
                rem.fetch_review(repo, t)
            if theirs is None and n == 0:
                _refuse_second_branch(repo, t)
            if theirs is not None:
                _pull(repo, t, theirs, report)
            ours = gitcmd.head(repo)
            if not push or ours is None or (theirs is not None and rem.is_ancestor(repo, ours, theirs)):
                break
            ahead = rem.count(repo, f"{theirs}..{ours}" if theirs else ours)
            if rem.push(repo, t):
                report.pushed += ahead
                break
        else:
            raise SyncStopped(f"{t.label} kept moving while sync pushed ({ROUNDS} rounds)",
                              hint="someone is pushing right now: run `memrepo sync` again in a minute")
    index.update(repo)
    return report


def _refuse_second_branch(repo: str, t: rem.Target) -> None:
    """The remote has no branch of this name: refuse when it holds memory on another one, rather
    than push a second, unrelated memory beside the team's (a clone of a remote whose HEAD named
    a branch nobody pushed, then a fresh `memrepo init`)."""
    from memrepo.store import join

    others = [b for b in rem.fetch_heads(repo, t) if b != t.remote_branch]
    held = {b: n for b, n in join.memory_branches(repo, t.remote).items() if b in others and n > 0}
    if not held:
        return
    theirs = join.choose(repo, t.remote) or sorted(held)[0]
    mine = join.memory_count(repo, "HEAD")
    where = f"{t.remote} holds memory on {', '.join(sorted(held))}; this repository is on {t.branch}, which {t.remote} " \
            f"does not have, so pushing it would start a second memory there. Nothing was pushed."
    if mine <= 0:
        raise SyncStopped(where, hint=f"run `memrepo init {repo}`: this clone holds no memory yet, so it checks out "
                                      f"{t.remote}/{theirs} instead")
    raise SyncStopped(where, hint=f"merge the two: `git -C {repo} merge --allow-unrelated-histories {t.remote}/{theirs}`, "
                                  f"then `git -C {repo} branch --set-upstream-to={t.remote}/{theirs}` if {theirs} is the "
                                  "branch to keep, then `memrepo sync`; or push this one on purpose: "
                                  f"`git -C {repo} push {t.remote} {t.branch}`")


def _pull(repo: str, t: rem.Target, theirs: str, report: SyncReport) -> None:
    ours = gitcmd.head(repo)
    if ours is None:
        raise SyncStopped(f"{repo} has no commit yet", hint=f"run `memrepo init {repo}` first")
    if rem.is_ancestor(repo, theirs, ours):
        return  # nothing new there
    if not rem.is_ancestor(repo, ours, theirs):
        ours = _rename_collisions(repo, ours, theirs, report)
    fast_forward = rem.is_ancestor(repo, ours, theirs)
    if fast_forward:
        tree = rem.tree_of(repo, theirs)
    else:
        merged = rem.merge_tree(repo, ours, theirs)
        if merged.tree is None:
            raise _stopped(repo, t, ours, f"{', '.join(merged.conflicts)} changed on both sides in ways that do not merge",
                           [f"git -C {repo} merge {t.tracking}", "fix the conflict markers in the files named above",
                            f"git -C {repo} commit", "memrepo sync"], merged.messages)
        tree = merged.tree
    _validate(repo, t, ours, theirs, tree)
    arrived = rem.count(repo, f"{ours}..{theirs}")
    if fast_forward:
        target = theirs
    else:
        message = trailers.message(f"sync: merge {t.label}", {"Action": "sync", "Remote": t.label})
        target = rem.commit_tree(repo, tree, [ours, theirs], message)
        report.merged = True
    # HEAD moves only now, to a commit whose tree was validated; post-merge updates the index.
    rem.fast_forward(repo, target)
    report.pulled += arrived


def _stopped(repo: str, t: rem.Target, ours: str, why: str, steps: list[str], detail: str = "") -> SyncStopped:
    ref = rem.rescue(repo, ours)
    lines = [f"sync with {t.label} stopped: {why}.",
             f"Nothing here changed; your side is also saved as {ref}."]
    if detail:
        lines.append(detail)
    stopped = SyncStopped("\n".join(lines), hint="to merge by hand: " + "; then ".join(f"`{s}`" for s in steps))
    stopped.rescue = ref
    return stopped


def _validate(repo: str, t: rem.Target, ours: str, theirs: str, tree: str) -> None:
    """Refuse a result that deletes memories (but what `memrepo undo` took back) or that
    pre-merge-commit would refuse."""
    deleted = [p for p in rem.diff_names(repo, ours, tree, paths.MEMORY_DIR, "D", "comparing the merge with HEAD")
               if p.endswith(".md")]
    if deleted:
        taken_back = _undone(repo, ours, theirs)
        deleted = [p for p in deleted if p not in taken_back]
    if deleted:
        raise _stopped(repo, t, ours, f"the remote deletes {len(deleted)} memor{'ies' if len(deleted) != 1 else 'y'} "
                       f"({', '.join(deleted[:5])}{', …' if len(deleted) > 5 else ''}); memrepo never deletes a memory "
                       "(supersede it instead)",
                       [f"git -C {repo} log --diff-filter=D {t.tracking} -- {paths.MEMORY_DIR}",
                        f"restore them on the remote, or merge by hand: git -C {repo} merge {t.tracking}"])
    env, where = rem.temp_index_env(repo, tree)
    try:
        res = proc.run(proc.python_main("memrepo.store.githooks", "pre-merge-commit"), cwd=repo, env=env,
                       timeout=gitcmd.TIMEOUT)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(where)
    if res.returncode != 0:
        problems = res.stderr.decode("utf-8", "replace").strip()
        raise _stopped(repo, t, ours, "the merged memories would not pass validation", [
            f"git -C {repo} merge {t.tracking}", "fix the files named above", f"git -C {repo} commit", "memrepo sync"],
            problems)


def _undone(repo: str, ours: str, theirs: str) -> set[str]:
    """Memory files that an arrived `memrepo undo` commit deleted: the undo of an add takes its
    file back, and another machine's sync must follow it, not stop at it for good (h32's walk)."""
    gone: set[str] = set()
    for entry in trailers.log(repo, f"{ours}..{theirs}", grep=f"{trailers.PREFIX}Action: undo"):
        if entry["trailers"].get("Action") == "undo":
            sha = entry["commit"]
            gone.update(rem.diff_names(repo, f"{sha}^", sha, paths.MEMORY_DIR, "D", "reading an undo"))
    return gone


def _added(repo: str, base: str, tip: str) -> dict[str, str]:
    """Memory files added between base and tip: path -> blob."""
    return {rel: blob for rel, blob in rem.added_blobs(repo, base, tip, paths.MEMORY_DIR).items() if rel.endswith(".md")}


def _rename_collisions(repo: str, ours: str, theirs: str, report: SyncReport) -> str:
    """Rename local memories whose id another machine gave a different memory; returns the new HEAD."""
    base = rem.merge_base(repo, ours, theirs)
    if base is None:
        return ours  # unrelated histories: merge_tree says so
    mine, other = _added(repo, base, ours), _added(repo, base, theirs)
    clashes = sorted(rel for rel in mine if rel in other and mine[rel] != other[rel])
    if not clashes:
        return ours
    files: dict[str, str | None] = {}
    renames: dict[str, str] = {}
    for rel in clashes:
        old_id = os.path.basename(rel)[:-3]
        note = notes.read(os.path.join(repo, rel))
        seed = notes.serialize(note)
        n, new_id = 0, memories.suffixed(old_id, seed)
        while memories.taken_anywhere(repo, new_id) or new_id in renames.values():
            n += 1
            new_id = memories.suffixed(old_id, seed, n)
        note.meta["id"] = new_id
        files[rel] = None
        files[f"{paths.MEMORY_DIR}/{new_id}.md"] = notes.serialize(note)
        renames[old_id] = new_id
    for rel in sorted(set(_changed(repo, base, ours)) - set(clashes)):  # local memories that point at a renamed one
        note = notes.read(os.path.join(repo, rel))
        if note.get("superseded_by") in renames:
            note.meta["superseded_by"] = renames[str(note.get("superseded_by"))]
            files[rel] = notes.serialize(note)
    pairs = sorted(renames.items())
    body = "\n".join(f"{a} -> {b}: the remote has a different memory with id {a}" for a, b in pairs)
    commit.commit_files(repo, files, f"sync: rename {', '.join(f'{a} → {b}' for a, b in pairs)}",
                        {"Action": "rename", "Remote": theirs[:12]}, body)
    report.renamed.extend(pairs)
    return gitcmd.head(repo) or ours


def _changed(repo: str, base: str, tip: str) -> list[str]:
    return [p for p in rem.diff_names(repo, base, tip, paths.MEMORY_DIR, "AM", "listing changed memories") if p.endswith(".md")]
