"""What the committed git hook shims run: pre-commit validation and post-* index updates.

Run as `python -m memrepo.store.githooks <hook> [args]`. Uses the git CLI, never GitPython.
pre-commit and pre-merge-commit fail closed (exit 1 with `path:line: problem — fix` lines);
every post-* hook fails open: on any error it marks the index stale, prints one line and exits 0.
"""

from __future__ import annotations

import os
import sys

from memrepo.errors import NoteInvalid
from memrepo.format import files
from memrepo.format.files import MAX_FILE_BYTES
from memrepo.format.terminal import safe
from memrepo.base import paths
from memrepo.store import private
from memrepo.vcs import refs, staged, trees

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from memrepo.format import validate
    from memrepo.vcs import commit
    from memrepo.vcs.change import Hooks

# pre-merge-commit runs before `git merge` commits a merge it made without conflicts; the index
# then holds the merge result, so it validates exactly as pre-commit does.
VALIDATING_HOOKS = {"pre-commit": ("commit", "git commit --no-verify"),
                    "pre-merge-commit": ("merge", "git merge --no-verify")}
POST_HOOKS = ("post-commit", "post-merge", "post-checkout", "post-rewrite")
# A post hook waits this long for a running index update or rebuild, then marks the index stale
# and lets the user's git command finish (DESIGN rule 7: post hooks never block).
HOOK_LOCK_WAIT = 10.0


def _is_memory_path(rel: str) -> bool:
    return rel.startswith(paths.MEMORY_DIR + "/") and rel.endswith(".md") and rel.count("/") == 1


def _staged_blobs(root: str, rels: list[str], oversized: dict[str, int] | None = None,
                  env: dict[str, str] | None = None, ids: dict[str, str] | None = None) -> dict[str, bytes]:
    return staged.blobs(root, rels, MAX_FILE_BYTES, oversized, env, ids)


def pre_commit(root: str, hook: str = "pre-commit", env: dict[str, str] | None = None) -> int:
    """Validate the staged content of every added or changed memory file; 1 when anything is wrong.

    `env` names the index to validate (`GIT_INDEX_FILE`) when this runs inside a writer, not as git's hook.
    """
    from memrepo.format import validate

    fast = _synced_to_head(root, env)
    ids: dict[str, str] = {}
    against = staged.differ_from(root, fast[0], env=env, ids=ids) if fast else None  # HEAD's diff, with modes
    try:
        # No renames: a renamed memory is a delete and an add.
        listing = staged.changes(root, env) if against is None else [
            (status, rel) for rel, (_, status) in against.items() if status in staged.CHANGES]
    except RuntimeError as exc:
        print(f"memrepo {hook}: git diff failed: {exc}", file=sys.stderr)
        return 1
    added = [rel for status, rel in listing if status != "D"]
    gone = [rel for status, rel in listing if status == "D"]
    changed = [p for p in added if _is_memory_path(p)]
    deleted = {os.path.splitext(os.path.basename(p))[0] for p in gone if _is_memory_path(p)}
    problems: list[validate.Problem] = []
    if paths.PROFILE_FILE in added:
        problems += _profile_problems(root, env)
    if not changed and not deleted:
        return _report(problems, hook)
    prefix = paths.MEMORY_DIR + "/"
    changed_set = set(changed)
    listed = (_from_synced(root, changed_set, env, fast, against) if fast else None) or _from_listing(root, changed_set, env)
    facts, unread, modes = listed.facts, listed.unread, listed.modes
    oversized: dict[str, int] = {}
    blobs = _staged_blobs(root, unread, oversized, env, ids)
    for rel in unread:
        data = blobs.get(rel, b"")
        stem = rel[len(prefix):-3]
        if rel in changed_set and not modes[rel].startswith("100"):  # 120000 a symlink, 160000 a submodule
            problems.append(validate.Problem(rel, 1, "is a symbolic link (or a submodule), which memrepo never follows",
                                             f"commit the memory file itself: `git rm --cached {rel}`, copy the file in, `git add {rel}`"))
            continue
        if rel in changed_set and rel in oversized:
            problems.append(validate.Problem(rel, 1, f"is {oversized[rel]:,} bytes, more than a memory file may hold "
                                                     f"({MAX_FILE_BYTES:,}), so it was not read",
                                             "keep the memory short and link to the long text instead"))
            continue
        if rel in changed_set:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                problems.append(validate.Problem(rel, 1, "file is not UTF-8", "save it as UTF-8"))
                continue
            found, note = validate.check_text(text, rel)
            problems.extend(found)
            if note is not None and isinstance(note.get("id"), str):
                sup = note.get("superseded_by")
                facts.append((rel, note.id, sup if isinstance(sup, str) else None))
        else:
            facts.append((rel, stem, files.superseded_by(data)))
    if listed.partial:  # the cache gave only the memories that supersede: say which of their targets exist
        have = {rel for rel, _, _ in facts}
        wanted = sorted({f"{prefix}{sup}.md" for _, _, sup in facts if sup} - have)
        facts += [(rel, rel[len(prefix):-3], None) for rel in sorted(_indexed(root, wanted) - listed.differ)]
    # Only what this commit touches: a file committed earlier with --no-verify must not block others.
    graph = validate.check_graph(facts)
    problems.extend(p for p in graph if p.path in changed_set or any(f"`{d}`" in p.problem for d in deleted))
    return _report(problems, hook)


class _Listed:
    """What pre-commit knows before reading blobs: (path, id, superseded_by) facts, the staged
    paths it must read, their modes; `partial` when the facts cover only the memories that
    supersede (`_from_synced`), with `differ` the paths that differ from the cache's commit.
    A plain class: every `memrepo add` loads this module, most only to hand its change to a lock
    holder, and `dataclasses` costs one 3.4 M instructions (issue 44)."""

    __slots__ = ("facts", "unread", "modes", "partial", "differ")

    def __init__(self, facts: list[tuple[str, str, str | None]], unread: list[str], modes: dict[str, str],
                 partial: bool = False, differ: set[str] | None = None) -> None:
        self.facts, self.unread, self.modes, self.partial, self.differ = facts, unread, modes, partial, differ or set()


def _from_listing(root: str, changed: set[str], env: dict[str, str] | None = None) -> _Listed:
    """Every staged memory from `git ls-files --stage`: its facts from the cache where the cache
    holds that very blob (content-addressed, so a stale cache only means more blobs read)."""
    prefix = paths.MEMORY_DIR + "/"
    modes: dict[str, str] = {}
    shas: dict[str, str] = {}
    for rel, (mode, sha) in (staged.entries(root, paths.MEMORY_DIR, env=env) or {}).items():
        if rel.startswith(prefix) and rel.endswith(".md") and "/" not in rel[len(prefix):]:
            modes[rel], shas[rel] = mode, sha
    known = _cached_facts(root)
    facts: list[tuple[str, str, str | None]] = []
    unread: list[str] = []
    for rel, sha in shas.items():
        fact = known.get(rel)
        if fact is not None and fact[0] == sha and rel not in changed:
            facts.append((rel, rel[len(prefix):-3], fact[1]))
        else:
            unread.append(rel)
    return _Listed(facts, unread, modes)


def _synced_to_head(root: str, env: dict[str, str] | None = None) -> tuple[str, dict[str, str], set[str]] | None:
    """The cache's facts (`cachefacts.synced_facts`) when it is synced to the commit HEAD is: then
    one `diff-index --cached HEAD` says both what is staged and what differs from the cache. HEAD
    is the one a memrepo writer's commit will have for parent, when it says (EXPECT_HEAD)."""
    from memrepo.store import cachefacts
    from memrepo.vcs import commit

    try:
        fast = cachefacts.synced_facts(root)
    except Exception:  # noqa: BLE001 — a cache that can't say means the slower way
        return None
    if fast is None:
        return None
    head = (os.environ if env is None else env).get(commit.EXPECT_HEAD) or refs.resolve(root, "HEAD")
    return fast if fast[0] == head else None


def _from_synced(root: str, changed: set[str], env: dict[str, str] | None,
                 fast: tuple[str, dict[str, str], set[str]], listed: dict[str, tuple[str, str]] | None) -> _Listed | None:
    """The same from a cache synced to commit C, HEAD (store/synced.py): git named what differs
    from C (`listed`, `diff-index --cached`, in C's time), those and the cache's unindexable files
    are read, and the cache gives the rest: the memories that supersede, and which of their
    targets exist."""
    _, edges, skipped = fast
    if listed is None:
        return None
    differ = {rel: status for rel, (_, status) in listed.items() if _is_memory_path(rel)}
    modes = {rel: mode for rel, (mode, _) in listed.items() if _is_memory_path(rel)}
    prefix = paths.MEMORY_DIR + "/"
    facts: list[tuple[str, str, str | None]] = [(rel, rel[len(prefix):-3], sup) for rel, sup in edges.items()
                                                if rel not in differ and rel not in changed]
    wanted = ({rel for rel, status in differ.items() if not status.startswith("D")} | (skipped - set(differ)) | changed)
    missing = sorted(rel for rel in wanted if rel not in modes)
    if missing:  # a skipped or changed path the diff did not name: its staged mode
        entries = staged.entries(root, *missing, literal=True, env=env)
        if entries is None:
            return None
        modes.update((rel, mode) for rel, (mode, _) in entries.items())
    unread = sorted(rel for rel in wanted if modes.get(rel, "000000") != "000000")
    return _Listed(facts, unread, modes, partial=True, differ=set(differ))


def _indexed(root: str, rels: list[str]) -> set[str]:
    from memrepo.store import cachefacts

    return cachefacts.indexed(root, rels) if rels else set()


def _cached_facts(root: str) -> dict[str, tuple[str, str | None]]:
    """{path: (git blob id, superseded_by)} from the index cache, or {} when it can't say."""
    from memrepo.store import cachefacts

    try:
        return cachefacts.blob_facts(root)
    except Exception:  # noqa: BLE001 — a cache that can't be read only means every blob is read
        return {}


def _profile_problems(root: str, env: dict[str, str] | None = None) -> list[validate.Problem]:
    from memrepo.format import validate

    rel = paths.PROFILE_FILE
    data = _staged_blobs(root, [rel], env=env).get(rel, b"")
    try:
        return validate.check_profile(data.decode("utf-8"), rel)
    except UnicodeDecodeError:
        return [validate.Problem(rel, 1, "file is not UTF-8", "save it as UTF-8")]


def _report(problems: list[validate.Problem], hook: str) -> int:
    """Print the problems as `path:line: problem — fix` lines; 1 when there are any."""
    for p in problems:
        print(safe(p), file=sys.stderr)  # a teammate's file name may hold escape sequences
    if not problems:
        return 0
    n = len(problems)
    what, bypass = VALIDATING_HOOKS[hook]
    print(f"memrepo: {what} rejected: {n} problem{'s' * (n != 1)} in memory files (bypass once with `{bypass}`)", file=sys.stderr)
    return 1


def _changed_in_head(root: str, parent: str | None = None) -> tuple[str, ...]:
    """Memory paths HEAD changed against `parent` (its first parent: a merge's whole incoming
    side), or against nothing for a root commit."""
    spec = (parent, "HEAD") if parent else ("--root", "HEAD")
    return tuple(p for p in trees.changed(root, *spec, renames=False) or () if _is_memory_path(p))


def _parent(root: str) -> str | None:
    """HEAD's first parent, or None (a root commit)."""
    return refs.resolve(root, "HEAD^1")


def post_hook(root: str, hook: str, changed: tuple[str, ...] | None = None, parent: str | None = None,
              head: str | None = None) -> int:
    """Update the cache for what changed; never blocks. `changed`: the paths a writer's own
    commit changed, which it knows (else git's diff of HEAD, 0.2 s of a tree at 100,000),
    `parent` the commit they changed from (a group commit's chain: HEAD's parent is not it) and
    `head` the commit HEAD now is (else git is asked)."""
    from memrepo.store import index
    from memrepo.base import paths

    try:
        if not os.path.isdir(paths.memory_dir(root)) and not os.path.exists(paths.index_db(root)):
            return 0  # no memory repository here (e.g. a branch from before `memrepo init`): make no cache
        if hook == "post-commit":
            # git says what the commit changed: when the cache recorded its parent, only those paths are read
            parent = parent if changed is not None else _parent(root)
            found = _changed_in_head(root, parent) if changed is None else tuple(p for p in changed if _is_memory_path(p))
            index.update(root, force=found, wait=HOOK_LOCK_WAIT, after=parent, head=head)
        else:
            index.update(root, wait=HOOK_LOCK_WAIT)
    except Exception as exc:  # noqa: BLE001 — a post hook must never block the user's git
        index.mark_stale(root, f"{hook}: {exc}")
        print(f"memrepo {hook}: index update failed ({safe(exc)}); marked stale — run `memrepo index --rebuild`", file=sys.stderr)
    if hook != "post-checkout":  # a checkout makes no commit
        _keep_commit_graph(root, hook, head)
    _refresh_merged(root, hook)
    return 0


def _refresh_merged(root: str, hook: str) -> None:
    """The merged caches holding this repository's memory (issue 41), brought up to date by a
    detached worker, off the commit's path: a personal repository's own (when it keeps any), or
    those of the personal repository that joined this team clone (`recall.sources.joined_by`)."""
    from memrepo import proc
    from memrepo.recall import sources as rs

    repo = root
    folder = os.path.join(paths.index_dir(root), rs.MERGED_DIR)
    if not os.path.isdir(folder):
        repo = rs.joined_by(root) or root
        folder = os.path.join(paths.index_dir(repo), rs.MERGED_DIR)
    try:
        if not any(name.endswith(rs.MERGED_SUFFIX) for name in os.listdir(folder)):
            return
        proc.spawn_detached(proc.python_main("memrepo.worker.merged_refresh", repo),
                            log_path=os.path.join(folder, "refresh.log"))
    except OSError as exc:
        if not isinstance(exc, FileNotFoundError):
            print(f"memrepo {hook}: could not start the merged caches' refresh ({safe(exc)})", file=sys.stderr)


def _keep_commit_graph(root: str, hook: str, head: str | None = None) -> None:
    """A memory's history stays fast all day: a new graph layer once a few commits lie outside it,
    and what the commits left packed once git's own thresholds say so."""
    from memrepo.vcs import gitops

    try:
        gitops.keep_commit_graph(root, head)
    except Exception as exc:  # noqa: BLE001 — history is only slower without it
        print(f"memrepo {hook}: could not start a commit-graph write ({safe(exc)})", file=sys.stderr)
    try:
        gitops.keep_objects_packed(root)
    except Exception as exc:  # noqa: BLE001 — unpacked objects cost disk and speed, never correctness
        print(f"memrepo {hook}: could not start `git gc --auto` ({safe(exc)})", file=sys.stderr)


def in_process() -> Hooks:
    """These hooks' work for a writer to do itself where they are all git would run (`vcs.change.Hooks`),
    and the renderer of a memory's fields a waiting writer left to the lock holder."""
    from memrepo.vcs.change import Hooks

    return Hooks(pre_commit=_validate_for_writer, post_commit=_index_for_writer, render=render)


def render(rel: str, fields: dict[str, Any]) -> str:
    """The file `memrepo add` writes at `rel` from a memory's fields ({"meta": …, "body": …}),
    validated as a writer validates what it writes (the secret catalogue's detectors included):
    NoteInvalid names every problem. The one renderer of an add, run by whichever process holds
    the lock (`vcs.group`); fields from the queue are untrusted: anything but a new memory's shape
    is a ValueError."""
    from memrepo.format import catalogue, notes, validate

    meta, body = fields.get("meta"), fields.get("body")
    if not isinstance(meta, dict) or not isinstance(body, str) or set(fields) != {"meta", "body"}:
        raise ValueError("not a memory's fields")
    if rel != f"{paths.MEMORY_DIR}/{meta.get('id')}.md":  # whether the id is one is the validation's to say
        raise ValueError("not the path of the memory's id")
    text = notes.serialize(notes.bounded(meta, body))
    problems, _ = validate.check_text(text, rel, catalogue.find_secrets)
    if problems:
        raise NoteInvalid(f"{rel} is not a valid memory", [str(p) for p in problems], hint="fix the fields named above and run it again")
    return text


def _validate_for_writer(root: str, env: dict[str, str]) -> int:
    try:
        return pre_commit(root, "pre-commit", env)
    except Exception as exc:  # noqa: BLE001 — fail closed, but say why (as `main` does)
        print(f"memrepo pre-commit: could not validate ({safe(exc)})", file=sys.stderr)
        return 1


def _index_for_writer(root: str, rels: list[str], parent: str | None, head: str) -> int:
    return post_hook(root, "post-commit", tuple(rels), parent, head)


def _head_is_expected(root: str) -> bool:
    """A memrepo writer's commit is of an index made from one HEAD: refuse it when a person's
    commit moved HEAD since (git then gives up before the ref moves, and the writer tries again)."""
    from memrepo.vcs import commit

    expected = os.environ.get(commit.EXPECT_HEAD)
    if expected is None or (refs.resolve(root, "HEAD") or "") == expected:
        return True
    print(commit.HEAD_MOVED, file=sys.stderr)
    return False


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    hook = args[0] if args else ""
    private.restrict()
    root = refs.toplevel(os.getcwd()) or os.getcwd()
    if hook == "pre-commit" and not _head_is_expected(root):
        return 1
    if hook in VALIDATING_HOOKS:
        try:
            return pre_commit(root, hook)
        except Exception as exc:  # noqa: BLE001 — fail closed, but say why
            print(f"memrepo {hook}: could not validate ({safe(exc)}); fix it or bypass once with `{VALIDATING_HOOKS[hook][1]}`", file=sys.stderr)
            return 1
    if hook in POST_HOOKS:
        return post_hook(root, hook)
    print(f"memrepo.store.githooks: unknown hook {hook!r}; expected one of {', '.join([*VALIDATING_HOOKS, *POST_HOOKS])}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
