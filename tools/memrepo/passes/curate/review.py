"""Review branches: what the curator was not sure of, as commits a person accepts or rejects.

A proposal is one commit on `memrepo/review/<run>`, built with plumbing (`vcs.branches`: a
temporary index, `commit-tree`, `update-ref`), so the user's working tree, index and current
branch are never touched. Proposals stay on their branch for good (it may be a pull request already); one is
*open* until a commit reachable from HEAD names it in a `Memrepo-Proposal` trailer: an accept
(the proposal cherry-picked onto the current branch through `git commit`, so hooks validate
and reindex) or a reject (an empty commit recording the decision, which the curator reads
back so it never proposes the same pair again).
"""

from __future__ import annotations

import re
from typing import Any

from memrepo.vcs import branches as side, commit, lock, refs, runs, staged, status, trailers as trailer_text, trees
from memrepo.format import validate
from memrepo.errors import GitError, MemrepoError

PREFIX = "memrepo/review/"


class ReviewError(MemrepoError):
    """A review command cannot do what was asked."""


def branch_name(run_id: str) -> str:
    return PREFIX + run_id


def _rev(repo: str, ref: str) -> str | None:
    return refs.resolve(repo, ref + "^{commit}")


def propose(repo: str, run_id: str, files: dict[str, str], subject: str, trailers: dict[str, Any], body: str = "") -> str:
    """Commit `files` ({repo-relative path: new text}) on `memrepo/review/<run_id>`; returns the sha.

    The branch starts at HEAD. Memory files are validated first: a proposal that would not pass
    the pre-commit hook is refused with ReviewError.
    """
    for rel, text in files.items():
        problems, _ = validate.check_text(text, rel) if rel.endswith(".md") else ([], None)
        if problems:
            raise ReviewError(f"proposal {subject!r} is not a valid memory: {problems[0]}")
    ref = "refs/heads/" + branch_name(run_id)
    old = _rev(repo, ref)
    parent = old or _rev(repo, "HEAD")
    if parent is None:
        raise ReviewError("the repository has no commits yet", hint="run `memrepo init`")
    msg = trailer_text.message(subject, {**trailers, "Run": run_id}, body)
    return side.commit_files_on(repo, ref, parent, old, files, msg)


def _decided(repo: str) -> dict[str, dict[str, Any]]:
    """Proposal sha → the accept/reject commit (reachable from HEAD) that settled it; a decision
    whose run was undone settles nothing (the proposal is open again)."""
    found: dict[str, dict[str, Any]] = {}
    undone = runs.undone_runs(repo)
    for e in runs.log(repo, grep=f"{trailer_text.PREFIX}Proposal: "):
        sha = e["trailers"].get("Proposal")
        if sha and e["trailers"].get("Run") not in undone:
            found.setdefault(sha, e)
    return found


def branches(repo: str) -> list[str]:
    """Review branches: this clone's, then those `memrepo sync` fetched from a remote
    (`origin/memrepo/review/<run>`) for runs this clone has no branch of."""
    listed = refs.names(repo, "refs/heads/" + PREFIX, f"refs/remotes/*/{PREFIX}*", short=True)
    if listed is None:
        raise GitError("git for-each-ref failed", hint="check the repository with `git status` and `memrepo doctor`")
    found, runs_seen = [], set()
    for b in sorted(listed, key=is_remote_branch):
        run = run_of(b)
        if run and run not in runs_seen:
            runs_seen.add(run)
            found.append(b)
    return found


def is_remote_branch(branch: str) -> bool:
    """True for a remote-tracking review branch (`origin/memrepo/review/<run>`)."""
    return not branch.startswith(PREFIX)


def run_of(branch: str) -> str:
    return branch.split(PREFIX, 1)[1] if PREFIX in branch else ""


def files_of(repo: str, sha: str) -> list[tuple[str, str]]:
    """The memories commit `sha` adds or changes: [(id, text at `sha`)]."""
    rels = [r for r in trees.changed(repo, sha, diff_filter="AM") or () if r.startswith("memory/") and r.endswith(".md")]
    return [(r[len("memory/"):-3], _memory_at(repo, sha, r[len("memory/"):-3])) for r in rels]


def _applied(repo: str, sha: str) -> bool:
    """True when HEAD already holds every file proposal `sha` changes exactly as it changes it:
    its pull request was squashed or rebased onto the branch (new commits, the same change)."""
    rels = trees.changed(repo, sha)
    return bool(rels) and trees.same_files(repo, sha, "HEAD", rels or [])


ID_LEN = 7  # a proposal's id: the start of its commit's sha, the same on every machine and after every decision
MIN_PREFIX = 4


def proposals(repo: str, include_closed: bool = False) -> list[dict[str, Any]]:
    """Open proposals across every review branch (oldest branch, then oldest commit), each with its
    stable `id`: numbers would shift after every decision, so `accept 3` could take another one."""
    decided = _decided(repo)
    undone = runs.undone_runs(repo)  # `memrepo undo <run>` closes that run's proposals
    found = []
    for branch in branches(repo):
        run = run_of(branch)
        for e in reversed(runs.log(repo, rev=f"HEAD..{branch}")):
            state = decided.get(e["commit"])
            closed = state["trailers"].get("Action", "?") if state else ("undone" if run in undone else "")
            if not closed and _applied(repo, e["commit"]):
                closed = "merged"  # squashed or rebased in: nothing left to decide
            if closed and not include_closed:
                continue
            e.update(id=e["commit"][:ID_LEN], branch=branch, run=run, state=closed or "open",
                     decided_by=state["commit"] if state else "")
            found.append(e)
    return found


def pairs_seen(repo: str) -> set[frozenset[str]]:
    """Pairs of memory ids with an open or rejected proposal, or a supersession or proposal a
    person undid: the curator does not ask about them again."""
    seen = {frozenset((p["trailers"].get("Id", ""), p["trailers"].get("Winner", ""))) for p in proposals(repo)}
    seen.update(frozenset((i, w)) for (_, i, w) in runs.undone_decisions(repo) if w)
    undone = runs.undone_runs(repo)
    for e in runs.log(repo, grep=f"{trailer_text.PREFIX}Action: reject"):
        if e["trailers"].get("Run") in undone:
            continue
        seen.add(frozenset((e["trailers"].get("Id", ""), e["trailers"].get("Winner", ""))))
    return seen


def _get(repo: str, ref: str) -> dict[str, Any]:
    """The open proposal whose id (or commit sha) starts with `ref`; ReviewError naming what is wrong."""
    ref = str(ref).strip().lower()
    if len(ref) < MIN_PREFIX or any(c not in "0123456789abcdef" for c in ref):
        raise ReviewError(f"{ref!r} is not a proposal id", hint=f"use the {ID_LEN}-character id `memrepo review` "
                          "prints (proposals have ids, not numbers: numbers would shift after each decision)")
    every = proposals(repo, include_closed=True)
    matches = [p for p in every if p["commit"].startswith(ref)]
    if len(matches) > 1:
        raise ReviewError(f"{ref!r} names {len(matches)} proposals", hint="give more characters of the id")
    if not matches:
        open_ = sum(p["state"] == "open" for p in every)
        raise ReviewError(f"no proposal {ref}" + (f" (there are {open_} open)" if open_ else " (none is open)"),
                          hint="`memrepo review` lists the open proposals and their ids")
    p = matches[0]
    if p["state"] != "open":
        raise ReviewError(f"proposal {p['id']} is closed already ({p['state']})",
                          hint="`memrepo log --runs` shows the decision; `memrepo undo RUN` reverts it")
    return p


def _memory_at(repo: str, rev: str, note_id: str) -> str:
    return (trees.file_at(repo, rev, f"memory/{note_id}.md") or b"").decode("utf-8", "replace")


def show(repo: str, ref: str) -> dict[str, Any]:
    """Open proposal `ref` with its full message and diff, and the two memories as they stand now
    (`loser`, `winner`: the texts at HEAD) for a side-by-side view."""
    p = _get(repo, ref)
    p["patch"] = trees.patch(repo, p["commit"]) + "\n"
    p["changes"] = [{"status": letter, "path": rel} for letter, rel in changes(repo, p["commit"])]
    p["beyond"] = beyond(repo, {**p, "body": trees.message(repo, p["commit"])})
    t = p["trailers"]
    from memrepo.passes.curate import acrossview

    if acrossview.is_across(p):  # your memory and a team's or a project's (issue 41, part 4)
        acrossview.sides(repo, p)
        return p
    if t.get("Resembles"):  # a capture like a memory a person forgot: that memory beside the one it would add
        p["summary"] = f"adds {t.get('Id', '?')}, like {t['Resembles']}, which a person retired"
        p["loser"] = {"id": t["Resembles"], "text": _memory_at(repo, "HEAD", t["Resembles"]), "role": "a person retired it"}
        p["winner"] = {"id": t.get("Id", ""), "text": _memory_at(repo, p["commit"], t.get("Id", "")), "role": "would be added"}
        return p
    if t.get("Action") == "retire":  # disuse (issue 43): the memory as it stands, and as it would be retired
        p["summary"] = f"retire {t.get('Id', '?')}: {t.get('Reason', '?')}"
        p["loser"] = {"id": t.get("Id", ""), "text": _memory_at(repo, "HEAD", t.get("Id", "")), "role": "as it stands"}
        p["winner"] = {"id": t.get("Id", ""), "text": _memory_at(repo, p["commit"], t.get("Id", "")), "role": "would be retired"}
        return p
    p["summary"] = (f"verdict: {t.get('Relation', '?')}; {t.get('Action', '?')} {t.get('Id', '?')} by {t.get('Winner', '?')}, "
                    f"confidence {t.get('Confidence', '?')}" + (f", scope {t['Scope']}" if t.get("Scope") else ""))
    p["loser"] = {"id": t.get("Id", ""), "text": _memory_at(repo, "HEAD", t.get("Id", "")), "role": "would be superseded"}
    p["winner"] = {"id": t.get("Winner", ""), "text": _memory_at(repo, "HEAD", t.get("Winner", ""))
                   or _memory_at(repo, p["commit"], t.get("Winner", "")), "role": "would win"}
    return p


_VERB = {"A": "adds", "M": "changes", "D": "deletes", "T": "changes the type of"}
_BODY_DECISION = re.compile(r"^- [a-z][a-z0-9-]* ([a-z0-9][a-z0-9-]*):", re.MULTILINE)


def changes(repo: str, sha: str) -> list[tuple[str, str]]:
    """[(status letter, path)] of everything commit `sha` changes, renames as a delete and an add."""
    return trees.changes(repo, sha)


def beyond(repo: str, p: dict[str, Any]) -> list[str]:
    """What proposal `p`'s commit changes beyond the memories it names, in words; [] when nothing.

    A proposal names memories in its trailers (`Id`, `Winner`, each `Memrepo-Decision`) and, for
    a capture, in its body's `- <action> <id>:` lines; a capture may also add as many memories
    as its `Count` says. A teammate's branch can hold any commit under such a message: whatever
    else it holds (another memory, a deletion, a setting, a hook) is not what `review show`
    presents, so `accept` refuses it (issue 37).
    """
    t = p["trailers"]
    named = {t.get("Id", ""), t.get("Winner", "")} | set(_BODY_DECISION.findall(p.get("body", "")))
    named |= {d["id"] for d in runs.decisions(repo, f"{p['commit']}^!").get(p["commit"], [])}
    named.discard("")
    # A teammate's trailer: "²" is a digit to str.isdigit and a ValueError to int (issue 38).
    adds = int(t["Count"]) if t.get("Action") == "capture" and re.fullmatch(r"[0-9]{1,6}", str(t.get("Count", ""))) else 0
    extra = []
    for letter, rel in changes(repo, p["commit"]):
        note_id = rel[len("memory/"):-3] if rel.startswith("memory/") and rel.endswith(".md") and rel.count("/") == 1 else ""
        if letter == "A" and note_id and adds > 0:
            adds -= 1
            continue
        if letter == "M" and note_id in named:
            continue
        extra.append(f"{_VERB.get(letter, 'changes')} {rel}")
    return extra


def _require_clean(repo: str, files: list[str]) -> None:
    if staged.anything(repo):
        raise ReviewError("the git index has staged changes", hint="commit or unstage them, then run the command again")
    dirty = sorted(status.dirty_paths(repo, *files) or ()) if files else []
    if dirty:
        raise ReviewError(f"uncommitted changes in {', '.join(dirty)}", hint="commit or discard them, then run the command again")


def accept(repo: str, ref: str) -> str:
    """Bring open proposal `ref` onto the current branch as a commit (hooks run); returns its sha."""
    p = _get(repo, ref)
    n = p["id"]
    if p["trailers"].get("Action") == "forget" and p["trailers"].get("Source"):
        from memrepo.passes.curate import acrossview

        return acrossview.accept_forget(repo, p)  # another source's memory gives way: proposed there
    extra = beyond(repo, {**p, "body": trees.message(repo, p["commit"])})
    if extra:
        raise ReviewError(f"proposal {n} holds more than it names: it also {'; '.join(extra)}; nothing was applied",
                          hint=f"see it whole with `memrepo review show {n} --diff`; reject it with "
                               f"`memrepo review reject {n} --reason \"changes more than it names\"`")
    files = trees.changed(repo, p["commit"]) or []
    trailers = {k: v for k, v in p["trailers"].items() if k not in ("Run", "Review")}
    trailers.update({"Run": runs.fresh_run_id(repo, "review"), "Proposal": p["commit"], "Proposed-In": p["run"]})
    subject = p["subject"].replace(" (proposed)", "", 1)
    with lock.held(repo):
        _require_clean(repo, files)
        with commit.transaction(repo, files):
            refused = side.pick(repo, p["commit"])  # what it wrote, the transaction commits or restores
            if refused is not None:
                raise ReviewError(f"proposal {n} no longer applies: {refused}",
                                  hint=f"the memory changed since; reject it with `memrepo review reject {n}` and run `memrepo curate` again")
            return commit.commit_staged(repo, files, subject, trailers, f"Accepted from {p['branch']}.")


def reject(repo: str, ref: str, reason: str = "") -> str:
    """Record that proposal `ref` is rejected: an empty commit on the current branch; returns its sha.

    A commit that changes no file (`commit.record`), so neither the index nor the working tree changes.
    """
    return _reject(repo, _get(repo, ref), reason)


def reject_many(repo: str, run: str | None = None, reason: str = "") -> list[tuple[str, str]]:
    """Reject every open proposal (of `run` only, when given) as one run that `memrepo undo` reverts
    whole; [(proposal id, sha of its reject)]."""
    chosen = [p for p in proposals(repo) if run is None or p["run"] == run]
    if run is not None and not chosen:
        raise ReviewError(f"run {run} has no open proposals", hint="`memrepo review` lists the open proposals and their runs")
    decision = runs.fresh_run_id(repo, "review") if chosen else ""
    return [(p["id"], _reject(repo, p, reason, decision)) for p in chosen]


def _reject(repo: str, p: dict[str, Any], reason: str, decision: str = "") -> str:
    t = p["trailers"]
    trailers = {"Action": "reject", "Run": decision or runs.fresh_run_id(repo, "review"), "Proposal": p["commit"],
                "Proposed-In": p["run"], "Id": t.get("Id", ""), "Winner": t.get("Winner", "")}
    for name in ("Source", "Winner-Source"):  # a pair across sources stays remembered (conflicts.seen)
        if t.get(name):
            trailers[name] = t[name]
    if reason:
        trailers["Reason"] = reason
    with lock.held(repo):
        if p["commit"] in _decided(repo):  # another terminal decided it meanwhile
            raise ReviewError(f"proposal {p['id']} was decided meanwhile", hint="`memrepo review` lists what is still open")
        if _rev(repo, "HEAD") is None:
            raise ReviewError("the repository has no commits yet", hint="run `memrepo init`")
        return commit.record(repo, f"review: reject proposal {p['commit'][:12]} ({p['subject']})", trailers)
