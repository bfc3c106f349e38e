"""`memrepo share ID --to team NAME|project`: propose one of your memories to a team or a project
(issue 41, part 3). Sharing is a proposal, never a write into someone else's memory:

- **to a team**: a branch `memrepo/share/<id>` on the team's remote holding one commit, the
  memory added on top of the team's branch, and — when the remote is on a forge `gh` reaches
  (the review flow's `forge.Gh`) — a pull request. Merging it on the forge is the accept; the
  next `memrepo sync` brings it to every member. Without a forge the branch is still pushed and
  the way to merge it is printed.
- **to the project**: the file written into the code repository's `.memrepo/memory/`, for the
  user to commit and review with their code; nothing is committed.

`git log` of each source stays its audit trail and `git revert` its undo.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from memrepo.errors import GitError, MemrepoError
from memrepo.format import notes, validate
from memrepo.passes.curate import forge as forges, prbody
from memrepo.base import paths, projects
from memrepo.recall import sources as rs
from memrepo.store import join, memories, sources
from memrepo.vcs import branches, refs, remote as rem, runs, trailers, trees

BRANCH_PREFIX = "memrepo/share/"


class ShareError(MemrepoError):
    """A memory could not be proposed; the message says why and the hint what to do."""


@dataclass
class Shared:
    id: str
    to: str  # "team acme", "project shop"
    path: str = ""  # the file written (project) or the branch pushed (team)
    url: str = ""  # the pull request's address, when one was opened
    manual: list[str] = field(default_factory=list)  # what to run when no forge did it

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "to": self.to, "path": self.path, "url": self.url, "manual": self.manual}


def _text(repo: str, note_id: str) -> str:
    text = memories.read_text(repo, note_id)
    problems, _ = validate.check_text(text, f"{paths.MEMORY_DIR}/{note_id}.md")
    if problems:
        raise ShareError(f"{note_id} does not pass validation: {problems[0]}", hint="fix it first (`memrepo doctor`)")
    return text


def share(repo: str, given: str, to: str, cwd: str | None = None, forge_name: str | None = None,
          gh_path: str | None = None) -> Shared:
    """Propose the personal memory `given` to `to`: `project`, or a team's name."""
    note_id = memories.resolve(memories.require_repo(repo), given)
    text = _text(repo, note_id)
    if to == rs.PROJECT:
        return _to_project(note_id, text, cwd)
    known = sources.teams(repo)
    if to not in known:
        raise ShareError(f"no team named {to!r}", hint="`memrepo team list` names them; `--to project` shares with the code")
    return _to_team(to, os.path.abspath(os.path.expanduser(str(known[to]["path"]))), note_id, text, forge_name, gh_path)


def _to_project(note_id: str, text: str, cwd: str | None) -> Shared:
    top = projects.top_level(cwd) if cwd else None
    if top is None:
        raise ShareError("not inside a code repository", hint="run it from the repository's folder, or pass --cwd")
    folder = os.path.join(top, rs.PROJECT_DIR, paths.MEMORY_DIR)
    if os.path.islink(os.path.join(top, rs.PROJECT_DIR)) or os.path.islink(folder):
        raise ShareError(f"{folder} is a symbolic link, so memrepo does not write there", hint="make it a real folder")
    target = os.path.join(folder, note_id + ".md")
    if os.path.exists(target):
        with open(target, encoding="utf-8") as fh:
            if fh.read() == text:
                return Shared(note_id, f"{rs.PROJECT} {os.path.basename(top)}", target,
                              manual=[f"already there: {os.path.relpath(target, top)}"])
        raise ShareError(f"the project already holds a different memory {note_id}", hint=f"compare with {target}")
    os.makedirs(folder, exist_ok=True)
    with open(target, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    rel = os.path.relpath(target, top)
    return Shared(note_id, f"{rs.PROJECT} {os.path.basename(top)}", target,
                  manual=[f"git -C {top} add {rel} && git -C {top} commit -m \"memory: {note_id}\"  (review it with your code)"])


def _hint(root: str) -> str:
    return f"check the team's clone with `memrepo doctor` and `git -C {root} remote -v`"


def _commit(root: str, base_sha: str, note_id: str, text: str, subject: str, new: bool = True) -> str | None:
    """One commit on `base_sha` writing the memory's `text`; None when the team holds it already, as
    it is. `new`: it must not be there yet (a share); else it must (a forget)."""
    rel = f"{paths.MEMORY_DIR}/{note_id}.md"
    held = trees.file_at(root, base_sha, rel)
    if held is not None and held.decode("utf-8", "replace") == text:
        return None
    if new and held is not None:
        raise ShareError(f"the team already holds a different memory {note_id}",
                         hint=f"compare with `git -C {root} show {base_sha}:{rel}`; rename yours (`memrepo edit`) to share it")
    action = "share" if new else "retire"
    message = trailers.message(subject, {"Action": action, "Run": runs.new_run_id(f"{action}-{note_id}")},
                               f"Proposed by a member with `memrepo {'share' if new else 'forget'}`.")
    return branches.commit_file(root, base_sha, rel, text, message, hint=_hint(root))


def _base(name: str, root: str) -> tuple[str, str, str]:
    """(remote, branch, the remote branch's commit, fetched now) of a team's clone."""
    remote = join.default_remote(root)
    base = join.current_branch(root)
    if remote is None or base is None:
        raise ShareError(f"team {name}'s clone has no remote or no branch", hint="`memrepo doctor` says which")
    try:
        return remote, base, rem.fetch_tracking(root, remote, base, hint=_hint(root))
    except GitError:
        if base not in rem.remote_heads(root, remote, f"refs/heads/{base}"):  # reachable, and without the branch
            raise ShareError(f"team {name}'s remote has no branch {base} yet: no memory there to propose against",
                             hint="`memrepo sync` pushes the team clone's memory there first (a team joined with "
                                  "--writable), or a member who may push does") from None
        raise


def _to_team(name: str, root: str, note_id: str, text: str, forge_name: str | None, gh_path: str | None) -> Shared:
    remote, base, base_sha = _base(name, root)
    out = Shared(note_id, f"{rs.TEAM} {name}")
    sha = _commit(root, base_sha, note_id, text, f"share: {note_id}")
    if sha is None:
        out.manual.append(f"team {name} holds {note_id} already")
        return out
    return _proposed(out, root, remote, base, sha, BRANCH_PREFIX + note_id, f"memrepo: share {note_id}",
                     _body(note_id, text), forge_name, gh_path)


def _proposed(out: Shared, root: str, remote: str, base: str, sha: str, head: str, title: str, body: str,
              forge_name: str | None, gh_path: str | None) -> Shared:
    """Push `sha` as branch `head` and open (or find) its pull request on the team's forge."""
    rem.push_leased(root, remote, sha, head, hint=f"a proposal is a branch on the team's remote, so only a member who may "
                    f"push there can make one: ask the team for push access (a read-only team on this machine still "
                    f"needs it), or check the remote with `git -C {root} remote -v`")
    out.path = head
    url = refs.remote_url(root, remote) or ""
    found, why = forges.resolve(url, None, forge_name)
    if found is not None:
        try:
            gh = forges.Gh(found, root, gh_path)
            open_pr = next((p for p in gh.pulls_of(head) if p.get("state") == "open"), None)
            pr = open_pr or gh.create(head, base, title, body)
            out.url = str(pr.get("html_url", ""))
            return out
        except forges.ForgeUnavailable as exc:
            why = f"{exc}: {exc.hint}" if exc.hint else str(exc)
        out.manual.append(f"open the pull request by hand ({why}): {found.compare_url(base, head)}")
    else:
        out.manual.append(f"no forge ({why}); a member merges it: git fetch {remote} {head} && git merge FETCH_HEAD && memrepo sync")
    return out


FORGET_PREFIX = "memrepo/forget/"


def forget(repo: str, note_id: str, cwd: str | None, reason: str, forge_name: str | None = None,
           gh_path: str | None = None, only: str | None = None) -> Shared:
    """`memrepo forget` of a team's or the project's memory (issue 41, part 6): a proposal there,
    never a write. For a team, a branch and a pull request retiring it; for the project, the
    file retired in place for the user to commit with their code. `only` names the one source
    to look in (`team acme`)."""
    from memrepo.store import lifecycle

    if not notes.is_id(note_id):  # an id names a file in memory/, never a path out of it
        raise ShareError(f"not a memory id: {note_id[:80]!r}", hint="find ids with `memrepo list`")
    for src in sources.others(repo, cwd, only):
        if not os.path.exists(paths.note_path(src.root, note_id)):
            continue
        if src.kind == rs.PROJECT:
            path = paths.note_path(src.root, note_id)
            with open(path, encoding="utf-8") as fh:
                after = lifecycle.retired_text(fh.read(), note_id, reason)
            with open(path, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(after)
            top = os.path.dirname(src.root)
            rel = os.path.relpath(path, top)
            return Shared(note_id, src.label, path, manual=[
                f"git -C {top} commit {rel} -m \"memory: retire {note_id}\"  (review it with your code)"])
        remote, base, base_sha = _base(src.name, src.root)
        rel = f"{paths.MEMORY_DIR}/{note_id}.md"
        held = trees.file_at(src.root, base_sha, rel)
        if held is None:
            raise ShareError(f"team {src.name} no longer holds {note_id}", hint="`memrepo sync`, then list it again")
        before = held.decode("utf-8", "replace").strip() + "\n"
        sha = _commit(src.root, base_sha, note_id, lifecycle.retired_text(before, note_id, reason),
                      f"retire: {note_id}", new=False)
        out = Shared(note_id, src.label)
        if sha is None:
            return out
        body = "\n".join([f"<!-- memrepo forget {note_id} -->", f"A member asks to retire `{prbody.inline(note_id)}`: "
                          f"{prbody.inline(reason)}. **Merge** to retire it for everyone; **close** to keep it.", "",
                          "<sub>opened by `memrepo forget`</sub>"])
        return _proposed(out, src.root, remote, base, sha, FORGET_PREFIX + note_id, f"memrepo: retire {note_id}", body,
                         forge_name, gh_path)
    if os.path.exists(paths.note_path(repo, note_id)):  # a forged post of serve's: its page has no such button
        raise ShareError(f"{note_id} is one of your own memories, not a team's or the project's: there is nothing to "
                         "propose", hint=f"retire it with `memrepo retire {note_id} --reason \"why\"`")
    raise ShareError(f"no memory with id {note_id!r} in {only or 'any source'}", hint="find ids with `memrepo list`")


def _body(note_id: str, text: str) -> str:
    """The pull request's body: the memory's fields, flattened and escaped (`prbody.inline`)."""
    from memrepo.format import notes

    note = notes.parse(text, f"{paths.MEMORY_DIR}/{note_id}.md")
    rows = [f"| **{key}** | {prbody.inline(note.meta.get(key, ''))} |" for key in ("id", "title", "description", "class")]
    return "\n".join([f"<!-- memrepo share {note_id} -->",
                      "A member proposes this memory to the team. **Merge** to accept it (every member's next "
                      "`memrepo sync` brings it); **close** to decline.", "", "| | |", "|---|---|", *rows, "",
                      "<sub>opened by `memrepo share`</sub>"])
