"""The group commit: a writer that finds the repository lock held leaves its change to the holder (issue 44).

Ten `memrepo add` at once used to make a queue of ten lock holds, each staging, validating,
committing and updating the cache for one file. Now a one-file writer (`add`, `edit`, `retire`,
whose hooks' work is done in-process) prepares its change outside the lock — its files, the
bytes it read of them, its message and trailers with its own run — and hands it to `submit`
(`commit.commit_if_unchanged` for one change). `add` hands over its memory's fields, not its
file (`Change.fields`): whichever process holds the lock renders and validates them with the one
renderer (`Hooks.render`), so an add that waits never loads PyYAML nor the validation (fields
that may hold a secret are rendered and refused by their own writer: no secret is written to the
queue, `store.memories.add`). When the lock is held, the change waits in
`memrepo-group/` in the worktree's git dir (an flock on the entry says its writer still waits)
while its writer waits its turn in the lock's queue.
The holder takes up to MAX_GROUP waiting changes that touch no path an earlier one touches,
checks each exactly as its writer would (every path still holds what the writer read; the
pre-commit validation), and commits them as a chain (`chain.commit_chain`): one commit per
change, each its own message, trailers and run, so `memrepo undo` takes back one and only one,
with one journal, one staging, one compare-and-swap of HEAD and one cache update. Before it lets
go of the lock it writes each waiter's outcome beside the entry (its commit, the paths that
changed meanwhile, or the error its own commit would have raised) and writes a byte to the FIFO
the waiter sleeps on; the waiter stops waiting at once, reads it, and its process reports it as if
it had run alone.

Nothing is lost or reported twice:
- a change no holder took is its writer's to commit when its turn at the lock comes;
- a holder whose group failed as a whole gives every change back ("retry"), and commits its own
  alone; its waiters commit theirs themselves;
- a holder killed mid-group leaves its entries taken and unanswered. Whoever holds the lock next
  first lets the journal put back what did not land; a change whose commit the dead holder had
  made reachable from HEAD (its sha is written beside the entry just before HEAD moves) is
  answered as landed, any other is committed again;
- an entry is read as untrusted input (the queue is local, but a crashed or hostile writer may
  leave anything): bounded in size and number, paths relative and inside the tree, the writer's
  flock required (a dead writer's entry is dropped unread), anything malformed given back;
  fields the renderer refuses as no memory's are given back (its writer renders them itself and
  sees why), a file they make invalid is answered with its writer's own NoteInvalid.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from typing import Any

from memrepo.errors import GitError, NoteInvalid
from memrepo.vcs import gitcmd, lock
from memrepo.vcs.change import Change, Hooks, Outcome

# `chain`, `commit`, `hookwire` and `journal` load in `_lead`: a writer whose change a holder
# commits never needs them (issue 44).

NAME = "memrepo-group"
# Where a lock holder's own files are (the journal, memrepo's index and the real one, what a person
# may be in the middle of, the commit-graph mark and log, the object store and the gc log), asked
# with this process's first question: a hold then starts one `rev-parse` for them all, not three
# (issue 44). `journal`, `staging`, `commit` and `gitops` register the same names when they load,
# which a writer whose change a holder commits never does
# (test_a_lock_hold_asks_git_where_its_files_are_once).
HOLDER_PLACES = ("memrepo-commit-journal.json", "memrepo-index", "index", "MERGE_HEAD", "rebase-merge", "rebase-apply",
                 "CHERRY_PICK_HEAD", "REVERT_HEAD", "memrepo-commit-graph.head", "memrepo-commit-graph.log", "objects",
                 "memrepo-gc.log")
gitcmd.ask_together(NAME, *HOLDER_PLACES)
MAX_GROUP = 16  # changes one lock hold commits (the holder's own included)
MAX_ENTRY_BYTES = 4 * 1024 * 1024  # a queued change: a few memory files
MAX_LISTED = 256  # queue entries one holder looks at
QUEUED, TAKEN, ANSWER, WAKE = ".json", ".taken", ".out", ".wake"


def folder(repo: str) -> str:
    """The queue of `repo`'s worktree, in its git dir (each worktree commits on its own HEAD)."""
    found = gitcmd.git_paths(repo, NAME)
    if found is None:
        raise GitError(f"{repo} is not a git repository", hint=f"run `memrepo init {repo}`")
    return found[0]


def submit(repo: str, change: Change, hooks: Hooks, wait: float = lock.WAIT) -> tuple[str, list[str]]:
    """`commit_if_unchanged` of one change: committed in this process's lock hold together with
    the changes waiting then, or by a holder's; (sha or "", the paths that changed meanwhile)."""
    entry: Entry | None = None
    tried = led = False

    def waiting() -> bool:
        nonlocal entry, tried
        if not tried:
            tried = True
            entry = Entry.put(folder(repo), change)
        return entry is not None and entry.answered()

    try:
        for rounds in range(2):
            try:
                with lock.held(repo, wait, waiting=waiting, wake=lambda: entry.wake if entry else None) as holding:
                    if not holding and entry is not None:
                        return entry.outcome().result()
                    led = True
                    return _lead(repo, change, entry, hooks)
            except lock.LockTimeout:
                # Unless a holder took the change and is committing it now: its answer comes before the lock is free.
                if entry is None or entry.withdraw() or rounds:
                    raise
        raise AssertionError("unreachable")
    finally:
        if entry is not None:
            entry.close()
        if led:
            ring_all(repo)  # the lock is free: the next in line takes it now, not at its next poll


def ring_all(repo: str) -> None:
    """Wake every writer still waiting in the queue (a change no holder took, or one given back),
    so the first in the lock's line tries the lock at once; the others go back to sleep."""
    try:
        where = folder(repo)
        names = os.listdir(where)[:MAX_LISTED]
    except (OSError, GitError):
        return
    for name in names:
        if name.endswith(WAKE) and not name.startswith("."):
            _ring(os.path.join(where, name))


def _lead(repo: str, change: Change, entry: Entry | None, hooks: Hooks) -> tuple[str, list[str]]:
    """Holding the lock: this writer's change, and every waiting one that fits, in one chain."""
    from memrepo.vcs import chain, commit, hookwire, journal

    journal.recover(repo)  # a dead holder's group: what did not land is put back before anything is judged
    if entry is not None:
        settled = entry.settle(repo)
        if settled is not None:
            return settled.result()
    change = rendered(change, hooks)  # this writer's own fields: its own error, raised here
    if not hookwire.only_ours(repo):  # git runs the hooks: one change, one `git commit`, no group
        return commit.commit_if_unchanged(repo, change.files, change.expect, change.subject, change.trailers,
                                          change.body)
    taken = [t for t in claim(repo, change.paths()) if _ready(t, hooks)]
    if not taken:
        return chain.commit_chain(repo, [change], hooks)[0].result()
    seen: list[Outcome] = []

    def landing(found: list[Outcome]) -> None:
        seen[:] = found
        for t, outcome in zip(taken, found[1:]):
            t.answer(outcome, final=False)

    try:
        outcomes = chain.commit_chain(repo, [change] + [t.change for t in taken if t.change], hooks, landing)
    except BaseException as exc:
        tip = next((o.sha for o in reversed(seen) if o.sha), "")
        if tip and _landed(repo, tip):  # HEAD moved to the chain before it failed: those commits stand
            for t, outcome in zip(taken, seen[1:]):
                t.answer(outcome)
            if isinstance(exc, Exception):
                return seen[0].result()
            raise
        for t in taken:
            t.answer(None)  # given back: its writer commits it itself
        if not isinstance(exc, Exception):
            raise
        return chain.commit_chain(repo, [change], hooks)[0].result()
    for t, outcome in zip(taken, outcomes[1:]):
        t.answer(outcome)
    return outcomes[0].result()


def rendered(change: Change, hooks: Hooks) -> Change:
    """`change` with its fields rendered into files by `hooks.render`, which raises NoteInvalid for
    a file that is not valid: whichever process holds the lock renders, with the one renderer."""
    if not change.fields:
        return change
    if hooks.render is None:
        raise GitError("a change with fields to render came with no renderer", hint="report this as a bug")
    files = {**change.files, **{rel: hooks.render(rel, fields) for rel, fields in change.fields.items()}}
    return Change(files, change.expect, change.subject, change.trailers, change.body)


def _ready(entry: Entry, hooks: Hooks) -> bool:
    """A taken change rendered as its writer would render it; False when it was answered instead:
    a file its fields make invalid gets the writer's own NoteInvalid back, and fields the renderer
    cannot take at all (no writer of this code sends them) are given back for the writer to see."""
    assert entry.change is not None
    try:
        entry.change = rendered(entry.change, hooks)
        return True
    except NoteInvalid as exc:
        entry.answer(Outcome(error=(str(exc), exc.hint), problems=exc.problems))
    except Exception:  # noqa: BLE001 — untrusted input: its writer renders it itself and raises what it raises
        entry.answer(None)
    return False


class Entry:
    """One queued change: `<name>.json` while it waits, `<name>.taken` once a holder claimed it,
    `<name>.out` the holder's answer, `<name>.wake` a FIFO a holder writes a byte to once the
    answer is there or the lock is free. `fd` (the writer's only) holds the flock that says it
    waits; `wake` is the FIFO's read end (None where none could be made: the writer then only
    polls), `keep` a write end the writer holds itself, so the FIFO never reads as closed after
    a holder's byte (it would wake every poll)."""

    def __init__(self, where: str, name: str, fd: int | None = None, change: Change | None = None,
                 wake: tuple[int, int] | None = None) -> None:
        self.where, self.name, self.fd, self.change = where, name, fd, change
        self.wake: int | None = None
        self.keep: int | None = None
        if wake is not None:
            self.wake, self.keep = wake

    def _path(self, suffix: str) -> str:
        return os.path.join(self.where, self.name + suffix)

    @classmethod
    def put(cls, where: str, change: Change) -> Entry | None:
        """Queue `change` for a holder; None when it cannot be (too large, the folder unwritable, text
        that is no UTF-8, or fields JSON would not give back as they are: a holder must render what
        this writer would)."""
        try:
            text = json.dumps(change.as_dict(), ensure_ascii=False)
            data = text.encode("utf-8")  # a lone surrogate (a byte of argv no UTF-8 decodes) is no UTF-8
        except (TypeError, ValueError):
            return None
        if change.fields and json.loads(text)["fields"] != change.fields:
            return None  # a tuple, a key that is no text: this writer renders its change itself at its turn
        if len(data) > MAX_ENTRY_BYTES:
            return None
        name = f"{time.time_ns():020d}-{os.getpid()}"
        tmp = os.path.join(where, f".{name}")
        try:
            os.makedirs(where, exist_ok=True)
            fd = lock.hold_file(tmp)  # flocked before it is visible: never taken for a dead writer's
            os.write(fd, data)
            wake = _fifo(os.path.join(where, name + WAKE))  # before the entry shows: no answer comes unannounced
            os.rename(tmp, os.path.join(where, name + QUEUED))
        except OSError:
            with contextlib.suppress(OSError):
                os.remove(tmp)
            return None
        return cls(where, name, fd, wake=wake)

    def _answer(self) -> dict[str, Any] | None:
        try:
            with open(self._path(ANSWER), "rb") as fh:
                found = json.loads(fh.read(MAX_ENTRY_BYTES))
        except (OSError, ValueError):
            return None
        return found if isinstance(found, dict) else None

    def answered(self) -> bool:
        """Whether a holder committed this change, or refused it (not given it back)."""
        found = self._answer()
        return found is not None and bool(found.get("final")) and not found.get("retry")

    def outcome(self, found: dict[str, Any] | None = None) -> Outcome:
        found = found if found is not None else self._answer() or {}
        error = found.get("error")
        said = None
        if isinstance(error, list) and len(error) == 2:
            said = (str(error[0]), None if error[1] is None else str(error[1]))
        problems = found.get("problems")
        listed = [str(p) for p in problems] if isinstance(problems, list) and said is not None else None
        return Outcome(str(found.get("sha") or ""), [str(p) for p in found.get("stale") or []], said, listed)

    def withdraw(self) -> bool:
        """Take the change back from the queue; False when a holder has it and has not given it back."""
        try:
            os.remove(self._path(QUEUED))
            return True
        except FileNotFoundError:
            found = self._answer()
            return found is not None and bool(found.get("retry"))

    def settle(self, repo: str) -> Outcome | None:
        """Holding the lock: this writer's answer when a holder made one (a dead holder's landed
        chain included); else None, and the change is this writer's to commit, out of the queue."""
        found = self._answer()
        if found is not None and not found.get("retry"):
            if found.get("final") or _landed(repo, str(found.get("sha") or "")):
                return self.outcome(found)
        self._drop()
        return None

    def answer(self, outcome: Outcome | None, final: bool = True) -> None:
        """The holder's answer: `outcome`, or None to give the change back to its writer."""
        found: dict[str, Any] = {"final": True, "retry": True} if outcome is None else {
            "final": final, "sha": outcome.sha, "stale": outcome.stale,
            "error": list(outcome.error) if outcome.error else None, "problems": outcome.problems}
        tmp = self._path(ANSWER) + f".tmp-{os.getpid()}"
        with contextlib.suppress(OSError):
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(found, fh)
            os.replace(tmp, self._path(ANSWER))
        if found["final"]:
            _ring(self._path(WAKE))

    def _drop(self) -> None:
        for suffix in (QUEUED, TAKEN, ANSWER, WAKE):
            with contextlib.suppress(OSError):
                os.remove(self._path(suffix))

    def close(self) -> None:
        """The writer is done: its files go, and its flock with its descriptor."""
        self._drop()
        for fd in (self.fd, self.wake, self.keep):
            if fd is not None:
                os.close(fd)
        self.fd = self.wake = self.keep = None


def _fifo(where: str) -> tuple[int, int] | None:
    """Make a FIFO at `where` and open its read end and a write end without blocking; None where that fails."""
    opened: list[int] = []
    try:
        os.mkfifo(where, 0o600)
        opened.append(os.open(where, os.O_RDONLY | os.O_NONBLOCK))
        opened.append(os.open(where, os.O_WRONLY | os.O_NONBLOCK))
        return opened[0], opened[1]
    except (OSError, AttributeError):
        for fd in opened:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.remove(where)
        return None


def _ring(where: str) -> None:
    """Wake the writer waiting on the FIFO at `where`, if it is one and someone reads it. The
    queue is untrusted: a symbolic link is not followed, and nothing but a FIFO is written to."""
    import stat

    try:
        fd = os.open(where, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return  # gone, not a FIFO we may open, or nobody reads it (ENXIO)
    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            with contextlib.suppress(OSError):
                os.write(fd, b"\n")
    finally:
        os.close(fd)


def queued(repo: str) -> bool:
    """Whether a live writer's change waits in the queue, not yet taken by a holder: some holder
    commits it next (asked without waiting; a commit-graph layer waits for it)."""
    try:
        where = folder(repo)
        names = os.listdir(where)[:MAX_LISTED]
    except (OSError, GitError):
        return False
    return any(n.endswith(QUEUED) and not n.startswith(".") and lock.alive(os.path.join(where, n)) for n in names)


def _landed(repo: str, sha: str) -> bool:
    """Whether commit `sha` is HEAD or behind it."""
    if not sha:
        return False
    rc, _, _ = gitcmd.run_git("merge-base", "--is-ancestor", sha, "HEAD", cwd=repo)
    return rc == 0


def claim(repo: str, busy: set[str]) -> list[Entry]:
    """Holding the lock: up to MAX_GROUP - 1 waiting changes, oldest first, none touching a path in
    `busy` or one an earlier claimed change touches; each renamed to `.taken` and read."""
    where = folder(repo)
    try:
        names = sorted(os.listdir(where))[:MAX_LISTED]
    except FileNotFoundError:
        return []
    taken: list[Entry] = []
    for name in names:
        stem, suffix = os.path.splitext(name)
        if suffix == WAKE:  # a FIFO, never opened to ask whether it is alive (that would block): its entry says
            if not name.startswith(".") and stem + QUEUED not in names and stem + TAKEN not in names:
                with contextlib.suppress(OSError):
                    os.remove(os.path.join(where, name))
            continue
        if (name.startswith(".") or suffix not in (QUEUED, TAKEN, ANSWER)) and not lock.alive(os.path.join(where, name)):
            with contextlib.suppress(OSError):
                os.remove(os.path.join(where, name))  # a writer or a holder died writing it
            continue
        if suffix not in (QUEUED, TAKEN) or name.startswith(".") or len(taken) >= MAX_GROUP - 1:
            continue
        entry = Entry(where, stem)
        if not lock.alive(entry._path(suffix)):
            for gone in (suffix, ANSWER, WAKE):  # its writer died: nobody waits for it
                with contextlib.suppress(OSError):
                    os.remove(entry._path(gone))
            continue
        if suffix == TAKEN and not _orphaned(repo, entry):
            continue
        if suffix == QUEUED:
            try:
                os.rename(entry._path(QUEUED), entry._path(TAKEN))
            except OSError:
                continue  # its writer took it back
        entry.change = _read(entry._path(TAKEN))
        if entry.change is None:
            entry.answer(None)
            continue
        paths = entry.change.paths()
        if paths & busy:
            entry.answer(None)  # two changes of one path: the later is judged after the earlier lands
            continue
        busy |= paths
        taken.append(entry)
    return taken


def _orphaned(repo: str, entry: Entry) -> bool:
    """A taken entry with no final answer: its holder died (this process holds the lock now). One
    whose commit landed is answered here; True when it is still to be committed."""
    found = entry._answer()
    if found is None:
        return True
    if found.get("final"):
        return False
    if _landed(repo, str(found.get("sha") or "")):
        entry.answer(entry.outcome(found))
        return False
    return True


def _read(where: str) -> Change | None:
    """A queued change, or None when it is not one this code wrote (bounded; paths inside the tree)."""
    try:
        with open(where, "rb") as fh:
            raw = json.loads(fh.read(MAX_ENTRY_BYTES + 1)[:MAX_ENTRY_BYTES])
        files, expect, trailers = raw["files"], raw["expect"], raw["trailers"]
        subject, body, fields = raw["subject"], raw.get("body", ""), raw.get("fields", {})
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        return None
    texts = (dict, dict, dict, str, str, dict)
    if not all(isinstance(v, t) for v, t in zip((files, expect, trailers, subject, body, fields), texts)):
        return None
    if not (files or fields) or not all(_safe(rel) and (v is None or isinstance(v, str)) for rel, v in files.items()):
        return None
    if not all(_safe(rel) and rel not in files and isinstance(v, dict) for rel, v in fields.items()):
        return None
    if not all(isinstance(v, (str, type(None))) for v in expect.values()):
        return None
    if not all(isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, str) for x in v)) for v in trailers.values()):
        return None
    return Change(files, expect, subject, trailers, body, fields)


def _safe(rel: object) -> bool:
    """A path inside the work tree, written as git writes it: relative, normalised, not into .git."""
    if not isinstance(rel, str) or not rel or "\0" in rel or "\\" in rel or os.path.isabs(rel):
        return False
    parts = rel.split("/")
    return os.path.normpath(rel) == rel and ".." not in parts and not any(p.lower() == ".git" for p in parts)
