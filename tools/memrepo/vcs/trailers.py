"""Commit messages with `Memrepo-*` trailers: the one builder and the one reader.

git parses the trailers (`%(trailers:only,unfold,...)`), with a NUL between fields and
between commits, so no subject or trailer value can be mistaken for a separator.
"""

from __future__ import annotations

from typing import Any

from memrepo.vcs import gitcmd

PREFIX = "Memrepo-"
# Trailers one per line (\x1e inside a value is impossible once git has unfolded it), key and
# value apart by \x1f: the separators git puts there are the only ones in the field.
_FORMAT = "%H%x00%aI%x00%an%x00%s%x00%(trailers:only,unfold,separator=%x1e,key_value_separator=%x1f)"
_FIELDS = 5
_ANY = f"^{PREFIX}[A-Za-z]+: "


def message(subject: str, trailers: dict[str, Any], body: str = "") -> str:
    """A commit message: subject, optional body, then one `Memrepo-<key>: <value>` line per
    trailer; a list value is one line per item, after the others (a bulk pass records one
    `Memrepo-Decision` per memory)."""
    parts = [subject.strip()]
    if body.strip():
        parts.append(body.strip())
    single = [(k, v) for k, v in trailers.items() if not isinstance(v, (list, tuple))]
    repeated = [(k, v) for k, values in trailers.items() if isinstance(values, (list, tuple)) for v in values]
    lines = [f"{PREFIX}{k}: {(str(v).splitlines() or [''])[0]}" for k, v in single + repeated]
    if lines:
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def log(repo: str, rev: str = "HEAD", *, grep: str | None = None, grep_all: tuple[str, ...] = (),
        paths: tuple[str, ...] = (), limit: int = 10000, only_trailers: bool = True) -> list[dict[str, Any]]:
    """Commits reachable from `rev`, newest first (a child always before its parent), read with
    their trailers: the one trailer reader (issue 40).

    Each is `{commit, date, author, subject, trailers, every}`: `trailers` maps a key without the
    prefix to its value (the first, for a repeated key), `every` to all its values in order.
    `grep` and each of `grep_all` keep only commits whose message holds that fixed string (all of
    them); without any, `only_trailers` keeps the commits that carry a `Memrepo-*` trailer.
    `paths` limits the log to commits touching them (no --follow: a memory's id is its file's
    name). A revision git cannot read gives [].
    """
    greps = ((grep,) if grep else ()) + grep_all
    args = ["log", "-z", f"-n{limit}", f"--format={_FORMAT}"]
    # Topological: by date alone, a merge of a clone whose clock stepped back lists a run's older
    # commit first, and undo reverts them out of order. A path-limited log needs no such order
    # and is answered from the commit-graph's changed-path filters (issue 22).
    args += [] if paths else ["--topo-order"]
    if greps:
        args += ["--fixed-strings"] + [f"--grep={g}" for g in greps] + (["--all-match"] if len(greps) > 1 else [])
    elif only_trailers:
        args += ["--extended-regexp", f"--grep={_ANY}"]
    rc, out, _ = gitcmd.run_git(*args, rev, "--", *paths, cwd=repo)
    if rc != 0:
        return []
    fields = out.decode("utf-8", "replace").split("\0")
    entries = []
    for i in range(0, len(fields) - _FIELDS + 1, _FIELDS):
        sha, date, author, subject, block = fields[i:i + _FIELDS]
        every: dict[str, list[str]] = {}
        for line in block.split("\x1e"):
            key, _, value = line.partition("\x1f")
            if key.startswith(PREFIX):
                every.setdefault(key[len(PREFIX):], []).append(value.strip())
        if every or not only_trailers or greps:
            entries.append({"commit": sha.strip("\n"), "date": date, "author": author, "subject": subject,
                            "trailers": {k: v[0] for k, v in every.items()}, "every": every})
    return entries


def read(repo: str, rev: str = "HEAD", grep: str | None = None, limit: int = 10000) -> list[dict[str, Any]]:
    """Commits reachable from `rev` that carry `Memrepo-*` trailers, newest first (`log`)."""
    return [e for e in log(repo, rev, grep=grep, limit=limit) if e["every"]]
