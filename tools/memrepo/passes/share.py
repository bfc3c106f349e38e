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
import tempfile
from dataclasses import dataclass, field
from typing import Any

from memrepo.errors import MemrepoError
from memrepo.format import validate
from memrepo.passes.curate import forge as forges, prbody
from memrepo.recall import paths, projects, sources as rs
from memrepo.store import join, memories, sources
from memrepo.vcs import gitcmd, remote as rem, runs, trailers

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


def _git(root: str, *args: str, input: bytes | None = None, env: dict[str, str] | None = None) -> str:
    return rem.git_ok(root, *args, what=f"git {args[0]}", input=input, env=env,
                      hint=f"check the team's clone with `memrepo doctor` and `git -C {root} remote -v`")


def _commit(root: str, base_sha: str, note_id: str, text: str) -> str | None:
    """One commit on `base_sha` adding the memory; None when the team holds it already, as it is."""
    rel = f"{paths.MEMORY_DIR}/{note_id}.md"
    rc, held, _ = gitcmd.run_git("show", f"{base_sha}:{rel}", cwd=root, env=gitcmd.no_git_env())
    if rc == 0:
        if held.decode("utf-8", "replace") == text:
            return None
        raise ShareError(f"the team already holds a different memory {note_id}",
                         hint=f"compare with `git -C {root} show {base_sha}:{rel}`; rename yours (`memrepo edit`) to share it")
    blob = _git(root, "hash-object", "-w", "--stdin", input=text.encode("utf-8"))
    with tempfile.TemporaryDirectory(prefix="memrepo-share-") as tmp:
        env = {**gitcmd.no_git_env(), "GIT_INDEX_FILE": os.path.join(tmp, "index")}
        _git(root, "read-tree", base_sha, env=env)
        _git(root, "update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}", env=env)
        tree = _git(root, "write-tree", env=env)
    message = trailers.message(f"share: {note_id}", {"Action": "share", "Run": runs.new_run_id(f"share-{note_id}")},
                               "Proposed from a member's personal memory by `memrepo share`.")
    return _git(root, "commit-tree", tree, "-p", base_sha, "-F", "-", input=message.encode("utf-8"))


def _to_team(name: str, root: str, note_id: str, text: str, forge_name: str | None, gh_path: str | None) -> Shared:
    remote = join.default_remote(root)
    base = join.current_branch(root)
    if remote is None or base is None:
        raise ShareError(f"team {name}'s clone has no remote or no branch", hint="`memrepo doctor` says which")
    _git(root, "fetch", "-q", "--no-tags", remote, f"refs/heads/{base}:refs/remotes/{remote}/{base}")
    base_sha = _git(root, "rev-parse", "--verify", f"refs/remotes/{remote}/{base}")
    out = Shared(note_id, f"{rs.TEAM} {name}")
    sha = _commit(root, base_sha, note_id, text)
    if sha is None:
        out.manual.append(f"team {name} holds {note_id} already")
        return out
    head = BRANCH_PREFIX + note_id
    _git(root, "push", "-q", "--force-with-lease", remote, f"{sha}:refs/heads/{head}")
    out.path = head
    url = _git(root, "remote", "get-url", remote)
    found, why = forges.resolve(url, None, forge_name)
    title = f"memrepo: share {note_id}"
    if found is not None:
        try:
            gh = forges.Gh(found, root, gh_path)
            open_pr = next((p for p in gh.pulls_of(head) if p.get("state") == "open"), None)
            pr = open_pr or gh.create(head, base, title, _body(note_id, text))
            out.url = str(pr.get("html_url", ""))
            return out
        except forges.ForgeUnavailable as exc:
            why = f"{exc}: {exc.hint}" if exc.hint else str(exc)
        out.manual.append(f"open the pull request by hand: {found.compare_url(base, head)}")
    else:
        out.manual.append(f"no forge ({why}); a member merges it: git fetch {remote} {head} && git merge FETCH_HEAD && memrepo sync")
    return out


def _body(note_id: str, text: str) -> str:
    """The pull request's body: the memory's fields, flattened and escaped (`prbody.inline`)."""
    from memrepo.format import notes

    note = notes.parse(text, f"{paths.MEMORY_DIR}/{note_id}.md")
    rows = [f"| **{key}** | {prbody.inline(note.meta.get(key, ''))} |" for key in ("id", "title", "description", "class")]
    return "\n".join([f"<!-- memrepo share {note_id} -->",
                      "A member proposes this memory to the team. **Merge** to accept it (every member's next "
                      "`memrepo sync` brings it); **close** to decline.", "", "| | |", "|---|---|", *rows, "",
                      "<sub>opened by `memrepo share`</sub>"])
