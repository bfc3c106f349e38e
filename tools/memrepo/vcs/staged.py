"""What git's index (the staging area) holds: the paths a commit will change, their modes and blob
ids, and their content, read in bounded batches. The pre-commit hook's view of a commit."""

from __future__ import annotations

from memrepo.vcs import gitcmd

BATCH_BYTES = 16 * 1024 * 1024  # one `git cat-file --batch` reads at most this much (its output is bounded)
CHANGES = ("A", "C", "M", "R", "D")  # the statuses `changes` lists (not a type change, not unmerged)


def changes(root: str, env: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """[(status letter, path)] of what is staged against HEAD (added, copied, changed, deleted),
    renames as a delete and an add; RuntimeError with git's words when git fails. `env`, in
    every function here, may name another index (`GIT_INDEX_FILE`: a writer's own)."""
    rc, out, err = gitcmd.run_git("diff", "--cached", "--name-status", "-z", "--no-renames",
                                  "--diff-filter=" + "".join(CHANGES), cwd=root, env=env)
    if rc != 0:
        raise RuntimeError(err.decode(errors="replace").strip())
    fields = gitcmd.split_z(out)
    return list(zip(fields[0::2], fields[1::2]))


def anything(repo: str) -> bool:
    """Whether the index differs from HEAD at all."""
    return bool(gitcmd.split_z(gitcmd.run_git("diff", "--cached", "--name-only", "-z", cwd=repo)[1]))


def entries(root: str, *pathspecs: str, literal: bool = False, env: dict[str, str] | None = None
            ) -> dict[str, tuple[str, str]] | None:
    """{path: (mode, blob id)} of the index entries below `pathspecs` (`literal`: names, not patterns);
    None when git failed."""
    found: dict[str, tuple[str, str]] = {}
    for i in range(0, max(len(pathspecs), 1), 500):  # a long list of paths goes in slices of 500
        rc, out, _ = gitcmd.run_git(*(("--literal-pathspecs",) if literal else ()), "ls-files", "-z", "--stage", "--",
                                    *pathspecs[i:i + 500], cwd=root, env=env)
        if rc != 0:
            return None
        for entry in gitcmd.split_z(out):
            head, tab, rel = entry.partition("\t")
            if tab:
                mode, _, rest = head.partition(" ")
                found[rel] = (mode, rest.partition(" ")[0])
    return found


def differ_from(root: str, commit: str, *pathspecs: str, env: dict[str, str] | None = None,
                ids: dict[str, str] | None = None) -> dict[str, tuple[str, str]] | None:
    """{path: (new mode, status letter)} of what the index changes against `commit` below
    `pathspecs`, renames as a delete and an add; None when git failed. `ids` receives each
    staged path's blob id (for `blobs`)."""
    rc, out, _ = gitcmd.run_git("diff-index", "--cached", "-z", "--no-renames", commit, "--", *pathspecs, cwd=root, env=env)
    if rc != 0:
        return None
    fields = gitcmd.split_z(out)  # ":old-mode new-mode old-sha new-sha status", path, ...
    found: dict[str, tuple[str, str]] = {}
    for raw, rel in zip(fields[0::2], fields[1::2]):
        parts = raw.lstrip(":").split(" ")
        found[rel] = (parts[1] if len(parts) > 1 else "", parts[-1])
        if ids is not None and len(parts) == 5 and not parts[-1].startswith("D"):
            ids[rel] = parts[3]
    return found


def blobs(root: str, rels: list[str], limit: int, oversized: dict[str, int] | None = None,
          env: dict[str, str] | None = None, ids: dict[str, str] | None = None) -> dict[str, bytes]:
    """Staged content of many files through `git cat-file --batch`, a bounded batch at a time.

    Sizes come first (`--batch-check`): a blob over `limit` bytes is not read at all (it maps to
    b"", and its size goes into `oversized`), so no staged file, however big, and no number of
    them can exceed what one git process may print. RuntimeError when git fails. A path whose
    staged blob id `ids` gives is read by that id: git then need not read the index (12 MB at
    100,000 memories) to find it.
    """
    if not rels:
        return {}
    spec_in = "".join(f"{_spec(r, ids)}\n" for r in rels).encode("utf-8")
    rc, out, err = gitcmd.run_git("cat-file", "--batch-check", cwd=root, input=spec_in, env=env)
    if rc != 0:
        raise RuntimeError(err.decode("utf-8", "replace").strip())
    sizes: dict[str, int] = {}
    for rel, line in zip(rels, out.decode("utf-8", "replace").splitlines()):
        header = line.split()
        if len(header) == 3 and header[2].isdigit():
            sizes[rel] = int(header[2])
    found: dict[str, bytes] = {rel: b"" for rel, size in sizes.items() if size > limit}
    if oversized is not None:
        oversized.update((rel, sizes[rel]) for rel in found)
    batch: list[str] = []
    total = 0
    for rel in [r for r in rels if r in sizes and r not in found] + [""]:
        if batch and (not rel or total + sizes[rel] > BATCH_BYTES):
            found.update(_read_batch(root, batch, env, ids))
            batch, total = [], 0
        if rel:
            batch.append(rel)
            total += sizes[rel] + 100
    return found


def _spec(rel: str, ids: dict[str, str] | None) -> str:
    return ids[rel] if ids and rel in ids else f":{rel}"


def _read_batch(root: str, rels: list[str], env: dict[str, str] | None = None,
                ids: dict[str, str] | None = None) -> dict[str, bytes]:
    spec_in = "".join(f"{_spec(r, ids)}\n" for r in rels).encode("utf-8")
    rc, out, err = gitcmd.run_git("cat-file", "--batch", cwd=root, input=spec_in, env=env)
    if rc != 0:
        raise RuntimeError(err.decode("utf-8", "replace").strip())
    found: dict[str, bytes] = {}
    pos = 0
    for rel in rels:
        nl = out.index(b"\n", pos)
        header = out[pos:nl].split()
        pos = nl + 1
        if len(header) == 3:
            size = int(header[2])
            found[rel] = out[pos:pos + size]
            pos += size + 1
    return found
