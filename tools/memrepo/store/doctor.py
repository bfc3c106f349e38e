"""`memrepo doctor`: is this memory repository healthy, and if not, which command fixes it."""

from __future__ import annotations

import json
import os
from typing import Any

from memrepo.vcs import hookwire, journal
from memrepo.store import faults, freshness, index, private
from memrepo.base import paths
from memrepo.format import files, validate


class Check:
    """One line of the report; a `warn` check is ok (exit 0) but names something to fix."""

    __slots__ = ("name", "ok", "detail", "fix", "warn")

    def __init__(self, name: str, ok: bool, detail: str, fix: str = "", warn: bool = False) -> None:
        self.name, self.ok, self.detail, self.fix, self.warn = name, ok, detail, fix, warn

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail, "fix": self.fix, "warn": self.warn}


def _files(repo: str) -> list[str]:
    return files.memory_files(paths.memory_dir(repo))


def check_files(repo: str) -> list[str]:
    """Every problem of every memory file on disk, as `path:line: problem — fix`."""
    problems: list[str] = []
    facts = []
    for name in _files(repo):
        rel = f"memory/{name}"
        try:
            text = files.read_bytes(os.path.join(paths.memory_dir(repo), name)).decode("utf-8")
        except OSError as exc:
            problems.append(f"{rel}:1: cannot be read ({exc.strerror}) — restore it with `git checkout -- {rel}`")
            continue
        except UnicodeDecodeError:
            problems.append(f"{rel}:1: file is not UTF-8 — save it as UTF-8")
            continue
        found, note = validate.check_text(text, rel)
        problems.extend(str(p) for p in found)
        if note is not None and isinstance(note.get("id"), str):
            sup = note.get("superseded_by")
            facts.append((rel, note.id, sup if isinstance(sup, str) else None))
    problems.extend(str(p) for p in validate.check_graph(facts))
    for name in files.listing(paths.memory_dir(repo))[1]:
        rel = paths.MEMORY_DIR if name.endswith(os.sep) else f"{paths.MEMORY_DIR}/{name}"
        problems.append(f"{rel}:1: is a symbolic link or not a regular file, so memrepo does not read it (a link that came "
                        f"with a pull may point anywhere on this machine) — replace it with the file itself, or `git rm {rel}`")
    return problems


def _index_checks(repo: str) -> list[Check]:
    info = index.status(repo)
    rebuild = f"memrepo --repo {repo} index --rebuild"
    taken = faults.cache_in_place(repo)
    if taken:  # not "unreadable or corrupt": the rebuild moves it aside (issue 38)
        rel = f"{paths.INDEX_DIR}/{paths.INDEX_FILE}"
        return [Check("index", False, f"{rel} is {taken}, not the cache file", f"{rebuild} (it moves it aside as "
                      f"{rel}.moved-aside-<time>, deleting nothing, and builds the cache)")]
    if not info["exists"]:
        return [Check("index", False, f"no index at {info['path']}", rebuild)]
    if not info["schema_ok"]:
        what = "unreadable or corrupt" if info["schema"] is None else f"schema {info['schema']}, want {index.SCHEMA_VERSION}"
        return [Check("index", False, f"index is {what}", rebuild)]
    damaged = index.damage(repo)
    if damaged:  # page damage, a missing table, rows gone: `index` would rebuild it too
        return [Check("index", False, f"index is damaged: {damaged}", rebuild)]
    checks = [Check("index", True, f"{info['count']} {'memory' if info['count'] == 1 else 'memories'} indexed, schema {info['schema']}")]
    reason = freshness.needs_refresh(repo)
    checks.append(Check("index fresh", reason is None, reason or f"matches memory/ at {str(info['commit'])[:12] or 'no commit'}",
                        f"memrepo --repo {repo} index" if reason else ""))
    if not info.get("blob_hashes", True):
        checks.append(Check("index hashes", True, "the cache was built before its hashes were git blob ids, so each commit's "
                            "pre-commit reads every memory file (slow in a large store)", rebuild, warn=True))
    if info["skipped"]:
        listed = "; ".join(f"{p}: {why}" for p, why in info["skipped"][:5])
        checks.append(Check("indexed files", False, f"{len(info['skipped'])} files skipped: {listed}", "fix them (see the file problems below), then commit"))
    return checks


def _branch_check(repo: str) -> Check | None:
    """This clone's branch against the memory its remote holds, as last fetched (no network):
    an unborn or memory-less branch beside a remote branch that holds memory is a fork waiting
    to be pushed. None when the repository has no remote."""
    from memrepo.store import join

    remote = join.default_remote(repo)
    if remote is None:
        return None
    here = join.current_branch(repo)
    held = {b: n for b, n in join.memory_branches(repo, remote).items() if n > 0}
    if here is None or not held or here in join.remote_branches(repo, remote):
        return Check("branch", True, f"on {here or 'a detached HEAD'}" + (f", which {remote} has" if here and held else ""))
    mine = join.memory_count(repo, "HEAD")
    where = ", ".join(f"{b} ({n} memor{'y' if n == 1 else 'ies'})" for b, n in sorted(held.items()))
    detail = f"this clone is on {here}, which {remote} does not have, while {remote} holds memory on {where}: " \
             "sync would refuse to push a second memory beside it"
    if mine <= 0:
        return Check("branch", False, detail, f"memrepo init {repo} (this clone holds no memory yet: it checks out "
                                              f"{remote}'s branch)")
    theirs = sorted(held)[0]
    return Check("branch", False, detail, f"git -C {repo} merge --allow-unrelated-histories {remote}/{theirs}, then "
                                          f"git -C {repo} branch --set-upstream-to={remote}/{theirs}")


def _objects_check(repo: str) -> Check | None:
    """The object store, only when there is something to say: git's automatic gc paused by what
    it last warned of, or the store past git's thresholds (memrepo's next commit starts a gc)."""
    from memrepo.vcs import gitops

    try:
        paused = gitops.gc_paused(repo)
        past = gitops.objects_to_pack(repo)
    except Exception:  # noqa: BLE001 — a store git cannot describe is the other checks' to report
        return None
    if paused is not None:
        log, said = paused
        return Check("object store", True, f"git's automatic gc is paused for a day by what it last warned of: {said}",
                     f"read {log}, then remove it: the next commit packs again (`git -C {repo} gc` packs now)",
                     warn=True)
    if past is not None:
        return Check("object store", True, f"about {past['loose']} loose objects and {past['packs']} packs, past "
                     "git's thresholds: memrepo's next commit starts `git gc --auto`",
                     f"git -C {repo} gc (packs now, in the foreground)", warn=True)
    return None


def _remote_memory(repo: str) -> str:
    """For a plain `git clone` of the team's memory not yet initialised: what init would check out."""
    from memrepo.store import join

    if not os.path.exists(os.path.join(repo, ".git")):
        return ""
    remote = join.default_remote(repo)
    held = {b: n for b, n in join.memory_branches(repo, remote).items() if n > 0} if remote else {}
    if not held:
        return ""
    where = ", ".join(f"{b} ({n} memor{'y' if n == 1 else 'ies'})" for b, n in sorted(held.items()))
    return f" yet: it is a clone of {remote}, which holds memory on {where}; init checks that out"


ALWAYS_ON_TOKENS = 1300


def always_on_check(repo: str, text: str) -> Check:
    """What is injected at session start (`text`) stays within a token budget (estimated as characters / 4)."""
    from memrepo.store import config

    tokens = -(-len(text) // 4)
    budget = config.get(repo, "always_on_tokens", ALWAYS_ON_TOKENS)
    detail = f"≈{tokens:,} tokens at session start (estimate: {len(text):,} characters / 4), budget {budget:,}"
    return Check("always-on size", tokens <= budget, detail,
                 "" if tokens <= budget else "shorten the profile (`memrepo profile show`, then `profile demote N`) or lower `profile_bound`")


def bootstrap_status(repo: str) -> dict[str, Any] | None:
    """The last report of the detached bootstrap worker (`memrepo.worker.bootstrap` writes it)."""
    try:
        with open(os.path.join(paths.index_dir(repo), "bootstrap.json"), encoding="utf-8") as fh:
            return dict(json.load(fh))
    except (OSError, ValueError):
        return None


def _private_check(repo: str) -> Check:
    """index/ holds the recall log, the transcript index and the cache: 0700 and 0600 (issue 15)."""
    top = paths.index_dir(repo)
    loose = private.loose(top)
    if not loose:
        return Check("private files", True, "index/ and everything in it are the owner's alone (0700/0600)")
    rels = [f"{paths.INDEX_DIR}/" if p == top else f"{paths.INDEX_DIR}/{os.path.relpath(p, top)}" for p in loose]
    return Check("private files", False, f"{len(rels)} paths in index/ can be read by other users: {', '.join(rels[:5])}"
                 + (", …" if len(rels) > 5 else ""), f"memrepo --repo {repo} index")


def _settings_checks(repo: str) -> list[Check]:
    """This machine's settings in the committed file are ignored (issues 15 and 38): say so, or the
    user wonders why they never apply."""
    from memrepo.store import config

    checks = []
    for key in config.committed_local_only(repo):
        checks.append(Check("settings", True, f"`{key}` in the committed {config.SHARED} is ignored: it "
                            f"{config.LOCAL_ONLY_WHY[key]}, so it is read from this machine's {config.LOCAL} only",
                            f"move `{key}` to {config.LOCAL} (untracked; write this machine's own value there), "
                            f"then remove it from {config.SHARED} and commit", warn=True))
    if config.local_is_tracked(repo):
        checks.append(Check("settings", True, f"{config.LOCAL} is committed, so memrepo ignores it (it came with a pull)",
                            f"git rm --cached {config.LOCAL}, then commit", warn=True))
    return checks


def run(repo: str, always_on: str = "") -> list[Check]:
    """All checks, in the order a person would fix them.

    `always_on` is what the agent's session-start hook injects (the agent layer knows it, see
    `memrepo.claude.session_start.always_on_text`); empty text has no size to check.
    """
    boot = bootstrap_status(repo)
    if not os.path.exists(os.path.join(repo, ".git")) or not os.path.isdir(paths.memory_dir(repo)):
        if setup_running(boot):
            return [Check("background setup", True, _setup_detail(boot), "wait for it (it ends with `done`); "
                          f"the log is {paths.index_dir(repo)}/bootstrap.log", warn=True)]
        return [Check("repository", False, f"no memory repository at {repo}" + _remote_memory(repo), f"memrepo init {repo}")]
    checks = [Check("repository", True, repo)]
    from memrepo.vcs import gitcmd

    if gitcmd.head(repo, env=gitcmd.no_git_env(), timeout=10) is None:
        checks.append(Check("first commit", False, "the repository has no commit yet: the index, sync and every pass "
                            "need one", f"memrepo init {repo} (it makes the first commit, or checks out the remote's memory)"))
    branch = _branch_check(repo)
    if branch is not None:
        checks.append(branch)
    ok, detail = hookwire.wiring(repo)
    checks.append(Check("git hooks", ok, detail, "" if ok else f"memrepo init {repo}"))
    checks.extend(_settings_checks(repo))
    ok, detail = hookwire.merge_driver_wiring(repo)
    checks.append(Check("merge driver", ok, detail, "" if ok else f"memrepo init {repo}"))
    interrupted = journal.pending(repo)
    if interrupted is not None:  # a writer was killed mid-commit (the next write undoes it too)
        checks.append(Check("interrupted commit", False, f"a memrepo commit was killed mid-way: {', '.join(interrupted[:5])}"
                            + (", …" if len(interrupted) > 5 else ""), f"memrepo --repo {repo} recover"))
    checks.extend(faults.checks(repo, Check))
    objects = _objects_check(repo)
    if objects is not None:
        checks.append(objects)
    checks.extend(_index_checks(repo))
    checks.append(_private_check(repo))
    problems = check_files(repo)
    n = len(_files(repo))
    checks.append(Check("memory files", not problems, f"{n} files valid" if not problems else "\n".join(problems),
                        "" if not problems else "fix each line above (or `memrepo fmt` for formatting), then commit"))
    from memrepo.store import sources

    checks.extend(sources.checks(repo, os.getcwd(), Check))  # each team, and the project you are in (issue 41)
    if always_on:
        checks.append(always_on_check(repo, always_on))
    if boot is not None:
        failed = boot.get("state") == "failed"
        running = setup_running(boot)
        detail = _setup_detail(boot) if running else f"{boot.get('state')} at {boot.get('at')}" + (f": {boot.get('error')}" if failed else "")
        checks.append(Check("background setup", not failed, detail,
                            "see index/bootstrap.log; `pip install memrepo` gives the hooks an interpreter" if failed else "",
                            warn=running))
    return checks


SETUP_STATES = ("started", "creating-venv", "installing", "init", "indexing")
SETUP_PATIENCE = 20 * 60  # seconds: a setup that has not reported for longer is not running any more


def setup_running(boot: dict[str, Any] | None) -> bool:
    """Whether the bootstrap worker's last report is a step in progress, and recent."""
    import calendar
    import time

    if not boot or boot.get("state") not in SETUP_STATES:
        return False
    try:
        at = calendar.timegm(time.strptime(str(boot.get("at")), "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return False
    return time.time() - at < SETUP_PATIENCE


def _setup_detail(boot: dict[str, Any] | None) -> str:
    boot = boot or {}
    why = f" ({boot['reason']})" if boot.get("reason") else ""
    return f"in progress{why}: step `{boot.get('state')}` since {boot.get('at')}"
