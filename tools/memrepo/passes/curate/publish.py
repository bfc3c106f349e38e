"""`memrepo review push`: review branches to the remote, one pull request per proposal on the forge.

**One pull request per proposal**, not per run: a merge or a close on the forge is one
decision, and so is a proposal. A pull request holding a whole run could only accept or
reject all of it, and a reviewer who agrees with one supersession and not the other would
have to leave the forge to say so. Each proposal's pull request has its own branch,
`memrepo/proposal/<id>`, holding one commit: the proposal's change applied to the remote's
base branch, with the message `memrepo review accept` would write (a `Memrepo-Run` of its own,
`Memrepo-Proposal: <sha>`, `Memrepo-Proposed-In: <run>`). So:

- **Merged on the forge** (a merge, a rebase or a squash): the commit arrives with the next
  `memrepo sync` on every machine, the proposal reads as accepted there (its trailer, or its
  change already in HEAD), recall labels the superseded memory, and `memrepo undo RUN` still
  reverts that one decision.
- **Closed unmerged**: the next push records a reject (`Memrepo-Action: reject`, the pull
  request's address as the reason), which `memrepo sync` shares, so the curator never proposes
  the pair again.
- **Decided locally**: the next push comments on the open pull request and closes it.
- **Pushed again**: the open pull request's title and body are brought up to date (the
  memories as they stand now); a second one is never opened.

Without `gh`, logged out or offline, the branches are still pushed and the report says how to
open each pull request by hand; nothing fails.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memrepo.passes.curate import acrossview, forge as forges, prbody, review
from memrepo.recall.sources import PERSONAL
from memrepo.store import config
from memrepo.vcs import branches as side, refs, remote as rem, runs, trailers as trailer_text

PR_PREFIX = "memrepo/proposal/"
BASE_REF = "refs/memrepo/forge-base"


@dataclass
class PushReport:
    remote: str
    base: str
    branches: list[tuple[str, int]] = field(default_factory=list)  # (review branch pushed, open proposals on it)
    events: list[dict[str, Any]] = field(default_factory=list)  # one per proposal the forge step touched
    manual: list[str] = field(default_factory=list)  # how to open pull requests by hand
    forge: str = ""  # HOST/OWNER/REPO when known
    offline: str = ""  # why the forge was not used, with the fix
    unpushed: list[tuple[str, str]] = field(default_factory=list)  # (proposal id, why its branch was not pushed)

    def as_dict(self) -> dict[str, Any]:
        return {"remote": self.remote, "base": self.base, "branches": [list(b) for b in self.branches],
                "events": self.events, "manual": self.manual, "forge": self.forge, "offline": self.offline,
                "unpushed": [list(u) for u in self.unpushed]}


_HERE = ("the memory that would give way is another source's, and this proposal's commit changes nothing here:"
         " decide it on this machine with `memrepo review accept` (proposed to that source) or `memrepo review reject`")


def _decided_here(p: dict[str, Any]) -> bool:
    """A proposal across sources whose losing memory is a team's or a project's (issue 41): its commit
    on the review branch is empty, so merging a pull request of it would propose nothing anywhere."""
    source = p["trailers"].get("Source")
    return acrossview.is_across(p) and bool(source) and source != PERSONAL


def pr_branch(proposal_id: str) -> str:
    return PR_PREFIX + proposal_id


class _Remote:
    """What the push needs to know of the remote, asked once each."""

    def __init__(self, repo: str, name: str, base: str) -> None:
        self.repo, self.name, self.base = repo, name, base
        self._heads: set[str] | None = None
        self._base_sha: str | None = None
        self._base_asked = False

    def heads(self) -> set[str]:
        if self._heads is None:
            self._heads = rem.remote_heads(self.repo, self.name, PR_PREFIX + "*", f"refs/heads/{self.base}")
        return self._heads

    def base_sha(self) -> str | None:
        """The remote's base branch, fetched into BASE_REF (a ref nothing else reads), or None."""
        if not self._base_asked:
            self._base_asked = True
            if self.base in self.heads():
                self._base_sha = rem.fetch_branch(self.repo, self.name, self.base, BASE_REF)
        return self._base_sha


def _pr_commit(repo: str, p: dict[str, Any], base_sha: str) -> str | None:
    """The proposal's change applied to `base_sha`, as the commit `review accept` would make; None
    when it no longer applies there."""
    tree = side.applied_tree(repo, p["commit"], base_sha)
    if tree is None:
        return None  # it no longer applies, or the base holds the change already
    keep = {k: v for k, v in p["trailers"].items() if k not in ("Run", "Review")}
    keep.update({"Run": runs.new_run_id(f"forge-{p['id']}"), "Proposal": p["commit"], "Proposed-In": p["run"]})
    message = trailer_text.message(p["subject"].replace(" (proposed)", "", 1), keep,
                                   f"Accepted by merging the pull request of proposal {p['id']} ({p['branch']}).")
    return side.commit_tree(repo, tree, base_sha, message,
                            hint="check the remote with `git remote -v` and the repository with `memrepo doctor`")


def _ensure_branch(report: PushReport, remote: _Remote, p: dict[str, Any]) -> bool:
    """Push the proposal's pull request branch unless the remote has it; False (and why) when it can't."""
    head = pr_branch(p["id"])
    if head in remote.heads():
        return True
    base_sha = remote.base_sha()
    if base_sha is None:
        report.unpushed.append((p["id"], f"{remote.name} has no branch {remote.base} yet: run `memrepo sync` first, then push again"))
        return False
    sha = _pr_commit(remote.repo, p, base_sha)
    if sha is None:
        report.unpushed.append((p["id"], f"it no longer applies to {remote.name}/{remote.base}: reject it with "
                                         f"`memrepo review reject {p['id']}` and run `memrepo curate` again"))
        return False
    rem.push_ref(remote.repo, remote.name, sha, f"refs/heads/{head}")
    remote.heads().add(head)
    return True


def _body(repo: str, p: dict[str, Any]) -> str:
    shown = review.show(repo, p["id"])
    shown["files"] = review.files_of(repo, p["commit"])
    return prbody.render(shown)


def _closing_comment(p: dict[str, Any]) -> str:
    by = (p.get("decided_by") or "")[:12]
    if p["state"] == "reject":
        return f"Rejected in memrepo (commit {by}), so this pull request is closed unmerged."
    if p["state"] == "undone":
        return "The memrepo run that proposed this was undone, so this pull request is closed."
    return f"Accepted in memrepo (commit {by}, `memrepo review accept`), so this pull request is no longer needed."


def _with_forge(report: PushReport, gh: forges.Gh, remote: _Remote, every: list[dict[str, Any]]) -> None:
    repo = remote.repo
    open_pulls = {forges.head_ref(pr): pr for pr in gh.open_pulls() if forges.head_ref(pr).startswith(PR_PREFIX)}
    for p in every:
        head = pr_branch(p["id"])
        pr = open_pulls.get(head)
        if p["state"] != "open":
            if pr is not None:
                gh.comment(pr["number"], _closing_comment(p))
                gh.update(pr["number"], state="closed")
                report.events.append({"id": p["id"], "action": "closed", "number": pr["number"], "url": pr.get("html_url", ""),
                                      "detail": f"decided here ({p['state']})"})
            continue
        title, body = prbody.title(p), _body(repo, p)
        if pr is not None:
            changed = (pr.get("title"), pr.get("body")) != (title, body)
            if changed:
                pr = gh.update(pr["number"], title=title, body=body)
            report.events.append({"id": p["id"], "action": "updated" if changed else "unchanged", "number": pr["number"],
                                  "url": pr.get("html_url", "")})
            continue
        past = gh.pulls_of(head)
        done = next((x for x in past if forges.merged(x)), None) or next((x for x in past if x.get("state") == "closed"), None)
        if done is not None and forges.merged(done):
            report.events.append({"id": p["id"], "action": "merged", "number": done["number"], "url": done.get("html_url", ""),
                                  "detail": "`memrepo sync` brings the change here"})
            continue
        if done is not None:
            url = done.get("html_url") or f"#{done['number']}"
            sha = review.reject(repo, p["id"], f"pull request {url} was closed unmerged")
            report.events.append({"id": p["id"], "action": "rejected", "number": done["number"], "url": done.get("html_url", ""),
                                  "detail": f"recorded as {sha[:12]}; `memrepo sync` shares it"})
            continue
        if not _ensure_branch(report, remote, p):
            continue
        pr = gh.create(head, remote.base, title, body)
        report.events.append({"id": p["id"], "action": "opened", "number": pr["number"], "url": pr.get("html_url", "")})


def _by_hand(report: PushReport, remote: _Remote, forge: forges.Forge | None, opened: list[dict[str, Any]]) -> None:
    for p in opened:
        if not _ensure_branch(report, remote, p):
            continue
        head = pr_branch(p["id"])
        if forge is not None:
            report.manual.append(f"{p['id']}: {forge.compare_url(remote.base, head)}")
        else:
            report.manual.append(f"{p['id']}: memrepo review show {p['id']} --markdown | gh pr create --repo HOST/OWNER/REPO "
                                 f"--head {head} --base {remote.base} --title \"{prbody.title(p)}\" --body-file -")


def push(repo: str, remote: str | None = None, forge_name: str | None = None, gh_path: str | None = None) -> PushReport:
    """Push review branches with open proposals, then bring each proposal's pull request in step."""
    remote = remote or config.local_only(repo, "remote") or "origin"
    url = refs.remote_url(repo, remote)
    if url is None:
        raise review.ReviewError(f"no git remote named {remote!r}",
                                 hint=f"add one with `git remote add {remote} URL`, or set \"remote\" in index/local.json")
    base = refs.current_branch(repo)
    if not base:
        raise review.ReviewError("HEAD is detached, so there is no branch for pull requests to merge into",
                                 hint=f"check out the memory branch (`git -C {repo} checkout main`), then push again")
    report = PushReport(remote=remote, base=base)
    every = []
    for p in review.proposals(repo, include_closed=True):
        if p["state"] == "open" and _decided_here(p):
            report.unpushed.append((p["id"], _HERE))
        else:
            every.append(p)
    opened = [p for p in every if p["state"] == "open"]
    counts: dict[str, int] = {}
    for p in opened:
        counts[p["branch"]] = counts.get(p["branch"], 0) + 1
    for branch, n in counts.items():
        if not review.is_remote_branch(branch):
            rem.push_ref(repo, remote, f"refs/heads/{branch}", f"refs/heads/{branch}")
            report.branches.append((branch, n))
    found, why = forges.resolve(url, config.local_only(repo, "forge"), forge_name)
    report.forge = found.slug if found else ""
    side = _Remote(repo, remote, base)
    if found is None:
        report.offline = why
    else:
        try:
            _with_forge(report, forges.Gh(found, repo, gh_path), side, every)
            return report
        except forges.ForgeUnavailable as exc:
            report.offline = f"{exc}: {exc.hint}" if exc.hint else str(exc)
    handled = {e["id"] for e in report.events} | {pid for pid, _ in report.unpushed}
    _by_hand(report, side, found, [p for p in review.proposals(repo) if p["id"] not in handled])
    return report
