"""What commits and trees hold: the paths a commit or a range changed, a file at a revision,
the names in a tree, the memories history deleted."""

from __future__ import annotations

from memrepo.errors import GitError
from memrepo.vcs import gitcmd


def changed(repo: str, *spec: str, diff_filter: str = "", renames: bool = True) -> list[str] | None:
    """The paths `git diff-tree` names for `spec` (one commit against its parent, `--root HEAD`,
    or `old new`); None when git failed. `diff_filter`: git's letters (`AM`)."""
    args = ["diff-tree", "--no-commit-id", "-r", "--name-only", "-z"] + ([] if renames else ["--no-renames"])
    args += [f"--diff-filter={diff_filter}"] if diff_filter else []
    rc, out, _ = gitcmd.run_git(*args, *spec, cwd=repo)
    return gitcmd.split_z(out) if rc == 0 else None


def changes(repo: str, sha: str) -> list[tuple[str, str]]:
    """[(status letter, path)] of everything commit `sha` changes, renames as a delete and an add."""
    out = gitcmd.run_git("diff-tree", "--no-commit-id", "--no-renames", "-r", "--name-status", "-z", sha, cwd=repo)[1]
    fields = gitcmd.split_z(out)
    return [(fields[i][:1], fields[i + 1]) for i in range(0, len(fields) - 1, 2)]


def file_at(repo: str, rev: str, rel: str) -> bytes | None:
    """The content of `rel` in `rev`'s tree, or None when it has no such file."""
    rc, out, _ = gitcmd.run_git("show", f"{rev}:{rel}", cwd=repo)
    return out if rc == 0 else None


def same_files(repo: str, a: str, b: str, rels: list[str]) -> bool:
    """Whether every path of `rels` holds the same blob in `a` and in `b` (and exists in both)."""
    rc, out, _ = gitcmd.run_git("rev-parse", *(f"{rev}:{rel}" for rel in rels for rev in (a, b)), cwd=repo)
    blobs = out.decode().split()
    return rc == 0 and len(blobs) == 2 * len(rels) and all(blobs[i] == blobs[i + 1] for i in range(0, len(blobs), 2))


def message(repo: str, sha: str) -> str:
    """The whole message of commit `sha` (subject, body and trailers); GitError when git can't say."""
    return _show(repo, "-s", "--format=%B", sha)


def patch(repo: str, sha: str) -> str:
    """Commit `sha`'s message and diff, as `git show` prints them; GitError when git can't say."""
    return _show(repo, "--format=%B", sha)


def _show(repo: str, *args: str) -> str:
    rc, out, err = gitcmd.run_git("show", *args, cwd=repo)
    if rc != 0:
        raise GitError(f"git show failed: {err.decode('utf-8', 'replace').strip()}",
                       hint="check the repository with `git status` and `memrepo doctor`")
    return out.decode("utf-8", "replace").strip()


def names(repo: str, rev: str, folder: str, env: dict[str, str] | None = None) -> list[str] | None:
    """The names in folder `folder` of `rev`'s tree, or None when it has no such folder."""
    rc, out, _ = gitcmd.run_git("ls-tree", "--name-only", f"{rev}:{folder}", cwd=repo, env=env)
    return out.decode("utf-8", "surrogateescape").strip().split("\n") if rc == 0 else None


def paths_under(repo: str, rev: str, folder: str) -> list[str] | None:
    """The paths directly in `folder` of `rev`'s tree (`memory/x.md`), or None when git failed."""
    rc, out, _ = gitcmd.run_git("ls-tree", "-z", "--name-only", rev, folder.rstrip("/") + "/", cwd=repo)
    return gitcmd.split_z(out) if rc == 0 else None


MANY_PATHS = 500  # more paths than this are looked up in a listing of their folders


def blob_ids(repo: str, rev: str, rels: list[str]) -> dict[str, str] | None:
    """{path: blob id} of the paths of `rels` that `rev`'s tree holds; None when git failed.

    Many paths (a bulk commit's) are found in a listing of the folders that hold them: as
    arguments, 100,000 paths are more than a command line holds, and git was never started."""
    if len(rels) <= MANY_PATHS:
        args = ["--", *rels]
    else:
        folders = {rel.rpartition("/")[0] for rel in rels}
        args = ["-r"] + ([] if "" in folders else ["--", *sorted(f + "/" for f in folders)])
    rc, out, _ = gitcmd.run_git("ls-tree", "-z", "--full-tree", rev, *args, cwd=repo)
    if rc != 0:
        return None
    wanted = set(rels)
    found = {}
    for entry in gitcmd.split_z(out):
        meta, tab, rel = entry.partition("\t")
        if tab and rel in wanted:
            found[rel] = meta.split(" ")[2]
    return found


def deleted(repo: str, folder: str) -> list[str]:
    """Every path below `folder` a commit reachable from HEAD deleted (renames count as deletes)."""
    rc, out, _ = gitcmd.run_git("log", "--diff-filter=D", "--no-renames", "--name-only", "-z", "--format=", "HEAD",
                                "--", f"{folder}/", cwd=repo)
    return gitcmd.split_z(out) if rc == 0 else []


def in_any(repo: str, revs: list[str], rel: str) -> bool:
    """Whether the tree of any of `revs` holds `rel`: one `cat-file --batch-check` for them all."""
    if not revs:
        return False
    query = "".join(f"{rev}:{rel}\n" for rev in revs).encode()
    rc, out, _ = gitcmd.run_git("cat-file", "--batch-check", cwd=repo, input=query)
    return rc == 0 and any(line and not line.endswith(b" missing") for line in out.splitlines())
