"""Reading and writing memories in a repository: add, show, list (the CLI's library side)."""

from __future__ import annotations

import contextlib
import os
import re
from typing import TYPE_CHECKING, Any

from memrepo.base import paths
from memrepo.format import files as memfiles, spec
from memrepo.errors import AmbiguousId, NoteInvalid, NoteNotFound, RepoNotFound

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable

    from memrepo.format import notes

# git helpers and PyYAML load inside the functions that write or parse: `memrepo search` and
# `memrepo list` only read the cache and should start fast; the cache's modules load where the
# cache is read, not in an `add` whose change another writer's lock hold commits (issue 44).


ADD_TRIES = 20  # ids an add tries when other terminals keep taking the one it chose


def require_repo(repo: str) -> str:
    """The repository path, or RepoNotFound naming `memrepo init`."""
    if not os.path.isdir(paths.memory_dir(repo)) or not os.path.exists(os.path.join(repo, ".git")):
        raise RepoNotFound(f"no memory repository at {repo}",
                           hint=f"run `memrepo init {repo}`, or point --repo / MEMREPO_DIR at one")
    return repo


def slugify(title: str, fallback: str | None = None) -> str:
    """A kebab-case id from a title, accents folded as recall's tokenizer folds them.

    'Ação rápida no deploy' -> 'acao-rapida-no-deploy'. A title with no Latin letter or digit
    (all CJK, all punctuation) gets `fallback` when given, else `memory-` and a short hash of
    the title: stable across runs and machines, and different for different titles.
    """
    from memrepo.recall.clean import tokenize

    words = ["".join(c for c in word if c.isascii() and c.isalnum()) for word in tokenize(title)]
    slug = "-".join(w for w in words if w)[: spec.MAX_ID].rstrip("-")
    if slug or fallback is not None:
        return slug or str(fallback)
    import hashlib

    return "memory-" + hashlib.sha1(" ".join(title.split()).encode("utf-8")).hexdigest()[:8]


# Words a memory's id can do without ("the", "of"); negations and verbs stay: "never-force-push-main".
_ID_FILLER = frozenset("a an the of for to in on at from with by into onto is are was were be been".split())
MAX_ID_WORDS = 6
MAX_CAPTURED_ID = 40


def short_slug(title: str) -> str:
    """A short id for a captured memory: its title's words without filler, at most
    MAX_ID_WORDS words and MAX_CAPTURED_ID characters, cut at a word.

    'Staging 502s come from the nginx proxy timeout' -> 'staging-502s-come-nginx-proxy-timeout'.
    """
    words = [w for w in slugify(title).split("-") if w]
    kept = [w for w in words if w not in _ID_FILLER][:MAX_ID_WORDS] or words[:MAX_ID_WORDS]
    out = ""
    for word in kept:
        if out and len(out) + 1 + len(word) > MAX_CAPTURED_ID:
            break
        out = f"{out}-{word}" if out else word[:MAX_CAPTURED_ID]
    return out or slugify(title)


def import_slug(label: str) -> str:
    """The slug inside importers' stable ids: frozen, since ids issued by earlier imports depend on it."""
    slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
    return slug[: spec.MAX_ID].rstrip("-") or "memory"


def stable_id(prefix: str, label: str, key: str) -> str:
    """A deterministic id: prefix, a slug of `label`, and a hash of `key` (the entry's origin).

    The same entry always maps to the same id, which is how a second import run knows what the
    first one took.
    """
    import hashlib

    digest = hashlib.sha1(key.encode("utf-8")).hexdigest()[:6]
    room = spec.MAX_ID - len(prefix) - len(digest) - 2
    slug = import_slug(label)[:room].rstrip("-") or "entry"
    return f"{prefix}-{slug}-{digest}"


def removed_ids(repo: str) -> set[str]:
    """Ids of memories a commit reachable from HEAD deleted and that are not back in the tree.

    Importers read it so a re-import does not resurrect what a person removed (issue 16).
    """
    from memrepo.vcs import trees

    ids = {os.path.basename(p)[:-3] for p in trees.deleted(repo, paths.MEMORY_DIR) if p.endswith(".md")}
    return {i for i in ids if not exists(repo, i)}


def exists(repo: str, note_id: str) -> bool:
    return os.path.exists(paths.note_path(repo, note_id))


def short(text: str, limit: int) -> str:
    """One line of at most `limit` characters, cut at a word boundary with an ellipsis."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    if " " in cut[limit // 2:]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:.-") + "…"


SUFFIX_HEX = 6  # the suffix of an id whose slug is taken: -1a2b3c


def taken_anywhere(repo: str, note_id: str) -> bool:
    """Whether `memory/<id>.md` exists here or in any branch this clone knows (its own, or fetched).

    Another machine's memory with the same slug is reachable once fetched: an id is never
    reused for a different memory there either.
    """
    from memrepo.vcs import refs, trees

    if os.path.lexists(paths.note_path(repo, note_id)):
        return True
    return trees.in_any(repo, refs.tips(repo), f"{paths.MEMORY_DIR}/{note_id}.md")


def suffixed(base: str, seed: str, n: int = 0) -> str:
    """`base` plus a short hash of the memory's own text: two machines adding different memories
    under one title get different ids, and the same memory gets the same one."""
    import hashlib

    suffix = "-" + hashlib.sha1(f"{n}\0{seed}".encode("utf-8")).hexdigest()[:SUFFIX_HEX]
    return base[: spec.MAX_ID - len(suffix)].rstrip("-") + suffix


def unique_id(repo: str, base: str, seed: str | Callable[[], str] = "",
              taken: set[str] | frozenset[str] = frozenset()) -> str:
    """The slug itself when no memory reachable from this clone has it, else the slug plus a short hash.

    Numbered suffixes (`-2`) would collide: two machines that both hold `deploy` would both
    choose `deploy-2`. `seed` is the memory's text (without its id), or what makes it: asked only
    when the slug is taken (`add` renders it then); `taken` holds ids this caller is about to write.
    """
    candidate, n = base, 0
    while candidate in taken or taken_anywhere(repo, candidate):
        if callable(seed):
            seed = seed()
        candidate = suffixed(base, seed, n)
        n += 1
    return candidate


def add(repo: str, note: notes.Note, trailers: dict[str, str] | None = None) -> tuple[str, str, str]:
    """Validate, write and commit a new memory; returns (id, commit sha, run id: what `memrepo undo`
    takes). Nothing is written if invalid. `trailers` adds to the commit's own (`memrepo mcp`
    names the agent that wrote it).

    The memory's file is rendered and validated (`githooks.render`) by whichever process holds the lock:
    this one, or a holder that commits this add with its own (issue 44); an add that waits then
    never loads PyYAML."""
    from memrepo.format import notes

    require_repo(repo)
    generated = not note.meta.get("id")
    tried: set[str] = set()
    for _ in range(ADD_TRIES):
        if generated:
            note.meta.pop("id", None)
            note.meta["id"] = unique_id(repo, short_slug(str(note.meta.get("title", ""))), lambda: notes.serialize(note), tried)
            note.meta = {k: note.meta[k] for k in notes.ordered_keys(note.meta)}
        note_id = note.id
        rel = f"{paths.MEMORY_DIR}/{note_id}.md"
        if os.path.exists(paths.note_path(repo, note_id)):
            if generated:  # another terminal took it since unique_id looked
                tried.add(note_id)
                continue
            raise NoteInvalid(f"a memory with id {note_id!r} already exists", [], hint="choose another --id, or edit the file and commit it")
        # Another terminal may take the same id between the check above and the lock: the file
        # must still be absent under the lock, or this add never overwrites it.
        from memrepo.store import githooks
        from memrepo.vcs import group, runs

        fields = {"meta": note.meta, "body": note.body}
        if len(note.body.encode("utf-8", "surrogatepass")) > spec.MAX_BODY_BYTES or _may_hold_secret(fields):
            # A secret never reaches the queue's files on disk, nor a body a holder would spend its
            # hold refusing for its size: this writer renders and validates its memory itself
            # (PyYAML then loads here), and refuses it as a holder would.
            githooks.render(rel, fields)
        run = runs.change_run_id("add", note_id)
        change = group.Change({}, {rel: None}, f"add: {note_id}", {"Action": "add", "Run": run, "Id": note_id, **(trailers or {})},
                              fields={rel: fields})
        sha, taken = group.submit(repo, change, githooks.in_process())
        if not taken:
            return note_id, sha, run
        tried.add(note_id)
        if not generated:
            raise NoteInvalid(f"a memory with id {note_id!r} was just added by another process", [],
                              hint="choose another --id, or edit the file and commit it")
    raise NoteInvalid(f"every id tried for {note.meta.get('title')!r} was taken meanwhile", [], hint="run the command again")


def _may_hold_secret(fields: dict[str, Any]) -> bool:
    """Whether either secret catalogue finds a secret in any text of a memory's fields (its values,
    one per line, and its body): what the validation would refuse once they are rendered. Both
    catalogues are asked, never `recall.secretish` alone: that pre-check answers for `redact`'s
    catalogue only, and detect-secrets' plugins find what it says no to (a Spanish password
    keyword, an Artifactory, Twilio or Telegram token), which then reached the queue's files. With
    the gates an earlier process remembered, an ordinary memory costs ~6 M instructions and loads
    neither catalogue (`catalogue.find_secrets`, issue 44)."""
    from memrepo.format import catalogue

    texts: list[str] = []

    def collect(value: object, depth: int = 0) -> None:
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, dict) and depth < 32:
            for item in value.values():
                collect(item, depth + 1)
        elif isinstance(value, (list, tuple)) and depth < 32:
            for item in value:
                collect(item, depth + 1)

    collect(fields)
    return bool(catalogue.find_secrets("\n".join(texts)))


def resolve(repo: str, given: str) -> str:
    """The id of the memory `given` names: its id, or a prefix of exactly one id (ids are long to
    retype, issue 39). Raises NoteNotFound naming the candidates when it names none or several."""
    if re.fullmatch(r"[a-z0-9-]+", given) and os.path.exists(paths.note_path(repo, given)):
        return given
    names = memfiles.memory_files(paths.memory_dir(repo)) if re.fullmatch(r"[a-z0-9-]+", given) else []
    found = [n[:-3] for n in names if n.startswith(given) and n.endswith(".md")]
    if len(found) == 1:
        return found[0]
    if found:
        shown = ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")
        raise AmbiguousId(f"{given!r} is the start of {len(found)} memory ids: {shown}", hint="give more of the id")
    raise NoteNotFound(f"no memory with id {given!r} in {repo}", hint="find ids with `memrepo list` or `memrepo search`")


def read_text(repo: str, note_id: str) -> str:
    path = paths.note_path(repo, note_id)
    if not re.fullmatch(r"[a-z0-9-]+", note_id) or not os.path.exists(path):
        raise NoteNotFound(f"no memory with id {note_id!r} in {repo}", hint="find ids with `memrepo list` or `memrepo search`")
    try:
        return memfiles.read_bytes(path).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or str(exc)
        raise NoteInvalid(f"memory/{note_id}.md cannot be read: {why}", [], hint="`memrepo doctor` names the problem and its fix") from None


def show(repo: str, note_id: str) -> dict[str, Any]:
    """A memory's whole text, the commits that touched it, and its use on this machine (how often
    recall injected it, how often a Stop judged it used, the day it was last used: issue 43)."""
    from memrepo.recall import usage
    from memrepo.vcs import gitops

    require_repo(repo)
    text = read_text(repo, note_id)
    return {"id": note_id, "text": text, "history": gitops.history(repo, f"{paths.MEMORY_DIR}/{note_id}.md"),
            "use": usage.memory_use(repo, note_id)}


def fresh_db(repo: str, fresh: bool = True) -> sqlite3.Connection:
    """The cache, brought up to date first (`fresh`; a scan of the memory files, ~0.3 s at 10,000),
    read-only. A caller that keeps the cache fresh itself (`memrepo serve`) passes fresh=False."""
    import sqlite3

    require_repo(repo)
    if fresh:
        from memrepo.store import index

        index.update(repo)
    return sqlite3.connect(f"file:{paths.index_db(repo)}?mode=ro", uri=True)


def list_memories(repo: str, cls: str | None = None, project: str | None = None, status: str | None = None,
                  fresh: bool = True) -> list[dict[str, Any]]:
    """Memories matching the filters, newest update first."""
    with contextlib.closing(fresh_db(repo, fresh)) as db:
        return list_rows(db, cls, project, status)


def list_rows(db: sqlite3.Connection, cls: str | None = None, project: str | None = None,
              status: str | None = None) -> list[dict[str, Any]]:
    """`list_memories` of an open cache (any source's, issue 41)."""
    where, args = [], []
    for column, value in (("class", cls), ("project", project), ("status", status)):
        if value:
            where.append(f"{column} = ?")
            args.append(value)
    sql = ("SELECT id, class, status, project, updated, title, superseded_by, verification FROM memories"
           + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY updated DESC, id")
    rows = db.execute(sql, args).fetchall()
    keys = ("id", "class", "status", "project", "updated", "title", "superseded_by", "verification")
    return [dict(zip(keys, r)) for r in rows]


def fmt(repo: str, files: list[str] | None = None, check: bool = False) -> list[str]:
    """Rewrite memory files in canonical form; returns the files that were (or would be) changed."""
    from memrepo.format import notes

    if not files:
        require_repo(repo)
    mdir = paths.memory_dir(repo)
    targets = files or [os.path.join(mdir, f) for f in memfiles.memory_files(mdir)]
    changed, unreadable = [], []
    for path in targets:
        try:
            raw = memfiles.read_bytes(path)
        except OSError as exc:
            unreadable.append(f"{path}:1: cannot be read ({exc.strerror or exc}) — name a regular file, not a link")
            continue
        try:
            text = raw.decode("utf-8-sig").replace("\r\n", "\n")
            canonical = notes.serialize(notes.parse(text, path))
        except UnicodeDecodeError:
            unreadable.append(f"{path}:1: file is not UTF-8 — save it as UTF-8")
            continue
        except notes.ParseError as exc:
            unreadable.append(f"{path}:{exc.line}: {exc} — {exc.fix}")
            continue
        if canonical.encode("utf-8") != raw:
            changed.append(path)
            if not check:
                with open(path, "w", encoding="utf-8", newline="\n") as fh:
                    fh.write(canonical)
    if unreadable:
        raise NoteInvalid(f"{len(unreadable)} file(s) could not be read, so fmt left them alone", unreadable,
                          hint="fix their front matter by hand, then run `memrepo fmt` again")
    return changed
