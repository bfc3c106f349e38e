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
_FORMAT = "%H%x00%aI%x00%s%x00%(trailers:only,unfold,separator=%x1e,key_value_separator=%x1f)"
_ANY = f"^{PREFIX}[A-Za-z]+: "


def message(subject: str, trailers: dict[str, Any], body: str = "") -> str:
    """A commit message: subject, optional body, then one `Memrepo-<key>: <value>` line per trailer."""
    parts = [subject.strip()]
    if body.strip():
        parts.append(body.strip())
    lines = [f"{PREFIX}{k}: {str(v).splitlines()[0] if str(v) else ''}" for k, v in trailers.items()]
    if lines:
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def read(repo: str, rev: str = "HEAD", grep: str | None = None, limit: int = 10000) -> list[dict[str, Any]]:
    """Commits reachable from `rev` that carry `Memrepo-*` trailers, newest first.

    Each is `{commit, date, subject, trailers: {key without the prefix: value}}`. `grep` keeps
    only commits whose message holds that fixed string. A revision git cannot read gives [].
    """
    # Topological: a child always before its parent. By date alone, a merge of a clone whose
    # clock stepped back lists a run's older commit first, and undo reverts them out of order.
    args = ["log", "-z", "--topo-order", f"-n{limit}", f"--format={_FORMAT}"]
    args += ["--fixed-strings", f"--grep={grep}"] if grep else ["--extended-regexp", f"--grep={_ANY}"]
    rc, out, _ = gitcmd.run_git(*args, rev, "--", cwd=repo)
    if rc != 0:
        return []
    fields = out.decode("utf-8", "replace").split("\0")
    entries = []
    for i in range(0, len(fields) - 3, 4):
        sha, date, subject, block = fields[i:i + 4]
        found = {}
        for line in block.split("\x1e"):
            key, _, value = line.partition("\x1f")
            if key.startswith(PREFIX):
                found[key[len(PREFIX):]] = value.strip()
        if found:
            entries.append({"commit": sha.strip("\n"), "date": date, "subject": subject, "trailers": found})
    return entries
